//! Windows of composite location descriptions: the front-to-back walk the
//! work budget counts (rule `expr.budget.work`), the cut of a location to
//! the bits a read or a part uses, and the parts `DW_OP_piece`,
//! `DW_OP_bit_piece`, `DW_OP_LLVM_extend` and `DW_OP_LLVM_select_bit_piece`
//! make of a part location (hetero-2020 "Composite Location Description
//! Operations").
//!
//! Every function here recurses once per level of composite nesting, which
//! [`MAX_NESTING`] bounds; none recurses on the number of parts.

use super::entry::{Entry, Loc, Single, Storage, MAX_NESTING};
use super::machine::Machine;
use super::stop::Stop;
use dwarfcheck_core::outcome::{BudgetKind, NormalLocation, RawLocation, RawPiece, RawSingle, SingleLocation};
use dwarfcheck_core::rules::{id, RuleId};

/// The parts a walk of `loc` over bits `[skip, skip + n)` reaches (rule
/// `expr.budget.work`), or `None` as soon as there are more than `limit`.
///
/// For each single location description in composite storage at bit
/// offset `o`, the walk goes through the parts from the first, stops at the
/// first part starting at or after bit `o + skip + n`, counts 1 per part
/// reached and walks the part location of each reached part that overlaps
/// the window, over the bits it overlaps.
pub(super) fn walk_cost(loc: &Loc, skip: u128, n: u64, limit: u64) -> Option<u64> {
    let mut total = 0u64;
    for s in &loc.singles {
        total += walk_cost_single(s, skip, n, limit - total)?;
    }
    Some(total)
}

/// [`walk_cost`] of one single location description.
fn walk_cost_single(s: &Single, skip: u128, n: u64, limit: u64) -> Option<u64> {
    let Storage::Composite { parts, .. } = &s.storage else { return Some(0) };
    let start = s.bit_offset.saturating_add(skip);
    let end = start.saturating_add(u128::from(n));
    let mut total = 0u64;
    let mut pos = 0u128;
    for p in parts.iter() {
        if pos >= end {
            break;
        }
        total += 1;
        if total > limit {
            return None;
        }
        let (lo, hi) = (pos.max(start), pos.saturating_add(u128::from(p.bits)).min(end));
        if lo < hi {
            total += walk_cost(&p.loc, lo - pos, (hi - lo) as u64, limit - total)?;
        }
        pos = pos.saturating_add(u128::from(p.bits));
    }
    Some(total)
}

/// The raw form of `s` cut to the `nbits` bits from its bit offset on: a
/// composite becomes one of the parts holding those bits (the first and
/// last cut at the window's edges, every part location advanced by the
/// bits skipped and cut the same way), at bit offset 0; other storage is
/// as it is. Same bits, same order, so its normal form is that of those
/// bits, at the cost of the walk `expr.budget.work` counts rather than of
/// the whole composite (and of every part that shares a part location).
fn raw_cut_single(s: &Single, nbits: u64) -> RawSingle {
    let Storage::Composite { parts, .. } = &s.storage else { return s.to_raw() };
    let (start, end) = (s.bit_offset, s.bit_offset.saturating_add(u128::from(nbits)));
    let mut pieces = Vec::new();
    let mut pos = 0u128;
    for p in parts.iter() {
        if pos >= end {
            break;
        }
        let (lo, hi) = (pos.max(start), (pos + u128::from(p.bits)).min(end));
        if lo < hi {
            let (skip, bits) = (lo - pos, (hi - lo) as u64);
            let singles = p.loc.singles.iter().map(|x| raw_cut_single(&advanced(x, skip), bits)).collect();
            pieces.push(RawPiece { bits, location: RawLocation { singles } });
        }
        pos += u128::from(p.bits);
    }
    RawSingle::Composite { pieces, bit_offset: 0 }
}

/// The raw form of `loc` with each single location description cut to
/// `nbits` bits ([`raw_cut_single`]): what a read of `nbits` bits or a part
/// of that size sees.
pub(super) fn raw_cut(loc: &Loc, nbits: u64) -> RawLocation {
    RawLocation { singles: loc.singles.iter().map(|s| raw_cut_single(s, nbits)).collect() }
}

/// The raw form of `loc` with each composite single location description
/// cut from its bit offset to its end: the bits its normal form describes.
fn raw_cut_whole(loc: &Loc) -> RawLocation {
    RawLocation { singles: loc.singles.iter().map(|s| raw_cut_single(s, whole_bits(s))).collect() }
}

/// The parts the walks of every single location description of `loc`
/// from its offset to its end reach together (what its normal form
/// costs), or `None` once there are more than `limit`.
fn whole_cost(loc: &Loc, limit: u64) -> Option<u64> {
    let mut cost = 0u64;
    for s in &loc.singles {
        cost += walk_cost_single(s, 0, whole_bits(s), limit - cost)?;
    }
    Some(cost)
}

/// The bits from a composite single's offset to its end (0 for others).
fn whole_bits(s: &Single) -> u64 {
    match &s.storage {
        Storage::Composite { bits, .. } => bits.saturating_sub(s.bit_offset).min(u128::from(u64::MAX)) as u64,
        _ => 0,
    }
}

/// `s` moved `bits` further into its storage (undefined storage has no
/// offset to move).
pub(super) fn advanced(s: &Single, bits: u128) -> Single {
    match s.storage {
        Storage::Undefined => s.clone(),
        _ => Single { storage: s.storage.clone(), bit_offset: s.bit_offset.saturating_add(bits) },
    }
}

impl Machine<'_> {
    /// Charges `cost` composite parts to the work budget (`expr.budget.work`).
    fn charge_work(&mut self, cost: Option<u64>) -> Result<(), Stop> {
        let limit = self.ctx.budgets().clamped().work;
        match cost.map(|c| self.work.saturating_add(c)) {
            Some(total) if total <= limit => {
                self.work = total;
                Ok(())
            }
            _ => Err(Stop::Budget(BudgetKind::Work)),
        }
    }

    /// Charges the walk of `loc` over `[0, n)` (`expr.budget.work`).
    pub(super) fn charge_walk(&mut self, loc: &Loc, n: u64) -> Result<(), Stop> {
        let left = self.ctx.budgets().clamped().work.saturating_sub(self.work);
        self.charge_work(walk_cost(loc, 0, n, left))
    }

    /// Charges the walk of each composite single of `loc` from its offset
    /// to its end (`expr.budget.work`), then gives its normal form: the
    /// normal form of a location result.
    pub(super) fn export(&mut self, loc: &Loc) -> Result<NormalLocation, Stop> {
        let limit = self.ctx.budgets().clamped().work.saturating_sub(self.work);
        self.charge_work(whole_cost(loc, limit))?;
        Ok(raw_cut_whole(loc).normalize())
    }

    /// The part location of a part of `bits` bits at `loc` moved `delta`
    /// bits, as `DW_OP_LLVM_bit_offset delta` would move it, with the
    /// part's weight.
    ///
    /// Checks first: undefined storage is unchanged; when `moved` names a
    /// rule, an offset at or past a storage's end is that evaluation error
    /// (`DW_OP_LLVM_extend` passes `None`: its parts are PL itself); then
    /// every bit of the part must be inside each storage
    /// (`composite.part-exceeds-storage`, ill-formed). Then the walk of the
    /// part's bits is charged (`expr.budget.work`).
    ///
    /// The part location is the moved location itself (shared, not
    /// copied), or, when it nests composites [`MAX_NESTING`] deep, a flat
    /// composite of the pieces its bits are made of (same normal form,
    /// bounded recursion). The weight (`op.extend.size-limits`,
    /// `expr.budget.memory`) is 1 per single location description in
    /// non-composite storage; with a composite, the number of places of
    /// the normal form of the part's bits, a composite place counting its
    /// pieces.
    pub(super) fn part_at(
        &mut self,
        loc: &Loc,
        delta: u64,
        bits: u64,
        moved: Option<RuleId>,
    ) -> Result<(Loc, u64), Stop> {
        let ctx = self.ctx;
        // The checks, on the single location descriptions as they are: the
        // move first (when the part is a moved PL), then the part's fit.
        for s in &loc.singles {
            let Some(rule) = moved.clone() else { break };
            if s.storage == Storage::Undefined {
                continue;
            }
            let new = s.bit_offset.saturating_add(u128::from(delta));
            if let Some(size) = s.storage.size_bits(ctx) {
                if new >= size {
                    return Err(Stop::Eval(rule));
                }
            }
        }
        for s in &loc.singles {
            if s.storage == Storage::Undefined {
                continue;
            }
            let new = s.bit_offset.saturating_add(u128::from(delta));
            if let Some(size) = s.storage.size_bits(ctx) {
                if new.saturating_add(u128::from(bits)) > size {
                    return Err(Stop::Ill(id::COMPOSITE_PART_EXCEEDS_STORAGE));
                }
            }
        }
        let part = Loc { singles: loc.singles.iter().map(|s| advanced(s, u128::from(delta))).collect() };
        self.charge_walk(&part, bits)?;
        if !part.singles.iter().any(|s| matches!(s.storage, Storage::Composite { .. })) {
            let weight = part.singles.len() as u64;
            return Ok((part, weight));
        }
        let normal = raw_cut(&part, bits).normalize();
        let weight = normal
            .places
            .iter()
            .map(|p| match p {
                SingleLocation::Simple(_) => 1,
                SingleLocation::Composite(pieces) => pieces.len() as u64,
            })
            .sum();
        let part = if part.nesting() >= MAX_NESTING { Loc::from_normal(&normal) } else { part };
        Ok((part, weight))
    }
}

/// The most composite parts a trace walks to show one location's normal
/// form (a larger one is summarised), so that tracing every step of an
/// evaluation costs at most this much per stack entry.
pub const TRACE_PARTS: u64 = 256;

/// Text of an entry for traces: values as `Value` prints them, locations in
/// normal form (summarised when the walk of its composites reaches more
/// than [`TRACE_PARTS`] parts), an incomplete composite prefixed with
/// `incomplete `.
pub fn describe(e: &Entry) -> String {
    match e {
        Entry::Value(v) => v.to_string(),
        Entry::ImplicitPointerValue(l) => format!("implicit-pointer-value({})", location_text(l)),
        Entry::Location(l) if l.is_incomplete_composite() => format!("incomplete {}", location_text(l)),
        Entry::Location(l) => location_text(l),
    }
}

fn location_text(l: &Loc) -> String {
    match whole_cost(l, TRACE_PARTS) {
        Some(_) => raw_cut_whole(l).normalize().to_string(),
        None => format!("(a location whose normal form spans more than {TRACE_PARTS} composite parts)"),
    }
}
