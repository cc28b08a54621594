//! Outcomes: the comparison currency between evaluators (docs/architecture.md §4).
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

/// Which explicit budget an evaluation ran out of (docs/architecture.md §9).
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
    /// Storage created by one evaluation in total (`expr.budget.memory`).
    Memory,
    /// Composite parts visited by one evaluation in total (`expr.budget.work`).
    Work,
}

/// Why an evaluation gave no value, location or row table: the failure
/// half of [`Outcome`] and [`CfiOutcome`], one type for both.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "kind"))]
pub enum Failure {
    /// The input is ill-formed: the spec leaves the result undefined.
    IllFormed {
        /// The rule the input breaks.
        rule: RuleId,
        /// Byte offset of the offending operation in the expression, or
        /// of the instruction or header in the frame section.
        at: Option<u64>,
    },
    /// Evaluation hit an evaluation error.
    EvalError {
        /// The rule that makes it an error (or, for kind `unspecified`,
        /// the project's documented choice).
        rule: RuleId,
        /// Byte offset of the operation (or instruction) that failed.
        at: Option<u64>,
    },
    /// An explicit budget was exhausted (not a spec outcome).
    Budget {
        /// Which budget.
        budget: BudgetKind,
        /// Byte offset of the operation (or instruction) that exceeded it.
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

impl Failure {
    /// A short label of the failure's kind: `ill-formed`, `eval-error`,
    /// `budget`, `unsupported`, `consumer-fault`.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::IllFormed { .. } => "ill-formed",
            Failure::EvalError { .. } => "eval-error",
            Failure::Budget { .. } => "budget",
            Failure::Unsupported { .. } => "unsupported",
            Failure::ConsumerFault { .. } => "consumer-fault",
        }
    }

    /// The rule ID carried by an ill-formed or evaluation-error failure.
    pub fn rule(&self) -> Option<&RuleId> {
        match self {
            Failure::IllFormed { rule, .. } | Failure::EvalError { rule, .. } => Some(rule),
            _ => None,
        }
    }

    /// The byte offset the failure is reported at, if any.
    pub fn at(&self) -> Option<u64> {
        match self {
            Failure::IllFormed { at, .. } | Failure::EvalError { at, .. } | Failure::Budget { at, .. } => *at,
            Failure::Unsupported { .. } | Failure::ConsumerFault { .. } => None,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = |a: &Option<u64>| a.map(|a| format!(" at byte {a}")).unwrap_or_default();
        match self {
            Failure::IllFormed { rule, at: a } => write!(f, "ill-formed [{rule}]{}", at(a)),
            Failure::EvalError { rule, at: a } => write!(f, "evaluation error [{rule}]{}", at(a)),
            Failure::Budget { budget, at: a } => write!(f, "budget exceeded: {budget:?}{}", at(a)),
            Failure::Unsupported { what } => write!(f, "unsupported: {what}"),
            Failure::ConsumerFault { what } => write!(f, "consumer fault: {what}"),
        }
    }
}

/// The result of evaluating one DWARF expression.
///
/// Serialized with a `kind` tag: `value`, `location`, or the failure's own
/// kind (the failure's fields sit beside the tag).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "kind"))]
pub enum Outcome {
    /// The expression produced a value.
    Value(Value),
    /// The expression produced a location description.
    Location(NormalLocation),
    /// The evaluation failed.
    #[cfg_attr(feature = "serde", serde(untagged))]
    Failed(Failure),
}

impl Outcome {
    /// A short label of the outcome's kind: `value`, `location`, or the
    /// failure's ([`Failure::kind`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Value(_) => "value",
            Outcome::Location(_) => "location",
            Outcome::Failed(f) => f.kind(),
        }
    }

    /// The rule ID carried by an ill-formed or evaluation-error outcome.
    pub fn rule(&self) -> Option<&RuleId> {
        match self {
            Outcome::Failed(f) => f.rule(),
            _ => None,
        }
    }
}

impl From<Failure> for Outcome {
    fn from(f: Failure) -> Self {
        Outcome::Failed(f)
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Value(v) => write!(f, "value {v}"),
            Outcome::Location(l) => write!(f, "location {l}"),
            Outcome::Failed(x) => x.fmt(f),
        }
    }
}
