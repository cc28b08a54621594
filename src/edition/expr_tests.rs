//! Hand-written examples for each classifier rule. Bytes are encoded by hand
//! from DWARF 5 Table 7.9, GCC's GNU opcode values and the hetero-2020
//! encoding table; the expected edition comes from the rule text in the
//! module documentation, not from running the classifier.

use super::*;

fn explain_with(bytes: &[u8], v: &VendorProfile, usage: Usage) -> Classification {
    let p = Params { vendor: v, endian: Endian::Little, format: Format::Dwarf32, address_size: 8 };
    explain_expr(bytes, &p, usage)
}

fn check(bytes: &[u8], edition: Edition, reason: Option<&str>, at: Option<usize>) {
    let c = explain_with(bytes, &VendorProfile::hetero_2020(), Usage::Location);
    assert_eq!((c.edition, c.reason, c.at), (edition, reason, at), "{bytes:02x?}");
}

fn dwarf5(bytes: &[u8]) {
    check(bytes, Edition::Dwarf5, None, None);
}

fn hetero(bytes: &[u8], reason: &str, at: usize) {
    check(bytes, Edition::Hetero2020, Some(reason), Some(at));
}

#[test]
fn dwarf5_shapes() {
    dwarf5(&[]); // empty location description
    dwarf5(&[0x50]); // DW_OP_reg0
    dwarf5(&[0x90, 0x80, 0x01]); // DW_OP_regx 128
    dwarf5(&[0x91, 0x7c]); // DW_OP_fbreg -4
    dwarf5(&[0x31, 0x9f]); // DW_OP_lit1 DW_OP_stack_value
    dwarf5(&[0x9e, 0x02, 0x01, 0x02]); // DW_OP_implicit_value 2 01 02
    dwarf5(&[0xa0, 0x40, 0, 0, 0, 0x00]); // DW_OP_implicit_pointer 0x40 0
                                          // reg0 piece 4, (empty) piece 2, breg7 16 piece 2 (the example of docs/case-format.md).
    dwarf5(&[0x50, 0x93, 0x04, 0x93, 0x02, 0x77, 0x10, 0x93, 0x02]);
    // lit1 stack_value piece 4, reg0 piece 4, implicit_value 1 00 piece 1.
    dwarf5(&[0x31, 0x9f, 0x93, 0x04, 0x50, 0x93, 0x04, 0x9e, 0x01, 0x00, 0x93, 0x01]);
    dwarf5(&[0x50, 0x9d, 0x08, 0x00]); // reg0 bit_piece 8 0
    dwarf5(&[0x96, 0x93, 0x04]); // a nop alone computes nothing: an empty piece
                                 // entry_value(reg5) stack_value; entry_value(breg5 0 deref) stack_value.
    dwarf5(&[0xa3, 0x01, 0x55, 0x9f]);
    dwarf5(&[0xa3, 0x03, 0x75, 0x00, 0x06, 0x9f]);
    // lit0 bra +1 lit1 lit2 plus: target 5 is inside the expression.
    dwarf5(&[0x30, 0x28, 0x01, 0x00, 0x31, 0x32, 0x22]);
    // lit0 bra +1 lit1 stack_value: target 5 is the DW_OP_stack_value.
    dwarf5(&[0x30, 0x28, 0x01, 0x00, 0x31, 0x9f]);
    // A backwards skip to the segment start (offset 0) is inside.
    dwarf5(&[0x30, 0x2f, 0xfc, 0xff]);
}

#[test]
fn gnu_operations() {
    let g = VendorProfile::gnu();
    let c = explain_with(&[0x5c, 0xf0], &g, Usage::Location); // reg12 GNU_uninit
    assert_eq!((c.edition, c.reason, c.at), (Edition::Dwarf5Gnu, Some(REASON_GNU_OP), Some(1)));
    let c = explain_with(&[0xf3, 0x01, 0x55, 0x9f], &g, Usage::Location); // GNU_entry_value(reg5)
    assert_eq!((c.edition, c.at), (Edition::Dwarf5Gnu, Some(0)));
    let c = explain_with(&[0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0xe0], &g, Usage::Location); // const8u 0 push_tls
    assert_eq!((c.edition, c.at), (Edition::Dwarf5Gnu, Some(9)));
    // reg12 GNU_uninit piece 8: the marker ends its segment.
    assert_eq!(explain_with(&[0x5c, 0xf0, 0x93, 0x08], &g, Usage::Location).edition, Edition::Dwarf5Gnu);
    // Under strict DWARF 5, 0xf0 is no operation at all.
    let c = explain_with(&[0x5c, 0xf0], &VendorProfile::dwarf5(), Usage::Location);
    assert_eq!((c.edition, c.reason, c.at), (Edition::Hetero2020, Some(REASON_UNDECODABLE), Some(1)));
    assert_eq!(classify_expr(&[0x5c, 0xf0], &g, Format::Dwarf32, 8), Edition::Dwarf5Gnu);
}

#[test]
fn extension_operations() {
    hetero(&[0x50, 0xe4, 0x08], REASON_EXTENSION_OP, 1); // reg0 LLVM_offset_uconst 8
    hetero(&[0xe7], REASON_EXTENSION_OP, 0); // LLVM_undefined
    let c = explain_with(&[0x31, 0xe9, 0x03], &VendorProfile::llvm_user(), Usage::Location); // lit1 LLVM_user push_lane
    assert_eq!((c.edition, c.reason, c.at), (Edition::Hetero2020, Some(REASON_EXTENSION_OP), Some(1)));
    // Inside an entry value, at the outer operation's offset.
    hetero(&[0x31, 0xa3, 0x01, 0xe2, 0x9f], REASON_EXTENSION_OP, 1);
}

#[test]
fn structural_rules() {
    // reg0 lit1 plus: a register location used as an operand.
    hetero(&[0x50, 0x31, 0x22], REASON_REGISTER_NOT_ALONE, 0);
    // reg0 nop: a register location consists of its operation alone
    // (DWARF 5 §2.6.1.1.3), so a nop after it is not DWARF 5.
    hetero(&[0x50, 0x96], REASON_REGISTER_NOT_ALONE, 0);
    // skip +1 lands on the operand of breg0 0x50 (byte 0x50 is DW_OP_reg0).
    hetero(&[0x2f, 0x01, 0x00, 0x70, 0x50, 0x70, 0x00], REASON_BRANCH_INTO_OPERATION, 0);
    // breg1 0 reg0: last, but not alone.
    hetero(&[0x71, 0x00, 0x50], REASON_REGISTER_NOT_ALONE, 2);
    // lit1 implicit_value 1 00.
    hetero(&[0x31, 0x9e, 0x01, 0x00], REASON_IMPLICIT_NOT_ALONE, 1);
    // lit1 stack_value lit1: something other than a piece after stack_value.
    hetero(&[0x31, 0x9f, 0x31], REASON_AFTER_STACK_VALUE, 2);
    // reg0 piece 4 reg1: a location after the last piece.
    hetero(&[0x50, 0x93, 0x04, 0x51], REASON_TRAILING_AFTER_PIECES, 3);
    // lit0 bra +4 fbreg 0 piece 4 lit1 stack_value piece 4: the branch
    // (target 8) jumps out of the first piece's segment (ends at 6).
    hetero(&[0x30, 0x28, 0x04, 0x00, 0x91, 0x00, 0x93, 0x04, 0x31, 0x9f, 0x93, 0x04], REASON_BRANCH_LEAVES_SEGMENT, 1);
    // lit0 bra +2 lit1 stack_value: target 6 skips the stack_value at 5.
    hetero(&[0x30, 0x28, 0x02, 0x00, 0x31, 0x9f], REASON_BRANCH_LEAVES_SEGMENT, 1);
    // lit0 reg0 piece 4 lit0 skip -8: backwards out of the second segment.
    hetero(&[0x30, 0x50, 0x93, 0x04], REASON_REGISTER_NOT_ALONE, 1);
    hetero(&[0x50, 0x93, 0x04, 0x30, 0x2f, 0xf8, 0xff, 0x93, 0x04], REASON_BRANCH_LEAVES_SEGMENT, 4);
    // GNU_uninit first: it has nothing to mark.
    hetero(&[0xf0, 0x50], REASON_GNU_UNINIT_PLACEMENT, 0);
}

#[test]
fn entry_value_blocks() {
    // entry_value(lit1 stack_value): a location inside the block.
    hetero(&[0xa3, 0x02, 0x31, 0x9f, 0x9f], REASON_ENTRY_VALUE_BLOCK, 0);
    // entry_value(reg0 lit1 plus).
    hetero(&[0xa3, 0x03, 0x50, 0x31, 0x22, 0x9f], REASON_ENTRY_VALUE_BLOCK, 0);
    // entry_value(reg0 piece 4).
    hetero(&[0xa3, 0x03, 0x50, 0x93, 0x04, 0x9f], REASON_ENTRY_VALUE_BLOCK, 0);
    // A block that does not decode.
    hetero(&[0xa3, 0x01, 0xff, 0x9f], REASON_UNDECODABLE, 0);
    // Nested entry values: fine up to the depth limit, then conservative.
    let nest = |n: u32| {
        let mut e = vec![0x55];
        for _ in 0..n {
            e = [vec![0xa3, e.len() as u8], e].concat();
        }
        e.push(0x9f);
        e
    };
    dwarf5(&nest(3));
    hetero(&nest(MAX_DEPTH + 2), REASON_UNDECODABLE, 0);
}

#[test]
fn value_usage() {
    let h = VendorProfile::hetero_2020();
    assert_eq!(explain_with(&[0x77, 0x08], &h, Usage::Value), Classification::DWARF5);
    for bytes in [&[0x50][..], &[0x31, 0x9f], &[0x77, 0x00, 0x93, 0x04], &[0x9e, 0x00]] {
        let c = explain_with(bytes, &h, Usage::Value);
        assert_eq!((c.edition, c.reason), (Edition::Hetero2020, Some(REASON_LOCATION_IN_VALUE)), "{bytes:02x?}");
    }
}

#[test]
fn undecodable_is_conservative() {
    hetero(&[0x31, 0xff], REASON_UNDECODABLE, 1); // unknown opcode
    hetero(&[0x08], REASON_UNDECODABLE, 0); // const1u without operand
    hetero(&[0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02], REASON_UNDECODABLE, 0);
}

mod properties {
    use super::*;
    use crate::edition::cfi::explain_cfi;
    use dwarfcheck_core::target::Arch;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64), profile in 0usize..5) {
            let v = VendorProfile::by_name(VendorProfile::NAMES[profile]).unwrap();
            let p = Params { vendor: &v, endian: Endian::Little, format: Format::Dwarf32, address_size: 8 };
            for usage in [Usage::Location, Usage::Value] {
                let c = explain_expr(&bytes, &p, usage);
                prop_assert_eq!(c.reason.is_none(), c.edition == Edition::Dwarf5);
                prop_assert!(c.at.is_none_or(|a| a < bytes.len()));
            }
            for arch in [Arch::X86_64, Arch::Aarch64, Arch::Amdgpu] {
                let c = explain_cfi(&bytes, arch, &p);
                prop_assert!(c.at.is_none_or(|a| a < bytes.len()));
            }
        }

        /// A register location or a value expression ended by
        /// DW_OP_stack_value, made only of DWARF 5 arithmetic, is DWARF 5
        /// under every profile; appending an extension operation makes it
        /// hetero-2020 under the profiles that know one.
        #[test]
        fn arithmetic_stays_dwarf5(lits in prop::collection::vec(0u8..32, 1..8), ops in prop::collection::vec(0x1au8..=0x27, 0..8)) {
            let mut e: Vec<u8> = lits.iter().map(|l| 0x30 + l).collect();
            e.extend(ops.iter().filter(|o| **o != 0x23)); // skip plus_uconst (has an operand)
            e.push(0x9f);
            for name in VendorProfile::NAMES {
                let v = VendorProfile::by_name(name).unwrap();
                prop_assert_eq!(classify_expr(&e, &v, Format::Dwarf32, 8), Edition::Dwarf5);
            }
            let mut x = e.clone();
            x.insert(x.len() - 1, 0xe7); // DW_OP_LLVM_undefined (direct encoding)
            prop_assert_eq!(classify_expr(&x, &VendorProfile::hetero_2020(), Format::Dwarf32, 8), Edition::Hetero2020);
        }
    }
}

/// `DW_OP_deref_size` (0x94) and `DW_OP_xderef_size` (0x95) reading more
/// than the 8-byte address need hetero-2020; reading up to 8 does not.
#[test]
fn deref_size_over_the_address_size() {
    dwarf5(&[0x71, 0x00, 0x94, 0x08, 0x9f]); // DW_OP_breg1 0; DW_OP_deref_size 8; DW_OP_stack_value
    hetero(&[0x71, 0x00, 0x94, 0x09, 0x9f], REASON_DEREF_SIZE_OVER_ADDRESS, 2);
    hetero(&[0x30, 0x71, 0x00, 0x95, 0x10, 0x9f], REASON_DEREF_SIZE_OVER_ADDRESS, 3);
    // With 4-byte addresses, 8 is already too many.
    let v = VendorProfile::hetero_2020();
    let p = Params { vendor: &v, endian: Endian::Little, format: Format::Dwarf32, address_size: 4 };
    let c = explain_expr(&[0x71, 0x00, 0x94, 0x08, 0x9f], &p, Usage::Location);
    assert_eq!((c.edition, c.reason, c.at), (Edition::Hetero2020, Some(REASON_DEREF_SIZE_OVER_ADDRESS), Some(2)));
}

#[test]
fn intel_operations_are_outside_dwarf5() {
    let i = VendorProfile::intel();
    // lit1 DW_OP_INTEL_push_simd_lane: the operation at offset 1.
    let c = explain_with(&[0x31, 0xed], &i, Usage::Location);
    assert_eq!((c.edition, c.reason, c.at), (Edition::Hetero2020, Some(REASON_INTEL_OP), Some(1)));
    // The same bytes under gnu do not decode at all.
    let c = explain_with(&[0x31, 0xed], &VendorProfile::gnu(), Usage::Location);
    assert_eq!(c.reason, Some(REASON_UNDECODABLE));
}
