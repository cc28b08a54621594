//! The conformance matrix (`dwarfcheck matrix`): every case's verdict per
//! consumer folded into one cell per (rule, consumer), with the failures
//! listed and grouped by known class; [`render`] writes it as markdown.
//!
//! # Marks (one per case and consumer)
//!
//! - `reference`: `pass` where it meets the case's hand-derived `expect`,
//!   `fail` where it does not, `no oracle` for a case without one;
//! - `fast`: `pass` where its outcome is the reference's (rule IDs and
//!   offsets included) and it meets the `expect`, `fail` otherwise;
//! - a third party: the runner's [`Verdict`] (docs/architecture.md §8), or `n/a` for a
//!   kind of case (expression / CFI) its [`Support`] does not do.
//!
//! A `fail` of the reference or fast is a harness bug, not a finding.
//!
//! # Folding marks into a cell ([`fold`])
//!
//! Over the cases that exercise the rule and that the consumer does
//! (`n/a` marks left out; `n` of them), the cell takes the first label
//! that applies, and shows how many cases have it (`label k/n`, or
//! `label n` when all do):
//!
//! 1. `fail`: some case disagrees;
//! 2. `fault`: the consumer gave no answer to some case (it crashed, hung
//!    or broke its protocol);
//! 3. `accepted-ill-formed`: some case the reference calls ill-formed got
//!    an answer (recorded, not a failure: docs/architecture.md §8);
//! 4. `pass`: some case agrees, or is ill-formed and also rejected by the
//!    consumer (`ill-formed:diagnosed` counts as a pass);
//! 5. `unspecified`: some case's answer rests on an `unspecified` rule;
//! 6. `unsupported`: the consumer said it does not implement something;
//! 7. `consumer-down`: some case was not asked, the consumer having been
//!    declared down after too many faults in a row;
//! 8. `out-of-edition`: every case is outside the consumer's editions;
//! 9. `ref-budget`: the reference ran out of a budget;
//! 10. `no oracle` (reference only): no case has an `expect`;
//! 11. `n/a`: the consumer does no case of the rule.
//!
//! So a cell hides nothing worse than what it shows: a `pass 10/12` cell
//! has no fail and no accepted ill-formed case, only 2 of the lower labels
//! (the rendered cell names them: `pass 10/12 (unsupported 2)`).

pub mod render;
pub mod reports;
pub mod tru64;
pub mod visa;

use crate::case::Case;
use crate::consumer::{Answer, Consumer, FailureClass, Support};
use crate::runner::compare::Verdict;
use crate::runner::{self, Answered, CaseRecord, Options};
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use std::collections::BTreeMap;

/// One consumer's mark on one case (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mark {
    /// The runner's verdict.
    Verdict(Verdict),
    /// The consumer does not do this kind of case (expression vs CFI).
    NotApplicable,
    /// Reference only: the case has no hand-derived expectation.
    NoOracle,
}

/// A cell's label, in folding priority order (first wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    /// Some case disagrees.
    Fail,
    /// Some case got no answer (a consumer fault).
    Fault,
    /// Some ill-formed case got an answer.
    AcceptedIllFormed,
    /// Agreements (and ill-formed input diagnosed).
    Pass,
    /// Answers resting on an `unspecified` rule.
    Unspecified,
    /// The consumer does not implement something used.
    Unsupported,
    /// Not asked: the consumer had been declared down.
    ConsumerDown,
    /// Input outside the consumer's editions.
    OutOfEdition,
    /// The reference ran out of a budget.
    RefBudget,
    /// Reference without any expectation to meet.
    NoOracle,
    /// No applicable case.
    NotApplicable,
}

impl Label {
    /// Every label, in priority order.
    pub const ALL: [Label; 11] = [
        Label::Fail,
        Label::Fault,
        Label::AcceptedIllFormed,
        Label::Pass,
        Label::Unspecified,
        Label::Unsupported,
        Label::ConsumerDown,
        Label::OutOfEdition,
        Label::RefBudget,
        Label::NoOracle,
        Label::NotApplicable,
    ];

    /// The text shown in the matrix.
    pub fn text(self) -> &'static str {
        match self {
            Label::Fail => "fail",
            Label::Fault => "fault",
            Label::AcceptedIllFormed => "accepted-ill-formed",
            Label::Pass => "pass",
            Label::Unspecified => "unspecified",
            Label::Unsupported => "unsupported",
            Label::ConsumerDown => "consumer-down",
            Label::OutOfEdition => "out-of-edition",
            Label::RefBudget => "ref-budget",
            Label::NoOracle => "no oracle",
            Label::NotApplicable => "n/a",
        }
    }

    /// The label one mark counts under.
    pub fn of(mark: Mark) -> Label {
        match mark {
            Mark::NotApplicable => Label::NotApplicable,
            Mark::NoOracle => Label::NoOracle,
            Mark::Verdict(v) => match v {
                Verdict::Disagree => Label::Fail,
                Verdict::Fault => Label::Fault,
                Verdict::ConsumerDown => Label::ConsumerDown,
                Verdict::IllFormedAccepted => Label::AcceptedIllFormed,
                Verdict::Agree | Verdict::IllFormedDiagnosed => Label::Pass,
                Verdict::Unspecified => Label::Unspecified,
                Verdict::Unsupported => Label::Unsupported,
                Verdict::OutsideEdition => Label::OutOfEdition,
                Verdict::ReferenceBudget => Label::RefBudget,
            },
        }
    }
}

/// One folded cell: `count` of the `of` applicable cases carry `label`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The label that won.
    pub label: Label,
    /// Cases with that label.
    pub count: usize,
    /// Applicable cases (all marks but `n/a`).
    pub of: usize,
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.label {
            Label::NotApplicable => f.write_str("n/a"),
            l if self.count == self.of => write!(f, "{} {}", l.text(), self.count),
            l => write!(f, "{} {}/{}", l.text(), self.count, self.of),
        }
    }
}

/// Folds the marks of the cases exercising one rule into one cell (rules
/// in the module docs).
pub fn fold(marks: &[Mark]) -> Cell {
    let applicable = marks.iter().filter(|m| **m != Mark::NotApplicable).count();
    let label = marks.iter().map(|m| Label::of(*m)).min().unwrap_or(Label::NotApplicable);
    let count = marks.iter().filter(|m| Label::of(**m) == label).count();
    Cell { label, count, of: applicable }
}

/// How many marks count under each label (`n/a` included), for showing
/// what a cell's `k/n` leaves out.
pub fn counts(marks: &[Mark]) -> BTreeMap<Label, usize> {
    let mut out = BTreeMap::new();
    for m in marks {
        *out.entry(Label::of(*m)).or_default() += 1;
    }
    out
}

/// Expression or CFI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// An expression case.
    Expr,
    /// A CFI case.
    Cfi,
}

impl Kind {
    /// Column / heading text.
    pub fn text(self) -> &'static str {
        match self {
            Kind::Expr => "expr",
            Kind::Cfi => "cfi",
        }
    }
}

/// One consumer column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Consumer name.
    pub name: String,
    /// Its version line, if known.
    pub version: Option<String>,
    /// What it is judged on.
    pub support: Support,
}

/// One case with its marks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseRow {
    /// Case name.
    pub name: String,
    /// `file:line` (or another origin text).
    pub origin: String,
    /// Expression or CFI.
    pub kind: Kind,
    /// Catalogue rules it exercises: its `rules:` and the reference's error
    /// rule, sorted, each once.
    pub rules: Vec<String>,
    /// The case's input as text (disassembly or FDE).
    pub input: String,
    /// One mark per column.
    pub marks: Vec<Mark>,
}

/// One failing (consumer, case): a disagreement or a fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureEntry {
    /// Column index of the consumer.
    pub column: usize,
    /// Index into [`Matrix::cases`].
    pub case: usize,
    /// The hand-derived expectation, if any.
    pub expected: Option<String>,
    /// The reference's outcome as text.
    pub reference: String,
    /// For a CFI case of a consumer that shows less than the whole table
    /// ([`Consumer::cfi_view`]), the reference's table as that consumer
    /// can show it: what its answer was compared with.
    pub reference_view: Option<String>,
    /// The consumer's outcome as text.
    pub answer: String,
    /// Its known class, with the public report filled in from
    /// [`reports::KNOWN_REPORTS`] where the consumer gave none.
    pub class: Option<FailureClass>,
}

/// The whole matrix, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matrix {
    /// Consumer columns: reference, fast, then the third parties in order.
    pub columns: Vec<Column>,
    /// Consumers asked for by default but not run, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Every case, in load order.
    pub cases: Vec<CaseRow>,
    /// Rule ID to the indices of the cases exercising it (sorted by ID).
    pub rules: BTreeMap<String, Vec<usize>>,
    /// Every failure (disagreement or fault), by column then case.
    pub failures: Vec<FailureEntry>,
}

/// Rule ID to the indices of the rows exercising it, from each row's rule
/// IDs in row order (the `.visa` and `.tru64` sections).
pub fn rows_by_rule<'a>(rows: impl Iterator<Item = &'a [String]>) -> BTreeMap<&'a str, Vec<usize>> {
    let mut m: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, rules) in rows.enumerate() {
        for rule in rules {
            m.entry(rule.as_str()).or_default().push(i);
        }
    }
    m
}

impl Matrix {
    /// Whether the harness itself is wrong: the reference misses an
    /// expectation, or fast differs from the reference or misses one.
    pub fn harness_failed(&self) -> bool {
        self.failures.iter().any(|f| f.column < 2)
    }

    /// The folded cell of `rule` in column `col`.
    pub fn cell(&self, rule: &str, col: usize) -> Cell {
        fold(&self.marks(rule, col))
    }

    /// The marks of column `col` on the cases of `rule`.
    pub fn marks(&self, rule: &str, col: usize) -> Vec<Mark> {
        self.rules.get(rule).map(|v| v.iter().map(|&i| self.cases[i].marks[col]).collect()).unwrap_or_default()
    }
}

/// Runs `cases` through [`runner::run_recorded`] (reference, `fast`,
/// `others`) and builds the matrix. `skipped` names consumers left out,
/// with why; `reports` is the table of known public reports
/// ([`reports::KNOWN_REPORTS`] in the command).
pub fn build(
    cases: &[Case],
    reference: &dyn Consumer,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer>],
    skipped: Vec<(String, String)>,
    reports: &[reports::KnownReport],
) -> Matrix {
    build_showing(cases, reference, fast, others, skipped, reports, false)
}

/// [`build`], with the runner's progress bar on stderr when `progress`
/// (shown only on a terminal, [`runner::progress`]).
pub fn build_showing(
    cases: &[Case],
    reference: &dyn Consumer,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer>],
    skipped: Vec<(String, String)>,
    reports: &[reports::KnownReport],
    progress: bool,
) -> Matrix {
    // Details of findings are gathered below, for failures only.
    let opts = Options { keep_details: 1, progress, ..Options::default() };
    let (_, records) = runner::run_recorded(cases, reference, fast, others, &opts);
    let all: Vec<&dyn Consumer> = [reference, fast].into_iter().chain(others.iter().map(|o| o.as_ref())).collect();
    let columns: Vec<Column> = all
        .iter()
        .map(|c| Column { name: c.name().to_string(), version: c.version(), support: c.supports() })
        .collect();
    let catalogue = crate::catalogue::Catalogue::get();
    let mut rows = Vec::with_capacity(cases.len());
    let mut rules: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (case, rec)) in cases.iter().zip(&records).enumerate() {
        let kind = match case {
            Case::Expr(_) => Kind::Expr,
            Case::Cfi(_) => Kind::Cfi,
        };
        let mut ids: Vec<String> = case.rules().iter().cloned().chain(rec.reference_rule.clone()).collect();
        ids.retain(|r| catalogue.rules.contains_key(r));
        ids.sort();
        ids.dedup();
        for r in &ids {
            rules.entry(r.clone()).or_default().push(i);
        }
        rows.push(CaseRow {
            name: case.name().to_string(),
            origin: case.origin().to_string(),
            kind,
            rules: ids,
            input: runner::input_text(case),
            marks: marks(kind, rec, &columns),
        });
    }
    let mut failures = Vec::new();
    for col in 0..columns.len() {
        for (i, row) in rows.iter().enumerate() {
            if matches!(row.marks[col], Mark::Verdict(Verdict::Disagree | Verdict::Fault)) {
                // A third party's answer is the one it gave in the run.
                let kept = col.checked_sub(2).and_then(|k| records[i].answers.get(k)).and_then(Option::as_ref);
                failures.push(failure(&cases[i], i, col, &all, kept, reports));
            }
        }
    }
    Matrix { columns, skipped, cases: rows, rules, failures }
}

/// The marks of one case: reference, fast, then each third party.
fn marks(kind: Kind, rec: &CaseRecord, columns: &[Column]) -> Vec<Mark> {
    let pass_or_fail = |ok: bool| Mark::Verdict(if ok { Verdict::Agree } else { Verdict::Disagree });
    let reference = match rec.expect {
        Some((met, _)) => pass_or_fail(met),
        None => Mark::NoOracle,
    };
    let fast_ok = rec.verdicts.first() == Some(&Verdict::Agree) && rec.expect.is_none_or(|e| e.1);
    let mut out = vec![reference, pass_or_fail(fast_ok)];
    for (col, v) in columns.iter().skip(2).zip(rec.verdicts.iter().skip(1)) {
        let does = match kind {
            Kind::Expr => col.support.expr,
            Kind::Cfi => col.support.cfi,
        };
        out.push(if does { Mark::Verdict(*v) } else { Mark::NotApplicable });
    }
    out
}

/// The details of the failure of column `col` (consumer `all[col]`) on
/// case `i`: the reference's outcome again, the consumer's (`kept` from
/// the run, else asked again: the evaluators), and the consumer's class
/// for it.
fn failure(
    case: &Case,
    i: usize,
    col: usize,
    all: &[&dyn Consumer],
    kept: Option<&Answered>,
    reports: &[reports::KnownReport],
) -> FailureEntry {
    let (reference, consumer) = (all[0], all[col]);
    let mut reference_view = None;
    let (expected, reference_text, answer, class) = match case {
        Case::Expr(c) => {
            let a = match kept {
                Some(Answered::Expr(a)) => a.clone(),
                _ => consumer.evaluate(c),
            };
            let r: Outcome = reference.evaluate(c);
            let class = (col >= 2).then(|| consumer.failure_class(case, Answer::Expr(&r), Answer::Expr(&a))).flatten();
            (c.expect.as_ref().map(|e| e.to_string()), r.to_string(), a.to_string(), class)
        }
        Case::Cfi(c) => {
            let a = match kept {
                Some(Answered::Cfi(a)) => a.clone(),
                _ => consumer.frame_table(c),
            };
            let r: CfiOutcome = reference.frame_table(c);
            let class = (col >= 2).then(|| consumer.failure_class(case, Answer::Cfi(&r), Answer::Cfi(&a))).flatten();
            if let CfiOutcome::Table(t) = &r {
                reference_view =
                    consumer.cfi_view(c, t).filter(|v| v != t).map(|v| runner::report::cfi_text(&CfiOutcome::Table(v)));
            }
            let mut expected = c.expect.as_ref().map(runner::report::cfi_text);
            let mut texts = [runner::report::cfi_text(&r), runner::report::cfi_text(&a)];
            if let Some(u) = &c.unwind {
                if let Some(e) = &u.expect {
                    expected = Some(format!("{}\nunwinding:\n{e}", expected.unwrap_or_default()));
                }
                for (text, k) in texts.iter_mut().zip([reference, consumer]) {
                    if let Some(w) = k.unwind(c, u) {
                        text.push_str(&format!("\nunwinding:\n{w}"));
                    }
                }
            }
            let [r, a] = texts;
            (expected, r, a, class)
        }
    };
    let class = class.map(|mut k| {
        if k.report.is_none() {
            k.report = reports::report_for(reports, consumer.name(), &k.id).map(|r| r.url.to_string());
        }
        k
    });
    FailureEntry { column: col, case: i, expected, reference: reference_text, reference_view, answer, class }
}

#[cfg(test)]
mod tests;
