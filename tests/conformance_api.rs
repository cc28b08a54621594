//! `dwarfcheck::conformance`, the in-process check of a Rust consumer:
//! the embedded suite is the checkout's, selection, case files on disk,
//! the CFI and full-consumer entry points, the allow-list and the report.
//! Oracles: the case files' text and hand-derived expectations.

use dwarfcheck::conformance::core::outcome::{BaseType, CfiOutcome, Failure, Outcome, Value};
use dwarfcheck::conformance::suite::{self, bundled_sources, rule_under};
use dwarfcheck::conformance::{self, Allow, Case, CfiCase, CfiConsumer, ExprCase, ExprConsumer, Options};
use dwarfcheck::conformance::{Selection, Source, Verdict};
use std::path::PathBuf;

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases")
}

/// The embedded suite is the checkout's `specs/cases`: the same files
/// (found on disk here, independently of build.rs), the same text.
#[test]
fn bundled_sources_are_the_checkouts_case_files() {
    let root = cases_dir();
    let on_disk = dwarfcheck::case::files::with_extension(std::slice::from_ref(&root), "yaml");
    assert_eq!(bundled_sources().len(), on_disk.len());
    for (f, (path, text)) in on_disk.iter().zip(bundled_sources()) {
        assert_eq!(f.strip_prefix(&root).unwrap().to_string_lossy(), *path);
        assert_eq!(std::fs::read_to_string(f).unwrap(), *text, "{path}");
    }
}

/// The bundled suite loads with no error, as many cases as loading the
/// directory gives, with origins under `specs/cases/`.
#[test]
fn bundled_suite_loads_like_the_directory() {
    let all = Selection::default();
    let (bundled, errors) = suite::load(&Source::Bundled, &all);
    assert_eq!(errors, Vec::<String>::new());
    let (from_dir, errors) = suite::load(&Source::Paths(vec![cases_dir()]), &all);
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(bundled.len(), from_dir.len());
    assert!(bundled.iter().all(|c| c.origin().starts_with("specs/cases/")));
}

/// Selecting by file, name and rule, checked against the text of
/// specs/cases/expr/arithmetic.yaml (`minus-order` and `minus-wraps`
/// exercise `op.minus.subtracts`, `plus` does not).
#[test]
fn selection_by_file_name_and_rule() {
    let sel = |files: &[&str], names: &[&str], rules: &[&str]| Selection {
        files: files.iter().map(|s| s.to_string()).collect(),
        names: names.iter().map(|s| s.to_string()).collect(),
        rules: rules.iter().map(|s| s.to_string()).collect(),
    };
    let names = |s: &Selection| -> Vec<String> {
        let (c, e) = suite::load(&Source::Bundled, s);
        assert!(e.is_empty(), "{e:?}");
        c.iter().map(|c| c.name().to_string()).collect()
    };
    let minus = names(&sel(&["expr/arithmetic.yaml"], &[], &["op.minus"]));
    assert!(minus.contains(&"minus-order".to_string()) && minus.contains(&"minus-wraps".to_string()), "{minus:?}");
    assert!(!minus.contains(&"plus".to_string()));
    assert_eq!(names(&sel(&["expr/arithmetic.yaml"], &["minus-order"], &[])), vec!["minus-order"]);
    // A rule ID prefix that is not a whole component selects nothing.
    assert!(names(&sel(&["expr/arithmetic.yaml"], &[], &["op.minu"])).is_empty());
    assert!(rule_under("op.minus.subtracts", "op.minus") && rule_under("op.minus", "op.minus"));
    assert!(!rule_under("op.minusx", "op.minus"));
    let (c, e) = suite::load(&Source::Paths(vec![PathBuf::from("/no/such/dir/x.yaml")]), &Selection::default());
    assert!(c.is_empty() && e.len() == 1, "{e:?}");
}

/// Answers `answer` to every expression.
struct Always(u128);

impl ExprConsumer for Always {
    fn name(&self) -> &str {
        "always"
    }
    fn evaluate(&self, _case: &ExprCase) -> Outcome {
        Outcome::Value(Value::from_u128(BaseType::generic(64, false), self.0))
    }
}

/// A case file on disk: 2 * 3 is 6 (by hand). A consumer answering 6
/// agrees, one answering 5 disagrees, and a file that does not load is
/// an error that fails `assert_conforms`.
#[test]
fn case_files_on_disk() {
    let dir = std::env::temp_dir().join(format!("dwarfcheck-conformance-api-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("mul.yaml");
    std::fs::write(
        &file,
        "target: x86_64\ncases:\n  - name: two-times-three\n    rules: [op.mul.multiplies]\n    context: { result: value }\n    expr: \"DW_OP_lit2 DW_OP_lit3 DW_OP_mul\"\n",
    )
    .unwrap();
    let opts = Options { source: Source::Paths(vec![dir.clone()]), ..Options::default() };
    let six = conformance::check_expressions(&Always(6), &opts);
    assert_eq!(six.cases.len(), 1);
    assert_eq!(six.cases[0].verdict, Verdict::Agree);
    assert_eq!(six.cases[0].file, file.display().to_string());
    six.assert_conforms();
    let five = conformance::check_expressions(&Always(5), &opts);
    assert_eq!(five.count(Verdict::Disagree), 1, "{five}");
    assert!(std::panic::catch_unwind(|| five.assert_no_disagreements()).is_err());
    // Allowed by its rule: conforms.
    let allow = Allow { cases: Vec::new(), rules: vec!["op.mul".into()] };
    conformance::check_expressions(&Always(5), &Options { allow, ..opts.clone() }).assert_conforms();

    std::fs::write(dir.join("broken.yaml"), "target: x86_64\ncases:\n  - name: x\n    expr: \"DW_OP_nonsense\"\n")
        .unwrap();
    let broken = conformance::check_expressions(&Always(6), &opts);
    assert_eq!(broken.load_errors.len(), 1, "{broken}");
    assert!(broken.load_errors[0].starts_with(&dir.join("broken.yaml").display().to_string()), "{broken}");
    assert!(broken.to_string().contains("case file error:"), "{broken}");
    assert!(std::panic::catch_unwind(|| broken.assert_conforms()).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Answers each CFI case with its hand-derived expectation, if it has
/// one; a broken variant drops the last row of every table.
struct Expected {
    drop_last_row: bool,
}

impl CfiConsumer for Expected {
    fn editions(&self) -> Vec<conformance::Edition> {
        vec![conformance::Edition::Dwarf5, conformance::Edition::Dwarf5Gnu, conformance::Edition::Hetero2020]
    }
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        match (&case.expect, self.drop_last_row) {
            (None, _) => CfiOutcome::Failed(Failure::Unsupported { what: "cases without an expectation".into() }),
            (Some(CfiOutcome::Table(t)), true) if t.rows.len() > 1 => {
                let mut t = t.clone();
                t.rows.pop();
                CfiOutcome::Table(t)
            }
            (Some(e), _) => e.clone(),
        }
    }
}

/// The CFI entry point runs only CFI cases; answering with the cases'
/// expectations conforms (the reference meets them: `dwarfcheck run`),
/// each case with an expectation judged; dropping a row disagrees on the
/// cases with several rows.
#[test]
fn cfi_consumer_judged_on_expectations() {
    let report = conformance::check_cfi(&Expected { drop_last_row: false }, &Options::default());
    report.assert_conforms();
    let (all, _) = suite::load(&Source::Bundled, &Selection::default());
    let cfi: Vec<&Case> = all.iter().filter(|c| matches!(c, Case::Cfi(_))).collect();
    assert_eq!(report.cases.len(), cfi.len());
    let with_expect: Vec<&str> = cfi
        .iter()
        .filter_map(|c| match c {
            Case::Cfi(c) if c.expect.is_some() => Some(c.name.as_str()),
            _ => None,
        })
        .collect();
    assert!(with_expect.len() > 20);
    let judged: Vec<&str> =
        report.cases.iter().filter(|v| v.verdict != Verdict::Unsupported).map(|v| v.case.as_str()).collect();
    for name in &with_expect {
        assert!(judged.contains(name), "{name} has an expectation but was not judged\n{report}");
    }
    let broken = conformance::check_cfi(&Expected { drop_last_row: true }, &Options::default());
    let several_rows = cfi
        .iter()
        .filter(|c| matches!(c, Case::Cfi(CfiCase { expect: Some(CfiOutcome::Table(t)), .. }) if t.rows.len() > 1))
        .count();
    assert!(several_rows > 0);
    assert!(broken.count(Verdict::Disagree) > 0, "{broken}");
    assert!(broken.count(Verdict::Disagree) <= several_rows, "{broken}");
    let text = broken.to_string();
    assert!(text.contains("DISAGREE ") && text.contains("FDE at"), "{text}");
}

/// The full-consumer entry point: the fast evaluator, which implements
/// everything the reference does, is asked every bundled case and
/// conforms.
#[test]
fn full_consumer_asked_every_case() {
    let report = conformance::check(&dwarfcheck::consumer::builtin::Fast, &Options::default());
    report.assert_conforms();
    let (all, _) = suite::load(&Source::Bundled, &Selection::default());
    assert_eq!(report.cases.len(), all.len());
    assert_eq!(report.count(Verdict::OutsideEdition) + report.count(Verdict::Unsupported), 0, "{report}");
    assert!(report.cases.iter().all(|v| v.consumer.is_some()));
}

/// A full consumer with known failure classes (gimli, whose minimal
/// cases are specs/cases/consumers/gimli.yaml): the report gives the
/// class of the first of them, G1 (docs/consumers.md), and prints it.
#[test]
fn full_consumer_failures_carry_their_class() {
    let selection = Selection { files: vec!["consumers/gimli.yaml".into()], ..Selection::default() };
    let report = conformance::check(&dwarfcheck::consumer::gimli::Gimli, &Options { selection, ..Options::default() });
    let v =
        report.cases.iter().find(|v| v.case == "gimli-convert-negative-signed32-to-float64").expect("the case is run");
    assert_eq!(v.verdict, Verdict::Disagree, "{report}");
    assert_eq!(v.class.as_ref().map(|c| c.id.as_str()), Some("G1"), "{report}");
    assert!(report.to_string().contains("  class:     G1: "), "{report}");
    assert!(report.cases.iter().filter(|v| v.verdict != Verdict::Disagree).all(|v| v.class.is_none()));
}
