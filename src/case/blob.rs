//! What the case files of the binary formats (`.visa`, `.tru64`) share: a broken rule at a byte offset, the fault a case expects, hex text with comments, reading a YAML case file, and tallying the rules their cases exercise.

use dwarfcheck_core::rules::RuleId;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A broken rule of the catalogue at a byte offset of the input (the start
/// of the field that breaks it): what the vISA and Tru64 decoders and
/// validators report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fault {
    /// The rule broken.
    pub rule: RuleId,
    /// Byte offset in the input (the blob, or the procedure's data).
    pub at: usize,
    /// What was found, in words.
    pub detail: String,
}

impl Fault {
    /// A fault of `rule` at byte `at`.
    pub fn new(rule: RuleId, at: usize, detail: impl Into<String>) -> Fault {
        Fault { rule, at, detail: detail.into() }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {:#x}: {}", self.rule, self.at, self.detail)
    }
}

/// A fault as a case file expects it: `{ rule: ID, at: OFFSET }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectFault {
    /// Rule ID.
    pub rule: String,
    /// Byte offset.
    pub at: usize,
}

impl ExpectFault {
    /// The expected form of `f`.
    pub fn of(f: &Fault) -> ExpectFault {
        ExpectFault { rule: f.rule.to_string(), at: f.at }
    }
}

/// Bounds on the points a lowering check of a binary format evaluates
/// (`visa::check`, `tru64::check`): one point is one location list, row
/// table or unwinding step at one pc, run by both evaluators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointBudget {
    /// Points evaluated over one input (a blob, a procedure); the rest are
    /// skipped and the check's report says it was truncated.
    pub points: usize,
}

impl Default for PointBudget {
    /// 1,000,000 points: every point of the largest dumped vISA fixture
    /// (683,196 in `spill-tgllp-O0`'s blob) with room, about 2 s.
    fn default() -> Self {
        PointBudget { points: 1_000_000 }
    }
}

/// One disagreement of a lowering check at one point.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Disagreement {
    /// What was compared (`location`, `rows`, `unwind` for vISA;
    /// `evaluators`, `reading` for Tru64).
    pub what: &'static str,
    /// The variable or object.
    pub name: String,
    /// The pc (bytes; 0 where there is none).
    pub pc: u64,
    /// The reference's answer, rendered.
    pub reference: String,
    /// The other side (the fast evaluator's answer, or the direct
    /// reading's), rendered.
    pub other: String,
}

/// The most disagreements a check's report lists.
pub const MAX_LISTED: usize = 50;

/// Counts `d` in `count`, and lists it in `listed` while fewer than
/// [`MAX_LISTED`] are.
pub fn list_disagreement(listed: &mut Vec<Disagreement>, count: &mut usize, d: Disagreement) {
    *count += 1;
    if listed.len() < MAX_LISTED {
        listed.push(d);
    }
}

/// Compares the faults a case gave with those it expects.
///
/// Errors: both lists and the faults in words, when they differ.
pub fn compare_faults(got: &[Fault], want: &[ExpectFault]) -> Result<(), String> {
    let have: Vec<ExpectFault> = got.iter().map(ExpectFault::of).collect();
    if have == want {
        return Ok(());
    }
    let said: Vec<String> = got.iter().map(ToString::to_string).collect();
    Err(format!("faults {have:?}, expected {want:?} ({})", said.join("; ")))
}

/// Parses a case's hex text: byte pairs, whitespace anywhere, `#` starts a
/// comment to the end of the line.
///
/// Errors: a character that is not a hex digit, or an odd digit count (the
/// core's [`dwarfcheck_core::encoding::hex::parse_hex`] message).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let bare: Vec<&str> = text.lines().map(|l| l.split('#').next().unwrap_or("")).collect();
    dwarfcheck_core::encoding::hex::parse_hex(&bare.join(" ")).map_err(|e| e.to_string())
}

/// Reads one YAML case file into `T`.
///
/// Errors: the file cannot be read, or is not a `T` (serde's message), each
/// prefixed with the path.
pub fn load_yaml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    yaml_serde::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A case of a binary format, as rule coverage sees it.
pub trait RuleCase {
    /// Its name, unique in its file.
    fn name(&self) -> &str;
    /// The rule IDs it says it exercises.
    fn rules(&self) -> &[String];
    /// The faults it expects (empty for a clean input).
    fn expected_faults(&self) -> &[ExpectFault];
}

/// Implements [`RuleCase`] for a case type with `name`, `rules` and
/// `expect.faults` fields.
#[macro_export]
macro_rules! impl_rule_case {
    ($t:ty) => {
        impl $crate::case::blob::RuleCase for $t {
            fn name(&self) -> &str {
                &self.name
            }
            fn rules(&self) -> &[String] {
                &self.rules
            }
            fn expected_faults(&self) -> &[$crate::case::blob::ExpectFault] {
                &self.expect.faults
            }
        }
    };
}

/// Loads every file of `files` (with `load`) and runs each of its cases
/// (`cases` lists them, `run` runs one with its file): how many cases ran,
/// and every failure in words: a file that does not load, a case name
/// given twice in one file, a case that does not give its expectation.
pub fn run_files<F, C: RuleCase>(
    files: &[PathBuf],
    load: impl Fn(&Path) -> Result<F, String>,
    cases: impl Fn(&F) -> &[C],
    run: impl Fn(&F, &C) -> Result<(), String>,
) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut n = 0;
    for f in files {
        let file = match load(f) {
            Ok(file) => file,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let mut names = std::collections::BTreeSet::new();
        for c in cases(&file) {
            n += 1;
            if !names.insert(c.name()) {
                failures.push(format!("{}: case {} twice", f.display(), c.name()));
            }
            if let Err(e) = run(&file, c) {
                failures.push(format!("{}: {}: {e}", f.display(), c.name()));
            }
        }
    }
    (n, failures)
}

/// Problems with the cases of the catalogue's rules whose ID starts with
/// `prefix`: a rule no case names; an `ill-formed` or `unspecified` rule no
/// case expects a fault of (a missing negative case); a case naming, or
/// expecting a fault of, a rule not in the catalogue. Empty: none.
pub fn rule_coverage_problems<C: RuleCase>(prefix: &str, cases: &[C]) -> Vec<String> {
    use crate::catalogue::RuleKind;
    let cat = crate::catalogue::Catalogue::get();
    let mut out = Vec::new();
    for (id, rule) in cat.rules.iter().filter(|(k, _)| k.starts_with(prefix)) {
        if !cases.iter().any(|c| c.rules().iter().any(|r| r == id)) {
            out.push(format!("{id}: no case"));
        }
        let negative = matches!(rule.kind, RuleKind::IllFormed | RuleKind::Unspecified);
        if negative && !cases.iter().any(|c| c.expected_faults().iter().any(|f| &f.rule == id)) {
            out.push(format!("{id}: no case expecting its fault"));
        }
    }
    for c in cases {
        for r in c.rules().iter().chain(c.expected_faults().iter().map(|f| &f.rule)) {
            if !cat.rules.contains_key(r) {
                out.push(format!("{}: unknown rule {r}", c.name()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_comments_and_spacing() {
        assert_eq!(parse_hex("10 d0 # magic\n ad\tde").unwrap(), vec![0x10, 0xd0, 0xad, 0xde]);
        assert_eq!(parse_hex("10d0 # 0xzz is a comment\n").unwrap(), vec![0x10, 0xd0]);
        assert!(parse_hex("1").is_err());
        assert!(parse_hex("zz").is_err());
    }
}
