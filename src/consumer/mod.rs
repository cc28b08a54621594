//! Consumers: everything that can evaluate an expression or build a row
//! table, judged against the reference (docs/architecture.md §7).

use crate::case::{Case, CfiCase, ExprCase};
use crate::edition::Edition;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome, RowTable};

/// What a consumer can be judged on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// Editions of input it implements; other input is skipped.
    pub editions: Vec<Edition>,
    /// Whether it evaluates expressions.
    pub expr: bool,
    /// Whether it builds CFI row tables.
    pub cfi: bool,
}

/// One consumer's answer to a case, expression or CFI, for
/// [`Consumer::failure_class`].
#[derive(Debug, Clone, Copy)]
pub enum Answer<'a> {
    /// An expression case's outcome.
    Expr(&'a Outcome),
    /// A CFI case's outcome (row table or error).
    Cfi(&'a CfiOutcome),
}

/// A known class of disagreement between a consumer and the reference:
/// why the consumer answers otherwise, so that reports (`dwarfcheck
/// matrix`) can group failures and say which are understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureClass {
    /// Stable short ID within the consumer (`G1`, `X3`, ...).
    pub id: String,
    /// One line: what the consumer does differently.
    pub explanation: String,
    /// Where the project documents the class (a path from the repository
    /// root, with an anchor), if anywhere.
    pub docs: Option<String>,
    /// A known public report of the behaviour (an issue URL), if one
    /// was found. Reports may also come from `matrix::reports`.
    pub report: Option<String>,
}

/// A DWARF consumer under test (or the reference itself).
pub trait Consumer: Send + Sync {
    /// Short stable name used in reports and `--gate`.
    fn name(&self) -> &str;
    /// What it can be judged on.
    fn supports(&self) -> Support;
    /// Evaluates one expression case.
    fn evaluate(&self, case: &ExprCase) -> Outcome;
    /// [`Consumer::evaluate`] with `state` standing for the case's context
    /// (which gives no CFI): a state that answers as that context does,
    /// watching which questions are asked. `None` (the default): this
    /// consumer cannot evaluate in a given state (it runs another
    /// program, or reads the context itself).
    fn evaluate_in(&self, case: &ExprCase, state: &dyn dwarfcheck_core::context::MachineState) -> Option<Outcome> {
        let _ = (case, state);
        None
    }
    /// Builds the row table of one FDE.
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome;
    /// [`Consumer::evaluate`], unless this consumer has been declared down
    /// (too many faults in a row, [`health`]): then `None`, without asking
    /// it; the runner's verdict is `consumer-down`. The default always
    /// asks.
    fn try_evaluate(&self, case: &ExprCase) -> Option<Outcome> {
        Some(self.evaluate(case))
    }
    /// [`Consumer::frame_table`] as [`Consumer::try_evaluate`] is
    /// [`Consumer::evaluate`].
    fn try_frame_table(&self, case: &CfiCase) -> Option<CfiOutcome> {
        Some(self.frame_table(case))
    }
    /// For a consumer that runs other programs: its faults, whether and
    /// why it was declared down, and what it wrote to stderr. `None` (the
    /// default): not tracked.
    fn health(&self) -> Option<health::HealthReport> {
        None
    }
    /// What this consumer can show of the reference's `table` for `case`,
    /// when that is less than the whole normal form (readelf prints no
    /// expression bodies, ...): the runner compares the consumer's table
    /// with this view. `None` (the default): the whole table.
    fn cfi_view(&self, _case: &CfiCase, _table: &RowTable) -> Option<RowTable> {
        None
    }
    /// Virtually unwinds through `case.section` from `unwind.ctx`
    /// (`unwind.*` rules). `None` (the default): this consumer does not
    /// unwind, and is not judged on unwinding.
    fn unwind(
        &self,
        _case: &CfiCase,
        _unwind: &crate::case::UnwindCase,
    ) -> Option<dwarfcheck_core::outcome::unwind::Unwind> {
        None
    }
    /// What this consumer can show of the reference's unwinding
    /// `reference` (an unwinder that keeps only some registers): the runner
    /// judges the consumer's [`Consumer::unwind`] against this view, on the
    /// registers the view lists. `None` (the default): the whole unwinding.
    fn unwind_view(
        &self,
        _case: &CfiCase,
        _reference: &dwarfcheck_core::outcome::unwind::Unwind,
    ) -> Option<dwarfcheck_core::outcome::unwind::Unwind> {
        None
    }
    /// Called once with every case of a run before any `evaluate` or
    /// `frame_table`, so that a consumer with a costly start-up (a
    /// debugger process) can evaluate them in batches and answer from its
    /// cache. The default does nothing.
    fn prepare(&self, _cases: &[crate::case::Case]) {}
    /// What this consumer can show of the reference's `outcome` for
    /// `case`, when that is not the outcome itself (a debugger shows the
    /// bytes of a variable, not a location description): the runner judges
    /// the consumer's answer against this view. `None` (the default): the
    /// outcome itself.
    fn expr_view(&self, _case: &ExprCase, _outcome: &Outcome) -> Option<Outcome> {
        None
    }
    /// The known class of a disagreement: `reference` is the reference's
    /// answer to `case` (for CFI, the whole table, not the
    /// [`Consumer::cfi_view`]), `answer` this consumer's, judged
    /// `Disagree` by the runner. `None` (the default): no known class
    /// (reports list the failure as unclassified).
    fn failure_class(&self, _case: &Case, _reference: Answer<'_>, _answer: Answer<'_>) -> Option<FailureClass> {
        None
    }
    /// The consumer's version as one line (crate version, a tool's
    /// `--version` first line), for reports. `None` (the default): unknown.
    fn version(&self) -> Option<String> {
        None
    }
}

/// The CIE of the FDE at `fde_offset` of `section`, read without decoding
/// the FDE itself (whose pointers may not decode): for
/// [`Consumer::failure_class`] signatures.
pub(crate) fn fde_cie(
    section: &dwarfcheck_core::cfi::CfiSection,
    fde_offset: u64,
) -> Option<dwarfcheck_core::cfi::header::Cie> {
    match section.entry_at(fde_offset).ok()?.kind {
        dwarfcheck_core::cfi::header::EntryKind::Fde { cie_offset } => section.parse_cie(cie_offset).ok(),
        _ => None,
    }
}

pub mod builtin;
pub mod by_name;
pub mod contain;
pub mod debugger;
mod error;
pub mod external;
pub mod framehop;
pub mod gimli;
pub mod health;
pub mod libunwind;
pub mod protocol;
pub mod spirv;
pub mod stderr;
pub(crate) mod unwinding;

pub use error::ConsumerError;
