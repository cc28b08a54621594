//! Producer findings: each expression of real input that the reference
//! finds ill-formed, fails with an evaluation error, or cannot judge, kept
//! one by one with the reference's trace (`dwarfcheck elf --findings`).
//!
//! The runner keeps what the case itself knows (its origin, bytes and the
//! reference's answer); `crate::producers` adds what only the file knows
//! (the unit's `DW_AT_producer`, the DIE's name and pc range).

use crate::case::ExprCase;
use serde::Serialize;

/// The most findings one run keeps one by one ([`super::Summary::producer_findings`]);
/// the rest are only counted ([`super::Summary::producer_finding_count`]).
pub const MAX_KEPT: usize = 20_000;

/// One expression the reference rejects or cannot judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProducerFinding {
    /// Where the case came from: `FILE: DIE 0x2a DW_AT_location` or
    /// `FILE: DIE 0x2a DW_AT_location entry 3 [0x1000, 0x1010)`
    /// (`elf::dwarf`).
    pub origin: String,
    /// The case's name (`die0x2a.loc.3`).
    pub case: String,
    /// `ill-formed` (a fault of the producer), `eval-error` (depends on
    /// the synthetic machine state: not a fault of the producer by
    /// itself) or `unsupported` (the reference cannot judge it).
    pub kind: &'static str,
    /// The rule the reference cites (`unsupported`: empty).
    pub rule: String,
    /// Byte offset, within the expression, of the operation the rule
    /// applies to, when the reference knows it.
    pub at: Option<u64>,
    /// The expression's bytes, hexadecimal, space-separated.
    pub bytes: String,
    /// The expression's operations as text (llvm-dwarfdump's spelling).
    pub input: String,
    /// For `unsupported`: what the reference lacks, in its words.
    pub detail: String,
    /// The reference's trace: offset, operation, stack after it, one line
    /// per operation evaluated (through the failing one).
    pub trace: Vec<String>,
}

/// The finding for `c`, when the reference's outcome is ill-formed, an
/// evaluation error or unsupported; `None` otherwise. Re-evaluates `c`
/// with the traced reference: call it only for such cases (they are rare
/// in real input).
pub fn finding(c: &ExprCase, input: String) -> Option<ProducerFinding> {
    use dwarfcheck_core::outcome::{Failure, Outcome};
    let (outcome, _) = crate::consumer::builtin::reference_outcome(c);
    let Outcome::Failed(f) = &outcome else { return None };
    let detail = match f {
        Failure::IllFormed { .. } | Failure::EvalError { .. } => String::new(),
        Failure::Unsupported { what } => what.clone(),
        Failure::Budget { .. } | Failure::ConsumerFault { .. } => return None,
    };
    Some(ProducerFinding {
        origin: c.origin.clone(),
        case: c.name.clone(),
        kind: f.kind(),
        rule: f.rule().map(|r| r.to_string()).unwrap_or_default(),
        at: f.at(),
        bytes: dwarfcheck_core::encoding::hex::to_hex_spaced(&c.expr),
        input,
        detail,
        trace: trace_lines(c),
    })
}

/// The reference's trace of `c`'s expression, one line per operation
/// evaluated: offset, operation, the stack after it (top last).
pub fn trace_lines(c: &ExprCase) -> Vec<String> {
    let (_, trace) = crate::consumer::builtin::with_reference_state(&c.ctx, |state| {
        dwarfcheck_reference::expr::evaluate_traced(&c.expr, state)
    });
    trace.iter().map(|t| format!("{:#06x}  {:<40} [{}]", t.at, t.op, t.stack.join(", "))).collect()
}
