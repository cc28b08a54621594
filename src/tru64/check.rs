//! Evaluates a procedure's lowered location lists with both evaluators at every instruction and compares them with each other and with the direct reading `View::location_at` (issue 18 item 4).
//!
//! The lists are written with [`write_dwarf`] (gimli's writer) and
//! evaluated from the written `.debug_loclists` at every pc
//! `base + 4k` of the procedure ([`lower::extent`]), within a
//! [`Budget`], in a context where DWARF register `n` holds
//! [`register_value`]`(n)`. The reading's expectation is built apart from
//! the expression bytes: each location of [`View::location_at`] becomes
//! the place [`lower::place_of`] names (a register, or memory at the
//! address the register values give), the set of them the expected
//! location, or undefined storage when empty.

use super::lower::{self, write_dwarf, LowerTarget, Place};
use super::model::{Procedure, Symbols};
use super::resolve::{View, Where};
use crate::case::ExprCase;
use crate::consumer::builtin::{fast_outcome, reference_outcome};
use crate::runner::compare::same_evaluator_outcome;
use dwarfcheck_core::context::{AttrForm, CompUnit, Context};
use dwarfcheck_core::outcome::{NormalLocation, Outcome, SingleLocation, Source};
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Bounds on the work of one [`check`] (points over the whole input).
pub type Budget = crate::case::blob::PointBudget;

/// Work units a point may cost on average before [`check`] stops: the
/// direct reading (`View::location_at`) scans every split description and
/// symbol, and resolves the children of a description, for each point, so
/// one point costs `1 + descriptions + symbols + most children` units and
/// the whole check at most `budget.points × WORK_PER_POINT`.
pub const WORK_PER_POINT: usize = 1024;

pub use crate::case::blob::{Disagreement, MAX_LISTED};

/// What [`check`] did to one procedure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Variables described (one list each).
    pub variables: usize,
    /// Lists with at least one entry.
    pub lists: usize,
    /// Location list entries.
    pub entries: usize,
    /// Locations with no DWARF form (no entry written).
    pub unlowered: usize,
    /// Discontiguous scopes (one range list each).
    pub scopes: usize,
    /// Their ranges.
    pub ranges: usize,
    /// Line rows.
    pub rows: usize,
    /// Inlined-call records (not lowered).
    pub inlined_calls: usize,
    /// Instructions of the procedure as lowered.
    pub insns: u64,
    /// Points evaluated by both evaluators.
    pub points: usize,
    /// Whether the budget cut the work short.
    pub truncated: bool,
    /// The disagreements (at most [`MAX_LISTED`]).
    pub disagreements: Vec<Disagreement>,
    /// All disagreements, listed or not.
    pub disagreement_count: usize,
    /// Why nothing was evaluated (gimli's writer refused), if so.
    pub error: Option<String>,
}

impl Report {
    fn disagree(&mut self, d: Disagreement) {
        crate::case::blob::list_disagreement(&mut self.disagreements, &mut self.disagreement_count, d);
    }

    /// Whether anything disagreed or could not be written.
    pub fn failed(&self) -> bool {
        self.disagreement_count > 0 || self.error.is_some()
    }

    /// One line: the counts, and the first disagreement if any.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} variable(s), {} list(s), {} entries ({} location(s) not lowered), {} scope(s) with {} range(s), {} row(s), {} inlined call(s) not lowered, {} point(s) over {} instruction(s){}, {} disagreement(s)",
            self.variables,
            self.lists,
            self.entries,
            self.unlowered,
            self.scopes,
            self.ranges,
            self.rows,
            self.inlined_calls,
            self.points,
            self.insns,
            if self.truncated { " (budget reached)" } else { "" },
            self.disagreement_count
        );
        if let Some(e) = &self.error {
            s += &format!("; not evaluated: {e}");
        }
        if let Some(d) = self.disagreements.first() {
            s += &format!("; first: {} {} at {:#x}: reference {}, {}", d.what, d.name, d.pc, d.reference, d.other);
        }
        s
    }
}

/// The value DWARF register `n` holds in every evaluation context:
/// distinct per register, 16-byte aligned, far from address 0.
pub fn register_value(n: u64) -> u64 {
    0x7000_0000_0000 + n * 0x1_0000
}

/// The single location `p` names on `lt` in the evaluation context, or
/// `None` when `lt` has no number for its register.
pub fn source_of(p: Place, lt: &LowerTarget) -> Option<Source> {
    let mem = |a: u64| Source::memory(0, u128::from(a) * 8);
    Some(match p {
        Place::Register(r) => Source::Register { regno: (lt.dwarf_register)(r)?, bit_offset: 0 },
        Place::AtRegister(r) => mem(register_value((lt.dwarf_register)(r)?)),
        Place::FrameOffset(o) => mem(register_value((lt.dwarf_register)(lt.frame_register)?).wrapping_add_signed(o)),
        Place::Address(a) => mem(a),
    })
}

/// The location the direct reading `w` gives, as an evaluator would
/// report it: every place with a DWARF form, undefined when none.
pub fn expected(w: &Where, lt: &LowerTarget) -> Outcome {
    let locs = match w {
        Where::Children(c) => c.clone(),
        Where::Default(d) => vec![*d],
        Where::Nowhere => Vec::new(),
    };
    let places: BTreeSet<SingleLocation> = locs
        .iter()
        .filter_map(|l| lower::place_of(l).and_then(|p| source_of(p, lt)))
        .map(SingleLocation::Simple)
        .collect();
    let places =
        if places.is_empty() { vec![SingleLocation::Simple(Source::Undefined)] } else { places.into_iter().collect() };
    Outcome::Location(NormalLocation { places })
}

/// Lowers `view` for `lt`, writes it, and evaluates every list at every
/// instruction of the procedure with both evaluators, within `budget`.
pub fn check(view: &View<'_>, lt: &LowerTarget, budget: Budget) -> Report {
    let l = lower::lower(view, lt);
    let mut r = Report {
        variables: l.lists.len(),
        lists: l.lists.iter().filter(|v| !v.entries.is_empty()).count(),
        entries: l.lists.iter().map(|v| v.entries.len()).sum(),
        unlowered: l.lists.iter().map(|v| v.unlowered).sum(),
        scopes: l.scopes.len(),
        ranges: l.scopes.iter().map(|s| s.ranges.len()).sum(),
        rows: l.lines.len(),
        inlined_calls: l.inlined_calls,
        insns: l.insns,
        ..Report::default()
    };
    let written = match write_dwarf(&l) {
        Ok(w) => w,
        Err(e) => {
            r.error = Some(e);
            return r;
        }
    };
    let core = Arc::new((lt.core)());
    let mut base = Context::new(core.clone());
    for reg in &core.registers {
        base.registers.insert(reg.number, register_value(reg.number).to_le_bytes().to_vec());
    }
    base.cu = Some(CompUnit {
        version: 5,
        address_size: 8,
        debug_loclists: written.section(".debug_loclists").into(),
        base_address: Some(l.low),
        ..CompUnit::default()
    });
    let most_children = view.splits().map(|d| d.children.len()).max().unwrap_or(0);
    let cost = 1 + view.splits().count() + view.symbols.symbols.len() + most_children;
    let max_work = budget.points.saturating_mul(WORK_PER_POINT);
    let mut work = 0usize;
    'lists: for (v, offset) in l.lists.iter().zip(&written.list_offsets) {
        let name = v.target.to_string();
        for k in 0..l.insns {
            if r.points >= budget.points || work.saturating_add(cost) > max_work {
                r.truncated = true;
                break 'lists;
            }
            r.points += 1;
            work += cost;
            let pc = l.low + k * super::codes::INSN_BYTES;
            let mut ctx = base.clone();
            ctx.pc = Some(pc);
            let case = ExprCase {
                form: Some(AttrForm::LocList { offset: *offset }),
                ..ExprCase::plain(format!("{name}@{pc:#x}"), "tru64", &[], Arc::new(ctx))
            };
            let (a, _) = reference_outcome(&case);
            let b = fast_outcome(&case);
            if !same_evaluator_outcome(&a, &b) {
                r.disagree(Disagreement {
                    what: "evaluators",
                    name: name.clone(),
                    pc,
                    reference: a.to_string(),
                    other: format!("fast {b}"),
                });
            }
            let want = expected(&view.location_at(&v.target, pc), lt);
            if a != want {
                r.disagree(Disagreement {
                    what: "reading",
                    name: name.clone(),
                    pc,
                    reference: a.to_string(),
                    other: format!("reading {want}"),
                });
            }
        }
    }
    r
}

/// The largest input [`fuzz_one`] looks at (bytes).
pub const FUZZ_MAX_BYTES: usize = 1 << 14;

/// Points [`fuzz_one`] evaluates per input.
pub const FUZZ_POINTS: usize = 2_000;

/// Instructions of the procedure [`fuzz_one`] reads the data for.
pub const FUZZ_INSNS: u64 = 256;

/// The `tru64_bytes` fuzz oracle: `bytes` (at most [`FUZZ_MAX_BYTES`]) are
/// decoded and validated, which must not panic, as the data of a
/// procedure of [`FUZZ_INSNS`] instructions at 0x120001800; every split
/// target is given an own location (alternately a register and a frame
/// slot) so that defaults are lowered too. Whatever decoded is
/// [`check`]ed on [`lower::ALPHA`] within [`FUZZ_POINTS`] points.
///
/// Returns the points evaluated; errors: the first disagreement, or the
/// writer's refusal, rendered.
pub fn fuzz_one(bytes: &[u8]) -> Result<usize, String> {
    if bytes.len() > FUZZ_MAX_BYTES {
        return Ok(0);
    }
    let procedure = Procedure { base: 0x1_2000_1800, insns: Some(FUZZ_INSNS) };
    let (decoded, _) = super::check(bytes, procedure, &Symbols::default());
    let records = decoded.records();
    let mut symbols = Symbols::default();
    let view = View { procedure, symbols: &symbols, records: &records };
    let targets: BTreeSet<super::model::Target> = view.splits().map(|d| d.target.clone()).collect();
    for (i, t) in targets.into_iter().enumerate() {
        let (st, sc, value) = if i % 2 == 0 { (4, 4, (i % 64) as i64) } else { (4, 5, 8 * i as i64) };
        let (local, external) = match t {
            super::model::Target::Local(o) => (Some(o), None),
            super::model::Target::External(n) => (None, Some(n)),
        };
        symbols.symbols.push(super::model::Symbol {
            name: None,
            local,
            external,
            location: Some(super::model::Location { st, sc, value }),
            begin: None,
        });
    }
    let view = View { procedure, symbols: &symbols, records: &records };
    let r = check(&view, &lower::ALPHA, Budget { points: FUZZ_POINTS });
    if let Some(e) = r.error {
        return Err(e);
    }
    match r.disagreements.first() {
        Some(d) => Err(format!("{} {} at {:#x}: reference {}, {}", d.what, d.name, d.pc, d.reference, d.other)),
        None => Ok(r.points),
    }
}
