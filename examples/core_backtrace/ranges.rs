//! The address ranges of a DIE (DWARF 5 §2.17): `DW_AT_low_pc` with
//! `DW_AT_high_pc` (an address, or an offset from `low_pc` when it is a
//! constant, §2.17.2), or `DW_AT_ranges`: a `.debug_rnglists` list (§2.17.3,
//! entry kinds §7.25), by offset or by `DW_FORM_rnglistx` index through the
//! unit's offsets table (§7.28), or in DWARF 2-4 a `.debug_ranges` list of
//! address pairs with base address selection entries.

use crate::die::{at, Info, Value};
use crate::reader::Reader;

/// Most entries read from one range list.
const MAX_ENTRIES: usize = 1 << 16;

/// A half-open byte address range `[start, end)`.
pub type Range = (u64, u64);

/// The ranges of DIE `die` (empty when it has none or they cannot be read).
pub fn of(info: &Info, die: usize) -> Vec<Range> {
    if let Some(low) = info.address(die, at::LOW_PC) {
        let high = match info.dies[die].attr(at::HIGH_PC) {
            Some(Value::Addr(_)) | Some(Value::AddrX(_)) => info.address(die, at::HIGH_PC),
            Some(Value::Udata(n)) => low.checked_add(*n),
            _ => Some(low.saturating_add(1)),
        };
        return high.filter(|&h| h > low).map(|h| vec![(low, h)]).unwrap_or_default();
    }
    let unit = &info.units[info.dies[die].unit];
    match info.dies[die].attr(at::RANGES) {
        Some(Value::SecOffset(o)) if unit.version >= 5 => rnglist(info, info.dies[die].unit, *o),
        Some(Value::SecOffset(o)) => debug_ranges(info, info.dies[die].unit, *o),
        Some(Value::RngListX(i)) => {
            let size = if unit.dwarf64 { 8 } else { 4 };
            let at = i.checked_mul(size).and_then(|a| a.checked_add(unit.rnglists_base));
            let Some(at) = at.and_then(|a| usize::try_from(a).ok()) else { return Vec::new() };
            match Reader::at(&info.sections.rnglists, at).offset(unit.dwarf64) {
                Ok(rel) => rnglist(info, info.dies[die].unit, unit.rnglists_base.saturating_add(rel)),
                Err(_) => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// Whether `pc` lies in one of `ranges`.
pub fn contains(ranges: &[Range], pc: u64) -> bool {
    ranges.iter().any(|&(s, e)| s <= pc && pc < e)
}

/// The `.debug_rnglists` list at byte offset `offset` (DWARF 5 §2.17.3).
fn rnglist(info: &Info, unit: usize, offset: u64) -> Vec<Range> {
    let u = &info.units[unit];
    let mut out = Vec::new();
    let Ok(pos) = usize::try_from(offset) else { return out };
    let mut r = Reader::at(&info.sections.rnglists, pos);
    let mut base = u.low_pc.unwrap_or(0);
    let addrx = |i: u64| info.debug_addr(unit, i);
    for _ in 0..MAX_ENTRIES {
        let Ok(kind) = r.u8() else { break };
        let entry: Option<Option<Range>> = (|| {
            Some(match kind {
                0 => return None, // DW_RLE_end_of_list
                1 => {
                    base = addrx(r.uleb().ok()?)?; // DW_RLE_base_addressx
                    None
                }
                2 => Some((addrx(r.uleb().ok()?)?, addrx(r.uleb().ok()?)?)), // DW_RLE_startx_endx
                3 => {
                    let s = addrx(r.uleb().ok()?)?; // DW_RLE_startx_length
                    Some((s, s.checked_add(r.uleb().ok()?)?))
                }
                4 => {
                    let (a, b) = (r.uleb().ok()?, r.uleb().ok()?); // DW_RLE_offset_pair
                    Some((base.checked_add(a)?, base.checked_add(b)?))
                }
                5 => {
                    base = r.uint(u.address_size).ok()?; // DW_RLE_base_address
                    None
                }
                6 => Some((r.uint(u.address_size).ok()?, r.uint(u.address_size).ok()?)), // DW_RLE_start_end
                7 => {
                    let s = r.uint(u.address_size).ok()?; // DW_RLE_start_length
                    Some((s, s.checked_add(r.uleb().ok()?)?))
                }
                _ => return None,
            })
        })();
        match entry {
            None => break,
            Some(Some((s, e))) if e > s => out.push((s, e)),
            Some(_) => {}
        }
    }
    out
}

/// The `.debug_ranges` list at byte offset `offset` (DWARF 4 §2.17.3):
/// pairs of addresses relative to the base address, a pair whose first
/// address is all ones selecting a new base, (0, 0) ending the list.
fn debug_ranges(info: &Info, unit: usize, offset: u64) -> Vec<Range> {
    let u = &info.units[unit];
    let mut out = Vec::new();
    let Ok(pos) = usize::try_from(offset) else { return out };
    let mut r = Reader::at(&info.sections.ranges, pos);
    let mut base = u.low_pc.unwrap_or(0);
    let all_ones = if u.address_size >= 8 { u64::MAX } else { (1u64 << (8 * u32::from(u.address_size))) - 1 };
    for _ in 0..MAX_ENTRIES {
        let (Ok(a), Ok(b)) = (r.uint(u.address_size), r.uint(u.address_size)) else { break };
        if a == 0 && b == 0 {
            break;
        }
        if a == all_ones {
            base = b;
            continue;
        }
        if let (Some(s), Some(e)) = (base.checked_add(a), base.checked_add(b)) {
            if e > s {
                out.push((s, e));
            }
        }
    }
    out
}
