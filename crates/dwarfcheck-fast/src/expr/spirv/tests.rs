//! Hand-derived tests of the SPIR-V `DebugExpression` interpreter: each
//! expectation worked out from `specs/rules/spirv-expressions.yaml` and the
//! DWARF rule of the operation each SPIR-V operation names, not from the code.

use crate::expr::evaluate_attribute;
use dwarfcheck_core::context::{AttrValue, Attribute, Context, Entry, MemorySegment};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::encoding::spirv::code::*;
use dwarfcheck_core::encoding::spirv::{Applies, DebugOperation, SpirvExpression};
use dwarfcheck_core::outcome::{BaseType, Failure, NormalLocation, Outcome, Piece, SingleLocation, Source, Value};
use dwarfcheck_core::rules::{id as R, RuleId};
use dwarfcheck_core::target::{amdgpu, presets};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Where the -O0 variable lives; it holds [`POINTER`].
const VAR: u64 = 0x2000;
/// The pointer stored at [`VAR`]: byte 8 of the 0x1000 segment.
const POINTER: u64 = 0x1008;

/// x86_64: rax = 0x1122334455667788; memory 0x1000.. holds bytes 0, 1, ..,
/// 31; memory 0x2000.. holds the pointer 0x1008 (little-endian); the
/// initial stack is `initial`.
fn state(initial: Vec<Entry>) -> Context {
    let mut c = Context::new(Arc::new(presets::x86_64()));
    c.registers.insert(0, 0x1122_3344_5566_7788u64.to_le_bytes().to_vec());
    c.memory.push(MemorySegment::shared(0, 0x1000, (0u8..32).collect()));
    c.memory.push(MemorySegment::shared(0, VAR, POINTER.to_le_bytes().to_vec()));
    c.initial_stack = initial;
    c
}

fn generic(v: u64) -> Value {
    Value::from_u128(BaseType::generic(64, false), u128::from(v))
}

/// A generic value as the initial entry.
fn val(v: u64) -> Vec<Entry> {
    vec![Entry::Value(generic(v))]
}

/// A location as the initial entry.
fn at(s: Source) -> Vec<Entry> {
    vec![Entry::Location(NormalLocation { places: vec![SingleLocation::Simple(s)] })]
}

fn rax() -> Source {
    Source::Register { regno: 0, bit_offset: 0 }
}

fn op(code: u32, operands: &[u32]) -> DebugOperation {
    DebugOperation { code, operands: operands.to_vec() }
}

fn declare(ops: &[DebugOperation]) -> SpirvExpression {
    SpirvExpression { applies: Applies::Declare, operations: ops.to_vec(), variable_bits: Some(64) }
}

fn value(ops: &[DebugOperation]) -> SpirvExpression {
    SpirvExpression { applies: Applies::Value, operations: ops.to_vec(), variable_bits: Some(64) }
}

/// The outcome through the public dispatch.
fn run(e: &SpirvExpression, c: &Context) -> Outcome {
    evaluate_attribute(None, AttrValue::Spirv(e), c)
}

fn loc(s: Source) -> Outcome {
    Outcome::Location(NormalLocation { places: vec![SingleLocation::Simple(s)] })
}

fn mem(addr: u64) -> Outcome {
    loc(Source::memory(0, u128::from(addr) * 8))
}

/// Implicit storage holding the 8 little-endian bytes of generic `v`.
fn implicit(v: u64) -> Source {
    Source::Implicit { bytes: v.to_le_bytes().to_vec(), bit_offset: 0 }
}

fn composite(pieces: &[(u64, Source)]) -> Outcome {
    let pieces = pieces.iter().map(|(bits, s)| Piece { bits: *bits, sources: BTreeSet::from([s.clone()]) });
    Outcome::Location(NormalLocation { places: vec![SingleLocation::Composite(pieces.collect())] })
}

fn ill(rule: RuleId, at: u64) -> Outcome {
    Outcome::Failed(Failure::IllFormed { rule, at: Some(at) })
}

fn eval_error(rule: RuleId, at: Option<u64>) -> Outcome {
    Outcome::Failed(Failure::EvalError { rule, at })
}

#[test]
fn o0_declare_loads_a_pointer() {
    // The variable's address 0x2000; Constu 0 -> [0x2000, 0]; Swap ->
    // [0, 0x2000]; Xderef reads 8 bytes at 0x2000 of space 0: 0x1008, a
    // generic value on top, so the variable is in memory at 0x1008.
    let e = declare(&[op(CONSTU, &[0]), op(SWAP, &[]), op(XDEREF, &[])]);
    assert_eq!(e.to_string(), "DebugDeclare [Constu 0, Swap, Xderef]");
    assert_eq!(run(&e, &state(val(VAR))), mem(POINTER));
    // The address as a memory location converts to the same value.
    assert_eq!(run(&e, &state(at(Source::memory(0, u128::from(VAR) * 8)))), mem(POINTER));
}

#[test]
fn o2_value_fragment() {
    // V = 0xfff; PlusUconst 1 -> 0x1000; Constu 0, Swap -> [0, 0x1000];
    // Xderef reads bytes 0..8 at 0x1000: W = 0x0706050403020100;
    // StackValue: implicit storage of W; Fragment 32 32 of a 64-bit
    // variable: [32 undefined bits][the first 32 bits of that storage].
    let e = value(&[
        op(PLUS_UCONST, &[1]),
        op(CONSTU, &[0]),
        op(SWAP, &[]),
        op(XDEREF, &[]),
        op(STACK_VALUE, &[]),
        op(FRAGMENT, &[32, 32]),
    ]);
    let w = 0x0706_0504_0302_0100;
    assert_eq!(run(&e, &state(val(0xfff))), composite(&[(32, Source::Undefined), (32, implicit(w))]));
}

#[test]
fn initial_entry() {
    let e = declare(&[op(CONSTU, &[1]), op(PLUS, &[])]);
    // spirv.expr.initial-entry: 0x1000 + 1 on top, the address 0x1001.
    assert_eq!(run(&e, &state(val(0x1000))), mem(0x1001));
    // spirv.context.initial-entry: none, or two entries.
    assert_eq!(run(&e, &state(vec![])), eval_error(R::SPIRV_CONTEXT_INITIAL_ENTRY, None));
    let two = vec![Entry::Value(generic(1)), Entry::Value(generic(2))];
    assert_eq!(run(&e, &state(two)), eval_error(R::SPIRV_CONTEXT_INITIAL_ENTRY, None));
    // The static checks come first: an unknown code wins over no entry.
    assert_eq!(run(&declare(&[op(34, &[])]), &state(vec![])), ill(R::SPIRV_OP_UNKNOWN_CODE, 0));
    // ... but an underflow (found when running) does not.
    assert_eq!(run(&declare(&[op(PLUS, &[])]), &state(vec![])), eval_error(R::SPIRV_CONTEXT_INITIAL_ENTRY, None));
}

#[test]
fn unknown_codes() {
    let c = state(val(5));
    // llvm-spirv's extra conversion (10) and shift (34), at their index.
    assert_eq!(run(&value(&[op(CONSTU, &[1]), op(10, &[])]), &c), ill(R::SPIRV_OP_UNKNOWN_CODE, 1));
    assert_eq!(run(&value(&[op(34, &[])]), &c), ill(R::SPIRV_OP_UNKNOWN_CODE, 0));
    // Static: found before an underflow at an earlier index.
    let e = value(&[op(PLUS, &[]), op(PLUS, &[]), op(34, &[])]);
    assert_eq!(run(&e, &c), ill(R::SPIRV_OP_UNKNOWN_CODE, 2));
    // Negative: code 9 (the highest) is known: the whole 64-bit variable
    // is the memory at 5 (one piece).
    assert_eq!(run(&value(&[op(FRAGMENT, &[0, 64])]), &c), composite(&[(64, Source::memory(0, 5 * 8))]));
}

#[test]
fn operand_counts() {
    let c = state(val(5));
    // Deref 7 (llvm-spirv -r passes it through).
    assert_eq!(run(&value(&[op(DEREF, &[7])]), &c), ill(R::SPIRV_OP_OPERAND_COUNT, 0));
    assert_eq!(run(&value(&[op(CONSTU, &[1]), op(CONSTU, &[])]), &c), ill(R::SPIRV_OP_OPERAND_COUNT, 1));
    assert_eq!(run(&value(&[op(BIT_PIECE, &[8])]), &c), ill(R::SPIRV_OP_OPERAND_COUNT, 0));
    assert_eq!(run(&value(&[op(FRAGMENT, &[0, 8, 8])]), &c), ill(R::SPIRV_OP_OPERAND_COUNT, 0));
    // The code is checked before the count.
    assert_eq!(run(&value(&[op(11, &[1, 2, 3])]), &c), ill(R::SPIRV_OP_UNKNOWN_CODE, 0));
    // Negative: Constu with its one literal: 7 on top, an address.
    assert_eq!(run(&value(&[op(CONSTU, &[7])]), &c), mem(7));
}

#[test]
fn stack_entries_are_generic() {
    let c = state(val(1));
    // spirv.stack.element-size: a literal is zero-extended to 64 bits
    // (0xffffffff, not -1), and PlusUconst adds it as such.
    let e = value(&[op(CONSTU, &[u32::MAX]), op(STACK_VALUE, &[])]);
    assert_eq!(run(&e, &c), loc(implicit(0xffff_ffff)));
    let e = value(&[op(PLUS_UCONST, &[u32::MAX]), op(STACK_VALUE, &[])]);
    assert_eq!(run(&e, &c), loc(implicit(0x1_0000_0000)));
    // The initial entry keeps its own type: a 32-bit signed value, as
    // StackValue keeps it, 4 bytes.
    let int = Value::from_u128(BaseType::ate(ate::SIGNED, 32, false), 0xfffffffe);
    let e = value(&[op(STACK_VALUE, &[])]);
    assert_eq!(
        run(&e, &state(vec![Entry::Value(int.clone())])),
        loc(Source::Implicit { bytes: vec![0xfe, 0xff, 0xff, 0xff], bit_offset: 0 })
    );
    // ... and adding a generic literal to it mixes two types
    // (op.arith.same-type, at the Plus).
    let e = value(&[op(CONSTU, &[1]), op(PLUS, &[]), op(STACK_VALUE, &[])]);
    assert_eq!(run(&e, &state(vec![Entry::Value(int)])), ill(R::OP_ARITH_SAME_TYPE, 1));
}

#[test]
fn underflow() {
    let c = state(val(5));
    // One entry: the first Plus needs two.
    let e = value(&[op(PLUS, &[]), op(PLUS, &[]), op(PLUS, &[])]);
    assert_eq!(run(&e, &c), ill(R::SPIRV_STACK_UNDERFLOW, 0));
    // Constu 1 makes two; Plus leaves one; the second Plus underflows.
    let e = value(&[op(CONSTU, &[1]), op(PLUS, &[]), op(PLUS, &[])]);
    assert_eq!(run(&e, &c), ill(R::SPIRV_STACK_UNDERFLOW, 2));
    for code in [MINUS, SWAP, XDEREF] {
        assert_eq!(run(&value(&[op(code, &[])]), &c), ill(R::SPIRV_STACK_UNDERFLOW, 0), "code {code}");
    }
    // Negative: one entry is enough for Deref, PlusUconst, StackValue.
    assert_eq!(run(&value(&[op(PLUS_UCONST, &[2])]), &c), mem(7));
    // The depth is checked before the operation's own rules: Xderef on
    // [rax location] underflows, it is not a conversion error.
    assert_eq!(run(&declare(&[op(XDEREF, &[])]), &state(at(rax()))), ill(R::SPIRV_STACK_UNDERFLOW, 0));
}

#[test]
fn deref() {
    // 0x1000 Deref: bytes 0..8 little-endian, kept as the value.
    let e = value(&[op(DEREF, &[]), op(STACK_VALUE, &[])]);
    assert_eq!(run(&e, &state(val(0x1000))), loc(implicit(0x0706_0504_0302_0100)));
    // DebugDeclare [Deref]: the variable is where the pointer at 0x2000 points.
    assert_eq!(run(&declare(&[op(DEREF, &[])]), &state(val(VAR))), mem(POINTER));
    // Negative: nothing is mapped at 0x10 (DW_OP_deref's read error).
    assert_eq!(run(&e, &state(val(0x10))), eval_error(R::OP_DEREF_MEMORY_UNREADABLE, Some(0)));
    // A register location reads the register.
    assert_eq!(run(&e, &state(at(rax()))), loc(implicit(0x1122_3344_5566_7788)));
}

#[test]
fn plus_minus_swap_constu() {
    let c = state(val(5));
    let sv = op(STACK_VALUE, &[]);
    // 5 + 2
    assert_eq!(run(&value(&[op(CONSTU, &[2]), op(PLUS, &[]), sv.clone()]), &c), loc(implicit(7)));
    // Minus: the former second (5) minus the former top (2).
    assert_eq!(run(&value(&[op(CONSTU, &[2]), op(MINUS, &[]), sv.clone()]), &c), loc(implicit(3)));
    // 2 - 5 after Swap: wraps modulo 2^64.
    let e = value(&[op(CONSTU, &[2]), op(SWAP, &[]), op(MINUS, &[]), sv.clone()]);
    assert_eq!(run(&e, &c), loc(implicit(3u64.wrapping_neg())));
    // Swap: [5, 9] -> [9, 5], 5 on top.
    assert_eq!(run(&value(&[op(CONSTU, &[9]), op(SWAP, &[]), sv.clone()]), &c), loc(implicit(5)));
    // Constu pushes above the initial entry: 9 on top.
    assert_eq!(run(&value(&[op(CONSTU, &[9]), sv]), &c), loc(implicit(9)));
    // Negative: Plus on a register location (not a value: DW_OP_plus's
    // conversion rule), at the Plus.
    let e = declare(&[op(CONSTU, &[1]), op(PLUS, &[])]);
    assert_eq!(run(&e, &state(at(rax()))), ill(R::LOC_CONVERT_LOCATION_NOT_VALUE, 1));
    // Swap of an incomplete composite (op.stack.incomplete-composite).
    let e = declare(&[op(BIT_PIECE, &[0, 8]), op(CONSTU, &[1]), op(SWAP, &[])]);
    assert_eq!(run(&e, &state(at(rax()))), ill(R::OP_STACK_INCOMPLETE_COMPOSITE, 2));
}

#[test]
fn xderef_address_spaces() {
    // Negative: x86_64 defines space 0 only; space 3 is DW_OP_xderef's
    // unknown address space, at the Xderef.
    let e = declare(&[op(CONSTU, &[3]), op(SWAP, &[]), op(XDEREF, &[])]);
    assert_eq!(run(&e, &state(val(VAR))), ill(R::OP_XDEREF_UNKNOWN_ADDRESS_SPACE, 2));
    // spirv.xderef.address-space: on AMDGPU, 3 is the local space (32-bit
    // addresses); the 8 bytes at local 0x10 are read, and the value read
    // is the variable's address in the default space.
    let mut c = Context::new(Arc::new(presets::amdgpu_wave64()));
    let p = 0x4000_0000_0000_1234u64;
    c.memory.push(MemorySegment::shared(amdgpu::ASPACE_LOCAL, 0x10, p.to_le_bytes().to_vec()));
    c.initial_stack = val(0x10);
    assert_eq!(run(&e, &c), mem(p));
}

#[test]
fn stack_value_placement() {
    let c = state(val(5));
    let sv = op(STACK_VALUE, &[]);
    assert_eq!(run(&value(&[sv.clone(), op(CONSTU, &[1])]), &c), ill(R::SPIRV_STACK_VALUE_PLACEMENT, 0));
    assert_eq!(run(&value(&[sv.clone(), sv.clone()]), &c), ill(R::SPIRV_STACK_VALUE_PLACEMENT, 0));
    // Checked in list order: the StackValue at 0 before the code at 1.
    assert_eq!(run(&value(&[sv.clone(), op(34, &[])]), &c), ill(R::SPIRV_STACK_VALUE_PLACEMENT, 0));
    // Negative: last, before BitPiece, before Fragment.
    assert_eq!(run(&value(std::slice::from_ref(&sv)), &c), loc(implicit(5)));
    let e = value(&[sv.clone(), op(BIT_PIECE, &[0, 32])]);
    assert_eq!(run(&e, &c), composite(&[(32, implicit(5))]));
    let e = value(&[sv, op(FRAGMENT, &[0, 32])]);
    assert_eq!(run(&e, &c), composite(&[(32, implicit(5)), (32, Source::Undefined)]));
}

#[test]
fn bit_piece() {
    let c = state(at(rax()));
    // BitPiece 8 16: 16 bits from bit 8 of rax (DW_OP_bit_piece 16 8).
    let want = composite(&[(16, Source::Register { regno: 0, bit_offset: 8 })]);
    assert_eq!(run(&declare(&[op(BIT_PIECE, &[8, 16])]), &c), want);
    // The DWARF operation it names gives the same.
    let mut dw = state(vec![]);
    dw.result_kind = Some(dwarfcheck_core::context::ResultKind::Location);
    assert_eq!(crate::expr::evaluate(&[0x50, 0x9d, 0x10, 0x08], &dw), want);
    // Two BitPieces: the second finds the incomplete composite on top and
    // adds an undefined part (DW_OP_bit_piece on an empty description).
    let e = declare(&[op(BIT_PIECE, &[0, 8]), op(BIT_PIECE, &[0, 8])]);
    assert_eq!(run(&e, &c), composite(&[(8, rax()), (8, Source::Undefined)]));
    // spirv.bit-piece.after-stack-value: bits 8..24 of the value 5's storage.
    let e = value(&[op(STACK_VALUE, &[]), op(BIT_PIECE, &[8, 16])]);
    let want = composite(&[(16, Source::Implicit { bytes: 5u64.to_le_bytes().to_vec(), bit_offset: 8 })]);
    assert_eq!(run(&e, &state(val(5))), want);
    // Negative: starting at bit 64 of 64 (DW_OP_bit_piece's offset rule).
    let e = value(&[op(STACK_VALUE, &[]), op(BIT_PIECE, &[64, 8])]);
    assert_eq!(run(&e, &state(val(5))), eval_error(R::OP_BIT_PIECE_OFFSET_PAST_STORAGE, Some(1)));
    // Negative: bits 60..68 of 64 (the composite part rule).
    let e = value(&[op(STACK_VALUE, &[]), op(BIT_PIECE, &[60, 8])]);
    assert_eq!(run(&e, &state(val(5))), ill(R::COMPOSITE_PART_EXCEEDS_STORAGE, 1));
}

#[test]
fn fragment() {
    let c = state(at(rax()));
    let frag = |off, size| SpirvExpression { variable_bits: Some(64), ..declare(&[op(FRAGMENT, &[off, size])]) };
    // The low half: [rax 32][undefined 32].
    assert_eq!(run(&frag(0, 32), &c), composite(&[(32, rax()), (32, Source::Undefined)]));
    // The middle: [undefined 8][rax's first 16 bits][undefined 40].
    assert_eq!(run(&frag(8, 16), &c), composite(&[(8, Source::Undefined), (16, rax()), (40, Source::Undefined)]));
    // A generic value on top is a memory address (DW_OP_bit_piece's conversion).
    let e = declare(&[op(CONSTU, &[0x1000]), op(FRAGMENT, &[32, 32])]);
    assert_eq!(run(&e, &c), composite(&[(32, Source::Undefined), (32, Source::memory(0, 0x1000 * 8))]));
    // Negative: 32 bits of the 16-bit register es (50) exceed its storage.
    let es = state(at(Source::Register { regno: 50, bit_offset: 0 }));
    assert_eq!(run(&frag(0, 32), &es), ill(R::COMPOSITE_PART_EXCEEDS_STORAGE, 0));
    // Negative: a 32-bit value is not a location (DW_OP_bit_piece's rule).
    let int = Value::from_u128(BaseType::ate(ate::SIGNED, 32, false), 3);
    let e = value(&[op(FRAGMENT, &[0, 32])]);
    assert_eq!(run(&e, &state(vec![Entry::Value(int)])), ill(R::OP_PIECE_NOT_LOCATION, 0));
}

#[test]
fn fragment_placement() {
    let c = state(at(rax()));
    // spirv.fragment.last: followed by anything, or twice.
    let e = declare(&[op(FRAGMENT, &[0, 8]), op(CONSTU, &[1])]);
    assert_eq!(run(&e, &c), ill(R::SPIRV_FRAGMENT_LAST, 0));
    let e = declare(&[op(FRAGMENT, &[0, 8]), op(FRAGMENT, &[8, 8])]);
    assert_eq!(run(&e, &c), ill(R::SPIRV_FRAGMENT_LAST, 0));
    // spirv.fragment.with-bit-piece, at the Fragment.
    let e = declare(&[op(BIT_PIECE, &[0, 8]), op(FRAGMENT, &[0, 8])]);
    assert_eq!(run(&e, &c), ill(R::SPIRV_FRAGMENT_WITH_BIT_PIECE, 1));
    // Negative: last, without BitPiece (covered by `fragment`); after
    // other operations.
    let e = declare(&[op(CONSTU, &[0x1000]), op(FRAGMENT, &[0, 64])]);
    assert_eq!(run(&e, &c), composite(&[(64, Source::memory(0, 0x1000 * 8))]));
}

#[test]
fn fragment_bounds() {
    let c = state(at(rax()));
    let frag = |bits, off, size| SpirvExpression { variable_bits: bits, ..declare(&[op(FRAGMENT, &[off, size])]) };
    // spirv.fragment.within-variable.
    assert_eq!(run(&frag(Some(64), 0, 0), &c), ill(R::SPIRV_FRAGMENT_WITHIN_VARIABLE, 0));
    assert_eq!(run(&frag(Some(64), 32, 33), &c), ill(R::SPIRV_FRAGMENT_WITHIN_VARIABLE, 0));
    assert_eq!(run(&frag(Some(16), 0, 32), &c), ill(R::SPIRV_FRAGMENT_WITHIN_VARIABLE, 0));
    // Offsets and sizes near 2^32 do not wrap.
    assert_eq!(run(&frag(Some(64), u32::MAX, 2), &c), ill(R::SPIRV_FRAGMENT_WITHIN_VARIABLE, 0));
    // Negative: exactly up to the end.
    assert_eq!(run(&frag(Some(64), 32, 32), &c), composite(&[(32, Source::Undefined), (32, rax())]));
    // spirv.context.variable-size: no size, an evaluation error at the Fragment.
    let e = SpirvExpression { variable_bits: None, ..declare(&[op(CONSTU, &[1]), op(FRAGMENT, &[0, 8])]) };
    assert_eq!(run(&e, &c), eval_error(R::SPIRV_CONTEXT_VARIABLE_SIZE, Some(1)));
    // A zero size is wrong whatever the variable: it comes before the
    // missing size (catalogue order of checks).
    let e = SpirvExpression { variable_bits: None, ..declare(&[op(FRAGMENT, &[0, 0])]) };
    assert_eq!(run(&e, &c), ill(R::SPIRV_FRAGMENT_WITHIN_VARIABLE, 0));
    // Negative: without a Fragment the size is not needed.
    let e = SpirvExpression { variable_bits: None, ..declare(&[op(BIT_PIECE, &[0, 8])]) };
    assert_eq!(run(&e, &c), composite(&[(8, rax())]));
}

#[test]
fn empty_and_unmarked_values() {
    // spirv.value.empty-expression: the value itself, as implicit storage.
    assert_eq!(run(&value(&[]), &state(val(0x1000))), loc(implicit(0x1000)));
    // ... of its own type (4 bytes of a 32-bit float).
    let f = Value::from_u128(BaseType::ate(ate::FLOAT, 32, false), u128::from(1.5f32.to_bits()));
    let want = loc(Source::Implicit { bytes: 1.5f32.to_le_bytes().to_vec(), bit_offset: 0 });
    assert_eq!(run(&value(&[]), &state(vec![Entry::Value(f.clone())])), want);
    // A location the context gives stays that location.
    assert_eq!(run(&value(&[]), &state(at(rax()))), loc(rax()));
    // Negative: an empty DebugDeclare is the ordinary location result, a
    // generic value being an address...
    assert_eq!(run(&declare(&[]), &state(val(0x1000))), mem(0x1000));
    // ... and a float no location at all (no operation: at none).
    let want = Outcome::Failed(Failure::IllFormed { rule: R::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE, at: None });
    assert_eq!(run(&declare(&[]), &state(vec![Entry::Value(f)])), want);
    // spirv.value.without-stack-value: a value left on top is an address.
    assert_eq!(run(&value(&[op(PLUS_UCONST, &[8])]), &state(val(0x1000))), mem(0x1008));
}

#[test]
fn result_is_the_top() {
    // spirv.result.location: [5, 7], 7 on top; 5 is ignored.
    assert_eq!(run(&value(&[op(CONSTU, &[7])]), &state(val(5))), mem(7));
    // An incomplete composite on top is completed.
    assert_eq!(run(&declare(&[op(BIT_PIECE, &[0, 8])]), &state(at(rax()))), composite(&[(8, rax())]));
}

#[test]
fn not_a_dwarf_attribute() {
    let e = value(&[]);
    let c = state(val(5));
    let want = Outcome::Failed(Failure::IllFormed { rule: R::ATTR_FORM_NOT_ALLOWED, at: None });
    assert_eq!(evaluate_attribute(Some(Attribute::Location), AttrValue::Spirv(&e), &c), want);
}

#[test]
fn budgets() {
    // Steps: the third operation goes over a budget of 2, at its index.
    let mut c = state(val(5));
    c.budgets.steps = 2;
    let e = value(&[op(CONSTU, &[1]), op(CONSTU, &[2]), op(CONSTU, &[3])]);
    let want = Outcome::Failed(Failure::Budget { budget: dwarfcheck_core::outcome::BudgetKind::Steps, at: Some(2) });
    assert_eq!(run(&e, &c), want);
    // Stack: a third entry goes over a budget of 2.
    let mut c = state(val(5));
    c.budgets.stack = 2;
    let e = value(&[op(CONSTU, &[1]), op(CONSTU, &[2])]);
    let want = Outcome::Failed(Failure::Budget { budget: dwarfcheck_core::outcome::BudgetKind::Stack, at: Some(1) });
    assert_eq!(run(&e, &c), want);
    // Size: a 2^32-bit variable is larger than the default size budget,
    // and nothing that large is allocated.
    let c = state(at(rax()));
    let e = SpirvExpression { variable_bits: Some(1 << 32), ..declare(&[op(FRAGMENT, &[0, 8])]) };
    let want = Outcome::Failed(Failure::Budget { budget: dwarfcheck_core::outcome::BudgetKind::Size, at: Some(0) });
    assert_eq!(run(&e, &c), want);
}
