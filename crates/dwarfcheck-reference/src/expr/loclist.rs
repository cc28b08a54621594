//! Location list expressions: reading `.debug_loclists` (DWARF 5 §2.6.2,
//! §7.7.3, §7.29) and `.debug_loc` (DWARF 4 §2.6.2) entries, and the
//! hetero-2020 "DWARF Location List Expressions" evaluation (rules
//! `loclist.*`; the order of checks is in `specs/rules/loclist.yaml`).

use super::decode::decode;
use super::entry::{Loc, Single};
use super::machine::{Final, Machine};
use super::stop::Stop;
use dwarfcheck_core::context::{AttrValue, DebugSection, MachineState, Overlay, ResultKind};
use dwarfcheck_core::encoding::leb128::{read_uleb, LebError};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::Op;
use dwarfcheck_core::rules::{id, RuleId};
use dwarfcheck_core::target::Endian;

/// One bounded or default entry of a location list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// `[begin, end)` for a bounded entry (addresses in bytes), `None` for
    /// a default entry.
    pub range: Option<(u64, u64)>,
    /// The entry's operation expression.
    pub expr: Vec<u8>,
}

/// A byte reader over one section that reports `loclist.*` rules.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    big: bool,
}

impl Reader<'_> {
    fn bytes(&mut self, n: usize) -> Result<&[u8], Stop> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or(Stop::Ill(id::LOCLIST_TRUNCATED))?;
        let b = &self.data[self.pos..end];
        self.pos = end;
        Ok(b)
    }

    fn u8(&mut self) -> Result<u8, Stop> {
        Ok(self.bytes(1)?[0])
    }

    /// An unsigned integer of `n` bytes (1..=8) in the target's byte order.
    fn fixed(&mut self, n: usize) -> Result<u64, Stop> {
        let big = self.big;
        let b = self.bytes(n)?;
        let mut v = 0u64;
        for i in 0..n {
            let byte = if big { b[i] } else { b[n - 1 - i] };
            v = (v << 8) | u64::from(byte);
        }
        Ok(v)
    }

    fn uleb(&mut self) -> Result<u64, Stop> {
        let (v, n) = read_uleb(&self.data[self.pos..]).map_err(|e| match e {
            LebError::Overflow => Stop::Ill(id::LOCLIST_LEB128_OVERFLOW),
            _ => Stop::Ill(id::LOCLIST_TRUNCATED),
        })?;
        self.pos += n;
        Ok(v)
    }

    /// A counted expression: a length (ULEB or 2 bytes), then the bytes.
    fn counted(&mut self, uleb: bool) -> Result<Vec<u8>, Stop> {
        let n = if uleb { self.uleb()? } else { self.fixed(2)? };
        let n = usize::try_from(n).map_err(|_| Stop::Ill(id::LOCLIST_TRUNCATED))?;
        Ok(self.bytes(n)?.to_vec())
    }
}

/// Reads every entry of the list `form` names in the current unit of
/// `ctx`, resolving addresses, up to its end-of-list entry
/// (`loclist.entries`, `loclist.debug-loc`, `loclist.loclistx`,
/// `loclist.base-address`; DWARF 5 §2.6.2, §7.7.3): `.debug_loclists` for
/// a unit of version 5 or later, `.debug_loc` before, both from
/// [`MachineState::section`]; `.debug_addr` entries from
/// [`MachineState::debug_addr`]. Addresses are the unit's address size in
/// **bytes** (1 to 8), in the target's byte order.
///
/// `form` must be [`AttrValue::LocList`] or [`AttrValue::LocListX`]; any
/// other form has no list (`loclist.offset-out-of-range`).
///
/// Errors: `ctx.cu-missing` (evaluation error) without a unit;
/// `loclist.loclistx-needs-v5`, `loclist.index-out-of-range`,
/// `loclist.offset-out-of-range`, `loclist.truncated`,
/// `loclist.leb128-overflow`, `loclist.no-base-address`,
/// `loclist.unknown-entry-kind` (ill-formed); `loclist.addrx-missing`
/// (evaluation error).
pub fn read_list(ctx: &dyn MachineState, form: AttrValue<'_>) -> Result<Vec<ListEntry>, Stop> {
    let cu = ctx.unit().ok_or(Stop::Eval(id::CTX_CU_MISSING))?;
    let v5 = cu.version >= 5;
    let big = ctx.target().endian == Endian::Big;
    let section: &[u8] = ctx.section(if v5 { DebugSection::DebugLoclists } else { DebugSection::DebugLoc });
    let start = match form {
        AttrValue::LocList { offset } => offset,
        AttrValue::LocListX { index } => {
            if !v5 {
                return Err(Stop::Ill(id::LOCLIST_LOCLISTX_NEEDS_V5));
            }
            let size = cu.format.offset_bytes() as u64;
            let at = index
                .checked_mul(size)
                .and_then(|o| o.checked_add(cu.loclists_base))
                .and_then(|o| usize::try_from(o).ok())
                .filter(|&o| o.checked_add(size as usize).is_some_and(|e| e <= section.len()))
                .ok_or(Stop::Ill(id::LOCLIST_INDEX_OUT_OF_RANGE))?;
            let mut r = Reader { data: section, pos: at, big };
            let rel = r.fixed(if cu.format == Format::Dwarf64 { 8 } else { 4 })?;
            cu.loclists_base.checked_add(rel).ok_or(Stop::Ill(id::LOCLIST_OFFSET_OUT_OF_RANGE))?
        }
        AttrValue::Exprloc(_) | AttrValue::Constant(_) | AttrValue::Spirv(_) => {
            return Err(Stop::Ill(id::LOCLIST_OFFSET_OUT_OF_RANGE))
        }
    };
    let pos =
        usize::try_from(start).ok().filter(|&p| p < section.len()).ok_or(Stop::Ill(id::LOCLIST_OFFSET_OUT_OF_RANGE))?;
    let mut r = Reader { data: section, pos, big };
    let asize = usize::from(ctx.address_bytes()).clamp(1, 8);
    let amask = if asize >= 8 { u64::MAX } else { (1u64 << (asize * 8)) - 1 };
    let addrx = |i: u64| ctx.debug_addr(i).map_err(|_| Stop::Eval(id::LOCLIST_ADDRX_MISSING));
    let no_base = || Stop::Ill(id::LOCLIST_NO_BASE_ADDRESS);
    let mut base = cu.base_address;
    let mut out = Vec::new();
    if !v5 {
        // .debug_loc (loclist.debug-loc).
        loop {
            let begin = r.fixed(asize)?;
            let end = r.fixed(asize)?;
            if begin == 0 && end == 0 {
                return Ok(out);
            }
            if begin == amask {
                base = Some(end);
                continue;
            }
            let b = base.ok_or_else(no_base)?;
            let expr = r.counted(false)?;
            out.push(ListEntry { range: Some((b.wrapping_add(begin) & amask, b.wrapping_add(end) & amask)), expr });
        }
    }
    loop {
        let kind = r.u8()?;
        let range = match kind {
            0x00 => return Ok(out),
            0x01 => {
                base = Some(addrx(r.uleb()?)?);
                continue;
            }
            0x02 => {
                let (i, j) = (r.uleb()?, r.uleb()?);
                Some((addrx(i)?, addrx(j)?))
            }
            0x03 => {
                let i = r.uleb()?;
                let len = r.uleb()?;
                let b = addrx(i)?;
                Some((b, b.wrapping_add(len) & amask))
            }
            0x04 => {
                let (o1, o2) = (r.uleb()?, r.uleb()?);
                let b = base.ok_or_else(no_base)?;
                Some((b.wrapping_add(o1) & amask, b.wrapping_add(o2) & amask))
            }
            0x05 => None,
            0x06 => {
                base = Some(r.fixed(asize)?);
                continue;
            }
            0x07 => Some((r.fixed(asize)?, r.fixed(asize)?)),
            0x08 => {
                let b = r.fixed(asize)?;
                let len = r.uleb()?;
                Some((b, b.wrapping_add(len) & amask))
            }
            _ => return Err(Stop::Ill(id::LOCLIST_UNKNOWN_ENTRY_KIND)),
        };
        let expr = r.counted(true)?;
        out.push(ListEntry { range, expr });
    }
}

/// The entries that match `pc`: the bounded entries whose range holds it,
/// else every default entry (`loclist.bounded-match`, `loclist.default-location`).
pub fn matching(entries: &[ListEntry], pc: u64) -> Vec<&ListEntry> {
    let bounded: Vec<&ListEntry> =
        entries.iter().filter(|e| e.range.is_some_and(|(b, end)| b <= pc && pc < end)).collect();
    if !bounded.is_empty() {
        return bounded;
    }
    entries.iter().filter(|e| e.range.is_none()).collect()
}

/// The offset of the first `DW_OP_fbreg` of `expr`, if it decodes
/// (`attr.frame-base.fbreg`).
pub(super) fn first_fbreg(expr: &[u8], ctx: &dyn MachineState) -> Option<u64> {
    decode(expr, ctx).ok()?.iter().find(|i| i.op == Op::Fbreg).map(|i| i.at as u64)
}

impl Machine<'_> {
    /// Evaluates the location list `form` in `ctx`, its entries at `depth`
    /// in the current frame with result kind location and no object
    /// (`loclist.*`; hetero-2020 "DWARF Location List Expressions"). With
    /// `no_fbreg`, each matching entry's expression is first checked for
    /// `DW_OP_fbreg` (`attr.frame-base.fbreg`).
    pub(super) fn eval_loclist(
        &mut self,
        ctx: &dyn MachineState,
        form: AttrValue<'_>,
        depth: u32,
        no_fbreg: bool,
    ) -> Result<Loc, (Stop, Option<u64>)> {
        let list = |r: RuleId| (Stop::Eval(r), None);
        let pc = ctx.pc().ok_or_else(|| list(id::LOCLIST_NO_PROGRAM_LOCATION))?;
        if ctx.unit().is_none() {
            return Err(list(id::CTX_CU_MISSING));
        }
        let entries = read_list(ctx, form).map_err(|s| (s, None))?;
        // Each entry's context: the current one with result kind location
        // and no object; it starts on an empty stack (loclist.union).
        let entry_ctx = Overlay::new(ctx).with_object(None).with_result_kind(Some(ResultKind::Location));
        let ctx = &entry_ctx;
        let mut singles = Vec::new();
        for e in matching(&entries, pc) {
            if no_fbreg {
                if let Some(at) = first_fbreg(&e.expr, ctx) {
                    return Err((Stop::Ill(id::ATTR_FRAME_BASE_FBREG), Some(at)));
                }
            }
            let frames = self.frames.clone();
            match self.run_in(ctx, frames, &e.expr, Some(ResultKind::Location), Vec::new(), depth)? {
                (Final::Location(l), _) => singles.extend(l.singles),
                (Final::Value(_), _) => unreachable!("result kind location gives a location"),
            }
        }
        if singles.is_empty() {
            return Ok(Loc::undefined());
        }
        if singles.len() == 1 {
            return Ok(Loc { singles });
        }
        // The union is a set (loclist.union): a place that several entries
        // give is one place. Comparing places takes each one's normal form,
        // whose walk is charged (expr.budget.work).
        let mut seen = std::collections::BTreeSet::new();
        let mut places: Vec<Single> = Vec::new();
        for single in singles {
            let normal = self.export(&Loc { singles: vec![single.clone()] }).map_err(|s| (s, None))?;
            if seen.insert(normal) {
                places.push(single);
            }
        }
        Ok(Loc { singles: places })
    }
}
