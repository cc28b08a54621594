//! The two in-house consumers: the reference interpreter and the fast
//! evaluator, behind the same [`Consumer`] trait as third parties. The
//! functions here are the one place that turns a case into a call to
//! either evaluator's crate.

use super::{Consumer, Support};
use crate::case::{CfiCase, ExprCase, UnwindCase};
use crate::edition::Edition;
use dwarfcheck_core::context::{Context, MachineState};
use dwarfcheck_core::outcome::unwind::Unwind;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use dwarfcheck_core::rules::RuleId;

/// Runs `f` on the machine state the reference evaluates `ctx` in: `ctx`
/// itself, or, when it gives the program's call frame information
/// ([`Context::cfi`]), [`dwarfcheck_reference::unwind::unwound_frames`]
/// of it, whose CFA and calling frames the reference unwinder finds when
/// `ctx` does not give them (`unwind.context-from-cfi`).
pub fn with_reference_state<R>(ctx: &Context, f: impl FnOnce(&dyn MachineState) -> R) -> R {
    match ctx.cfi.as_deref() {
        Some(cfi) => f(&dwarfcheck_reference::unwind::unwound_frames(ctx, cfi)),
        None => f(ctx),
    }
}

/// The reference's outcome for an expression case (its attribute's
/// context and its value's form applied), and the `unspecified` rules the
/// answer rests on (`dwarfcheck_reference::expr::evaluate_attribute`).
pub fn reference_outcome(case: &ExprCase) -> (Outcome, Vec<RuleId>) {
    with_reference_state(&case.ctx, |state| reference_outcome_in(case, state))
}

/// [`reference_outcome`] in `state`, standing for the case's context (the
/// machine state [`with_reference_state`] gives).
pub fn reference_outcome_in(case: &ExprCase, state: &dyn MachineState) -> (Outcome, Vec<RuleId>) {
    dwarfcheck_reference::expr::evaluate_attribute(case.attribute, case.value(), state)
}

/// The fast evaluator's outcome for an expression case
/// (`dwarfcheck_fast::expr::evaluate_attribute`); when the case gives CFI
/// (`context.cfi`), the CFA and calling frames it does not give come from
/// virtually unwinding its machine state (`dwarfcheck_fast::unwind::UnwoundFrames`,
/// `unwind.context-from-cfi`).
pub fn fast_outcome(case: &ExprCase) -> Outcome {
    let evaluate = |state: &dyn MachineState| fast_outcome_in(case, state);
    match &case.ctx.cfi {
        Some(cfi) => evaluate(&dwarfcheck_fast::unwind::UnwoundFrames::new(&*case.ctx, cfi)),
        None => evaluate(&*case.ctx),
    }
}

/// [`fast_outcome`] in `state`, standing for the case's context (which,
/// when it gives CFI, must be the unwound state [`fast_outcome`] builds).
pub fn fast_outcome_in(case: &ExprCase, state: &dyn MachineState) -> Outcome {
    dwarfcheck_fast::expr::evaluate_attribute(case.attribute, case.value(), state)
}

/// The reference's row table for a CFI case.
pub fn reference_table(case: &CfiCase) -> CfiOutcome {
    dwarfcheck_reference::cfi::frame_table(&case.section, case.fde_offset)
}

/// The fast evaluator's row table for a CFI case.
pub fn fast_table(case: &CfiCase) -> CfiOutcome {
    dwarfcheck_fast::cfi::frame_table(&case.section, case.fde_offset)
}

/// The reference interpreter (`dwarfcheck_reference`).
pub struct Reference;

/// The fast evaluator (`dwarfcheck_fast`).
pub struct Fast;

fn everything() -> Support {
    Support {
        editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu, Edition::Hetero2020, Edition::SpirvDebugInfo100],
        expr: true,
        cfi: true,
    }
}

impl Consumer for Reference {
    fn name(&self) -> &str {
        "reference"
    }
    fn version(&self) -> Option<String> {
        Some(format!("dwarfcheck {}", env!("CARGO_PKG_VERSION")))
    }
    fn supports(&self) -> Support {
        everything()
    }
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        reference_outcome(case).0
    }
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        reference_table(case)
    }
    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        Some(dwarfcheck_reference::unwind::unwind(&case.section, &*u.ctx, u.limit))
    }
}

impl Consumer for Fast {
    fn name(&self) -> &str {
        "fast"
    }
    fn version(&self) -> Option<String> {
        Some(format!("dwarfcheck {}", env!("CARGO_PKG_VERSION")))
    }
    fn supports(&self) -> Support {
        everything()
    }
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        fast_outcome(case)
    }
    /// `None` for a case whose context gives CFI: fast evaluates it in the
    /// state unwound from that CFI ([`fast_outcome`]).
    fn evaluate_in(&self, case: &ExprCase, state: &dyn MachineState) -> Option<Outcome> {
        case.ctx.cfi.is_none().then(|| fast_outcome_in(case, state))
    }
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        fast_table(case)
    }
    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        Some(dwarfcheck_fast::unwind::unwind(&case.section, &*u.ctx, u.limit))
    }
}
