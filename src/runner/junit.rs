//! JUnit XML with one test case per case and consumer (`dwarfcheck run --junit`): what CI shows per case.
//!
//! Each case gives a test case per consumer, named `FILE:CASE [CONSUMER]`
//! (the case file without its line, the case's name) in the consumer's
//! test suite:
//!
//! - `reference`: the case's hand-derived `expect` (a case without one
//!   gives no reference test case);
//! - `fast`: the reference's outcome, and the `expect`;
//! - each third party: its [`Verdict`] against the reference.
//!
//! `agree` and `ill-formed:diagnosed` pass; `ill-formed:accepted` passes
//! with a note (recorded, not a failure: docs/architecture.md §8);
//! `DISAGREE` fails and `fault` is an error, each with the finding's
//! details as text; verdicts that judge nothing (`unsupported`,
//! `outside-edition`, `unspecified`, `consumer-down`, `ref-budget`) are
//! skipped with the verdict as the reason. A consumer declared down adds
//! one test case in error with the end of its stderr, and unreadable
//! inputs their suite, as in [`super::report::junit`].

use super::compare::Verdict;
use super::report::{failure_text, finding_text, xml_escape};
use super::{CaseRecord, Finding, Listed, Summary};
use std::fmt::Write as _;

/// One case as its test cases name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseLabel {
    /// Where it came from (`FILE:LINE`, as [`Listed::origin`]).
    pub origin: String,
    /// Its name.
    pub name: String,
}

impl CaseLabel {
    /// `FILE:CASE [CONSUMER]`.
    pub fn test_name(&self, consumer: &str) -> String {
        let file = match self.origin.rsplit_once(':') {
            Some((f, line)) if line.chars().all(|c| c.is_ascii_digit()) => f,
            _ => &self.origin,
        };
        format!("{file}:{} [{consumer}]", self.name)
    }
}

/// One test case's result.
enum Result<'a> {
    Pass(Option<String>),
    Failure(String, Option<&'a Listed>),
    Error(String, Option<&'a Listed>),
    Skipped(String),
}

/// The finding kept for `label` that `is_it` picks, if any.
fn listed<'a>(s: &'a Summary, label: &CaseLabel, is_it: &dyn Fn(&Finding) -> bool) -> Option<&'a Listed> {
    s.failures.iter().find(|f| f.origin == label.origin && f.case == label.name && is_it(&f.finding))
}

/// A third party's (or fast's) verdict as a test case result.
fn of_verdict<'a>(v: Verdict, consumer: &str, s: &'a Summary, label: &CaseLabel) -> Result<'a> {
    let mine = |f: &Finding| match f {
        Finding::Consumer { consumer: c, .. } | Finding::ConsumerFault { consumer: c, .. } => c == consumer,
        Finding::FastVsReference => consumer == "fast",
        _ => false,
    };
    match v {
        Verdict::Agree | Verdict::IllFormedDiagnosed => Result::Pass(None),
        Verdict::IllFormedAccepted => {
            Result::Pass(Some("answered input the reference calls ill-formed (recorded, not a failure)".into()))
        }
        Verdict::Disagree => {
            let l = listed(s, label, &mine);
            Result::Failure(
                l.map_or_else(|| format!("{consumer} disagrees with the reference"), |l| finding_text(&l.finding)),
                l,
            )
        }
        Verdict::Fault => {
            let l = listed(s, label, &mine);
            Result::Error(
                l.map_or_else(|| format!("{consumer} gave no answer (fault)"), |l| finding_text(&l.finding)),
                l,
            )
        }
        other => Result::Skipped(other.label().to_string()),
    }
}

/// The run as JUnit XML, one test case per case and consumer: `labels`
/// and `records` in case order ([`super::run_recorded`]), `names` the
/// consumers of `records[i].verdicts` (fast first).
pub fn junit(title: &str, labels: &[CaseLabel], records: &[CaseRecord], names: &[String], s: &Summary) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, "<testsuites name=\"{}\">", xml_escape(title));
    let mut suites: Vec<(String, Vec<(String, Result<'_>)>)> = Vec::new();
    let mut reference = Vec::new();
    for (label, r) in labels.iter().zip(records) {
        if let Some((met, _)) = r.expect {
            let result = if met {
                Result::Pass(None)
            } else {
                let l = listed(s, label, &|f| *f == Finding::ReferenceVsExpect);
                Result::Failure(finding_text(&Finding::ReferenceVsExpect), l)
            };
            reference.push((label.test_name("reference"), result));
        }
    }
    suites.push(("reference".into(), reference));
    for (i, name) in names.iter().enumerate() {
        let mut cases = Vec::new();
        for (label, r) in labels.iter().zip(records) {
            let Some(v) = r.verdicts.get(i) else { continue };
            let mut result = of_verdict(*v, name, s, label);
            if i == 0 && matches!(result, Result::Pass(_)) && r.expect.is_some_and(|(_, met)| !met) {
                let l = listed(s, label, &|f| *f == Finding::FastVsExpect);
                result = Result::Failure(finding_text(&Finding::FastVsExpect), l);
            }
            cases.push((label.test_name(name), result));
        }
        suites.push((name.clone(), cases));
    }
    for (name, cases) in suites {
        let health = s.health.get(&name);
        let down = health.and_then(|h| h.down.as_ref());
        let count = |p: &dyn Fn(&Result<'_>) -> bool| cases.iter().filter(|(_, r)| p(r)).count();
        let failures = count(&|r| matches!(r, Result::Failure(..)));
        let errors = count(&|r| matches!(r, Result::Error(..))) + usize::from(down.is_some());
        let skipped = count(&|r| matches!(r, Result::Skipped(_)));
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">",
            xml_escape(&name),
            cases.len() + usize::from(down.is_some()),
        );
        let class = xml_escape(&name);
        for (test, r) in &cases {
            let test = xml_escape(test);
            let details = |l: &Option<&Listed>| {
                let mut body = String::new();
                if let Some(l) = l {
                    failure_text(&mut body, l);
                }
                xml_escape(&body)
            };
            let _ = match r {
                Result::Pass(None) => writeln!(out, "    <testcase classname=\"{class}\" name=\"{test}\"/>"),
                Result::Pass(Some(note)) => writeln!(
                    out,
                    "    <testcase classname=\"{class}\" name=\"{test}\"><system-out>{}</system-out></testcase>",
                    xml_escape(note)
                ),
                Result::Failure(why, l) | Result::Error(why, l) => {
                    let tag = if matches!(r, Result::Error(..)) { "error" } else { "failure" };
                    writeln!(
                        out,
                        "    <testcase classname=\"{class}\" name=\"{test}\"><{tag} message=\"{}\">{}</{tag}></testcase>",
                        xml_escape(why),
                        details(l)
                    )
                }
                Result::Skipped(why) => writeln!(
                    out,
                    "    <testcase classname=\"{class}\" name=\"{test}\"><skipped message=\"{}\"/></testcase>",
                    xml_escape(why)
                ),
            };
        }
        super::report::suite_end(&mut out, &name, health);
    }
    super::report::inputs_junit(&mut out, s);
    out.push_str("</testsuites>\n");
    out
}
