//! Producer findings as text: a count table by producer and rule, then
//! each finding with its DIE, pc range, expression, rule and trace.

use super::{counts, Finding};
use std::fmt::Write as _;

/// The count tables (ill-formed, evaluation errors, unsupported), each a
/// row per producer and rule, then every finding in full. `kept` of
/// `total` findings are listed (the rest were only counted).
pub fn text(findings: &[Finding], total: usize) -> String {
    let mut out = String::new();
    let n = |k: &str| findings.iter().filter(|f| f.found.kind == k).count();
    let _ = writeln!(
        out,
        "producer findings: {total} (ill-formed {}, evaluation errors {}, unsupported {}){}",
        n("ill-formed"),
        n("eval-error"),
        n("unsupported"),
        if total > findings.len() { format!("; the first {} are listed", findings.len()) } else { String::new() }
    );
    for (kind, title) in [
        ("ill-formed", "ill-formed (faults of the producer), by producer and rule"),
        (
            "eval-error",
            "evaluation errors (in the synthetic machine state: not faults by themselves), by producer and rule",
        ),
        ("unsupported", "not judged (the reference lacks an operation), by producer"),
    ] {
        let c = counts(findings, kind);
        if c.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {title}:");
        let rows: Vec<(String, String, usize)> =
            c.into_iter().flat_map(|(p, rules)| rules.into_iter().map(move |(r, k)| (p.clone(), r, k))).collect();
        let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
        let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
        for (p, r, k) in rows {
            let _ = writeln!(out, "    {p:<w0$}  {r:<w1$}  {k:>6}");
        }
    }
    for f in findings {
        out.push_str(&one(f));
    }
    out
}

/// One finding in full, ending with a newline.
pub fn one(f: &Finding) -> String {
    let mut out = String::new();
    let what = match &f.described {
        Some(d) => {
            let name = d.name.as_deref().map_or(String::new(), |n| format!(" `{n}`"));
            let func = d.function.as_deref().map_or(String::new(), |n| format!(" in `{n}`"));
            format!(
                " ({}{name}{func}), unit {:#x}, producer {:?}",
                d.tag,
                d.unit_offset,
                d.producer.as_deref().unwrap_or("?")
            )
        }
        None => String::new(),
    };
    let die = f.die.map_or_else(|| f.found.origin.clone(), |d| format!("DIE {d:#x}"));
    let _ = writeln!(out, "\n{}: {die}{what}", f.file);
    let entry = f.entry.map_or(String::new(), |i| format!(" entry {i}"));
    let _ = writeln!(out, "  {}{entry}, pc {}", f.attribute, if f.pc_range.is_empty() { "?" } else { &f.pc_range });
    let _ = writeln!(out, "  expression: {}", f.found.input);
    let _ = writeln!(out, "  bytes:      {}", f.found.bytes);
    let at = f.found.at.map_or(String::new(), |a| format!(" at byte {a}"));
    if f.found.rule.is_empty() {
        let _ = writeln!(out, "  {}{at}: {}", f.found.kind, f.found.detail);
    } else {
        let _ = writeln!(out, "  {} [{}]{at}: {}", f.found.kind, f.found.rule, f.rule_text);
    }
    if let Some(c) = &f.confirmation {
        let v = match &c.verdict {
            super::confirm::Verdict::Confirmed => "confirmed: same operations, same rule on its reading".to_string(),
            super::confirm::Verdict::Differs(d) => format!("DIFFERS: {d}"),
            super::confirm::Verdict::NotChecked(d) => format!("not checked: {d}"),
        };
        let _ = writeln!(out, "  llvm-dwarfdump: {v}");
    }
    if !f.found.trace.is_empty() {
        let _ = writeln!(out, "  trace (reference):");
        for t in &f.found.trace {
            let _ = writeln!(out, "    {t}");
        }
    }
    out
}
