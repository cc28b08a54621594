//! This evaluator's own reader of location lists: `.debug_loclists`
//! (DWARF 5 §2.6.2, §7.7.3) and `.debug_loc` (DWARF 4 §2.6.2). Their
//! evaluation is in `locations`.

use super::evaluation::{Fail, Result};
use dwarfcheck_core::context::{AttrValue, DebugSection, MachineState, UnitInfo};
use dwarfcheck_core::encoding::leb128::{read_uleb, LebError};
use dwarfcheck_core::rules::id as R;

/// One entry of a location list that carries an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ListEntry<'a> {
    /// Matches `pc` in `[start, end)` (byte addresses).
    Bounded {
        /// First address.
        start: u64,
        /// One past the last address.
        end: u64,
        /// The operation expression.
        expr: &'a [u8],
    },
    /// Matches when no bounded entry does (`DW_LLE_default_location`).
    Default {
        /// The operation expression.
        expr: &'a [u8],
    },
}

/// A cursor over one section (fixed-size reads in target byte order).
struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
    big: bool,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let s = self
            .pos
            .checked_add(n)
            .and_then(|e| self.b.get(self.pos..e))
            .ok_or(Fail::IllFormed(R::LOCLIST_TRUNCATED))?;
        self.pos += n;
        Ok(s)
    }
    fn fixed(&mut self, n: usize) -> Result<u64> {
        let s = self.take(n)?;
        let mut v = 0u64;
        for i in 0..n {
            let byte = if self.big { s[i] } else { s[n - 1 - i] };
            v = v.checked_shl(8).unwrap_or(0) | u64::from(byte);
        }
        Ok(v)
    }
    fn uleb(&mut self) -> Result<u64> {
        let rest = self.b.get(self.pos..).unwrap_or(&[]);
        let (v, n) = read_uleb(rest).map_err(|e| match e {
            LebError::Truncated => Fail::IllFormed(R::LOCLIST_TRUNCATED),
            LebError::Overflow => Fail::IllFormed(R::LOCLIST_LEB128_OVERFLOW),
        })?;
        self.pos += n;
        Ok(v)
    }
}

/// The section byte offset where a list starts, for `form`.
fn list_start(state: &dyn MachineState, unit: &UnitInfo, form: AttrValue<'_>) -> Result<u64> {
    match form {
        AttrValue::LocList { offset } => Ok(offset),
        AttrValue::LocListX { index } => {
            if unit.version < 5 {
                return Err(Fail::IllFormed(R::LOCLIST_LOCLISTX_NEEDS_V5));
            }
            let size = unit.format.offset_bytes();
            let at = index
                .checked_mul(size as u64)
                .and_then(|o| o.checked_add(unit.loclists_base))
                .and_then(|o| usize::try_from(o).ok())
                .ok_or(Fail::IllFormed(R::LOCLIST_INDEX_OUT_OF_RANGE))?;
            let mut c = Cursor { b: state.section(DebugSection::DebugLoclists), pos: at, big: big(state) };
            let rel = c.fixed(size).map_err(|_| Fail::IllFormed(R::LOCLIST_INDEX_OUT_OF_RANGE))?;
            unit.loclists_base.checked_add(rel).ok_or(Fail::IllFormed(R::LOCLIST_OFFSET_OUT_OF_RANGE))
        }
        AttrValue::Exprloc(_) | AttrValue::Constant(_) | AttrValue::Spirv(_) => {
            Err(Fail::IllFormed(R::ATTR_FORM_NOT_ALLOWED))
        }
    }
}

fn big(state: &dyn MachineState) -> bool {
    state.target().endian == dwarfcheck_core::target::Endian::Big
}

fn addr_err(_: dwarfcheck_core::context::ContextError) -> Fail {
    Fail::EvalError(R::LOCLIST_ADDRX_MISSING)
}

/// Reads the list at `form` and calls `f` on each entry with an
/// expression, in list order. Errors: `loclist.*` rules for a list that
/// does not decode; `.debug_addr` lookups as `op.debug-addr.entry-missing`.
pub(super) fn for_each_entry<'c>(
    state: &'c dyn MachineState,
    unit: &UnitInfo,
    form: AttrValue<'_>,
    mut f: impl FnMut(ListEntry<'c>) -> Result<()>,
) -> Result<()> {
    let start = list_start(state, unit, form)?;
    let v5 = unit.version >= 5;
    let sec: &'c [u8] = state.section(if v5 { DebugSection::DebugLoclists } else { DebugSection::DebugLoc });
    let pos = usize::try_from(start)
        .ok()
        .filter(|&p| p < sec.len())
        .ok_or(Fail::IllFormed(R::LOCLIST_OFFSET_OUT_OF_RANGE))?;
    let mut c = Cursor { b: sec, pos, big: big(state) };
    let asz = usize::from(state.address_bytes());
    let mut base = unit.base_address;
    let wrap = |a: u64| if asz >= 8 { a } else { a & ((1u64 << (8 * asz)) - 1) };
    let need_base = |b: Option<u64>| b.ok_or(Fail::IllFormed(R::LOCLIST_NO_BASE_ADDRESS));
    if !v5 {
        let max = wrap(u64::MAX);
        loop {
            let b = c.fixed(asz)?;
            let e = c.fixed(asz)?;
            if b == 0 && e == 0 {
                return Ok(());
            }
            if b == max {
                base = Some(e);
                continue;
            }
            let bs = need_base(base)?;
            let len = c.fixed(2)? as usize;
            let expr = c.take(len)?;
            f(ListEntry::Bounded { start: wrap(bs.wrapping_add(b)), end: wrap(bs.wrapping_add(e)), expr })?;
        }
    }
    loop {
        let kind = c.take(1)?[0];
        let (start, end) = match kind {
            0x00 => return Ok(()),
            0x01 => {
                base = Some(state.debug_addr(c.uleb()?).map_err(addr_err)?);
                continue;
            }
            0x06 => {
                base = Some(c.fixed(asz)?);
                continue;
            }
            0x02 => {
                let (i, j) = (c.uleb()?, c.uleb()?);
                (state.debug_addr(i).map_err(addr_err)?, state.debug_addr(j).map_err(addr_err)?)
            }
            0x03 => {
                let i = c.uleb()?;
                let len = c.uleb()?;
                let a = state.debug_addr(i).map_err(addr_err)?;
                (a, wrap(a.wrapping_add(len)))
            }
            0x04 => {
                let (o1, o2) = (c.uleb()?, c.uleb()?);
                let bs = need_base(base)?;
                (wrap(bs.wrapping_add(o1)), wrap(bs.wrapping_add(o2)))
            }
            0x05 => {
                let len = c.uleb()?;
                let expr = c.take(usize::try_from(len).map_err(|_| Fail::IllFormed(R::LOCLIST_TRUNCATED))?)?;
                f(ListEntry::Default { expr })?;
                continue;
            }
            0x07 => (c.fixed(asz)?, c.fixed(asz)?),
            0x08 => {
                let a = c.fixed(asz)?;
                let len = c.uleb()?;
                (a, wrap(a.wrapping_add(len)))
            }
            _ => return Err(Fail::IllFormed(R::LOCLIST_UNKNOWN_ENTRY_KIND)),
        };
        let len = c.uleb()?;
        let expr = c.take(usize::try_from(len).map_err(|_| Fail::IllFormed(R::LOCLIST_TRUNCATED))?)?;
        f(ListEntry::Bounded { start, end, expr })?;
    }
}
