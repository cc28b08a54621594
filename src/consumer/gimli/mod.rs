//! The gimli adapter: gimli 0.34's expression evaluator and unwind tables
//! judged against the reference (docs/architecture.md §7, docs/consumers.md).
//!
//! Everything gimli does runs behind [`std::panic::catch_unwind`]; a panic
//! becomes `ConsumerFault`. gimli's own errors become `IllFormed` or
//! `EvalError` with a third-party rule ID `gimli:<ErrorVariant>` (only the
//! kind is compared for third-party consumers, docs/architecture.md §8); what gimli cannot
//! do at all becomes `Unsupported`.

mod attr;
mod cfi;
pub mod classes;
mod expr;
mod frames;

use crate::case::{Case, CfiCase, ExprCase};
use crate::consumer::{Answer, Consumer, FailureClass, Support};
use crate::edition::Edition;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use dwarfcheck_core::rules::RuleId;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use cfi::frame_table;
pub use expr::evaluate;

/// gimli 0.34, in process. Judged on DWARF 5 and DWARF 5 + GNU input, for
/// both expressions and CFI.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gimli;

impl Consumer for Gimli {
    fn name(&self) -> &str {
        "gimli"
    }

    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu], expr: true, cfi: true }
    }

    fn evaluate(&self, case: &ExprCase) -> Outcome {
        // A context that leaves the CFA or the calling frames to unwinding
        // (`unwind.context-from-cfi`): this adapter does not unwind, so it
        // cannot give gimli what gimli would ask for.
        if case.ctx.cfi.is_some() && (case.ctx.cfa.is_none() || case.ctx.caller.is_none()) {
            return Outcome::Failed(Failure::Unsupported {
                what: "CFA and calling frames only by unwinding (context.cfi)".into(),
            });
        }
        // gimli has no address spaces: a CFA outside the default space is
        // compared only where the input stays in space 0 (never, here).
        let mut frames = std::iter::successors(case.ctx.caller.as_deref(), |f| f.caller.as_deref());
        if case.ctx.cfa_aspace != 0 || frames.any(|f| f.cfa_aspace != 0) {
            return Outcome::Failed(Failure::Unsupported { what: "a CFA in a non-default address space".into() });
        }
        let run = || {
            if case.attribute.is_some() || case.form.is_some() {
                attr::evaluate_case(case)
            } else {
                expr::evaluate(&case.expr, &case.ctx)
            }
        };
        match catch_unwind(AssertUnwindSafe(run)) {
            Ok(o) => o,
            Err(p) => Outcome::Failed(Failure::ConsumerFault { what: format!("gimli panicked: {}", panic_text(&p)) }),
        }
    }

    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        match catch_unwind(AssertUnwindSafe(|| cfi::frame_table(case))) {
            Ok(o) => o,
            Err(p) => {
                CfiOutcome::Failed(Failure::ConsumerFault { what: format!("gimli panicked: {}", panic_text(&p)) })
            }
        }
    }

    /// The classes of docs/consumers.md "Disagreements": expression
    /// classes by [`classes::known_class`], and G2 for an FDE whose CIE
    /// encodes the initial location `DW_EH_PE_indirect` (0x80).
    fn failure_class(&self, case: &Case, reference: Answer<'_>, answer: Answer<'_>) -> Option<FailureClass> {
        let id = match (case, reference, answer) {
            (Case::Expr(c), Answer::Expr(r), Answer::Expr(g)) => classes::known_class(c, r, g)?,
            (Case::Cfi(c), Answer::Cfi(_), Answer::Cfi(CfiOutcome::Table(_))) => {
                if crate::consumer::fde_cie(&c.section, c.fde_offset)?.fde_encoding & 0x80 == 0 {
                    return None;
                }
                "G2"
            }
            _ => return None,
        };
        let explanation = classes::explanation(id)?;
        Some(FailureClass {
            id: id.to_string(),
            explanation: explanation.to_string(),
            docs: Some("docs/consumers.md#disagreements".to_string()),
            report: None,
        })
    }

    /// The gimli crate version this build links (from Cargo.lock).
    fn version(&self) -> Option<String> {
        crate_version(include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")), "gimli")
            .map(|v| format!("gimli {v} (crate)"))
    }
}

/// The version of package `name` in the text of a `Cargo.lock` that
/// dwarfcheck links: the version its own dependency list names
/// (`"gimli 0.34.0"`, written when several versions are locked, e.g. one
/// for framehop), else the `version = "..."` line after the only
/// `name = "..."` line.
fn crate_version(lock: &str, name: &str) -> Option<String> {
    let own = lock.split("[[package]]").find(|p| p.lines().any(|l| l.trim() == "name = \"dwarfcheck\""));
    let prefix = format!("\"{name} ");
    if let Some(v) = own.and_then(|p| p.lines().map(str::trim).find_map(|l| l.strip_prefix(&prefix))) {
        return v.trim_end_matches([',', '"']).split_whitespace().next().map(str::to_string);
    }
    let wanted = format!("name = \"{name}\"");
    let mut lines = lock.lines().skip_while(|l| l.trim() != wanted);
    lines.next()?;
    let v = lines.next()?.trim().strip_prefix("version = \"")?.strip_suffix('"')?;
    Some(v.to_string())
}

/// The message of a caught panic payload.
fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// How a gimli error is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    /// The input breaks a rule of the format.
    IllFormed,
    /// Well-formed input whose evaluation failed.
    EvalError,
    /// gimli does not implement what the input uses.
    Unsupported,
}

/// The third-party rule ID of a gimli error: `gimli:<ErrorVariant>`.
fn rule_of(e: &gimli::Error) -> RuleId {
    let dbg = format!("{e:?}");
    let name = dbg.split(['(', ' ', '{']).next().unwrap_or("Error");
    RuleId::new(format!("gimli:{name}"))
}

/// Judges a gimli error by its meaning (see docs/consumers.md for the table).
fn kind_of(e: &gimli::Error) -> ErrorKind {
    use gimli::Error as E;
    match e {
        // Decoding and structure of the input.
        E::UnexpectedEof(_)
        | E::BadUnsignedLeb128
        | E::BadSignedLeb128
        | E::InvalidExpression(_)
        | E::BadBranchTarget(_)
        | E::InvalidPiece
        | E::InvalidExpressionTerminator(_)
        | E::InvalidDerefSize(_)
        | E::InvalidPieceSize(_)
        | E::NotEnoughStackItems
        | E::TypeMismatch
        | E::IntegralTypeRequired
        | E::UnsupportedTypeOperation
        | E::UnknownCallFrameInstruction(_)
        | E::InvalidCfiSetLoc(_)
        | E::CfiInstructionInInvalidContext
        | E::PopWithEmptyStack
        | E::NotCieId(_)
        | E::NotCiePointer(_)
        | E::NoEntryAtGivenOffset(_)
        | E::OffsetOutOfBounds(_)
        | E::UnknownPointerEncoding(_)
        | E::UnknownVersion(_)
        | E::UnknownReservedLength(_)
        | E::CannotParseOmitPointerEncoding
        | E::AddressOverflow
        | E::FuncRelativePointerInBadContext => ErrorKind::IllFormed,
        // Things gimli does not implement.
        E::UnsupportedEvaluation
        | E::UnknownAugmentation
        | E::TooManyRegisterRules
        | E::StackFull
        | E::UnsupportedAddressSize(_)
        | E::UnsupportedOffsetSize(_)
        | E::UnsupportedPointerEncoding(_)
        | E::UnsupportedIndirectPointer
        | E::UnsupportedRegister(_)
        | E::UnsupportedSegmentSize(_)
        | E::UnsupportedOffset => ErrorKind::Unsupported,
        // Everything else happens while evaluating well-formed input:
        // division by zero, bad shifts, missing section bases...
        _ => ErrorKind::EvalError,
    }
}

/// What gimli's limit-type errors mean, for `Unsupported { what }`.
fn unsupported_text(e: &gimli::Error) -> String {
    use gimli::Error as E;
    match e {
        E::TooManyRegisterRules => "gimli UnwindContext holds at most 192 register rules".into(),
        E::StackFull => "gimli limit: remember_state stack (4 deep) or a fixed-size stack is full".into(),
        E::UnknownAugmentation => "gimli accepts only the augmentation letters z, L, P, R and S".into(),
        E::UnsupportedEvaluation => {
            "gimli does not evaluate this operation (DW_OP_GNU_uninit or DW_OP_GNU_variable_value)".into()
        }
        other => format!("gimli: {other}"),
    }
}

#[cfg(test)]
mod tests;
