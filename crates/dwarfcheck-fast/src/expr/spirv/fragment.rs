//! `Fragment Offset Size` (seed §3.6; rule `spirv.op.fragment.part`): the
//! location so far as bits `[Offset, Offset + Size)` of a composite as
//! large as the variable, the other bits undefined.

use crate::expr::evaluation::{Evaluation, Fail, Result};
use crate::expr::machine::{Entry, Location, Scratch};
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::id as R;

impl Evaluation<'_> {
    /// Pops the top entry (an empty stack: an undefined part) as a location
    /// description, as `DW_OP_bit_piece` takes its part (conversions, the
    /// part within its storage, the work and memory budgets), and pushes a
    /// complete composite of `variable_bits` **bits**: undefined
    /// `[0, offset)`, the first `size` bits of the popped location at
    /// `[offset, offset + size)`, undefined after (zero-size undefined
    /// parts omitted). The static checks have made `size` non-zero and
    /// `offset + size <= variable_bits`.
    pub(super) fn fragment(&self, s: &mut Scratch, offset: u64, size: u64, variable_bits: u64) -> Result<()> {
        if size > self.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        let (part, weight) = match self.top(s) {
            None => (Location::Undefined, 1),
            Some(e) => {
                let part = self.to_location_as(s, e, R::OP_PIECE_NOT_LOCATION)?;
                self.check_part_fits(s, &part, size)?;
                self.charge_walk(s, &part, size)?;
                let weight = s.part_weight(&part, size);
                s.stack.pop();
                (part, weight)
            }
        };
        let idx = s.new_composite();
        if offset > 0 {
            self.add_part(s, idx, offset, Location::Undefined, 1)?;
        }
        self.add_part(s, idx, size, part, weight)?;
        let rest = variable_bits.saturating_sub(offset.saturating_add(size));
        if rest > 0 {
            self.add_part(s, idx, rest, Location::Undefined, 1)?;
        }
        s.composites[idx as usize].complete = true;
        self.push(s, Entry::Location(Location::Composite { idx, bit: 0 }));
        Ok(())
    }
}
