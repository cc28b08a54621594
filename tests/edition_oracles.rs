//! The edition classifier against independent oracles, over generated
//! programs (issue 3: "input the classifier calls DWARF 5 contains only
//! DWARF 5 operations and uses location descriptions only where DWARF 5
//! allows them").
//!
//! - Operations: whatever the vendor profile, an expression classified
//!   DWARF 5 decodes under the `dwarf5` profile (DWARF 5 Table 7.9 only)
//!   into the same operations.
//! - Location descriptions: gimli 0.34, a DWARF 5 consumer written by other
//!   people, enforces DWARF 5's shapes (a register, implicit value or stack
//!   value location is followed only by a piece or the end; pieces are
//!   whole). An expression classified DWARF 5 is never rejected by those
//!   checks.

use dwarfcheck::asm::decode::{decode_all, Params};
use dwarfcheck::edition::{explain_expr, Edition, Usage};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::target::Endian;
use proptest::prelude::*;

/// One operation, encoded by hand from DWARF 5 Table 7.9 (and the GNU and
/// hetero-2020 opcode tables for the vendor ones).
fn op() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => (0u8..32).prop_map(|n| vec![0x30 + n]),                      // DW_OP_lit<n>
        2 => any::<u8>().prop_map(|v| vec![0x08, v]),                     // DW_OP_const1u
        3 => prop::sample::select(vec![0x1au8, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27])
            .prop_map(|o| vec![o]),                                       // binary/unary arithmetic
        1 => (0u8..0x7f).prop_map(|v| vec![0x23, v]),                     // DW_OP_plus_uconst
        2 => prop::sample::select(vec![0x12u8, 0x13, 0x16, 0x14]).prop_map(|o| vec![o]), // dup drop swap over
        3 => (0u8..17).prop_map(|n| vec![0x50 + n]),                      // DW_OP_reg<n>
        1 => (0u8..0x7f).prop_map(|r| vec![0x90, r]),                     // DW_OP_regx
        3 => (0u8..17, 0u8..0x7f).prop_map(|(n, o)| vec![0x70 + n, o]),   // DW_OP_breg<n> (small SLEB)
        1 => (0u8..0x40).prop_map(|o| vec![0x91, o]),                     // DW_OP_fbreg
        1 => Just(vec![0x9c]),                                            // DW_OP_call_frame_cfa
        2 => Just(vec![0x06]),                                            // DW_OP_deref
        1 => (1u8..9).prop_map(|s| vec![0x94, s]),                        // DW_OP_deref_size
        3 => Just(vec![0x9f]),                                            // DW_OP_stack_value
        1 => (0u8..3).prop_map(|n| { let mut v = vec![0x9e, n]; v.extend(std::iter::repeat_n(0xaa, n as usize)); v }), // implicit_value
        3 => (1u8..9).prop_map(|s| vec![0x93, s]),                        // DW_OP_piece
        1 => (1u8..65, 0u8..64).prop_map(|(s, o)| vec![0x9d, s, o]),      // DW_OP_bit_piece
        1 => (0u8..8).prop_map(|d| vec![0x2f, d, 0]),                     // DW_OP_skip
        1 => (0u8..8).prop_map(|d| vec![0x28, d, 0]),                     // DW_OP_bra
        1 => Just(vec![0x96]),                                            // DW_OP_nop
        1 => Just(vec![0xf0]),                                            // DW_OP_GNU_uninit (gnu) / vendor
        1 => Just(vec![0xe7]),                                            // DW_OP_LLVM_undefined (hetero-2020)
    ]
}

fn program() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(op(), 0..8).prop_map(|ops| ops.concat())
}

fn params(v: &VendorProfile) -> Params<'_> {
    Params { vendor: v, endian: Endian::Little, format: Format::Dwarf32, address_size: 8 }
}

/// gimli's verdict on the structure of `bytes` as a DWARF 5 location
/// description: `Err` names the structural error, if gimli raised one.
/// Every request is answered with zeros, so only the shape matters.
fn gimli_structure(bytes: &[u8]) -> Result<(), gimli::Error> {
    use gimli::{EvaluationResult as R, LittleEndian};
    let enc = gimli::Encoding { format: gimli::Format::Dwarf32, version: 5, address_size: 8 };
    let mut eval = gimli::Expression(gimli::EndianSlice::new(bytes, LittleEndian)).evaluation(enc);
    eval.set_max_iterations(1000);
    let mut r = eval.evaluate();
    loop {
        r = match r {
            Ok(R::Complete) => return Ok(()),
            Ok(R::RequiresMemory { .. }) => eval.resume_with_memory(gimli::Value::Generic(0)),
            Ok(R::RequiresRegister { .. }) => eval.resume_with_register(gimli::Value::Generic(0)),
            Ok(R::RequiresFrameBase) => eval.resume_with_frame_base(0),
            Ok(R::RequiresCallFrameCfa) => eval.resume_with_call_frame_cfa(0),
            Ok(other) => panic!("unexpected request {other:?}"),
            Err(e @ (gimli::Error::InvalidExpressionTerminator(_) | gimli::Error::InvalidPiece)) => return Err(e),
            Err(_) => return Ok(()), // not a structural verdict (stack underflow, division by zero, ...)
        };
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn dwarf5_means_dwarf5_operations(bytes in program()) {
        let d5 = VendorProfile::dwarf5();
        for name in ["gnu", "hetero-2020"] {
            let v = VendorProfile::by_name(name).unwrap();
            for usage in [Usage::Location, Usage::Value] {
                if explain_expr(&bytes, &params(&v), usage).edition != Edition::Dwarf5 {
                    continue;
                }
                let (mine, fault) = decode_all(&bytes, &params(&v));
                let (plain, plain_fault) = decode_all(&bytes, &params(&d5));
                prop_assert!(fault.is_none() && plain_fault.is_none(), "{name}: {bytes:02x?}");
                let ops = |d: &[dwarfcheck::asm::decode::DecodedOp]| d.iter().map(|o| (o.offset, o.op())).collect::<Vec<_>>();
                prop_assert_eq!(ops(&mine), ops(&plain), "{}: {:02x?}", name, bytes);
            }
        }
    }

    #[test]
    fn dwarf5_locations_pass_gimli_shape_checks(bytes in program()) {
        let v = VendorProfile::dwarf5();
        let c = explain_expr(&bytes, &params(&v), Usage::Location);
        if c.edition == Edition::Dwarf5 {
            prop_assert!(gimli_structure(&bytes).is_ok(), "classified DWARF 5 but gimli rejects its shape: {:02x?} {:?}", bytes, gimli_structure(&bytes));
        }
    }
}

/// The two properties above are not vacuous: the generator gives plenty of
/// programs on each side of the line (counted over a fixed sample).
#[test]
fn generated_programs_fall_on_both_sides() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let v = VendorProfile::dwarf5();
    let (mut dwarf5, mut other) = (0, 0);
    for _ in 0..2000 {
        let bytes = program().new_tree(&mut runner).unwrap().current();
        match explain_expr(&bytes, &params(&v), Usage::Location).edition {
            Edition::Dwarf5 => dwarf5 += 1,
            _ => other += 1,
        }
    }
    assert!(dwarf5 >= 200 && other >= 200, "dwarf5 {dwarf5}, other {other}");
}
