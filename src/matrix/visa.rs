//! The vISA debug info section of the conformance matrix: each `.visa` case judged for dwarfcheck's decoder (against the case's expectation) and for IGC's own decoder, `GenX_IR -decodedbg` (against dwarfcheck's decoding).
//!
//! Marks, per case (the same [`Mark`]s and folding as the expression and
//! CFI matrix, [`super::fold`]):
//!
//! - `dwarfcheck`: `pass` when decoding and validation give the case's
//!   expected faults, layout and counts, `fail` otherwise (a harness bug);
//! - `GenX_IR`:
//!   - on a blob the case calls well-formed: `pass` when every field it
//!     prints is dwarfcheck's ([`genx::compare`]), `fail` when one differs
//!     or it exits non-zero;
//!   - on a blob the case calls ill-formed (a decoding or validation
//!     fault): `pass` (diagnosed) when it exits non-zero, `accepted` when it
//!     prints a dump, with the class of what it did ([`genx::classify`]);
//!   - `out-of-edition` for a blob in a layout other than `igc-2022`, the
//!     only one the Debian build reads (docs/ambiguities.md, "Intel vISA
//!     debug info");
//!   - `fault` when it cannot be run to the end (timeout, output cap,
//!     signal).
//!
//! Without GenX_IR on `PATH` the section has the `dwarfcheck` column only
//! and says why.

use super::{fold, Label, Mark};
use crate::consumer::external::process::{RunBudget, TempDir};
use crate::runner::compare::Verdict;
use crate::visa::cases::{self, CaseOutcome, VisaCase};
use crate::visa::detect::decode_with;
use crate::visa::validate::validate;
use crate::visa::{genx, Layout};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// One `.visa` case and its two marks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisaRow {
    /// `file#name`.
    pub origin: String,
    /// Rule IDs the case exercises.
    pub rules: Vec<String>,
    /// dwarfcheck's decoder against the expectation.
    pub ours: Mark,
    /// GenX_IR's mark (`None`: GenX_IR was not run).
    pub genx: Option<Mark>,
    /// What GenX_IR did, in words: the first differing field, its class on
    /// an ill-formed blob, or why it was not judged.
    pub detail: String,
}

/// The whole section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VisaSection {
    /// GenX_IR's package version, when it ran.
    pub genx_version: Option<String>,
    /// Why GenX_IR was not run, when it was not.
    pub genx_skipped: Option<String>,
    /// Every case, in file then case order.
    pub rows: Vec<VisaRow>,
    /// Case files that could not be read, with why.
    pub unreadable: Vec<String>,
}

impl VisaSection {
    /// Whether dwarfcheck's decoder misses a case's expectation.
    pub fn harness_failed(&self) -> bool {
        self.rows.iter().any(|r| r.ours == Mark::Verdict(Verdict::Disagree)) || !self.unreadable.is_empty()
    }

    /// Rule ID to the rows exercising it.
    pub fn rules(&self) -> BTreeMap<&str, Vec<usize>> {
        super::rows_by_rule(self.rows.iter().map(|r| r.rules.as_slice()))
    }
}

/// Judges every case of the `.visa` files under `paths`; GenX_IR runs when
/// `run_genx` and it is on `PATH`, each run under `budget`.
pub fn build(paths: &[PathBuf], run_genx: bool, budget: RunBudget) -> VisaSection {
    let mut s = VisaSection::default();
    let genx_on = run_genx && crate::consumer::external::process::find_program(&["GenX_IR"]).is_some();
    if genx_on {
        s.genx_version = genx::version();
    } else {
        s.genx_skipped = Some(if run_genx { genx::GenxError::Missing.to_string() } else { "not asked for".into() });
    }
    for file in cases::case_files(paths) {
        let shown = file.display().to_string();
        let cf = match cases::load(&file) {
            Ok(cf) => cf,
            Err(e) => {
                s.unreadable.push(e);
                continue;
            }
        };
        for c in &cf.cases {
            let ours = match cases::run(c, cf.platform.as_deref()) {
                Ok(()) => Verdict::Agree,
                Err(_) => Verdict::Disagree,
            };
            let (genx, detail) = if genx_on {
                let (m, d) = judge_genx(c, cf.platform.as_deref(), budget);
                (Some(m), d)
            } else {
                (None, String::new())
            };
            s.rows.push(VisaRow {
                origin: format!("{shown}#{}", c.name),
                rules: c.rules.clone(),
                ours: Mark::Verdict(ours),
                genx,
                detail,
            });
        }
    }
    s
}

/// GenX_IR's mark on one case and what it did, in words (`n/a` for a
/// case whose own text is malformed: the `dwarfcheck` column fails it).
fn judge_genx(c: &VisaCase, platform: Option<&str>, budget: RunBudget) -> (Mark, String) {
    match cases::decode_case(c, platform) {
        Ok(o) => {
            let (v, d) = judge_outcome(o, budget);
            (Mark::Verdict(v), d)
        }
        Err(e) => (Mark::NotApplicable, format!("malformed case: {e}")),
    }
}

/// GenX_IR's verdict on a decoded case.
fn judge_outcome(o: CaseOutcome, budget: RunBudget) -> (Verdict, String) {
    let CaseOutcome { bytes, layout, platform, blob, faults } = o;
    let read_as = blob.as_ref().map(|b| b.layout).or(layout);
    if read_as.is_some_and(|l| l != Layout::Igc2022) {
        return (Verdict::OutsideEdition, "GenX_IR reads the igc-2022 layout only".into());
    }
    let dir = match TempDir::new() {
        Ok(d) => d,
        Err(e) => return (Verdict::Fault, format!("temporary directory: {e}")),
    };
    let file = dir.path().join("case.dbg");
    if let Err(e) = std::fs::write(&file, &bytes) {
        return (Verdict::Fault, format!("{}: {e}", file.display()));
    }
    let dump = match genx::run(&file, platform, budget) {
        Ok(d) => d,
        Err(genx::GenxError::Exit(code, last)) if !faults.is_empty() => {
            return (Verdict::IllFormedDiagnosed, format!("exit {code}: {last}"))
        }
        Err(e @ genx::GenxError::Exit(..)) => return (Verdict::Disagree, format!("rejects a well-formed blob: {e}")),
        Err(e) => return (Verdict::Fault, e.to_string()),
    };
    // GenX_IR reads igc-2022: judge it on what that layout makes of the
    // blob when detection found no layout.
    let faults = match (&blob, layout) {
        (None, None) => match decode_with(&bytes, Some(Layout::Igc2022)) {
            Ok(b) => validate(&b, platform),
            Err(f) => vec![f],
        },
        _ => faults,
    };
    if let Some(f) = faults.first() {
        let class = genx::classify(f, &dump);
        let what = class.unwrap_or("unclassified");
        if class == Some(genx::class::MAGIC_REPORTED_EXIT_0) {
            return (Verdict::IllFormedDiagnosed, format!("reports the magic and stops ({what})"));
        }
        return (Verdict::IllFormedAccepted, format!("prints a dump ({what}) where dwarfcheck finds {}", f.rule));
    }
    let Some(b) = blob else { return (Verdict::Fault, "no decoding to compare".into()) };
    match genx::compare(&genx::render(&b, platform), &dump).first() {
        None => (Verdict::Agree, "every field agrees".into()),
        Some(d) => (Verdict::Disagree, format!("{}: dwarfcheck {}, GenX_IR {}", d.field, d.ours, d.genx)),
    }
}

/// The section as markdown: a rule x decoder table, then each GenX_IR
/// case that is not a pass. `link` turns a case origin into a link text.
pub fn markdown(s: &VisaSection, link: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## vISA debug info decoders\n");
    let _ = writeln!(
        out,
        "The `.visa` cases ({} of them): dwarfcheck's decoder against each case's expectation, and IGC's \
         `GenX_IR -decodedbg` against dwarfcheck's decoding (a well-formed blob) or on whether it rejects an \
         ill-formed one (src/matrix/visa.rs).\n",
        s.rows.len()
    );
    match (&s.genx_version, &s.genx_skipped) {
        (_, Some(why)) => {
            let _ = writeln!(out, "GenX_IR not run: {why}.\n");
        }
        (v, None) => {
            let _ = writeln!(out, "GenX_IR: libigc-tools {}.\n", v.as_deref().unwrap_or("(version unknown)"));
        }
    }
    for u in &s.unreadable {
        let _ = writeln!(out, "- unreadable case file: {u}");
    }
    let genx = s.genx_skipped.is_none();
    let _ = writeln!(out, "| rule | cases | dwarfcheck |{}", if genx { " GenX_IR |" } else { "" });
    let _ = writeln!(out, "|---|---:|---|{}", if genx { "---|" } else { "" });
    for (rule, rows) in s.rules() {
        let ours: Vec<Mark> = rows.iter().map(|&i| s.rows[i].ours).collect();
        let mut line = format!("| `{rule}` | {} | {} |", rows.len(), fold(&ours));
        if genx {
            let marks: Vec<Mark> = rows.iter().filter_map(|&i| s.rows[i].genx).collect();
            let _ = write!(line, " {} |", fold(&marks));
        }
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let notable: Vec<&VisaRow> = s
        .rows
        .iter()
        .filter(|r| r.genx.is_some_and(|m| !matches!(Label::of(m), Label::Pass | Label::OutOfEdition)))
        .collect();
    if !notable.is_empty() {
        let _ = writeln!(out, "GenX_IR cases that are not a pass:\n");
        for r in notable {
            let label = r.genx.map(|m| Label::of(m).text()).unwrap_or("");
            let _ = writeln!(out, "- {} ({label}): {}", link(&r.origin), r.detail);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled() -> Vec<PathBuf> {
        vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/visa")]
    }

    fn row<'a>(s: &'a VisaSection, name: &str) -> &'a VisaRow {
        s.rows.iter().find(|r| r.origin.ends_with(&format!("#{name}"))).unwrap_or_else(|| panic!("no case {name}"))
    }

    /// dwarfcheck's decoder meets every bundled `.visa` case; without
    /// GenX_IR asked for, its column is absent and the section says so.
    #[test]
    fn dwarfcheck_column_passes_every_bundled_case() {
        let s = build(&bundled(), false, RunBudget::default());
        assert!(s.rows.len() >= 31, "{} cases", s.rows.len());
        assert!(!s.harness_failed(), "{:?}", s.rows.iter().filter(|r| r.ours != Mark::Verdict(Verdict::Agree)));
        assert!(s.rows.iter().all(|r| r.genx.is_none()));
        let md = markdown(&s, &|o| o.to_string());
        assert!(md.contains("GenX_IR not run: not asked for."), "{md}");
        assert!(md.contains("| `visa.header.magic` | 2 | pass 2 |\n"), "{md}");
    }

    /// GenX_IR's marks, hand-derived from what the cases hold: the magic
    /// case is reported (diagnosed); a blob cut in the frame is printed
    /// whole (reads past the end); an interval with start after end is
    /// printed as read (no validation); every case that is not a pass has
    /// a class. Skipped without GenX_IR.
    #[test]
    fn genx_marks_are_classified() {
        if crate::consumer::external::process::find_program(&["GenX_IR"]).is_none() {
            eprintln!("GenX_IR is not installed (libigc-tools); skipped");
            return;
        }
        let s = build(&bundled(), true, RunBudget::default());
        let genx = |n: &str| row(&s, n).genx;
        assert_eq!(genx("magic-wrong"), Some(Mark::Verdict(Verdict::IllFormedDiagnosed)));
        assert_eq!(genx("blob-cut-in-the-frame"), Some(Mark::Verdict(Verdict::IllFormedAccepted)));
        assert!(row(&s, "blob-cut-in-the-frame").detail.contains(genx::class::READS_PAST_END));
        assert!(row(&s, "interval-start-after-end").detail.contains(genx::class::NO_VALIDATION));
        assert!(s.rows.iter().any(|r| r.genx == Some(Mark::Verdict(Verdict::Agree))));
        for r in &s.rows {
            assert!(!r.detail.contains("unclassified"), "{}: {}", r.origin, r.detail);
            assert_ne!(r.genx, Some(Mark::Verdict(Verdict::Disagree)), "{}: {}", r.origin, r.detail);
        }
    }
}
