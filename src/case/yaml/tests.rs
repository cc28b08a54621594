//! Tests of the case-file loader: located errors and hand-checked contexts.

use super::*;
use crate::case::Case;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{Outcome, SingleLocation, Source};

fn expr_case(text: &str) -> crate::case::ExprCase {
    match load_str("t.yaml", text).unwrap_or_else(|e| panic!("{e:?}")).remove(0) {
        Case::Expr(c) => c,
        Case::Cfi(_) => panic!("expected an expression case"),
    }
}

#[test]
fn loads_context_and_expectation() {
    let c = expr_case(
        "target: x86_64
cases:
  - name: a
    rules: [expr.decode.unknown-opcode]
    context:
      registers: { rsp: 0x7ffc0000, 0: \"88 77 66 55 44 33 22 11\" }
      memory: [{ at: 0x10, bytes: \"de ad\" }]
    expr_bytes: \"77 10\"
    expect:
      location: { memory: 0x7ffc0010 }
",
    );
    assert_eq!(&*c.expr, &[0x77, 0x10]);
    // rsp is DWARF register 7 on x86-64; 0x7ffc0000 little-endian.
    assert_eq!(c.ctx.registers[&7], vec![0x00, 0x00, 0xfc, 0x7f, 0, 0, 0, 0]);
    assert_eq!(c.ctx.registers[&0], vec![0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]);
    let mut two = [0u8; 2];
    c.ctx.read_memory(dwarfcheck_core::context::MemoryStorage::shared(0), 0x10, &mut two).unwrap();
    assert_eq!(two, [0xde, 0xad]);
    match c.expect {
        Some(Outcome::Location(l)) => {
            assert_eq!(l.places, vec![SingleLocation::Simple(Source::memory(0, 0x7ffc0010 * 8))])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn syntax_error_is_located() {
    let e = load_str("bad.yaml", "target: x86_64\ncases:\n  - name: a\n    rules: [x\n").unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].file, "bad.yaml");
    assert!(e[0].line >= 4, "{e:?}");
}

#[test]
fn unknown_key_is_located() {
    let e = load_str("k.yaml", "target: x86_64\ncases:\n  - name: a\n    rulez: []\n").unwrap_err();
    assert_eq!((e[0].line, e[0].column), (4, 5), "{e:?}");
    assert!(e[0].message.contains("rulez"), "{e:?}");
}

#[test]
fn unknown_register_is_located_at_its_name() {
    let text = "target: x86_64
cases:
  - name: first
    rules: [expr.decode.unknown-opcode]
    expr_bytes: \"96\"
  - name: second
    rules: [expr.decode.unknown-opcode]
    context:
      registers: { bogus: 1 }
    expr_bytes: \"96\"
";
    let e = load_str("r.yaml", text).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!((e[0].line, e[0].column), (9, 20), "{e:?}");
    assert!(e[0].message.contains("bogus"));
    assert_eq!(e[0].to_string(), format!("r.yaml:9:20: {}", e[0].message));
}

#[test]
fn unknown_rule_and_target_are_errors() {
    let e =
        load_str("u.yaml", "target: x86_64\ncases:\n  - name: a\n    rules: [no.such.rule]\n    expr_bytes: \"96\"\n")
            .unwrap_err();
    assert!(e[0].message.contains("no.such.rule"));
    assert_eq!(e[0].line, 4);
    let e = load_str("t.yaml", "target: vax\ncases: []\n").unwrap_err();
    assert!(e[0].message.contains("vax") && e[0].message.contains("x86_64"));
    assert_eq!(e[0].line, 1);
}

#[test]
fn loads_dies_caller_frames_and_bound_memory() {
    use dwarfcheck_core::context::{AttrForm, MemoryStorage};
    use dwarfcheck_core::outcome::cfi::RegisterRule;
    let c = expr_case(
        "target: x86_64
cases:
  - name: a
    rules: [expr.decode.unknown-opcode]
    context:
      lane: 3
      memory:
        - { aspace: 0, at: 0x10, bytes: \"01\" }
        - { aspace: 0, at: 0x10, bytes: \"02\", lane: 3 }
      cu:
        offset: 0x100
        dies:
          0x140: { location: \"DW_OP_reg0\" }
          0x148: { loclistx: 2 }
          0x150: { const_value: \"2a 00\", byte_size: 2 }
        debug_loclists: \"0c 00\"
        base_address: 0x401000
      caller:
        pc: 0x401234
        cfa: 0x7ffc0200
        rules: { rbx: \"[CFA-16]\", 6: same }
        caller: { pc: 0x402000 }
    expr_bytes: \"96\"
    expect:
      location: { memory: 0x10, lane: 3 }
",
    );
    let cu = c.ctx.cu.as_ref().unwrap();
    assert_eq!(cu.offset, 0x100);
    assert_eq!(cu.dies[&0x140].location, Some(AttrForm::Exprloc(vec![0x50])));
    assert_eq!(cu.dies[&0x148].location, Some(AttrForm::LocListX { index: 2 }));
    assert_eq!(cu.dies[&0x150].const_value, Some(vec![0x2a, 0]));
    assert_eq!((&*cu.debug_loclists, cu.base_address), (&[0x0c, 0][..], Some(0x401000)));
    // rbx is DWARF register 3 on x86-64; rbp is 6.
    let f = c.ctx.caller.as_ref().unwrap();
    assert_eq!((f.pc, f.cfa), (Some(0x401234), Some(0x7ffc0200)));
    assert_eq!(f.rule(3), &RegisterRule::Offset { offset: -16 });
    assert_eq!(f.rule(6), &RegisterRule::SameValue);
    assert_eq!(f.rule(0), &RegisterRule::Undefined);
    assert_eq!(f.caller.as_ref().unwrap().pc, Some(0x402000));
    // The two segments at 0x10 are different storage: shared and lane 3's.
    let mut b = [0u8; 1];
    c.ctx.read_memory(dwarfcheck_core::context::MemoryStorage::shared(0), 0x10, &mut b).unwrap();
    assert_eq!(b, [1]);
    c.ctx.read_memory(MemoryStorage { aspace: 0, thread: None, lane: Some(3) }, 0x10, &mut b).unwrap();
    assert_eq!(b, [2]);
    assert!(c.ctx.read_memory(MemoryStorage { aspace: 0, thread: None, lane: Some(4) }, 0x10, &mut b).is_err());
    match c.expect {
        Some(Outcome::Location(l)) => assert_eq!(
            l.places,
            vec![SingleLocation::Simple(Source::Memory { aspace: 0, bit_addr: 0x80, thread: None, lane: Some(3) })]
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn structured_loclists_assemble_a_section() {
    // DWARF 5 §7.29: a 32-bit header (unit_length 4, version 2, address_size
    // 1, segment selector size 1, offset_entry_count 4 = 12 bytes), then one
    // 4-byte offset (4: the list follows the 4-byte table), then the list:
    // DW_LLE_start_end (07), 0x1000 and 0x1100 as 8-byte little-endian
    // addresses, ULEB length 1, DW_OP_reg5 (55), DW_LLE_end_of_list (00):
    // 20 bytes. unit_length = 8 + 4 + 20 = 32.
    let c = expr_case(
        "target: x86_64
cases:
  - name: a
    rules: [loclist.entries]
    loclistx: 0
    context:
      cu: { loclists: [ [ { start_end: [0x1000, 0x1100], expr: \"DW_OP_reg5\" } ] ] }
",
    );
    let cu = c.ctx.cu.as_ref().unwrap();
    let mut want = vec![0x20, 0, 0, 0, 5, 0, 8, 0, 1, 0, 0, 0, 4, 0, 0, 0, 0x07];
    want.extend(0x1000u64.to_le_bytes());
    want.extend(0x1100u64.to_le_bytes());
    want.extend([0x01, 0x55, 0x00]);
    assert_eq!(&*cu.debug_loclists, &want[..]);
    assert_eq!(cu.loclists_base, 12);
    assert_eq!(c.form, Some(dwarfcheck_core::context::AttrForm::LocListX { index: 0 }));
}

#[test]
fn structured_debug_loc_for_version_4() {
    // DWARF 4 .debug_loc with 4-byte addresses: base selection (ffffffff,
    // 0x8000), the pair (0, 8) with 2-byte length 1 and DW_OP_reg1 (51),
    // then the (0, 0) end of the list.
    let c = expr_case(
        "target: x86_64
cases:
  - name: a
    rules: [loclist.debug-loc]
    loclist: 0
    context:
      cu: { version: 4, address_size: 4, loclists: [ [ { base_address: 0x8000 }, { offset_pair: [0, 8], expr: \"DW_OP_reg1\" } ] ] }
",
    );
    let cu = c.ctx.cu.as_ref().unwrap();
    let want = [0xff, 0xff, 0xff, 0xff, 0x00, 0x80, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0x51, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(&*cu.debug_loc, &want[..]);
}

#[test]
fn vector_base_type_size_is_the_whole_vector() {
    // attr.llvm-vector-size.representation: 4 x 32-bit elements = 128 bits.
    let c = expr_case(
        "target: x86_64
cases:
  - name: a
    rules: [attr.llvm-vector-size.representation]
    context:
      cu: { base_types: { 0x40: { encoding: DW_ATE_unsigned, bits: 32, vector_size: 4 } } }
    expr: DW_OP_nop
",
    );
    let t = c.ctx.base_type(0x40).unwrap();
    assert_eq!((t.bits, t.vector_size), (128, 4));
}

/// The `unwind:` syntax (docs/case-format.md): FDE indices become section
/// offsets, lookups default to pc then pc - 1, values become register-size
/// bytes, `none` is no caller.
#[test]
fn loads_unwind_steps() {
    let text = "target: x86_64
cases:
  - name: u
    rules: [unwind.step]
    cfi:
      cie: { version: 4, data_align: -8, ra: 16, instructions: \"DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8\" }
      fde: { pc_begin: 0x1000, pc_range: 0x20 }
      fdes:
        - { pc_begin: 0x2000, pc_range: 0x40, instructions: \"DW_CFA_undefined: reg16\" }
    unwind:
      context: { pc: 0x1004, registers: { rsp: 0x7000 } }
      frames: 4
      expect:
        steps:
          - { pc: 0x1004, cfa: { memory: 0x7008 }, registers: { rip: { location: { memory: 0x7000 }, value: 0x2010 } }, caller_pc: 0x2010 }
          - { pc: 0x2010, fde: 1, cfa: { memory: 0x7010 }, registers: { 16: { eval_error: unwind.no-fde } }, caller_pc: none }
        end: { budget: frames }
";
    let c = match load_str("t.yaml", text).unwrap_or_else(|e| panic!("{e:?}")).remove(0) {
        Case::Cfi(c) => c,
        Case::Expr(_) => panic!("expected a CFI case"),
    };
    let u = c.unwind.expect("unwind");
    assert_eq!(u.limit, Some(4));
    assert_eq!(u.ctx.pc, Some(0x1004));
    assert!(u.ctx.cfi.is_some());
    let e = u.expect.expect("expect");
    // CIE: 15 header bytes + 5 instruction bytes, padded to 24; FDE 0 at 24
    // (24 bytes: 4 length + 4 CIE pointer + 16 addresses, no instructions);
    // FDE 1 at 48.
    assert_eq!(e.steps[0].fde_offset, 24);
    assert_eq!(e.steps[1].fde_offset, 48);
    assert_eq!((e.steps[0].lookup, e.steps[1].lookup), (0x1004, 0x200f));
    assert_eq!(e.steps[0].registers[&16].bytes, Some(vec![0x10, 0x20, 0, 0, 0, 0, 0, 0]));
    assert_eq!(e.steps[0].caller_pc, Some(0x2010));
    assert_eq!(e.steps[1].caller_pc, None);
    assert_eq!(e.steps[1].registers[&16].location.rule().map(|r| r.to_string()), Some("unwind.no-fde".into()));
    assert_eq!(
        e.end,
        dwarfcheck_core::outcome::unwind::UnwindEnd::Fault {
            outcome: Outcome::Failed(Failure::Budget {
                budget: dwarfcheck_core::outcome::BudgetKind::Frames,
                at: None
            })
        }
    );
}
