//! The comparison policy (docs/architecture.md §8): how a consumer's outcome is judged
//! against the reference's.
//!
//! - fast vs reference: identical outcomes, rule IDs and offsets included;
//! - a third party vs reference: values and normalised locations equal,
//!   errors equal in kind; when the reference says ill-formed any answer is
//!   recorded (diagnosed / accepted) but is no failure; outcomes that rest on
//!   an `unspecified` rule are recorded, not judged; input outside the
//!   consumer's edition is skipped; `Unsupported` is counted, not failed;
//!   a `ConsumerFault` (no answer) is a fault, counted apart from the
//!   disagreements.

use crate::catalogue::{Catalogue, RuleKind};
use dwarfcheck_core::outcome::unwind::{Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BudgetKind, CfiOutcome, Outcome};
use serde::Serialize;

/// How one consumer's outcome for one case was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Same answer as the reference.
    Agree,
    /// A different answer where the spec fixes one: a failure.
    Disagree,
    /// No answer: the consumer crashed, hung, or broke its protocol on the
    /// case (`ConsumerFault`).
    Fault,
    /// Not asked: the consumer had been declared down after too many
    /// faults in a row (`consumer::health`).
    ConsumerDown,
    /// The reference says ill-formed; the consumer also rejected the input.
    IllFormedDiagnosed,
    /// The reference says ill-formed; the consumer produced a result.
    IllFormedAccepted,
    /// The reference's outcome rests on an `unspecified` rule.
    Unspecified,
    /// The input is outside the editions the consumer implements.
    OutsideEdition,
    /// The consumer says it does not implement something used.
    Unsupported,
    /// The reference ran out of an explicit budget; nothing to judge.
    ReferenceBudget,
}

impl Verdict {
    /// Every verdict, in report column order.
    pub const ALL: [Verdict; 10] = [
        Verdict::Agree,
        Verdict::Disagree,
        Verdict::Fault,
        Verdict::ConsumerDown,
        Verdict::IllFormedDiagnosed,
        Verdict::IllFormedAccepted,
        Verdict::Unspecified,
        Verdict::OutsideEdition,
        Verdict::Unsupported,
        Verdict::ReferenceBudget,
    ];

    /// Column label.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Disagree => "DISAGREE",
            Verdict::Fault => "fault",
            Verdict::ConsumerDown => "consumer-down",
            Verdict::IllFormedDiagnosed => "ill-formed:diagnosed",
            Verdict::IllFormedAccepted => "ill-formed:accepted",
            Verdict::Unspecified => "unspecified",
            Verdict::OutsideEdition => "outside-edition",
            Verdict::Unsupported => "unsupported",
            Verdict::ReferenceBudget => "ref-budget",
        }
    }
}

/// Fast vs reference: identical outcomes, rule IDs and offsets included.
/// The one exception is `Unsupported`, whose text is free-form: two
/// evaluators that both do not implement something agree.
pub fn same_evaluator_outcome(reference: &Outcome, fast: &Outcome) -> bool {
    match (reference, fast) {
        (Outcome::Failed(Failure::Unsupported { .. }), Outcome::Failed(Failure::Unsupported { .. })) => true,
        _ => reference == fast,
    }
}

/// [`same_evaluator_outcome`] for CFI outcomes.
pub fn same_evaluator_cfi(reference: &CfiOutcome, fast: &CfiOutcome) -> bool {
    match (reference, fast) {
        (CfiOutcome::Failed(Failure::Unsupported { .. }), CfiOutcome::Failed(Failure::Unsupported { .. })) => true,
        _ => reference == fast,
    }
}

/// The verdict on `fast`: `Agree` or `Disagree`. Fast implements everything
/// the reference does, so a fast `Unsupported` where the reference gives an
/// answer is a disagreement like any other (both `Unsupported` is the same
/// outcome, see [`same_evaluator_outcome`]).
pub fn fast_verdict(same: bool) -> Verdict {
    if same {
        Verdict::Agree
    } else {
        Verdict::Disagree
    }
}

/// Strict comparison used for fast vs reference and for hand-derived
/// expectations: equal outcomes; an expected `at` of `None` matches any.
pub fn exact(expected: &Outcome, actual: &Outcome) -> bool {
    match (expected, actual) {
        (
            Outcome::Failed(Failure::IllFormed { rule: r1, at: a1 }),
            Outcome::Failed(Failure::IllFormed { rule: r2, at: a2 }),
        )
        | (
            Outcome::Failed(Failure::EvalError { rule: r1, at: a1 }),
            Outcome::Failed(Failure::EvalError { rule: r2, at: a2 }),
        ) => r1 == r2 && (a1.is_none() || a1 == a2),
        (
            Outcome::Failed(Failure::Budget { budget: b1, at: a1 }),
            Outcome::Failed(Failure::Budget { budget: b2, at: a2 }),
        ) => b1 == b2 && (a1.is_none() || a1 == a2),
        _ => expected == actual,
    }
}

/// Strict comparison of CFI outcomes (see [`exact`]).
pub fn exact_cfi(expected: &CfiOutcome, actual: &CfiOutcome) -> bool {
    match (expected, actual) {
        (
            CfiOutcome::Failed(Failure::IllFormed { rule: r1, at: a1 }),
            CfiOutcome::Failed(Failure::IllFormed { rule: r2, at: a2 }),
        )
        | (
            CfiOutcome::Failed(Failure::EvalError { rule: r1, at: a1 }),
            CfiOutcome::Failed(Failure::EvalError { rule: r2, at: a2 }),
        ) => r1 == r2 && (a1.is_none() || a1 == a2),
        _ => expected == actual,
    }
}

/// Fast vs reference on virtual unwinding: both unwind and give equal
/// results (an `Unsupported` fault is free text, as in
/// [`same_evaluator_outcome`], here and in each caller register).
///
/// Where the reference ran out of its steps budget the answer is not
/// compared (docs/ambiguities.md item 85): the reference recomputes the
/// callers' registers through every frame below, as the rules define them,
/// and the fast unwinder reuses the previous step's results, so only the
/// reference's operation count grows with the depth. A caller register
/// whose reference outcome is `Budget { Steps }` is skipped, and an
/// unwinding the reference ends with it is compared up to its last step.
pub fn same_evaluator_unwind(reference: Option<&Unwind>, fast: Option<&Unwind>) -> bool {
    match (reference, fast) {
        (Some(r), Some(f)) => {
            let steps_budget =
                |o: &Outcome| matches!(o, Outcome::Failed(Failure::Budget { budget: BudgetKind::Steps, .. }));
            let cut = matches!(&r.end, UnwindEnd::Fault { outcome } if steps_budget(outcome));
            if !cut && !steps_in_either(r, f) {
                return unwind_matches(r, f, same_evaluator_outcome);
            }
            let same = |a: &Outcome, b: &Outcome| steps_budget(a) || same_evaluator_outcome(a, b);
            let n = r.steps.len();
            (cut && f.steps.len() >= n || !cut && f.steps.len() == n && ends_match(&r.end, &f.end, same))
                && r.steps.iter().zip(&f.steps).all(|(x, y)| steps_match(x, y, &same))
        }
        (None, None) => true,
        _ => false,
    }
}

/// Whether a caller register of either unwinding is a steps budget.
fn steps_in_either(r: &Unwind, f: &Unwind) -> bool {
    [r, f].iter().any(|u| {
        u.steps.iter().any(|s| {
            s.registers
                .values()
                .any(|c| matches!(c.location, Outcome::Failed(Failure::Budget { budget: BudgetKind::Steps, .. })))
        })
    })
}

/// A hand-derived unwinding `expected` against `actual`, outcome by
/// outcome as [`exact`] compares them (an expected `at` of `None` matches
/// any).
pub fn exact_unwind(expected: &Unwind, actual: &Unwind) -> bool {
    unwind_matches(expected, actual, exact)
}

fn unwind_matches(a: &Unwind, b: &Unwind, same: fn(&Outcome, &Outcome) -> bool) -> bool {
    ends_match(&a.end, &b.end, same)
        && a.steps.len() == b.steps.len()
        && a.steps.iter().zip(&b.steps).all(|(x, y)| steps_match(x, y, &same))
}

fn ends_match(a: &UnwindEnd, b: &UnwindEnd, same: impl Fn(&Outcome, &Outcome) -> bool) -> bool {
    match (a, b) {
        (UnwindEnd::Fault { outcome: x }, UnwindEnd::Fault { outcome: y }) => same(x, y),
        (x, y) => x == y,
    }
}

/// One step each; a caller register's bytes are compared where `same`
/// says its locations are (a budget skipped skips them).
fn steps_match(x: &Step, y: &Step, same: &impl Fn(&Outcome, &Outcome) -> bool) -> bool {
    x.pc == y.pc
        && x.lookup == y.lookup
        && x.fde_offset == y.fde_offset
        && x.cfa == y.cfa
        && x.caller_pc == y.caller_pc
        && x.registers.len() == y.registers.len()
        && x.registers.iter().zip(&y.registers).all(|((rx, cx), (ry, cy))| {
            let budget = matches!(cx.location, Outcome::Failed(Failure::Budget { budget: BudgetKind::Steps, .. }));
            rx == ry && (budget || cx.bytes == cy.bytes) && same(&cx.location, &cy.location)
        })
}

/// Whether a case is written to exercise an `unspecified` rule: its answer
/// is the project's choice, so a third party's different one is recorded.
pub fn exercises_unspecified(rules: &[String]) -> bool {
    rules.iter().any(|r| is_unspecified(r))
}

fn is_unspecified(rule: &str) -> bool {
    Catalogue::get().kind(rule) == Some(RuleKind::Unspecified)
}

/// The three kinds that must match between a third party and the reference.
#[derive(PartialEq)]
enum Kind {
    Result,
    IllFormed,
    EvalError,
}

/// Judges a third-party outcome against the reference's. `unspecified` says
/// whether the reference's evaluation relied on an `unspecified` rule.
pub fn judge(reference: &Outcome, other: &Outcome, unspecified: bool) -> Verdict {
    if let Outcome::Failed(Failure::Unsupported { .. }) = other {
        return Verdict::Unsupported;
    }
    let other_kind = match other {
        Outcome::Value(_) | Outcome::Location(_) => Kind::Result,
        Outcome::Failed(Failure::IllFormed { .. }) => Kind::IllFormed,
        Outcome::Failed(Failure::EvalError { .. }) | Outcome::Failed(Failure::Budget { .. }) => Kind::EvalError,
        Outcome::Failed(Failure::ConsumerFault { .. }) => return Verdict::Fault,
        Outcome::Failed(Failure::Unsupported { .. }) => unreachable!("handled above"),
    };
    match reference {
        // An ill-formedness the spec leaves open is the project's choice.
        Outcome::Failed(Failure::IllFormed { rule, .. }) if is_unspecified(rule.as_str()) => Verdict::Unspecified,
        Outcome::Failed(Failure::IllFormed { .. }) => {
            if other_kind == Kind::Result {
                Verdict::IllFormedAccepted
            } else {
                Verdict::IllFormedDiagnosed
            }
        }
        Outcome::Failed(Failure::Budget { .. }) => Verdict::ReferenceBudget,
        Outcome::Failed(Failure::EvalError { rule, .. }) if unspecified || is_unspecified(rule.as_str()) => {
            Verdict::Unspecified
        }
        _ if unspecified => Verdict::Unspecified,
        Outcome::Failed(Failure::EvalError { .. }) => {
            if other_kind == Kind::EvalError {
                Verdict::Agree
            } else {
                Verdict::Disagree
            }
        }
        Outcome::Value(_) | Outcome::Location(_) => {
            if reference == other || as_address(reference).is_some_and(|a| as_address(other) == Some(a)) {
                Verdict::Agree
            } else {
                Verdict::Disagree
            }
        }
        Outcome::Failed(Failure::Unsupported { .. }) | Outcome::Failed(Failure::ConsumerFault { .. }) => {
            Verdict::Unsupported
        }
    }
}

/// The address an outcome denotes under hetero-2020's implicit conversion
/// ("Memory Location Description Operations"): a value of the generic type
/// and a single memory location description in the default address space at
/// a whole byte are interchangeable. A DWARF-5-era consumer that returns
/// every final stack value as an address (gimli) is judged by this.
fn as_address(o: &Outcome) -> Option<u128> {
    match o {
        Outcome::Value(v) if v.ty.encoding == dwarfcheck_core::outcome::TypeEncoding::Generic => Some(v.to_u128()),
        Outcome::Location(l) => match l.places.as_slice() {
            [dwarfcheck_core::outcome::SingleLocation::Simple(dwarfcheck_core::outcome::Source::Memory {
                aspace: 0,
                bit_addr,
                thread: None,
                lane: None,
            })] if bit_addr % 8 == 0 => Some(bit_addr / 8),
            _ => None,
        },
        _ => None,
    }
}

/// Judges a third-party CFI outcome against the reference's (see [`judge`]).
pub fn judge_cfi(reference: &CfiOutcome, other: &CfiOutcome, unspecified: bool) -> Verdict {
    match other {
        CfiOutcome::Failed(Failure::Unsupported { .. }) => return Verdict::Unsupported,
        CfiOutcome::Failed(Failure::ConsumerFault { .. }) => return Verdict::Fault,
        _ => {}
    }
    let other_is_table = matches!(other, CfiOutcome::Table(_));
    match reference {
        CfiOutcome::Failed(Failure::IllFormed { rule, .. }) if is_unspecified(rule.as_str()) => Verdict::Unspecified,
        CfiOutcome::Failed(Failure::IllFormed { .. }) => {
            if other_is_table {
                Verdict::IllFormedAccepted
            } else {
                Verdict::IllFormedDiagnosed
            }
        }
        CfiOutcome::Failed(Failure::Budget { .. }) => Verdict::ReferenceBudget,
        CfiOutcome::Failed(Failure::EvalError { rule, .. }) if unspecified || is_unspecified(rule.as_str()) => {
            Verdict::Unspecified
        }
        _ if unspecified => Verdict::Unspecified,
        CfiOutcome::Failed(Failure::EvalError { .. }) => {
            if matches!(
                other,
                CfiOutcome::Failed(Failure::EvalError { .. })
                    | CfiOutcome::Failed(Failure::IllFormed { .. })
                    | CfiOutcome::Failed(Failure::Budget { .. })
            ) {
                Verdict::Agree
            } else {
                Verdict::Disagree
            }
        }
        CfiOutcome::Table(_) => {
            if reference == other {
                Verdict::Agree
            } else {
                Verdict::Disagree
            }
        }
        CfiOutcome::Failed(Failure::Unsupported { .. }) | CfiOutcome::Failed(Failure::ConsumerFault { .. }) => {
            Verdict::Unsupported
        }
    }
}

/// Judges a third party's unwinding `other` against `view`, the reference's
/// unwinding as far as the consumer shows it ([`crate::consumer::Consumer::unwind_view`]):
///
/// - the consumer could not start (`Unsupported`, `ConsumerFault` as the
///   end of an unwinding with no step): unsupported, fault;
/// - every step the view has, in order, with the same pc, CFA and caller
///   pc, and for each register the view lists the same value (registers
///   the view does not list are not compared; lookup address and FDE
///   offset only where the view gives them, i.e. non-zero);
/// - the same end: both at the base of the stack, both at the frame limit,
///   or both ending in a fault of any kind (third parties name no rules).
///
/// A reference that ends in an ill-formed fault makes a differing answer
/// `IllFormedDiagnosed` when the consumer also faults, else
/// `IllFormedAccepted`; a budget, `ReferenceBudget`; an `unspecified` rule
/// anywhere, `Unspecified`.
pub fn judge_unwind(view: &Unwind, other: &Unwind, unspecified: bool) -> Verdict {
    if other.steps.is_empty() {
        match &other.end {
            UnwindEnd::Fault { outcome: Outcome::Failed(Failure::Unsupported { .. }) } => return Verdict::Unsupported,
            UnwindEnd::Fault { outcome: Outcome::Failed(Failure::ConsumerFault { .. }) } => return Verdict::Fault,
            _ => {}
        }
    }
    let same_step = |x: &Step, y: &Step| {
        x.pc == y.pc
            && (x.lookup == 0 || x.lookup == y.lookup)
            && (x.fde_offset == 0 || x.fde_offset == y.fde_offset)
            && x.cfa == y.cfa
            && x.caller_pc == y.caller_pc
            && x.registers.iter().all(|(n, r)| y.registers.get(n).is_some_and(|o| o.bytes == r.bytes))
    };
    let same_end = match (&view.end, &other.end) {
        (UnwindEnd::Fault { .. }, UnwindEnd::Fault { .. }) => true,
        (a, b) => a == b,
    };
    let same = same_end
        && view.steps.len() == other.steps.len()
        && view.steps.iter().zip(&other.steps).all(|(x, y)| same_step(x, y));
    let fault = |u: &Unwind| match &u.end {
        UnwindEnd::Fault { outcome } => Some(outcome.clone()),
        _ => None,
    };
    match fault(view) {
        Some(Outcome::Failed(Failure::Budget { .. })) => Verdict::ReferenceBudget,
        Some(Outcome::Failed(Failure::IllFormed { rule, .. })) if !same || is_unspecified(rule.as_str()) => {
            if is_unspecified(rule.as_str()) {
                Verdict::Unspecified
            } else if fault(other).is_some() {
                Verdict::IllFormedDiagnosed
            } else {
                Verdict::IllFormedAccepted
            }
        }
        _ if same => Verdict::Agree,
        _ if unspecified => Verdict::Unspecified,
        _ => Verdict::Disagree,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::outcome::{BaseType, Value};
    use dwarfcheck_core::rules::{id, RuleId};

    fn v(n: u128) -> Outcome {
        Outcome::Value(Value::from_u128(BaseType::generic(64, false), n))
    }
    fn ill() -> Outcome {
        Outcome::Failed(Failure::IllFormed { rule: id::EXPR_DECODE_UNKNOWN_OPCODE, at: Some(0) })
    }
    fn err(rule: &str) -> Outcome {
        Outcome::Failed(Failure::EvalError { rule: RuleId::new(rule), at: None })
    }

    #[test]
    fn third_party_policy() {
        assert_eq!(judge(&v(1), &v(1), false), Verdict::Agree);
        assert_eq!(judge(&v(1), &v(2), false), Verdict::Disagree);
        assert_eq!(judge(&v(1), &err("gimli:X"), false), Verdict::Disagree);
        // Ill-formed: anything goes, but it is recorded.
        assert_eq!(judge(&ill(), &v(7), false), Verdict::IllFormedAccepted);
        assert_eq!(judge(&ill(), &err("gimli:X"), false), Verdict::IllFormedDiagnosed);
        // ... unless the ill-formedness is itself an open choice.
        let open_ill =
            Outcome::Failed(Failure::IllFormed { rule: id::CFI_CIE_ROW_CREATION_IN_INITIAL_INSTRUCTIONS, at: None });
        assert_eq!(judge(&open_ill, &v(7), false), Verdict::Unspecified);
        // Errors are compared by kind only.
        assert_eq!(judge(&err("ours"), &err("gimli:Y"), false), Verdict::Agree);
        assert_eq!(judge(&err("ours"), &v(0), false), Verdict::Disagree);
        // Unspecified never fails.
        assert_eq!(judge(&v(1), &v(2), true), Verdict::Unspecified);
        assert_eq!(
            judge(&v(1), &Outcome::Failed(Failure::Unsupported { what: "x".into() }), false),
            Verdict::Unsupported
        );
        // A fault is no answer: its own verdict, whatever the reference says.
        let fault = Outcome::Failed(Failure::ConsumerFault { what: "panic".into() });
        assert_eq!(judge(&v(1), &fault, false), Verdict::Fault);
        assert_eq!(judge(&ill(), &fault, false), Verdict::Fault);
        assert_eq!(judge(&v(1), &fault, true), Verdict::Fault);
        // A generic value and a default-address-space memory location at the
        // same byte are the same answer (implicit conversion).
        let mem = |a: u128| {
            Outcome::Location(
                dwarfcheck_core::outcome::RawLocation::simple(dwarfcheck_core::outcome::Source::memory(0, a * 8))
                    .normalize(),
            )
        };
        assert_eq!(judge(&v(0x401000), &mem(0x401000), false), Verdict::Agree);
        assert_eq!(judge(&v(0x401000), &mem(0x401001), false), Verdict::Disagree);
    }

    #[test]
    fn fast_unsupported_is_a_failure() {
        assert_eq!(fast_verdict(true), Verdict::Agree);
        assert_eq!(fast_verdict(false), Verdict::Disagree);
        // Both unsupported count as the same outcome.
        let u = |w: &str| Outcome::Failed(Failure::Unsupported { what: w.into() });
        assert!(same_evaluator_outcome(&u("a"), &u("b")));
        assert!(!same_evaluator_outcome(&v(1), &u("b")));
    }

    #[test]
    fn exact_ignores_unspecified_offset_only() {
        let a = Outcome::Failed(Failure::IllFormed { rule: id::EXPR_DECODE_UNKNOWN_OPCODE, at: None });
        let b = Outcome::Failed(Failure::IllFormed { rule: id::EXPR_DECODE_UNKNOWN_OPCODE, at: Some(3) });
        assert!(exact(&a, &b));
        assert!(!exact(&b, &Outcome::Failed(Failure::IllFormed { rule: id::EXPR_DECODE_UNKNOWN_OPCODE, at: Some(4) })));
        assert!(!exact(
            &a,
            &Outcome::Failed(Failure::IllFormed { rule: id::EXPR_DECODE_TRUNCATED_OPERAND, at: Some(3) })
        ));
    }

    /// Hand-built unwindings: the same steps and end agree; a different
    /// caller pc disagrees; a register the view does not list is not
    /// compared; an ill-formed reference end with a faulting answer is
    /// diagnosed, with a completed answer accepted; an unsupported start
    /// is unsupported.
    #[test]
    fn judge_unwind_compares_what_the_view_shows() {
        use dwarfcheck_core::outcome::unwind::CallerRegister;
        use dwarfcheck_core::outcome::{RawLocation, Source};
        let cfa = |a: u64| RawLocation::simple(Source::memory(0, u128::from(a) * 8)).normalize();
        let reg = |b: u8| CallerRegister { location: v(0), bytes: Some(vec![b; 8]) };
        let step = |pc: u64, caller: Option<u64>, regs: Vec<(u64, CallerRegister)>| Step {
            pc,
            lookup: 0,
            fde_offset: 0,
            cfa: cfa(0x7008),
            registers: regs.into_iter().collect(),
            caller_pc: caller,
        };
        let base = |steps| Unwind { steps, end: UnwindEnd::Base };
        let view = base(vec![step(0x1000, Some(0x2000), vec![(6, reg(1))])]);
        let same = base(vec![step(0x1000, Some(0x2000), vec![(6, reg(1)), (3, reg(9))])]);
        assert_eq!(judge_unwind(&view, &same, false), Verdict::Agree);
        let other_pc = base(vec![step(0x1000, Some(0x2004), vec![(6, reg(1))])]);
        assert_eq!(judge_unwind(&view, &other_pc, false), Verdict::Disagree);
        assert_eq!(judge_unwind(&view, &other_pc, true), Verdict::Unspecified);
        let other_rbp = base(vec![step(0x1000, Some(0x2000), vec![(6, reg(2))])]);
        assert_eq!(judge_unwind(&view, &other_rbp, false), Verdict::Disagree);
        let ill = |rule: &str| UnwindEnd::Fault {
            outcome: Outcome::Failed(Failure::IllFormed { rule: RuleId::new(rule.to_string()), at: None }),
        };
        let ill_view = Unwind { steps: Vec::new(), end: ill("cfi.insn.truncated") };
        let faulted = Unwind { steps: Vec::new(), end: ill("tool:error") };
        assert_eq!(judge_unwind(&ill_view, &faulted, false), Verdict::Agree);
        let went_on = base(vec![step(0x1000, Some(0x2000), vec![])]);
        assert_eq!(judge_unwind(&ill_view, &went_on, false), Verdict::IllFormedAccepted);
        let ill_steps = Unwind { steps: view.steps.clone(), end: ill("cfi.insn.truncated") };
        let short = Unwind { steps: Vec::new(), end: ill("tool:error") };
        assert_eq!(judge_unwind(&ill_steps, &short, false), Verdict::IllFormedDiagnosed);
        let unsupported = Unwind::fault(Outcome::Failed(Failure::Unsupported { what: "x".into() }));
        assert_eq!(judge_unwind(&view, &unsupported, false), Verdict::Unsupported);
    }
}
