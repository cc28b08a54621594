//! Hand-derived unit tests of the DIE-backed operations, calling frames,
//! location lists and attribute contexts of the fast evaluator (expected
//! outcomes worked out from the hetero-2020 text and `specs/rules/`
//! calls.yaml, loclist.yaml, attribute.yaml, implicit.yaml).

use super::{evaluate, evaluate_attribute};
use dwarfcheck_core::context::{
    AttrForm, AttrValue, Attribute, CallerFrame, CompUnit, Context, Die, Entry, MemorySegment, ResultKind,
};
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, NormalLocation, Outcome, SingleLocation, Source, Value};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_core::target::presets;
use std::collections::BTreeMap;
use std::sync::Arc;

/// x86-64, hetero-2020 opcodes, memory 0x1000.. holding bytes 0, 1, 2, ...,
/// a version 5 unit at .debug_info offset 0x100 with a few DIEs.
fn state() -> Context {
    let mut c = Context::new(Arc::new(presets::x86_64()));
    c.vendor = VendorProfile::hetero_2020();
    c.registers.insert(7, 0x7ffc_0000u64.to_le_bytes().to_vec()); // rsp
    c.registers.insert(3, 0x2000u64.to_le_bytes().to_vec()); // rbx
    c.memory.push(MemorySegment::shared(0, 0x1000, (0u8..64).collect()));
    let mut dies = BTreeMap::new();
    // 0x110: DW_OP_lit3 DW_OP_plus (a procedure adding 3 to the top).
    dies.insert(0x110, Die { location: Some(AttrForm::Exprloc(vec![0x33, 0x22])), ..Default::default() });
    // 0x120: DW_AT_const_value 2a 00.
    dies.insert(0x120, Die { const_value: Some(vec![0x2a, 0x00]), byte_size: Some(2), ..Default::default() });
    // 0x130: neither attribute.
    dies.insert(0x130, Die::default());
    // 0x140: DW_OP_call2 0x40 (calls itself: 0x100 + 0x40).
    dies.insert(0x140, Die { location: Some(AttrForm::Exprloc(vec![0x98, 0x40, 0x00])), ..Default::default() });
    // 0x150: DW_OP_addr 0x1000.
    let mut addr = vec![0x03];
    addr.extend_from_slice(&0x1000u64.to_le_bytes());
    dies.insert(0x150, Die { location: Some(AttrForm::Exprloc(addr)), ..Default::default() });
    // 0x160: the location list at offset 0 of .debug_loclists.
    dies.insert(0x160, Die { location: Some(AttrForm::LocList { offset: 0 }), ..Default::default() });
    c.cu = Some(CompUnit {
        version: 5,
        address_size: 8,
        offset: 0x100,
        dies,
        debug_loclists: loclists().into(),
        base_address: Some(0x40_0000),
        ..Default::default()
    });
    c
}

/// `.debug_loclists` contents: at 0, `offset_pair 0x10 0x20: DW_OP_reg0`,
/// `offset_pair 0x18 0x30: DW_OP_reg1`, `end_of_list`.
fn loclists() -> Vec<u8> {
    vec![0x04, 0x10, 0x20, 0x01, 0x50, 0x04, 0x18, 0x30, 0x01, 0x51, 0x00]
}

fn g(v: u64) -> Outcome {
    Outcome::Value(Value::from_u128(BaseType::generic(64, false), u128::from(v)))
}

fn places(p: Vec<Source>) -> Outcome {
    Outcome::Location(NormalLocation { places: p.into_iter().map(SingleLocation::Simple).collect() })
}

fn mem(a: u64) -> Outcome {
    places(vec![Source::memory(0, u128::from(a) * 8)])
}

fn reg(r: u64) -> Source {
    Source::Register { regno: r, bit_offset: 0 }
}

fn case(c: Context, attribute: Option<Attribute>, form: Option<AttrForm>, expr: &[u8]) -> Case {
    Case { attribute, form, expr: expr.to_vec(), state: c }
}

/// An attribute's value (`form`, or the exprloc `expr`) and its context.
struct Case {
    attribute: Option<Attribute>,
    form: Option<AttrForm>,
    expr: Vec<u8>,
    state: Context,
}

fn evaluate_case(c: &Case) -> Outcome {
    let value = c.form.as_ref().map_or(AttrValue::Exprloc(&c.expr), AttrForm::as_value);
    evaluate_attribute(c.attribute, value, &c.state)
}

#[test]
fn call_runs_exprloc_on_the_same_stack() {
    // lit4; call2 0x10 -> DIE 0x110 (unit offset 0x100 + 0x10) runs
    // lit3 plus on the same stack: 4 + 3 = 7 (op.call.exprloc-same-stack).
    assert_eq!(evaluate(&[0x34, 0x98, 0x10, 0x00], &state()), g(7));
    // call4 with the same DIE.
    assert_eq!(evaluate(&[0x34, 0x99, 0x10, 0, 0, 0], &state()), g(7));
    // call_ref names .debug_info offsets directly: 0x110.
    assert_eq!(evaluate(&[0x34, 0x9a, 0x10, 0x01, 0, 0], &state()), g(7));
}

#[test]
fn call_const_value_no_attribute_and_missing_die() {
    // call2 0x20 -> DIE 0x120 with a const value: implicit storage "2a 00".
    let want = places(vec![Source::Implicit { bytes: vec![0x2a, 0], bit_offset: 0 }]);
    assert_eq!(evaluate(&[0x98, 0x20, 0x00], &state()), want);
    // lit1; call2 0x30 (no attribute): no effect, lit1 stays (op.call.no-attribute).
    assert_eq!(evaluate(&[0x31, 0x98, 0x30, 0x00], &state()), g(1));
    // lit1; call2 0x31: no DIE there: ill-formed at the call (offset 1).
    let want = Outcome::Failed(Failure::IllFormed { rule: R::OP_CALL_DIE_MISSING, at: Some(1) });
    assert_eq!(evaluate(&[0x31, 0x98, 0x31, 0x00], &state()), want);
    // Without a unit: ctx.cu-missing first.
    let mut c = state();
    c.cu = None;
    assert_eq!(
        evaluate(&[0x98, 0x31, 0x00], &c),
        Outcome::Failed(Failure::EvalError { rule: R::CTX_CU_MISSING, at: Some(0) })
    );
}

#[test]
fn recursive_call_runs_out_of_depth_at_the_outer_call() {
    // lit0; call2 0x40 calls itself forever: the depth budget stops it,
    // reported at the outermost call (offset 1; op.call.depth-budget).
    let want = Outcome::Failed(Failure::Budget { budget: BudgetKind::Depth, at: Some(1) });
    assert_eq!(evaluate(&[0x30, 0x98, 0x40, 0x00], &state()), want);
}

#[test]
fn call_of_a_location_list_pushes_its_location() {
    // pc = 0x40_001c is in [base+0x10, base+0x20) and [base+0x18,
    // base+0x30): both entries match, the union is {reg0, reg1}.
    let mut c = state();
    c.pc = Some(0x40_001c);
    assert_eq!(evaluate(&[0x98, 0x60, 0x00], &c), places(vec![reg(0), reg(1)]));
    // pc = 0x40_0010: only the first.
    c.pc = Some(0x40_0010);
    assert_eq!(evaluate(&[0x98, 0x60, 0x00], &c), places(vec![reg(0)]));
    // pc = 0x40_0030: none: undefined (loclist.no-match-undefined).
    c.pc = Some(0x40_0030);
    assert_eq!(evaluate(&[0x98, 0x60, 0x00], &c), places(vec![Source::Undefined]));
    // No pc: evaluation error, reported at the call.
    c.pc = None;
    let want = Outcome::Failed(Failure::EvalError { rule: R::LOCLIST_NO_PROGRAM_LOCATION, at: Some(0) });
    assert_eq!(evaluate(&[0x98, 0x60, 0x00], &c), want);
}

#[test]
fn loclist_attribute_values() {
    let mut c = state();
    c.pc = Some(0x40_0020);
    // Only the second entry holds 0x40_0020.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::LocList { offset: 0 }), &[]));
    assert_eq!(out, places(vec![reg(1)]));
    // An offset at the section end: loclist.offset-out-of-range, no offset.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::LocList { offset: 11 }), &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::LOCLIST_OFFSET_OUT_OF_RANGE, at: None }));
    // Offset 8 reads the first entry's trailing "01 51" as kind 0x01
    // (base_addressx, index 0x51): no .debug_addr entry there.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::LocList { offset: 8 }), &[]));
    assert_eq!(out, Outcome::Failed(Failure::EvalError { rule: R::LOCLIST_ADDRX_MISSING, at: None }));
    // Offset 9 starts at the byte 0x51: not an entry kind.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::LocList { offset: 9 }), &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::LOCLIST_UNKNOWN_ENTRY_KIND, at: None }));
    // A unit without a base address: offset_pair is ill-formed.
    c.cu.as_mut().unwrap().base_address = None;
    let out = evaluate_case(&case(c, Some(Attribute::Location), Some(AttrForm::LocList { offset: 0 }), &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::LOCLIST_NO_BASE_ADDRESS, at: None }));
}

#[test]
fn debug_loc_for_version_4_units() {
    // .debug_loc: base selection (all ones, 0x5000), then [0x10, 0x20) with
    // expression DW_OP_breg7 8 (2-byte length 2), then (0, 0).
    let mut sec = vec![0xff; 8];
    sec.extend_from_slice(&0x5000u64.to_le_bytes());
    sec.extend_from_slice(&0x10u64.to_le_bytes());
    sec.extend_from_slice(&0x20u64.to_le_bytes());
    sec.extend_from_slice(&[2, 0, 0x77, 0x08]);
    sec.extend_from_slice(&[0; 16]);
    let mut c = state();
    let cu = c.cu.as_mut().unwrap();
    cu.version = 4;
    cu.debug_loc = sec.into();
    c.pc = Some(0x5018);
    // rsp + 8 = 0x7ffc0008.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::LocList { offset: 0 }), &[]));
    assert_eq!(out, mem(0x7ffc_0008));
    // loclistx in a version 4 unit is ill-formed.
    let out = evaluate_case(&case(c, Some(Attribute::Location), Some(AttrForm::LocListX { index: 0 }), &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::LOCLIST_LOCLISTX_NEEDS_V5, at: None }));
}

#[test]
fn implicit_pointer_value_converts_back_to_its_die() {
    // implicit_pointer 0x150 +4; deref -> IPV (whole 64-bit storage);
    // deref again needs a location: DIE 0x150 is DW_OP_addr 0x1000, moved 4
    // bytes: 0x1004; 8 bytes there are 04..0b little-endian.
    let e = [0xa0, 0x50, 0x01, 0, 0, 0x04, 0x06, 0x06];
    assert_eq!(evaluate(&e, &state()), g(0x0b0a_0908_0706_0504));
    // The same through DIE 0x130 (no attribute): evaluation error at the
    // second deref (offset 7).
    let e = [0xa0, 0x30, 0x01, 0, 0, 0x04, 0x06, 0x06];
    let want = Outcome::Failed(Failure::EvalError { rule: R::OP_IMPLICIT_POINTER_DIE_NO_LOCATION, at: Some(7) });
    assert_eq!(evaluate(&e, &state()), want);
    // A const value DIE (2 bytes) moved 4 bytes is out of its storage.
    let e = [0xa0, 0x20, 0x01, 0, 0, 0x04, 0x06, 0x06];
    let want =
        Outcome::Failed(Failure::EvalError { rule: R::OP_IMPLICIT_POINTER_DISPLACEMENT_OUT_OF_STORAGE, at: Some(7) });
    assert_eq!(evaluate(&e, &state()), want);
}

#[test]
fn aspace_implicit_pointer_zero_is_the_plain_one() {
    // lit0; DW_OP_LLVM_aspace_implicit_pointer 0x150 +4 (0xe9 under
    // hetero-2020) equals DW_OP_implicit_pointer 0x150 +4.
    let want = places(vec![Source::ImplicitPointer { die: 0x150, aspace: None, byte_displacement: 4, bit_offset: 0 }]);
    assert_eq!(evaluate(&[0x30, 0xe9, 0x50, 0x01, 0, 0, 0x04], &state()), want);
    // lit9: x86-64 has no address space 9.
    let want =
        Outcome::Failed(Failure::IllFormed { rule: R::OP_ASPACE_IMPLICIT_POINTER_UNKNOWN_ADDRESS_SPACE, at: Some(1) });
    assert_eq!(evaluate(&[0x39, 0xe9, 0x50, 0x01, 0, 0, 0x04], &state()), want);
}

/// A caller frame: rbx saved at CFA-16, rbp in rsi's (reg 4) place,
/// everything else undefined; the current CFA is 0x1010.
fn with_caller() -> Context {
    let mut c = state();
    c.cfa = Some(0x1010);
    let mut rules = BTreeMap::new();
    rules.insert(3, RegisterRule::Offset { offset: -16 });
    rules.insert(6, RegisterRule::Register { register: 4 });
    rules.insert(7, RegisterRule::ValOffset { offset: 0 });
    c.caller = Some(Arc::new(CallerFrame { pc: Some(0x40_0100), cfa: Some(0x1100), rules, ..Default::default() }));
    c
}

#[test]
fn entry_value_reads_the_callers_register_through_cfi() {
    // entry_value(DW_OP_reg3): rbx in the caller is at CFA-16 = 0x1000,
    // read as a generic value: bytes 00..07.
    assert_eq!(evaluate(&[0xa3, 0x01, 0x53], &ctx_result(with_caller())), g(0x0706_0504_0302_0100));
    // entry_value(DW_OP_breg7 0): rsp's rule is val_offset(0): the value
    // 0x1010; breg7 0 is then memory 0x1010, which converts to its address
    // (op.entry-value.value-result): generic 0x1010.
    assert_eq!(evaluate(&[0xa3, 0x02, 0x77, 0x00], &with_caller()), g(0x1010));
    // entry_value(DW_OP_lit1 DW_OP_stack_value): an implicit location is
    // ill-formed (op.entry-value.result-not-value).
    let want = Outcome::Failed(Failure::IllFormed { rule: R::OP_ENTRY_VALUE_RESULT_NOT_VALUE, at: Some(0) });
    assert_eq!(evaluate(&[0xa3, 0x02, 0x31, 0x9f], &with_caller()), want);
    // entry_value(DW_OP_breg7 0; DW_OP_deref): memory at 0x1010: 10..17.
    assert_eq!(evaluate(&[0xa3, 0x03, 0x77, 0x00, 0x06], &with_caller()), g(0x1716_1514_1312_1110));
    // entry_value(DW_OP_reg1): rdx has the default (undefined) rule:
    // reading it is op.deref.undefined-storage, at the entry_value.
    let want = Outcome::Failed(Failure::EvalError { rule: R::OP_DEREF_UNDEFINED_STORAGE, at: Some(0) });
    assert_eq!(evaluate(&[0xa3, 0x01, 0x51], &with_caller()), want);
    // No caller frame: frame.caller-missing.
    let want = Outcome::Failed(Failure::EvalError { rule: R::FRAME_CALLER_MISSING, at: Some(0) });
    assert_eq!(evaluate(&[0xa3, 0x01, 0x53], &state()), want);
}

fn ctx_result(mut c: Context) -> Context {
    c.result_kind = Some(ResultKind::Value);
    c
}

#[test]
fn call_frame_entry_reg_pushes_the_rule_location() {
    // DW_OP_LLVM_call_frame_entry_reg 3 (0xe6): memory at CFA-16 = 0x1000.
    assert_eq!(evaluate(&[0xe6, 0x03], &with_caller()), mem(0x1000));
    // Register 6 is register(4): register location 4 of this frame.
    assert_eq!(evaluate(&[0xe6, 0x06], &with_caller()), places(vec![reg(4)]));
    // Register 1: undefined.
    assert_eq!(evaluate(&[0xe6, 0x01], &with_caller()), places(vec![Source::Undefined]));
}

#[test]
fn frame_base_attribute() {
    // DW_OP_reg7 as a frame base: DW_OP_bregx 7 0: the address rsp holds.
    let out = evaluate_case(&case(state(), Some(Attribute::FrameBase), None, &[0x57]));
    assert_eq!(out, mem(0x7ffc_0000));
    // DW_OP_lit0 DW_OP_fbreg 0: fbreg is looked for before running, at 1.
    let out = evaluate_case(&case(state(), Some(Attribute::FrameBase), None, &[0x30, 0x91, 0x00]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::ATTR_FRAME_BASE_FBREG, at: Some(1) }));
    // An empty expression: undefined is not a memory location.
    let out = evaluate_case(&case(state(), Some(Attribute::FrameBase), None, &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::ATTR_FRAME_BASE_NOT_MEMORY, at: None }));
}

#[test]
fn member_location_use_location_and_constants() {
    let mut c = state();
    // Containing object at 0x1000 (top of the case's initial stack).
    c.initial_stack = vec![Entry::Value(Value::from_u128(BaseType::generic(64, false), 5)), mem_entry(0x1000)];
    // Constant 8: 0x1008.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::DataMemberLocation), Some(AttrForm::Constant(8)), &[]));
    assert_eq!(out, mem(0x1008));
    // Expression DW_OP_plus_uconst 4 on the containing object: 0x1004.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::DataMemberLocation), None, &[0x23, 0x04]));
    assert_eq!(out, mem(0x1004));
    // use_location: stack [5, 0x1000]; DW_OP_plus: 0x1005.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::UseLocation), None, &[0x22]));
    assert_eq!(out, mem(0x1005));
    // A constant for DW_AT_location is not allowed.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::Constant(8)), &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::ATTR_FORM_NOT_ALLOWED, at: None }));
    // DW_AT_LLVM_lanes 0 is ill-formed; 64 is the generic value 64.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::LlvmLanes), Some(AttrForm::Constant(0)), &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::ATTR_LLVM_LANES_ZERO, at: None }));
    let out = evaluate_case(&case(c.clone(), Some(Attribute::LlvmLanes), Some(AttrForm::Constant(64)), &[]));
    assert_eq!(out, g(64));
    // use_location with one entry only.
    c.initial_stack.remove(0);
    let out = evaluate_case(&case(c, Some(Attribute::UseLocation), None, &[0x22]));
    assert_eq!(out, Outcome::Failed(Failure::EvalError { rule: R::ATTR_INITIAL_STACK_MISSING, at: None }));
}

fn mem_entry(a: u64) -> Entry {
    Entry::Location(NormalLocation { places: vec![SingleLocation::Simple(Source::memory(0, u128::from(a) * 8))] })
}

#[test]
fn dwarf64_operands_and_loclistx() {
    let mut c = state();
    let cu = c.cu.as_mut().unwrap();
    cu.format = dwarfcheck_core::encoding::Format::Dwarf64;
    // .debug_loclists: loclists_base 8, offsets table of one 8-byte entry
    // (value 8: the list starts at 8 + 8 = 16), then at 16:
    // start_length 0x40_0000 len 0x10: DW_OP_reg2; end_of_list.
    let mut sec = vec![0u8; 8];
    sec.extend_from_slice(&8u64.to_le_bytes());
    sec.push(0x08);
    sec.extend_from_slice(&0x40_0000u64.to_le_bytes());
    sec.extend_from_slice(&[0x10, 0x01, 0x52, 0x00]);
    cu.debug_loclists = sec.into();
    cu.loclists_base = 8;
    c.pc = Some(0x40_000f);
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::LocListX { index: 0 }), &[]));
    assert_eq!(out, places(vec![reg(2)]));
    // Index 1 would read bytes 16..24 as the offset entry: 08 00 00 40 00
    // 00 00 00 = 0x40000008, far past the section: offset-out-of-range.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::LocListX { index: 1 }), &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::LOCLIST_OFFSET_OUT_OF_RANGE, at: None }));
    // Index 3 (bytes 32..40) is not wholly inside the section.
    let out = evaluate_case(&case(c.clone(), Some(Attribute::Location), Some(AttrForm::LocListX { index: 3 }), &[]));
    assert_eq!(out, Outcome::Failed(Failure::IllFormed { rule: R::LOCLIST_INDEX_OUT_OF_RANGE, at: None }));
    // call_ref takes an 8-byte operand in 64-bit DWARF: lit4; call_ref 0x110.
    let mut e = vec![0x34, 0x9a];
    e.extend_from_slice(&0x110u64.to_le_bytes());
    assert_eq!(evaluate(&e, &c), g(7));
    // The 4-byte form of the same bytes is truncated: the operand runs out.
    let want = Outcome::Failed(Failure::IllFormed { rule: R::EXPR_DECODE_TRUNCATED_OPERAND, at: Some(1) });
    assert_eq!(evaluate(&[0x34, 0x9a, 0x10, 0x01, 0, 0], &c), want);
}

#[test]
fn location_list_union_is_read_in_normal_form_order() {
    // .debug_loclists at 0: offset_pair 0 0x20 with an empty expression
    // (undefined), then offset_pair 0 0x20 DW_OP_regx 127 (a register
    // x86-64 does not define), end. Both match pc = base + 8. The union is
    // {register 127, undefined}: in normal-form order the register comes
    // first, so DW_OP_deref_size 1 after DW_OP_call2 reads it first and
    // fails with reg.unknown-register-read (not op.deref.undefined-storage),
    // at the deref_size (offset 3).
    let mut c = state();
    let cu = c.cu.as_mut().unwrap();
    cu.debug_loclists = vec![0x04, 0x00, 0x20, 0x00, 0x04, 0x00, 0x20, 0x02, 0x90, 0x7f, 0x00].into();
    c.pc = Some(0x40_0008);
    let want = Outcome::Failed(Failure::EvalError { rule: R::REG_UNKNOWN_REGISTER_READ, at: Some(3) });
    assert_eq!(evaluate(&[0x98, 0x60, 0x00, 0x94, 0x01], &c), want);
}

#[test]
fn a_typed_operation_checks_its_type_against_the_size_budget_first() {
    // DW_OP_convert <0x40: unsigned 128> on an empty stack with an 8-byte
    // size budget: the type's 16 bytes exceed it, an operand check that
    // comes before the stack check (ambiguities item 45).
    let mut c = state();
    let mut bt = BTreeMap::new();
    bt.insert(0x40, BaseType::ate(dwarfcheck_core::encoding::ate::UNSIGNED, 128, false));
    c.cu.as_mut().unwrap().base_types = bt;
    c.budgets.size_bytes = 8;
    assert_eq!(evaluate(&[0xa8, 0x40], &c), Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(0) }));
    // With room for it, the empty stack is the failure.
    c.budgets.size_bytes = 16;
    assert_eq!(
        evaluate(&[0xa8, 0x40], &c),
        Outcome::Failed(Failure::IllFormed { rule: R::EXPR_STACK_UNDERFLOW, at: Some(0) })
    );
}
