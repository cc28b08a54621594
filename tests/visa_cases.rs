//! The vISA case files of `specs/cases/visa/` (`*.visa`): each blob,
//! written byte by byte by hand with its offsets in comments, must give
//! exactly the faults (rule and byte offset), layout and counts its
//! `expect` states; and every rule of `specs/rules/visa-debuginfo.yaml`
//! has a case, a negative one when it is an error or unspecified rule.

use dwarfcheck::visa::cases;
use std::path::PathBuf;

fn files() -> Vec<PathBuf> {
    cases::case_files(&[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/visa")])
}

#[test]
fn every_case_gives_its_expectation() {
    let (n, failures) = dwarfcheck::case::blob::run_files(
        &files(),
        cases::load,
        |file| &file.cases,
        |file, c| cases::run(c, file.platform.as_deref()),
    );
    assert!(failures.is_empty(), "{} of {n} case(s) failed:\n{}", failures.len(), failures.join("\n"));
    assert!(n >= 25, "{n} cases");
}

#[test]
fn every_visa_rule_has_a_negative_case() {
    let all: Vec<cases::VisaCase> = files().iter().flat_map(|f| cases::load(f).unwrap().cases).collect();
    let problems = dwarfcheck::case::blob::rule_coverage_problems("visa.", &all);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn hex_comments_and_spacing() {
    assert_eq!(cases::parse_hex("10 d0 # magic\n ad\tde").unwrap(), vec![0x10, 0xd0, 0xad, 0xde]);
    assert!(cases::parse_hex("1").is_err());
    assert!(cases::parse_hex("zz").is_err());
}
