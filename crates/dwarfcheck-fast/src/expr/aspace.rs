//! Memory locations in any address space, bound to the current thread and
//! lane where the space is per thread / per lane: `DW_OP_LLVM_form_aspace_address`,
//! `DW_OP_LLVM_aspace_bregx`, the `DW_OP_xderef*` address, `DW_OP_LLVM_push_lane`
//! (hetero-2020 "Memory Location Description Operations", "Literal Operations").

use super::exec::{Ev, Fail};
use super::machine::{mask, Ent, Loc, Scratch, Val};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::BaseType;
use dwarfcheck_core::rules::{id as R, RuleId};

type Res<T> = Result<T, Fail>;

impl Ev<'_> {
    /// The identifier of the address space value `asp` (its unsigned bit
    /// pattern) when the target defines it, else the ill-formed `unknown`.
    /// Returns the id and its address size in **bits**.
    fn known_aspace(&self, s: &Scratch, asp: &Val, unknown: RuleId) -> Res<(u64, u32)> {
        let id = s.as_u64(asp).ok_or_else(|| Fail::Ill(unknown.clone()))?;
        let space = self.target.address_space(id).ok_or(Fail::Ill(unknown))?;
        Ok((id, space.address_bits))
    }

    /// The current lane, which must be given (`ctx.lane-missing`) and be a
    /// lane of the target (`ctx.lane-invalid`).
    fn current_lane(&self) -> Res<u32> {
        let lane = self.ctx.lane().ok_or(Fail::Eval(R::CTX_LANE_MISSING))?;
        if lane >= self.target.lanes {
            return Err(Fail::Eval(R::CTX_LANE_INVALID));
        }
        Ok(lane)
    }

    /// The memory location at byte `addr` of address space `aspace`,
    /// bound to the current thread and/or lane when the space has storage
    /// per thread / per lane: the storage is chosen when the location is
    /// created, not when it is read (rule `loc.memory.bound-at-creation`).
    /// Errors: `ctx.thread-missing`, then `ctx.lane-missing` /
    /// `ctx.lane-invalid`.
    pub(super) fn bound_mem(&self, aspace: u64, addr: u128) -> Res<Loc> {
        let space = self.target.address_space(aspace);
        let thread = match space {
            Some(a) if a.per_thread => Some(self.ctx.thread().ok_or(Fail::Eval(R::CTX_THREAD_MISSING))?),
            _ => None,
        };
        let lane = match space {
            Some(a) if a.per_lane => Some(self.current_lane()?),
            _ => None,
        };
        Ok(Loc::Mem { aspace, bit: addr * 8, thread, lane })
    }

    /// The memory location at byte `addr` of the default address space
    /// (bound like [`Ev::bound_mem`] should a target make space 0 per
    /// thread or per lane).
    #[inline]
    pub(super) fn mem0(&self, addr: u128) -> Res<Loc> {
        match self.target.address_spaces.first() {
            Some(a) if a.number == 0 && !a.per_thread && !a.per_lane => {
                Ok(Loc::Mem { aspace: 0, bit: addr * 8, thread: None, lane: None })
            }
            _ => self.bound_mem(0, addr),
        }
    }

    /// The memory location an xderef operation or
    /// `DW_OP_LLVM_form_aspace_address` forms from address space `asp` and
    /// address `a`: A zero-extended or truncated to the space's address
    /// size (rules `op.xderef.address-space`, `op.xderef.unknown-address-space`).
    pub(super) fn aspace_address(&self, s: &Scratch, asp: &Val, a: &Val, unknown: RuleId) -> Res<Loc> {
        let (id, bits) = self.known_aspace(s, asp, unknown)?;
        self.bound_mem(id, mask(s.low128(a), bits))
    }

    /// `DW_OP_LLVM_form_aspace_address`: pops AS (top) and A, both
    /// integral, and pushes the memory location of A in AS (rules
    /// `op.form-aspace-address.*`).
    /// An implicit pointer value as A is turned back into its DIE's location
    /// when AS is its own address space, and is misused otherwise (rule
    /// `op.form-aspace-address.implicit-pointer-value`).
    pub(super) fn form_aspace_address(&self, s: &mut Scratch) -> Res<()> {
        self.need(s, 2)?;
        let asp = self.pop_integral(s, R::OP_FORM_ASPACE_ADDRESS_REQUIRES_INTEGRAL)?;
        if let Some(&Ent::Ipv(p)) = s.stack.last() {
            s.stack.pop();
            let (id, _) = self.known_aspace(s, &asp, R::OP_FORM_ASPACE_ADDRESS_UNKNOWN_ADDRESS_SPACE)?;
            if p.aspace.unwrap_or(0) != id {
                return Err(Fail::Eval(R::OP_IMPLICIT_POINTER_VALUE_MISUSE));
            }
            let l = self.ipv_target(s, p)?;
            self.push(s, Ent::Loc(l));
            return Ok(());
        }
        let a = self.pop_integral(s, R::OP_FORM_ASPACE_ADDRESS_REQUIRES_INTEGRAL)?;
        let l = self.aspace_address(s, &asp, &a, R::OP_FORM_ASPACE_ADDRESS_UNKNOWN_ADDRESS_SPACE)?;
        self.push(s, Ent::Loc(l));
        Ok(())
    }

    /// `DW_OP_LLVM_aspace_bregx R B`: pops an integral AS; reads register
    /// `regno` as an unsigned integer of AS's address size S **bits**, adds
    /// the byte displacement `disp` (as the vendor profile decoded it,
    /// modulo 2^S) and pushes the memory location of that address in AS
    /// (rules `op.aspace-bregx.*`).
    pub(super) fn aspace_bregx(&self, s: &mut Scratch, regno: u64, disp: u64) -> Res<()> {
        self.need(s, 1)?;
        let asp = self.pop_integral(s, R::OP_ASPACE_BREGX_REQUIRES_INTEGRAL)?;
        let (id, bits) = self.known_aspace(s, &asp, R::OP_ASPACE_BREGX_UNKNOWN_ADDRESS_SPACE)?;
        let t = BaseType::ate(ate::UNSIGNED, bits, self.gty.big_endian);
        let r = match self.deref(s, &Loc::Reg { regno, bit: 0 }, t)? {
            Ent::Val(v) => v.lo,
            _ => 0,
        };
        let addr = mask(r.wrapping_add(disp as i64 as i128 as u128), bits);
        let l = self.bound_mem(id, addr)?;
        self.push(s, Ent::Loc(l));
        Ok(())
    }

    /// `DW_OP_LLVM_push_lane`: the current lane as a generic value (rule
    /// `op.push-lane.pushes-generic`).
    pub(super) fn push_lane(&self, s: &mut Scratch) -> Res<()> {
        let lane = self.current_lane()?;
        let v = self.generic(u128::from(lane));
        self.push(s, Ent::Val(v));
        Ok(())
    }
}
