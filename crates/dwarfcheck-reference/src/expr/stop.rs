//! What an evaluation step reports besides its result: why an operation
//! stopped the evaluation ([`Stop`]) and one line of a traced evaluation
//! ([`TraceStep`]). A leaf module: it imports nothing from the evaluator.

use dwarfcheck_core::outcome::{BudgetKind, Failure};
use dwarfcheck_core::rules::RuleId;

/// Why an operation stopped the evaluation: an [`Outcome`] failure without
/// its byte offset (the caller knows which operation was running).
///
/// [`Outcome`]: dwarfcheck_core::outcome::Outcome
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The expression is ill-formed (rule).
    Ill(RuleId),
    /// Evaluation error (rule).
    Eval(RuleId),
    /// A budget ran out.
    Budget(BudgetKind),
    /// The reference does not implement this yet.
    Unsupported(String),
}

impl Stop {
    /// The stop that reports `failure` (its offset is dropped: it becomes
    /// the offset of the operation that met it). A consumer fault, which
    /// the reference never produces itself, is reported as unsupported.
    pub fn of_failure(failure: Failure) -> Stop {
        match failure {
            Failure::IllFormed { rule, .. } => Stop::Ill(rule),
            Failure::EvalError { rule, .. } => Stop::Eval(rule),
            Failure::Budget { budget, .. } => Stop::Budget(budget),
            Failure::Unsupported { what } | Failure::ConsumerFault { what } => Stop::Unsupported(what),
        }
    }
}

/// One step of a traced evaluation: the state after one operation of the
/// outermost expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceStep {
    /// Byte offset of the operation's opcode.
    pub at: u64,
    /// llvm-dwarfdump-like text of the operation, e.g. `DW_OP_breg7 +16`.
    pub op: String,
    /// The stack after the operation, bottom first (top last), each entry
    /// as text: values as `generic64:0x…`, locations in normal form.
    pub stack: Vec<String>,
}
