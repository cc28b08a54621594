//! Memory locations in any address space, bound to the current thread and
//! lane where the space is per thread / per lane: `DW_OP_LLVM_form_aspace_address`,
//! `DW_OP_LLVM_aspace_bregx`, the `DW_OP_xderef*` address, `DW_OP_LLVM_push_lane`
//! (hetero-2020 "Memory Location Description Operations", "Literal Operations").

use super::exec::{Ev, Fail};
use super::machine::{mask, Ent, Loc, Scratch, Val};
use crate::encoding::ate;
use crate::outcome::BaseType;
use crate::rules::{id as R, RuleId};

type Res<T> = Result<T, Fail>;

/// Rule for a per-thread address space used without a current thread.
const NO_THREAD: RuleId = R::CTX_ELEMENT_MISSING;
/// Rule for a per-lane address space used without a current lane.
const NO_LANE: RuleId = R::CTX_ELEMENT_MISSING;
/// Rule for `DW_OP_LLVM_push_lane` without a current lane.
const PUSH_LANE_NO_LANE: RuleId = R::CTX_ELEMENT_MISSING;

impl Ev<'_> {
    /// The identifier of the address space value `asp` when the target
    /// defines it (rule `op.xderef.unknown-address-space` otherwise, which
    /// also covers `DW_OP_LLVM_form_aspace_address` and
    /// `DW_OP_LLVM_aspace_bregx`). Returns the id and its address size in **bits**.
    pub(super) fn known_aspace(&self, s: &Scratch, asp: &Val) -> Res<(u64, u32)> {
        let id = s.as_u64(asp).ok_or(Fail::Ill(R::OP_XDEREF_UNKNOWN_ADDRESS_SPACE))?;
        let space = self.ctx.target.address_space(id).ok_or(Fail::Ill(R::OP_XDEREF_UNKNOWN_ADDRESS_SPACE))?;
        Ok((id, space.address_bits))
    }

    /// The memory location at byte `addr` of address space `aspace` (known
    /// to the target), bound to the current thread and/or lane when the
    /// space has storage per thread / per lane: the storage is chosen when
    /// the location is created, not when it is read. A needed thread or
    /// lane that the context does not give is an evaluation error.
    pub(super) fn bound_mem(&self, aspace: u64, addr: u128) -> Res<Loc> {
        let space = self.ctx.target.address_space(aspace);
        let thread = match space {
            Some(a) if a.per_thread => Some(self.ctx.thread.ok_or(Fail::Eval(NO_THREAD))?),
            _ => None,
        };
        let lane = match space {
            Some(a) if a.per_lane => Some(self.ctx.lane.ok_or(Fail::Eval(NO_LANE))?),
            _ => None,
        };
        Ok(Loc::Mem { aspace, bit: addr * 8, thread, lane })
    }

    /// The memory location an xderef operation or
    /// `DW_OP_LLVM_form_aspace_address` forms from address space `asp` and
    /// address `a`: A zero-extended or truncated to the space's address
    /// size (rules `op.xderef.address-space`, `op.xderef.unknown-address-space`).
    pub(super) fn aspace_address(&self, s: &Scratch, asp: &Val, a: &Val) -> Res<Loc> {
        let (id, bits) = self.known_aspace(s, asp)?;
        self.bound_mem(id, mask(s.low128(a), bits))
    }

    /// `DW_OP_LLVM_form_aspace_address`: pops AS (top) and A, both
    /// integral, and pushes the memory location of A in AS.
    pub(super) fn form_aspace_address(&self, s: &mut Scratch, rule: RuleId) -> Res<()> {
        self.need(s, 2)?;
        let asp = self.pop_integral(s, rule.clone())?;
        let a = self.pop_integral(s, rule)?;
        let l = self.aspace_address(s, &asp, &a)?;
        self.push(s, Ent::Loc(l));
        Ok(())
    }

    /// `DW_OP_LLVM_aspace_bregx R B`: pops an integral AS; reads register
    /// `regno` as an unsigned integer of AS's address size S **bits**, adds
    /// the byte displacement `disp` (as the vendor profile decoded it,
    /// modulo 2^S) and pushes the memory location of that address in AS.
    pub(super) fn aspace_bregx(&self, s: &mut Scratch, regno: u64, disp: u64, rule: RuleId) -> Res<()> {
        let asp = self.pop_integral(s, rule)?;
        let (id, bits) = self.known_aspace(s, &asp)?;
        let t = BaseType::ate(ate::UNSIGNED, bits, self.gty.big_endian);
        let r = match self.deref(s, &Loc::Reg { regno, bit: 0 }, t)? {
            Ent::Val(v) => v.lo,
            _ => 0,
        };
        let addr = mask(r.wrapping_add(u128::from(disp as i64 as i128 as u128)), bits);
        let l = self.bound_mem(id, addr)?;
        self.push(s, Ent::Loc(l));
        Ok(())
    }

    /// `DW_OP_LLVM_push_lane`: the current lane as a generic value.
    pub(super) fn push_lane(&self, s: &mut Scratch) -> Res<()> {
        let lane = self.ctx.lane.ok_or(Fail::Eval(PUSH_LANE_NO_LANE))?;
        let v = self.generic(u128::from(lane));
        self.push(s, Ent::Val(v));
        Ok(())
    }
}
