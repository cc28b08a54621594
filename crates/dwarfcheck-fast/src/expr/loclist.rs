//! Location list expressions: this evaluator's own reader of
//! `.debug_loclists` (DWARF 5 §2.6.2, §7.7.3) and `.debug_loc` (DWARF 4
//! §2.6.2), and their evaluation (hetero-2020 "DWARF Location List
//! Expressions": union of the matching entries, no match is undefined).

use super::calls::compiled;
use super::exec::{Ev, Fail, Stop};
use super::machine::{Loc, Scratch};
use dwarfcheck_core::context::{AttrValue, DebugSection, MachineState, Overlay, UnitInfo};
use dwarfcheck_core::encoding::leb128::{read_uleb, LebError};
use dwarfcheck_core::rules::id as R;

type Res<T> = Result<T, Fail>;

/// One entry of a location list that carries an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry<'a> {
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
struct Cur<'a> {
    b: &'a [u8],
    pos: usize,
    big: bool,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        let s = self.pos.checked_add(n).and_then(|e| self.b.get(self.pos..e)).ok_or(Fail::Ill(R::LOCLIST_TRUNCATED))?;
        self.pos += n;
        Ok(s)
    }
    fn fixed(&mut self, n: usize) -> Res<u64> {
        let s = self.take(n)?;
        let mut v = 0u64;
        for i in 0..n {
            let byte = if self.big { s[i] } else { s[n - 1 - i] };
            v = v.checked_shl(8).unwrap_or(0) | u64::from(byte);
        }
        Ok(v)
    }
    fn uleb(&mut self) -> Res<u64> {
        let rest = self.b.get(self.pos..).unwrap_or(&[]);
        let (v, n) = read_uleb(rest).map_err(|e| match e {
            LebError::Truncated => Fail::Ill(R::LOCLIST_TRUNCATED),
            LebError::Overflow => Fail::Ill(R::LOCLIST_LEB128_OVERFLOW),
        })?;
        self.pos += n;
        Ok(v)
    }
}

/// The section byte offset where a list starts, for `form`.
fn list_start(state: &dyn MachineState, unit: &UnitInfo, form: AttrValue<'_>) -> Res<u64> {
    match form {
        AttrValue::LocList { offset } => Ok(offset),
        AttrValue::LocListX { index } => {
            if unit.version < 5 {
                return Err(Fail::Ill(R::LOCLIST_LOCLISTX_NEEDS_V5));
            }
            let size = unit.format.offset_bytes();
            let at = index
                .checked_mul(size as u64)
                .and_then(|o| o.checked_add(unit.loclists_base))
                .and_then(|o| usize::try_from(o).ok())
                .ok_or(Fail::Ill(R::LOCLIST_INDEX_OUT_OF_RANGE))?;
            let mut c = Cur { b: state.section(DebugSection::DebugLoclists), pos: at, big: big(state) };
            let rel = c.fixed(size).map_err(|_| Fail::Ill(R::LOCLIST_INDEX_OUT_OF_RANGE))?;
            unit.loclists_base.checked_add(rel).ok_or(Fail::Ill(R::LOCLIST_OFFSET_OUT_OF_RANGE))
        }
        AttrValue::Exprloc(_) | AttrValue::Constant(_) => Err(Fail::Ill(R::ATTR_FORM_NOT_ALLOWED)),
    }
}

fn big(state: &dyn MachineState) -> bool {
    state.target().endian == dwarfcheck_core::target::Endian::Big
}

fn addr_err(_: dwarfcheck_core::context::ContextError) -> Fail {
    Fail::Eval(R::LOCLIST_ADDRX_MISSING)
}

/// Reads the list at `form` and calls `f` on each entry with an
/// expression, in list order. Errors: `loclist.*` rules for a list that
/// does not decode; `.debug_addr` lookups as `op.debug-addr.entry-missing`.
pub(super) fn for_each_entry<'c>(
    state: &'c dyn MachineState,
    unit: &UnitInfo,
    form: AttrValue<'_>,
    mut f: impl FnMut(Entry<'c>) -> Res<()>,
) -> Res<()> {
    let start = list_start(state, unit, form)?;
    let v5 = unit.version >= 5;
    let sec: &'c [u8] = state.section(if v5 { DebugSection::DebugLoclists } else { DebugSection::DebugLoc });
    let pos =
        usize::try_from(start).ok().filter(|&p| p < sec.len()).ok_or(Fail::Ill(R::LOCLIST_OFFSET_OUT_OF_RANGE))?;
    let mut c = Cur { b: sec, pos, big: big(state) };
    let asz = usize::from(state.address_bytes());
    let mut base = unit.base_address;
    let wrap = |a: u64| if asz >= 8 { a } else { a & ((1u64 << (8 * asz)) - 1) };
    let need_base = |b: Option<u64>| b.ok_or(Fail::Ill(R::LOCLIST_NO_BASE_ADDRESS));
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
            f(Entry::Bounded { start: wrap(bs.wrapping_add(b)), end: wrap(bs.wrapping_add(e)), expr })?;
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
                let expr = c.take(usize::try_from(len).map_err(|_| Fail::Ill(R::LOCLIST_TRUNCATED))?)?;
                f(Entry::Default { expr })?;
                continue;
            }
            0x07 => (c.fixed(asz)?, c.fixed(asz)?),
            0x08 => {
                let a = c.fixed(asz)?;
                let len = c.uleb()?;
                (a, wrap(a.wrapping_add(len)))
            }
            _ => return Err(Fail::Ill(R::LOCLIST_UNKNOWN_ENTRY_KIND)),
        };
        let len = c.uleb()?;
        let expr = c.take(usize::try_from(len).map_err(|_| Fail::Ill(R::LOCLIST_TRUNCATED))?)?;
        f(Entry::Bounded { start, end, expr })?;
    }
}

impl Ev<'_> {
    /// Evaluates the location list `form` of the current unit (hetero-2020
    /// "DWARF Location List Expressions", rules `loclist.*`): the whole list
    /// is read first, then each matching entry's expression runs as a
    /// location with an empty stack and no object at this depth; the result
    /// is the union of their single locations, undefined when none matches.
    ///
    /// `frame_base`: each matching entry is first checked for `DW_OP_fbreg`
    /// (rule `attr.frame-base.fbreg`).
    /// Failures of the list itself carry no offset; failures inside an
    /// entry's expression carry that expression's offset (or
    /// `self.at_override` in a nested evaluation).
    pub(super) fn location_list(&self, form: AttrValue<'_>, s: &mut Scratch, frame_base: bool) -> Result<Loc, Stop> {
        let bare = |fail| Stop { fail, at: self.at_override };
        let pc = self.ctx.pc().ok_or(Fail::Eval(R::LOCLIST_NO_PROGRAM_LOCATION)).map_err(bare)?;
        let unit = self.ctx.unit().ok_or(Fail::Eval(R::CTX_CU_MISSING)).map_err(bare)?;
        let hit = |start: u64, end: u64| start <= pc && pc < end;
        let mut any_bounded = false;
        for_each_entry(self.ctx, &unit, form, |e| {
            if let Entry::Bounded { start, end, .. } = e {
                any_bounded |= hit(start, end);
            }
            Ok(())
        })
        .map_err(bare)?;
        let no_object = Overlay::new(self.ctx).with_object(None);
        let mut places: Vec<Loc> = Vec::new();
        let mut failed: Option<Stop> = None;
        let _ = for_each_entry(self.ctx, &unit, form, |e| {
            let expr = match e {
                Entry::Bounded { start, end, expr } if hit(start, end) => expr,
                Entry::Default { expr } if !any_bounded => expr,
                _ => return Ok(()),
            };
            let inner = Ev { ctx: &no_object, base: s.stack.len(), ..*self };
            match inner.entry_location(&compiled(expr, &no_object), s, frame_base) {
                Ok(Loc::Multi { start, len }) => {
                    places.extend_from_slice(&s.multi[start as usize..(start + len) as usize]);
                    Ok(())
                }
                Ok(one) => {
                    places.push(one);
                    Ok(())
                }
                Err(stop) => {
                    failed = Some(stop);
                    Err(Fail::Unsupported(String::new()))
                }
            }
        });
        if let Some(stop) = failed {
            return Err(stop);
        }
        // The union is a set (rule `loclist.union`): its places are kept in
        // the normal form's order, a place given twice once, so reads visit
        // them as for any other location with several places.
        if places.len() > 1 {
            let mut keyed: Vec<_> = places.iter().map(|l| (s.export_loc(l).places, *l)).collect();
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            keyed.dedup_by(|a, b| a.0 == b.0);
            places = keyed.into_iter().map(|(_, l)| l).collect();
        }
        Ok(match places.as_slice() {
            [] => Loc::Undef,
            [one] => *one,
            many => {
                let start = s.multi.len() as u32;
                s.multi.extend_from_slice(many);
                Loc::Multi { start, len: many.len() as u32 }
            }
        })
    }

    /// Runs one location list entry's expression as a location on a fresh
    /// stack region, keeping the offset of a failure inside it.
    fn entry_location(&self, prog: &super::Program, s: &mut Scratch, frame_base: bool) -> Result<Loc, Stop> {
        if let Some(e) = &prog.error {
            return Err(Stop { fail: Fail::Ill(e.rule.clone()), at: Some(self.at_override.unwrap_or(e.at)) });
        }
        if frame_base {
            if let Some(off) = prog.fbreg_at() {
                return Err(Stop {
                    fail: Fail::Ill(R::ATTR_FRAME_BASE_FBREG),
                    at: Some(self.at_override.unwrap_or(off)),
                });
            }
        }
        if let Err(stop) = self.exec(prog, s) {
            s.stack.truncate(self.base);
            return Err(stop);
        }
        let r = self.result_loc(s);
        r.map_err(|fail| Stop { fail, at: self.at_override })
    }
}
