//! The small consumer traits ([`ExprConsumer`], [`CfiConsumer`]), their
//! adapters to the full [`Consumer`] trait the runner judges, and
//! [`Recorded`], which keeps each answer a consumer gives for the report.

use crate::case::{Case, CfiCase, ExprCase, UnwindCase};
use crate::consumer::{health::HealthReport, Answer, Consumer, FailureClass, Support};
use crate::edition::Edition;
use crate::runner::Answered;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::unwind::Unwind;
use dwarfcheck_core::outcome::{CfiOutcome, Failure, Outcome, RowTable};
use std::collections::HashMap;
use std::sync::Mutex;

/// A consumer that evaluates DWARF expressions: the smallest thing
/// [`super::check_expressions`] can judge.
///
/// A case it does not handle is answered with
/// `Outcome::Failed(Failure::Unsupported { what })` (verdict
/// `unsupported`, never a failure); input outside [`ExprConsumer::editions`]
/// is not asked at all (verdict `outside-edition`).
pub trait ExprConsumer: Send + Sync {
    /// Short name for the report (default `consumer-under-test`).
    fn name(&self) -> &str {
        "consumer-under-test"
    }
    /// The editions of input it implements (default: plain DWARF 5).
    fn editions(&self) -> Vec<Edition> {
        vec![Edition::Dwarf5]
    }
    /// Evaluates one expression case: `case.expr` (bytes) in the context
    /// `case.ctx` (registers, memory, target; it implements
    /// [`MachineState`]), as the attribute `case.attribute` when there is
    /// one. Must not panic: a panic fails the calling test.
    fn evaluate(&self, case: &ExprCase) -> Outcome;
}

/// A consumer that builds CFI row tables: the smallest thing
/// [`super::check_cfi`] can judge. Unsupported input and editions as for
/// [`ExprConsumer`].
pub trait CfiConsumer: Send + Sync {
    /// Short name for the report (default `consumer-under-test`).
    fn name(&self) -> &str {
        "consumer-under-test"
    }
    /// The editions of input it implements (default: plain DWARF 5).
    fn editions(&self) -> Vec<Edition> {
        vec![Edition::Dwarf5]
    }
    /// The row table of the FDE at `case.fde_offset` of `case.section`.
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome;
}

/// The answer for a kind of case an adapter's consumer does not build.
fn not_this_kind(what: &str) -> Failure {
    Failure::Unsupported { what: format!("{what} (not a kind of case this consumer is checked on)") }
}

/// An [`ExprConsumer`] as a [`Consumer`] of expressions only.
pub(super) struct ExprAdapter<'a, C: ?Sized>(pub &'a C);

impl<C: ExprConsumer + ?Sized> Consumer for ExprAdapter<'_, C> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn supports(&self) -> Support {
        Support { editions: self.0.editions(), expr: true, cfi: false }
    }
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        self.0.evaluate(case)
    }
    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(not_this_kind("row tables"))
    }
}

/// A [`CfiConsumer`] as a [`Consumer`] of row tables only.
pub(super) struct CfiAdapter<'a, C: ?Sized>(pub &'a C);

impl<C: CfiConsumer + ?Sized> Consumer for CfiAdapter<'_, C> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn supports(&self) -> Support {
        Support { editions: self.0.editions(), expr: false, cfi: true }
    }
    fn evaluate(&self, _case: &ExprCase) -> Outcome {
        Outcome::Failed(not_this_kind("expressions"))
    }
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        self.0.frame_table(case)
    }
}

/// What tells one case of a run from another: its address in the run's
/// case list.
fn key<T>(case: &T) -> usize {
    std::ptr::from_ref(case) as usize
}

/// Each answer a [`Recorded`] consumer gave, by case: its text
/// (expression outcome, row table, unwinding) and, but for an unwinding,
/// the answer itself.
#[derive(Default)]
pub(super) struct Answers(Mutex<HashMap<usize, (String, Option<Answered>)>>);

impl Answers {
    fn keep<T>(&self, case: &T, text: String, answer: Option<Answered>) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(key(case), (text, answer));
        }
    }

    /// The text and the answer recorded for `case` (one of the run's
    /// cases), if the consumer was asked.
    pub fn get(&self, case: &Case) -> Option<(String, Option<Answered>)> {
        let k = match case {
            Case::Expr(c) => key(c),
            Case::Cfi(c) => key(c),
        };
        self.0.lock().ok()?.get(&k).cloned()
    }
}

/// Any consumer, forwarded unchanged, keeping the text of each answer it
/// gives in [`Answers`], so that the report shows every case's answer
/// without asking the consumer twice.
pub(super) struct Recorded<'a> {
    /// The consumer under test.
    pub inner: &'a dyn Consumer,
    /// Where its answers go.
    pub answers: &'a Answers,
}

impl Recorded<'_> {
    fn expr(&self, case: &ExprCase, o: &Outcome) {
        self.answers.keep(case, o.to_string(), Some(Answered::Expr(o.clone())));
    }

    fn cfi(&self, case: &CfiCase, o: &CfiOutcome) {
        self.answers.keep(case, crate::runner::report::cfi_text(o), Some(Answered::Cfi(o.clone())));
    }
}

impl Consumer for Recorded<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn supports(&self) -> Support {
        self.inner.supports()
    }
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        let o = self.inner.evaluate(case);
        self.expr(case, &o);
        o
    }
    fn evaluate_in(&self, case: &ExprCase, state: &dyn MachineState) -> Option<Outcome> {
        let o = self.inner.evaluate_in(case, state)?;
        self.expr(case, &o);
        Some(o)
    }
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        let o = self.inner.frame_table(case);
        self.cfi(case, &o);
        o
    }
    fn try_evaluate(&self, case: &ExprCase) -> Option<Outcome> {
        let o = self.inner.try_evaluate(case)?;
        self.expr(case, &o);
        Some(o)
    }
    fn try_frame_table(&self, case: &CfiCase) -> Option<CfiOutcome> {
        let o = self.inner.try_frame_table(case)?;
        self.cfi(case, &o);
        Some(o)
    }
    fn health(&self) -> Option<HealthReport> {
        self.inner.health()
    }
    fn cfi_view(&self, case: &CfiCase, table: &RowTable) -> Option<RowTable> {
        self.inner.cfi_view(case, table)
    }
    fn unwind(&self, case: &CfiCase, unwind: &UnwindCase) -> Option<Unwind> {
        let w = self.inner.unwind(case, unwind)?;
        self.answers.keep(case, format!("unwinding:\n{w}"), None);
        Some(w)
    }
    fn unwind_view(&self, case: &CfiCase, reference: &Unwind) -> Option<Unwind> {
        self.inner.unwind_view(case, reference)
    }
    fn prepare(&self, cases: &[Case]) {
        self.inner.prepare(cases)
    }
    fn expr_view(&self, case: &ExprCase, outcome: &Outcome) -> Option<Outcome> {
        self.inner.expr_view(case, outcome)
    }
    fn failure_class(&self, case: &Case, reference: Answer<'_>, answer: Answer<'_>) -> Option<FailureClass> {
        self.inner.failure_class(case, reference, answer)
    }
    fn version(&self) -> Option<String> {
        self.inner.version()
    }
}
