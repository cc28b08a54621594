//! The result of a conformance check: every case's verdict with both
//! answers, the counts, an allow-list of known failures, and the readable
//! failure report the `assert_*` methods panic with.

use crate::runner::compare::Verdict;
use crate::runner::Listed;
use std::collections::BTreeMap;
use std::fmt;

/// Known failures that do not fail [`Report::assert_conforms`] or
/// [`Report::assert_no_disagreements`], so that a consumer's author can
/// ratchet: list today's failures, and remove an entry once it is fixed
/// (an entry that no failure matches is itself reported, "stale", and
/// fails [`Report::assert_conforms`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allow {
    /// Case names (`minus-order`), or `FILE/NAME` with the file as in
    /// the origin (`specs/cases/expr/arithmetic.yaml/minus-order`).
    pub cases: Vec<String>,
    /// Rule IDs: a case exercising one of them, or a rule under it
    /// (`op.minus` covers `op.minus.subtracts`), is allowed.
    pub rules: Vec<String>,
}

impl Allow {
    /// The entries (`case NAME` / `rule ID`) that allow `v`.
    fn matching(&self, v: &CaseVerdict) -> Vec<String> {
        let full = format!("{}/{}", v.file, v.case);
        let cases = self.cases.iter().filter(|c| **c == v.case || **c == full).map(|c| format!("case {c}"));
        let rules = self
            .rules
            .iter()
            .filter(|w| v.rules.iter().any(|r| super::suite::rule_under(r, w)))
            .map(|w| format!("rule {w}"));
        cases.chain(rules).collect()
    }
}

/// One case's judgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseVerdict {
    /// The case file (`specs/cases/expr/arithmetic.yaml`).
    pub file: String,
    /// Where the case is: `FILE:LINE`.
    pub origin: String,
    /// The case's name, unique within its file.
    pub case: String,
    /// The rules the case exercises, then the rule of the reference's
    /// answer when it is an error, each once.
    pub rules: Vec<String>,
    /// The runner's verdict on the consumer's answer (the comparison
    /// policy, docs/architecture.md §8).
    pub verdict: Verdict,
    /// The reference's answer, as text.
    pub reference: String,
    /// The consumer's answer, as text; `None` where it was not asked
    /// (outside its editions, or declared down).
    pub consumer: Option<String>,
    /// For a failure, the consumer's known class of it
    /// ([`crate::consumer::Consumer::failure_class`]; the small traits
    /// have none).
    pub class: Option<crate::consumer::FailureClass>,
    /// Whether an [`Allow`] entry covers this case.
    pub allowed: bool,
}

impl CaseVerdict {
    /// Whether the verdict is a failure of the consumer: `DISAGREE`, a
    /// fault (no answer), or not asked because it was declared down.
    pub fn is_failure(&self) -> bool {
        matches!(self.verdict, Verdict::Disagree | Verdict::Fault | Verdict::ConsumerDown)
    }
}

/// What [`super::check`] and its kin found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The consumer's name.
    pub consumer: String,
    /// Every case run, in case order.
    pub cases: Vec<CaseVerdict>,
    /// How many cases got each verdict.
    pub counts: BTreeMap<Verdict, usize>,
    /// Case files that did not load (`file:line:column: what`).
    pub load_errors: Vec<String>,
    /// Allow-list entries that matched no failing case (fixed since).
    pub stale_allowances: Vec<String>,
    /// The runner's details of each failing case (disassembled input,
    /// expectation, the reference's trace), by origin and name.
    pub(super) details: Vec<Listed>,
}

impl Report {
    /// Builds the report of `cases`, marking what `allow` covers.
    pub(super) fn new(
        consumer: String,
        mut cases: Vec<CaseVerdict>,
        allow: &Allow,
        load_errors: Vec<String>,
        details: Vec<Listed>,
    ) -> Report {
        let mut counts = BTreeMap::new();
        let mut used = std::collections::BTreeSet::new();
        for v in &mut cases {
            *counts.entry(v.verdict).or_default() += 1;
            if v.is_failure() {
                let m = allow.matching(v);
                v.allowed = !m.is_empty();
                used.extend(m);
            }
        }
        let entries =
            allow.cases.iter().map(|c| format!("case {c}")).chain(allow.rules.iter().map(|r| format!("rule {r}")));
        let stale_allowances = entries.filter(|e| !used.contains(e)).collect();
        Report { consumer, cases, counts, load_errors, stale_allowances, details }
    }

    /// How many cases got `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.counts.get(&verdict).copied().unwrap_or(0)
    }

    /// The cases the consumer was judged on: its answer compared with the
    /// reference's (agree or disagree), or recorded against an
    /// ill-formed or unspecified reference; not those it does not
    /// support, was not asked, or gave no answer to.
    pub fn judged(&self) -> usize {
        self.cases
            .iter()
            .filter(|v| {
                matches!(
                    v.verdict,
                    Verdict::Agree
                        | Verdict::Disagree
                        | Verdict::IllFormedAccepted
                        | Verdict::IllFormedDiagnosed
                        | Verdict::Unspecified
                )
            })
            .count()
    }

    /// The failing cases no [`Allow`] entry covers.
    pub fn failures(&self) -> impl Iterator<Item = &CaseVerdict> {
        self.cases.iter().filter(|v| v.is_failure() && !v.allowed)
    }

    /// The disagreements no [`Allow`] entry covers.
    pub fn disagreements(&self) -> impl Iterator<Item = &CaseVerdict> {
        self.failures().filter(|v| v.verdict == Verdict::Disagree)
    }

    /// Panics with this report unless the consumer conforms: no failure
    /// outside the allow-list (disagreement, fault, declared down), every
    /// case file loaded, no stale allow-list entry, and at least one case
    /// judged ([`Report::judged`]).
    pub fn assert_conforms(&self) {
        let ok = self.failures().next().is_none()
            && self.load_errors.is_empty()
            && self.stale_allowances.is_empty()
            && self.judged() > 0;
        assert!(ok, "{} does not conform:\n{self}", self.consumer);
    }

    /// Panics with this report if the consumer disagrees with the
    /// reference on a case the allow-list does not cover, or a case file
    /// did not load.
    pub fn assert_no_disagreements(&self) {
        let ok = self.disagreements().next().is_none() && self.load_errors.is_empty();
        assert!(ok, "{} disagrees with the reference:\n{self}", self.consumer);
    }
}

impl fmt::Display for Report {
    /// A count line per verdict, then each failure not allowed: where the
    /// case is, its rules, the input, expectation and both answers, and
    /// the reference's trace; then the allowed failures by name, stale
    /// allow-list entries and load errors.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts: Vec<String> = self.counts.iter().map(|(v, n)| format!("{n} {}", v.label())).collect();
        writeln!(f, "{}: {} cases, {} judged: {}", self.consumer, self.cases.len(), self.judged(), counts.join(", "))?;
        for v in self.failures() {
            writeln!(f, "\n{} {} ({})", v.verdict.label(), v.case, v.origin)?;
            writeln!(f, "  rules:     {}", v.rules.join(", "))?;
            let detail = self.details.iter().find(|l| l.origin == v.origin && l.case == v.case);
            if let Some(l) = detail {
                writeln!(f, "  input:     {}", l.input)?;
                if let Some(e) = &l.expected {
                    writeln!(f, "  expected:  {}", indent(e))?;
                }
            }
            writeln!(f, "  reference: {}", indent(&v.reference))?;
            writeln!(f, "  consumer:  {}", indent(v.consumer.as_deref().unwrap_or("(not asked)")))?;
            if let Some(c) = &v.class {
                writeln!(f, "  class:     {}: {}", c.id, c.explanation)?;
            }
            if let Some(l) = detail.filter(|l| !l.trace.is_empty()) {
                writeln!(f, "  reference trace:")?;
                for t in &l.trace {
                    writeln!(f, "    {t}")?;
                }
            }
        }
        let allowed: Vec<&str> = self.cases.iter().filter(|v| v.allowed).map(|v| v.case.as_str()).collect();
        if !allowed.is_empty() {
            writeln!(f, "\nallowed failures ({}): {}", allowed.len(), allowed.join(", "))?;
        }
        if !self.stale_allowances.is_empty() {
            writeln!(
                f,
                "\nstale allow-list entries (no failing case; remove them): {}",
                self.stale_allowances.join(", ")
            )?;
        }
        for e in &self.load_errors {
            writeln!(f, "\ncase file error: {e}")?;
        }
        if self.judged() == 0 {
            writeln!(
                f,
                "\nno case was judged: every case was unsupported, outside the consumer's editions or not selected"
            )?;
        }
        Ok(())
    }
}

/// `text` with its lines after the first indented to line up under the
/// report's labels.
fn indent(text: &str) -> String {
    text.replace('\n', "\n             ")
}
