//! Hand-derived tests of fast virtual unwinding (rules `unwind.*`). Each
//! case's expectation is worked out from the rule texts in
//! `specs/rules/unwind.yaml` / `calls.yaml` in the comment above it.

use crate::case::yaml::load_str;
use crate::case::{Case, CfiCase};
use crate::outcome::unwind::Unwind;

/// The single CFI case of a YAML file (case syntax: docs/case-format.md).
fn case(text: &str) -> CfiCase {
    match load_str("t.yaml", text).unwrap_or_else(|e| panic!("{e:?}")).remove(0) {
        Case::Cfi(c) => c,
        Case::Expr(_) => panic!("expected a CFI case"),
    }
}

/// Unwinds the case with the fast unwinder and checks it against the
/// case's own `unwind.expect` (outcome by outcome, an expected `at` of
/// `None` matching any).
fn check(text: &str) -> Unwind {
    let c = case(text);
    let u = c.unwind.as_ref().expect("unwind:");
    let got = super::unwind(&c.section, &u.ctx, u.limit);
    let want = u.expect.as_ref().expect("unwind.expect");
    assert!(crate::runner::compare::exact_unwind(want, &got), "expected:\n{want}\ngot:\n{got}");
    got
}

// Frame 0 at 0x1004: CFA = rsp + 8 = 0x7008; rip (16) saved at CFA-8 =
// 0x7000 holding 0x2010 (LE); rsp is no column, so val_offset(0): the
// CFA's value 0x7008 as implicit 8 bytes (unwind.sp-is-cfa). Frame 1 at
// 0x2010 is looked up at 0x200f (pc - 1) in the second FDE whose CIE gives
// CFA = rsp + 8 with rsp = 0x7008 -> 0x7010; rip is explicitly undefined:
// the base of the stack.
const TWO_FRAMES: &str = r#"
target: x86_64
cases:
  - name: unwind-two-frames
    rules: [unwind.step]
    cfi:
      cie: { version: 4, data_align: -8, ra: 16, instructions: "DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8" }
      fde: { pc_begin: 0x1000, pc_range: 0x20 }
      fdes:
        - { pc_begin: 0x2000, pc_range: 0x40, instructions: "DW_CFA_undefined: reg16" }
    unwind:
      context:
        pc: 0x1004
        registers: { rsp: 0x7000 }
        memory: [ { at: 0x7000, bytes: "1020000000000000" } ]
      expect:
        steps:
          - pc: 0x1004
            fde: 0
            cfa: { memory: 0x7008 }
            registers:
              rip: { location: { memory: 0x7000 }, value: 0x2010 }
              rsp: { location: { implicit: "0870000000000000" }, value: 0x7008 }
            caller_pc: 0x2010
          - pc: 0x2010
            fde: 1
            cfa: { memory: 0x7010 }
            registers:
              rip: { location: { undefined: true } }
              rsp: { location: { implicit: "1070000000000000" }, value: 0x7010 }
            caller_pc: none
        end: base
"#;

#[test]
fn two_frames_to_the_base() {
    let u = check(TWO_FRAMES);
    assert_eq!(u.steps[1].lookup, 0x200f);
}
