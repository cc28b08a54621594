//! Hand-derived tests of fast virtual unwinding (rules `unwind.*`). Each
//! case's expectation is worked out from the rule texts in
//! `specs/rules/unwind.yaml` / `calls.yaml` in the comment above it.

use dwarfcheck::case::yaml::load_str;
use dwarfcheck::case::{Case, CfiCase};
use dwarfcheck_core::outcome::unwind::{Unwind, UnwindEnd};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BudgetKind, Outcome};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_fast::unwind::unwind;

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
    let got = unwind(&c.section, &*u.ctx, u.limit);
    let want = u.expect.as_ref().expect("unwind.expect");
    assert!(dwarfcheck::runner::compare::exact_unwind(want, &got), "expected:\n{want}\ngot:\n{got}");
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

#[test]
fn limit_and_frames_budget() {
    // `frames: 1`: the limit is checked before the budget and before the
    // second step: one step, end limit (unwind.frames-budget).
    let one = TWO_FRAMES.replace("      expect:", "      frames: 1\n      expect:");
    let c = case(&one);
    let u = c.unwind.as_ref().unwrap();
    let got = unwind(&c.section, &*u.ctx, u.limit);
    assert_eq!((got.steps.len(), &got.end), (1, &UnwindEnd::Limit));
    assert_eq!(got.steps[0].caller_pc, Some(0x2010));
    // Limit 0: no step at all.
    let got = unwind(&c.section, &*u.ctx, Some(0));
    assert_eq!((got.steps.len(), &got.end), (0, &UnwindEnd::Limit));
    // A frames budget of 1 with no limit: the second step would be step
    // number 2 > 1, so Budget{Frames, at: None} after one step.
    let mut ctx = (*u.ctx).clone();
    ctx.budgets.frames = 1;
    let got = unwind(&c.section, &ctx, None);
    assert_eq!(got.steps.len(), 1);
    assert_eq!(
        got.end,
        UnwindEnd::Fault { outcome: Outcome::Failed(Failure::Budget { budget: BudgetKind::Frames, at: None }) }
    );
    // Limit and budget equal: the limit wins.
    let got = unwind(&c.section, &ctx, Some(1));
    assert_eq!(got.end, UnwindEnd::Limit);
}

#[test]
fn missing_pc() {
    let c = case(TWO_FRAMES);
    let mut ctx = (*c.unwind.as_ref().unwrap().ctx).clone();
    ctx.pc = None;
    let got = unwind(&c.section, &ctx, None);
    assert_eq!(got, Unwind::fault(Outcome::Failed(Failure::EvalError { rule: R::CTX_PC_MISSING, at: None })));
}

// Every register rule in one row (x86-64, data_align -8). rsp = 0x7000,
// CFA = rsp + 16 = 0x7010 (DW_CFA_def_cfa).
// - rbx (3) same value: register 3 of the top frame, value 0x11;
// - rbp (6) register(rbx): register 3 too, value 0x11;
// - r12 val_offset(-8): CFA - 8 = 0x7008 as 8 implicit bytes;
// - r13 undefined: undefined, no value;
// - r14 expression {77 00} (DW_OP_breg7 0): rsp + 0 = 0x7000 converted to
//   a memory location; the 8 bytes there read 0xaa;
// - r15 val_expression {77 10}: rsp + 16 = 0x7010 as implicit bytes;
// - rsp (7) no column: val_offset(0), the CFA 0x7010 (unwind.sp-is-cfa);
// - rip (16) offset(-8): memory 0x7008 holding 0x3000: the caller pc.
// Frame 1 at 0x3000 is looked up at 0x2fff: no FDE covers it, so the
// unwinding ends with unwind.no-fde after one step.
const ALL_RULES: &str = r#"
target: x86_64
cases:
  - name: unwind-every-rule
    rules: [unwind.step]
    cfi:
      cie: { version: 4, data_align: -8, ra: 16, instructions: "DW_CFA_def_cfa: reg7 +16; DW_CFA_offset: reg16 -8" }
      fde:
        pc_begin: 0x1000
        pc_range: 0x20
        instructions: >-
          DW_CFA_same_value: reg3; DW_CFA_register: reg6 reg3; DW_CFA_val_offset: reg12 -8;
          DW_CFA_undefined: reg13; DW_CFA_expression: reg14 {77 00}; DW_CFA_val_expression: reg15 {77 10}
    unwind:
      context:
        pc: 0x1000
        registers: { rsp: 0x7000, 3: 0x11 }
        memory: [ { at: 0x7000, bytes: "aa000000000000000030000000000000" } ]
      expect:
        steps:
          - pc: 0x1000
            fde: 0
            cfa: { memory: 0x7010 }
            registers:
              3: { location: { register: 3 }, value: 0x11 }
              6: { location: { register: 3 }, value: 0x11 }
              7: { location: { implicit: "1070000000000000" }, value: 0x7010 }
              12: { location: { implicit: "0870000000000000" }, value: 0x7008 }
              13: { location: { undefined: true } }
              14: { location: { memory: 0x7000 }, value: 0xaa }
              15: { location: { implicit: "1070000000000000" }, value: 0x7010 }
              16: { location: { memory: 0x7008 }, value: 0x3000 }
            caller_pc: 0x3000
        end: { eval_error: unwind.no-fde }
"#;

#[test]
fn every_register_rule_then_no_fde() {
    let u = check(ALL_RULES);
    assert_eq!(
        u.end,
        UnwindEnd::Fault { outcome: Outcome::Failed(Failure::EvalError { rule: R::UNWIND_NO_FDE, at: None }) }
    );
}

// Three frames (x86-64). Frame 0 at 0x1010 in FDE A (CIE: CFA = rsp + 8,
// rip at CFA-8; A: CFA offset 16, rbp at CFA-16): rsp = 0x7000 so
// CFA0 = 0x7010, rbp at 0x7000 (0x66), rip at 0x7008 (0x2020), rsp =
// 0x7010. Frame 1 at 0x2020 (row at 0x201f, FDE B): CFA by expression
// DW_OP_breg7 16 on frame 1's rsp (0x7010): 0x7020; rip at 0x7018
// (0x3030); rsp = 0x7020; rbp has no column in B, so it is not listed.
// Frame 2 at 0x3030 (row at 0x302f, FDE C): CFA = rsp + 8 = 0x7028; rip
// undefined (base of the stack); rsp has an explicit same-value rule,
// which wins over val_offset(0): frame 2's rsp, the implicit 0x7020.
const THREE_FRAMES: &str = r#"
target: x86_64
cases:
  - name: unwind-three-frames
    rules: [unwind.step]
    cfi:
      cie: { version: 4, data_align: -8, ra: 16, instructions: "DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8" }
      fde: { pc_begin: 0x1000, pc_range: 0x100, instructions: "DW_CFA_def_cfa_offset: +16; DW_CFA_offset: reg6 -16" }
      fdes:
        - { pc_begin: 0x2000, pc_range: 0x100, instructions: "DW_CFA_def_cfa_expression: {77 10}" }
        - { pc_begin: 0x3000, pc_range: 0x100, instructions: "DW_CFA_undefined: reg16; DW_CFA_same_value: reg7" }
    unwind:
      context:
        pc: 0x1010
        registers: { rsp: 0x7000, rbp: 0x55 }
        memory: [ { at: 0x7000, bytes: "66000000000000002020000000000000 00000000000000003030000000000000" } ]
      expect:
        steps:
          - pc: 0x1010
            fde: 0
            cfa: { memory: 0x7010 }
            registers:
              6: { location: { memory: 0x7000 }, value: 0x66 }
              7: { location: { implicit: "1070000000000000" }, value: 0x7010 }
              16: { location: { memory: 0x7008 }, value: 0x2020 }
            caller_pc: 0x2020
          - pc: 0x2020
            fde: 1
            cfa: { memory: 0x7020 }
            registers:
              7: { location: { implicit: "2070000000000000" }, value: 0x7020 }
              16: { location: { memory: 0x7018 }, value: 0x3030 }
            caller_pc: 0x3030
          - pc: 0x3030
            fde: 2
            cfa: { memory: 0x7028 }
            registers:
              7: { location: { implicit: "2070000000000000" }, value: 0x7020 }
              16: { location: { undefined: true } }
            caller_pc: none
        end: base
"#;

#[test]
fn three_frames_cfa_expression_explicit_sp_rule() {
    let u = check(THREE_FRAMES);
    assert_eq!(u.steps.iter().map(|s| s.lookup).collect::<Vec<_>>(), vec![0x1010, 0x201f, 0x302f]);
}

/// An inline target without an ABI stack pointer rule (arch other),
/// hetero-2020 vendor profile (0xe6 = DW_OP_LLVM_call_frame_entry_reg),
/// registers r0..r7 of 64 bits, address space 0 of 64 bits and 1 of 32.
const INLINE_TARGET: &str = r#"
target:
  name: inline64
  arch: other
  endian: little
  registers: [ { numbers: [0, 7], name: "r{i}", bits: 64 } ]
  address_spaces: [ { number: 0, name: memory, address_bits: 64 }, { number: 1, name: local, address_bits: 32 } ]
  lanes: 1
  vendor: hetero-2020
  return_address_register: 5
"#;

/// A case on [`INLINE_TARGET`]: CIE (ra r5, data_align -8) with
/// `cie_insns`, one FDE [0x1000, 0x1100) with `fde_insns`, unwinding from
/// pc 0x1000 with r7 = `r7`, memory `memory` (YAML list), expecting
/// `expect` (YAML, indented for `expect:`).
fn inline_case(cie_insns: &str, fde_insns: &str, r7: &str, memory: &str, frames: &str, expect: &str) -> String {
    format!(
        "{INLINE_TARGET}cases:\n  - name: t\n    rules: [unwind.step]\n    cfi:\n      cie: {{ version: 4, data_align: -8, ra: 5, instructions: \"{cie_insns}\" }}\n      fde: {{ pc_begin: 0x1000, pc_range: 0x100, instructions: \"{fde_insns}\" }}\n    unwind:\n      context:\n        pc: 0x1000\n        registers: {{ r7: {r7} }}\n        memory: {memory}\n{frames}      expect:\n{expect}"
    )
}

#[test]
fn cfa_not_memory() {
    // DW_OP_lit5 DW_OP_stack_value: implicit storage, not memory
    // (unwind.cfa.not-memory, no `at`); no step is recorded.
    let t = inline_case(
        "DW_CFA_def_cfa_expression: {35 9f}",
        "",
        "0x7000",
        "[]",
        "",
        "        end: { ill_formed: unwind.cfa.not-memory }\n",
    );
    let u = check(&t);
    assert!(u.steps.is_empty());
    assert_eq!(
        u.end,
        UnwindEnd::Fault { outcome: Outcome::Failed(Failure::IllFormed { rule: R::UNWIND_CFA_NOT_MEMORY, at: None }) }
    );
    // DW_OP_reg0: a register location, not memory either.
    let t = inline_case(
        "DW_CFA_def_cfa_expression: {50}",
        "",
        "0x7000",
        "[]",
        "",
        "        end: { ill_formed: unwind.cfa.not-memory }\n",
    );
    check(&t);
}

#[test]
fn cfa_expression_fault_keeps_its_offset() {
    // DW_OP_lit1 DW_OP_lit0 DW_OP_div: division by zero at offset 2 of
    // the CFA expression ends the unwinding with that offset
    // (unwind.cfa.expression).
    let t = inline_case(
        "DW_CFA_def_cfa_expression: {31 30 1b}",
        "",
        "0x7000",
        "[]",
        "",
        "        end: { eval_error: op.div.by-zero }\n",
    );
    let c = case(&t);
    let u = c.unwind.as_ref().unwrap();
    let got = unwind(&c.section, &*u.ctx, u.limit);
    match got.end {
        UnwindEnd::Fault { outcome: Outcome::Failed(Failure::EvalError { at, .. }) } => assert_eq!(at, Some(2)),
        e => panic!("{e:?}"),
    }
}

// Cycles (unwind.cyclic). CFA = r7 + 16 = 0x7010, r5 (the return
// address) at CFA-8 = 0x7008 holding 0x4000.
// - r3 expression {e6 03}: DW_OP_LLVM_call_frame_entry_reg r3 inside r3's
//   own rule re-enters r3: ill-formed unwind.cyclic for r3 only;
// - r4 expression {e6 05}: r5 of the caller by the row's offset(-8) rule,
//   memory 0x7008 (no cycle), value 0x4000.
// One step (frames: 1), end limit.
#[test]
fn cyclic_register() {
    let t = inline_case(
        "DW_CFA_def_cfa: reg7 +16; DW_CFA_offset: reg5 -8",
        "DW_CFA_expression: reg3 {e6 03}; DW_CFA_expression: reg4 {e6 05}",
        "0x7000",
        "[ { at: 0x7008, bytes: \"0040000000000000\" } ]",
        "      frames: 1\n",
        "        steps:\n          - pc: 0x1000\n            fde: 0\n            cfa: { memory: 0x7010 }\n            registers:\n              3: { ill_formed: unwind.cyclic }\n              4: { location: { memory: 0x7008 }, value: 0x4000 }\n              5: { location: { memory: 0x7008 }, value: 0x4000 }\n            caller_pc: 0x4000\n        end: limit\n",
    );
    let u = check(&t);
    assert_eq!(
        u.steps[0].registers[&3].location,
        Outcome::Failed(Failure::IllFormed { rule: R::UNWIND_CYCLIC, at: None })
    );
}

// The CFA expression {e6 05} asks for the caller's r5, whose rule
// offset(-8) needs this very CFA: unwind.cyclic ends the unwinding.
#[test]
fn cyclic_cfa() {
    let t = inline_case(
        "DW_CFA_def_cfa: reg7 +16; DW_CFA_offset: reg5 -8",
        "DW_CFA_def_cfa_expression: {e6 05}",
        "0x7000",
        "[]",
        "",
        "        end: { ill_formed: unwind.cyclic }\n",
    );
    let u = check(&t);
    assert_eq!(
        u.end,
        UnwindEnd::Fault { outcome: Outcome::Failed(Failure::IllFormed { rule: R::UNWIND_CYCLIC, at: None }) }
    );
}

// r5 at CFA-8 = 0x7008, but no memory is given there: the location
// stands, it has no value, the step is recorded without caller and the
// unwinding ends with unwind.return-address-unreadable.
#[test]
fn return_address_unreadable() {
    let t = inline_case(
        "DW_CFA_def_cfa: reg7 +16; DW_CFA_offset: reg5 -8",
        "",
        "0x7000",
        "[]",
        "",
        "        steps:\n          - pc: 0x1000\n            fde: 0\n            cfa: { memory: 0x7010 }\n            registers:\n              5: { location: { memory: 0x7008 } }\n            caller_pc: none\n        end: { eval_error: unwind.return-address-unreadable }\n",
    );
    check(&t);
}

// DW_CFA_LLVM_def_aspace_cfa r7 + 8 in address space 1 (32-bit
// addresses): r7 = 0x1_0000_7000 read as a 32-bit unsigned is 0x7000,
// plus 8: CFA = 0x7008 in space 1 (unwind.cfa.register-offset). r5 at
// CFA-8 = 0x7000 *in space 1* (frame.rule.offset: the CFA's space) holds
// 0x4000. r6 val_offset(0): r6 has 64 bits but space 1 addresses have 32:
// frame.val-offset.size-mismatch (for r6 only).
#[test]
fn aspace_cfa() {
    let t = inline_case(
        "DW_CFA_LLVM_def_aspace_cfa: reg7 +8 in addrspace1; DW_CFA_offset: reg5 -8",
        "DW_CFA_val_offset: reg6 +0",
        "0x100007000",
        "[ { aspace: 1, at: 0x7000, bytes: \"0040000000000000\" } ]",
        "      frames: 1\n",
        "        steps:\n          - pc: 0x1000\n            fde: 0\n            cfa: { memory: 0x7008, aspace: 1 }\n            registers:\n              5: { location: { memory: 0x7000, aspace: 1 }, value: 0x4000 }\n              6: { ill_formed: frame.val-offset.size-mismatch }\n            caller_pc: 0x4000\n        end: limit\n",
    );
    check(&t);
}

// AArch64, return address x30 at CFA-8, CFA = sp + 16 (sp = 0x8000:
// CFA 0x8010, x30 at 0x8008), RA_SIGN_STATE toggled once: signed. The
// saved x30 is 0x002b_0000_0040_1234: bit 55 (the top bit of 0x2b) is 0, so bits 63..48 are
// cleared: caller pc 0x40_1234 (unwind.aarch64.ra-sign-state). Column 34
// is never listed; sp (31) is val_offset(0): 0x8010.
const PAC: &str = r#"
target: aarch64
cases:
  - name: unwind-pac
    rules: [unwind.aarch64.ra-sign-state]
    cfi:
      cie: { version: 4, data_align: -8, ra: 30, instructions: "DW_CFA_def_cfa: reg31 +16; DW_CFA_offset: reg30 -8" }
      fde: { pc_begin: 0x1000, pc_range: 0x20, instructions: "DW_CFA_AARCH64_negate_ra_state" }
    unwind:
      context:
        pc: 0x1000
        registers: { 31: 0x8000 }
        memory: [ { at: 0x8008, bytes: "3412400000002b00" } ]
      frames: 1
      expect:
        steps:
          - pc: 0x1000
            fde: 0
            cfa: { memory: 0x8010 }
            registers:
              30: { location: { memory: 0x8008 }, value: 0x002b000000401234 }
              31: { location: { implicit: "1080000000000000" }, value: 0x8010 }
            caller_pc: 0x401234
        end: limit
"#;

#[test]
fn aarch64_pac_stripping() {
    check(PAC);
    // Bit 55 set: bits 63..48 all set (0x12ff_8000_0000_1000 ->
    // 0xffff_8000_0000_1000).
    let t = PAC
        .replace("3412400000002b00", "00100000 0080ff12")
        .replace("0x002b000000401234", "0x12ff800000001000")
        .replace("caller_pc: 0x401234", "caller_pc: 0xffff800000001000");
    check(&t);
    // Toggled twice: not signed, the saved value is the caller pc.
    let t = PAC
        .replace("DW_CFA_AARCH64_negate_ra_state\"", "DW_CFA_AARCH64_negate_ra_state; DW_CFA_AARCH64_negate_ra_state\"")
        .replace("caller_pc: 0x401234", "caller_pc: 0x002b000000401234");
    check(&t);
}

// ----- unwind.context-from-cfi: expression contexts completed by unwinding

/// The expression case of a YAML text, evaluated by the fast evaluator,
/// checked against its own `expect:` (exact, an expected `at` of `None`
/// matching any).
fn check_expr(text: &str) -> Outcome {
    let c = match load_str("e.yaml", text).unwrap_or_else(|e| panic!("{e:?}")).remove(0) {
        Case::Expr(c) => c,
        Case::Cfi(_) => panic!("expected an expression case"),
    };
    let got = dwarfcheck::consumer::builtin::fast_outcome(&c);
    let want = c.expect.as_ref().expect("expect:");
    assert!(dwarfcheck::runner::compare::exact(want, &got), "expected {want}, got {got}");
    got
}

/// An x86-64 expression case: `expr_bytes`, result kind `kind`, the
/// two-frame CFI of [`TWO_FRAMES`], pc `pc`, rsp 0x7000, rip saved at
/// 0x7000 (0x2010); `expect` is the YAML of `expect:`'s body.
fn two_frames_expr(expr: &str, kind: &str, pc: &str, expect: &str) -> String {
    format!(
        r#"
target: x86_64
cases:
  - name: e
    rules: [unwind.context-from-cfi]
    expr_bytes: "{expr}"
    context:
      result: {kind}
      pc: {pc}
      registers: {{ rsp: 0x7000 }}
      memory: [ {{ at: 0x7000, bytes: "1020000000000000" }} ]
      cfi:
        cie: {{ version: 4, data_align: -8, ra: 16, instructions: "DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8" }}
        fde: {{ pc_begin: 0x1000, pc_range: 0x20 }}
        fdes:
          - {{ pc_begin: 0x2000, pc_range: 0x40, instructions: "DW_CFA_undefined: reg16" }}
    expect:
      {expect}
"#
    )
}

#[test]
fn context_cfa_from_cfi() {
    // DW_OP_call_frame_cfa (9c) at pc 0x1004: frame 0's CFA, rsp + 8 =
    // 0x7008, as a memory location.
    check_expr(&two_frames_expr("9c", "location", "0x1004", "location: { memory: 0x7008 }"));
}

#[test]
fn context_caller_from_cfi() {
    // DW_OP_entry_value(DW_OP_breg7 0) (a3 02 77 00), result kind value,
    // at 0x1004: frame 1's rsp is the CFA 0x7008 (val_offset(0)), so the
    // block's value is 0x7008.
    check_expr(&two_frames_expr("a3 02 77 00", "value", "0x1004", "value: 0x7008"));
    // At 0x2010 the top frame's return address is undefined: no calling
    // frame (frame.caller-missing) at the operation, offset 0.
    check_expr(&two_frames_expr("a3 02 77 00", "value", "0x2010", "eval_error: frame.caller-missing\n      at: 0"));
}

#[test]
fn context_unwinding_fault_is_the_operations() {
    // pc 0x5000 has no FDE: DW_OP_call_frame_cfa after a DW_OP_nop fails
    // with unwind.no-fde at its own offset 1.
    let o = check_expr(&two_frames_expr("96 9c", "location", "0x5000", "eval_error: unwind.no-fde\n      at: 1"));
    assert_eq!(o, Outcome::Failed(Failure::EvalError { rule: R::UNWIND_NO_FDE, at: Some(1) }));
    // An expression that needs neither CFA nor caller is unaffected.
    check_expr(&two_frames_expr("31", "value", "0x5000", "value: 1"));
}

#[test]
fn context_call_frame_entry_reg_from_cfi() {
    // Inline target: CFA = r7 + 16 = 0x7010, r5 at CFA-8.
    // DW_OP_LLVM_call_frame_entry_reg r5 (e6 05) in frame 0: the caller's
    // r5 by frame 0's row, memory 0x7008. r5 is also the return address
    // column, so its value must be readable for frame 1 to exist.
    let t = format!(
        "{INLINE_TARGET}cases:\n  - name: e\n    rules: [unwind.context-from-cfi]\n    expr_bytes: \"e6 05\"\n    context:\n      result: location\n      pc: 0x1000\n      registers: {{ r7: 0x7000 }}\n      memory: [ {{ at: 0x7008, bytes: \"0020000000000000\" }} ]\n      cfi:\n        cie: {{ version: 4, data_align: -8, ra: 5, instructions: \"DW_CFA_def_cfa: reg7 +16; DW_CFA_offset: reg5 -8\" }}\n        fde: {{ pc_begin: 0x1000, pc_range: 0x100 }}\n    expect:\n      location: {{ memory: 0x7008 }}\n"
    );
    check_expr(&t);
}

/// An expression case on [`INLINE_TARGET`] whose context gives the CFA
/// 0x7010 in address space 1 and a calling frame with rules
/// r5 = offset(-8), r6 = val_offset(0).
fn aspace_expr(expr: &str, expect: &str) -> String {
    format!(
        "{INLINE_TARGET}cases:\n  - name: e\n    rules: [frame.rule.offset]\n    expr_bytes: \"{expr}\"\n    context:\n      result: location\n      cfa: 0x7010\n      cfa_aspace: 1\n      caller:\n        rules: {{ r5: \"[CFA-8]\", r6: \"CFA+0\" }}\n    expect:\n      {expect}\n"
    )
}

#[test]
fn explicit_cfa_aspace() {
    // DW_OP_call_frame_cfa pushes the CFA in its own space 1.
    check_expr(&aspace_expr("9c", "location: { memory: 0x7010, aspace: 1 }"));
    // offset(-8) offsets the CFA within space 1 (frame.rule.offset).
    check_expr(&aspace_expr("e6 05", "location: { memory: 0x7008, aspace: 1 }"));
    // val_offset for a 64-bit register when space 1 has 32-bit addresses
    // (frame.val-offset.size-mismatch), at the operation.
    check_expr(&aspace_expr("e6 06", "ill_formed: frame.val-offset.size-mismatch\n      at: 0"));
}

// The applying FDE's table fails (DW_CFA_restore_state with nothing
// remembered): that fault ends the unwinding before any step
// (unwind.table-fault).
#[test]
fn table_fault_ends() {
    let t = inline_case(
        "DW_CFA_def_cfa: reg7 +16",
        "DW_CFA_restore_state",
        "0x7000",
        "[]",
        "",
        "        end: { ill_formed: cfi.restore-state.empty-stack }\n",
    );
    let u = check(&t);
    assert!(u.steps.is_empty());
}

// A CIE with augmentation S (signal frame): the caller of frame 0 is
// looked up at its pc 0x2000 itself, not 0x1fff, which no FDE covers
// (unwind.lookup-address). Otherwise as TWO_FRAMES, with the return
// address 0x2000.
#[test]
fn signal_frame_lookup() {
    let t = r#"
target: x86_64
cases:
  - name: unwind-signal
    rules: [unwind.lookup-address]
    cfi:
      section: eh_frame
      cie: { version: 1, augmentation: zRS, fde_encoding: udata8, data_align: -8, ra: 16, instructions: "DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8" }
      fde: { pc_begin: 0x1000, pc_range: 0x20 }
      fdes:
        - { pc_begin: 0x2000, pc_range: 0x40, instructions: "DW_CFA_undefined: reg16" }
    unwind:
      context:
        pc: 0x1004
        registers: { rsp: 0x7000 }
        memory: [ { at: 0x7000, bytes: "0020000000000000" } ]
      expect:
        steps:
          - pc: 0x1004
            fde: 0
            cfa: { memory: 0x7008 }
            registers:
              rip: { location: { memory: 0x7000 }, value: 0x2000 }
              rsp: { location: { implicit: "0870000000000000" }, value: 0x7008 }
            caller_pc: 0x2000
          - pc: 0x2000
            lookup: 0x2000
            fde: 1
            cfa: { memory: 0x7010 }
            registers:
              rip: { location: { undefined: true } }
              rsp: { location: { implicit: "1070000000000000" }, value: 0x7010 }
            caller_pc: none
        end: base
"#;
    check(t);
}

// Frames further up (unwind.context-from-cfi): with THREE_FRAMES' CFI at
// 0x1010, DW_OP_entry_value(DW_OP_entry_value(DW_OP_breg7 0)) evaluates
// DW_OP_breg7 0 in frame 2, whose rsp is frame 1's CFA (val_offset(0) of
// FDE B's row, unwind.sp-is-cfa): 0x7020. One level: frame 1's rsp,
// frame 0's CFA 0x7010.
#[test]
fn context_chain_two_levels_up() {
    let cfi = r#"      cfi:
        cie: { version: 4, data_align: -8, ra: 16, instructions: "DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8" }
        fde: { pc_begin: 0x1000, pc_range: 0x100, instructions: "DW_CFA_def_cfa_offset: +16; DW_CFA_offset: reg6 -16" }
        fdes:
          - { pc_begin: 0x2000, pc_range: 0x100, instructions: "DW_CFA_def_cfa_expression: {77 10}" }
          - { pc_begin: 0x3000, pc_range: 0x100, instructions: "DW_CFA_undefined: reg16; DW_CFA_same_value: reg7" }
"#;
    let text = |expr: &str, value: &str| {
        format!(
            "target: x86_64\ncases:\n  - name: e\n    rules: [unwind.context-from-cfi]\n    expr_bytes: \"{expr}\"\n    context:\n      result: value\n      pc: 0x1010\n      registers: {{ rsp: 0x7000, rbp: 0x55 }}\n      memory: [ {{ at: 0x7000, bytes: \"66000000000000002020000000000000 00000000000000003030000000000000\" }} ]\n{cfi}    expect:\n      value: {value}\n"
        )
    };
    check_expr(&text("a3 04 a3 02 77 00", "0x7020"));
    check_expr(&text("a3 02 77 00", "0x7010"));
}

/// Random FDE instruction bytes (after a CIE giving CFA = rsp + 8 and rip
/// at CFA-8) unwound from a synthetic machine state: whatever the bytes,
/// the unwinder returns (no panic), makes at most `frames` steps, and
/// every step but the last has a caller pc.
#[test]
fn random_instructions_never_panic() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // Bytes that are likely CFA opcodes, register numbers and small operands.
    const POOL: &[u8] = &[
        0x00, 0x01, 0x02, 0x04, 0x07, 0x08, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
        0x16, 0x2e, 0x41, 0x44, 0x86, 0x90, 0xc6, 0x06, 0x03, 0x77, 0x9f, 0x23, 0xe6, 0x9c, 0x30, 0x31,
    ];
    let mut ran = 0;
    for _ in 0..2000 {
        let n = (next() % 12) as usize;
        let bytes: Vec<String> =
            (0..n).map(|_| format!("{:02x}", POOL[(next() % POOL.len() as u64) as usize])).collect();
        let t = format!(
            "target: x86_64\ncases:\n  - name: r\n    rules: [unwind.step]\n    cfi:\n      cie: {{ version: 4, data_align: -8, ra: 16, instructions: \"DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8\" }}\n      fde: {{ pc_begin: 0x1000, pc_range: 0x100, instructions_bytes: \"{}\" }}\n    unwind:\n      context:\n        pc: 0x1000\n        synthetic: {}\n",
            bytes.join(" "),
            next() % 1000
        );
        let mut cases = load_str("r.yaml", &t).unwrap_or_else(|e| panic!("{t}\n{e:?}"));
        let Case::Cfi(c) = cases.remove(0) else { panic!("a CFI case") };
        ran += 1;
        let u = c.unwind.as_ref().unwrap();
        let got = unwind(&c.section, &*u.ctx, Some(4));
        assert!(got.steps.len() <= 4, "{t}\n{got}");
        for s in got.steps.iter().rev().skip(1) {
            assert!(s.caller_pc.is_some(), "{t}\n{got}");
        }
    }
    assert_eq!(ran, 2000);
}
