//! framehop (the samply profiler's unwinder) judged on virtual unwinding
//! against the reference: on the bundled x86-64 unwinding cases and on the
//! unwinding samples `elf` makes from a real libc, every disagreement is
//! class F1 (CFI expressions) or, on the synthetic states, F2 (its sanity
//! check of the stack's direction; docs/consumers.md "framehop"), and
//! most samples agree.

use dwarfcheck::case::Case;
use dwarfcheck::consumer::builtin::{reference_table, Fast, Reference};
use dwarfcheck::consumer::framehop::Framehop;
use dwarfcheck::consumer::{Answer, Consumer};
use dwarfcheck::runner::{self, compare::Verdict, Finding, Options};
use std::path::PathBuf;

/// Verdict counts, and each disagreeing case with its class.
type Judged = (std::collections::BTreeMap<Verdict, usize>, Vec<(String, Option<String>)>);

/// framehop's verdict counts and the classes of its disagreements.
fn judged(cases: &[Case]) -> Judged {
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(Framehop)];
    let s = runner::run(cases, &Reference, &Fast, &others, &Options { keep_details: 0, ..Default::default() });
    let classes = s
        .failures
        .iter()
        .filter(|f| matches!(f.finding, Finding::Consumer { .. }))
        .map(|f| {
            let case = cases.iter().find(|c| c.name() == f.case).expect("a failing case is a case");
            let Case::Cfi(c) = case else { return (f.case.clone(), None) };
            let r = reference_table(c);
            let a = Framehop.frame_table(c);
            let class = Framehop.failure_class(case, Answer::Cfi(&r), Answer::Cfi(&a)).map(|k| k.id);
            (f.case.clone(), class)
        })
        .collect();
    (s.verdicts["framehop"].clone(), classes)
}

#[test]
fn bundled_unwinding_cases_disagree_only_on_expressions() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/cfi/unwind.yaml");
    let cases: Vec<Case> = dwarfcheck::case::yaml::load_file(&dir).unwrap();
    let (verdicts, classes) = judged(&cases);
    assert!(classes.iter().all(|(_, k)| k.as_deref() == Some("F1")), "{classes:?}");
    assert!(classes.iter().any(|(n, _)| n == "unwind-expression-rules"), "{classes:?}");
    // The two-frame, three-frame and rsp+12 cases are judged and agree.
    assert!(verdicts.get(&Verdict::Agree).copied().unwrap_or(0) >= 5, "{verdicts:?}");
}

#[test]
fn real_libc_unwinding_agrees_except_on_expressions() {
    let libc = PathBuf::from(dwarfcheck::bench::LIBC);
    if !libc.exists() {
        return;
    }
    let opts = dwarfcheck::elf::Options { expressions: false, ..Default::default() };
    let cases: Vec<Case> = dwarfcheck::elf::extract(&libc, &opts)
        .unwrap()
        .cfi
        .into_iter()
        .filter(|c| c.unwind.is_some())
        .map(Case::Cfi)
        .collect();
    assert!(cases.len() >= 200, "{} unwinding samples", cases.len());
    let (verdicts, classes) = judged(&cases);
    assert!(classes.iter().all(|(_, k)| matches!(k.as_deref(), Some("F1" | "F2"))), "{classes:?}");
    let agree = verdicts.get(&Verdict::Agree).copied().unwrap_or(0);
    assert!(agree * 10 >= cases.len() * 9, "{agree} of {} agree: {verdicts:?}", cases.len());
}
