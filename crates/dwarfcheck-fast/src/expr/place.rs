//! Operations that build location descriptions from others: `DW_OP_fbreg`
//! (nested frame base evaluation), `DW_OP_piece` and `DW_OP_bit_piece`
//! (hetero-2020 "Memory Location Description Operations", "Composite
//! Location Description Operations").

use super::decode::{Insn, Kind};
use super::evaluation::{Evaluation, Fail, Result};
use super::machine::{mask, Entry, Location, Scratch};
use super::program::Program;
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::id as R;

impl Evaluation<'_> {
    /// `DW_OP_fbreg` (rules `op.fbreg.offset`, `op.fbreg.register-frame-base`,
    /// `op.fbreg.memory-frame-base`, `op.fbreg.offset-out-of-storage`).
    pub(super) fn fbreg(&self, ins: &Insn, s: &mut Scratch) -> Result<Location> {
        let fb = self.state.frame_base().ok_or(Fail::EvalError(R::CTX_FRAME_BASE_MISSING))?;
        if self.depth + 1 > self.budgets.depth {
            return Err(Fail::Budget(BudgetKind::Depth));
        }
        let fbp = match s.frame_base.take() {
            Some(b) if b.0 == fb => b,
            _ => Box::new((fb.to_vec(), Program::compile(fb, self.state))),
        };
        // The frame base is the DW_AT_frame_base attribute's result: its
        // expression must not contain DW_OP_fbreg (rule
        // `attr.frame-base.fbreg`, checked before it runs; a decoding error
        // is reported by running it).
        if fbp.1.error.is_none() && fbp.1.fbreg_at().is_some() {
            s.frame_base = Some(fbp);
            return Err(Fail::IllFormed(R::ATTR_FRAME_BASE_FBREG));
        }
        let at = self.at_override.unwrap_or(u64::from(ins.off));
        let inner = Evaluation { base: s.stack.len(), depth: self.depth + 1, at_override: Some(at), ..*self };
        let r = inner.nested(&fbp.1, s);
        // In a calling frame a final DW_OP_reg* R names R's value through
        // the CFI rules (rule `frame.registers-through-cfi`).
        let last_reg = self
            .frame
            .and(r.as_ref().ok())
            .and_then(|_| fbp.1.insns.get(s.last as usize))
            .filter(|i| i.kind == Kind::Reg)
            .map(|i| i.a);
        s.frame_base = Some(fbp);
        let l = r?;
        let disp = ins.b as i64;
        if let Some(regno) = last_reg {
            let a = mask(self.register_address(s, regno)?.wrapping_add(disp as i128 as u128), self.generic_type.bits);
            return self.default_memory(a);
        }
        match l {
            // A register frame base, at any bit offset, is DW_OP_bregx R 0
            // (rules `attr.frame-base.register-as-bregx`,
            // `op.fbreg.register-frame-base`).
            // (Read from the register's first bit, in the storage the
            // location names: a top-frame register.)
            Location::Register { regno, .. } => {
                let r = self.location_address(s, &Location::Register { regno, bit: 0 })?;
                let a = mask(r.wrapping_add(disp as i128 as u128), self.generic_type.bits);
                self.default_memory(a)
            }
            // A byte address: address arithmetic modulo the space's size
            // (rule `op.fbreg.memory-frame-base`).
            Location::Memory { aspace, bit, thread, lane } if bit % 8 == 0 => {
                // (The size is a power of two: the modulo is a mask.)
                let size = self.memory_storage_bits(aspace) / 8;
                let a = (bit / 8).wrapping_add(disp as i128 as u128) & (size - 1);
                Ok(Location::Memory { aspace, bit: a * 8, thread, lane })
            }
            Location::Memory { .. } => {
                self.move_location(s, l, i128::from(disp) * 8, R::OP_FBREG_OFFSET_OUT_OF_STORAGE)
            }
            // More than one single location description, or one that is
            // not memory (rules `attr.frame-base.not-single`,
            // `attr.frame-base.not-memory`).
            Location::Multi { .. } => Err(Fail::IllFormed(R::ATTR_FRAME_BASE_NOT_SINGLE)),
            _ => Err(Fail::IllFormed(R::ATTR_FRAME_BASE_NOT_MEMORY)),
        }
    }

    /// `DW_OP_piece` / `DW_OP_bit_piece` (hetero-2020 "Composite Location
    /// Description Operations"): `bits` part size, `offset` the bit
    /// displacement of `DW_OP_bit_piece` (`None` for `DW_OP_piece`).
    pub(super) fn piece(&self, s: &mut Scratch, bits: u64, offset: Option<u64>) -> Result<()> {
        if bits > self.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        match self.top(s) {
            None => {
                let idx = s.new_composite();
                self.add_part(s, idx, bits, Location::Undefined, 1)?;
                self.push(s, Entry::Location(Location::Composite { idx, bit: 0 }));
            }
            Some(Entry::Location(Location::Composite { idx, .. })) if !s.composites[idx as usize].complete => {
                self.add_part(s, idx, bits, Location::Undefined, 1)?;
            }
            Some(e) => {
                let part = self.to_location_as(s, e, R::OP_PIECE_NOT_LOCATION)?;
                let part = match offset {
                    Some(b) => self.move_location(s, part, i128::from(b), R::OP_BIT_PIECE_OFFSET_PAST_STORAGE)?,
                    None => part,
                };
                self.check_part_fits(s, &part, bits)?;
                // The walk of the part's bits (expr.budget.work), then its
                // weight for the memory budget, as op.extend.size-limits
                // weighs a part.
                self.charge_walk(s, &part, bits)?;
                let weight = s.part_weight(&part, bits);
                s.stack.pop();
                match self.top(s) {
                    Some(Entry::Location(Location::Composite { idx, .. })) if !s.composites[idx as usize].complete => {
                        self.add_part(s, idx, bits, part, weight)?;
                    }
                    _ => {
                        let idx = s.new_composite();
                        self.add_part(s, idx, bits, part, weight)?;
                        self.push(s, Entry::Location(Location::Composite { idx, bit: 0 }));
                    }
                }
            }
        }
        Ok(())
    }
}
