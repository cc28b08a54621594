//! Hand-derived expectations for the gimli mapping.

use super::Gimli;
use crate::case::{CfiCase, ExprCase};
use crate::consumer::Consumer;
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::context::{CompUnit, Context, ResultKind};
use dwarfcheck_core::outcome::location::RawSingle;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{
    BaseType, BudgetKind, CfaRule, CfiOutcome, Outcome, RawLocation, RawPiece, RegisterRule, Row, Source, Value,
};
use dwarfcheck_core::target::presets;
use std::collections::BTreeMap;
use std::sync::Arc;

fn ctx() -> Context {
    let mut c = Context::new(Arc::new(presets::x86_64()));
    c.result_kind = Some(ResultKind::Location);
    c.registers.insert(7, 0x7ffc_0000u64.to_le_bytes().to_vec()); // rsp
    c
}

fn eval(bytes: &[u8], ctx: Context) -> Outcome {
    let case = ExprCase {
        name: "t".into(),
        origin: "test".into(),
        expr: Arc::from(bytes),
        attribute: None,
        form: None,
        spirv: None,
        ctx: Arc::new(ctx),
        rules: vec![],
        expect: None,
    };
    Gimli.evaluate(&case)
}

fn loc(s: Source) -> Outcome {
    Outcome::Location(RawLocation::simple(s).normalize())
}

fn mem(addr: u64) -> Source {
    Source::memory(0, u128::from(addr) * 8)
}

#[test]
fn breg7_is_memory_at_rsp_plus_16() {
    // DWARF 5 §2.5.1.2 DW_OP_breg7 16: rsp (0x7ffc0000) + 16.
    assert_eq!(eval(&[0x77, 0x10], ctx()), loc(mem(0x7ffc_0010)));
}

#[test]
fn breg7_as_value_is_the_address() {
    let mut c = ctx();
    c.result_kind = Some(ResultKind::Value);
    let want = Value::from_u128(BaseType::generic(64, false), 0x7ffc_0010);
    assert_eq!(eval(&[0x77, 0x10], c), Outcome::Value(want));
}

#[test]
fn lit5_stack_value_is_implicit_8_bytes() {
    // DW_OP_lit5 DW_OP_stack_value: implicit storage of the generic value
    // 5, 8 bytes little-endian.
    assert_eq!(
        eval(&[0x35, 0x9f], ctx()),
        loc(Source::Implicit { bytes: vec![5, 0, 0, 0, 0, 0, 0, 0], bit_offset: 0 })
    );
}

#[test]
fn implicit_value_bytes_are_kept() {
    // DW_OP_implicit_value 3 "aa bb cc".
    assert_eq!(
        eval(&[0x9e, 0x03, 0xaa, 0xbb, 0xcc], ctx()),
        loc(Source::Implicit { bytes: vec![0xaa, 0xbb, 0xcc], bit_offset: 0 })
    );
}

#[test]
fn truncated_operand_is_ill_formed() {
    // DW_OP_const2u with one operand byte.
    assert_eq!(eval(&[0x0a, 0x01], ctx()).kind(), "ill-formed");
}

#[test]
fn composite_from_the_brief() {
    // DW_OP_reg0 DW_OP_piece 4 DW_OP_piece 2 DW_OP_breg7 16 DW_OP_piece 2
    let got = eval(&[0x50, 0x93, 0x04, 0x93, 0x02, 0x77, 0x10, 0x93, 0x02], ctx());
    let want = RawLocation {
        singles: vec![RawSingle::Composite {
            pieces: vec![
                RawPiece { bits: 32, location: RawLocation::simple(Source::Register { regno: 0, bit_offset: 0 }) },
                RawPiece { bits: 16, location: RawLocation::simple(Source::Undefined) },
                RawPiece { bits: 16, location: RawLocation::simple(mem(0x7ffc_0010)) },
            ],
            bit_offset: 0,
        }],
    };
    assert_eq!(got, Outcome::Location(want.normalize()));
}

#[test]
fn missing_register_is_an_evaluation_error() {
    let mut c = ctx();
    c.registers.clear();
    assert_eq!(eval(&[0x77, 0x10], c).kind(), "eval-error");
}

#[test]
fn synthetic_register_is_read() {
    // With a seed, rbx reads as the synthetic bytes.
    let mut c = ctx();
    c.synthetic = Some(9);
    let mut b = [0u8; 8];
    dwarfcheck_core::context::synthetic::register_bytes(9, 3, 0, &mut b);
    let want = u64::from_le_bytes(b).wrapping_add(4);
    assert_eq!(eval(&[0x73, 0x04], c), loc(mem(want)));
}

#[test]
fn fbreg_uses_the_frame_base_expression() {
    // frame base DW_OP_call_frame_cfa, CFA 0x1000; DW_OP_fbreg -8 -> 0xff8.
    let mut c = ctx();
    c.cfa = Some(0x1000);
    c.frame_base = Some(vec![0x9c]);
    assert_eq!(eval(&[0x91, 0x78], c), loc(mem(0xff8)));
    // A register frame base means the register's contents.
    let mut c = ctx();
    c.frame_base = Some(vec![0x57]); // DW_OP_reg7
    assert_eq!(eval(&[0x91, 0x08], c), loc(mem(0x7ffc_0008)));
}

#[test]
fn missing_frame_base_and_cfa_are_evaluation_errors() {
    assert_eq!(eval(&[0x91, 0x78], ctx()).kind(), "eval-error");
    assert_eq!(eval(&[0x9c], ctx()).kind(), "eval-error");
}

#[test]
fn tls_adds_the_base() {
    // DW_OP_const1u 0x10 DW_OP_form_tls_address, TLS base 0x7f0000000000.
    let mut c = ctx();
    c.tls_base = Some(0x7f00_0000_0000);
    assert_eq!(eval(&[0x08, 0x10, 0x9b], c), loc(mem(0x7f00_0000_0010)));
}

#[test]
fn addrx_reads_debug_addr() {
    // DW_OP_addrx 1 with addr_base 8: entry at bytes 16..24.
    let mut c = ctx();
    let mut debug_addr = vec![0u8; 24];
    debug_addr[16..24].copy_from_slice(&0x401000u64.to_le_bytes());
    c.cu = Some(CompUnit {
        version: 5,
        format: Default::default(),
        address_size: 8,
        debug_addr: Arc::from(debug_addr),
        addr_base: 8,
        base_types: BTreeMap::new(),
        ..Default::default()
    });
    assert_eq!(eval(&[0xa1, 0x01], c), loc(mem(0x401000)));
}

#[test]
fn regval_type_uses_the_base_type() {
    // DW_OP_regval_type rax <signed 32 at 0x2a> DW_OP_stack_value, rax =
    // 0xffff_fffe: implicit storage of the signed32 value -2 (4 bytes).
    let mut c = ctx();
    c.registers.insert(0, 0xffff_fffeu64.to_le_bytes().to_vec());
    let mut cu = CompUnit { version: 5, address_size: 8, ..Default::default() };
    cu.base_types.insert(0x2a, BaseType::ate(dwarfcheck_core::encoding::ate::SIGNED, 32, false));
    c.cu = Some(cu);
    assert_eq!(
        eval(&[0xa5, 0x00, 0x2a, 0x9f], c),
        loc(Source::Implicit { bytes: vec![0xfe, 0xff, 0xff, 0xff], bit_offset: 0 })
    );
}

#[test]
fn gnu_uninit_is_unsupported() {
    // DW_OP_reg12 DW_OP_GNU_uninit: gimli refuses to evaluate it.
    assert_eq!(eval(&[0x5c, 0xf0], ctx()).kind(), "unsupported");
}

#[test]
fn endless_loop_hits_the_step_budget() {
    // DW_OP_skip -3 jumps to itself.
    let mut c = ctx();
    c.budgets.steps = 50;
    assert!(matches!(eval(&[0x2f, 0xfd, 0xff], c), Outcome::Failed(Failure::Budget { budget: BudgetKind::Steps, .. })));
}

#[test]
fn implicit_pointer_maps() {
    // DW_OP_implicit_pointer <die 0x40> 8 (32-bit DWARF).
    assert_eq!(
        eval(&[0xa0, 0x40, 0, 0, 0, 0x08], ctx()),
        loc(Source::ImplicitPointer { die: 0x40, aspace: None, byte_displacement: 8, bit_offset: 0 })
    );
}

/// A `.debug_frame` with one CIE (version 1, code alignment 1, data
/// alignment -8, RA column 16, `DW_CFA_def_cfa r7 8; DW_CFA_offset r16 1`)
/// at offset 0 and one FDE at offset 24 for [0x1000, 0x1020) with `fde`.
fn debug_frame(fde: &[u8]) -> (Arc<CfiSection>, u64) {
    let mut s = Vec::new();
    let cie: Vec<u8> = vec![0xff, 0xff, 0xff, 0xff, 1, 0, 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1, 0, 0, 0, 0, 0, 0];
    s.extend_from_slice(&(cie.len() as u32).to_le_bytes());
    s.extend_from_slice(&cie);
    let fde_off = s.len() as u64;
    let mut body = vec![0, 0, 0, 0];
    body.extend_from_slice(&0x1000u64.to_le_bytes());
    body.extend_from_slice(&0x20u64.to_le_bytes());
    body.extend_from_slice(fde);
    while (body.len() + 4) % 8 != 0 {
        body.push(0);
    }
    s.extend_from_slice(&(body.len() as u32).to_le_bytes());
    s.extend_from_slice(&body);
    let sec = CfiSection {
        kind: FrameKind::DebugFrame,
        bytes: Arc::from(s),
        address: 0,
        text_base: None,
        data_base: None,
        target: Arc::new(presets::x86_64()),
    };
    (Arc::new(sec), fde_off)
}

fn table(fde: &[u8]) -> CfiOutcome {
    let (section, fde_offset) = debug_frame(fde);
    Gimli.frame_table(&CfiCase {
        name: "t".into(),
        origin: "test".into(),
        section,
        fde_offset,
        rules: vec![],
        expect: None,
        unwind: None,
    })
}

#[test]
fn fde_rows_map() {
    // DW_CFA_advance_loc 4; DW_CFA_def_cfa_offset 16; DW_CFA_offset r6 2.
    let CfiOutcome::Table(t) = table(&[0x44, 0x0e, 0x10, 0x86, 0x02]) else { panic!("no table") };
    let ra = (16u64, RegisterRule::Offset { offset: -8 });
    let want = vec![
        Row {
            start: 0x1000,
            end: 0x1004,
            cfa: CfaRule::RegOffset { register: 7, offset: 8, aspace: 0 },
            registers: BTreeMap::from([ra.clone()]),
        },
        Row {
            start: 0x1004,
            end: 0x1020,
            cfa: CfaRule::RegOffset { register: 7, offset: 16, aspace: 0 },
            registers: BTreeMap::from([ra, (6, RegisterRule::Offset { offset: -16 })]),
        },
    ];
    assert_eq!(t.rows, want);
}

#[test]
fn remember_state_five_deep_is_unsupported() {
    // Five DW_CFA_remember_state: gimli's stack holds four.
    assert_eq!(table(&[0x0a, 0x0a, 0x0a, 0x0a, 0x0a]).kind(), "unsupported");
}

#[test]
fn unknown_cfa_opcode_is_ill_formed() {
    // 0x3f is no DW_CFA instruction.
    assert_eq!(table(&[0x3f]).kind(), "ill-formed");
}

/// An `.eh_frame` at virtual address 0x2000 with a "zR" CIE (FDE pointer
/// encoding `enc`, sdata4) at 0, and an FDE at 24 whose pc_begin field (at
/// section offset 32) holds 0x100 and whose range is 0x10.
fn eh_frame_case(enc: u8, data_base: Option<u64>) -> CfiOutcome {
    let cie: Vec<u8> = vec![0, 0, 0, 0, 1, b'z', b'R', 0, 1, 0x78, 16, 1, enc, 0x0c, 7, 8, 0x90, 1, 0, 0];
    let mut s = Vec::new();
    s.extend_from_slice(&(cie.len() as u32).to_le_bytes());
    s.extend_from_slice(&cie);
    assert_eq!(s.len(), 24);
    let mut fde = Vec::new();
    fde.extend_from_slice(&28u32.to_le_bytes()); // back to the CIE
    fde.extend_from_slice(&0x100i32.to_le_bytes());
    fde.extend_from_slice(&0x10i32.to_le_bytes());
    fde.extend_from_slice(&[0, 0, 0, 0]); // no augmentation data, 3 nops
    s.extend_from_slice(&(fde.len() as u32).to_le_bytes());
    s.extend_from_slice(&fde);
    s.extend_from_slice(&[0, 0, 0, 0]); // terminator
    let section = Arc::new(CfiSection {
        kind: FrameKind::EhFrame,
        bytes: Arc::from(s),
        address: 0x2000,
        text_base: None,
        data_base,
        target: Arc::new(presets::x86_64()),
    });
    Gimli.frame_table(&CfiCase {
        name: "t".into(),
        origin: "test".into(),
        section,
        fde_offset: 24,
        rules: vec![],
        expect: None,
        unwind: None,
    })
}

fn one_row(start: u64) -> Vec<Row> {
    vec![Row {
        start,
        end: start + 0x10,
        cfa: CfaRule::RegOffset { register: 7, offset: 8, aspace: 0 },
        registers: BTreeMap::from([(16, RegisterRule::Offset { offset: -8 })]),
    }]
}

#[test]
fn eh_frame_pcrel_is_relative_to_the_field() {
    // DW_EH_PE_pcrel|sdata4: 0x2000 + 32 + 0x100 = 0x2120.
    let CfiOutcome::Table(t) = eh_frame_case(0x1b, None) else { panic!("no table") };
    assert_eq!(t.rows, one_row(0x2120));
}

#[test]
fn eh_frame_datarel_uses_the_data_base() {
    // DW_EH_PE_datarel|sdata4 with the GOT at 0x5000: 0x5000 + 0x100.
    let CfiOutcome::Table(t) = eh_frame_case(0x3b, Some(0x5000)) else { panic!("no table") };
    assert_eq!(t.rows, one_row(0x5100));
    // Without a data base gimli cannot resolve it: an evaluation error.
    assert_eq!(eh_frame_case(0x3b, None).kind(), "eval-error");
}

#[test]
fn random_bytes_never_fault() {
    // Deterministic pseudo-random expressions, with a synthetic context so
    // every register and memory read succeeds: gimli and the adapter must
    // answer every one without panicking.
    let mut c = ctx();
    c.synthetic = Some(1);
    c.cfa = Some(0x1000);
    c.tls_base = Some(0x2000);
    c.frame_base = Some(vec![0x9c]);
    c.budgets.steps = 1000;
    let c = Arc::new(c);
    let mut z = 7u64;
    for n in 0..20_000usize {
        let len = 1 + n % 12;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                z = dwarfcheck_core::context::synthetic::mix(z);
                z as u8
            })
            .collect();
        let case = ExprCase {
            name: "r".into(),
            origin: "random".into(),
            expr: Arc::from(&bytes[..]),
            attribute: None,
            form: None,
            spirv: None,
            ctx: c.clone(),
            rules: vec![],
            expect: None,
        };
        let o = Gimli.evaluate(&case);
        assert!(!matches!(o, Outcome::Failed(Failure::ConsumerFault { .. })), "{bytes:02x?}: {o}");
    }
}

#[test]
fn empty_expression_is_unsupported_unless_a_value_is_required() {
    // DWARF 5 §2.6.1.1.1: an empty expression is an empty (undefined)
    // location description; gimli pops an empty stack instead, which it
    // cannot express, so the adapter reports Unsupported.
    assert!(matches!(eval(&[], ctx()), Outcome::Failed(Failure::Unsupported { .. })));
    let mut c = ctx();
    c.result_kind = None;
    assert!(matches!(eval(&[], c), Outcome::Failed(Failure::Unsupported { .. })));
    // With a value required the empty stack is ill-formed
    // (expr.result.value-empty-stack), and gimli's error is a diagnosis.
    let mut c = ctx();
    c.result_kind = Some(ResultKind::Value);
    let o = eval(&[], c);
    assert!(matches!(o, Outcome::Failed(Failure::IllFormed { .. })), "{o}");
    assert_eq!(o.rule().map(|r| r.as_str()), Some("gimli:NotEnoughStackItems"));
}

/// A context with the 64-bit float base type at unit offset 0x31.
fn float_ctx(kind: Option<ResultKind>) -> Context {
    let mut c = ctx();
    c.result_kind = kind;
    let mut cu = CompUnit { version: 5, address_size: 8, ..Default::default() };
    cu.base_types.insert(0x31, BaseType::ate(dwarfcheck_core::encoding::ate::FLOAT, 64, false));
    c.cu = Some(cu);
    c
}

/// DW_OP_const8u 0x3ff8000000000000 DW_OP_reinterpret <float64 at 0x31>.
const CONST_1_5_AS_FLOAT: [u8; 11] = [0x0e, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0xa9, 0x31];

#[test]
fn float_final_value_without_stack_value_is_unsupported() {
    // hetero-2020 "DW_OP_reinterpret": the bits 0x3ff8000000000000 as a
    // binary64 are 1.5, the required value. gimli turns the final entry
    // into an address and cannot: a limit of its API, not a wrong answer.
    for kind in [Some(ResultKind::Value), None] {
        let o = eval(&CONST_1_5_AS_FLOAT, float_ctx(kind));
        assert!(matches!(&o, Outcome::Failed(Failure::Unsupported { what }) if what.contains("non-integral")), "{o}");
    }
}

#[test]
fn float_with_stack_value_is_implicit_storage() {
    // The same value with DW_OP_stack_value: implicit storage holding 1.5
    // as binary64, little-endian 00 .. 00 f8 3f.
    let mut e = CONST_1_5_AS_FLOAT.to_vec();
    e.push(0x9f);
    let bytes = vec![0, 0, 0, 0, 0, 0, 0xf8, 0x3f];
    assert_eq!(eval(&e, float_ctx(Some(ResultKind::Location))), loc(Source::Implicit { bytes, bit_offset: 0 }));
}

#[test]
fn integral_required_before_the_end_stays_an_error() {
    // DW_OP_dup DW_OP_and on a float: bitwise operations need integral
    // operands (op.arith.requires-integral); gimli's error there is not the
    // final-value limit.
    let mut e = CONST_1_5_AS_FLOAT.to_vec();
    e.extend_from_slice(&[0x12, 0x1a]);
    let o = eval(&e, float_ctx(Some(ResultKind::Value)));
    assert_eq!(o.rule().map(|r| r.as_str()), Some("gimli:IntegralTypeRequired"), "{o}");
}

#[test]
fn float_final_value_as_location_stays_an_error() {
    // A float is never a memory location: with a location required the
    // adapter keeps gimli's error.
    let o = eval(&CONST_1_5_AS_FLOAT, float_ctx(Some(ResultKind::Location)));
    assert_eq!(o.rule().map(|r| r.as_str()), Some("gimli:IntegralTypeRequired"), "{o}");
}

#[test]
fn xderef_address_is_truncated_to_the_address_space() {
    // op.xderef.address-space: DW_OP_lit1 DW_OP_constu 0x10010
    // DW_OP_xderef_size 2 reads 2 bytes at 0x10010 truncated to address
    // space 1's 16-bit addresses, i.e. at 0x10: bytes 02 01, little-endian
    // 0x0102.
    let mut t = presets::x86_64();
    t.address_spaces.push(dwarfcheck_core::target::AddressSpace {
        number: 1,
        name: "local".into(),
        address_bits: 16,
        per_thread: false,
        per_lane: false,
    });
    let mut c = ctx();
    c.target = Arc::new(t);
    c.result_kind = Some(ResultKind::Value);
    c.memory.push(dwarfcheck_core::context::MemorySegment::shared(1, 0x10, vec![2, 1]));
    let want = Value::from_u128(BaseType::generic(64, false), 0x0102);
    assert_eq!(eval(&[0x31, 0x10, 0x90, 0x80, 0x04, 0x95, 0x02], c), Outcome::Value(want));
}

#[test]
fn gnu_negative_offset_extended_is_unsupported() {
    // DW_CFA_GNU_negative_offset_extended r16 1 (opcode 0x2f): defined by
    // the GNU extensions, not decoded by gimli.
    let o = table(&[0x2f, 0x10, 0x01]);
    assert!(
        matches!(&o, CfiOutcome::Failed(Failure::Unsupported { what }) if what.contains("negative_offset_extended")),
        "{o:?}"
    );
}

#[test]
fn unspecified_result_kind_keeps_a_typed_value() {
    // DW_OP_const_type <unsigned 16 at 0x30> 2 "34 12", no result kind: the
    // top entry is a typed value, returned as the value 0x1234.
    let mut c = ctx();
    c.result_kind = None;
    let u16t = BaseType::ate(dwarfcheck_core::encoding::ate::UNSIGNED, 16, false);
    let mut cu = CompUnit { version: 5, address_size: 8, ..Default::default() };
    cu.base_types.insert(0x30, u16t);
    c.cu = Some(cu);
    assert_eq!(eval(&[0xa4, 0x30, 0x02, 0x34, 0x12], c), Outcome::Value(Value::from_u128(u16t, 0x1234)));
}

/// The only case of a YAML case file on x86_64, run by the gimli adapter.
fn eval_yaml(case: &str) -> Outcome {
    let text = format!("target: x86_64\ncases:\n  - name: c\n    rules: [op.nop.no-effect]\n{case}");
    match crate::case::yaml::load_str("t.yaml", &text).unwrap_or_else(|e| panic!("{e:?}")).remove(0) {
        crate::case::Case::Expr(c) => Gimli.evaluate(&c),
        crate::case::Case::Cfi(_) => panic!("expected an expression case"),
    }
}

#[test]
fn call4_runs_the_die_expression_on_the_same_stack() {
    // DWARF 5 §2.5.1.5: lit1, then DIE 0x140's "lit4 plus" -> 5, as a value.
    let o = eval_yaml(
        "    context: { result: value, cu: { offset: 0x100, dies: { 0x140: { location: \"DW_OP_lit4 DW_OP_plus\" } } } }
    expr: DW_OP_lit1 DW_OP_call4 0x40
",
    );
    assert_eq!(o, Outcome::Value(Value::from_u128(BaseType::generic(64, false), 5)));
    // A DIE with neither attribute: no effect, lit1 stays.
    let o = eval_yaml(
        "    context: { result: value, cu: { offset: 0x100, dies: { 0x140: { byte_size: 4 } } } }
    expr: DW_OP_lit1 DW_OP_call4 0x40
",
    );
    assert_eq!(o, Outcome::Value(Value::from_u128(BaseType::generic(64, false), 1)));
}

#[test]
fn entry_value_reads_the_callers_register_through_its_rule() {
    // The caller's rbx (DWARF 3) was saved at CFA-16 = 0x7ffc0100 - 16 =
    // 0x7ffc00f0, which holds 0x2a: DW_OP_entry_value(DW_OP_reg3) is 0x2a.
    let o = eval_yaml(
        "    context:
      result: value
      cfa: 0x7ffc0100
      memory: [{ at: 0x7ffc00f0, bytes: \"2a 00 00 00 00 00 00 00\" }]
      caller: { rules: { rbx: \"[CFA-16]\" } }
    expr_bytes: \"a3 01 53 9f\"  # DW_OP_entry_value(DW_OP_reg3) DW_OP_stack_value
",
    );
    assert_eq!(
        o,
        Outcome::Location(
            RawLocation::simple(Source::Implicit { bytes: vec![0x2a, 0, 0, 0, 0, 0, 0, 0], bit_offset: 0 }).normalize()
        )
    );
    // Without a calling frame there is nothing to evaluate it in.
    let o = eval_yaml("    context: { result: value }\n    expr_bytes: \"a3 01 53 9f\"\n");
    assert!(matches!(o, Outcome::Failed(Failure::EvalError { .. })), "{o}");
}

#[test]
fn location_list_default_entry_only_when_nothing_matches() {
    // .debug_loclists from offset 0 (no header needed for the reader):
    // 06 base_address 0x401000; 04 offset_pair [0x10, 0x20) expr 52 (reg2);
    // 05 default_location expr 53 (reg3); 00 end (DWARF 5 §2.6.2, §7.7.3).
    let list = "06 00 10 40 00 00 00 00 00 04 10 20 01 52 05 01 53 00";
    let at = |pc: u64| {
        eval_yaml(&format!(
            "    context: {{ pc: {pc:#x}, cu: {{ version: 5, address_size: 8, debug_loclists: \"{list}\" }} }}
    attribute: location
    loclist: 0
"
        ))
    };
    assert_eq!(at(0x401018), loc(Source::Register { regno: 2, bit_offset: 0 }));
    assert_eq!(at(0x401030), loc(Source::Register { regno: 3, bit_offset: 0 }));
}
