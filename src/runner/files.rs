//! Checking ELF files (`dwarfcheck elf`): each unit's cases are checked as
//! soon as they are extracted, files and units in parallel, and the
//! verdicts folded into one [`Summary`] in file and unit order.

use super::{progress, run_until, InputNote, Options, Summary};
use crate::case::Case;
use crate::consumer::Consumer;
use crate::elf::fold::Fold;
use crate::elf::{self, Counts, Extracted, Unfinished};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What to check ELF files with.
pub struct FileChecker<'a> {
    /// How to extract (its deadline is replaced by each file's).
    pub extract: elf::Options,
    /// Time budget of each file, extraction and checking together.
    pub budget: Duration,
    /// The reference (builds CFI tables, details findings).
    pub reference: &'a dyn Consumer,
    /// The fast evaluator.
    pub fast: &'a dyn Consumer,
    /// The third parties.
    pub others: &'a [Box<dyn Consumer>],
    /// How to run (its progress bar is one over the files).
    pub run: Options,
}

/// What checking gave, for one unit, one file or all of them.
#[derive(Debug, Default)]
pub struct Checked {
    /// Files read (the others are in [`Summary::unreadable_inputs`]).
    pub files_read: usize,
    /// What extraction found.
    pub counts: Counts,
    /// Verdicts, counts and findings, as [`super::run`] gives them for all
    /// the cases in order.
    pub summary: Summary,
    /// Extraction warnings, `FILE: warning: ...`, in file and unit order.
    pub warnings: Vec<String>,
    /// The most cases held at once between their extraction and their
    /// verdicts: with verdicts folded unit by unit this stays within a
    /// few units' cases however many files there are.
    pub peak_cases_held: usize,
    /// The most cases of any one unit of extraction.
    pub largest_unit_cases: usize,
    /// What extraction left out of the file (per file only; folded into a
    /// note of [`Summary::unfinished_inputs`]).
    unfinished: Option<Unfinished>,
}

impl FileChecker<'_> {
    /// Checks `files`, in parallel, and folds the results in the order
    /// given. The third parties' health is read at the end.
    pub fn check(&self, files: &[PathBuf]) -> Checked {
        let bar = progress::on_terminal(
            files.len() as u64,
            "{spinner} checking {pos}/{len} files [{bar:40}] eta {eta}",
            self.run.progress,
        );
        let held = Held::default();
        let mut out = files
            .par_iter()
            .map(|f| {
                let c = self.check_file(f, &held);
                if let Some(b) = &bar {
                    b.inc(1);
                }
                c
            })
            .reduce(|| self.empty(), |a, b| self.merge(a, b));
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        out.peak_cases_held = held.peak.load(Ordering::Relaxed);
        super::note_health(&mut out.summary, self.others, &self.run);
        out
    }

    /// One file within its budget: its result, with a note in
    /// [`Summary::unfinished_inputs`] when the budget ran out or skeletons
    /// had no split unit, or in [`Summary::unreadable_inputs`] when it
    /// could not be read.
    fn check_file(&self, f: &Path, held: &Held) -> Checked {
        let deadline = Instant::now() + self.budget;
        let extract = elf::Options { deadline: Some(deadline), ..self.extract.clone() };
        let units = Units { checker: self, deadline, held };
        let input = f.display().to_string();
        let note = |reason: String| InputNote {
            input: input.clone(),
            reason,
            expr_cases_not_checked: 0,
            cfi_cases_not_checked: 0,
            units_not_read: 0,
        };
        let mut c = match elf::extract_folded(f, &extract, &units) {
            Ok(c) => c,
            Err(e) => {
                let mut c = self.empty();
                c.summary.unreadable_inputs.push(note(e.reason()));
                return c;
            }
        };
        c.files_read = 1;
        for w in &mut c.warnings {
            *w = warning_line(&input, w);
        }
        let s = &mut c.summary;
        if c.counts.skeletons_without_split > 0 {
            s.unfinished_inputs.push(InputNote {
                units_not_read: c.counts.skeletons_without_split,
                ..note(format!(
                    "{} skeleton unit(s) whose .dwo was not found (in a .dwo file or a .dwp beside): their locations are not checked",
                    c.counts.skeletons_without_split
                ))
            });
        }
        let left = c.unfinished.take().unwrap_or_default();
        if s.expr_cases_not_checked + s.cfi_cases_not_checked + left.units_not_read + left.frame_sections_not_read > 0 {
            let mut reason = format!("time budget of {} s ran out", self.budget.as_secs_f64());
            if left.frame_sections_not_read > 0 {
                reason.push_str(&format!("; {} frame section(s) not read", left.frame_sections_not_read));
            }
            s.unfinished_inputs.push(InputNote {
                expr_cases_not_checked: s.expr_cases_not_checked,
                cfi_cases_not_checked: s.cfi_cases_not_checked,
                units_not_read: left.units_not_read,
                ..note(reason)
            });
        }
        c
    }

    /// The result of nothing checked: every consumer listed with no
    /// verdict, as a run over no case.
    fn empty(&self) -> Checked {
        Checked { summary: Summary::listing(self.fast, self.others), ..Default::default() }
    }

    /// `a` then `b`.
    fn merge(&self, mut a: Checked, b: Checked) -> Checked {
        a.files_read += b.files_read;
        a.counts += b.counts;
        a.summary.absorb(b.summary, self.run.keep_details);
        a.warnings.extend(b.warnings);
        a.peak_cases_held = a.peak_cases_held.max(b.peak_cases_held);
        a.largest_unit_cases = a.largest_unit_cases.max(b.largest_unit_cases);
        a.unfinished = Unfinished::sum(a.unfinished, b.unfinished);
        a
    }
}

/// How many cases are held between extraction and verdicts, now and at
/// most.
#[derive(Default)]
struct Held {
    now: AtomicUsize,
    peak: AtomicUsize,
}

impl Held {
    /// `n` more cases held.
    fn take(&self, n: usize) {
        let now = self.now.fetch_add(n, Ordering::Relaxed) + n;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }
    /// `n` cases released.
    fn release(&self, n: usize) {
        self.now.fetch_sub(n, Ordering::Relaxed);
    }
}

/// The fold of one file's units: each unit's cases are checked with the
/// file's deadline, then dropped.
struct Units<'c, 'a> {
    checker: &'c FileChecker<'a>,
    deadline: Instant,
    held: &'c Held,
}

impl Fold for Units<'_, '_> {
    type Acc = Checked;

    fn empty(&self) -> Checked {
        self.checker.empty()
    }

    fn unit(&self, x: Extracted) -> Checked {
        let k = self.checker;
        let n = x.exprs.len() + x.cfi.len();
        self.held.take(n);
        let cases: Vec<Case> = x.exprs.into_iter().map(Case::Expr).chain(x.cfi.into_iter().map(Case::Cfi)).collect();
        let run = Options { progress: false, ..k.run.clone() };
        let summary = run_until(&cases, k.reference, k.fast, k.others, &run, self.deadline);
        drop(cases);
        self.held.release(n);
        Checked {
            counts: x.counts,
            summary,
            warnings: x.warnings,
            largest_unit_cases: n,
            unfinished: x.unfinished,
            ..Default::default()
        }
    }

    fn merge(&self, a: Checked, b: Checked) -> Checked {
        self.checker.merge(a, b)
    }
}

/// An extraction warning of `input` as reported: `INPUT: warning: ...`,
/// without a second copy of the path when the warning already starts with
/// it (the extraction names the file a unit comes from, which is `input`
/// except for split DWARF's `.dwo`/`.dwp` files).
pub fn warning_line(input: &str, w: &str) -> String {
    let rest = w.strip_prefix(input).and_then(|r| r.strip_prefix(": ")).unwrap_or(w);
    format!("{input}: warning: {rest}")
}
