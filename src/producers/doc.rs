//! `dwarfcheck producers`: every producer of a manifest
//! (`specs/producers/producers.yaml`) checked, its findings confirmed by
//! llvm-dwarfdump, and the whole written as `docs/producers.md`, with the
//! hand-written reading of each class (`specs/producers/classes.yaml`)
//! and its minimal case (`specs/cases/producers/`) checked again.

use super::{confirm, counts, gather, Finding};
use crate::consumer::builtin::{Fast, Reference};
use crate::elf::Counts;
use crate::runner::files::{Checked, FileChecker};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One producer of the manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Producer {
    /// Its name in the document (`clang-19 -O2 -g, sqlite3`).
    pub label: String,
    /// How its output was made (which package, command or fixture).
    pub built_by: String,
    /// Its files: paths or glob patterns, relative to the repository
    /// root unless absolute; `@self` is this executable.
    pub files: Vec<String>,
}

/// The write-up of one class of findings (one rule).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Class {
    /// The rule ID the reference cites.
    pub rule: String,
    /// The minimal case: `FILE#CASE`, the file relative to the repository
    /// root (under `specs/cases/producers/`).
    pub case: String,
    /// Why the expression is ill-formed: a reading of the spec, with its
    /// section.
    pub reading: String,
    /// A public report of the same behaviour, if one was found.
    #[serde(default)]
    pub report: Option<String>,
}

/// What checking one producer gave.
#[derive(Debug)]
pub struct ProducerRun {
    /// The manifest's entry.
    pub producer: Producer,
    /// Its files found.
    pub files: Vec<PathBuf>,
    /// Its patterns that matched no file.
    pub missing: Vec<String>,
    /// Every unit's `DW_AT_producer`, with counts.
    pub versions: BTreeMap<Option<String>, usize>,
    /// What extraction found.
    pub counts: Counts,
    /// Its findings, described and confirmed.
    pub findings: Vec<Finding>,
    /// How many findings there were (may exceed `findings.len()`).
    pub finding_count: usize,
    /// Inputs that could not be read, with why.
    pub unreadable: Vec<String>,
}

/// The files of `patterns` (see [`Producer::files`]), sorted, and the
/// patterns that matched none.
pub fn resolve(patterns: &[String], root: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut files = Vec::new();
    let mut missing = Vec::new();
    for p in patterns {
        if p == "@self" {
            match std::env::current_exe() {
                Ok(e) => files.push(e),
                Err(_) => missing.push(p.clone()),
            }
            continue;
        }
        let full = if Path::new(p).is_absolute() { PathBuf::from(p) } else { root.join(p) };
        let found: Vec<PathBuf> = glob::glob(&full.to_string_lossy())
            .map(|g| g.filter_map(Result::ok).filter(|f| f.is_file()).collect())
            .unwrap_or_default();
        if found.is_empty() {
            missing.push(p.clone());
        }
        files.extend(found);
    }
    files.sort();
    files.dedup();
    (files, missing)
}

/// Checks each producer's files (expressions only) and gathers, describes
/// and confirms their findings.
pub fn run(producers: &[Producer], root: &Path, progress: bool) -> Vec<ProducerRun> {
    producers
        .iter()
        .map(|p| {
            let (files, missing) = resolve(&p.files, root);
            let extract = crate::elf::Options { frames: false, unwind_samples: 0, ..Default::default() };
            let run =
                crate::runner::Options { progress, keep_details: 1, producer_findings: true, ..Default::default() };
            let checker = FileChecker {
                extract,
                budget: std::time::Duration::from_secs(600),
                reference: &Reference,
                fast: &Fast,
                others: &[],
                run,
            };
            let Checked { counts, summary, .. } = checker.check(&files);
            let mut findings = gather(&summary.producer_findings);
            confirm::confirm_all(&mut findings);
            let mut versions = BTreeMap::new();
            for f in &files {
                for (v, n) in crate::elf::describe::unit_producers(f).unwrap_or_default() {
                    *versions.entry(v).or_default() += n;
                }
            }
            ProducerRun {
                producer: p.clone(),
                files,
                missing,
                versions,
                counts,
                finding_count: summary.producer_finding_count,
                findings,
                unreadable: summary.unreadable_inputs.iter().map(|u| format!("{}: {}", u.input, u.reason)).collect(),
            }
        })
        .collect()
}

/// The minimal case `spec` (`FILE#CASE`) run by the reference: the rule it
/// cites, or why it could not be run.
fn minimal_case_rule(spec: &str, root: &Path) -> Result<(String, String), String> {
    let (file, name) = spec.split_once('#').ok_or_else(|| format!("`{spec}` is not FILE#CASE"))?;
    let cases = crate::case::yaml::load_file(&root.join(file))
        .map_err(|e| e.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))?;
    let case = cases
        .into_iter()
        .find_map(|c| match c {
            crate::case::Case::Expr(e) if e.name == name => Some(e),
            _ => None,
        })
        .ok_or_else(|| format!("{file} has no expression case `{name}`"))?;
    let (outcome, _) = crate::consumer::builtin::reference_outcome(&case);
    let text = crate::runner::input_text(&crate::case::Case::Expr(case.clone()));
    Ok((outcome.rule().map(|r| r.to_string()).unwrap_or_else(|| outcome.to_string()), text))
}

/// `docs/producers.md` from `runs` and the write-ups `classes`; `command`
/// is the command line that regenerates it. Errors (each a sentence): an
/// ill-formed class with no write-up, a write-up whose minimal case does
/// not give its rule, a finding llvm-dwarfdump's reading contradicts.
pub fn markdown(runs: &[ProducerRun], classes: &[Class], root: &Path, command: &str) -> (String, Vec<String>) {
    let mut errors = Vec::new();
    let mut out = String::new();
    let _ = writeln!(out, "# Producer findings: what real compilers emit that the spec rejects\n");
    let _ = writeln!(
        out,
        "Generated by `{command}` from the producers of `specs/producers/producers.yaml` and the write-ups of \
`specs/producers/classes.yaml`; do not edit by hand. Each expression of each file (every `DW_AT_location` and \
`DW_AT_frame_base`, every location-list entry) is evaluated by the reference interpreter in the synthetic \
machine state of real input (docs/architecture.md §1). An **ill-formed** verdict is a fault of the producer: \
the expression breaks a rule whatever the machine state. Each one is read again by llvm-dwarfdump \
(`dwarfcheck elf --findings --confirm`, `producers::confirm`): the same DIE's operations, assembled back, must \
be the same bytes, and the reference, run in a context built from llvm-dwarfdump's text alone (its base-type \
annotations, the enclosing frame base, the entry's range), must cite the same rule.\n"
    );
    let _ = writeln!(out, "## Producers\n");
    let _ = writeln!(
        out,
        "| producer | built by | version (`DW_AT_producer`, units) | files | expressions checked | ill-formed | evaluation errors | not judged | confirmed by llvm-dwarfdump |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|");
    for r in runs {
        let n = |k: &str| r.findings.iter().filter(|f| f.found.kind == k).count();
        let confirmed = r
            .findings
            .iter()
            .filter(|f| matches!(f.confirmation.as_ref().map(|c| &c.verdict), Some(confirm::Verdict::Confirmed)))
            .count();
        let mut grouped: BTreeMap<String, usize> = BTreeMap::new();
        for (p, n) in &r.versions {
            *grouped.entry(p.as_deref().map_or("none".to_string(), |p| format!("`{}`", short(p)))).or_default() += n;
        }
        let mut versions: Vec<(String, usize)> = grouped.into_iter().collect();
        versions.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut v: Vec<String> = versions.iter().take(3).map(|(p, n)| format!("{p} ({n})")).collect();
        if versions.len() > 3 {
            v.push(format!("and {} more", versions.len() - 3));
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} of {} |",
            r.producer.label,
            r.producer.built_by,
            v.join("; "),
            r.files.len(),
            r.counts.expr_cases(),
            n("ill-formed"),
            n("eval-error"),
            n("unsupported"),
            confirmed,
            n("ill-formed"),
        );
        for m in &r.missing {
            errors.push(format!("{}: no file matches `{m}` (run .ci/fixtures)", r.producer.label));
        }
        for u in &r.unreadable {
            errors.push(format!("{}: {u}", r.producer.label));
        }
        if r.finding_count > r.findings.len() {
            errors.push(format!("{}: {} findings, only {} kept", r.producer.label, r.finding_count, r.findings.len()));
        }
    }
    let _ = writeln!(out, "\n## Ill-formed expressions, by class\n");
    let by_rule = |kind: &str| {
        let mut m: BTreeMap<String, Vec<(&str, &Finding)>> = BTreeMap::new();
        for r in runs {
            for f in r.findings.iter().filter(|f| f.found.kind == kind) {
                m.entry(f.found.rule.clone()).or_default().push((r.producer.label.as_str(), f));
            }
        }
        m
    };
    let ill = by_rule("ill-formed");
    if ill.is_empty() {
        let _ = writeln!(out, "None.\n");
    }
    for (rule, found) in &ill {
        let _ = writeln!(out, "### `{rule}`\n");
        let _ = writeln!(out, "{}\n", found[0].1.rule_text);
        let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (p, f) in found {
            let e = per.entry(p).or_default();
            e.0 += 1;
            e.1 +=
                usize::from(matches!(f.confirmation.as_ref().map(|c| &c.verdict), Some(confirm::Verdict::Confirmed)));
        }
        let _ = writeln!(out, "| producer | expressions | confirmed by llvm-dwarfdump |\n|---|---:|---:|");
        for (p, (n, c)) in &per {
            let _ = writeln!(out, "| {p} | {n} | {c} |");
        }
        for (p, f) in found {
            if let Some(confirm::Verdict::Differs(d)) = f.confirmation.as_ref().map(|c| &c.verdict) {
                errors.push(format!(
                    "{p}: {} DIE {:#x}: llvm-dwarfdump's reading differs: {d}",
                    f.file,
                    f.die.unwrap_or(0)
                ));
            }
        }
        let (p, ex) = found[0];
        let d = ex.described.as_ref();
        let _ = writeln!(
            out,
            "\nFirst seen ({p}): `{}` DIE {:#x}{}{}, {}{}, pc {}:\n\n    {}\n",
            ex.file.rsplit('/').next().unwrap_or(&ex.file),
            ex.die.unwrap_or(0),
            d.and_then(|d| d.name.as_deref()).map_or(String::new(), |n| format!(" `{n}`")),
            d.and_then(|d| d.function.as_deref()).map_or(String::new(), |n| format!(" in `{n}`")),
            ex.attribute,
            ex.entry.map_or(String::new(), |i| format!(" entry {i}")),
            ex.pc_range,
            ex.found.input,
        );
        match classes.iter().find(|c| &c.rule == rule) {
            None => {
                errors.push(format!("class `{rule}` has no write-up in specs/producers/classes.yaml"));
                let _ = writeln!(out, "No write-up yet.\n");
            }
            Some(c) => {
                let _ = writeln!(out, "**Why it is ill-formed.** {}\n", one_paragraph(&c.reading));
                match minimal_case_rule(&c.case, root) {
                    Ok((got, text)) => {
                        let _ = writeln!(
                            out,
                            "**Minimal case** `{}`; the reference gives `{got}` on it:\n\n    {text}\n",
                            c.case
                        );
                        if &got != rule {
                            errors.push(format!("minimal case {} gives `{got}`, not `{rule}`", c.case));
                        }
                    }
                    Err(e) => errors.push(format!("minimal case {}: {e}", c.case)),
                }
                match &c.report {
                    Some(r) => {
                        let _ = writeln!(out, "**Public report:** <{r}>\n");
                    }
                    None => {
                        let _ = writeln!(out, "**Public report:** none found.\n");
                    }
                }
            }
        }
    }
    for (title, kind, note) in [
        (
            "Evaluation errors",
            "eval-error",
            "These depend on the synthetic machine state (a register or memory the state cannot give), so they are not faults of the producer by themselves.",
        ),
        (
            "Not judged",
            "unsupported",
            "The reference cannot evaluate these operations (vendor extensions outside the catalogue); they are counted, not judged.",
        ),
    ] {
        let _ = writeln!(out, "## {title}\n\n{note}\n");
        let mut rows = 0;
        let _ = writeln!(out, "| producer | rule or operation | expressions |\n|---|---|---:|");
        for r in runs {
            for (_, m) in counts(&r.findings, kind) {
                for (rule, n) in m {
                    let _ = writeln!(out, "| {} | `{rule}` | {n} |", r.producer.label);
                    rows += 1;
                }
            }
        }
        if rows == 0 {
            let _ = writeln!(out, "| (none) | | |");
        }
        out.push('\n');
    }
    for c in classes {
        if !ill.contains_key(&c.rule) {
            errors.push(format!("write-up of `{}` matches no finding (stale?)", c.rule));
        }
    }
    (out, errors)
}

/// A producer string without its command-line options (see
/// [`super::producer_label`]), at most 80 characters.
fn short(p: &str) -> String {
    let s = super::producer_label(Some(p));
    if s.chars().count() > 80 {
        s.chars().take(77).collect::<String>() + "..."
    } else {
        s
    }
}

fn one_paragraph(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
