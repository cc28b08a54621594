//! libunwind 1.6.2 (through its remote API and the compiled helper) judged
//! on virtual unwinding against the reference: a hand-derived two-frame
//! unwinding is reproduced exactly; on the bundled x86-64 unwinding cases
//! every disagreement has its class U1 to U8 (docs/consumers.md,
//! "libunwind"), each class's minimal case shows it, and on the unwinding
//! samples `elf` makes from a real libc most agree and the others are
//! classified.

use dwarfcheck::case::Case;

use dwarfcheck::consumer::external::RunBudget;
use dwarfcheck::consumer::libunwind::Libunwind;
use dwarfcheck::consumer::Consumer;
use dwarfcheck::runner::compare::Verdict;
use dwarfcheck_core::outcome::unwind::UnwindEnd;
use dwarfcheck_core::outcome::{RawLocation, Source};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The consumer, or `None` (skipped outside CI) without libunwind-dev.
fn libunwind() -> Option<Libunwind> {
    dwarfcheck::testing::needed("libunwind-dev and a C compiler", Libunwind::new(RunBudget::default()).ok())
}

/// The cases of a bundled case file.
fn cases(file: &str) -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases").join(file);
    dwarfcheck::case::yaml::load_file(&path).unwrap()
}

/// Verdict counts, and each disagreeing case with its class.
type Judged = (BTreeMap<Verdict, usize>, BTreeMap<String, Option<String>>);

/// libunwind's verdict counts and the classes of its disagreements.
fn judged(l: Libunwind, cases: &[Case]) -> Judged {
    let (verdicts, classes) = dwarfcheck::testing::judged(Box::new(l), cases);
    (verdicts, classes.into_iter().collect())
}

#[test]
fn a_hand_derived_unwinding_is_reproduced() {
    let Some(l) = libunwind() else { return };
    let all = cases("consumers/libunwind.yaml");
    let Some(Case::Cfi(c)) = all.iter().find(|c| c.name() == "libunwind-eh-two-frames") else { panic!() };
    let u = c.unwind.as_ref().unwrap();
    let w = l.unwind(c, u).unwrap();
    // Frame 0 at 0x1004: CFA = rsp + 8 = 0x7008, return address [0x7000]
    // = 0x2010, caller rsp = CFA. Frame 1 at 0x2010 (FDE 1, rip
    // undefined): CFA = 0x7008 + 8 = 0x7010, the base of the stack.
    let cfa = |a: u64| RawLocation::simple(Source::memory(0, u128::from(a) * 8)).normalize();
    assert_eq!(w.steps.len(), 2, "{w}");
    assert_eq!((w.steps[0].pc, w.steps[0].caller_pc), (0x1004, Some(0x2010)), "{w}");
    assert_eq!(w.steps[0].cfa, cfa(0x7008), "{w}");
    assert_eq!(w.steps[0].registers[&7].bytes, Some(0x7008u64.to_le_bytes().to_vec()), "{w}");
    assert_eq!((w.steps[1].pc, w.steps[1].caller_pc), (0x2010, None), "{w}");
    assert_eq!(w.steps[1].cfa, cfa(0x7010), "{w}");
    assert_eq!(w.steps[1].registers[&7].bytes, Some(0x7010u64.to_le_bytes().to_vec()), "{w}");
    assert_eq!(w.end, UnwindEnd::Base);
}

#[test]
fn bundled_unwinding_disagreements_are_classified() {
    let Some(l) = libunwind() else { return };
    let mut all = cases("cfi/unwind.yaml");
    all.extend(cases("consumers/libunwind.yaml"));
    let (verdicts, classes) = judged(l, &all);
    assert!(classes.values().all(Option::is_some), "{classes:?}");
    let class = |case: &str| classes.get(case).cloned().flatten();
    // Each class's minimal case (docs/consumers.md).
    for (case, id) in [
        ("unwind-limit", "U1"),
        ("libunwind-rbp-undefined", "U2"),
        ("libunwind-rsp-saved", "U3"),
        ("libunwind-val-offset", "U4"),
        ("libunwind-register-above-16", "U5"),
        ("libunwind-debug-frame-expression", "U6"),
        ("libunwind-register-rule-order", "U7"),
        ("libunwind-rip-differs-from-pc", "U8"),
    ] {
        assert_eq!(class(case).as_deref(), Some(id), "{case}: {classes:?}");
    }
    // The same two-frame unwinding from a version 1 CIE agrees, and so does
    // a CFA expression in an .eh_frame.
    for agreeing in ["libunwind-eh-two-frames", "libunwind-eh-cfa-expression"] {
        assert!(!classes.contains_key(agreeing), "{agreeing}: {classes:?}");
    }
    assert!(verdicts.get(&Verdict::Agree).copied().unwrap_or(0) >= 2, "{verdicts:?}");
}

#[test]
fn real_libc_unwinding_agrees_or_is_classified() {
    let Some(l) = libunwind() else { return };
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
    let n = cases.len();
    let (verdicts, classes) = judged(l, &cases);
    assert!(classes.values().all(Option::is_some), "{classes:?}");
    let agree = verdicts.get(&Verdict::Agree).copied().unwrap_or(0);
    assert!(agree * 10 >= n * 9, "{agree} of {n} agree: {verdicts:?}");
}
