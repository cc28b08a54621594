//! LLDB's own CFI row tables (`lldb-rows`; docs/debuggers.md "lldb-rows"):
//! LLDB's printed rows are read as hand-derived from the text, the
//! prologue case's table through LLDB is the hand-derived one, each minimal
//! case of specs/cases/consumers/lldb-rows.yaml disagrees in its class, and
//! every disagreement on the bundled CFI cases is classified.

use dwarfcheck::case::Case;

use dwarfcheck::consumer::debugger::rows::{parse, LldbRows};
use dwarfcheck::consumer::debugger::Limits;
use dwarfcheck::consumer::Consumer;
use dwarfcheck::runner::compare::Verdict;
use dwarfcheck_core::outcome::{CfaRule, CfiOutcome, RegisterRule, Row, RowTable};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The cases of the bundled file `rel` (under specs/cases).
fn load(rel: &str) -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases").join(rel);
    dwarfcheck::case::yaml::load_file(&path).unwrap()
}

fn lldb() -> Option<LldbRows> {
    dwarfcheck::testing::needed("lldb", LldbRows::new(Limits::default()).ok())
}

fn row(start: u64, end: u64, cfa: (u64, i64), regs: &[(u64, RegisterRule)]) -> Row {
    Row {
        start,
        end,
        cfa: CfaRule::RegOffset { register: cfa.0, offset: cfa.1, aspace: 0 },
        registers: regs.iter().cloned().collect::<BTreeMap<_, _>>(),
    }
}

/// An `image show-unwind` listing as LLDB 19 prints it (the plan of a
/// function at 0x1000 from `.debug_frame`, after an assembly plan that is
/// not read): rows at offsets 0 and 4 from the start; `= <same>` is same
/// value, `?` undefined, `CFA-16` a value offset, `<decoding error>` an
/// expression LLDB could not disassemble. Hand-read: [0x1000, 0x1004) CFA
/// rsp+8, rip [CFA-8]; [0x1004, 0x1020) CFA rbp+16, rbx same, r12
/// undefined, rbp CFA-16, r13 a value expression, rip [CFA-8].
#[test]
fn lldb_row_lines_are_read_as_printed() {
    let text = "UNWIND PLANS for case0`dwarfcheck_fde_18 (start addr 0x1000)\n\n\
        Assembly language inspection UnwindPlan:\n\
        row[0]:    0: CFA=rsp +8 => rsp=CFA+0 rip=[CFA-8] \n\n\
        debug_frame UnwindPlan:\n\
        This UnwindPlan originally sourced from DWARF CFI\n\
        Address range of this UnwindPlan: [case0.PT_LOAD[1]..text + 0-0x0000000000000020)\n\
        row[0]:    0: CFA=rsp +8 => rip=[CFA-8] \n\
        row[1]:    4: CFA=rbp+16 => rbx= <same> rbp=CFA-16 r12=? r13=<decoding error> a4 10 01 05 rip=[CFA-8] \n\n\
        Arch default UnwindPlan:\n\
        row[0]:    0: CFA=rbp+16 => rbp=[CFA-16] rsp=CFA+0 rip=[CFA-8] \n";
    let cases = load("consumers/lldb-rows.yaml");
    let Some(Case::Cfi(c)) = cases.first() else { panic!("a CFI case") };
    let got = parse(text, &c.section, 0x18, 0x1000, 0x1020);
    let want = RowTable {
        fde_offset: 0x18,
        rows: vec![
            row(0x1000, 0x1004, (7, 8), &[(16, RegisterRule::Offset { offset: -8 })]),
            row(
                0x1004,
                0x1020,
                (6, 16),
                &[
                    (3, RegisterRule::SameValue),
                    (6, RegisterRule::ValOffset { offset: -16 }),
                    (12, RegisterRule::Undefined),
                    (13, RegisterRule::ValExpression { expr: Vec::new() }),
                    (16, RegisterRule::Offset { offset: -8 }),
                ],
            ),
        ],
    };
    assert_eq!(got, CfiOutcome::Table(want));
    // No plan from the frame section: not shown.
    let none = "UNWIND PLANS for case0`f (start addr 0x1000)\n\nAssembly language inspection UnwindPlan:\n";
    assert!(matches!(parse(none, &c.section, 0x18, 0x1000, 0x1020), CfiOutcome::Failed(_)));
}

/// Through LLDB: the prologue case's table is the one derived by hand in
/// the case's comment.
#[test]
fn prologue_rows_through_lldb_as_derived_by_hand() {
    let Some(lldb) = lldb() else { return };
    let cases = load("consumers/lldb-rows.yaml");
    let Some(Case::Cfi(c)) = cases.iter().find(|c| c.name() == "lldb-rows-prologue") else { panic!("bundled") };
    let rip = (16, RegisterRule::Offset { offset: -8 });
    let rbp = (6, RegisterRule::Offset { offset: -16 });
    let want = RowTable {
        fde_offset: c.fde_offset,
        rows: vec![
            row(0x1000, 0x1001, (7, 8), std::slice::from_ref(&rip)),
            row(0x1001, 0x1004, (7, 16), &[rbp.clone(), rip.clone()]),
            row(0x1004, 0x1020, (6, 16), &[rbp, rip]),
        ],
    };
    assert_eq!(lldb.frame_table(c), CfiOutcome::Table(want));
}

/// lldb-rows' verdict counts and the classes of its disagreements.
fn judged(lldb: LldbRows, cases: &[Case]) -> dwarfcheck::testing::Judged {
    dwarfcheck::testing::judged(Box::new(lldb), cases)
}

/// Each minimal case disagrees in the class it was written for; the two
/// others agree.
#[test]
fn minimal_cases_disagree_in_their_class() {
    let Some(lldb) = lldb() else { return };
    let (verdicts, mut classes) = judged(lldb, &load("consumers/lldb-rows.yaml"));
    classes.sort();
    let got: Vec<_> = classes.iter().map(|(n, k)| (n.as_str(), k.as_deref().unwrap_or("-"))).collect();
    let want = [
        ("lldb-rows-address-size-4", "LR7"),
        ("lldb-rows-aligned-pointer", "LR6"),
        ("lldb-rows-dwarf64", "LR4"),
        ("lldb-rows-gnu-negative-offset-extended", "LR2"),
        ("lldb-rows-long-augmentation", "LR5"),
        ("lldb-rows-restore-in-first-row", "LR3"),
        ("lldb-rows-val-offset", "LR1"),
    ];
    assert_eq!(got, want);
    assert_eq!(verdicts.get(&Verdict::Agree), Some(&2), "{verdicts:?}");
}

/// On every bundled CFI case, each disagreement has a class and most
/// judged cases agree.
#[test]
fn bundled_cfi_disagreements_are_classified() {
    let Some(lldb) = lldb() else { return };
    let cases = dwarfcheck::testing::bundled_cfi_cases();
    let (verdicts, classes) = judged(lldb, &cases);
    assert!(classes.iter().all(|(_, k)| k.is_some()), "{classes:?}");
    assert_eq!(verdicts.get(&Verdict::Fault), None, "{verdicts:?}");
    let agree = verdicts.get(&Verdict::Agree).copied().unwrap_or(0);
    assert!(agree >= 40, "{verdicts:?}");
}
