//! Fuzz oracles and their fixed inputs, shared by the `fuzz/` targets and
//! the property tests: each `check_*` runs one input through the reference
//! and the fast evaluator and says what disagreed; [`gimli_verdict`] judges
//! gimli where docs/architecture.md §8 does. A panic anywhere is itself a finding (the
//! fuzzer sees it).

pub mod case;
pub mod dict;
pub mod export;
pub mod gen;
pub mod marks;
pub mod minimize;
pub mod replay;
pub mod stats;
pub mod targets;
mod violation;

pub use violation::{LoadError, Violation};

use crate::case::{yaml::load_str, Case, ExprCase};
use crate::consumer::Consumer;
use crate::edition::Edition;
use crate::runner::compare::{judge, same_evaluator_cfi, same_evaluator_outcome, same_evaluator_unwind, Verdict};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::context::Context;
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Target;
use std::sync::{Arc, OnceLock};

/// The fixed rich evaluation context of the `expr_bytes` target
/// ([`case::FuzzCase::rich`]): x86-64 registers and memory, a unit with
/// base types and DIEs, a calling frame, an object, thread and lane, the
/// hetero-2020 vendor profile. Built once per process.
pub fn rich_context() -> Arc<Context> {
    static CTX: OnceLock<Arc<Context>> = OnceLock::new();
    CTX.get_or_init(|| match case::FuzzCase::rich(Vec::new()).context() {
        Ok(c) => Arc::new(c),
        Err(e) => panic!("the rich context does not build: {e}"),
    })
    .clone()
}

/// Evaluates `expr` in `ctx` with the reference and fast, which must give
/// the same outcome, rule IDs and offsets included.
///
/// Errors: [`Violation::Differ`] describing the disagreement.
pub fn check_expr(expr: &[u8], ctx: &Arc<Context>) -> Result<(), Violation> {
    check_expr_case(&expr_case(expr, ctx))
}

/// [`check_expr`] on a whole case (its expression, attribute and context).
///
/// Errors: [`Violation::Differ`] describing the disagreement.
pub fn check_expr_case(case: &ExprCase) -> Result<(), Violation> {
    let (r, _) = crate::consumer::builtin::reference_outcome(case);
    same_as_fast(case, &r)
}

/// Every oracle of the expression targets, with one reference evaluation:
/// reference == fast ([`check_expr_case`]), and gimli, where it is judged,
/// agrees or differs in a known class ([`check_gimli`]).
///
/// Errors: [`Violation::Differ`] or [`Violation::Gimli`].
pub fn check_expr_oracles(case: &ExprCase) -> Result<(), Violation> {
    check_expr_oracles_marked(case, None)
}

/// [`check_expr_oracles`], calling `mark` with the coverage mark of each
/// operation the reference executed ([`marks::executed`]).
///
/// Errors: [`Violation::Differ`] or [`Violation::Gimli`].
pub fn check_expr_oracles_marked(case: &ExprCase, mark: Option<&mut dyn FnMut(usize)>) -> Result<(), Violation> {
    let (r, relied) = crate::consumer::builtin::reference_outcome(case);
    if let Some(m) = mark {
        marks::executed(case, &r, m);
    }
    same_as_fast(case, &r)?;
    if !gimli_judges(case) {
        return Ok(());
    }
    match judge_gimli(case, &r, &relied) {
        (Verdict::Disagree, None, m) => Err(Violation::Gimli(m)),
        _ => Ok(()),
    }
}

/// The fast evaluator's outcome on `case` against the reference's `r`.
fn same_as_fast(case: &ExprCase, r: &Outcome) -> Result<(), Violation> {
    let f = crate::consumer::builtin::fast_outcome(case);
    if !same_evaluator_outcome(r, &f) {
        return Err(Violation::Differ(format!("{}: reference {r} / fast {f} on {:02x?}", case.name, &case.expr[..])));
    }
    Ok(())
}

/// gimli's verdict on `case` under the comparison policy (docs/architecture.md §8,
/// `runner::compare::judge`), when the case is DWARF 5 + GNU input; `None`
/// outside gimli's edition. With it: the known class of a disagreement
/// (`consumer::gimli::classes`), and the two outcomes as text. A fault
/// (gimli gave no answer: a caught panic) is given as a disagreement, so
/// that it needs a known class as well.
pub fn gimli_verdict(case: &ExprCase) -> Option<(Verdict, Option<&'static str>, String)> {
    if !gimli_judges(case) {
        return None;
    }
    let (r, relied) = crate::consumer::builtin::reference_outcome(case);
    Some(judge_gimli(case, &r, &relied))
}

/// Whether gimli is judged on `case`: DWARF 5 + GNU input only, and not
/// a SPIR-V case (whose `expr` is a lowering that starts from the initial
/// stack, which gimli's evaluation does not take).
fn gimli_judges(case: &ExprCase) -> bool {
    case.spirv.is_none() && matches!(crate::edition::of_expr_case(case), Edition::Dwarf5 | Edition::Dwarf5Gnu)
}

/// [`gimli_verdict`] on a case gimli is judged on, given the reference's
/// outcome `r` and the `unspecified` rules it rests on.
fn judge_gimli(case: &ExprCase, r: &Outcome, relied: &[RuleId]) -> (Verdict, Option<&'static str>, String) {
    let g = crate::consumer::gimli::Gimli.evaluate(case);
    let v = judge(r, &g, !relied.is_empty());
    let v = if v == Verdict::Fault { Verdict::Disagree } else { v };
    let class = (v == Verdict::Disagree).then(|| crate::consumer::gimli::classes::known_class(case, r, &g)).flatten();
    (v, class, format!("reference {r} / gimli {g} on {:02x?}", &case.expr[..]))
}

/// The gimli oracle of the expression targets: a disagreement must be of a
/// known class (docs/consumers.md).
///
/// Errors: [`Violation::Gimli`], when no known class explains the
/// disagreement.
pub fn check_gimli(case: &ExprCase) -> Result<(), Violation> {
    match gimli_verdict(case) {
        Some((Verdict::Disagree, None, m)) => Err(Violation::Gimli(m)),
        _ => Ok(()),
    }
}

/// The oracles of a SPIR-V case ([`ExprCase::spirv`]; issue 16): the
/// reference and fast interpretations are equal, and the reference's
/// evaluation of the lowering to DWARF (`crate::spirv::lower`), with the
/// same initial stack and a location result, agrees with the direct
/// interpretation: the same result when there is one, the same rule when
/// the direct interpretation fails on a DWARF operation's rule (the fault
/// is then at a byte offset, not an operation index, so `at` is not
/// compared). Faults of the SPIR-V rules (`spirv.*`: placement, underflow
/// counted on the list) and budgets (the lowering of a Fragment runs more
/// operations) are not compared with the lowering, nor is an empty
/// `DebugValue` whose initial entry is a location (the lowering assumes a
/// value there).
///
/// Errors: [`Violation::Differ`] describing the disagreement.
pub fn check_spirv_oracles(case: &ExprCase) -> Result<(), Violation> {
    let Some(e) = &case.spirv else { return Ok(()) };
    let (r, _) = crate::consumer::builtin::reference_outcome(case);
    same_as_fast(case, &r)?;
    // The lowering takes the initial entry for a value (`spirv::lower`):
    // an empty DebugValue of a location has no DWARF twin.
    let location_entry = matches!(case.ctx.initial_stack.as_slice(), [dwarfcheck_core::context::Entry::Location(_)]);
    if e.applies == dwarfcheck_core::encoding::spirv::Applies::Value && e.operations.is_empty() && location_entry {
        return Ok(());
    }
    let Ok(bytes) = crate::spirv::lower::lower(e) else { return Ok(()) };
    let mut ctx = (*case.ctx).clone();
    ctx.result_kind = Some(dwarfcheck_core::context::ResultKind::Location);
    let lowered = expr_case(&bytes, &Arc::new(ctx));
    let (l, _) = crate::consumer::builtin::reference_outcome(&lowered);
    use dwarfcheck_core::outcome::Failure as F;
    let agree = match (&r, &l) {
        (Outcome::Value(_) | Outcome::Location(_), _) => r == l,
        (Outcome::Failed(F::IllFormed { rule, .. } | F::EvalError { rule, .. }), _)
            if !rule.as_str().starts_with("spirv.") =>
        {
            l.rule() == Some(rule)
        }
        _ => true,
    };
    if !agree {
        return Err(Violation::Differ(format!(
            "{}: SPIR-V {e} gives {r}, its lowering {:02x?} gives {l}",
            case.name, &bytes
        )));
    }
    Ok(())
}

/// The expression case of `expr` in `ctx`, named `fuzz`.
pub fn expr_case(expr: &[u8], ctx: &Arc<Context>) -> ExprCase {
    ExprCase::plain("fuzz", "fuzz", expr, ctx.clone())
}

/// Builds the row table of every FDE (up to 64) of a frame section made
/// of `bytes` with the reference and fast (equal outcomes), and virtually
/// unwinds from a synthetic machine state in the middle of the middle FDE
/// with both (equal unwindings; fast with one `Unwinder` for the section).
/// One unwinding per input, not one per FDE: unwinding is the costliest
/// check, and libFuzzer's mutations move each FDE to that place.
///
/// Errors: [`Violation::Differ`] describing the disagreement.
pub fn check_cfi(kind: FrameKind, bytes: &[u8], target: Arc<Target>) -> Result<(), Violation> {
    check_cfi_section(&Arc::new(CfiSection::new(kind, bytes.to_vec(), 0x4000, target)))
}

/// [`check_cfi`] on a section already made.
///
/// Errors: [`Violation::Differ`] describing the disagreement.
pub fn check_cfi_section(sec: &Arc<CfiSection>) -> Result<(), Violation> {
    // One fast unwinder for the section, as a debugger keeps one, and one
    // machine state.
    let mut unwinder = dwarfcheck_fast::unwind::Unwinder::new(sec);
    let mut c = Context::new(sec.target.clone());
    (c.thread, c.lane) = (Some(0), Some(0));
    c.budgets.frames = 8;
    let offsets: Vec<u64> = sec.fde_offsets().take(64).map_while(Result::ok).collect();
    let mut case = crate::case::CfiCase {
        name: "fuzz".into(),
        origin: "fuzz".into(),
        section: sec.clone(),
        fde_offset: 0,
        rules: Vec::new(),
        expect: None,
        unwind: None,
    };
    for &off in &offsets {
        case.fde_offset = off;
        let (r, f) = (crate::consumer::builtin::reference_table(&case), crate::consumer::builtin::fast_table(&case));
        if !same_evaluator_cfi(&r, &f) {
            return Err(Violation::Differ(format!("FDE at {off:#x}: reference {r:?} / fast {f:?}")));
        }
    }
    // Virtual unwinding, the costliest check, from one FDE: the middle one
    // (every FDE's row table is compared above).
    let Some(&off) = offsets.get(offsets.len() / 2) else { return Ok(()) };
    if let Ok((fde, _)) = sec.parse_fde(off) {
        c.pc = Some(fde.pc_begin.wrapping_add(fde.pc_range / 2));
        c.synthetic = Some(off ^ 0x5eed);
        let ru = dwarfcheck_reference::unwind::unwind(sec, &c, None);
        let fu = unwinder.unwind(&c, None);
        if !same_evaluator_unwind(Some(&ru), Some(&fu)) {
            return Err(Violation::Differ(format!("unwinding from FDE {off:#x}:\nreference\n{ru}\nfast\n{fu}")));
        }
    }
    Ok(())
}

/// Loads `text` as a case file (which must never panic, whatever the
/// text) and runs every case it holds through [`check_expr`] or the CFI
/// checks (row table and unwinding, reference vs fast).
///
/// Errors: [`Violation::Differ`] describing the disagreement (a file that
/// does not load is not an error: that is a located diagnostic).
pub fn check_case_yaml(text: &str) -> Result<(), Violation> {
    let Ok(cases) = load_str("fuzz.yaml", text) else { return Ok(()) };
    for c in cases.iter().take(16) {
        match c {
            Case::Expr(e) if e.spirv.is_some() => check_spirv_oracles(e)?,
            Case::Expr(e) => check_expr_case(e)?,
            Case::Cfi(c) => {
                let (r, f) = (crate::consumer::builtin::reference_table(c), crate::consumer::builtin::fast_table(c));
                if !same_evaluator_cfi(&r, &f) {
                    return Err(Violation::Differ(format!("{}: reference {r:?} / fast {f:?}", c.name)));
                }
                if let Some(u) = &c.unwind {
                    let ru = dwarfcheck_reference::unwind::unwind(&c.section, &*u.ctx, u.limit);
                    let fu = dwarfcheck_fast::unwind::unwind(&c.section, &*u.ctx, u.limit);
                    if !same_evaluator_unwind(Some(&ru), Some(&fu)) {
                        return Err(Violation::Differ(format!("{}: unwinding\nreference\n{ru}\nfast\n{fu}", c.name)));
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
