//! Outcomes: the comparison currency between evaluators (DESIGN §4).
//!
//! Every consumer (reference, fast, gimli, external tools) reports an
//! [`Outcome`] for an expression and a [`CfiOutcome`] for a CFI program.
//! Locations are compared in their canonical [`NormalLocation`] form.

pub mod cfi;
pub mod location;
pub mod unwind;
pub mod value;

pub use cfi::{CfaRule, CfiOutcome, RegisterRule, Row, RowTable};
pub use location::{NormalLocation, Piece, RawLocation, RawPiece, RawSingle, SingleLocation, Source};
pub use value::{BaseType, TypeEncoding, Value};

use crate::rules::RuleId;

/// Which explicit budget an evaluation ran out of (DESIGN §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum BudgetKind {
    /// Operations executed (guards `DW_OP_skip`/`DW_OP_bra` loops).
    Steps,
    /// Nesting of `DW_OP_call*`, `DW_OP_entry_value`, frame-base and
    /// implicit-pointer evaluations.
    Depth,
    /// Bytes held by one value, implicit storage or composite.
    Size,
    /// Entries on the evaluation stack.
    Stack,
    /// Wall-clock time of an external consumer.
    Time,
    /// Frames of one virtual unwinding (`unwind.frames-budget`).
    Frames,
}

/// The result of evaluating one DWARF expression.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "kind"))]
pub enum Outcome {
    /// The expression produced a value.
    Value(Value),
    /// The expression produced a location description.
    Location(NormalLocation),
    /// The expression is ill-formed: the spec leaves the result undefined.
    IllFormed {
        /// The rule the input breaks.
        rule: RuleId,
        /// Byte offset of the offending operation in the expression.
        at: Option<u64>,
    },
    /// Evaluation hit an evaluation error.
    EvalError {
        /// The rule that makes it an error (or, for kind `unspecified`,
        /// the project's documented choice).
        rule: RuleId,
        /// Byte offset of the operation that failed.
        at: Option<u64>,
    },
    /// An explicit budget was exhausted (not a spec outcome).
    Budget {
        /// Which budget.
        budget: BudgetKind,
        /// Byte offset of the operation that exceeded it.
        at: Option<u64>,
    },
    /// The consumer does not implement something the input uses.
    Unsupported {
        /// What is missing, in the consumer's words.
        what: String,
    },
    /// The consumer crashed, hung, or broke its protocol.
    ConsumerFault {
        /// What went wrong.
        what: String,
    },
}

impl Outcome {
    /// A short label of the outcome's kind: `value`, `location`,
    /// `ill-formed`, `eval-error`, `budget`, `unsupported`, `consumer-fault`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Value(_) => "value",
            Outcome::Location(_) => "location",
            Outcome::IllFormed { .. } => "ill-formed",
            Outcome::EvalError { .. } => "eval-error",
            Outcome::Budget { .. } => "budget",
            Outcome::Unsupported { .. } => "unsupported",
            Outcome::ConsumerFault { .. } => "consumer-fault",
        }
    }

    /// The rule ID carried by an ill-formed or evaluation-error outcome.
    pub fn rule(&self) -> Option<&RuleId> {
        match self {
            Outcome::IllFormed { rule, .. } | Outcome::EvalError { rule, .. } => Some(rule),
            _ => None,
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = |a: &Option<u64>| a.map(|a| format!(" at byte {a}")).unwrap_or_default();
        match self {
            Outcome::Value(v) => write!(f, "value {v}"),
            Outcome::Location(l) => write!(f, "location {l}"),
            Outcome::IllFormed { rule, at: a } => write!(f, "ill-formed [{rule}]{}", at(a)),
            Outcome::EvalError { rule, at: a } => write!(f, "evaluation error [{rule}]{}", at(a)),
            Outcome::Budget { budget, at: a } => write!(f, "budget exceeded: {budget:?}{}", at(a)),
            Outcome::Unsupported { what } => write!(f, "unsupported: {what}"),
            Outcome::ConsumerFault { what } => write!(f, "consumer fault: {what}"),
        }
    }
}
