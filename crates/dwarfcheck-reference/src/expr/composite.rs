//! `DW_OP_piece` and `DW_OP_bit_piece`: incremental creation of composite
//! location descriptions (hetero-2020 "Composite Location Description
//! Operations").

use super::entry::{memory_bits, Entry, Loc, Part, Storage};
use super::machine::{Machine, Stack};
use super::stop::Stop;
use dwarfcheck_core::context::Budgets;
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::id;

impl Machine<'_> {
    /// `DW_OP_piece` (`bits` = S*8) and `DW_OP_bit_piece` (`bits` = S,
    /// `bit_disp` = B), rules `op.piece.*`, `op.bit-piece.*`,
    /// `composite.*`.
    pub(super) fn piece(&mut self, stack: &mut Stack, bits: u128, bit_disp: Option<u64>) -> Result<(), Stop> {
        let ctx = self.ctx;
        if bits > u128::from(ctx.budgets().clamped().size_bytes) * 8 {
            return Err(Stop::Budget(BudgetKind::Size));
        }
        let bits = bits as u64;
        let undefined_part = Part { bits, loc: Loc::undefined() };
        // The part's weight for the memory budget (an undefined part: 1).
        let mut weight = 1u64;
        match stack.last_mut() {
            // op.piece.empty-stack-undefined-part
            None => stack.push(Entry::Location(Loc::one(Storage::composite(vec![undefined_part], false), 0))),
            // op.piece.top-incomplete-appends
            Some(Entry::Location(l)) if l.is_incomplete_composite() => {
                l.singles[0].storage.append_part(undefined_part);
            }
            Some(_) => {
                let e = stack.pop().expect("not empty");
                let mut pl = self.as_location(e, id::OP_PIECE_NOT_LOCATION)?;
                if let Some(b) = bit_disp {
                    self.offset(&mut pl, i128::from(b), id::OP_BIT_PIECE_OFFSET_PAST_STORAGE)?;
                }
                self.check_part_fits(&pl, bits)?;
                // The walk of the part's bits (expr.budget.work) and its
                // weight, as op.extend.size-limits weighs a part; too deep
                // a nesting is cut to its normal form (MAX_NESTING).
                let (pl, w) = self.part_at(&pl, 0, bits, None)?;
                weight = w;
                let part = Part { bits, loc: pl };
                match stack.last_mut() {
                    // op.piece.pops-part-appends
                    Some(Entry::Location(l)) if l.is_incomplete_composite() => {
                        l.singles[0].storage.append_part(part);
                    }
                    // op.piece.pops-part-creates
                    _ => stack.push(Entry::Location(Loc::one(Storage::composite(vec![part], false), 0))),
                }
            }
        }
        // composite.too-large, then the size budget, on the composite just
        // created or extended (now on top).
        if let Some(Entry::Location(l)) = stack.last() {
            if let Some(total) = l.singles[0].storage.size_bits(ctx) {
                self.check_composite_size(total)?;
            }
        }
        // expr.budget.memory: the part created, by its weight.
        self.charge_memory(u128::from(weight) * u128::from(Budgets::PART_MEMORY_BYTES))
    }

    /// Rule `composite.part-exceeds-storage`: every bit of a part of `bits`
    /// bits must lie inside the storage of each single location description
    /// of its part location `pl` (undefined storage, and a register the
    /// target does not define, have no size to check).
    pub(super) fn check_part_fits(&self, pl: &Loc, bits: u64) -> Result<(), Stop> {
        for s in &pl.singles {
            if let Some(size) = s.storage.size_bits(self.ctx) {
                if s.storage != Storage::Undefined && s.bit_offset.saturating_add(u128::from(bits)) > size {
                    return Err(Stop::Ill(id::COMPOSITE_PART_EXCEEDS_STORAGE));
                }
            }
        }
        Ok(())
    }

    /// A composite of `total` **bits**: larger than the memory storage of
    /// the target's largest address space is ill-formed
    /// (`composite.too-large`); then more than the size budget is
    /// `Budget(Size)`.
    pub(super) fn check_composite_size(&self, total: u128) -> Result<(), Stop> {
        let largest =
            self.ctx.target().address_spaces.iter().map(|a| memory_bits(a.address_bits)).max().unwrap_or(u128::MAX);
        if total > largest {
            return Err(Stop::Ill(id::COMPOSITE_TOO_LARGE));
        }
        if total > u128::from(self.ctx.budgets().clamped().size_bytes) * 8 {
            return Err(Stop::Budget(BudgetKind::Size));
        }
        Ok(())
    }
}
