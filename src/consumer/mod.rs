//! Consumers: everything that can evaluate an expression or build a row
//! table, judged against the reference (DESIGN §7).

use crate::case::{CfiCase, ExprCase};
use crate::edition::Edition;
use crate::outcome::{CfiOutcome, Outcome, RowTable};

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

/// A DWARF consumer under test (or the reference itself).
pub trait Consumer: Send + Sync {
    /// Short stable name used in reports and `--gate`.
    fn name(&self) -> &str;
    /// What it can be judged on.
    fn supports(&self) -> Support;
    /// Evaluates one expression case.
    fn evaluate(&self, case: &ExprCase) -> Outcome;
    /// Builds the row table of one FDE.
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome;
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
    fn unwind(&self, _case: &CfiCase, _unwind: &crate::case::UnwindCase) -> Option<crate::outcome::unwind::Unwind> {
        None
    }
}

pub mod builtin;
pub mod external;
pub mod gimli;
pub mod protocol;
