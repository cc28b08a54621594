//! The two in-house consumers: the reference interpreter and the fast
//! evaluator, behind the same [`Consumer`] trait as third parties.

use super::{Consumer, Support};
use crate::case::{CfiCase, ExprCase, UnwindCase};
use crate::edition::Edition;
use crate::outcome::unwind::Unwind;
use crate::outcome::{CfiOutcome, Outcome};

/// The reference interpreter ([`crate::reference`]).
pub struct Reference;

/// The fast evaluator ([`crate::fast`]).
pub struct Fast;

fn everything() -> Support {
    Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu, Edition::Hetero2020], expr: true, cfi: true }
}

impl Consumer for Reference {
    fn name(&self) -> &str {
        "reference"
    }
    fn version(&self) -> Option<String> {
        Some(format!("dwarfcheck {}", env!("CARGO_PKG_VERSION")))
    }
    fn supports(&self) -> Support {
        everything()
    }
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        crate::reference::expr::evaluate_case(case).0
    }
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        crate::reference::cfi::frame_table(case)
    }
    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        Some(crate::reference::unwind::unwind(&case.section, &u.ctx, u.limit))
    }
}

impl Consumer for Fast {
    fn name(&self) -> &str {
        "fast"
    }
    fn version(&self) -> Option<String> {
        Some(format!("dwarfcheck {}", env!("CARGO_PKG_VERSION")))
    }
    fn supports(&self) -> Support {
        everything()
    }
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        crate::fast::expr::evaluate_case(case)
    }
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        crate::fast::cfi::frame_table(case)
    }
    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        Some(crate::fast::unwind::unwind(&case.section, &u.ctx, u.limit))
    }
}
