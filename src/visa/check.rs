//! Evaluates a blob's lowering with both evaluators (issue 17 items 3 and
//! 6): every location list at every point ([`super::loclist::points`]),
//! the row table of every lowered FDE, and one unwinding step at every
//! [`POINT_STEP`] bytes of every FDE; counts what was done and lists where
//! the reference and the fast evaluator disagree. Bounded by [`Budget`].

use super::detect::{decode_with, detect};
use super::frame::{self, lower_frames};
use super::layout::Layout;
use super::loclist::{lower_lists, point_case, points, POINT_STEP};
use super::model::Blob;
use super::platform::Platform;
use crate::consumer::builtin::{fast_outcome, fast_table, reference_outcome, reference_table, Fast, Reference};
use crate::consumer::Consumer;
use crate::runner::compare::{same_evaluator_cfi, same_evaluator_outcome, same_evaluator_unwind};
use dwarfcheck_core::outcome::CfiOutcome;
use serde::Serialize;

/// Bounds on the work of one [`check`] (points over the whole input).
pub type Budget = crate::case::blob::PointBudget;

pub use crate::case::blob::{Disagreement, MAX_LISTED};

/// What [`check`] did to one blob.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Compiled objects.
    pub objects: usize,
    /// Variables (one location list each).
    pub variables: usize,
    /// Variable intervals.
    pub intervals: usize,
    /// Intervals not lowered (no mapped index, or no BE_FP).
    pub not_lowered: usize,
    /// Location list entries (Gen ranges).
    pub ranges: usize,
    /// Location points evaluated by both evaluators.
    pub points: usize,
    /// FDEs lowered.
    pub fdes: usize,
    /// Rows of the lowered FDEs' tables (the reference's count).
    pub rows: usize,
    /// Unwinding points (one step each) run by both evaluators.
    pub unwinds: usize,
    /// Save entries not lowered to rules.
    pub skipped_saves: usize,
    /// Whether the point budget cut the work short.
    pub truncated: bool,
    /// The disagreements (at most [`MAX_LISTED`] listed).
    pub disagreements: Vec<Disagreement>,
    /// All disagreements, listed or not.
    pub disagreement_count: usize,
}

impl Report {
    fn disagree(&mut self, d: Disagreement) {
        crate::case::blob::list_disagreement(&mut self.disagreements, &mut self.disagreement_count, d);
    }

    /// Charges one point; false (and `truncated`) when the budget is spent.
    fn charge(&mut self, budget: &Budget) -> bool {
        if self.points + self.unwinds >= budget.points {
            self.truncated = true;
            return false;
        }
        true
    }
}

/// Lowers `blob` compiled for `platform` and evaluates the lowering with
/// both evaluators, within `budget`.
pub fn check(blob: &Blob, platform: Platform, budget: Budget) -> Report {
    let c = blob.counts();
    let mut r = Report { objects: c.objects, variables: c.variables, intervals: c.intervals, ..Report::default() };
    let lists = lower_lists(blob, platform);
    'lists: for l in &lists.lists {
        r.not_lowered += l.not_lowered.len();
        r.ranges += l.entries.len();
        for pc in points(l) {
            if !r.charge(&budget) {
                break 'lists;
            }
            r.points += 1;
            let case = point_case(&lists, l, pc, platform);
            let (a, _) = reference_outcome(&case);
            let b = fast_outcome(&case);
            if !same_evaluator_outcome(&a, &b) {
                r.disagree(Disagreement {
                    what: "location",
                    name: l.variable.clone(),
                    pc,
                    reference: a.to_string(),
                    other: b.to_string(),
                });
            }
        }
    }
    let frames = lower_frames(blob, platform);
    r.fdes = frames.fdes.len();
    r.skipped_saves = frames.skipped_saves;
    'fdes: for fde in &frames.fdes {
        let name = blob.objects[fde.object].name.clone();
        let first = frame::case(&frames, fde, blob, fde.range.0, platform);
        let (a, b) = (reference_table(&first), fast_table(&first));
        if let CfiOutcome::Table(t) = &a {
            r.rows += t.rows.len();
        }
        if !same_evaluator_cfi(&a, &b) {
            r.disagree(Disagreement {
                what: "rows",
                name: name.clone(),
                pc: 0,
                reference: format!("{a:?}"),
                other: format!("{b:?}"),
            });
        }
        for pc in (fde.range.0..fde.range.1).step_by(POINT_STEP as usize) {
            if !r.charge(&budget) {
                break 'fdes;
            }
            r.unwinds += 1;
            let case = frame::case(&frames, fde, blob, pc, platform);
            let u = case.unwind.as_ref().expect("frame::case unwinds");
            let (a, b) = (Reference.unwind(&case, u), Fast.unwind(&case, u));
            if !same_evaluator_unwind(a.as_ref(), b.as_ref()) {
                r.disagree(Disagreement {
                    what: "unwind",
                    name: name.clone(),
                    pc,
                    reference: format!("{a:?}"),
                    other: format!("{b:?}"),
                });
            }
        }
    }
    r
}

/// The largest input [`fuzz_one`] looks at (bytes).
pub const FUZZ_MAX_BYTES: usize = 1 << 16;

/// Points [`fuzz_one`] evaluates per decoded layout.
pub const FUZZ_POINTS: usize = 2_000;

/// The `visa_bytes` fuzz oracle: `bytes` (at most [`FUZZ_MAX_BYTES`]) are
/// detected and decoded under every layout, which must not panic; each
/// decoding is validated and [`check`]ed on Gen12LP within
/// [`FUZZ_POINTS`] points, and reference and fast must agree.
///
/// Returns how many layouts decoded `bytes`; errors: the first
/// disagreement, rendered.
pub fn fuzz_one(bytes: &[u8]) -> Result<usize, String> {
    if bytes.len() > FUZZ_MAX_BYTES {
        return Ok(0);
    }
    let _ = detect(bytes);
    let mut decoded = 0;
    for layout in Layout::ALL {
        let Ok(blob) = decode_with(bytes, Some(layout)) else { continue };
        decoded += 1;
        let _ = super::validate::validate(&blob, Platform::Tgllp);
        let r = check(&blob, Platform::Tgllp, Budget { points: FUZZ_POINTS });
        if let Some(d) = r.disagreements.first() {
            return Err(format!(
                "{layout}: {} {} at {:#x}: reference {}, fast {}",
                d.what, d.name, d.pc, d.reference, d.other
            ));
        }
    }
    Ok(decoded)
}
