//! Tests of SPIR-V OpenCL.DebugInfo.100 `DebugExpression`s (rules `spirv.*`,
//! specs/rules/spirv-expressions.yaml). Expectations are derived by hand
//! from the seed's operation table and the DWARF rules each operation
//! names; `at` is the operation's index in the list.

use super::*;
use crate::expr::spirv::evaluate as spirv;
use dwarfcheck_core::context::{AttrValue, Attribute};
use dwarfcheck_core::encoding::spirv::code::*;
use dwarfcheck_core::encoding::spirv::{Applies, DebugOperation, SpirvExpression};
use dwarfcheck_core::rules::RuleId;

fn op(code: u32, operands: &[u32]) -> DebugOperation {
    DebugOperation { code, operands: operands.to_vec() }
}

fn expr(applies: Applies, ops: &[DebugOperation], variable_bits: Option<u64>) -> SpirvExpression {
    SpirvExpression { applies, operations: ops.to_vec(), variable_bits }
}

/// A DebugDeclare of a 64-bit variable.
fn declare(ops: &[DebugOperation]) -> SpirvExpression {
    expr(Applies::Declare, ops, Some(64))
}

/// A DebugValue of a 64-bit variable.
fn value_of(ops: &[DebugOperation]) -> SpirvExpression {
    expr(Applies::Value, ops, Some(64))
}

fn generic(v: u64) -> CtxEntry {
    CtxEntry::Value(Value::from_u128(BaseType::generic(64, false), u128::from(v)))
}

/// [`ctx`] (memory at 0x1000: de ad be ef 01 02 03 04) with a pointer to
/// 0x1000 stored at 0x2000, and `initial` as the one initial entry.
fn sctx(initial: CtxEntry) -> Context {
    let mut c = ctx();
    c.memory.push(MemorySegment::shared(0, 0x2000, 0x1000u64.to_le_bytes().to_vec()));
    c.initial_stack = vec![initial];
    c
}

fn run(e: &SpirvExpression, initial: CtxEntry) -> (Outcome, Vec<RuleId>) {
    spirv(e, &sctx(initial))
}

/// The outcome alone.
fn out(e: &SpirvExpression, initial: CtxEntry) -> Outcome {
    run(e, initial).0
}

fn implicit(bytes: &[u8], bit_offset: u64) -> Source {
    Source::Implicit { bytes: bytes.to_vec(), bit_offset }
}

/// The bytes of generic value 0x0403_0201_efbe_adde read at 0x1000.
const AT_1000: [u8; 8] = [0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4];

// ---- the producers' shapes ------------------------------------------------------------

#[test]
fn o0_declare_reads_a_pointer_at_the_variable_address() {
    // Constu 0 -> [0x2000, 0]; Swap -> [0, 0x2000]; Xderef reads 8 bytes at
    // 0x2000 in address space 0: 0x1000; a generic value on top is a
    // memory address (spirv.op.xderef.reads, spirv.result.location).
    let e = declare(&[op(CONSTU, &[0]), op(SWAP, &[]), op(XDEREF, &[])]);
    // Address space 0 is the default whatever the mapping: nothing rests
    // on spirv.xderef.address-space.
    assert_eq!(run(&e, generic(0x2000)), (loc(mem(0x1000)), vec![]));
    // The variable's address given as a memory location converts to the
    // same address value.
    let at_2000 = CtxEntry::Location(RawLocation::simple(mem(0x2000)).normalize());
    assert_eq!(out(&e, at_2000), loc(mem(0x1000)));
}

#[test]
fn o2_value_fragment_of_a_read_value() {
    // 0xfff + 1 = 0x1000; Xderef reads AT_1000; StackValue makes it an
    // implicit location; Fragment 32 32 of a 64-bit variable: bits 0..32
    // undefined, bits 32..64 the first 32 bits of the implicit storage.
    let e = value_of(&[
        op(PLUS_UCONST, &[1]),
        op(CONSTU, &[0]),
        op(SWAP, &[]),
        op(XDEREF, &[]),
        op(STACK_VALUE, &[]),
        op(FRAGMENT, &[32, 32]),
    ]);
    assert_eq!(run(&e, generic(0xfff)), (composite(&[(32, Source::Undefined), (32, implicit(&AT_1000, 0))]), vec![]));
}

// ---- static checks ---------------------------------------------------------------------

#[test]
fn unknown_codes_are_ill_formed_at_their_index() {
    // spirv.op.unknown-code: llvm-spirv's 10 and 34.
    assert_eq!(out(&declare(&[op(10, &[])]), generic(0)), ill(id::SPIRV_OP_UNKNOWN_CODE, Some(0)));
    assert_eq!(out(&declare(&[op(DEREF, &[]), op(34, &[1])]), generic(0)), ill(id::SPIRV_OP_UNKNOWN_CODE, Some(1)));
    // Negative: codes 0 to 9 are known (Constu 9 pushes 9).
    assert_eq!(out(&declare(&[op(CONSTU, &[9])]), generic(0)), loc(mem(9)));
}

#[test]
fn operand_counts_are_exact() {
    // spirv.op.operand-count: Deref 7, Constu without its literal, Fragment
    // with one.
    assert_eq!(out(&declare(&[op(DEREF, &[7])]), generic(0x2000)), ill(id::SPIRV_OP_OPERAND_COUNT, Some(0)));
    assert_eq!(out(&declare(&[op(CONSTU, &[])]), generic(0)), ill(id::SPIRV_OP_OPERAND_COUNT, Some(0)));
    assert_eq!(
        out(&declare(&[op(DEREF, &[]), op(FRAGMENT, &[0])]), generic(0x2000)),
        ill(id::SPIRV_OP_OPERAND_COUNT, Some(1))
    );
    // Negative: Deref without operands reads the pointer at 0x2000.
    assert_eq!(out(&declare(&[op(DEREF, &[])]), generic(0x2000)), loc(mem(0x1000)));
}

#[test]
fn static_checks_go_in_list_order_before_anything_runs() {
    // The first operation's check wins over a later one's.
    assert_eq!(out(&declare(&[op(34, &[]), op(DEREF, &[7])]), generic(0)), ill(id::SPIRV_OP_UNKNOWN_CODE, Some(0)));
    assert_eq!(out(&declare(&[op(DEREF, &[7]), op(34, &[])]), generic(0)), ill(id::SPIRV_OP_OPERAND_COUNT, Some(0)));
    // A Swap that would underflow at 0 runs after the static checks of 1.
    assert_eq!(out(&declare(&[op(SWAP, &[]), op(10, &[])]), generic(0)), ill(id::SPIRV_OP_UNKNOWN_CODE, Some(1)));
    // Static checks come before the initial entry (spirv.context.initial-entry).
    let mut c = sctx(generic(0));
    c.initial_stack.clear();
    assert_eq!(spirv(&declare(&[op(10, &[])]), &c).0, ill(id::SPIRV_OP_UNKNOWN_CODE, Some(0)));
}

#[test]
fn stack_value_ends_the_object_or_a_piece() {
    // spirv.stack-value.placement: followed by anything but BitPiece or
    // Fragment; the placement of 0 is checked before the code of 1.
    let sv = op(STACK_VALUE, &[]);
    assert_eq!(
        out(&value_of(&[sv.clone(), op(PLUS_UCONST, &[1])]), generic(5)),
        ill(id::SPIRV_STACK_VALUE_PLACEMENT, Some(0))
    );
    assert_eq!(out(&value_of(&[sv.clone(), op(34, &[])]), generic(5)), ill(id::SPIRV_STACK_VALUE_PLACEMENT, Some(0)));
    assert_eq!(out(&value_of(&[sv.clone(), sv.clone()]), generic(5)), ill(id::SPIRV_STACK_VALUE_PLACEMENT, Some(0)));
    // Negative: last, or directly before BitPiece / Fragment.
    let five = [5, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(out(&value_of(std::slice::from_ref(&sv)), generic(5)), loc(implicit(&five, 0)));
    assert_eq!(
        out(&value_of(&[sv.clone(), op(FRAGMENT, &[0, 64])]), generic(5)),
        composite(&[(64, implicit(&five, 0))])
    );
    assert_eq!(
        out(&value_of(&[sv.clone(), op(BIT_PIECE, &[0, 8])]), generic(5)),
        composite(&[(8, implicit(&five, 0))])
    );
}

#[test]
fn fragment_is_last_and_alone() {
    let frag = op(FRAGMENT, &[0, 32]);
    // spirv.fragment.last: followed by anything, even another Fragment.
    assert_eq!(out(&declare(&[frag.clone(), op(DEREF, &[])]), generic(0x2000)), ill(id::SPIRV_FRAGMENT_LAST, Some(0)));
    assert_eq!(
        out(&declare(&[frag.clone(), op(FRAGMENT, &[32, 32])]), generic(0x2000)),
        ill(id::SPIRV_FRAGMENT_LAST, Some(0))
    );
    // ...and before a BitPiece: placement before with-bit-piece.
    assert_eq!(
        out(&declare(&[frag.clone(), op(BIT_PIECE, &[0, 8])]), generic(0x2000)),
        ill(id::SPIRV_FRAGMENT_LAST, Some(0))
    );
    // spirv.fragment.with-bit-piece, reported at the Fragment.
    assert_eq!(
        out(&declare(&[op(BIT_PIECE, &[0, 8]), frag.clone()]), generic(0x2000)),
        ill(id::SPIRV_FRAGMENT_WITH_BIT_PIECE, Some(1))
    );
    // Negative: one Fragment, last, no BitPiece: bits 0..32 of the variable
    // are the first 32 bits at 0x2000, the rest undefined.
    assert_eq!(out(&declare(&[frag]), generic(0x2000)), composite(&[(32, mem(0x2000)), (32, Source::Undefined)]));
}

#[test]
fn fragment_lies_within_the_variable() {
    let d = |off, size, bits| expr(Applies::Declare, &[op(FRAGMENT, &[off, size])], bits);
    // spirv.fragment.within-variable: past the end, or no bits.
    assert_eq!(out(&d(32, 64, Some(64)), generic(0x2000)), ill(id::SPIRV_FRAGMENT_WITHIN_VARIABLE, Some(0)));
    assert_eq!(out(&d(64, 1, Some(64)), generic(0x2000)), ill(id::SPIRV_FRAGMENT_WITHIN_VARIABLE, Some(0)));
    assert_eq!(out(&d(0, 0, Some(64)), generic(0x2000)), ill(id::SPIRV_FRAGMENT_WITHIN_VARIABLE, Some(0)));
    // Negative: exactly the whole variable; the last bit alone.
    assert_eq!(out(&d(0, 64, Some(64)), generic(0x2000)), composite(&[(64, mem(0x2000))]));
    assert_eq!(out(&d(63, 1, Some(64)), generic(0x2000)), composite(&[(63, Source::Undefined), (1, mem(0x2000))]));
    // spirv.context.variable-size: no size, an evaluation error at the
    // Fragment (a size of 0 is ill-formed whatever the variable).
    assert_eq!(out(&d(0, 32, None), generic(0x2000)), err(id::SPIRV_CONTEXT_VARIABLE_SIZE, Some(0)));
    assert_eq!(out(&d(0, 0, None), generic(0x2000)), ill(id::SPIRV_FRAGMENT_WITHIN_VARIABLE, Some(0)));
    // Negative: without a Fragment the size is not needed.
    let no_size = expr(Applies::Declare, &[op(PLUS_UCONST, &[8])], None);
    assert_eq!(out(&no_size, generic(0x2000)), loc(mem(0x2008)));
}

// ---- the initial entry and the stack ----------------------------------------------------

#[test]
fn exactly_one_initial_entry() {
    // spirv.context.initial-entry: none or two is an evaluation error at
    // no operation.
    let e = declare(&[op(PLUS_UCONST, &[8])]);
    let mut c = sctx(generic(0x2000));
    c.initial_stack.clear();
    assert_eq!(spirv(&e, &c).0, err(id::SPIRV_CONTEXT_INITIAL_ENTRY, None));
    c.initial_stack = vec![generic(1), generic(2)];
    assert_eq!(spirv(&e, &c).0, err(id::SPIRV_CONTEXT_INITIAL_ENTRY, None));
    // Even an empty DebugValue needs it.
    c.initial_stack.clear();
    assert_eq!(spirv(&value_of(&[]), &c).0, err(id::SPIRV_CONTEXT_INITIAL_ENTRY, None));
    // Negative (spirv.expr.initial-entry): the one entry is the address.
    assert_eq!(out(&e, generic(0x2000)), loc(mem(0x2008)));
}

#[test]
fn underflow_is_ill_formed_at_the_operation() {
    // spirv.stack.underflow: one entry, Plus needs two.
    let plus = op(PLUS, &[]);
    assert_eq!(
        out(&value_of(&[plus.clone(), plus.clone(), plus.clone()]), generic(1)),
        ill(id::SPIRV_STACK_UNDERFLOW, Some(0))
    );
    for code in [MINUS, SWAP, XDEREF] {
        assert_eq!(out(&declare(&[op(code, &[])]), generic(0x2000)), ill(id::SPIRV_STACK_UNDERFLOW, Some(0)));
    }
    // Constu 1, Plus leaves one entry; the next Plus underflows at 2.
    assert_eq!(
        out(&declare(&[op(CONSTU, &[1]), plus.clone(), plus.clone()]), generic(0x2000)),
        ill(id::SPIRV_STACK_UNDERFLOW, Some(2))
    );
    // Negative: Constu 1, Plus adds.
    assert_eq!(out(&declare(&[op(CONSTU, &[1]), plus]), generic(0x2000)), loc(mem(0x2001)));
}

// ---- each operation as the DWARF operation it names --------------------------------------

#[test]
fn deref_reads_the_default_address_space() {
    // spirv.op.deref.reads: 8 bytes at 0x1000, then the value is the
    // address (DebugDeclare).
    assert_eq!(out(&declare(&[op(DEREF, &[])]), generic(0x1000)), loc(mem(0x0403_0201_efbe_adde)));
    // DW_OP_deref's read error, at the Deref.
    assert_eq!(
        out(&declare(&[op(PLUS_UCONST, &[1]), op(DEREF, &[])]), generic(0x3000)),
        err(id::OP_DEREF_MEMORY_UNREADABLE, Some(1))
    );
}

#[test]
fn arithmetic() {
    // spirv.op.plus.adds, spirv.op.minus.subtracts (second minus top),
    // spirv.op.plus-uconst.adds, spirv.op.constu.pushes.
    assert_eq!(out(&declare(&[op(CONSTU, &[8]), op(PLUS, &[])]), generic(0x1000)), loc(mem(0x1008)));
    assert_eq!(out(&declare(&[op(CONSTU, &[8]), op(MINUS, &[])]), generic(0x1000)), loc(mem(0xff8)));
    assert_eq!(out(&declare(&[op(PLUS_UCONST, &[16])]), generic(0x1000)), loc(mem(0x1010)));
    // A literal word is zero-extended to the generic size (spirv.stack.element-size).
    assert_eq!(out(&declare(&[op(CONSTU, &[0xffff_ffff])]), generic(0)), loc(mem(0xffff_ffff)));
    // Wrapping modulo 2^64, as DW_OP_minus on generic values.
    assert_eq!(out(&declare(&[op(CONSTU, &[1]), op(MINUS, &[])]), generic(0)), loc(mem(u64::MAX)));
    // DW_OP_plus_uconst's rule on a non-integral value: a float64 DebugValue.
    let f = CtxEntry::Value(Value::from_u128(BaseType::ate(ate::FLOAT, 64, false), 0x3ff0_0000_0000_0000));
    assert_eq!(
        out(&value_of(&[op(PLUS_UCONST, &[1]), op(STACK_VALUE, &[])]), f),
        ill(id::OP_ARITH_REQUIRES_INTEGRAL, Some(0))
    );
}

#[test]
fn swap_exchanges() {
    // spirv.op.swap.exchanges: [3, 5] -> [5, 3]; Minus: 5 - 3 = 2.
    let e = value_of(&[op(CONSTU, &[5]), op(SWAP, &[]), op(MINUS, &[]), op(STACK_VALUE, &[])]);
    assert_eq!(run(&e, generic(3)), (loc(implicit(&[2, 0, 0, 0, 0, 0, 0, 0], 0)), vec![]));
}

#[test]
fn xderef_takes_a_dwarf_address_space() {
    // spirv.xderef.address-space: 5 is no address space of x86_64, an
    // error of DW_OP_xderef, at the Xderef; the answer rests on the decision.
    let e = declare(&[op(CONSTU, &[5]), op(SWAP, &[]), op(XDEREF, &[])]);
    assert_eq!(
        run(&e, generic(0x2000)),
        (ill(id::OP_XDEREF_UNKNOWN_ADDRESS_SPACE, Some(2)), vec![id::SPIRV_XDEREF_ADDRESS_SPACE])
    );
    // An unreadable address in space 0: DW_OP_xderef's read error.
    let e = declare(&[op(CONSTU, &[0]), op(SWAP, &[]), op(XDEREF, &[])]);
    assert_eq!(out(&e, generic(0x3000)), err(id::OP_DEREF_MEMORY_UNREADABLE, Some(2)));
}

#[test]
fn stack_value_makes_an_implicit_location() {
    // spirv.op.stack-value.implicit: 41 + 1 = 42 held in implicit storage.
    let e = value_of(&[op(PLUS_UCONST, &[1]), op(STACK_VALUE, &[])]);
    assert_eq!(run(&e, generic(41)), (loc(implicit(&[42, 0, 0, 0, 0, 0, 0, 0], 0)), vec![]));
}

#[test]
fn bit_piece_operands_are_offset_then_size() {
    // spirv.op.bit-piece.part: BitPiece 8 16 is DW_OP_bit_piece 16 8: 16
    // bits from bit 8 of memory 0x1000.
    let e = declare(&[op(BIT_PIECE, &[8, 16])]);
    let expected = composite(&[(16, Source::memory(0, 0x1000 * 8 + 8))]);
    assert_eq!(run(&e, generic(0x1000)), (expected.clone(), vec![]));
    // The same as the DWARF operation (0x9d, ULEB 16, ULEB 8) on that stack.
    let mut c = with_kind(sctx(generic(0x1000)), ResultKind::Location);
    c.initial_stack = vec![generic(0x1000)];
    assert_eq!(evaluate(&[0x9d, 16, 8], &c), expected);
    // Two BitPieces: the second takes the value pushed after the first.
    let e = declare(&[op(BIT_PIECE, &[0, 8]), op(CONSTU, &[0x1000]), op(BIT_PIECE, &[0, 8])]);
    assert_eq!(out(&e, generic(0x2000)), composite(&[(8, mem(0x2000)), (8, mem(0x1000))]));
}

#[test]
fn bit_piece_after_stack_value() {
    // spirv.bit-piece.after-stack-value: 16 bits from bit 8 of the value's
    // implicit storage (little-endian bytes of 0x1122334455667788).
    let bytes = 0x1122_3344_5566_7788u64.to_le_bytes();
    let e = value_of(&[op(STACK_VALUE, &[]), op(BIT_PIECE, &[8, 16])]);
    assert_eq!(
        run(&e, generic(0x1122_3344_5566_7788)),
        (composite(&[(16, implicit(&bytes, 8))]), vec![id::SPIRV_BIT_PIECE_AFTER_STACK_VALUE])
    );
    // Past the value: an offset at its end (op.bit-piece.offset-past-storage),
    // bits beyond it (composite.part-exceeds-storage).
    let e = value_of(&[op(STACK_VALUE, &[]), op(BIT_PIECE, &[64, 8])]);
    assert_eq!(out(&e, generic(1)), err(id::OP_BIT_PIECE_OFFSET_PAST_STORAGE, Some(1)));
    let e = value_of(&[op(STACK_VALUE, &[]), op(BIT_PIECE, &[60, 8])]);
    assert_eq!(out(&e, generic(1)), ill(id::COMPOSITE_PART_EXCEEDS_STORAGE, Some(1)));
    // Negative: a BitPiece not after StackValue rests on no decision (a
    // DebugDeclare: the value is the address).
    assert_eq!(run(&declare(&[op(BIT_PIECE, &[0, 8])]), generic(0x1000)).1, vec![]);
}

#[test]
fn fragment_places_the_location_in_the_variable() {
    // spirv.op.fragment.part on a 96-bit variable: bits 16..48 are the
    // first 32 bits at 0x1000, bits 0..16 and 48..96 undefined.
    let e = expr(Applies::Declare, &[op(FRAGMENT, &[16, 32])], Some(96));
    assert_eq!(
        run(&e, generic(0x1000)),
        (composite(&[(16, Source::Undefined), (32, mem(0x1000)), (48, Source::Undefined)]), vec![])
    );
    // The part must fit its storage: 128 bits of a 64-bit implicit value.
    let e = expr(Applies::Value, &[op(STACK_VALUE, &[]), op(FRAGMENT, &[0, 128])], Some(128));
    assert_eq!(out(&e, generic(1)), ill(id::COMPOSITE_PART_EXCEEDS_STORAGE, Some(1)));
    // A typed value is no location (op.piece.not-location), at the Fragment.
    let s32 = CtxEntry::Value(Value::from_u128(BaseType::ate(ate::SIGNED, 32, false), 7));
    let e = expr(Applies::Value, &[op(FRAGMENT, &[0, 32])], Some(32));
    assert_eq!(out(&e, s32), ill(id::OP_PIECE_NOT_LOCATION, Some(0)));
    // A register location as the part.
    let rax = CtxEntry::Location(RawLocation::simple(reg(0, 0)).normalize());
    let e = expr(Applies::Declare, &[op(FRAGMENT, &[32, 32])], Some(64));
    assert_eq!(out(&e, rax), composite(&[(32, Source::Undefined), (32, reg(0, 0))]));
}

// ---- the result -------------------------------------------------------------------------

#[test]
fn empty_debug_value_is_the_value_itself() {
    // spirv.value.empty-expression: an implicit location holding the value.
    let (o, u) = run(&value_of(&[]), generic(42));
    assert_eq!((o, u), (loc(implicit(&[42, 0, 0, 0, 0, 0, 0, 0], 0)), vec![id::SPIRV_VALUE_EMPTY_EXPRESSION]));
    // A typed value keeps its own size: signed32 -1.
    let s32 = CtxEntry::Value(Value::from_u128(BaseType::ate(ate::SIGNED, 32, false), 0xffff_ffff));
    assert_eq!(out(&value_of(&[]), s32), loc(implicit(&[0xff; 4], 0)));
    // A location the context gave stays that location.
    let rax = CtxEntry::Location(RawLocation::simple(reg(0, 0)).normalize());
    assert_eq!(run(&value_of(&[]), rax), (loc(reg(0, 0)), vec![id::SPIRV_VALUE_EMPTY_EXPRESSION]));
    // Negative: an empty DebugDeclare is the address as a DWARF location.
    assert_eq!(run(&declare(&[]), generic(0x1000)), (loc(mem(0x1000)), vec![]));
}

#[test]
fn debug_value_without_stack_value_is_an_address() {
    // spirv.value.without-stack-value: the value left on top is the
    // variable's address.
    let e = value_of(&[op(PLUS_UCONST, &[8])]);
    assert_eq!(run(&e, generic(0x1000)), (loc(mem(0x1008)), vec![id::SPIRV_VALUE_WITHOUT_STACK_VALUE]));
    // So is a value a Fragment turns into a location.
    let e = value_of(&[op(FRAGMENT, &[0, 32])]);
    assert_eq!(
        run(&e, generic(0x1000)),
        (composite(&[(32, mem(0x1000)), (32, Source::Undefined)]), vec![id::SPIRV_VALUE_WITHOUT_STACK_VALUE])
    );
    // A typed value on top converts to no location (DWARF's rule, at no
    // operation).
    let s32 = CtxEntry::Value(Value::from_u128(BaseType::ate(ate::SIGNED, 32, false), 7));
    let e = value_of(&[op(CONSTU, &[0]), op(SWAP, &[])]);
    assert_eq!(out(&e, s32), ill(id::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE, None));
    // Negative: with StackValue the answer rests on nothing.
    let e = value_of(&[op(PLUS_UCONST, &[8]), op(STACK_VALUE, &[])]);
    assert_eq!(run(&e, generic(0x1000)).1, vec![]);
}

#[test]
fn result_is_a_location_from_the_top() {
    // spirv.result.location: whatever the context's result kind; the entry
    // below the top is ignored.
    let c = with_kind(sctx(generic(0x2000)), ResultKind::Value);
    assert_eq!(spirv(&declare(&[op(CONSTU, &[7])]), &c).0, loc(mem(7)));
}

#[test]
fn budgets_count_spirv_operations() {
    let e = declare(&[op(CONSTU, &[1]), op(CONSTU, &[2]), op(CONSTU, &[3])]);
    // Steps, checked before each operation: the third is one too many.
    let mut c = sctx(generic(0));
    c.budgets.steps = 2;
    assert_eq!(spirv(&e, &c).0, Outcome::Failed(Failure::Budget { budget: BudgetKind::Steps, at: Some(2) }));
    // Stack, checked after each: three entries after the second.
    let mut c = sctx(generic(0));
    c.budgets.stack = 2;
    assert_eq!(spirv(&e, &c).0, Outcome::Failed(Failure::Budget { budget: BudgetKind::Stack, at: Some(1) }));
}

#[test]
fn evaluate_attribute_dispatches_spirv() {
    // The public entry point with no attribute runs the SPIR-V interpreter.
    let e = declare(&[op(CONSTU, &[0]), op(SWAP, &[]), op(XDEREF, &[])]);
    let c = sctx(generic(0x2000));
    assert_eq!(crate::expr::evaluate_attribute(None, AttrValue::Spirv(&e), &c), (loc(mem(0x1000)), vec![]));
    // A DWARF attribute does not take it (attr.form-not-allowed).
    assert_eq!(
        crate::expr::evaluate_attribute(Some(Attribute::Location), AttrValue::Spirv(&e), &c).0,
        ill(id::ATTR_FORM_NOT_ALLOWED, None)
    );
}
