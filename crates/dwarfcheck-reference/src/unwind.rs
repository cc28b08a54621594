//! Reference virtual unwinding (hetero-2020 "Structure of Call Frame
//! Information"; DWARF 5 §6.4.4; rules `unwind.*`), step by step as
//! `specs/rules/unwind.yaml` states it, and [`unwound_frames`]: a machine
//! state whose CFA and calling frames come from that unwinding
//! (`unwind.context-from-cfi`).
//!
//! This module calls the expression evaluator (CFA rules, register rules);
//! the evaluator never calls it back: it reads the frames an
//! [`unwound_frames`] gives through [`MachineState::cfa`] and
//! [`MachineState::caller`].

use crate::cfi::frame_table as fde_table;
use crate::expr::unwound::{caller_register, frame_cfa, is_undefined};
use dwarfcheck_core::cfi::{CfiSection, Cie, Fde, AARCH64_RA_SIGN_STATE};
use dwarfcheck_core::context::{CallerFrame, Cfa, ContextError, Element, MachineState, Overlay};
use dwarfcheck_core::outcome::cfi::{CfiOutcome, RegisterRule, Row};
use dwarfcheck_core::outcome::unwind::{Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BudgetKind, Outcome};
use dwarfcheck_core::rules::id;
use dwarfcheck_core::target::{Arch, Endian, Target};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Virtually unwinds through `section` from the machine state `state` (its
/// `pc`, registers and memory are the top frame's; its CFA, calling frame,
/// initial stack and object are not used), making at most `limit` steps
/// (`None`: until the base of the stack, bounded by the state's
/// [`Budgets::frames`](crate::context::Budgets::frames), `unwind.frames-budget`).
///
/// Never fails: every fault is the [`UnwindEnd::Fault`] of the result
/// (`ctx.pc-missing`, `unwind.no-fde`, `unwind.table-fault`,
/// `unwind.cfa.*`, `unwind.cyclic`, `unwind.return-address-unreadable`,
/// budget `frames`).
pub fn unwind(section: &CfiSection, state: &dyn MachineState, limit: Option<u32>) -> Unwind {
    walk(section, state, limit).unwind
}

/// `state` as a machine state whose CFA and calling frames come from
/// virtually unwinding it through the program's call frame information
/// `cfi` when `state` does not give them (`unwind.context-from-cfi`;
/// hetero-2020 "Call Frame Information"): an [`Overlay`] of `state` with
/// those two answers set. Every other answer is `state`'s.
///
/// - [`MachineState::cfa`]: the state's own CFA if it gives one; else frame
///   0's CFA as the first unwinding step computed it; else
///   [`ContextError::Unwinding`] with the fault the unwinding ended in.
/// - [`MachineState::caller`]: the state's own calling frame if it gives
///   one; else frame 1 of the unwound chain (each frame's `caller` the
///   next; each marked [`CallerFrame::unwound`], so that a register rule
///   that needs itself is `unwind.cyclic`); at the base of the stack
///   [`ContextError::Missing`]`(`[`Element::Caller`]`)`
///   (`frame.caller-missing`); else [`ContextError::Unwinding`] with the
///   unwinding's fault.
///
/// The unwinding is [`unwind`] with no step limit, done here, once (not at
/// all when the state gives both the CFA and the calling frame).
pub fn unwound_frames<'a>(state: &'a dyn MachineState, cfi: &CfiSection) -> Overlay<'a> {
    let (cfa, caller) = (state.cfa(), state.caller());
    if cfa.is_ok() && caller.is_ok() {
        return Overlay::new(state);
    }
    let w = walk(cfi, state, None);
    let fault = match &w.unwind.end {
        UnwindEnd::Fault { outcome } => Some(ContextError::Unwinding(failure_of(outcome))),
        _ => None,
    };
    let cfa = cfa.or_else(|_| match w.cfa0 {
        Some((aspace, address)) => Ok(Cfa { address, aspace }),
        None => Err(fault.clone().unwrap_or(ContextError::Missing(Element::Cfa))),
    });
    let caller = caller.or_else(|_| match w.chain.first() {
        Some(f) => Ok(f.clone()),
        // Base of the stack: frame.caller-missing.
        None if w.unwind.end == UnwindEnd::Base => Err(ContextError::Missing(Element::Caller)),
        None => Err(fault.unwrap_or(ContextError::Missing(Element::Caller))),
    });
    Overlay::new(state).with_cfa(cfa).with_caller(caller)
}

/// The failure of an unwinding that ended in `outcome` (always a failed
/// outcome; anything else is reported as unsupported).
fn failure_of(outcome: &Outcome) -> Failure {
    match outcome {
        Outcome::Failed(f) => f.clone(),
        other => Failure::Unsupported { what: format!("unexpected unwinding fault {other}") },
    }
}

/// An unwinding with what [`unwound_frames`] needs from it
/// (`unwind.context-from-cfi`).
struct Walk {
    /// The steps and the end.
    unwind: Unwind,
    /// Frame 0's CFA as (address space, byte address), if computed.
    cfa0: Option<(u64, u64)>,
    /// Frames 1, 2, ... that have a program location (their callee's step
    /// gave a caller pc), linked through `caller`.
    chain: Vec<Arc<CallerFrame>>,
}

/// Links frame descriptions (frame 1 first) so that each one's `caller`
/// is the next; returns them in the same order.
fn link(descs: &[CallerFrame]) -> Vec<Arc<CallerFrame>> {
    let mut out: Vec<Arc<CallerFrame>> = Vec::with_capacity(descs.len());
    let mut next: Option<Arc<CallerFrame>> = None;
    for d in descs.iter().rev() {
        let mut f = d.clone();
        f.caller = next.take();
        let a = Arc::new(f);
        next = Some(a.clone());
        out.push(a);
    }
    out.reverse();
    out
}

/// `unwind.no-fde` search: the first FDE in section order, of those whose
/// headers parse, with pc_begin <= lookup < pc_begin + pc_range.
fn find_fde(fdes: &[(Fde, Cie)], lookup: u64) -> Option<(Fde, Cie)> {
    fdes.iter()
        .find(|(f, _)| {
            u128::from(f.pc_begin) <= u128::from(lookup)
                && u128::from(lookup) < u128::from(f.pc_begin) + u128::from(f.pc_range)
        })
        .cloned()
}

/// Every FDE of `section` whose header parses, with its CIE, in section
/// order: what [`find_fde`] searches (parsed once per unwinding, not once
/// per step).
fn parsed_fdes(section: &CfiSection) -> Vec<(Fde, Cie)> {
    section.fde_offsets().filter_map(Result::ok).filter_map(|o| section.parse_fde(o).ok()).collect()
}

/// A row table fault as an expression outcome (`unwind.table-fault`).
fn table_fault(o: CfiOutcome) -> Outcome {
    match o {
        CfiOutcome::Failed(Failure::IllFormed { rule, at }) => Outcome::Failed(Failure::IllFormed { rule, at }),
        CfiOutcome::Failed(Failure::EvalError { rule, at }) => Outcome::Failed(Failure::EvalError { rule, at }),
        CfiOutcome::Failed(Failure::Budget { budget, at }) => Outcome::Failed(Failure::Budget { budget, at }),
        CfiOutcome::Failed(Failure::Unsupported { what }) | CfiOutcome::Failed(Failure::ConsumerFault { what }) => {
            Outcome::Failed(Failure::Unsupported { what })
        }
        CfiOutcome::Table(_) => Outcome::Failed(Failure::Unsupported { what: "a row table is not a fault".into() }),
    }
}

/// The value of register bytes as an unsigned integer in target byte
/// order (`unwind.return-address`); low 64 bits.
fn unsigned(bytes: &[u8], endian: Endian) -> u64 {
    let mut b = bytes.to_vec();
    if endian == Endian::Little {
        b.reverse();
    }
    b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x))
}

/// `unwind.aarch64.ra-sign-state`: the address with its PAC removed
/// (bits 63..48 copied from bit 55).
fn strip_pac(v: u64) -> u64 {
    if v & (1 << 55) != 0 {
        v | 0xffff_0000_0000_0000
    } else {
        v & 0x0000_ffff_ffff_ffff
    }
}

/// The registers a step reports (`unwind.step.registers`,
/// `unwind.sp-is-cfa`): row columns except AArch64 RA_SIGN_STATE, the
/// return address column, the ABI stack pointer.
fn reported(row: &Row, cie: &Cie, target: &Target) -> Vec<u64> {
    let mut r: Vec<u64> = row.registers.keys().copied().collect();
    r.push(cie.return_address_register);
    r.extend(target.stack_pointer());
    // RA_SIGN_STATE is architectural, not a register of the caller,
    // unless the CIE names it as the return address column (a fuzz
    // finding: that column is always reported).
    if target.arch == Arch::Aarch64 {
        r.retain(|&n| n != AARCH64_RA_SIGN_STATE || n == cie.return_address_register);
    }
    r.sort_unstable();
    r.dedup();
    r
}

/// Frame 0's state during an unwinding: the machine state with frame 0's
/// CFA as far as computed (`cfa`) and the chain of frames found so far
/// (`chain`, frame 1 first) as its calling frames.
fn frame0<'a>(machine_only: &Overlay<'a>, cfa: &Result<Cfa, ContextError>, chain: &[Arc<CallerFrame>]) -> Overlay<'a> {
    let caller = chain.first().cloned().ok_or(ContextError::Missing(Element::Caller));
    machine_only.clone().with_cfa(cfa.clone()).with_caller(caller)
}

/// The unwinding itself, also returning frame 0's CFA and the caller
/// chain. See [`unwind`].
fn walk(section: &CfiSection, state: &dyn MachineState, limit: Option<u32>) -> Walk {
    let mut w = Walk { unwind: Unwind { steps: Vec::new(), end: UnwindEnd::Base }, cfa0: None, chain: Vec::new() };
    let target = state.target();
    // Frame 0's state: the machine state only (no initial stack, no
    // object); its CFA and caller are the ones the steps below find.
    let machine_only = Overlay::new(state).with_initial_stack(&[]).with_object(None);
    let mut top_cfa: Result<Cfa, ContextError> = Err(ContextError::Missing(Element::Cfa));
    // descs[i] describes frame i + 1: the rules of frame i's row, frame
    // i + 1's CFA once its step computed it, its pc.
    let mut descs: Vec<CallerFrame> = Vec::new();
    let mut pc = 0u64;
    let mut signal = false;
    let mut k: usize = 0;
    // The FDEs, and the row table of each FDE once built: a walk that
    // comes back to an FDE uses the same table.
    let fdes = parsed_fdes(section);
    let mut tables: BTreeMap<u64, CfiOutcome> = BTreeMap::new();
    let end = loop {
        // Step 1: the case's limit first, then the frames budget.
        if limit.is_some_and(|l| l as usize == k) {
            break UnwindEnd::Limit;
        }
        if k == state.budgets().clamped().frames as usize {
            break UnwindEnd::Fault {
                outcome: Outcome::Failed(Failure::Budget { budget: BudgetKind::Frames, at: None }),
            };
        }
        // Step 2 (unwind.lookup-address).
        let lookup = if k == 0 {
            match state.pc() {
                Some(p) => {
                    pc = p;
                    p
                }
                None => {
                    break UnwindEnd::Fault {
                        outcome: Outcome::Failed(Failure::EvalError { rule: id::CTX_PC_MISSING, at: None }),
                    }
                }
            }
        } else if signal {
            pc
        } else {
            pc.wrapping_sub(1)
        };
        // Step 3 (unwind.no-fde).
        let Some((fde, cie)) = find_fde(&fdes, lookup) else {
            break UnwindEnd::Fault {
                outcome: Outcome::Failed(Failure::EvalError { rule: id::UNWIND_NO_FDE, at: None }),
            };
        };
        // Step 4 (unwind.table-fault); the row holding lookup.
        let table = match tables.entry(fde.offset).or_insert_with(|| fde_table(section, fde.offset)) {
            CfiOutcome::Table(t) => t.clone(),
            other => break UnwindEnd::Fault { outcome: table_fault(other.clone()) },
        };
        let Some(row) = table.rows.iter().find(|r| r.start <= lookup && lookup < r.end).cloned() else {
            break UnwindEnd::Fault {
                outcome: Outcome::Failed(Failure::EvalError { rule: id::UNWIND_NO_FDE, at: None }),
            };
        };
        // Frame k + 1: the row's rules, plus val_offset(0) for the ABI
        // stack pointer without a column (unwind.sp-is-cfa). RA_SIGN_STATE
        // is architectural, not a register of the caller.
        let mut rules = row.registers.clone();
        if target.arch == Arch::Aarch64 {
            rules.remove(&AARCH64_RA_SIGN_STATE);
        }
        if let Some(sp) = target.stack_pointer() {
            rules.entry(sp).or_insert(RegisterRule::ValOffset { offset: 0 });
        }
        descs.truncate(k);
        descs.push(CallerFrame { rules, unwound: true, ..CallerFrame::default() });
        let chain = link(&descs);
        let top = frame0(&machine_only, &top_cfa, &chain);
        // Step 5: frame k's CFA (unwind.cfa.*), in frame k (frames 1..=k).
        let (aspace, address, cfa) = match frame_cfa(&top, &chain[..k], &row.cfa) {
            Ok(x) => x,
            Err(outcome) => break UnwindEnd::Fault { outcome },
        };
        // unwind.repeated-frame: the same pc and CFA as a frame before it.
        if w.unwind.steps.iter().any(|s| s.pc == pc && s.cfa == cfa) {
            break UnwindEnd::Fault {
                outcome: Outcome::Failed(Failure::EvalError { rule: id::UNWIND_REPEATED_FRAME, at: None }),
            };
        }
        if k == 0 {
            top_cfa = Ok(Cfa { address, aspace });
            w.cfa0 = Some((aspace, address));
        } else {
            descs[k - 1].cfa = Some(address);
            descs[k - 1].cfa_aspace = aspace;
        }
        let chain = link(&descs);
        let top = frame0(&machine_only, &top_cfa, &chain);
        // Step 6: the caller registers (unwind.step.registers).
        let mut registers = BTreeMap::new();
        for r in reported(&row, &cie, target) {
            registers.insert(r, caller_register(&top, &chain, r));
        }
        // Step 7: the caller pc (unwind.return-address, unwind.base-of-stack).
        let ra = registers.get(&cie.return_address_register).cloned();
        let mut step = Step { pc, lookup, fde_offset: fde.offset, cfa, registers, caller_pc: None };
        let ra = match ra {
            Some(ra) => ra,
            None => unreachable!("the return address column is always reported"),
        };
        if is_undefined(&ra.location) {
            w.unwind.steps.push(step);
            break UnwindEnd::Base;
        }
        let value = match (&ra.location, &ra.bytes) {
            (Outcome::Location(_), Some(b)) => unsigned(b, target.endian),
            (Outcome::Location(_), None) => {
                w.unwind.steps.push(step);
                break UnwindEnd::Fault {
                    outcome: Outcome::Failed(Failure::EvalError {
                        rule: id::UNWIND_RETURN_ADDRESS_UNREADABLE,
                        at: None,
                    }),
                };
            }
            (fault, _) => {
                let outcome = fault.clone();
                w.unwind.steps.push(step);
                break UnwindEnd::Fault { outcome };
            }
        };
        let signed = target.arch == Arch::Aarch64
            && row.registers.get(&AARCH64_RA_SIGN_STATE) == Some(&RegisterRule::RaSigned { signed: true });
        let caller_pc = if signed { strip_pac(value) } else { value };
        // Step 8: frame k + 1 is the caller.
        step.caller_pc = Some(caller_pc);
        w.unwind.steps.push(step);
        descs[k].pc = Some(caller_pc);
        signal = cie.signal_frame;
        pc = caller_pc;
        k += 1;
    };
    w.unwind.end = end;
    // Frames with a program location: one per step that gave a caller pc.
    let with_pc = w.unwind.steps.iter().filter(|s| s.caller_pc.is_some()).count();
    descs.truncate(with_pc);
    w.chain = link(&descs);
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// unwind.aarch64.ra-sign-state: bits 63..48 follow bit 55.
    #[test]
    fn pac_stripping() {
        assert_eq!(strip_pac(0x002a_0000_0000_2010), 0x2010);
        assert_eq!(strip_pac(0x7f80_ffff_0000_2010), 0xffff_ffff_0000_2010);
        assert_eq!(strip_pac(0x0000_ffff_ffff_fff0), 0x0000_ffff_ffff_fff0);
    }

    /// Return address bytes are read in target byte order.
    #[test]
    fn return_address_byte_order() {
        assert_eq!(unsigned(&[0x10, 0x20, 0, 0, 0, 0, 0, 0], Endian::Little), 0x2010);
        assert_eq!(unsigned(&[0, 0, 0x20, 0x10], Endian::Big), 0x2010);
    }
}
