//! The `intel` vendor profile against hetero-2020 on a real IGC expression
//! (issue 17 item 4): expected decodings derived by hand from the bytes.

use dwarfcheck::asm::expr::disassemble;
use dwarfcheck_core::context::Context;
use dwarfcheck_core::encoding::op::name_of;
use dwarfcheck_core::encoding::{Format, Op, VendorProfile};
use dwarfcheck_core::outcome::{Failure, Outcome};
use dwarfcheck_core::rules::id;
use dwarfcheck_core::target::presets;
use dwarfcheck_fast as fast;
use dwarfcheck_reference as reference;
use std::sync::Arc;

/// A location IGC wrote (issue 17): one bit piece of register 143, offset
/// by 16 plus 8 bytes per SIMD lane, plus 128.
const IGC_EXPR: [u8; 17] =
    [0x90, 0x8f, 0x01, 0x08, 0x80, 0x08, 0x40, 0xec, 0x23, 0x10, 0xed, 0x38, 0x1e, 0x22, 0x23, 0x80, 0x01];

/// By hand, under `intel`: regx ULEB 8f 01 = 143; const1u 0x80; const1u
/// 0x40; ec without operands; plus_uconst 0x10; ed without operands;
/// lit8; mul; plus; plus_uconst ULEB 80 01 = 128.
const INTEL_OPS: [(u32, Op); 10] = [
    (0, Op::Regx),
    (3, Op::Const1u),
    (5, Op::Const1u),
    (7, Op::IntelPushBitPieceStack),
    (8, Op::PlusUconst),
    (10, Op::IntelPushSimdLane),
    (11, Op::Lit(8)),
    (12, Op::Mul),
    (13, Op::Plus),
    (14, Op::PlusUconst),
];

/// By hand, under hetero-2020: 0xec is DW_OP_LLVM_select_bit_piece with two
/// ULEB128 operands, so it swallows `23 10` (35, 16); then 0xed at offset 10
/// is no operation of that profile.
const HETERO_OPS: [(u32, Op); 4] = [(0, Op::Regx), (3, Op::Const1u), (5, Op::Const1u), (7, Op::LlvmSelectBitPiece)];

fn ctx(vendor: VendorProfile) -> Context {
    // Register names only matter for the text; x86-64 has no register 143.
    let mut c = Context::new(Arc::new(presets::x86_64()));
    c.vendor = vendor;
    c
}

#[test]
fn asm_disassembly_differs_by_profile() {
    // The register's name is x86-64's DWARF 143 (APX r29): there is no
    // Intel GPU preset yet, and only the opcode reading matters here.
    let t = presets::x86_64();
    let intel = disassemble(&IGC_EXPR, &t, &VendorProfile::intel(), Format::Dwarf32, 8);
    assert_eq!(
        intel,
        "DW_OP_regx R29, DW_OP_const1u 0x80, DW_OP_const1u 0x40, DW_OP_INTEL_push_bit_piece_stack, \
         DW_OP_plus_uconst 0x10, DW_OP_INTEL_push_simd_lane, DW_OP_lit8, DW_OP_mul, DW_OP_plus, \
         DW_OP_plus_uconst 0x80"
    );
    let hetero = disassemble(&IGC_EXPR, &t, &VendorProfile::hetero_2020(), Format::Dwarf32, 8);
    assert_eq!(
        hetero,
        "DW_OP_regx R29, DW_OP_const1u 0x80, DW_OP_const1u 0x40, DW_OP_LLVM_select_bit_piece 0x23 0x10, \
         <bad: unknown opcode at offset 10: ed 38 1e 22 23 80 01>"
    );
}

#[test]
fn reference_decodes_by_profile() {
    let c = ctx(VendorProfile::intel());
    let ops = reference::expr::decode::decode(&IGC_EXPR, &c).expect("decodes completely under intel");
    let got: Vec<(u32, Op)> = ops.iter().map(|i| (i.at as u32, i.op)).collect();
    assert_eq!(got, INTEL_OPS);
    assert_eq!(ops[0].u(0), 143);
    assert_eq!(ops[9].u(0), 128);
    let text: Vec<String> = ops.iter().map(|i| i.text(&c.target)).collect();
    assert_eq!(text[3], "DW_OP_INTEL_push_bit_piece_stack");
    assert_eq!(text[5], "DW_OP_INTEL_push_simd_lane");

    let h = ctx(VendorProfile::hetero_2020());
    assert_eq!(reference::expr::decode::decode(&IGC_EXPR, &h).err(), Some((id::EXPR_DECODE_UNKNOWN_OPCODE, 10)));
}

#[test]
fn fast_decodes_by_profile() {
    let c = ctx(VendorProfile::intel());
    let mut out = Vec::new();
    fast::expr::decode::decode(&IGC_EXPR, &fast::expr::decode::Encoding::of(&c), &mut out)
        .expect("decodes completely under intel");
    let got: Vec<(u32, Op)> = out.iter().map(|i| (i.off, i.op)).collect();
    assert_eq!(got, INTEL_OPS);
    assert_eq!((out[0].a, out[9].a), (143, 128));

    let h = ctx(VendorProfile::hetero_2020());
    let e = fast::expr::decode::decode(&IGC_EXPR, &fast::expr::decode::Encoding::of(&h), &mut out).unwrap_err();
    assert_eq!((e.rule, e.at), (id::EXPR_DECODE_UNKNOWN_OPCODE, 10));
    // What decoded before the fault matches the hand reading.
    let prefix: Vec<(u32, Op)> = out.iter().map(|i| (i.off, i.op)).collect();
    if !prefix.is_empty() {
        assert_eq!(prefix, HETERO_OPS);
    }
    assert_eq!(name_of(HETERO_OPS[3].1), "DW_OP_LLVM_select_bit_piece");
}

#[test]
fn evaluators_agree_on_the_expression() {
    // Under intel: decoded, then stopped at 0xec, whose semantics no text
    // defines (Unsupported). Under hetero-2020: ill-formed at offset 10.
    let c = ctx(VendorProfile::intel());
    let r = reference::expr::evaluate(&IGC_EXPR, &c);
    let f = fast::expr::evaluate(&IGC_EXPR, &c);
    match (&r, &f) {
        (Outcome::Failed(Failure::Unsupported { what: rw }), Outcome::Failed(Failure::Unsupported { what: fw })) => {
            assert!(rw.contains("DW_OP_INTEL_push_bit_piece_stack"), "{rw}");
            assert!(rw.contains(id::OP_INTEL_PUSH_BIT_PIECE_STACK_UNDEFINED.as_str()), "{rw}");
            assert!(fw.contains("DW_OP_INTEL_push_bit_piece_stack"), "{fw}");
        }
        _ => panic!("intel: reference {r:?}, fast {f:?}"),
    }
    let h = ctx(VendorProfile::hetero_2020());
    let want = Outcome::Failed(Failure::IllFormed { rule: id::EXPR_DECODE_UNKNOWN_OPCODE, at: Some(10) });
    assert_eq!(reference::expr::evaluate(&IGC_EXPR, &h), want);
    assert_eq!(fast::expr::evaluate(&IGC_EXPR, &h), want);
}
