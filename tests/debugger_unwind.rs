//! GDB, LLDB and eu-stack judged as unwinders through synthesised
//! executables and core files (issue 15; docs/consumers.md "gdb-unwind",
//! "lldb-unwind", "eu-stack"; docs/debuggers.md): a hand-derived
//! three-frame unwinding checked exactly through GDB, and every bundled
//! unwinding case agrees, is outside what the synthesiser can hold, or is a
//! classified disagreement.

use dwarfcheck::case::{Case, CfiCase};
use dwarfcheck::consumer::builtin::Reference;
use dwarfcheck::consumer::debugger::{Kind, Limits};
use dwarfcheck::consumer::debugger::unwind::DebuggerUnwind;
use dwarfcheck::consumer::{Answer, Consumer};
use dwarfcheck::runner::compare::{judge_unwind, Verdict};
use dwarfcheck_core::outcome::CfiOutcome;

/// The bundled CFI cases with an unwinding part.
fn unwinding_cases() -> Vec<Case> {
    dwarfcheck::testing::bundled_cfi_cases()
        .into_iter()
        .filter(|c| matches!(c, Case::Cfi(c) if c.unwind.is_some()))
        .collect()
}

fn cfi(c: &Case) -> &CfiCase {
    match c {
        Case::Cfi(c) => c,
        Case::Expr(_) => unreachable!("only CFI cases"),
    }
}

/// Each case's verdict and, for a disagreement, its class.
fn verdicts(k: &dyn Consumer, cases: &[Case]) -> Vec<(String, Verdict, Option<String>)> {
    k.prepare(cases);
    cases
        .iter()
        .map(|case| {
            let c = cfi(case);
            let u = c.unwind.as_ref().expect("an unwinding case");
            let reference = Reference.unwind(c, u).expect("the reference unwinds");
            let view = k.unwind_view(c, &reference).unwrap_or_else(|| reference.clone());
            let got = k.unwind(c, u).expect("an unwinder answers");
            let unspecified = dwarfcheck::runner::compare::exercises_unspecified(&c.rules);
            let v = judge_unwind(&view, &got, unspecified);
            let none = CfiOutcome::Failed(dwarfcheck_core::outcome::Failure::Unsupported { what: String::new() });
            let class = (v == Verdict::Disagree)
                .then(|| k.failure_class(case, Answer::Cfi(&none), Answer::Cfi(&none)).map(|f| f.id))
                .flatten();
            if std::env::var_os("DWARFCHECK_SHOW").is_some() {
                eprintln!("{} {v:?} {class:?}\nview:\n{view}\ngot:\n{got}\n", c.name);
            }
            (c.name.clone(), v, class)
        })
        .collect()
}

fn gdb() -> Option<DebuggerUnwind> {
    dwarfcheck::testing::needed("gdb", DebuggerUnwind::new(Kind::Gdb, Limits::default()).ok())
}

#[test]
fn gdb_unwinds_the_three_frame_case_exactly() {
    let Some(gdb) = gdb() else { return };
    let cases = unwinding_cases();
    let case = cases.iter().map(cfi).find(|c| c.name == "unwind-three-frames-rule-kinds").expect("bundled");
    let u = case.unwind.as_ref().expect("unwinding part");
    let got = gdb.unwind(case, u).expect("answers");
    // Hand-derived (specs/cases/cfi/unwind.yaml): frame 0 at 0x1010 with
    // CFA 0x7010 returns to 0x2020 with rbx = r12 = 0x22, rbp = [0x7000] =
    // 0x7200, rsp = 0x7010, r13 the core's fill for r13 (same value, not
    // given), r14 undefined; frame 1 at 0x2020, CFA = rbp + 16 = 0x7210,
    // returns to 0x3008 with rbp = [0x7200] = 0; frame 2 at 0x3008 is the
    // base of the stack (rip undefined).
    let text = got.to_string();
    let q = |n: u64| format!("{}", dwarfcheck_core::encoding::hex::to_hex(&n.to_le_bytes()));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("#0 pc=0x1010") && lines[0].contains("CFA=mem[0x7010]"), "{text}");
    assert!(lines[0].ends_with("caller pc=0x2020"), "{text}");
    for (r, v) in [(3, 0x22), (6, 0x7200), (7, 0x7010), (13, 0x4d4d_4d4d_4d4d_4d4d), (16, 0x2020)] {
        assert!(lines[0].contains(&format!("r{r}=") ) && lines[0].contains(&q(v)), "r{r} {text}");
    }
    assert!(!lines[0].contains(&format!("r14=location unsupported")) || !lines[0].contains("r14=location unsupported: debuggers show register values ="), "{text}");
    assert!(lines[1].starts_with("#1 pc=0x2020") && lines[1].contains("CFA=mem[0x7210]"), "{text}");
    assert!(lines[1].ends_with("caller pc=0x3008") && lines[1].contains(&q(0)), "{text}");
    assert!(lines[2].starts_with("#2 pc=0x3008") && lines[2].ends_with("no caller"), "{text}");
    assert_eq!(lines[3], "end: base of stack", "{text}");
    // And the runner's judgement through the view agrees.
    let all = verdicts(&gdb, &[Case::Cfi(case.clone())]);
    assert_eq!(all[0].1, Verdict::Agree, "{all:?}");
}

#[test]
fn gdb_agrees_on_the_bundled_unwinding_cases_or_the_disagreement_is_classified() {
    let Some(gdb) = gdb() else { return };
    let cases = unwinding_cases();
    let all = verdicts(&gdb, &cases);
    eprintln!("{all:#?}");
    let unclassified: Vec<_> = all.iter().filter(|(_, v, k)| *v == Verdict::Disagree && k.is_none()).collect();
    assert!(unclassified.is_empty(), "{unclassified:?}");
    let agree = all.iter().filter(|(_, v, _)| *v == Verdict::Agree).count();
    assert!(agree >= 10, "{all:?}");
}
