//! Testing a consumer in-process from its own `cargo test`: run the
//! bundled conformance suite through a Rust consumer and get the verdicts
//! `dwarfcheck run` would give, with a readable failure report.
//!
//! A consumer implements [`ExprConsumer`] (expressions), [`CfiConsumer`]
//! (row tables) or the full [`Consumer`] trait, and one call judges it:
//! [`check_expressions`], [`check_cfi`] or [`check`]. The cases are the
//! bundled `specs/cases` suite, embedded in the library when it is built
//! (so this works from a crates.io dependency), or case files on disk
//! ([`Source::Paths`]); [`Selection`] narrows them by file, name and rule.
//! Each answer is judged against the reference interpreter by the
//! runner's comparison policy ([`crate::runner::compare`],
//! docs/architecture.md §8): the same verdicts as `dwarfcheck run`.
//! The [`Report`] lists every case's verdict with both answers; its
//! [`Report::assert_conforms`] and [`Report::assert_no_disagreements`]
//! panic with the failure report, and [`Allow`] lists known failures.
//!
//! # Example
//!
//! A consumer that only knows `DW_OP_lit0`..`DW_OP_lit31` on its own, and
//! says "unsupported" to everything else:
//!
//! ```
//! use dwarfcheck::conformance::{self, ExprCase, ExprConsumer, Options, Verdict};
//! use dwarfcheck::conformance::core::context::MachineState;
//! use dwarfcheck::conformance::core::outcome::{Failure, Outcome, Value};
//!
//! struct Literals;
//!
//! impl ExprConsumer for Literals {
//!     fn name(&self) -> &str {
//!         "literals"
//!     }
//!     fn evaluate(&self, case: &ExprCase) -> Outcome {
//!         let plain = case.attribute.is_none() && case.form.is_none() && case.spirv.is_none();
//!         match &case.expr[..] {
//!             [op @ 0x30..=0x4f] if plain && case.ctx.initial_stack().is_empty() => {
//!                 Outcome::Value(Value::from_u128(case.ctx.generic_type(), u128::from(op - 0x30)))
//!             }
//!             _ => Outcome::Failed(Failure::Unsupported { what: "anything but a literal".into() }),
//!         }
//!     }
//! }
//!
//! let report = conformance::check_expressions(&Literals, &Options::default());
//! report.assert_no_disagreements();
//! assert!(report.count(Verdict::Agree) > 0, "{report}");
//! ```

mod adapt;
pub mod report;
pub mod suite;

pub use crate::case::{Case, CfiCase, ExprCase};
pub use crate::consumer::Consumer;
pub use crate::edition::Edition;
pub use crate::runner::compare::Verdict;
pub use adapt::{CfiConsumer, ExprConsumer};
/// The types a consumer answers with: outcomes, values, locations, row
/// tables (`core::outcome`), and the machine state a case gives
/// (`core::context`).
pub use dwarfcheck_core as core;
pub use report::{Allow, CaseVerdict, Report};
pub use suite::{Selection, Source};

use crate::consumer::builtin::{reference_outcome, reference_table, Fast, Reference};
use crate::consumer::Answer;
use crate::runner::{self, Answered, Finding};

/// What to run and what to forgive.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Where the cases come from (default: the bundled suite).
    pub source: Source,
    /// Which of them to run (default: all).
    pub selection: Selection,
    /// Known failures that do not fail the `assert_*` methods.
    pub allow: Allow,
}

/// Judges an expression consumer on the selected expression cases.
pub fn check_expressions<C: ExprConsumer + ?Sized>(consumer: &C, opts: &Options) -> Report {
    judge(&adapt::ExprAdapter(consumer), opts)
}

/// Judges a row-table consumer on the selected CFI cases.
pub fn check_cfi<C: CfiConsumer + ?Sized>(consumer: &C, opts: &Options) -> Report {
    judge(&adapt::CfiAdapter(consumer), opts)
}

/// Judges a full consumer on the selected cases of the kinds it supports
/// ([`Consumer::supports`]), on unwinding too where it unwinds
/// ([`Consumer::unwind`]), through its views as `dwarfcheck run` does.
pub fn check(consumer: &dyn Consumer, opts: &Options) -> Report {
    judge(consumer, opts)
}

/// Runs the selected cases of the kinds `consumer` supports through the
/// runner, with the reference and the fast evaluator, and reports the
/// consumer's verdicts.
fn judge(consumer: &dyn Consumer, opts: &Options) -> Report {
    let support = consumer.supports();
    let (mut cases, load_errors) = suite::load(&opts.source, &opts.selection);
    cases.retain(|c| match c {
        Case::Expr(_) => support.expr,
        Case::Cfi(_) => support.cfi,
    });
    let answers = adapt::Answers::default();
    let others: Vec<Box<dyn Consumer + '_>> = vec![Box::new(adapt::Recorded { inner: consumer, answers: &answers })];
    let run_opts = runner::Options::default();
    let (summary, records) = runner::run_recorded(&cases, &Reference, &Fast, &others, &run_opts);
    let verdicts = cases
        .iter()
        .zip(&records)
        .map(|(case, rec)| {
            let verdict = rec.verdicts.get(1).copied().unwrap_or(Verdict::OutsideEdition);
            let (text, answer) = answers.get(case).unzip();
            let failed = matches!(verdict, Verdict::Disagree | Verdict::Fault);
            let (reference, class) = match (case, answer.flatten()) {
                (Case::Expr(c), a) => {
                    let r = reference_outcome(c).0;
                    let class = match a {
                        Some(Answered::Expr(a)) if failed => {
                            consumer.failure_class(case, Answer::Expr(&r), Answer::Expr(&a))
                        }
                        _ => None,
                    };
                    (r.to_string(), class)
                }
                (Case::Cfi(c), a) => {
                    let r = reference_table(c);
                    let class = match a {
                        Some(Answered::Cfi(a)) if failed => {
                            consumer.failure_class(case, Answer::Cfi(&r), Answer::Cfi(&a))
                        }
                        _ => None,
                    };
                    (runner::report::cfi_text(&r), class)
                }
            };
            let mut rules = case.rules().to_vec();
            rules.extend(rec.reference_rule.iter().filter(|r| !case.rules().contains(r)).cloned());
            let origin = case.origin().to_string();
            CaseVerdict {
                file: origin.rsplit_once(':').map_or(origin.as_str(), |(f, _)| f).to_string(),
                origin,
                case: case.name().to_string(),
                rules,
                verdict,
                reference,
                consumer: text,
                class,
                allowed: false,
            }
        })
        .collect();
    let details = summary
        .failures
        .into_iter()
        .filter(|l| matches!(l.finding, Finding::Consumer { .. } | Finding::ConsumerFault { .. }))
        .collect();
    Report::new(consumer.name().to_string(), verdicts, &opts.allow, load_errors, details)
}
