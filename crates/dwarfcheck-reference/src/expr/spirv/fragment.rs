//! SPIR-V `Fragment Offset Size`: the location so far holds bits
//! `[Offset, Offset + Size)` of the source variable (rule
//! `spirv.op.fragment.part`), built with the checks and charges of
//! `DW_OP_bit_piece` (hetero-2020 "Composite Location Description
//! Operations").

use crate::expr::entry::{Entry, Loc, Part, Storage};
use crate::expr::machine::{Machine, Stack};
use crate::expr::stop::Stop;
use dwarfcheck_core::context::Budgets;
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::id;

impl Machine<'_> {
    /// Pops the top entry (none: an undefined part) and pushes a complete
    /// composite of `variable_bits` bits: undefined bits `[0, offset)`,
    /// the first `size` bits of the popped location, undefined bits to the
    /// end (an undefined part of no bits is left out). The bounds were
    /// checked statically (`spirv.fragment.within-variable`).
    ///
    /// Checks, in `DW_OP_bit_piece`'s order: the part's size budget; the
    /// popped entry converted to a location (`op.piece.not-location`,
    /// `loc.*`); the part inside its storage
    /// (`composite.part-exceeds-storage`) and its walk
    /// (`expr.budget.work`); the composite's size (`composite.too-large`,
    /// the size budget); its parts charged to the memory budget.
    pub(super) fn fragment(
        &mut self,
        stack: &mut Stack,
        offset: u64,
        size: u64,
        variable_bits: u64,
    ) -> Result<(), Stop> {
        if u128::from(size) > u128::from(self.ctx.budgets().clamped().size_bytes) * 8 {
            return Err(Stop::Budget(BudgetKind::Size));
        }
        let (part, weight) = match stack.pop() {
            None => (Loc::undefined(), 1),
            Some(e) => {
                let pl = self.as_location(e, id::OP_PIECE_NOT_LOCATION)?;
                self.check_part_fits(&pl, size)?;
                self.part_at(&pl, 0, size, None)?
            }
        };
        self.check_composite_size(u128::from(variable_bits))?;
        let rest = variable_bits.saturating_sub(offset + size);
        let undefined = |bits: u64| (bits > 0).then(|| Part { bits, loc: Loc::undefined() });
        let parts: Vec<Part> =
            undefined(offset).into_iter().chain([Part { bits: size, loc: part }]).chain(undefined(rest)).collect();
        let extra = parts.len() as u64 - 1;
        self.charge_memory(u128::from(weight + extra) * u128::from(Budgets::PART_MEMORY_BYTES))?;
        stack.push(Entry::Location(Loc::one(Storage::composite(parts, true), 0)));
        Ok(())
    }
}
