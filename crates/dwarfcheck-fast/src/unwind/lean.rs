//! The lean one-step unwind: a frame's CFA and return address only,
//! computed natively on the common path (rules `unwind.step`,
//! `unwind.cfa.register-offset`, `unwind.return-address`,
//! `unwind.base-of-stack`), [`Unwinder::step`] deciding every other case.

use super::{unsigned, Frame, Unwinder};
use crate::cfi::{Cfa, Rule};
use dwarfcheck_core::context::{MachineState, MemoryStorage};
use dwarfcheck_core::outcome::unwind::UnwindEnd;
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::target::{Arch, Endian};

/// What [`Unwinder::step_summary`] gives: the parts of a
/// [`super::Stepped`] a one-step unwind needs, with the values
/// [`Unwinder::step`] gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepSummary {
    /// Section offset of the FDE used (`Step::fde_offset`).
    pub fde_offset: u64,
    /// The frame's CFA: a byte address (`Stepped::cfa_address`).
    pub cfa_address: u64,
    /// The address space of `cfa_address` (`Stepped::cfa_aspace`).
    pub cfa_aspace: u64,
    /// The caller's program location, a byte address: the return address
    /// (`unwind.return-address`; on AArch64 without its pointer
    /// authentication code), as `Step::caller_pc`.
    pub caller_pc: Option<u64>,
    /// Whether the FDE's CIE has augmentation `S` (`Stepped::signal_frame`).
    pub signal_frame: bool,
    /// `Some` when unwinding ends after this step (`Stepped::end`).
    pub end: Option<UnwindEnd>,
}

impl StepSummary {
    /// The summary of a whole step of [`Unwinder::step`].
    pub fn of(st: &super::Stepped) -> StepSummary {
        StepSummary {
            fde_offset: st.step.fde_offset,
            cfa_address: st.cfa_address,
            cfa_aspace: st.cfa_aspace,
            caller_pc: st.step.caller_pc,
            signal_frame: st.signal_frame,
            end: st.end.clone(),
        }
    }
}

impl Unwinder<'_> {
    /// Unwinds `frame` one step as [`Unwinder::step`] does, resolving only
    /// the frame's CFA and its caller's program location (the return
    /// address), with the same values and errors as [`Unwinder::step`].
    /// The top frame (`frame.callee` is `None`) whose row has a
    /// register-plus-offset CFA rule in the default address space and an
    /// `offset(N)` or `undefined` return-address rule, on a little-endian
    /// 64-bit target other than AArch64, is unwound natively: no expression
    /// machinery, no register map, no allocation once the buffers have
    /// grown. Every other frame, and every fault, goes through
    /// [`Unwinder::step`]. To walk on to the caller, use
    /// [`Unwinder::step`] (its [`super::Step`] holds the caller's
    /// registers). Errors: as [`Unwinder::step`].
    pub fn step_summary(&mut self, state: &dyn MachineState, frame: &Frame<'_>) -> Result<StepSummary, Outcome> {
        if frame.callee.is_none() {
            let (i, cfa) = self.row_at(frame.lookup)?;
            if let Some(s) = self.native(state, i, cfa) {
                return Ok(s);
            }
        }
        self.step(state, frame).map(|st| StepSummary::of(&st))
    }

    /// The summary of the top frame's step by the row `self.row` of
    /// `index.fdes[i]` (`hot[i]`) (CFA rule `cfa_rule`), or `None` when the general
    /// step must decide (a case outside the native one, or any fault).
    /// Each value is the one the general step computes:
    /// - the CFA: the register read as an unsigned integer of the address
    ///   size, plus the offset, modulo 2^64 (`unwind.cfa.register-offset`);
    /// - an `offset(N)` return address: the register's bytes at CFA + N
    ///   (memory of the default address space, within 0..2^64);
    /// - an `undefined` or absent rule: the base of the stack
    ///   (`unwind.base-of-stack`).
    fn native(&self, state: &dyn MachineState, i: usize, cfa_rule: Cfa) -> Option<StepSummary> {
        // The section's target decides what the step does with the rules
        // (as in the general step), the state's how registers and memory
        // are read (as in the evaluations).
        let sec_target = &self.sec.target;
        if sec_target.endian != Endian::Little || sec_target.arch == Arch::Aarch64 {
            return None;
        }
        let Cfa::Reg { reg, off, aspace: 0 } = cfa_rule else { return None };
        // (The walk's state, `walk_state`, reads registers and memory and
        // has the target and generic type of `state` itself: asked directly.)
        let target = state.target();
        let generic = state.generic_type();
        let space = target.address_space(0)?;
        if target.endian != Endian::Little {
            return None;
        }
        if generic.bits != 64 || generic.big_endian || space.address_bits != 64 || space.per_thread || space.per_lane {
            return None;
        }
        if target.register(reg)?.bits < 64 {
            return None;
        }
        let mut b = [0u8; 8];
        state.read_register(reg, 0, &mut b).ok()?;
        let cfa = u64::from_le_bytes(b).wrapping_add(off as u64);

        let hot = &self.hot[i];
        let cie = &self.index.cies[hot.cie as usize];
        let ra = cie.return_address_register;
        if sec_target.stack_pointer() == Some(ra) {
            return None;
        }
        let (caller_pc, end) = match self.row.regs.iter().find(|e| e.0 == ra).map(|e| e.1) {
            None | Some(Rule::Undefined) => (None, Some(UnwindEnd::Base)),
            Some(Rule::Offset(n)) => {
                let bits = target.register(ra)?.bits;
                if bits == 0 || bits > 64 || bits % 8 != 0 {
                    return None;
                }
                let n_bytes = (bits / 8) as usize;
                let at = i128::from(cfa) + i128::from(n);
                if at < 0 || at + n_bytes as i128 > 1i128 << 64 {
                    return None;
                }
                let mut v = [0u8; 8];
                state.read_memory(MemoryStorage::shared(0), at as u64, &mut v[..n_bytes]).ok()?;
                (Some(unsigned(&v[..n_bytes], false)), None)
            }
            Some(_) => return None,
        };
        Some(StepSummary {
            fde_offset: hot.fde_offset,
            cfa_address: cfa,
            cfa_aspace: 0,
            caller_pc,
            signal_frame: cie.signal_frame,
            end,
        })
    }
}
