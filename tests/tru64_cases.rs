//! The Tru64 case files of `specs/cases/tru64/` (`*.tru64`): each
//! procedure's data, described and encoded or written byte by byte, must
//! give exactly the faults (rule and byte offset) and the reading at the
//! pcs its `expect` states; and every rule of `specs/rules/tru64-ppod.yaml`
//! has a case, a negative one when it is an error rule.

use dwarfcheck::catalogue::Catalogue;
use dwarfcheck::tru64::cases;
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    cases::case_files(&[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/tru64")])
}

#[test]
fn every_case_gives_its_expectation() {
    let (n, failures) =
        dwarfcheck::case::blob::run_files(&files(), cases::load, |file| &file.cases, |_, c| cases::run(c));
    assert!(failures.is_empty(), "{} of {n} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(n >= 35, "{n} cases");
}

#[test]
fn every_tru64_rule_has_a_negative_case() {
    let all: Vec<cases::Tru64Case> = files().iter().flat_map(|f| cases::load(f).unwrap().cases).collect();
    let n = Catalogue::get().rules.keys().filter(|k| k.starts_with("tru64.")).count();
    assert!(n >= 20, "{n} tru64 rules");
    let problems = dwarfcheck::case::blob::rule_coverage_problems("tru64.", &all);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// A case whose `ppod` and `hex` disagree is refused, not run.
#[test]
fn ppod_and_hex_must_agree() {
    let text = r#"
cases:
  - name: disagree
    rules: []
    procedure: { base: 0 }
    ppod: [{ kind: stamp }]
    hex: "01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00"
    expect: { faults: [] }
"#;
    let f: cases::CaseFile = yaml_serde::from_str(text).unwrap();
    let e = cases::run(&f.cases[0]).unwrap_err();
    assert!(e.contains("ppod encodes to"), "{e}");
}
