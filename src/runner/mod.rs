//! The runner: evaluates every case with every consumer in parallel (rayon),
//! judges each answer by the comparison policy ([`compare`]), and gathers a
//! [`Summary`] for the reports ([`report`]).

pub mod compare;
pub mod files;
pub mod junit;
mod memo;
pub mod producer;
pub mod progress;
pub mod report;

use crate::case::{Case, CfiCase, ExprCase};
use crate::consumer::health::HealthReport;
use crate::consumer::Consumer;
use crate::edition::{self, Edition};
use compare::Verdict;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Third-party consumers whose disagreements fail the run (`--gate`).
    pub gates: Vec<String>,
    /// Show a progress bar on stderr: only on a terminal and for more than
    /// [`progress::MIN_CASES`] cases.
    pub progress: bool,
    /// How many failures to keep full details for (0 = all).
    pub keep_details: usize,
    /// Keep each expression the reference rejects or cannot judge, one by
    /// one ([`Summary::producer_findings`]; `dwarfcheck elf --findings`).
    pub producer_findings: bool,
}

/// Why a case is listed as a failure or disagreement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "what")]
pub enum Finding {
    /// The reference does not match the case's hand-derived `expect`.
    ReferenceVsExpect,
    /// The fast evaluator does not match the case's `expect`.
    FastVsExpect,
    /// Fast and reference differ.
    FastVsReference,
    /// A third-party consumer disagrees with the reference.
    Consumer {
        /// Consumer name.
        consumer: String,
        /// Whether that consumer is gated (its disagreements fail the run).
        gated: bool,
    },
    /// A third-party consumer gave no answer: it crashed, hung or broke its
    /// protocol (verdict `fault`).
    ConsumerFault {
        /// Consumer name.
        consumer: String,
        /// Whether that consumer is gated (its faults fail the run).
        gated: bool,
    },
}

/// A third party's answer to one case, kept for the details of a finding
/// (so that a consumer is never asked twice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answered {
    /// To an expression case.
    Expr(Outcome),
    /// To a CFI case.
    Cfi(CfiOutcome),
}

/// One listed finding, with everything needed to understand it.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// What kind of finding.
    pub finding: Finding,
    /// Case name.
    pub case: String,
    /// Where the case came from.
    pub origin: String,
    /// Rule IDs the case exercises, or the reference's rule.
    pub rules: Vec<String>,
    /// Disassembly of the expression (or FDE description).
    pub input: String,
    /// The expected outcome, if the case has one.
    pub expected: Option<String>,
    /// Each consumer's outcome, as text.
    pub outcomes: Vec<(String, String)>,
    /// The reference's trace: offset, operation, stack after it.
    pub trace: Vec<String>,
}

/// Counts and findings of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// Expression cases run.
    pub expr_cases: usize,
    /// CFI cases run.
    pub cfi_cases: usize,
    /// Of the CFI cases, those that also unwind from a machine state.
    pub unwind_cases: usize,
    /// Steps the reference made over all unwinding cases.
    pub unwind_steps: usize,
    /// How the reference's unwindings ended: `base`, `limit`, or the
    /// fault's rule (or budget/unsupported kind), with counts.
    pub unwind_ends: BTreeMap<String, usize>,
    /// Per consumer (fast included), how many cases got each verdict.
    pub verdicts: BTreeMap<String, BTreeMap<Verdict, usize>>,
    /// Cases with a hand-derived expectation.
    pub expectations: usize,
    /// Of those, how many the reference met.
    pub expectations_met_reference: usize,
    /// Of those, how many fast met.
    pub expectations_met_fast: usize,
    /// Rows in the reference's CFI row tables, summed over CFI cases.
    pub reference_rows: usize,
    /// Reference outcome kinds over all cases (`value`, `location`, ...).
    pub reference_kinds: BTreeMap<String, usize>,
    /// Reference ill-formed outcomes by rule ID: faults of the input (of
    /// its producer, for a real binary).
    pub reference_rules: BTreeMap<String, usize>,
    /// Reference evaluation errors by rule ID. They depend on the machine
    /// state (synthetic for real binaries: `docs/architecture.md` §1), so
    /// they are not counted as faults of the input.
    pub reference_eval_errors: BTreeMap<String, usize>,
    /// `unspecified` rules the reference's answers rested on, with counts.
    pub unspecified_rules: BTreeMap<String, usize>,
    /// Per third-party consumer, the reference's ill-formed rules of the
    /// cases it accepted (verdict `ill-formed:accepted`), with counts: where
    /// a consumer gives an answer to input the spec rejects.
    pub accepted_ill_formed: BTreeMap<String, BTreeMap<String, usize>>,
    /// Up to three example cases (origin and input) per reference error
    /// rule, so a surprising count on real input can be looked at.
    pub rule_examples: BTreeMap<String, Vec<String>>,
    /// Findings, in case order; at most `keep_details` with full details.
    pub failures: Vec<Listed>,
    /// Total findings (may exceed `failures.len()`), faults included.
    pub failure_count: usize,
    /// Of those, the faults of third parties (no answer).
    pub fault_count: usize,
    /// Per third party that runs other programs (protocol consumers,
    /// debuggers): faults, whether and why it was declared down, its
    /// stderr.
    pub health: BTreeMap<String, HealthReport>,
    /// Whether the run fails: fast vs reference, expectations, or a gated
    /// consumer that disagrees, faults or is declared down.
    pub failed: bool,
    /// Expression cases not checked because the run's deadline passed
    /// ([`run_until`]).
    pub expr_cases_not_checked: usize,
    /// CFI cases not checked because the run's deadline passed.
    pub cfi_cases_not_checked: usize,
    /// Inputs that could not be checked at all (an ELF file that cannot be
    /// read or parsed), in the order given.
    pub unreadable_inputs: Vec<InputNote>,
    /// Inputs checked only in part (a time budget ran out), in the order
    /// given.
    pub unfinished_inputs: Vec<InputNote>,
    /// Rules of the input's container broken where it ties expressions to
    /// variables (`spirv.module.*` of a SPIR-V module: `dwarfcheck
    /// spirv`), by rule ID: each place, `FILE: #INDEX (word W): what`, in
    /// input order. Faults of the producer, like
    /// [`Summary::reference_rules`]: they do not fail the run.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub module_rules: BTreeMap<String, Vec<String>>,
    /// With [`Options::producer_findings`]: each expression case the
    /// reference found ill-formed, failed with an evaluation error or
    /// could not judge, in case order, at most [`producer::MAX_KEPT`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub producer_findings: Vec<producer::ProducerFinding>,
    /// How many such cases there were (may exceed
    /// `producer_findings.len()`).
    #[serde(skip_serializing_if = "is_zero")]
    pub producer_finding_count: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What happened to one input that was not checked in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputNote {
    /// The input (a path).
    pub input: String,
    /// Why, in words.
    pub reason: String,
    /// Its expression cases that were extracted but not checked.
    pub expr_cases_not_checked: usize,
    /// Its CFI cases that were extracted but not checked.
    pub cfi_cases_not_checked: usize,
    /// Its compilation units that were not read at all (their cases are
    /// unknown).
    pub units_not_read: usize,
}

impl Summary {
    /// The summary of a run over no case: `fast` and every one of `others`
    /// listed in [`Summary::verdicts`] with no verdict.
    pub fn listing(fast: &dyn Consumer, others: &[Box<dyn Consumer + '_>]) -> Summary {
        let mut s = Summary::default();
        for n in std::iter::once(fast.name()).chain(others.iter().map(|o| o.name())) {
            s.verdicts.insert(n.to_string(), BTreeMap::new());
        }
        s
    }

    /// Adds the counts and findings of `other` (a run over other cases,
    /// such as another input file) to this summary, keeping at most
    /// `keep_details` detailed findings in all (0 = all). Summaries of
    /// consecutive runs absorbed in order give the summary of one run over
    /// all their cases, but for [`Summary::health`], which is left as it
    /// is (a third party's health accumulates over runs: read it at the
    /// end).
    pub fn absorb(&mut self, other: Summary, keep_details: usize) {
        fn add(into: &mut BTreeMap<String, usize>, from: BTreeMap<String, usize>) {
            for (k, n) in from {
                *into.entry(k).or_default() += n;
            }
        }
        self.expr_cases += other.expr_cases;
        self.cfi_cases += other.cfi_cases;
        self.unwind_cases += other.unwind_cases;
        self.unwind_steps += other.unwind_steps;
        add(&mut self.unwind_ends, other.unwind_ends);
        for (consumer, m) in other.verdicts {
            let into = self.verdicts.entry(consumer).or_default();
            for (v, n) in m {
                *into.entry(v).or_default() += n;
            }
        }
        self.expectations += other.expectations;
        self.expectations_met_reference += other.expectations_met_reference;
        self.expectations_met_fast += other.expectations_met_fast;
        self.reference_rows += other.reference_rows;
        add(&mut self.reference_kinds, other.reference_kinds);
        add(&mut self.reference_rules, other.reference_rules);
        add(&mut self.reference_eval_errors, other.reference_eval_errors);
        add(&mut self.unspecified_rules, other.unspecified_rules);
        for (consumer, m) in other.accepted_ill_formed {
            add(self.accepted_ill_formed.entry(consumer).or_default(), m);
        }
        for (rule, ex) in other.rule_examples {
            let into = self.rule_examples.entry(rule).or_default();
            into.extend(ex.into_iter().take(3usize.saturating_sub(into.len())));
        }
        let room = if keep_details == 0 { usize::MAX } else { keep_details.saturating_sub(self.failures.len()) };
        self.failures.extend(other.failures.into_iter().take(room));
        self.failure_count += other.failure_count;
        self.fault_count += other.fault_count;
        self.failed |= other.failed;
        self.expr_cases_not_checked += other.expr_cases_not_checked;
        self.cfi_cases_not_checked += other.cfi_cases_not_checked;
        self.unreadable_inputs.extend(other.unreadable_inputs);
        self.unfinished_inputs.extend(other.unfinished_inputs);
        for (rule, at) in other.module_rules {
            self.module_rules.entry(rule).or_default().extend(at);
        }
        let room = producer::MAX_KEPT.saturating_sub(self.producer_findings.len());
        self.producer_findings.extend(other.producer_findings.into_iter().take(room));
        self.producer_finding_count += other.producer_finding_count;
    }
}

/// One case's judgements, before aggregation.
struct CaseResult {
    rows: usize,
    /// The reference's unwinding: steps made and how it ended.
    unwound: Option<(usize, String)>,
    relied: Vec<String>,
    reference_rule: Option<String>,
    verdicts: Vec<(usize, Verdict)>,
    reference_kind: &'static str,
    has_expect: bool,
    ref_meets: bool,
    fast_meets: bool,
    findings: Vec<Finding>,
    /// Per third party, its answer (`None`: not asked); empty when the
    /// case has no finding.
    answers: Vec<Option<Answered>>,
}

/// One case's judgements, kept per case for reports that need more than
/// the totals (`dwarfcheck matrix`): see [`run_recorded`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseRecord {
    /// Verdict per consumer: index 0 is `fast` (against the reference),
    /// then `others` in order (a consumer outside its edition or kind of
    /// case gets [`Verdict::OutsideEdition`]).
    pub verdicts: Vec<Verdict>,
    /// Whether the case has a hand-derived expectation, and if so whether
    /// the reference and fast met it: `(reference, fast)`.
    pub expect: Option<(bool, bool)>,
    /// The reference's error rule (ill-formed / evaluation error), if any.
    pub reference_rule: Option<String>,
    /// Per third party (`others` in order), its answer, `None` where it was
    /// not asked; kept only for a case with a finding (a disagreement or a
    /// fault), else empty.
    pub answers: Vec<Option<Answered>>,
}

/// Runs `cases` with the reference, `fast` and the `others`, and judges.
///
/// Expression cases are evaluated by [`dwarfcheck_reference::expr`] directly,
/// which also says which `unspecified` decisions an answer rests on;
/// `reference` builds the CFI tables and re-runs cases for the details of a
/// finding.
pub fn run(
    cases: &[Case],
    reference: &dyn Consumer,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer + '_>],
    opts: &Options,
) -> Summary {
    run_impl(cases, reference, fast, others, opts, false, None).0
}

/// [`run`], but no case starts after `deadline`: the cases left are counted
/// in [`Summary::expr_cases_not_checked`] and
/// [`Summary::cfi_cases_not_checked`] and get no verdict. A case already
/// started runs to its end (each is bounded by the evaluators' budgets and
/// the third parties' time limits).
pub fn run_until(
    cases: &[Case],
    reference: &dyn Consumer,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer + '_>],
    opts: &Options,
    deadline: std::time::Instant,
) -> Summary {
    run_impl(cases, reference, fast, others, opts, false, Some(deadline)).0
}

/// [`run`], also returning one [`CaseRecord`] per case, in case order.
pub fn run_recorded(
    cases: &[Case],
    reference: &dyn Consumer,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer + '_>],
    opts: &Options,
) -> (Summary, Vec<CaseRecord>) {
    run_impl(cases, reference, fast, others, opts, true, None)
}

/// [`run`]; the per-case records only when `record` (large ELF runs do
/// without them).
fn run_impl(
    cases: &[Case],
    reference: &dyn Consumer,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer + '_>],
    opts: &Options,
    record: bool,
    deadline: Option<std::time::Instant>,
) -> (Summary, Vec<CaseRecord>) {
    for o in others {
        o.prepare(cases);
    }
    let bar = progress::cases(cases.len() as u64, opts.progress);
    let memo = memo::Memo::default();
    let results: Vec<Option<CaseResult>> = cases
        .par_iter()
        .map(|c| {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return None;
            }
            let r = match c {
                Case::Expr(e) => run_expr(e, &memo, fast, others, opts),
                Case::Cfi(f) => run_cfi(f, reference, fast, others, opts),
            };
            if let Some(b) = &bar {
                b.inc(1);
            }
            Some(r)
        })
        .collect();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut s = Summary::listing(fast, others);
    let names: Vec<String> =
        std::iter::once(fast.name().to_string()).chain(others.iter().map(|o| o.name().to_string())).collect();
    for (case, r) in cases.iter().zip(&results) {
        let Some(r) = r else {
            match case {
                Case::Expr(_) => s.expr_cases_not_checked += 1,
                Case::Cfi(_) => s.cfi_cases_not_checked += 1,
            }
            continue;
        };
        match case {
            Case::Expr(_) => s.expr_cases += 1,
            Case::Cfi(c) => {
                s.cfi_cases += 1;
                s.unwind_cases += usize::from(c.unwind.is_some());
            }
        }
        s.reference_rows += r.rows;
        if let Some((steps, end)) = &r.unwound {
            s.unwind_steps += steps;
            *s.unwind_ends.entry(end.clone()).or_default() += 1;
        }
        for rule in &r.relied {
            *s.unspecified_rules.entry(rule.clone()).or_default() += 1;
        }
        if let Some(rule) = &r.reference_rule {
            let by_rule =
                if r.reference_kind == "eval-error" { &mut s.reference_eval_errors } else { &mut s.reference_rules };
            *by_rule.entry(rule.clone()).or_default() += 1;
            let ex = s.rule_examples.entry(rule.clone()).or_default();
            if ex.len() < 3 {
                ex.push(format!("{}: {}", case.origin(), input_text(case)));
            }
        }
        if opts.producer_findings && matches!(r.reference_kind, "ill-formed" | "eval-error" | "unsupported") {
            if let Case::Expr(c) = case {
                s.producer_finding_count += 1;
                if s.producer_findings.len() < producer::MAX_KEPT {
                    s.producer_findings.extend(producer::finding(c, input_text(case)));
                }
            }
        }
        match s.reference_kinds.get_mut(r.reference_kind) {
            Some(n) => *n += 1,
            None => {
                s.reference_kinds.insert(r.reference_kind.to_string(), 1);
            }
        }
        for (i, v) in &r.verdicts {
            *s.verdicts.get_mut(&names[*i]).expect("consumer listed").entry(*v).or_default() += 1;
            if let (Verdict::IllFormedAccepted, Some(rule)) = (v, &r.reference_rule) {
                *s.accepted_ill_formed.entry(names[*i].clone()).or_default().entry(rule.clone()).or_default() += 1;
            }
        }
        if r.has_expect {
            s.expectations += 1;
            s.expectations_met_reference += usize::from(r.ref_meets);
            s.expectations_met_fast += usize::from(r.fast_meets);
        }
        for f in &r.findings {
            s.failure_count += 1;
            s.fault_count += usize::from(matches!(f, Finding::ConsumerFault { .. }));
            if !matches!(f, Finding::Consumer { gated: false, .. } | Finding::ConsumerFault { gated: false, .. }) {
                s.failed = true;
            }
            if opts.keep_details == 0 || s.failures.len() < opts.keep_details {
                s.failures.push(describe(case, f.clone(), reference, fast, others, r));
            }
        }
    }
    note_health(&mut s, others, opts);
    if !record {
        return (s, Vec::new());
    }
    // Recorded runs have no deadline: every case has its result.
    let records = results
        .into_iter()
        .flatten()
        .map(|r| CaseRecord {
            verdicts: r.verdicts.iter().map(|(_, v)| *v).collect(),
            expect: r.has_expect.then_some((r.ref_meets, r.fast_meets)),
            reference_rule: r.reference_rule,
            answers: r.answers,
        })
        .collect();
    (s, records)
}

/// Records the health of each of `others` that runs other programs in
/// `s` (as it is now: health accumulates over runs); a gated one that is
/// down fails the run.
fn note_health(s: &mut Summary, others: &[Box<dyn Consumer + '_>], opts: &Options) {
    for o in others {
        if let Some(h) = o.health() {
            if h.down.is_some() && opts.gates.iter().any(|g| g == o.name()) {
                s.failed = true;
            }
            s.health.insert(o.name().to_string(), h);
        }
    }
}

/// What [`judge_all`] gives: the verdicts (fast first), the findings, and
/// the third parties' answers (empty when there is no finding).
type Judged = (Vec<(usize, Verdict)>, Vec<Finding>, Vec<Option<Answered>>);

/// The findings and verdicts every case kind shares: the hand-derived
/// expectation (reference and fast), fast vs reference, then each third
/// party inside its edition (`in_scope`) judged by `judge`, which also
/// gives its answer (`None`: not asked, the consumer is down).
fn judge_all(
    expect: Option<(bool, bool)>,
    fast: Verdict,
    others: &[Box<dyn Consumer + '_>],
    opts: &Options,
    in_scope: impl Fn(&crate::consumer::Support) -> bool,
    judge: impl Fn(&dyn Consumer) -> (Verdict, Option<Answered>),
) -> Judged {
    let mut findings = Vec::new();
    let (ref_meets, fast_meets) = expect.unwrap_or((true, true));
    if !ref_meets {
        findings.push(Finding::ReferenceVsExpect);
    }
    if !fast_meets {
        findings.push(Finding::FastVsExpect);
    }
    if fast == Verdict::Disagree {
        findings.push(Finding::FastVsReference);
    }
    let mut verdicts = vec![(0, fast)];
    let mut answers = Vec::with_capacity(others.len());
    for (i, o) in others.iter().enumerate() {
        let (v, a) = if in_scope(&o.supports()) { judge(o.as_ref()) } else { (Verdict::OutsideEdition, None) };
        let (consumer, gated) = (o.name().to_string(), opts.gates.iter().any(|g| g == o.name()));
        match v {
            Verdict::Disagree => findings.push(Finding::Consumer { consumer, gated }),
            Verdict::Fault => findings.push(Finding::ConsumerFault { consumer, gated }),
            _ => {}
        }
        verdicts.push((i + 1, v));
        answers.push(a);
    }
    if findings.is_empty() {
        answers.clear();
    }
    (verdicts, findings, answers)
}

/// An expression case. The reference is [`dwarfcheck_reference::expr`] itself,
/// asked also which `unspecified` decisions its answer rests on.
fn run_expr<'a>(
    c: &'a ExprCase,
    memo: &memo::Memo<'a>,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer + '_>],
    opts: &Options,
) -> CaseResult {
    let evaluated = memo.evaluate(c, fast);
    let memo::Evaluated { reference: r, relied, fast: f } = &*evaluated;
    let expect = c.expect.as_ref().map(|e| (compare::exact(e, r), compare::exact(e, f)));
    let edition = if others.is_empty() { Edition::Dwarf5 } else { edition::of_expr_case(c) };
    // The reference says exactly which open choices its answer rests on; the
    // case's own rule list is not consulted, so a case that merely mentions
    // an `unspecified` rule still judges a consumer where no choice showed.
    let own_rule = r.rule().map(|x| x.to_string());
    let unspecified = !relied.is_empty() || compare::exercises_unspecified(own_rule.as_slice());
    let (verdicts, findings, answers) = judge_all(
        expect,
        compare::fast_verdict(compare::same_evaluator_outcome(r, f)),
        others,
        opts,
        |s| s.expr && s.editions.contains(&edition),
        |o| match o.try_evaluate(c) {
            None => (Verdict::ConsumerDown, None),
            Some(a) => {
                let seen = o.expr_view(c, r);
                (compare::judge(seen.as_ref().unwrap_or(r), &a, unspecified), Some(Answered::Expr(a)))
            }
        },
    );
    CaseResult {
        rows: 0,
        unwound: None,
        relied: relied.iter().map(|r| r.to_string()).collect(),
        reference_rule: r.rule().map(|x| x.to_string()),
        verdicts,
        reference_kind: r.kind(),
        has_expect: expect.is_some(),
        ref_meets: expect.is_none_or(|e| e.0),
        fast_meets: expect.is_none_or(|e| e.1),
        findings,
        answers,
    }
}

/// A CFI case.
fn run_cfi(
    c: &CfiCase,
    reference: &dyn Consumer,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer + '_>],
    opts: &Options,
) -> CaseResult {
    let r = reference.frame_table(c);
    let f = fast.frame_table(c);
    let mut expect = c.expect.as_ref().map(|e| (compare::exact_cfi(e, &r), compare::exact_cfi(e, &f)));
    // Virtual unwinding (unwind.*): fast against the reference; a third
    // party that unwinds (Consumer::unwind) is judged on its unwinding
    // instead of a row table.
    let mut same_unwind = true;
    let mut unwound = None;
    let mut reference_unwind = None;
    if let Some(u) = &c.unwind {
        let (ru, fu) = (reference.unwind(c, u), fast.unwind(c, u));
        reference_unwind.clone_from(&ru);
        unwound = ru.as_ref().map(|w| (w.steps.len(), end_label(&w.end)));
        same_unwind = compare::same_evaluator_unwind(ru.as_ref(), fu.as_ref());
        if let Some(e) = &u.expect {
            let (a, b) = expect.unwrap_or((true, true));
            let met = |x: &Option<dwarfcheck_core::outcome::unwind::Unwind>| {
                x.as_ref().is_some_and(|x| compare::exact_unwind(e, x))
            };
            expect = Some((a && met(&ru), b && met(&fu)));
        }
    }
    let edition = if others.is_empty() { Edition::Dwarf5 } else { edition::of_cfi_case(c) };
    let unspecified = compare::exercises_unspecified(&c.rules);
    let (verdicts, findings, answers) = judge_all(
        expect,
        compare::fast_verdict(compare::same_evaluator_cfi(&r, &f) && same_unwind),
        others,
        opts,
        |s| s.cfi && s.editions.contains(&edition),
        |o| {
            if let (Some(u), Some(ru)) = (&c.unwind, &reference_unwind) {
                if let Some(w) = o.unwind(c, u) {
                    let view = o.unwind_view(c, ru);
                    return (compare::judge_unwind(view.as_ref().unwrap_or(ru), &w, unspecified), None);
                }
            }
            let Some(a) = o.try_frame_table(c) else { return (Verdict::ConsumerDown, None) };
            // Judge only what the consumer can show (Consumer::cfi_view).
            let view = match &r {
                CfiOutcome::Table(t) => o.cfi_view(c, t).map(CfiOutcome::Table),
                _ => None,
            };
            (compare::judge_cfi(view.as_ref().unwrap_or(&r), &a, unspecified), Some(Answered::Cfi(a)))
        },
    );
    let rows = match &r {
        CfiOutcome::Table(t) => t.rows.len(),
        _ => 0,
    };
    CaseResult {
        rows,
        unwound,
        relied: Vec::new(),
        reference_rule: r.rule().map(|x| x.to_string()),
        verdicts,
        reference_kind: r.kind(),
        has_expect: expect.is_some(),
        ref_meets: expect.is_none_or(|e| e.0),
        fast_meets: expect.is_none_or(|e| e.1),
        findings,
        answers,
    }
}

/// How an unwinding ended, for the summary: `base`, `limit`, or the
/// fault's rule, budget or kind.
fn end_label(e: &dwarfcheck_core::outcome::unwind::UnwindEnd) -> String {
    use dwarfcheck_core::outcome::unwind::UnwindEnd;
    match e {
        UnwindEnd::Base => "base".into(),
        UnwindEnd::Limit => "limit".into(),
        UnwindEnd::Fault { outcome } => match (outcome.rule(), outcome) {
            (Some(r), _) => r.to_string(),
            (None, Outcome::Failed(Failure::Budget { budget, .. })) => format!("budget {budget:?}").to_lowercase(),
            (None, o) => o.kind().to_string(),
        },
    }
}

/// The case's input as text: the disassembled expression, or the FDE.
pub fn input_text(case: &Case) -> String {
    match case {
        Case::Expr(c) => {
            let format = c.ctx.cu.as_ref().map(|u| u.format).unwrap_or_default();
            crate::asm::expr::disassemble(&c.expr, &c.ctx.target, &c.ctx.vendor, format, c.ctx.address_bytes())
        }
        Case::Cfi(c) => fde_text(c),
    }
}

/// An FDE as text: where it is, what it covers, and the CIE's initial
/// instructions and its own, disassembled.
fn fde_text(c: &CfiCase) -> String {
    let sec = &c.section;
    let kind = match sec.kind {
        dwarfcheck_core::cfi::FrameKind::DebugFrame => ".debug_frame",
        dwarfcheck_core::cfi::FrameKind::EhFrame => ".eh_frame",
    };
    let head = format!("{kind} FDE at {:#x}", c.fde_offset);
    match sec.parse_fde(c.fde_offset) {
        Ok((fde, cie)) => {
            let p = crate::asm::cfi::CfiAsmParams::from_cie(&cie);
            let insns = |r: std::ops::Range<u64>| match sec.bytes.get(r.start as usize..r.end as usize) {
                Some(b) => crate::asm::cfi::disassemble(b, &sec.target, &p)
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with("DW_CFA_nop"))
                    .collect::<Vec<_>>()
                    .join("; "),
                None => "<out of range>".to_string(),
            };
            format!(
                "{head} [{:#x}, {:#x}), CIE at {:#x} (v{}, \"{}\"): initial {{ {} }} instructions {{ {} }}",
                fde.pc_begin,
                fde.pc_begin.wrapping_add(fde.pc_range),
                cie.offset,
                cie.version,
                cie.augmentation,
                insns(cie.instructions),
                insns(fde.instructions)
            )
        }
        Err(e) => format!("{head}: headers do not parse ({e:?})"),
    }
}

/// The case's rule IDs followed by `extra`, each ID once, in first-seen order.
fn merged_rules(case_rules: &[String], extra: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut rules: Vec<String> = Vec::new();
    for r in case_rules.iter().cloned().chain(extra) {
        if !rules.contains(&r) {
            rules.push(r);
        }
    }
    rules
}

/// Why a third party has no answer to a case in a finding's details.
fn not_asked(v: Option<Verdict>) -> String {
    match v {
        Some(Verdict::ConsumerDown) => "not asked: the consumer is down".into(),
        _ => "not asked: outside its editions or kind of case".into(),
    }
}

/// Gathers the details of one finding: the reference and fast are run
/// again, the third parties' answers are the ones the case got (`r`).
fn describe(
    case: &Case,
    finding: Finding,
    reference: &dyn Consumer,
    fast: &dyn Consumer,
    others: &[Box<dyn Consumer + '_>],
    r: &CaseResult,
) -> Listed {
    let all: Vec<&dyn Consumer> = [reference, fast].into_iter().chain(others.iter().map(|o| o.as_ref())).collect();
    let verdict = |i: usize| r.verdicts.iter().find(|(j, _)| *j == i + 1).map(|(_, v)| *v);
    let answer = |i: usize| r.answers.get(i).cloned().flatten();
    match case {
        Case::Expr(c) => {
            let input = input_text(case);
            let reference_outcome = reference.evaluate(c);
            let mut outcomes: Vec<(String, String)> = vec![
                (reference.name().to_string(), reference_outcome.to_string()),
                (fast.name().to_string(), fast.evaluate(c).to_string()),
            ];
            for (i, o) in others.iter().enumerate() {
                let text = match answer(i) {
                    Some(Answered::Expr(a)) => a.to_string(),
                    _ => not_asked(verdict(i)),
                };
                outcomes.push((o.name().to_string(), text));
            }
            let (_, relied) = crate::consumer::builtin::reference_outcome(c);
            let extra = relied.iter().map(|r| r.to_string()).chain(reference_outcome.rule().map(|r| r.to_string()));
            let rules = merged_rules(&c.rules, extra);
            Listed {
                finding,
                case: c.name.clone(),
                origin: c.origin.clone(),
                rules,
                input,
                expected: c.expect.as_ref().map(|e| e.to_string()),
                outcomes,
                trace: producer::trace_lines(c),
            }
        }
        Case::Cfi(c) => {
            let reference_table = reference.frame_table(c);
            let rules = merged_rules(&c.rules, reference_table.rule().map(|r| r.to_string()));
            let mut shown: Vec<(String, String)> = vec![
                (reference.name().to_string(), report::cfi_text(&reference_table)),
                (fast.name().to_string(), report::cfi_text(&fast.frame_table(c))),
            ];
            for (i, o) in others.iter().enumerate() {
                let text = match answer(i) {
                    Some(Answered::Cfi(a)) => report::cfi_text(&a),
                    _ => not_asked(verdict(i)),
                };
                shown.push((o.name().to_string(), text));
            }
            let mut expected = c.expect.as_ref().map(report::cfi_text);
            if let Some(u) = &c.unwind {
                for (k, (_, text)) in all.iter().zip(shown.iter_mut()) {
                    if let Some(w) = k.unwind(c, u) {
                        text.push_str(&format!("\nunwinding:\n{w}"));
                    }
                }
                if let Some(e) = &u.expect {
                    let head = expected.unwrap_or_default();
                    expected = Some(format!("{head}\nunwinding:\n{e}"));
                }
            }
            Listed {
                finding,
                case: c.name.clone(),
                origin: c.origin.clone(),
                rules,
                input: input_text(case),
                expected,
                outcomes: shown,
                trace: Vec::new(),
            }
        }
    }
}
