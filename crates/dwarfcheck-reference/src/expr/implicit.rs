//! Implicit pointers: `DW_OP_LLVM_aspace_implicit_pointer` and turning an
//! implicit pointer value back into the location of the DIE it points to
//! (hetero-2020 "Implicit Location Description Operations >
//! DW_OP_implicit_pointer, DW_OP_LLVM_aspace_implicit_pointer"; rules
//! `op.implicit-pointer.*`, `op.aspace-implicit-pointer.*`).

use super::decode::Insn;
use super::entry::{Entry, Loc, Single, Storage};
use super::machine::{need, Final, Machine, Stack};
use super::stop::Stop;
use dwarfcheck_core::context::{AttrForm, Overlay, ResultKind};
use dwarfcheck_core::rules::id;

impl Machine<'_> {
    /// `DW_OP_LLVM_aspace_implicit_pointer D B`: pops the address space
    /// (`op.aspace-implicit-pointer.creates` and its checks, in that order).
    pub(super) fn aspace_implicit_pointer(&mut self, insn: &Insn, stack: &mut Stack) -> Result<(), Stop> {
        need(stack, 1)?;
        let v = self.pop_integral(stack, id::OP_ASPACE_IMPLICIT_POINTER_REQUIRES_INTEGRAL)?;
        let aspace = u64::try_from(v.to_u128())
            .ok()
            .filter(|a| self.ctx.target().address_space(*a).is_some())
            .ok_or(Stop::Ill(id::OP_ASPACE_IMPLICIT_POINTER_UNKNOWN_ADDRESS_SPACE))?;
        let storage = Storage::ImplicitPointer { die: insn.u(0), disp: insn.s(1), aspace };
        stack.push(Entry::Location(Loc::one(storage, 0)));
        Ok(())
    }

    /// The location description RL an implicit pointer value stands for
    /// where a location description is needed (`op.implicit-pointer.to-location`).
    /// `ip` is the implicit pointer location the value was read from.
    pub(super) fn ipv_to_location(&mut self, ip: &Loc) -> Result<Loc, Stop> {
        if ipv_parts(ip).2 != 0 {
            return Err(Stop::Eval(id::OP_ASPACE_IMPLICIT_POINTER_NOT_DEFAULT_CONVERSION));
        }
        self.ipv_target(ip)
    }

    /// RL for an implicit pointer value of any address space, without the
    /// default-address-space check (for `DW_OP_LLVM_form_aspace_address`
    /// given the IPV's own address space).
    pub(super) fn ipv_target(&mut self, ip: &Loc) -> Result<Loc, Stop> {
        let (die, disp, _) = ipv_parts(ip);
        let ctx = self.ctx;
        if ctx.unit().is_none() {
            return Err(Stop::Eval(id::CTX_CU_MISSING));
        }
        let d = ctx.die(die).ok_or(Stop::Ill(id::OP_IMPLICIT_POINTER_DIE_MISSING))?;
        let mut rl = match (&d.location, &d.const_value) {
            (Some(AttrForm::Exprloc(e)), _) => {
                let depth = self.deeper(self.depth)?;
                // The DIE's location in the current frame: result kind
                // location, no object; it starts on an empty stack.
                let c = Overlay::new(ctx).with_object(None).with_result_kind(Some(ResultKind::Location));
                let frames = self.frames.clone();
                match self.run_in(&c, frames, e, Some(ResultKind::Location), Vec::new(), depth) {
                    Ok((Final::Location(l), _)) => l,
                    Ok((Final::Value(_), _)) => unreachable!("result kind location gives a location"),
                    Err((s, _)) => return Err(s),
                }
            }
            (Some(form @ (AttrForm::LocList { .. } | AttrForm::LocListX { .. })), _) => {
                let depth = self.deeper(self.depth)?;
                self.die_loclist(form.as_value(), depth)?
            }
            (Some(AttrForm::Constant(_)), _) => {
                return Err(Stop::Unsupported("a DW_AT_location of class constant".into()));
            }
            (None, Some(v)) => self.implicit_value(v)?,
            (None, None) => return Err(Stop::Eval(id::OP_IMPLICIT_POINTER_DIE_NO_LOCATION)),
        };
        // Moved B bytes as DW_OP_LLVM_offset would.
        self.offset(&mut rl, i128::from(disp) * 8, id::OP_IMPLICIT_POINTER_DISPLACEMENT_OUT_OF_STORAGE)?;
        Ok(rl)
    }
}

/// (DIE, displacement in bytes, address space) of the implicit pointer
/// location an implicit pointer value remembers.
pub(super) fn ipv_parts(ip: &Loc) -> (u64, i64, u64) {
    match &ip.singles[..] {
        [Single { storage: Storage::ImplicitPointer { die, disp, aspace }, .. }] => (*die, *disp, *aspace),
        _ => unreachable!("an implicit pointer value remembers one implicit pointer location"),
    }
}
