//! Reports of a run: a human summary, JSON (`--json`) and JUnit XML
//! (`--junit FILE`).

use super::compare::Verdict;
use super::{Finding, InputNote, Listed, Summary};
use crate::consumer::health::HealthReport;
use dwarfcheck_core::outcome::{CfiOutcome, Failure};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by [`use_color`]: the text summary marks its verdict lines with ANSI
/// colours.
static COLOR: AtomicBool = AtomicBool::new(false);

/// Whether [`text`] colours its verdict lines (`--color`): findings in
/// red, "no disagreements" in green. Off by default.
pub fn use_color(on: bool) {
    COLOR.store(on, Ordering::Relaxed);
}

/// `s` in ANSI colour `code` (31 red, 32 green) when colours are on.
fn paint(s: &str, code: u8) -> String {
    if COLOR.load(Ordering::Relaxed) {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// A CFI outcome as one line of text (tables as llvm-dwarfdump-like rows).
pub fn cfi_text(o: &CfiOutcome) -> String {
    match o {
        CfiOutcome::Table(t) => {
            let rows: Vec<String> = t.rows.iter().map(|r| r.to_string()).collect();
            format!("{} row(s): {}", t.rows.len(), rows.join("; "))
        }
        CfiOutcome::Failed(Failure::IllFormed { rule, at }) => format!("ill-formed [{rule}]{}", section_offset(at)),
        CfiOutcome::Failed(Failure::EvalError { rule, at }) => {
            format!("evaluation error [{rule}]{}", section_offset(at))
        }
        CfiOutcome::Failed(Failure::Budget { budget, at }) => {
            format!("budget exceeded: {budget:?}{}", section_offset(at))
        }
        CfiOutcome::Failed(Failure::Unsupported { what }) => format!("unsupported: {what}"),
        CfiOutcome::Failed(Failure::ConsumerFault { what }) => format!("consumer fault: {what}"),
    }
}

fn section_offset(at: &Option<u64>) -> String {
    at.map(|a| format!(" at section offset {a:#x}")).unwrap_or_default()
}

pub(crate) fn finding_text(f: &Finding) -> String {
    match f {
        Finding::ReferenceVsExpect => "reference does not meet the hand-derived expectation".into(),
        Finding::FastVsExpect => "fast does not meet the hand-derived expectation".into(),
        Finding::FastVsReference => "fast and reference disagree".into(),
        Finding::Consumer { consumer, gated } => {
            format!("{consumer} disagrees with the reference{}", if *gated { " (gated)" } else { "" })
        }
        Finding::ConsumerFault { consumer, gated } => {
            format!("{consumer} gave no answer (fault){}", if *gated { " (gated)" } else { "" })
        }
    }
}

/// Lines of a consumer's stderr shown in the text summary (all of it, up
/// to the cap, is in the JSON).
const STDERR_LINES: usize = 12;

/// One consumer's faults and down state, and the end of its stderr, as
/// indented lines; nothing for a consumer without faults.
pub(crate) fn health_text(out: &mut String, name: &str, h: &HealthReport) {
    if h.faults == 0 && h.down.is_none() {
        return;
    }
    let _ = write!(out, "  {name}: {} fault(s), {} answer(s)", h.faults, h.answered);
    match &h.down {
        Some(d) => {
            let _ = writeln!(
                out,
                "; declared DOWN after {} faults in a row, {:.1} s after it started, having answered {}: {} case(s) \
                 not asked; last fault: {}",
                d.faults_in_a_row,
                d.after_ms as f64 / 1000.0,
                d.answered_before,
                h.not_asked,
                d.last_fault
            );
        }
        None => {
            let _ = writeln!(out);
        }
    }
    if let Some(e) = &h.stderr {
        let lines: Vec<&str> = e.text.lines().collect();
        let shown = &lines[lines.len().saturating_sub(STDERR_LINES)..];
        let _ = writeln!(
            out,
            "  {name} stderr ({} bytes{}; last {} line(s)):",
            e.bytes,
            if e.truncated { ", head and tail kept" } else { "" },
            shown.len()
        );
        for l in shown {
            let _ = writeln!(out, "    | {l}");
        }
    }
}

/// The human summary: per-consumer counts, then the first `show` findings
/// with disassembly, every consumer's outcome and the reference's trace.
pub fn text(title: &str, s: &Summary, show: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{title}: {} expression cases, {} CFI cases ({} with virtual unwinding)",
        s.expr_cases, s.cfi_cases, s.unwind_cases
    );
    if s.unwind_cases > 0 {
        let ends: Vec<String> = s.unwind_ends.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(out, "  reference unwinding: {} steps; ends: {}", s.unwind_steps, ends.join(", "));
    }
    if s.cfi_cases > 0 {
        let _ = writeln!(out, "  reference row tables: {} rows", s.reference_rows);
    }
    let kinds: Vec<String> = s.reference_kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(out, "  reference outcomes: {}", kinds.join(", "));
    if !s.module_rules.is_empty() {
        let counts = s.module_rules.iter().map(|(r, at)| (r.clone(), at.len())).collect();
        by_rule(&mut out, "module rules broken, by rule", &counts);
    }
    by_rule(&mut out, "ill-formed input (reference), by rule", &s.reference_rules);
    by_rule(
        &mut out,
        "evaluation errors (reference; they depend on the machine state, not faults of the input)",
        &s.reference_eval_errors,
    );
    if !s.unspecified_rules.is_empty() {
        let u: Vec<String> = s.unspecified_rules.iter().map(|(r, n)| format!("{r} {n}")).collect();
        let _ = writeln!(out, "  answers resting on unspecified rules: {}", u.join(", "));
    }
    for (consumer, rules) in &s.accepted_ill_formed {
        let u: Vec<String> = rules.iter().map(|(r, n)| format!("{r} {n}")).collect();
        let _ = writeln!(out, "  {consumer} gave an answer to ill-formed input: {}", u.join(", "));
    }
    if s.expectations > 0 {
        let _ = writeln!(
            out,
            "  hand-derived expectations: {} checked; reference met {}, fast met {}",
            s.expectations, s.expectations_met_reference, s.expectations_met_fast
        );
    }
    let used: Vec<Verdict> = Verdict::ALL
        .iter()
        .copied()
        .filter(|v| s.verdicts.values().any(|m| m.get(v).copied().unwrap_or(0) > 0))
        .collect();
    // Columns as wide as their widest cell, so long consumer names
    // (protocol consumers name themselves) keep the table aligned.
    let first = s.verdicts.keys().map(|n| n.chars().count()).chain([8]).max().unwrap_or(8);
    let widths: Vec<usize> = used
        .iter()
        .map(|v| {
            let n = s.verdicts.values().map(|m| m.get(v).copied().unwrap_or(0).to_string().len()).max().unwrap_or(1);
            n.max(v.label().len())
        })
        .collect();
    let _ = write!(out, "  {:<first$}", "consumer");
    for (v, w) in used.iter().zip(&widths) {
        let _ = write!(out, "  {:>w$}", v.label());
    }
    let _ = writeln!(out);
    for (name, m) in &s.verdicts {
        let _ = write!(out, "  {name:<first$}");
        for (v, w) in used.iter().zip(&widths) {
            let _ = write!(out, "  {:>w$}", m.get(v).copied().unwrap_or(0));
        }
        let _ = writeln!(out);
    }
    for (name, h) in &s.health {
        health_text(&mut out, name, h);
    }
    if s.failure_count == 0 {
        let _ = writeln!(out, "  {}", paint("no disagreements", 32));
    } else {
        let line = format!(
            "{} finding(s): {} disagreement(s), {} fault(s){}",
            s.failure_count,
            s.failure_count - s.fault_count,
            s.fault_count,
            if s.failed { "; the run FAILS" } else { " (none gated)" }
        );
        let _ = writeln!(out, "  {}", paint(&line, 31));
    }
    if s.failed && s.failure_count == 0 {
        let _ = writeln!(out, "  a gated consumer was declared down; the run FAILS");
    }
    for f in s.failures.iter().take(show) {
        let _ = writeln!(out);
        failure_text(&mut out, f);
    }
    if s.failure_count > show.min(s.failures.len()) {
        let _ = writeln!(out, "\n  ... {} more (use --json for all)", s.failure_count - show.min(s.failures.len()));
    }
    inputs_text(&mut out, s);
    out
}

/// One input that was not checked in full, as text.
fn note_text(n: &InputNote) -> String {
    let mut left = Vec::new();
    if n.expr_cases_not_checked > 0 {
        left.push(format!("{} expression cases", n.expr_cases_not_checked));
    }
    if n.cfi_cases_not_checked > 0 {
        left.push(format!("{} CFI cases", n.cfi_cases_not_checked));
    }
    let mut what = if left.is_empty() { String::new() } else { format!("{} not checked", left.join(" and ")) };
    if n.units_not_read > 0 {
        let sep = if what.is_empty() { "" } else { "; " };
        what = format!("{what}{sep}{} compilation units not read", n.units_not_read);
    }
    if what.is_empty() {
        format!("{}: {}", n.input, n.reason)
    } else {
        format!("{}: {} ({what})", n.input, n.reason)
    }
}

/// The end of the text summary: inputs checked in part, then inputs not
/// checked at all.
fn inputs_text(out: &mut String, s: &Summary) {
    if s.expr_cases_not_checked + s.cfi_cases_not_checked > 0 {
        let _ = writeln!(
            out,
            "\n  NOT CHECKED (time budget): {} expression cases, {} CFI cases",
            s.expr_cases_not_checked, s.cfi_cases_not_checked
        );
    }
    if !s.unfinished_inputs.is_empty() {
        let _ = writeln!(out, "\n  inputs checked only in part ({}):", s.unfinished_inputs.len());
        for n in &s.unfinished_inputs {
            let _ = writeln!(out, "    {}", note_text(n));
        }
    }
    if !s.unreadable_inputs.is_empty() {
        let _ = writeln!(out, "\n  inputs not checked ({}):", s.unreadable_inputs.len());
        for n in &s.unreadable_inputs {
            let _ = writeln!(out, "    {}", note_text(n));
        }
    }
}

pub(crate) fn failure_text(out: &mut String, f: &Listed) {
    let _ = writeln!(out, "  == {}: {} ({})", finding_text(&f.finding), f.case, f.origin);
    if !f.rules.is_empty() {
        let _ = writeln!(out, "     rules:    {}", f.rules.join(", "));
    }
    let _ = writeln!(out, "     input:    {}", f.input);
    if let Some(e) = &f.expected {
        let _ = writeln!(out, "     expected: {e}");
    }
    for (n, o) in &f.outcomes {
        let _ = writeln!(out, "     {:<9} {o}", format!("{n}:"));
    }
    if !f.trace.is_empty() {
        let _ = writeln!(out, "     reference trace:");
        for t in &f.trace {
            let _ = writeln!(out, "       {t}");
        }
    }
}

/// The summary as JSON.
pub fn json(title: &str, s: &Summary) -> String {
    let v = serde_json::json!({ "job": title, "summary": s });
    serde_json::to_string_pretty(&v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// `s` as XML text: markup characters escaped, and control characters XML
/// 1.0 cannot hold (a consumer's stderr may have them) shown as `?`.
pub(crate) fn xml_escape(s: &str) -> String {
    let s: String = s.chars().map(|c| if c < ' ' && !matches!(c, '\t' | '\n' | '\r') { '?' } else { c }).collect();
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The summary as JUnit XML: one test suite per consumer; each
/// disagreement is a failed test case, each fault a test case in error,
/// a consumer declared down one more test case in error (with the end of
/// its stderr), and the agreeing cases are one passed test case per
/// consumer (real inputs have hundreds of thousands of cases).
pub fn junit(title: &str, s: &Summary) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(out, "<testsuites name=\"{}\">", xml_escape(title));
    let mut suites: Vec<(String, Vec<&Listed>)> = vec![("expectations".into(), Vec::new())];
    for name in s.verdicts.keys() {
        suites.push((name.clone(), Vec::new()));
    }
    for f in &s.failures {
        let suite = match &f.finding {
            Finding::ReferenceVsExpect | Finding::FastVsExpect => "expectations".to_string(),
            Finding::FastVsReference => "fast".to_string(),
            Finding::Consumer { consumer, .. } | Finding::ConsumerFault { consumer, .. } => consumer.clone(),
        };
        if let Some(entry) = suites.iter_mut().find(|(n, _)| *n == suite) {
            entry.1.push(f);
        }
    }
    for (name, listed) in suites {
        let health = s.health.get(&name);
        let down = health.and_then(|h| h.down.as_ref());
        let faults = listed.iter().filter(|f| matches!(f.finding, Finding::ConsumerFault { .. })).count();
        let errors = faults + usize::from(down.is_some());
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{errors}\">",
            xml_escape(&name),
            listed.len() + 1 + usize::from(down.is_some()),
            listed.len() - faults
        );
        let agreed = if name == "expectations" {
            format!("{} expectation(s) checked", s.expectations)
        } else {
            let n = s.verdicts.get(&name).and_then(|m| m.get(&Verdict::Agree)).copied().unwrap_or(0);
            format!("{n} case(s) agree with the reference")
        };
        let _ = writeln!(out, "    <testcase classname=\"{}\" name=\"{}\"/>", xml_escape(&name), xml_escape(&agreed));
        for f in listed {
            let mut body = String::new();
            failure_text(&mut body, f);
            let tag = if matches!(f.finding, Finding::ConsumerFault { .. }) { "error" } else { "failure" };
            let _ = writeln!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\"><{tag} message=\"{}\">{}</{tag}></testcase>",
                xml_escape(&name),
                xml_escape(&super::junit::CaseLabel { origin: f.origin.clone(), name: f.case.clone() }.test_name(
                    match &f.finding {
                        Finding::ReferenceVsExpect => "reference",
                        Finding::FastVsExpect | Finding::FastVsReference => "fast",
                        Finding::Consumer { consumer, .. } | Finding::ConsumerFault { consumer, .. } => consumer,
                    }
                )),
                xml_escape(&finding_text(&f.finding)),
                xml_escape(&body)
            );
        }
        suite_end(&mut out, &name, health);
    }
    inputs_junit(&mut out, s);
    out.push_str("</testsuites>\n");
    out
}

/// The end of a consumer's JUnit test suite: one test case in error when
/// it was declared down (with its faults and the end of its stderr), its
/// stderr as `system-err`, and the closing tag.
pub(crate) fn suite_end(out: &mut String, name: &str, health: Option<&HealthReport>) {
    if let Some((h, d)) = health.and_then(|h| h.down.as_ref().map(|d| (h, d))) {
        let mut body = String::new();
        health_text(&mut body, name, h);
        let _ = writeln!(
            out,
            "    <testcase classname=\"{}\" name=\"consumer down: {} case(s) not asked\"><error message=\"{}\">{}</error></testcase>",
            xml_escape(name),
            h.not_asked,
            xml_escape(&format!("declared down after {} faults in a row: {}", d.faults_in_a_row, d.last_fault)),
            xml_escape(&body)
        );
    }
    if let Some(e) = health.and_then(|h| h.stderr.as_ref()) {
        let _ = writeln!(out, "    <system-err>{}</system-err>", xml_escape(&e.text));
    }
    let _ = writeln!(out, "  </testsuite>");
}

/// The suite `inputs` of the JUnit report, when some input was not checked
/// in full: an unreadable input is an error, an input checked in part is
/// skipped in part (its note says what was left).
pub(crate) fn inputs_junit(out: &mut String, s: &Summary) {
    if s.unreadable_inputs.is_empty() && s.unfinished_inputs.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  <testsuite name=\"inputs\" tests=\"{}\" errors=\"{}\" skipped=\"{}\">",
        s.unreadable_inputs.len() + s.unfinished_inputs.len(),
        s.unreadable_inputs.len(),
        s.unfinished_inputs.len()
    );
    for (notes, element) in [(&s.unreadable_inputs, "error"), (&s.unfinished_inputs, "skipped")] {
        for n in notes {
            let _ = writeln!(
                out,
                "    <testcase classname=\"inputs\" name=\"{}\"><{element} message=\"{}\"/></testcase>",
                xml_escape(&n.input),
                xml_escape(&note_text(n))
            );
        }
    }
    let _ = writeln!(out, "  </testsuite>");
}

/// One line of counts by rule, the largest first (at most eight named).
fn by_rule(out: &mut String, what: &str, counts: &std::collections::BTreeMap<String, usize>) {
    if counts.is_empty() {
        return;
    }
    let mut rules: Vec<(&String, &usize)> = counts.iter().collect();
    rules.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = rules.iter().take(8).map(|(r, n)| format!("{r} {n}")).collect();
    let more = if rules.len() > 8 { format!(", +{} more rules", rules.len() - 8) } else { String::new() };
    let _ = writeln!(out, "  {what}: {}{more}", top.join(", "));
}
