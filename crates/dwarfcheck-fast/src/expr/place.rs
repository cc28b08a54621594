//! Operations that build location descriptions from others: `DW_OP_fbreg`
//! (nested frame base evaluation), `DW_OP_piece` and `DW_OP_bit_piece`
//! (hetero-2020 "Memory Location Description Operations", "Composite
//! Location Description Operations").

use super::decode::{Insn, Kind};
use super::evaluation::{Ev, Fail};
use super::machine::{mask, Ent, Loc, Scratch};
use super::program::Program;
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::id as R;

type Res<T> = Result<T, Fail>;

impl Ev<'_> {
    /// `DW_OP_fbreg` (rules `op.fbreg.offset`, `op.fbreg.register-frame-base`,
    /// `op.fbreg.memory-frame-base`, `op.fbreg.offset-out-of-storage`).
    pub(super) fn fbreg(&self, ins: &Insn, s: &mut Scratch) -> Res<Loc> {
        let fb = self.ctx.frame_base().ok_or(Fail::Eval(R::CTX_FRAME_BASE_MISSING))?;
        if self.depth + 1 > self.budgets.depth {
            return Err(Fail::Budget(BudgetKind::Depth));
        }
        let fbp = match s.frame_base.take() {
            Some(b) if b.0 == fb => b,
            _ => Box::new((fb.to_vec(), Program::compile(fb, self.ctx))),
        };
        let at = self.at_override.unwrap_or(u64::from(ins.off));
        let inner = Ev { base: s.stack.len(), depth: self.depth + 1, at_override: Some(at), ..*self };
        let r = inner.nested(&fbp.1, s);
        // In a calling frame a final DW_OP_reg* R names R's value through
        // the CFI rules (rule `frame.registers-through-cfi`).
        let last_reg = self
            .up
            .and(r.as_ref().ok())
            .and_then(|_| fbp.1.insns.get(s.last as usize))
            .filter(|i| i.kind == Kind::Reg)
            .map(|i| i.a);
        s.frame_base = Some(fbp);
        let l = r?;
        let disp = ins.b as i64;
        if let Some(regno) = last_reg {
            let a = mask(self.reg_address(s, regno)?.wrapping_add(disp as i128 as u128), self.gty.bits);
            return self.mem0(a);
        }
        match l {
            // A register frame base holds the address: DW_OP_bregx R B.
            Loc::Reg { bit: 0, .. } => {
                let a = mask(self.loc_address(s, &l)?.wrapping_add(disp as i128 as u128), self.gty.bits);
                self.mem0(a)
            }
            // A byte address: address arithmetic modulo the space's size
            // (rule `op.fbreg.memory-frame-base`).
            Loc::Mem { aspace, bit, thread, lane } if bit % 8 == 0 => {
                let size = self.storage_bits_mem(aspace) / 8;
                let a = (bit / 8).wrapping_add(disp as i128 as u128) % size;
                Ok(Loc::Mem { aspace, bit: a * 8, thread, lane })
            }
            other => self.move_loc(s, other, i128::from(disp) * 8, R::OP_FBREG_OFFSET_OUT_OF_STORAGE),
        }
    }

    /// `DW_OP_piece` / `DW_OP_bit_piece` (hetero-2020 "Composite Location
    /// Description Operations"): `bits` part size, `offset` the bit
    /// displacement of `DW_OP_bit_piece` (`None` for `DW_OP_piece`).
    pub(super) fn piece(&self, s: &mut Scratch, bits: u64, offset: Option<u64>) -> Res<()> {
        if bits > self.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        match self.top(s) {
            None => {
                let idx = s.new_comp();
                self.add_part(s, idx, bits, Loc::Undef)?;
                self.push(s, Ent::Loc(Loc::Comp { idx, bit: 0 }));
            }
            Some(Ent::Loc(Loc::Comp { idx, .. })) if !s.comps[idx as usize].complete => {
                self.add_part(s, idx, bits, Loc::Undef)?;
            }
            Some(e) => {
                let pl = self.to_loc_as(s, e, R::OP_PIECE_NOT_LOCATION)?;
                let pl = match offset {
                    Some(b) => self.move_loc(s, pl, i128::from(b), R::OP_BIT_PIECE_OFFSET_PAST_STORAGE)?,
                    None => pl,
                };
                self.check_part_fits(s, &pl, bits)?;
                s.stack.pop();
                match self.top(s) {
                    Some(Ent::Loc(Loc::Comp { idx, .. })) if !s.comps[idx as usize].complete => {
                        self.add_part(s, idx, bits, pl)?;
                    }
                    _ => {
                        let idx = s.new_comp();
                        self.add_part(s, idx, bits, pl)?;
                        self.push(s, Ent::Loc(Loc::Comp { idx, bit: 0 }));
                    }
                }
            }
        }
        Ok(())
    }
}
