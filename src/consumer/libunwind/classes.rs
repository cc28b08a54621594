//! libunwind 1.6.2's known disagreement classes U1 to U8 (docs/consumers.md,
//! "libunwind"), recognised from the case's CFI, its state and libunwind's
//! answer.

use crate::case::{CfiCase, UnwindCase};
use crate::consumer::unwinding::{instructions_text, register};
use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::unwind::{Unwind, UnwindEnd};

/// x86-64 DWARF register numbers the classes name.
const RBP: u64 = 6;
const RSP: u64 = 7;
const RIP: u64 = 16;

/// One instruction of [`instructions_text`]: its name and operands.
fn instructions(text: &str) -> impl Iterator<Item = (&str, Vec<&str>)> {
    text.lines().map(|i| {
        let (name, ops) = i.split_once(':').unwrap_or((i, ""));
        (name.trim(), ops.split_whitespace().collect())
    })
}

/// The register number of an operand written `regN`.
fn regno(op: &str) -> Option<u64> {
    op.strip_prefix("reg")?.parse().ok()
}

/// Instructions that give the register of their first operand a rule.
fn is_rule(name: &str) -> bool {
    name.starts_with("DW_CFA_")
        && !name.starts_with("DW_CFA_def_cfa")
        && !name.starts_with("DW_CFA_advance_loc")
        && !matches!(name, "DW_CFA_remember_state" | "DW_CFA_restore_state" | "DW_CFA_nop" | "DW_CFA_GNU_args_size")
}

/// The class of a disagreement of libunwind's unwinding `answer` of `u`
/// through `case.section`, with its one-line explanation; `None` when none
/// applies. Checked in order, so that a misparse (U1) is named before what
/// it would hide.
pub fn known(case: &CfiCase, u: &UnwindCase, answer: &Unwind) -> Option<(&'static str, &'static str)> {
    let sec = &case.section;
    let reference = dwarfcheck_reference::unwind::unwind(sec, &*u.ctx, u.limit);
    // The entries the unwinding goes through: the case's FDE and each step's.
    let mut fdes: Vec<u64> =
        std::iter::once(case.fde_offset).chain(reference.steps.iter().map(|s| s.fde_offset)).collect();
    fdes.sort_unstable();
    fdes.dedup();
    let texts: Vec<String> = fdes.iter().filter_map(|o| instructions_text(sec, *o)).collect();
    let all = texts.join("\n");
    let ops = || instructions(&all);
    if fdes.iter().any(|o| crate::consumer::fde_cie(sec, *o).is_some_and(|c| c.version >= 4)) {
        return Some(("U1", "reads a version 4 CIE's address_size and segment_selector_size as its alignment factors"));
    }
    if sec.kind == FrameKind::DebugFrame && all.contains("_expression") {
        return Some((
            "U6",
            "reads the DWARF expressions of a .debug_frame through the target's memory, at the address they have in \
             the unwinder's",
        ));
    }
    if ops().any(|(_, o)| o.iter().filter_map(|op| regno(op)).any(|r| r > RIP)) {
        return Some(("U5", "refuses CFI that names a register above 16 (xmm0 and up): the step fails"));
    }
    if ops().any(|(n, _)| n.starts_with("DW_CFA_val_offset")) {
        return Some((
            "U4",
            "does not implement DW_CFA_val_offset(_sf): the opcode is skipped and its operands are decoded as \
             instructions",
        ));
    }
    if rip_is_not_pc(case, u, answer) {
        return Some((
            "U8",
            "has one register for the pc and rip: a synthetic state whose rip differs from its pc unwinds as if \
             rip were the pc",
        ));
    }
    if ops().any(|(n, o)| is_rule(n) && o.first().and_then(|r| regno(r)) == Some(RSP)) {
        return Some(("U3", "ignores a rule for rsp: the caller's rsp is always the CFA"));
    }
    let ended_early = answer.end == UnwindEnd::Base
        && answer.steps.last().is_some_and(|last| {
            let i = answer.steps.len() - 1;
            reference.steps.get(i).is_some_and(|r| {
                last.caller_pc.is_none()
                    && r.caller_pc.is_some()
                    && r.registers.get(&RBP).is_some_and(|c| c.bytes.is_none())
            })
        });
    if ended_early && ops().any(|(n, o)| n == "DW_CFA_undefined" && o.first().and_then(|r| regno(r)) == Some(RBP)) {
        return Some((
            "U2",
            "ends the unwinding at a frame whose caller rbp is undefined, though its return address is known",
        ));
    }
    let ruled: Vec<u64> = ops()
        .filter(|(n, _)| is_rule(n) && *n != "DW_CFA_same_value")
        .filter_map(|(_, o)| o.first().and_then(|r| regno(r)))
        .collect();
    let late_copy = ops().any(|(n, o)| {
        n == "DW_CFA_register"
            && matches!((o.first().and_then(|r| regno(r)), o.get(1).and_then(|r| regno(r))),
                (Some(dst), Some(src)) if src < dst && ruled.contains(&src))
    });
    if late_copy {
        return Some((
            "U7",
            "applies a DW_CFA_register rule after the rule of its source register, when the source's number is \
             lower: the caller's value of the source is copied instead of the frame's",
        ));
    }
    None
}

/// Whether the state gives rip (16) a value other than its pc, and the
/// reference, unwinding from the same state with rip = pc, makes the
/// steps libunwind made (same pcs, CFAs and caller pcs).
fn rip_is_not_pc(case: &CfiCase, u: &UnwindCase, answer: &Unwind) -> bool {
    let state: &dyn MachineState = &*u.ctx;
    let (Some(pc), Some(rip)) = (state.pc(), register(state, RIP)) else { return false };
    if pc == rip {
        return false;
    }
    let mut ctx = (*u.ctx).clone();
    ctx.registers.insert(RIP, pc.to_le_bytes().to_vec());
    let again = dwarfcheck_reference::unwind::unwind(&case.section, &ctx, u.limit);
    let view = crate::consumer::unwinding::values_view(&again, "libunwind", |_, _| false);
    view.steps.len() == answer.steps.len()
        && view
            .steps
            .iter()
            .zip(&answer.steps)
            .all(|(a, b)| a.pc == b.pc && a.cfa == b.cfa && a.caller_pc == b.caller_pc)
}

/// A public report of class `id`, if one was found.
pub fn report(id: &str) -> Option<&'static str> {
    match id {
        "U1" => Some("https://github.com/libunwind/libunwind/issues/256"),
        "U3" => Some("https://github.com/libunwind/libunwind/pull/296"),
        _ => None,
    }
}
