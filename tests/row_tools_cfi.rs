//! pyelftools (row tables from `FDE.get_decoded()`) and elfutils libdw
//! (`dwarf_cfi_addrframe`) as CFI consumers through their row-text
//! helpers, judged against the reference: on the bundled CFI cases every
//! disagreement falls in a documented class (P1 to P5 and L1 of
//! docs/consumers.md, "Disagreement classes (bundled suite)"); on a real
//! libc every FDE agrees, except, for pyelftools, those holding
//! `DW_CFA_GNU_args_size` (P2). Skipped with a message when a tool is
//! missing, unless `CI` is set (then it fails).

use dwarfcheck::case::Case;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::external::{External, RunBudget, Tool};
use dwarfcheck::consumer::{Answer, Consumer};
use dwarfcheck::runner::{self, Finding, Options};
use std::path::PathBuf;

fn pyelftools() -> Option<External> {
    dwarfcheck::testing::needed("pyelftools", External::new(Tool::Pyelftools, RunBudget::default()).ok())
}

fn libdw() -> Option<External> {
    dwarfcheck::testing::needed("libdw (libdw-dev and gcc)", External::new(Tool::Libdw, RunBudget::default()).ok())
}

/// The cases `tool` disagrees on, with their classes.
fn failing_classes(cases: &[Case], tool: External, again: External) -> Vec<(String, String)> {
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(tool)];
    let s = runner::run(cases, &Reference, &Fast, &others, &Options { keep_details: 0, ..Default::default() });
    let failing: Vec<String> =
        s.failures.iter().filter(|f| matches!(f.finding, Finding::Consumer { .. })).map(|f| f.case.clone()).collect();
    classes_of(cases, &failing, &again)
}

/// The class pyelftools' failure on each case of `names` gets.
fn classes_of(cases: &[Case], names: &[String], py: &External) -> Vec<(String, String)> {
    names
        .iter()
        .map(|name| {
            let case = cases.iter().find(|c| c.name() == name).expect("a failing case is a case");
            let Case::Cfi(c) = case else { return (name.clone(), "not a CFI case".into()) };
            let (r, a) = (dwarfcheck::consumer::builtin::reference_table(c), py.frame_table(c));
            let class = py.failure_class(case, Answer::Cfi(&r), Answer::Cfi(&a)).map(|k| k.id);
            (name.clone(), class.unwrap_or_else(|| format!("unclassified: {a:?}")))
        })
        .collect()
}

#[test]
fn bundled_cfi_cases_disagree_only_in_documented_classes() {
    let Some(py) = pyelftools() else { return };
    let cases = dwarfcheck::testing::bundled_cfi_cases();
    let classes = failing_classes(&cases, py, pyelftools().unwrap());
    let unclassified: Vec<&(String, String)> = classes.iter().filter(|(_, k)| !k.starts_with('P')).collect();
    assert!(unclassified.is_empty(), "tables pyelftools gives otherwise, in no class: {unclassified:#?}");
    // Each class has its minimal case (docs/consumers.md).
    for (case, class) in [
        ("def-cfa-sf", "P1"),
        ("nops-and-args-size", "P2"),
        ("gnu-negative-offset-extended", "P3"),
        ("vendor-bracketed-augmentation", "P4"),
        ("textrel-with-base", "P5"),
    ] {
        assert!(classes.iter().any(|(n, k)| n == case && k == class), "{case} is not {class}: {classes:#?}");
    }
}

#[test]
fn libdw_disagrees_only_on_header_encodings() {
    let Some(dw) = libdw() else { return };
    let cases = dwarfcheck::testing::bundled_cfi_cases();
    let classes = failing_classes(&cases, dw, libdw().unwrap());
    assert!(classes.iter().all(|(_, k)| k == "L1"), "libdw's tables in no class: {classes:#?}");
    for case in ["textrel-with-base", "segment-selector", "appendix-d6-foo"] {
        assert!(classes.iter().any(|(n, _)| n == case), "{case} no longer fails: {classes:#?}");
    }
}

#[test]
fn libdw_agrees_on_real_libc() {
    let Some(dw) = libdw() else { return };
    let libc = PathBuf::from(dwarfcheck::bench::LIBC);
    if !libc.exists() {
        return;
    }
    let opts = dwarfcheck::elf::Options { expressions: false, ..Default::default() };
    let cases: Vec<Case> = dwarfcheck::elf::extract(&libc, &opts).unwrap().cfi.into_iter().map(Case::Cfi).collect();
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(dw)];
    let s = runner::run(&cases, &Reference, &Fast, &others, &Options::default());
    let v = &s.verdicts["libdw"];
    let agree = v.get(&runner::compare::Verdict::Agree).copied().unwrap_or(0);
    // Every FDE agrees, but for expression rules libdw gives only as
    // operations (unsupported, not judged).
    assert!(agree + 10 >= cases.len() && agree > 3000, "{v:?} of {}", cases.len());
    assert!(s.failures.is_empty(), "{:#?}", s.failures.iter().map(|f| &f.input).collect::<Vec<_>>());
}

#[test]
fn real_libc_agrees_except_gnu_args_size() {
    let Some(py) = pyelftools() else { return };
    let libc = PathBuf::from(dwarfcheck::bench::LIBC);
    if !libc.exists() {
        return;
    }
    let opts = dwarfcheck::elf::Options { expressions: false, ..Default::default() };
    let x = dwarfcheck::elf::extract(&libc, &opts).unwrap();
    assert!(x.cfi.len() > 1000, "{} FDEs", x.cfi.len());
    let cases: Vec<Case> = x.cfi.into_iter().map(Case::Cfi).collect();
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(py)];
    let s = runner::run(&cases, &Reference, &Fast, &others, &Options { keep_details: 0, ..Default::default() });
    let agree = s.verdicts["pyelftools"].get(&runner::compare::Verdict::Agree).copied().unwrap_or(0);
    let mut args_size = 0;
    for f in &s.failures {
        assert!(matches!(f.finding, Finding::Consumer { .. }), "{f:?}");
        assert!(f.input.contains("DW_CFA_GNU_args_size"), "a disagreement without DW_CFA_GNU_args_size: {}", f.input);
        args_size += 1;
    }
    assert!(args_size >= 1, "libc has an FDE with DW_CFA_GNU_args_size");
    assert_eq!(agree + args_size, cases.len());
}
