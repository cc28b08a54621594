//! Hand-written examples for the context rules of [`super`]: each case is a
//! small YAML case; the expected edition and reason come from the rules in
//! the module documentation (DWARF 5 §2.5.1.2, §2.5.1.5, §3.3.5, §2.6.2).

use super::*;
use crate::case::{yaml::load_str, Case};

/// Classifies the only case of a file with target x86_64 and `vendor`.
fn classify(vendor: &str, case: &str) -> Classification {
    let text = format!("target: x86_64\nvendor: {vendor}\ncases:\n  - name: c\n    rules: [op.nop.no-effect]\n{case}");
    match load_str("t.yaml", &text).unwrap_or_else(|e| panic!("{e:?}")).remove(0) {
        Case::Expr(c) => explain_case(&c),
        Case::Cfi(_) => panic!("expected an expression case"),
    }
}

fn edition(case: &str) -> (Edition, Option<&'static str>) {
    let c = classify("gnu", case);
    (c.edition, c.reason)
}

const DWARF5: (Edition, Option<&str>) = (Edition::Dwarf5, None);

#[test]
fn frame_base_must_be_a_register_or_an_address() {
    let with_fb = |fb: &str| edition(&format!("    context: {{ frame_base: \"{fb}\" }}\n    expr: DW_OP_fbreg -8\n"));
    assert_eq!(with_fb("DW_OP_call_frame_cfa"), DWARF5);
    assert_eq!(with_fb("DW_OP_reg6"), DWARF5);
    assert_eq!(with_fb("DW_OP_breg7 16"), DWARF5);
    assert_eq!(with_fb("DW_OP_lit1 DW_OP_stack_value"), (Edition::Hetero2020, Some(REASON_FRAME_BASE)));
    assert_eq!(with_fb("DW_OP_reg6 DW_OP_piece 8"), (Edition::Hetero2020, Some(REASON_FRAME_BASE)));
    // Without DW_OP_fbreg the frame base is not used.
    let unused = "    context: { frame_base: \"DW_OP_lit1 DW_OP_stack_value\" }\n    expr: DW_OP_breg7 8\n";
    assert_eq!(edition(unused), DWARF5);
}

#[test]
fn called_dies_must_compute_a_value() {
    // The unit starts at 0x100; DW_OP_call4 0x40 names DIE 0x140.
    let call = |die: &str| {
        edition(&format!(
            "    context: {{ cu: {{ offset: 0x100, dies: {{ 0x140: {die} }} }} }}\n    expr: DW_OP_lit1 DW_OP_call4 0x40\n"
        ))
    };
    assert_eq!(call("{ location: \"DW_OP_lit4 DW_OP_plus\" }"), DWARF5);
    assert_eq!(call("{ byte_size: 4 }"), DWARF5); // neither attribute: no effect in both editions
    assert_eq!(call("{ location: \"DW_OP_reg0\" }"), (Edition::Hetero2020, Some(REASON_CALLEE)));
    assert_eq!(call("{ const_value: \"01 00\" }"), (Edition::Hetero2020, Some(REASON_CALLEE)));
    assert_eq!(call("{ loclist: 0 }"), (Edition::Hetero2020, Some(REASON_CALLEE)));
    // DW_OP_call_ref takes a .debug_info offset.
    let by_ref = "    context: { cu: { offset: 0x100, dies: { 0x40: { location: \"DW_OP_reg0\" } } } }\n    expr: DW_OP_call_ref 0x40\n";
    assert_eq!(edition(by_ref), (Edition::Hetero2020, Some(REASON_CALLEE)));
}

#[test]
fn context_entries_must_be_addresses_or_generic_values() {
    let with = |stack: &str| edition(&format!("    context: {{ initial_stack: [{stack}] }}\n    expr: DW_OP_deref\n"));
    assert_eq!(with("{ value: 0x1000 }"), DWARF5);
    assert_eq!(with("{ memory: 0x1000 }"), DWARF5);
    assert_eq!(with("{ register: rax }"), (Edition::Hetero2020, Some(REASON_CONTEXT_ENTRY)));
    assert_eq!(with("{ memory: 0x1000, bit_offset: 4 }"), (Edition::Hetero2020, Some(REASON_CONTEXT_ENTRY)));
    assert_eq!(with("{ value: { type: signed32, v: 1 } }"), (Edition::Hetero2020, Some(REASON_CONTEXT_ENTRY)));
    let object = "    context: { object: { implicit: \"01\" } }\n    expr: DW_OP_push_object_address\n";
    assert_eq!(edition(object), (Edition::Hetero2020, Some(REASON_CONTEXT_ENTRY)));
}

#[test]
fn attributes_decide_the_usage() {
    // A register location is DWARF 5 for DW_AT_location, not for a value.
    assert_eq!(edition("    attribute: location\n    expr: DW_OP_reg0\n"), DWARF5);
    let value = edition("    attribute: call_value\n    expr: DW_OP_reg0\n");
    assert_eq!(value.0, Edition::Hetero2020);
    assert_eq!(edition("    attribute: data_member_location\n    constant: 8\n"), DWARF5);
    assert_eq!(
        edition("    attribute: llvm_lanes\n    expr: DW_OP_lit4\n"),
        (Edition::Hetero2020, Some(REASON_EXTENSION_ATTRIBUTE))
    );
}

/// A `.debug_loclists` unit (DWARF 5 §7.29): header of 12 bytes (unit length
/// 4, version 5, address size 8, segment selector size 0, no offsets), then
/// at offset 12 one `DW_LLE_offset_pair` 0x0..0x10 with the 1-byte
/// expression `op`, then `DW_LLE_end_of_list`.
fn loclists_with(op: u8) -> String {
    format!("0e 00 00 00 05 00 08 00 00 00 00 00 04 00 10 01 {op:02x} 00")
}

#[test]
fn location_list_entries_are_classified() {
    let case = |op: u8| {
        let c = classify(
            "hetero-2020",
            &format!("    context: {{ cu: {{ debug_loclists: \"{}\" }} }}\n    loclist: 12\n", loclists_with(op)),
        );
        (c.edition, c.reason)
    };
    assert_eq!(case(0x50), DWARF5); // DW_OP_reg0
    assert_eq!(case(0xe7), (Edition::Hetero2020, Some(super::super::expr::REASON_EXTENSION_OP))); // DW_OP_LLVM_undefined
                                                                                                  // An offset past the section does not decode.
    let bad = classify("gnu", "    context: { cu: { debug_loclists: \"00\" } }\n    loclist: 40\n");
    assert_eq!((bad.edition, bad.reason), (Edition::Hetero2020, Some(REASON_UNDECODABLE)));
}
