//! DIE-backed operations: `DW_OP_call2`/`call4`/`call_ref` and implicit
//! pointer creation in an address space
//! (`DW_OP_LLVM_aspace_implicit_pointer`) (hetero-2020 "Control Flow
//! Operations", "Implicit Location Description Operations").

use super::decode::Insn;
use super::evaluation::{Evaluation, Fail, Result};
use super::machine::{Entry, Location, Scratch};
use super::program::compiled;
use dwarfcheck_core::context::AttrForm;
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::id as R;

impl Evaluation<'_> {
    /// `DW_OP_call2`, `DW_OP_call4`, `DW_OP_call_ref` (hetero-2020 "Control
    /// Flow Operations"): an exprloc `DW_AT_location` runs on this stack; a
    /// location list pushes its location; `DW_AT_const_value` pushes an
    /// implicit location; otherwise nothing happens.
    pub(super) fn call(&self, ins: &Insn, s: &mut Scratch) -> Result<()> {
        let unit = self.state.unit().ok_or(Fail::EvalError(R::CTX_CU_MISSING))?;
        let off = if ins.b == 1 { ins.a } else { unit.offset.wrapping_add(ins.a) };
        let die = self.die(off, R::OP_CALL_DIE_MISSING)?;
        let at = self.at_of(ins);
        match (&die.location, &die.const_value) {
            (Some(AttrForm::Exprloc(e)), _) => {
                let depth = self.deeper()?;
                let prog = compiled(e, self.state);
                if let Some(err) = &prog.error {
                    return Err(Fail::IllFormed(err.rule.clone()));
                }
                let inner = Evaluation { depth, at_override: at, ..*self };
                inner.run(&prog, s).map_err(|stop| stop.fail)
            }
            (Some(form @ (AttrForm::LocList { .. } | AttrForm::LocListX { .. })), _) => {
                let depth = self.deeper()?;
                let inner = Evaluation { depth, at_override: at, base: s.stack.len(), ..*self };
                let l = inner.location_list(form.as_value(), s, false).map_err(|stop| stop.fail)?;
                self.push(s, Entry::Location(l));
                Ok(())
            }
            (Some(AttrForm::Constant(_)), _) => Err(Fail::IllFormed(R::ATTR_FORM_NOT_ALLOWED)),
            (None, Some(bytes)) => {
                if bytes.len() as u64 > self.budgets.size_bytes {
                    return Err(Fail::Budget(BudgetKind::Size));
                }
                self.charge_memory(s, bytes.len() as u128)?;
                let start = s.store(bytes);
                self.push(s, Entry::Location(Location::Implicit { start, len: bytes.len() as u32, bit: 0 }));
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }

    /// `DW_OP_LLVM_aspace_implicit_pointer` (hetero-2020 "Implicit Location
    /// Description Operations"): pops an integral address space identifier
    /// that the target must define (rule `op.aspace-implicit-pointer.*`).
    pub(super) fn aspace_implicit_pointer(&self, ins: &Insn, s: &mut Scratch) -> Result<()> {
        let v = self.pop_integral(s, R::OP_ASPACE_IMPLICIT_POINTER_REQUIRES_INTEGRAL)?;
        let asp = s
            .as_u64(&v)
            .filter(|a| self.target.address_space(*a).is_some())
            .ok_or(Fail::IllFormed(R::OP_ASPACE_IMPLICIT_POINTER_UNKNOWN_ADDRESS_SPACE))?;
        let aspace = if asp == 0 { None } else { Some(asp) };
        self.push(s, Entry::Location(Location::ImplicitPointer { die: ins.a, disp: ins.b as i64, aspace, bit: 0 }));
        Ok(())
    }
}
