//! Operations that build or move location descriptions: `DW_OP_fbreg`
//! (nested frame base evaluation), `DW_OP_piece` and `DW_OP_bit_piece`
//! (hetero-2020 "Memory Location Description Operations", "Composite
//! Location Description Operations").

use super::decode::Insn;
use super::exec::{Ev, Fail};
use super::machine::{mask, Ent, Loc, Scratch};
use super::Program;
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::{id as R, RuleId};

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
            .filter(|i| i.kind == super::decode::Kind::Reg)
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

    /// `l` moved by `bits` bits (as `DW_OP_LLVM_bit_offset`): an evaluation
    /// error `rule` if the new offset is negative or at/after the end of the
    /// storage; undefined stays undefined (rule `loc.undefined.no-size`).
    pub(super) fn move_loc(&self, s: &mut Scratch, l: Loc, bits: i128, rule: RuleId) -> Res<Loc> {
        if let Loc::Multi { start, len } = l {
            let first = s.multi.len() as u32;
            for i in start..start + len {
                let m = self.move_loc(s, s.multi[i as usize], bits, rule.clone())?;
                s.multi.push(m);
            }
            return Ok(Loc::Multi { start: first, len });
        }
        let size = self.storage_bits(s, &l);
        let cur: i128 = match l {
            Loc::Undef => return Ok(l),
            Loc::Mem { bit, .. } => bit as i128,
            Loc::Reg { bit, .. } | Loc::Imp { bit, .. } | Loc::ImpPtr { bit, .. } | Loc::Comp { bit, .. } => {
                i128::from(bit)
            }
            Loc::Multi { .. } => 0,
        };
        let nb = cur.checked_add(bits).ok_or(Fail::Eval(rule.clone()))?;
        // (A register the target does not define has no known size, but its
        // bit offset still cannot leave 0..2^64.)
        let limit = if matches!(l, Loc::Mem { .. }) { i128::MAX } else { i128::from(u64::MAX) };
        if nb < 0 || nb > limit || size.is_some_and(|sz| nb as u128 >= sz) {
            return Err(Fail::Eval(rule));
        }
        Ok(match l {
            Loc::Mem { aspace, thread, lane, .. } => Loc::Mem { aspace, bit: nb as u128, thread, lane },
            Loc::Reg { regno, .. } => Loc::Reg { regno, bit: nb as u64 },
            Loc::Imp { start, len, .. } => Loc::Imp { start, len, bit: nb as u64 },
            Loc::ImpPtr { die, disp, aspace, .. } => Loc::ImpPtr { die, disp, aspace, bit: nb as u64 },
            Loc::Comp { idx, .. } => Loc::Comp { idx, bit: nb as u64 },
            other => other,
        })
    }

    /// Evaluates a nested expression with result kind "location" on a
    /// fresh stack region; returns its location and pops the region.
    pub(super) fn nested(&self, prog: &Program, s: &mut Scratch) -> Res<Loc> {
        if let Some(e) = &prog.error {
            return Err(Fail::Ill(e.rule.clone()));
        }
        match self.exec(prog, s) {
            Err(stop) => {
                s.stack.truncate(self.base);
                Err(stop.fail)
            }
            Ok(()) => self.result_loc(s),
        }
    }

    /// The location result of a nested evaluation that has run (result
    /// kind location); pops its stack region.
    pub(super) fn result_loc(&self, s: &mut Scratch) -> Res<Loc> {
        let out = match self.top(s) {
            None => Ok(Loc::Undef),
            Some(e) => {
                complete_top(s, &e);
                self.to_loc_as(s, e, R::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE)
            }
        };
        s.stack.truncate(self.base);
        out
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

    /// Every bit of a part must lie within each place's storage (rule
    /// `composite.part-exceeds-storage`).
    pub(super) fn check_part_fits(&self, s: &Scratch, l: &Loc, bits: u64) -> Res<()> {
        let fits = match *l {
            Loc::Undef => true,
            Loc::Multi { start, len } => {
                for i in start..start + len {
                    self.check_part_fits(s, &s.multi[i as usize], bits)?;
                }
                true
            }
            Loc::Mem { aspace, bit, .. } => bit + u128::from(bits) <= self.storage_bits_mem(aspace),
            // A register the target does not define has no known size.
            Loc::Reg { regno, bit } => {
                self.target.register(regno).is_none_or(|r| u128::from(bit) + u128::from(bits) <= u128::from(r.bits))
            }
            Loc::Imp { bit, .. } | Loc::ImpPtr { bit, .. } | Loc::Comp { bit, .. } => {
                self.storage_bits(s, l).is_none_or(|size| u128::from(bit) + u128::from(bits) <= size)
            }
        };
        if fits {
            Ok(())
        } else {
            Err(Fail::Ill(R::COMPOSITE_PART_EXCEEDS_STORAGE))
        }
    }

    /// Appends a part, checking the composite's total size against the
    /// largest address space (rule `composite.too-large`) and the size budget.
    pub(super) fn add_part(&self, s: &mut Scratch, idx: u32, bits: u64, loc: Loc) -> Res<()> {
        let total = s.comps[idx as usize].total_bits.saturating_add(bits);
        self.check_comp_size(u128::from(total))?;
        s.append_part(idx, bits, loc);
        Ok(())
    }

    /// A composite of `total` **bits** must fit the memory storage of the
    /// target's largest address space (rule `composite.too-large`, checked
    /// first) and the size budget.
    pub(super) fn check_comp_size(&self, total: u128) -> Res<()> {
        let max_abits = self.target.address_spaces.iter().map(|a| a.address_bits).max().unwrap_or(64);
        if total > 1u128 << (max_abits.min(120) + 3) {
            return Err(Fail::Ill(R::COMPOSITE_TOO_LARGE));
        }
        if total > u128::from(self.budgets.size_bytes.saturating_mul(8)) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        Ok(())
    }
}

/// An incomplete composite left on top at the end of an evaluation becomes
/// complete (rule `expr.result.incomplete-composite-completed`).
pub(super) fn complete_top(s: &mut Scratch, e: &Ent) {
    if let Ent::Loc(Loc::Comp { idx, .. }) = e {
        s.comps[*idx as usize].complete = true;
    }
}
