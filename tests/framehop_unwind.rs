//! framehop (the samply profiler's unwinder) judged on virtual unwinding
//! against the reference: on the bundled x86-64 unwinding cases and on the
//! unwinding samples `elf` makes from a real libc, every disagreement is
//! class F1 (CFI expressions) or, on the synthetic states, F2 (its sanity
//! check of the stack's direction; docs/consumers.md "framehop"), and
//! most samples agree. On AArch64 it gives the hand-derived two-frame
//! unwinding, and each minimal case of its classes F3 to F5 disagrees in
//! its class.

use dwarfcheck::case::Case;

use dwarfcheck::consumer::framehop::Framehop;
use dwarfcheck::consumer::Consumer;
use dwarfcheck::runner::compare::Verdict;
use dwarfcheck_core::outcome::unwind::UnwindEnd;
use dwarfcheck_core::outcome::{RawLocation, Source};
use std::path::PathBuf;

/// The cases of the bundled file `rel` (under specs/cases).
fn load(rel: &str) -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases").join(rel);
    dwarfcheck::case::yaml::load_file(&path).unwrap()
}

/// framehop's verdict counts and the classes of its disagreements.
fn judged(cases: &[Case]) -> dwarfcheck::testing::Judged {
    dwarfcheck::testing::judged(Box::new(Framehop), cases)
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

/// framehop's own answer on `framehop-aarch64-two-frames`, against the
/// hand-derived unwinding of the case's comment: frame 0 at 0x1008 with CFA
/// 0x8010, x29 0x9000 and caller pc 0x2010; frame 1 at 0x2010, the base of
/// the stack.
#[test]
fn aarch64_two_frames_as_derived_by_hand() {
    let cases = load("consumers/framehop-aarch64.yaml");
    let Some(Case::Cfi(c)) = cases.iter().find(|c| c.name() == "framehop-aarch64-two-frames") else {
        panic!("the case is bundled")
    };
    let u = Framehop.unwind(c, c.unwind.as_ref().unwrap()).unwrap();
    assert_eq!(u.end, UnwindEnd::Base, "{u:?}");
    let pcs: Vec<_> = u.steps.iter().map(|s| (s.pc, s.caller_pc)).collect();
    assert_eq!(pcs, [(0x1008, Some(0x2010)), (0x2010, None)]);
    assert_eq!(u.steps[0].cfa, RawLocation::simple(Source::memory(0, 0x8010 * 8)).normalize());
    assert_eq!(u.steps[0].registers[&29].bytes.as_deref(), Some(&0x9000u64.to_le_bytes()[..]));
}

/// The AArch64 and x86-64 minimal cases and the AArch64 unwinding cases:
/// the cases without a signed return address agree, each minimal case disagrees in the class it
/// was written for, and the signed cases of cfi/unwind-aarch64.yaml are
/// unspecified (rule unwind.aarch64.ra-sign-state).
#[test]
fn minimal_cases_disagree_in_their_class() {
    let mut cases = load("consumers/framehop-aarch64.yaml");
    cases.extend(load("consumers/framehop-x86_64.yaml"));
    cases.extend(load("cfi/unwind-aarch64.yaml"));
    let (verdicts, mut classes) = judged(&cases);
    classes.sort();
    let want = [
        ("framehop-aarch64-cfa-not-multiple-of-16", "F5"),
        ("framehop-aarch64-negate-ra-state", "F4"),
        ("framehop-aarch64-unsigned-high-bits", "F3"),
        ("framehop-x86-cfa-not-multiple-of-8", "F5"),
    ];
    let got: Vec<_> = classes.iter().map(|(n, k)| (n.as_str(), k.as_deref().unwrap_or("-"))).collect();
    assert_eq!(got, want);
    // Agree: framehop-aarch64-two-frames, unwind-aarch64-two-frames and
    // unwind-aarch64-caller-outside-code (no signed return address).
    assert_eq!(verdicts.get(&Verdict::Agree), Some(&3), "{verdicts:?}");
    // The four cases of cfi/unwind-aarch64.yaml with negate_ra_state (rule
    // unwind.aarch64.ra-sign-state, unspecified).
    assert_eq!(verdicts.get(&Verdict::Unspecified), Some(&4), "{verdicts:?}");
}
