//! Memory locations in any address space, bound to the current thread and
//! lane where the space is per thread / per lane, and address sizes of the
//! spaces (the locations `DW_OP_addr*`, `DW_OP_breg*`,
//! `DW_OP_LLVM_form_aspace_address`, `DW_OP_LLVM_aspace_bregx`, the
//! `DW_OP_xderef*` address and the CFA designate; hetero-2020 "Memory
//! Location Description Operations").

use super::evaluation::{Evaluation, Fail, Result};
use super::machine::{mask, Entry, Location, Scratch, Value};
use dwarfcheck_core::rules::{id as R, RuleId};

impl Evaluation<'_> {
    /// The identifier of the address space value `asp` (its unsigned bit
    /// pattern) when the target defines it, else the ill-formed `unknown`.
    /// Returns the id and its address size in **bits**.
    pub(super) fn known_aspace(&self, s: &Scratch, asp: &Value, unknown: RuleId) -> Result<(u64, u32)> {
        let id = s.as_u64(asp).ok_or_else(|| Fail::IllFormed(unknown.clone()))?;
        let space = self.target.address_space(id).ok_or(Fail::IllFormed(unknown))?;
        Ok((id, space.address_bits))
    }

    /// The current lane, which must be given (`ctx.lane-missing`) and be a
    /// lane of the target (`ctx.lane-invalid`).
    pub(super) fn current_lane(&self) -> Result<u32> {
        let lane = self.state.lane().ok_or(Fail::EvalError(R::CTX_LANE_MISSING))?;
        if lane >= self.target.lanes {
            return Err(Fail::EvalError(R::CTX_LANE_INVALID));
        }
        Ok(lane)
    }

    /// The memory location at byte `addr` of address space `aspace`,
    /// bound to the current thread and/or lane when the space has storage
    /// per thread / per lane: the storage is chosen when the location is
    /// created, not when it is read (rule `loc.memory.bound-at-creation`).
    /// Errors: `ctx.thread-missing`, then `ctx.lane-missing` /
    /// `ctx.lane-invalid`.
    pub(super) fn bound_memory(&self, aspace: u64, addr: u128) -> Result<Location> {
        let space = self.target.address_space(aspace);
        let thread = match space {
            Some(a) if a.per_thread => Some(self.state.thread().ok_or(Fail::EvalError(R::CTX_THREAD_MISSING))?),
            _ => None,
        };
        let lane = match space {
            Some(a) if a.per_lane => Some(self.current_lane()?),
            _ => None,
        };
        Ok(Location::Memory { aspace, bit: addr * 8, thread, lane })
    }

    /// The memory location at byte `addr` of the default address space
    /// (bound like [`Evaluation::bound_memory`] should a target make space 0 per
    /// thread or per lane).
    #[inline]
    pub(super) fn default_memory(&self, addr: u128) -> Result<Location> {
        match self.target.address_spaces.first() {
            Some(a) if a.number == 0 && !a.per_thread && !a.per_lane => {
                Ok(Location::Memory { aspace: 0, bit: addr * 8, thread: None, lane: None })
            }
            _ => self.bound_memory(0, addr),
        }
    }

    /// The memory location an xderef operation or
    /// `DW_OP_LLVM_form_aspace_address` forms from address space `asp` and
    /// address `a`: A zero-extended or truncated to the space's address
    /// size (rules `op.xderef.address-space`, `op.xderef.unknown-address-space`).
    pub(super) fn aspace_address(&self, s: &Scratch, asp: &Value, a: &Value, unknown: RuleId) -> Result<Location> {
        let (id, bits) = self.known_aspace(s, asp, unknown)?;
        self.bound_memory(id, mask(s.low128(a), bits))
    }

    /// Address size in **bits** of address space `aspace` (the generic
    /// type's for the default space and for spaces the target lacks).
    pub(super) fn aspace_bits(&self, aspace: u64) -> u32 {
        match aspace {
            0 => self.generic_bits(),
            a => self.target.address_space(a).map_or(self.generic_bits(), |x| x.address_bits),
        }
    }

    /// Pushes the memory location of byte `addr` (modulo the generic size)
    /// in the default address space.
    #[inline]
    pub(super) fn push_memory(&self, s: &mut Scratch, addr: u128) -> Result<()> {
        let l = self.default_memory(mask(addr, self.generic_bits()))?;
        s.stack.push(Entry::Location(l));
        Ok(())
    }
}
