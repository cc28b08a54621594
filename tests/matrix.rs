//! `dwarfcheck matrix`: a consumer with a deliberately wrong answer shows
//! `fail` in its column with links to its cases; the document is
//! deterministic; `--check` compares with the file on disk; a harness bug
//! (an unmet expectation) exits 1.

use dwarfcheck::case::{Case, CfiCase, ExprCase};
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::{Answer, Consumer, FailureClass, Support};
use dwarfcheck::edition::Edition;
use dwarfcheck::matrix::render::{markdown, RenderOptions};
use dwarfcheck::matrix::reports::KnownReport;
use dwarfcheck::matrix::{self, Cell, Label};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The reference's answer, plus 1 on every value (locations unchanged).
struct PlusOne;

impl Consumer for PlusOne {
    fn name(&self) -> &str {
        "plus-one"
    }
    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu, Edition::Hetero2020], expr: true, cfi: false }
    }
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        match Reference.evaluate(case) {
            Outcome::Value(v) => Outcome::Value(Value::from_u128(v.ty, v.to_u128() + 1)),
            o => o,
        }
    }
    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: "expressions only".into() })
    }
    /// Class P1 for every value it got wrong.
    fn failure_class(&self, _case: &Case, _r: Answer<'_>, answer: Answer<'_>) -> Option<FailureClass> {
        matches!(answer, Answer::Expr(Outcome::Value(_))).then(|| FailureClass {
            id: "P1".into(),
            explanation: "adds one to every value".into(),
            docs: None,
            report: None,
        })
    }
}

/// Three expression cases and one CFI case. Hand-derived:
/// - `plus`: 30 + 12 = 42 (hetero-2020 DW_OP_plus); plus-one says 43, a
///   different value where the spec fixes one: `fail` for `op.plus.adds`.
/// - `minus`: 10 - 3 = 7; plus-one says 8: `fail` for `op.minus.subtracts`.
/// - `reg0`: the register location of register 0, no value: plus-one
///   returns it unchanged, `pass` for `op.reg.same-as-regx`.
/// - `advance`: a CFI case; plus-one does no CFI, so `n/a` for
///   `cfi.advance-loc-n`.
const CASES: &str = r#"target: x86_64
cases:
  - name: plus
    rules: [op.plus.adds]
    context: { result: value }
    expr: "DW_OP_lit30 DW_OP_lit12 DW_OP_plus"
    expect:
      value: 42
  - name: minus
    rules: [op.minus.subtracts]
    context: { result: value }
    expr: "DW_OP_lit10 DW_OP_lit3 DW_OP_minus"
    expect:
      value: 7
  - name: reg0
    rules: [op.reg.same-as-regx]
    context: { result: location }
    expr: "DW_OP_reg0"
    expect:
      location: { register: 0 }
  - name: advance
    rules: [cfi.advance-loc-n]
    cfi:
      cie: { version: 4, code_align: 1, data_align: -8, ra: 16, instructions: "DW_CFA_def_cfa: reg7 +8" }
      fde: { pc_begin: 0x1000, pc_range: 0x20, instructions_bytes: "02 02 0e 10" }
"#;

/// A fresh directory under the system temp dir.
fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dwarfcheck-matrix-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_cases(dir: &Path, text: &str) -> PathBuf {
    let f = dir.join("m.yaml");
    std::fs::write(&f, text).unwrap();
    f
}

fn load(f: &Path) -> Vec<Case> {
    dwarfcheck::case::yaml::load_file(f).unwrap()
}

fn render(dir: &Path, cases: &[Case], reports: &[KnownReport]) -> (matrix::Matrix, String) {
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(PlusOne)];
    let m = matrix::build(cases, &Reference, &Fast, &others, vec![("tool".into(), "not here".into())], reports);
    let o = RenderOptions {
        command: "dwarfcheck matrix m.yaml".into(),
        sources: vec!["m.yaml".into()],
        link_dir: Some(dir.into()),
    };
    let text = markdown(&m, &o);
    (m, text)
}

/// The text of the first fenced block titled `title` in `section`.
fn block<'a>(section: &'a str, title: &str) -> &'a str {
    let head = format!("{title}:\n\n```text\n");
    let at = section.find(&head).unwrap_or_else(|| panic!("no {title} block")) + head.len();
    let len = section[at..].find("\n```").unwrap();
    &section[at..at + len]
}

/// The table row of `rule`.
fn row<'a>(text: &'a str, rule: &str) -> &'a str {
    let head = format!("| `{rule}` |");
    text.lines().find(|l| l.starts_with(&head)).unwrap_or_else(|| panic!("no row for {rule}"))
}

#[test]
fn wrong_consumer_fails_with_links_to_its_cases() {
    let dir = temp_dir("wrong");
    let f = write_cases(&dir, CASES);
    let cases = load(&f);
    let report = [KnownReport { consumer: "plus-one", class: "P1", url: "https://example.invalid/p1" }];
    let (m, text) = render(&dir, &cases, &report);
    assert!(!m.harness_failed(), "reference and fast meet every expectation");
    let col = m.columns.iter().position(|c| c.name == "plus-one").unwrap();
    assert_eq!(col, 2, "reference, fast, then the third parties");
    assert_eq!(m.cell("op.plus.adds", col), Cell { label: Label::Fail, count: 1, of: 1 });
    assert_eq!(m.cell("op.minus.subtracts", col), Cell { label: Label::Fail, count: 1, of: 1 });
    assert_eq!(m.cell("op.reg.same-as-regx", col), Cell { label: Label::Pass, count: 1, of: 1 });
    assert_eq!(m.cell("cfi.advance-loc-n", col).label, Label::NotApplicable);
    // The reference and fast pass everything; the CFI case has no
    // expectation, so the reference has no oracle there.
    assert_eq!(m.cell("op.plus.adds", 0).to_string(), "pass 1");
    assert_eq!(m.cell("op.plus.adds", 1).to_string(), "pass 1");
    assert_eq!(m.cell("cfi.advance-loc-n", 0).to_string(), "no oracle 1");
    // Each fail cell links its case: `plus` is the third line of m.yaml,
    // `minus` the ninth; the link is relative to the output directory.
    assert_eq!(
        row(&text, "op.plus.adds"),
        "| `op.plus.adds` | semantics | 1 | pass 1 | pass 1 | fail 1 ([m.yaml#plus](m.yaml#L3)) |"
    );
    assert!(row(&text, "op.minus.subtracts").ends_with("| fail 1 ([m.yaml#minus](m.yaml#L9)) |"));
    assert!(row(&text, "op.reg.same-as-regx").ends_with("| pass 1 |"));
    assert!(row(&text, "cfi.advance-loc-n").ends_with("| n/a |"));
    // Two failures, both of class P1, with the report from the table.
    assert_eq!(m.failures.len(), 2);
    assert!(text.contains(
        "- **P1**: adds one to every value; known public report: <https://example.invalid/p1>. Cases: \
         [m.yaml#plus](m.yaml#L3), [m.yaml#minus](m.yaml#L9)"
    ));
    // The failure in full: the reference's value 42 (0x2a), the
    // consumer's 43 (0x2b), both of the generic type.
    let at = text.find("### plus-one: m.yaml#plus").expect("failure section");
    let section = &text[at..];
    assert!(block(section, "reference").starts_with("value ") && block(section, "reference").ends_with("2a"));
    assert!(block(section, "plus-one").starts_with("value ") && block(section, "plus-one").ends_with("2b"));
    assert_eq!(block(section, "input"), "DW_OP_lit30, DW_OP_lit12, DW_OP_plus");
    // Skipped consumers are named with the reason.
    assert!(text.contains("- `tool`: not here"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rendering_is_deterministic_and_has_no_absolute_paths() {
    let dir = temp_dir("det");
    let f = write_cases(&dir, CASES);
    let (_, a) = render(&dir, &load(&f), &[]);
    let (_, b) = render(&dir, &load(&f), &[]);
    assert_eq!(a, b);
    assert!(!a.contains(dir.to_str().unwrap()), "links are relative");
    assert!(a.contains("no public report found"));
    let _ = std::fs::remove_dir_all(&dir);
}

fn dwarfcheck(args: &[&str]) -> i32 {
    let out = Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).args(args).output().unwrap();
    out.status.code().unwrap_or(-1)
}

#[test]
fn check_compares_with_the_file_on_disk() {
    let dir = temp_dir("check");
    let f = write_cases(&dir, CASES);
    let out = dir.join("conformance.md");
    let (fs, os) = (f.to_str().unwrap(), out.to_str().unwrap());
    assert_eq!(dwarfcheck(&["matrix", fs, "--consumers", "gimli", "--out", os]), 0);
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.contains("| gimli |"));
    assert_eq!(dwarfcheck(&["matrix", fs, "--consumers", "gimli", "--out", os, "--check"]), 0);
    std::fs::write(&out, format!("{written}\n")).unwrap();
    assert_eq!(dwarfcheck(&["matrix", fs, "--consumers", "gimli", "--out", os, "--check"]), 1);
    // --check wrote nothing.
    assert_eq!(std::fs::read_to_string(&out).unwrap(), format!("{written}\n"));
    // A missing file is not up to date either.
    std::fs::remove_file(&out).unwrap();
    assert_eq!(dwarfcheck(&["matrix", fs, "--consumers", "none", "--out", os, "--check"]), 1);
    // An unknown consumer is a usage error.
    assert_eq!(dwarfcheck(&["matrix", fs, "--consumers", "nope", "--out", os]), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unmet_expectation_is_told_apart_from_a_harness_bug() {
    let dir = temp_dir("harness");
    // 30 + 12 is 42, not 41: the reference cannot meet this expectation.
    let f = write_cases(&dir, &CASES.replace("value: 42", "value: 41"));
    let out = dir.join("conformance.md");
    let run = Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["matrix", f.to_str().unwrap(), "--consumers", "none", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("1 case(s) whose `expect` is not what the reference gives"), "{err}");
    assert!(err.contains("m.yaml:3 (plus)"), "{err}");
    assert!(!err.contains("harness bug"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("The reference does not give the case's expected answer: check the `expect`"));
    assert!(row(&text, "op.plus.adds")
        .contains("| fail 1 ([m.yaml#plus](m.yaml#L3)) | fail 1 ([m.yaml#plus](m.yaml#L3)) |"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The class each consumer's failure on `case` gets in `m`.
fn class_of(m: &matrix::Matrix, consumer: &str, case: &str) -> Option<String> {
    let col = m.columns.iter().position(|c| c.name == consumer)?;
    let f = m.failures.iter().find(|f| f.column == col && m.cases[f.case].name == case)?;
    Some(f.class.as_ref().map_or("unclassified".to_string(), |k| k.id.clone()))
}

/// The bundled cases that docs/consumers.md names as the minimal case of
/// a class ("Disagreements" for gimli, "Disagreement classes (bundled
/// suite)" for the tools) fail in the matrix with that class.
#[test]
fn bundled_minimal_cases_get_their_documented_class() {
    use dwarfcheck::consumer::external::{External, RunBudget, Tool};
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let files = [
        "specs/cases/consumers/gimli.yaml",
        "specs/cases/cfi/eh-frame.yaml",
        "specs/cases/cfi/headers.yaml",
        "specs/cases/cfi/instructions.yaml",
        "specs/cases/cfi/dwarf5-appendix-d6.yaml",
        "specs/cases/expr/composite.yaml",
    ];
    let cases: Vec<Case> = files.iter().flat_map(|f| load(&root.join(f))).collect();
    let mut others: Vec<Box<dyn Consumer>> = vec![Box::new(dwarfcheck::consumer::gimli::Gimli)];
    let tools: Vec<External> = [Tool::LlvmDwarfdump, Tool::Readelf]
        .into_iter()
        .filter_map(|t| dwarfcheck::testing::needed(t.programs()[0], External::new(t, RunBudget::default()).ok()))
        .collect();
    let have_tools = tools.len() == 2;
    others.extend(tools.into_iter().map(|t| Box::new(t) as Box<dyn Consumer>));
    let m = matrix::build(&cases, &Reference, &Fast, &others, Vec::new(), &[]);
    assert!(!m.harness_failed());
    let mut expected = vec![
        ("gimli", "gimli-convert-negative-signed32-to-float64", "G1"),
        ("gimli", "indirect-initial-location", "G2"),
        ("gimli", "bit-piece-offset-past-register", "G3"),
        ("gimli", "gimli-regval-type-wider-than-register", "G5"),
        ("gimli", "gimli-emptied-stack-is-undefined", "G7"),
        ("gimli", "gimli-piece-over-leftover-entries", "G8"),
    ];
    if have_tools {
        expected.extend([
            ("readelf", "version-1-return-address-is-one-byte", "X1"),
            ("readelf", "offset-extended", "X2"),
            ("readelf", "segment-selector", "X3"),
            ("llvm-dwarfdump", "textrel-with-base", "X3"),
            ("llvm-dwarfdump", "indirect-initial-location", "X3"),
            ("llvm-dwarfdump", "legacy-eh-augmentation", "X4"),
            ("llvm-dwarfdump", "gnu-negative-offset-extended", "X5"),
            ("readelf", "appendix-d6-foo", "X6"),
        ]);
    }
    for (consumer, case, class) in expected {
        assert_eq!(class_of(&m, consumer, case).as_deref(), Some(class), "{consumer} on {case}");
    }
}

/// Without the tools on PATH the default run skips them, says why in the
/// document, and still exits 0.
#[test]
fn missing_tools_are_skipped_with_a_note() {
    let dir = temp_dir("skip");
    let f = write_cases(&dir, CASES);
    let empty = dir.join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let out = dir.join("conformance.md");
    let status = Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["matrix", f.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("PATH", &empty)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("Not run:"));
    assert!(text
        .contains("- `llvm-dwarfdump`: consumer llvm-dwarfdump: none of llvm-dwarfdump-19, llvm-dwarfdump is on PATH"));
    assert!(text.contains("- `readelf`: consumer readelf: none of readelf is on PATH (install binutils)"));
    // gimli and framehop are in process: always there.
    assert!(text.contains("| rule | kind | cases | reference | fast | gimli | framehop |\n"), "{text}");
    // Asked for by name, a missing tool is a usage error.
    let status = Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["matrix", f.to_str().unwrap(), "--out", out.to_str().unwrap(), "--consumers", "readelf"])
        .env("PATH", &empty)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// gimli's version is the crate this build links: Cargo.toml asks for
/// 0.34.
#[test]
fn gimli_reports_its_crate_version() {
    let v = dwarfcheck::consumer::gimli::Gimli.version().unwrap();
    assert!(v.starts_with("gimli 0.34.") && v.ends_with(" (crate)"), "{v}");
}

/// Without `--out` the matrix goes to `conformance.md` in the current
/// directory, never over the repository's docs/conformance.md, and the
/// document's command line names the output when one was given.
#[test]
fn the_default_output_is_in_the_current_directory() {
    let dir = temp_dir("default-out");
    let f = write_cases(&dir, CASES);
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/conformance.md");
    let before = std::fs::read(&shipped).ok();
    let status = Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["matrix", f.to_str().unwrap(), "--consumers", "none"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(dir.join("conformance.md")).unwrap();
    assert!(text.contains("Generated by `dwarfcheck matrix "), "{text}");
    assert!(!text.contains("--out"), "{text}");
    assert_eq!(std::fs::read(&shipped).ok(), before);
    let out = dir.join("named.md");
    assert_eq!(dwarfcheck(&["matrix", f.to_str().unwrap(), "--consumers", "none", "--out", out.to_str().unwrap()]), 0);
    assert!(std::fs::read_to_string(&out).unwrap().contains(" --out "));
    let _ = std::fs::remove_dir_all(&dir);
}
