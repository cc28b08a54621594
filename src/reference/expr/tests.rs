//! Unit tests of the reference interpreter. Every expected outcome is
//! derived by hand from the spec text (the rule named next to it), not
//! from running the code. Expressions are raw bytes with the opcode
//! values of DWARF 5 Table 7.9 written out.

use super::{evaluate, evaluate_traced};
use crate::context::{CompUnit, Context, Entry as CtxEntry, MemorySegment, ResultKind};
use crate::encoding::{ate, VendorProfile};
use crate::outcome::{
    BaseType, BudgetKind, NormalLocation, Outcome, Piece, RawLocation, SingleLocation, Source, Value,
};
use crate::rules::id;
use crate::target::presets;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const RSP: u64 = 7;

fn ctx() -> Context {
    let mut c = Context::new(Arc::new(presets::x86_64()));
    c.registers.insert(0, 0x1122_3344_5566_7788u64.to_le_bytes().to_vec());
    c.registers.insert(RSP, 0x7ffc_0000u64.to_le_bytes().to_vec());
    c.registers.insert(6, 0x1000u64.to_le_bytes().to_vec());
    let mut xmm0 = vec![0u8; 16];
    xmm0[0] = 0x11;
    xmm0[15] = 0xff;
    c.registers.insert(17, xmm0);
    c.memory.push(MemorySegment { aspace: 0, address: 0x1000, bytes: vec![0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4] });
    let mut base_types = BTreeMap::new();
    base_types.insert(0x2a, BaseType::ate(ate::SIGNED, 32, false));
    base_types.insert(0x30, BaseType::ate(ate::UNSIGNED, 32, false));
    base_types.insert(0x31, BaseType::ate(ate::FLOAT, 64, false));
    base_types.insert(0x32, BaseType::ate(ate::SIGNED, 128, false));
    base_types.insert(0x33, BaseType::ate(ate::SIGNED, 64, false));
    base_types.insert(0x34, BaseType::ate(ate::UNSIGNED, 64, false));
    base_types.insert(0x35, BaseType::ate(ate::UNSIGNED, 128, false));
    base_types.insert(0x36, BaseType::ate(ate::FLOAT, 32, false));
    let mut debug_addr = vec![0u8; 8];
    debug_addr.extend_from_slice(&0x40_1000u64.to_le_bytes());
    c.cu = Some(CompUnit {
        version: 5,
        format: Default::default(),
        address_size: 8,
        debug_addr: debug_addr.into(),
        addr_base: 8,
        base_types,
    });
    c
}

fn with_kind(mut c: Context, k: ResultKind) -> Context {
    c.result_kind = Some(k);
    c
}

fn g64(v: u64) -> Outcome {
    Outcome::Value(Value::from_u128(BaseType::generic(64, false), u128::from(v)))
}

fn typed(ty: BaseType, v: u128) -> Outcome {
    Outcome::Value(Value::from_u128(ty, v))
}

fn loc(src: Source) -> Outcome {
    Outcome::Location(RawLocation::simple(src).normalize())
}

fn mem(a: u64) -> Source {
    Source::Memory { aspace: 0, bit_addr: u128::from(a) * 8 }
}

fn reg(regno: u64, bit_offset: u64) -> Source {
    Source::Register { regno, bit_offset }
}

fn composite(pieces: &[(u64, Source)]) -> Outcome {
    Outcome::Location(NormalLocation {
        places: vec![SingleLocation::Composite(
            pieces.iter().map(|(b, s)| Piece { bits: *b, sources: BTreeSet::from([s.clone()]) }).collect(),
        )],
    })
}

fn ill(rule: crate::rules::RuleId, at: Option<u64>) -> Outcome {
    Outcome::IllFormed { rule, at }
}

fn err(rule: crate::rules::RuleId, at: Option<u64>) -> Outcome {
    Outcome::EvalError { rule, at }
}

fn value(e: &[u8]) -> Outcome {
    evaluate(e, &with_kind(ctx(), ResultKind::Value))
}

fn location(e: &[u8]) -> Outcome {
    evaluate(e, &with_kind(ctx(), ResultKind::Location))
}

// ---- expression result ----------------------------------------------------

#[test]
fn empty_expression_is_undefined_location() {
    // expr.result.unspecified-empty-undefined, expr.result.location-empty-undefined
    assert_eq!(evaluate(&[], &ctx()), loc(Source::Undefined));
    assert_eq!(location(&[]), loc(Source::Undefined));
    // expr.result.value-empty-stack: no top entry, not at any operation.
    assert_eq!(value(&[]), ill(id::EXPR_RESULT_VALUE_EMPTY_STACK, None));
}

#[test]
fn result_kind_conversions() {
    // lit5: generic 5; as location it is memory at 5 (loc.convert.generic-value-to-memory).
    assert_eq!(value(&[0x35]), g64(5));
    assert_eq!(location(&[0x35]), loc(mem(5)));
    assert_eq!(evaluate(&[0x35], &ctx()), g64(5));
    // DW_OP_breg7 16: memory location rsp+16; as value its address.
    assert_eq!(location(&[0x77, 0x10]), loc(mem(0x7ffc_0010)));
    assert_eq!(value(&[0x77, 0x10]), g64(0x7ffc_0010));
    // DW_OP_reg0 as a value: not convertible (expr.result.value-not-convertible).
    assert_eq!(value(&[0x50]), ill(id::EXPR_RESULT_VALUE_NOT_CONVERTIBLE, None));
    // const_type signed32 as a location: not convertible.
    assert_eq!(location(&[0xa4, 0x2a, 4, 1, 0, 0, 0]), ill(id::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE, None));
    // Other entries are discarded: lit1 lit2 -> 2.
    assert_eq!(value(&[0x31, 0x32]), g64(2));
}

#[test]
fn initial_stack_is_pushed_in_order() {
    // expr.eval.initial-stack: [7, 9] with 9 on top; DW_OP_minus -> 7 - 9.
    let mut c = with_kind(ctx(), ResultKind::Value);
    let gt = BaseType::generic(64, false);
    c.initial_stack = vec![CtxEntry::Value(Value::from_u128(gt, 7)), CtxEntry::Value(Value::from_u128(gt, 9))];
    assert_eq!(evaluate(&[0x1c], &c), g64(7u64.wrapping_sub(9)));
}

// ---- literals --------------------------------------------------------------

#[test]
fn literals_are_generic_and_truncated() {
    // op.const.pushes-generic: const1s -1 sign-extends to the generic size.
    assert_eq!(value(&[0x09, 0xff]), g64(u64::MAX));
    // consts -2 (SLEB 0x7e)
    assert_eq!(value(&[0x11, 0x7e]), g64(-2i64 as u64));
    // constu 624485 (ULEB e5 8e 26, DWARF 5 Appendix C example)
    assert_eq!(value(&[0x10, 0xe5, 0x8e, 0x26]), g64(624_485));
    // op.const.truncated-to-generic on a 32-bit generic type.
    let mut t = presets::x86_64();
    t.address_spaces[0].address_bits = 32;
    let mut c = Context::new(Arc::new(t));
    c.result_kind = Some(ResultKind::Value);
    let g32 = BaseType::generic(32, false);
    assert_eq!(
        evaluate(&[0x0e, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11], &c),
        Outcome::Value(Value::from_u128(g32, 0x5566_7788))
    );
    assert_eq!(evaluate(&[0x09, 0xff], &c), Outcome::Value(Value::from_u128(g32, 0xffff_ffff)));
}

#[test]
fn constx_and_addrx_read_debug_addr() {
    // addr_base 8, index 0 -> bytes 8..16 = 0x401000.
    assert_eq!(value(&[0xa2, 0x00]), g64(0x40_1000));
    assert_eq!(location(&[0xa1, 0x00]), loc(mem(0x40_1000)));
    // GNU_addr_index is the same (gnu profile is the x86_64 default).
    assert_eq!(location(&[0xfb, 0x00]), loc(mem(0x40_1000)));
    // Index 1 is past the section: op.debug-addr.entry-missing.
    assert_eq!(value(&[0xa2, 0x01]), err(id::OP_DEBUG_ADDR_ENTRY_MISSING, Some(0)));
    let mut c = with_kind(ctx(), ResultKind::Value);
    c.cu = None;
    assert_eq!(evaluate(&[0xa2, 0x00], &c), err(id::CTX_CU_MISSING, Some(0)));
}

// ---- stack operations --------------------------------------------------------

#[test]
fn stack_operations() {
    // lit1 lit2 lit3 rot -> [3, 1, 2] (top last): op.rot.rotates.
    assert_eq!(value(&[0x31, 0x32, 0x33, 0x17]), g64(2));
    assert_eq!(value(&[0x31, 0x32, 0x33, 0x17, 0x13]), g64(1));
    assert_eq!(value(&[0x31, 0x32, 0x33, 0x17, 0x13, 0x13]), g64(3));
    // lit1 lit2 swap -> top 1; over -> copies 2; pick 2 of [1,2,3] -> 1.
    assert_eq!(value(&[0x31, 0x32, 0x16]), g64(1));
    assert_eq!(value(&[0x31, 0x32, 0x14]), g64(1));
    assert_eq!(value(&[0x31, 0x32, 0x33, 0x15, 0x02]), g64(1));
    // dup of a location (op.stack.any-kind): reg0 dup piece 8 piece 8.
    // The first piece pops one copy and, as the entry below is no
    // incomplete composite, pushes a new one; the second piece then sees an
    // incomplete composite on top and appends an undefined part
    // (op.piece.top-incomplete-appends): [64 reg0 | 64 undefined].
    assert_eq!(location(&[0x50, 0x12, 0x93, 0x08, 0x93, 0x08]), composite(&[(64, reg(0, 0)), (64, Source::Undefined)]));
    // dup, piece 8, swap, piece 8 would need swap on an incomplete
    // composite: ill-formed.
    assert_eq!(location(&[0x50, 0x12, 0x93, 0x08, 0x16]), ill(id::OP_STACK_INCOMPLETE_COMPOSITE, Some(4)));
}

#[test]
fn stack_errors() {
    // expr.stack.underflow at the drop (offset 0).
    assert_eq!(value(&[0x13]), ill(id::EXPR_STACK_UNDERFLOW, Some(0)));
    assert_eq!(value(&[0x31, 0x16]), ill(id::EXPR_STACK_UNDERFLOW, Some(1)));
    // op.pick.index-out-of-range: lit1 pick 1.
    assert_eq!(value(&[0x31, 0x15, 0x01]), ill(id::OP_PICK_INDEX_OUT_OF_RANGE, Some(1)));
    // op.stack.incomplete-composite: piece 4 dup.
    assert_eq!(location(&[0x93, 0x04, 0x12]), ill(id::OP_STACK_INCOMPLETE_COMPOSITE, Some(2)));
}

// ---- arithmetic ------------------------------------------------------------------

#[test]
fn generic_arithmetic() {
    // op.div.signed-generic: -6 / 2 = -3.
    assert_eq!(value(&[0x11, 0x7a, 0x32, 0x1b]), g64(-3i64 as u64));
    // op.mod.signedness: generic mod is unsigned: (2^64-1) mod 10 = 5.
    assert_eq!(value(&[0x11, 0x7f, 0x3a, 0x1d]), g64(5));
    // op.arith.generic-wraps: 0 - 1.
    assert_eq!(value(&[0x30, 0x31, 0x1c]), g64(u64::MAX));
    // op.shift.count-too-large: 1 << 64 = 0; -1 >>a 70 = -1; -8 >>a 1 = -4; 0x80 >> 4 = 8.
    assert_eq!(value(&[0x31, 0x08, 64, 0x24]), g64(0));
    assert_eq!(value(&[0x11, 0x7f, 0x08, 70, 0x26]), g64(u64::MAX));
    assert_eq!(value(&[0x11, 0x78, 0x31, 0x26]), g64(-4i64 as u64));
    assert_eq!(value(&[0x08, 0x80, 0x34, 0x25]), g64(8));
    // op.abs.overflow: abs of 0x8000000000000000 stays; abs -5 = 5; neg 5 = -5.
    assert_eq!(value(&[0x0e, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x19]), g64(1 << 63));
    assert_eq!(value(&[0x11, 0x7b, 0x19]), g64(5));
    assert_eq!(value(&[0x35, 0x1f]), g64(-5i64 as u64));
    // not, and, or, xor, mul, plus_uconst.
    assert_eq!(value(&[0x30, 0x20]), g64(u64::MAX));
    assert_eq!(value(&[0x3c, 0x3a, 0x1a]), g64(8));
    assert_eq!(value(&[0x3c, 0x33, 0x21]), g64(15));
    assert_eq!(value(&[0x3c, 0x3a, 0x27]), g64(6));
    assert_eq!(value(&[0x37, 0x36, 0x1e]), g64(42));
    assert_eq!(value(&[0x31, 0x23, 0xff, 0x01]), g64(256));
    // op.div.by-zero / op.mod.by-zero, at the operation.
    assert_eq!(value(&[0x31, 0x30, 0x1b]), err(id::OP_DIV_BY_ZERO, Some(2)));
    assert_eq!(value(&[0x31, 0x30, 0x1d]), err(id::OP_MOD_BY_ZERO, Some(2)));
}

#[test]
fn typed_arithmetic() {
    let s32 = BaseType::ate(ate::SIGNED, 32, false);
    let u32t = BaseType::ate(ate::UNSIGNED, 32, false);
    let s128 = BaseType::ate(ate::SIGNED, 128, false);
    // plus_uconst on signed32 0xffffffff (-1) + 2 = 1 in 32 bits.
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0x23, 0x02]), typed(s32, 1));
    // op.div.typed-signedness: unsigned32 0xfffffffe / 2 = 0x7fffffff.
    let e = [0xa4, 0x30, 4, 0xfe, 0xff, 0xff, 0xff, 0xa4, 0x30, 4, 2, 0, 0, 0, 0x1b];
    assert_eq!(value(&e), typed(u32t, 0x7fff_ffff));
    // signed32 -7 mod 2 = -1 (sign of the dividend).
    let e = [0xa4, 0x2a, 4, 0xf9, 0xff, 0xff, 0xff, 0xa4, 0x2a, 4, 2, 0, 0, 0, 0x1d];
    assert_eq!(value(&e), typed(s32, 0xffff_ffff));
    // 128-bit: 2^64 + 2^64 = 2^65 (op.typed.base-type: wider than 64 bits).
    let mut e = vec![0xa4, 0x32, 16, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
    e.extend_from_slice(&[0x12, 0x22]);
    assert_eq!(value(&e), typed(s128, 1u128 << 65));
    // op.arith.same-type: generic + signed32.
    assert_eq!(value(&[0x31, 0xa4, 0x2a, 4, 1, 0, 0, 0, 0x22]), ill(id::OP_ARITH_SAME_TYPE, Some(8)));
    // op.arith.requires-integral: float mod.
    let f = [0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f];
    let e: Vec<u8> = f.iter().chain(f.iter()).copied().chain([0x1d]).collect();
    assert_eq!(value(&e), ill(id::OP_ARITH_REQUIRES_INTEGRAL, Some(22)));
}

#[test]
fn float_arithmetic_and_comparison() {
    let f64t = BaseType::ate(ate::FLOAT, 64, false);
    // 1.5 = 0x3ff8000000000000, 2.0 = 0x4000000000000000; product 3.0 = 0x4008000000000000.
    let a = [0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f];
    let b = [0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0x00, 0x40];
    let mul: Vec<u8> = a.iter().chain(b.iter()).copied().chain([0x1e]).collect();
    assert_eq!(value(&mul), typed(f64t, 0x4008_0000_0000_0000));
    // op.relational.float: 1.5 < 2.0 -> generic 1; 2.0 < 1.5 -> 0.
    let lt: Vec<u8> = a.iter().chain(b.iter()).copied().chain([0x2d]).collect();
    assert_eq!(value(&lt), g64(1));
    let gt: Vec<u8> = b.iter().chain(a.iter()).copied().chain([0x2d]).collect();
    assert_eq!(value(&gt), g64(0));
    // neg flips the sign bit: -1.5 = 0xbff8000000000000.
    let neg: Vec<u8> = a.iter().copied().chain([0x1f]).collect();
    assert_eq!(value(&neg), typed(f64t, 0xbff8_0000_0000_0000));
    // 0.0 / 0.0 is the canonical NaN (op.arith.float).
    let z = [0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0, 0];
    let nan: Vec<u8> = z.iter().chain(z.iter()).copied().chain([0x1b]).collect();
    assert_eq!(value(&nan), typed(f64t, 0x7ff8_0000_0000_0000));
}

#[test]
fn relational_operations() {
    // op.relational.generic-signed: -1 < 1.
    assert_eq!(value(&[0x11, 0x7f, 0x31, 0x2d]), g64(1));
    // op.relational.typed-signedness: unsigned32 0xffffffff < 1 is false.
    let e = [0xa4, 0x30, 4, 0xff, 0xff, 0xff, 0xff, 0xa4, 0x30, 4, 1, 0, 0, 0, 0x2d];
    assert_eq!(value(&e), g64(0));
    // eq, ne, ge, le, gt on 3 and 3.
    for (op, r) in [(0x29, 1), (0x2e, 0), (0x2a, 1), (0x2c, 1), (0x2b, 0)] {
        assert_eq!(value(&[0x33, 0x33, op]), g64(r), "op {op:#x}");
    }
    // op.relational.same-type.
    assert_eq!(value(&[0x31, 0xa4, 0x2a, 4, 1, 0, 0, 0, 0x29]), ill(id::OP_RELATIONAL_SAME_TYPE, Some(8)));
}

// ---- control flow ----------------------------------------------------------------

#[test]
fn branches() {
    // 0: lit1, 1: bra +1, 4: lit7, 5: lit9 -> the taken branch lands on lit9.
    assert_eq!(value(&[0x31, 0x28, 0x01, 0x00, 0x37, 0x39]), g64(9));
    // Not taken (lit0): lit7 lit9 -> 9 on top, 7 below; drop shows 7.
    assert_eq!(value(&[0x30, 0x28, 0x01, 0x00, 0x37, 0x39, 0x13]), g64(7));
    // op.bra.target-not-op-start: 4: const1u 5, target 5 is its operand.
    assert_eq!(value(&[0x31, 0x28, 0x01, 0x00, 0x08, 0x05]), ill(id::OP_BRA_TARGET_NOT_OP_START, Some(1)));
    // A branch not taken is not checked.
    assert_eq!(value(&[0x30, 0x28, 0x01, 0x00, 0x08, 0x05]), g64(5));
    // op.skip.target-end-completes: 0: skip +1, 3: lit0 -> target 4 = end.
    assert_eq!(evaluate(&[0x2f, 0x01, 0x00, 0x30], &ctx()), loc(Source::Undefined));
    // op.skip.target-out-of-range: skip -10 and skip +5.
    assert_eq!(value(&[0x2f, 0xf6, 0xff]), ill(id::OP_SKIP_TARGET_OUT_OF_RANGE, Some(0)));
    assert_eq!(value(&[0x2f, 0x05, 0x00, 0x30]), ill(id::OP_SKIP_TARGET_OUT_OF_RANGE, Some(0)));
    assert_eq!(value(&[0x31, 0x28, 0x05, 0x00, 0x30]), ill(id::OP_BRA_TARGET_OUT_OF_RANGE, Some(1)));
    // op.skip.target-not-op-start: skip -1 lands in its own operand.
    assert_eq!(value(&[0x2f, 0xff, 0xff]), ill(id::OP_SKIP_TARGET_NOT_OP_START, Some(0)));
}

#[test]
fn branch_loop_hits_the_step_budget() {
    // skip -3 jumps to itself forever; with steps = 100 the 101st
    // operation (offset 0) reports the budget.
    let mut c = ctx();
    c.budgets.steps = 100;
    assert_eq!(evaluate(&[0x2f, 0xfd, 0xff], &c), Outcome::Budget { budget: BudgetKind::Steps, at: Some(0) });
    // A counting loop that does finish: 3, then "dup bra" back while non-zero with
    // lit1 minus: 0: lit3, 1: lit1, 2: minus, 3: dup, 4: bra -6 (to 1).
    assert_eq!(value(&[0x33, 0x31, 0x1c, 0x12, 0x28, 0xfa, 0xff]), g64(0));
}

#[test]
fn stack_budget() {
    let mut c = ctx();
    c.budgets.stack = 2;
    assert_eq!(evaluate(&[0x31, 0x12, 0x12], &c), Outcome::Budget { budget: BudgetKind::Stack, at: Some(2) });
}

// ---- decoding ----------------------------------------------------------------------

#[test]
fn malformed_bytes() {
    // expr.decode.unknown-opcode: 0x01 is no operation.
    assert_eq!(value(&[0x31, 0x01]), ill(id::EXPR_DECODE_UNKNOWN_OPCODE, Some(1)));
    // 0xe1 is not GNU; under strict dwarf5, 0xf0 (GNU_uninit) is unknown too.
    assert_eq!(value(&[0xe1]), ill(id::EXPR_DECODE_UNKNOWN_OPCODE, Some(0)));
    let mut c = ctx();
    c.vendor = VendorProfile::dwarf5();
    assert_eq!(evaluate(&[0x50, 0xf0], &c), ill(id::EXPR_DECODE_UNKNOWN_OPCODE, Some(1)));
    // expr.decode.truncated-operand: const2u with one operand byte; a
    // block longer than the rest.
    assert_eq!(value(&[0x31, 0x0a, 0x01]), ill(id::EXPR_DECODE_TRUNCATED_OPERAND, Some(1)));
    assert_eq!(value(&[0x9e, 0x05, 1, 2]), ill(id::EXPR_DECODE_TRUNCATED_OPERAND, Some(0)));
    assert_eq!(value(&[0x10, 0x80]), ill(id::EXPR_DECODE_TRUNCATED_OPERAND, Some(0)));
    // expr.decode.leb128-overflow: ten ULEB bytes with bit 64 set.
    let mut e = vec![0x10];
    e.extend_from_slice(&[0xff; 9]);
    e.push(0x7f);
    assert_eq!(value(&e), ill(id::EXPR_DECODE_LEB128_OVERFLOW, Some(0)));
    // expr.decode.static: a bad byte behind a skip to the end still counts.
    assert_eq!(value(&[0x2f, 0x01, 0x00, 0x01]), ill(id::EXPR_DECODE_UNKNOWN_OPCODE, Some(3)));
}

// ---- memory, registers, deref ------------------------------------------------------

#[test]
fn register_and_memory_locations() {
    // op.regx.pushes-register; op.reg.same-as-regx.
    assert_eq!(location(&[0x50]), loc(reg(0, 0)));
    assert_eq!(location(&[0x90, 0x11]), loc(reg(17, 0)));
    // regx of a register the target lacks is just a name (reg.unknown-register-read).
    assert_eq!(location(&[0x90, 0xe7, 0x07]), loc(reg(999, 0)));
    // op.addr.pushes-memory.
    assert_eq!(location(&[0x03, 0x10, 0, 0, 0, 0, 0, 0, 0]), loc(mem(0x10)));
    // op.breg.register-plus-offset with a negative displacement.
    assert_eq!(location(&[0x77, 0x78]), loc(mem(0x7ffc_0000 - 8)));
    assert_eq!(location(&[0x92, 0x07, 0x08]), loc(mem(0x7ffc_0008)));
    // op.gnu-uninit.no-effect.
    assert_eq!(location(&[0x5c, 0xf0]), loc(reg(12, 0)));
}

#[test]
fn dereferencing() {
    // op.reg.location-on-stack + op.deref.generic: reg0 deref reads rax.
    assert_eq!(value(&[0x50, 0x06]), g64(0x1122_3344_5566_7788));
    // deref_size 2 at 0x1000 (bytes de ad) -> 0xadde.
    assert_eq!(value(&[0x0a, 0x00, 0x10, 0x94, 0x02]), g64(0xadde));
    // deref at 0x1000 reads 8 bytes little-endian.
    assert_eq!(value(&[0x0a, 0x00, 0x10, 0x06]), g64(0x0403_0201_efbe_adde));
    // deref_size larger than the generic size reads only 8 bytes.
    assert_eq!(value(&[0x0a, 0x00, 0x10, 0x94, 0x10]), g64(0x0403_0201_efbe_adde));
    // op.deref-size.zero: nothing read, 0 pushed, even at an unreadable address.
    assert_eq!(value(&[0x30, 0x94, 0x00]), g64(0));
    // op.deref.memory-unreadable at the deref (offset 3).
    assert_eq!(value(&[0x0a, 0x00, 0x20, 0x06]), err(id::OP_DEREF_MEMORY_UNREADABLE, Some(3)));
    // deref_type signed32 at 0x1004 -> 0x04030201.
    let s32 = BaseType::ate(ate::SIGNED, 32, false);
    assert_eq!(value(&[0x0a, 0x04, 0x10, 0xa6, 0x04, 0x2a]), typed(s32, 0x0403_0201));
    // op.deref-type.size-mismatch: S = 8 for a 32-bit type.
    assert_eq!(value(&[0x0a, 0x04, 0x10, 0xa6, 0x08, 0x2a]), ill(id::OP_DEREF_TYPE_SIZE_MISMATCH, Some(3)));
    // op.typed.not-base-type.
    assert_eq!(value(&[0x0a, 0x04, 0x10, 0xa6, 0x04, 0x7f]), ill(id::OP_TYPED_NOT_BASE_TYPE, Some(3)));
    // loc.convert.value-not-generic: deref of a signed32 value.
    assert_eq!(value(&[0xa4, 0x2a, 4, 0, 0x10, 0, 0, 0x06]), ill(id::LOC_CONVERT_VALUE_NOT_GENERIC, Some(7)));
    // op.deref.undefined-storage: piece 8 deref? (incomplete) -> ill; use skip-free
    // undefined: empty stack piece, complete it via result... instead a
    // register bit offset past the end:
    // op.deref.past-storage-end: regval_type reg0 as signed128 (64-bit register).
    assert_eq!(value(&[0xa5, 0x00, 0x32]), err(id::OP_DEREF_PAST_STORAGE_END, Some(0)));
    // ctx.register-unavailable: rbx (3) has no value.
    assert_eq!(value(&[0x73, 0x00]), err(id::CTX_REGISTER_UNAVAILABLE, Some(0)));
    // reg.unknown-register-read: breg via bregx 999.
    assert_eq!(value(&[0x92, 0xe7, 0x07, 0x00]), err(id::REG_UNKNOWN_REGISTER_READ, Some(0)));
    // loc.incomplete-composite-not-location: piece 4 deref.
    assert_eq!(value(&[0x93, 0x04, 0x06]), ill(id::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION, Some(2)));
}

#[test]
fn undefined_storage_cannot_be_read() {
    // The initial stack holds an undefined location; deref reads it.
    let mut c = with_kind(ctx(), ResultKind::Value);
    c.initial_stack = vec![CtxEntry::Location(RawLocation::simple(Source::Undefined).normalize())];
    assert_eq!(evaluate(&[0x06], &c), err(id::OP_DEREF_UNDEFINED_STORAGE, Some(0)));
}

#[test]
fn places_must_agree() {
    // A location with two places whose contents differ: memory 0x1000
    // (..., 0xadde) vs rax.
    let mut c = with_kind(ctx(), ResultKind::Value);
    let two = NormalLocation { places: vec![SingleLocation::Simple(mem(0x1000)), SingleLocation::Simple(reg(0, 0))] };
    c.initial_stack = vec![CtxEntry::Location(two)];
    assert_eq!(evaluate(&[0x06], &c), ill(id::EXPR_LOC_PLACES_MUST_AGREE, Some(0)));
}

#[test]
fn typed_register_and_constant() {
    let u128t = BaseType::ate(ate::UNSIGNED, 128, false);
    // regval_type xmm0 (17) as unsigned128: byte 0 = 0x11, byte 15 = 0xff.
    assert_eq!(value(&[0xa5, 0x11, 0x35]), typed(u128t, (0xffu128 << 120) | 0x11));
    // op.typed.die-zero-generic: regval_type reg0 with DR 0 is generic.
    assert_eq!(value(&[0xa5, 0x00, 0x00]), g64(0x1122_3344_5566_7788));
    // op.const-type.size-mismatch.
    assert_eq!(value(&[0xa4, 0x2a, 2, 1, 0]), ill(id::OP_CONST_TYPE_SIZE_MISMATCH, Some(0)));
    // ctx.cu-missing for a nonzero DR without a unit.
    let mut c = with_kind(ctx(), ResultKind::Value);
    c.cu = None;
    assert_eq!(evaluate(&[0xa4, 0x2a, 4, 1, 0, 0, 0], &c), err(id::CTX_CU_MISSING, Some(0)));
}

#[test]
fn conversions() {
    let s64 = BaseType::ate(ate::SIGNED, 64, false);
    let u64t = BaseType::ate(ate::UNSIGNED, 64, false);
    let s32 = BaseType::ate(ate::SIGNED, 32, false);
    // op.convert.integral: signed32 -1 -> signed64 -1 and unsigned64 2^64-1.
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0xa8, 0x33]), typed(s64, u128::from(u64::MAX)));
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0xa8, 0x34]), typed(u64t, u128::from(u64::MAX)));
    // generic 2^32+5 -> signed32 keeps the low bits: 5.
    assert_eq!(value(&[0x0c, 5, 0, 0, 0, 0xa8, 0x2a]), typed(s32, 5));
    // op.convert.float: 2.75 (0x4006000000000000) -> signed32 2; -> float32 0x40300000.
    let f = [0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0x06, 0x40];
    assert_eq!(value(&[&f[..], &[0xa8, 0x2a]].concat()), typed(s32, 2));
    let f32t = BaseType::ate(ate::FLOAT, 32, false);
    assert_eq!(value(&[&f[..], &[0xa8, 0x36]].concat()), typed(f32t, 0x4030_0000));
    // signed32 -3 -> float64 -3.0 = 0xc008000000000000.
    let f64t = BaseType::ate(ate::FLOAT, 64, false);
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xfd, 0xff, 0xff, 0xff, 0xa8, 0x31]), typed(f64t, 0xc008_0000_0000_0000));
    // op.reinterpret.same-bits: signed32 -1 -> unsigned32 0xffffffff.
    let u32t = BaseType::ate(ate::UNSIGNED, 32, false);
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0xa9, 0x30]), typed(u32t, 0xffff_ffff));
    // op.reinterpret.size-mismatch: signed32 -> generic (64).
    assert_eq!(value(&[0xa4, 0x2a, 4, 1, 0, 0, 0, 0xa9, 0x00]), ill(id::OP_REINTERPRET_SIZE_MISMATCH, Some(7)));
    // GNU aliases: GNU_convert (0xf7).
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0xf7, 0x33]), typed(s64, u128::from(u64::MAX)));
}

// ---- frame base, CFA, TLS, object ----------------------------------------------

#[test]
fn frame_base() {
    let mut c = with_kind(ctx(), ResultKind::Location);
    c.cfa = Some(0x7ffc_0100);
    c.frame_base = Some(vec![0x9c]);
    // op.fbreg.offset: CFA - 8.
    assert_eq!(evaluate(&[0x91, 0x78], &c), loc(mem(0x7ffc_00f8)));
    // op.fbreg.register-frame-base: frame base reg6 (rbp = 0x1000) -> 0x1010.
    c.frame_base = Some(vec![0x56]);
    assert_eq!(evaluate(&[0x91, 0x10], &c), loc(mem(0x1010)));
    // A bad frame base is reported at the DW_OP_fbreg (offset 1 here).
    c.frame_base = Some(vec![0x01]);
    assert_eq!(evaluate(&[0x96, 0x91, 0x00], &c), ill(id::EXPR_DECODE_UNKNOWN_OPCODE, Some(1)));
    // op.fbreg.offset-out-of-storage: memory 0 - 8.
    c.frame_base = Some(vec![0x30]);
    assert_eq!(evaluate(&[0x91, 0x78], &c), err(id::OP_FBREG_OFFSET_OUT_OF_STORAGE, Some(0)));
    // A frame base that uses fbreg recurses until the depth budget.
    c.frame_base = Some(vec![0x91, 0x00]);
    assert_eq!(evaluate(&[0x91, 0x00], &c), Outcome::Budget { budget: BudgetKind::Depth, at: Some(0) });
    // ctx.frame-base-missing.
    c.frame_base = None;
    assert_eq!(evaluate(&[0x91, 0x00], &c), err(id::CTX_FRAME_BASE_MISSING, Some(0)));
}

#[test]
fn cfa_tls_object() {
    let mut c = with_kind(ctx(), ResultKind::Location);
    assert_eq!(evaluate(&[0x9c], &c), err(id::CTX_CFA_MISSING, Some(0)));
    c.cfa = Some(0x7ffc_0100);
    assert_eq!(evaluate(&[0x9c], &c), loc(mem(0x7ffc_0100)));
    // op.form-tls-address.memory: tls base 0x7f00 + 16.
    assert_eq!(evaluate(&[0x40, 0x9b], &c), err(id::CTX_TLS_BASE_MISSING, Some(1)));
    c.tls_base = Some(0x7f00);
    assert_eq!(evaluate(&[0x40, 0x9b], &c), loc(mem(0x7f10)));
    assert_eq!(evaluate(&[0x40, 0xe0], &c), loc(mem(0x7f10)));
    // op.form-tls-address.requires-integral: a float64 value.
    let f = [0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x9b];
    assert_eq!(evaluate(&f, &c), ill(id::OP_FORM_TLS_ADDRESS_REQUIRES_INTEGRAL, Some(11)));
    // op.push-object-address.pushes.
    assert_eq!(evaluate(&[0x97], &c), err(id::CTX_OBJECT_MISSING, Some(0)));
    c.object = Some(CtxEntry::Location(RawLocation::simple(mem(0x1000)).normalize()));
    let mut v = c.clone();
    v.result_kind = Some(ResultKind::Value);
    assert_eq!(evaluate(&[0x97, 0x94, 0x01], &v), g64(0xde));
}

#[test]
fn xderef() {
    // AS (0) pushed first, then A = 0x1000: xderef_size 1 -> 0xde.
    assert_eq!(value(&[0x30, 0x0a, 0x00, 0x10, 0x95, 0x01]), g64(0xde));
    assert_eq!(value(&[0x30, 0x0a, 0x00, 0x10, 0x18]), g64(0x0403_0201_efbe_adde));
    // op.xderef.unknown-address-space: AS 5.
    assert_eq!(value(&[0x35, 0x30, 0x18]), ill(id::OP_XDEREF_UNKNOWN_ADDRESS_SPACE, Some(2)));
    // op.xderef.requires-integral: a float address.
    let f = [0x30, 0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x18];
    assert_eq!(value(&f), ill(id::OP_XDEREF_REQUIRES_INTEGRAL, Some(12)));
}

// ---- implicit and composite --------------------------------------------------------

#[test]
fn implicit_locations() {
    // op.stack-value.creates-storage: lit5 stack_value.
    assert_eq!(location(&[0x35, 0x9f]), loc(Source::Implicit { bytes: vec![5, 0, 0, 0, 0, 0, 0, 0], bit_offset: 0 }));
    // op.implicit-value.creates-storage.
    assert_eq!(location(&[0x9e, 0x02, 0xaa, 0xbb]), loc(Source::Implicit { bytes: vec![0xaa, 0xbb], bit_offset: 0 }));
    // op.stack-value.continues: the implicit location can be read back.
    assert_eq!(value(&[0x9e, 0x02, 0xaa, 0xbb, 0x94, 0x02]), g64(0xbbaa));
    // Reading past its end: op.deref.past-storage-end.
    assert_eq!(value(&[0x9e, 0x02, 0xaa, 0xbb, 0x06]), err(id::OP_DEREF_PAST_STORAGE_END, Some(4)));
    // Size budget on implicit_value.
    let mut c = ctx();
    c.budgets.size_bytes = 1;
    assert_eq!(evaluate(&[0x9e, 0x02, 0xaa, 0xbb], &c), Outcome::Budget { budget: BudgetKind::Size, at: Some(0) });
}

#[test]
fn implicit_pointers() {
    let ip = Source::ImplicitPointer { die: 0x40, aspace: None, byte_displacement: 8, bit_offset: 0 };
    // op.implicit-pointer.creates: a0 <die 4 bytes> <sleb 8>.
    let e = [0xa0, 0x40, 0, 0, 0, 0x08];
    assert_eq!(location(&e), loc(ip.clone()));
    assert_eq!(location(&[0xf2, 0x40, 0, 0, 0, 0x08]), loc(ip.clone()));
    // op.implicit-pointer.deref-whole + op.implicit-pointer.stack-value.
    assert_eq!(location(&[&e[..], &[0x06, 0x9f]].concat()), loc(ip));
    // op.implicit-pointer.partial-read: deref_size 4.
    assert_eq!(value(&[&e[..], &[0x94, 0x04]].concat()), err(id::OP_IMPLICIT_POINTER_PARTIAL_READ, Some(6)));
    // op.implicit-pointer.value-misuse: deref then lit1 plus.
    assert_eq!(value(&[&e[..], &[0x06, 0x31, 0x22]].concat()), err(id::OP_IMPLICIT_POINTER_VALUE_MISUSE, Some(8)));
    // Converting it to a location needs DIEs: unsupported for now.
    assert!(matches!(location(&[&e[..], &[0x06]].concat()), Outcome::Unsupported { .. }));
}

#[test]
fn pieces() {
    let mut c = with_kind(ctx(), ResultKind::Location);
    // DESIGN example / proposal §3.2.4: reg0 piece 4, piece 2, breg7 16 piece 2.
    let e = [0x50, 0x93, 0x04, 0x93, 0x02, 0x77, 0x10, 0x93, 0x02];
    assert_eq!(evaluate(&e, &c), composite(&[(32, reg(0, 0)), (16, Source::Undefined), (16, mem(0x7ffc_0010))]));
    // op.piece.empty-stack-undefined-part then a value part (lit5 stack_value).
    let e = [0x93, 0x01, 0x35, 0x9f, 0x93, 0x01];
    assert_eq!(
        evaluate(&e, &c),
        composite(&[
            (8, Source::Undefined),
            (8, Source::Implicit { bytes: vec![5, 0, 0, 0, 0, 0, 0, 0], bit_offset: 0 })
        ])
    );
    // op.piece.pops-part-creates leaves entries below alone: lit1 reg0 piece 8
    // -> the composite is on top; under value kind it is not convertible.
    assert_eq!(evaluate(&[0x31, 0x50, 0x93, 0x08], &c), composite(&[(64, reg(0, 0))]));
    // op.bit-piece.size-and-offset: reg0 bit_piece 8 4.
    assert_eq!(evaluate(&[0x50, 0x9d, 0x08, 0x04], &c), composite(&[(8, reg(0, 4))]));
    // op.bit-piece.offset-past-storage: offset 64 in a 64-bit register.
    assert_eq!(evaluate(&[0x50, 0x9d, 0x08, 0x40], &c), err(id::OP_BIT_PIECE_OFFSET_PAST_STORAGE, Some(1)));
    // composite.part-exceeds-storage: reg0 piece 16; xmm0 piece 16 is fine.
    assert_eq!(evaluate(&[0x50, 0x93, 0x10], &c), ill(id::COMPOSITE_PART_EXCEEDS_STORAGE, Some(1)));
    assert_eq!(evaluate(&[0x90, 0x11, 0x93, 0x10], &c), composite(&[(128, reg(17, 0))]));
    // op.piece.not-location: a signed32 value as part.
    assert_eq!(evaluate(&[0xa4, 0x2a, 4, 1, 0, 0, 0, 0x93, 0x04], &c), ill(id::OP_PIECE_NOT_LOCATION, Some(7)));
    // Reading a composite: reg0 piece 1, addr 0x1000 piece 1 -> bytes 88 de.
    c.result_kind = Some(ResultKind::Value);
    let e = [0x50, 0x93, 0x01, 0x0a, 0x00, 0x10, 0x93, 0x01, 0x94, 0x02];
    // The composite is incomplete when deref runs: ill-formed.
    assert_eq!(evaluate(&e, &c), ill(id::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION, Some(8)));
    // Size budget on parts.
    let mut c = ctx();
    c.budgets.size_bytes = 4;
    assert_eq!(evaluate(&[0x93, 0x05], &c), Outcome::Budget { budget: BudgetKind::Size, at: Some(0) });
    assert_eq!(evaluate(&[0x93, 0x04, 0x93, 0x01], &c), Outcome::Budget { budget: BudgetKind::Size, at: Some(2) });
}

#[test]
fn composite_from_context_can_be_read() {
    // A complete composite [8 bits of rax | 8 bits of memory 0x1000] given
    // as the object: deref_size 2 reads 0x88 then 0xde -> 0xde88.
    let mut c = with_kind(ctx(), ResultKind::Value);
    c.object = Some(CtxEntry::Location(NormalLocation {
        places: vec![SingleLocation::Composite(vec![
            Piece { bits: 8, sources: BTreeSet::from([reg(0, 0)]) },
            Piece { bits: 8, sources: BTreeSet::from([mem(0x1000)]) },
        ])],
    }));
    assert_eq!(evaluate(&[0x97, 0x94, 0x02], &c), g64(0xde88));
    // Reading 3 bytes runs past the composite's 16 bits.
    assert_eq!(evaluate(&[0x97, 0x94, 0x03], &c), err(id::OP_DEREF_PAST_STORAGE_END, Some(1)));
}

#[test]
fn out_of_scope_operations_are_unsupported() {
    for e in [&[0x98, 0x10, 0x00][..], &[0xa3, 0x01, 0x50], &[0xf3, 0x01, 0x50], &[0xfa, 0, 0, 0, 0]] {
        assert!(matches!(evaluate(e, &ctx()), Outcome::Unsupported { .. }), "{e:02x?}");
    }
    let mut c = ctx();
    c.vendor = VendorProfile::hetero_2020();
    assert!(matches!(evaluate(&[0xe7], &c), Outcome::Unsupported { .. }));
    // A skipped out-of-scope operation is never executed.
    assert_eq!(evaluate(&[0x2f, 0x03, 0x00, 0x98, 0x10, 0x00], &ctx()), loc(Source::Undefined));
}

#[test]
fn trace_lists_each_step() {
    let (out, trace) = evaluate_traced(&[0x31, 0x32, 0x22], &with_kind(ctx(), ResultKind::Value));
    assert_eq!(out, g64(3));
    assert_eq!(trace.len(), 3);
    assert_eq!(trace[1].at, 1);
    assert_eq!(trace[1].op, "DW_OP_lit2");
    assert_eq!(trace[1].stack.len(), 2);
    assert_eq!(trace[2].stack, vec!["generic64:0x0000000000000003".to_string()]);
}

// ---- robustness -------------------------------------------------------------------

mod robustness {
    use super::*;
    use crate::target::{AddressSpace, Endian};
    use proptest::prelude::*;

    fn contexts() -> Vec<Context> {
        let mut a = ctx();
        a.cfa = Some(0x7ffc_0100);
        a.frame_base = Some(vec![0x9c]);
        a.tls_base = Some(0x7f00);
        a.object = Some(CtxEntry::Location(RawLocation::simple(mem(0x1000)).normalize()));
        let mut b = a.clone();
        b.result_kind = Some(ResultKind::Value);
        b.frame_base = Some(vec![0x56]);
        let mut c = a.clone();
        c.result_kind = Some(ResultKind::Location);
        c.synthetic = Some(7);
        c.budgets.size_bytes = 64;
        // A big-endian 32-bit target with a 16-bit second address space
        // and an odd-sized register.
        let mut t = presets::aarch64();
        t.endian = Endian::Big;
        t.address_spaces = vec![
            AddressSpace { number: 0, name: "m".into(), address_bits: 32, per_thread: false, per_lane: false },
            AddressSpace { number: 1, name: "l".into(), address_bits: 16, per_thread: false, per_lane: false },
        ];
        let mut d = Context::new(Arc::new(t));
        d.registers.insert(0, vec![0, 0, 0x10, 0, 1, 2, 3, 4]);
        d.memory.push(MemorySegment { aspace: 1, address: 0x10, bytes: vec![1, 2, 3, 4] });
        d.cu = a.cu.clone();
        d.frame_base = Some(vec![0x91, 0x04]);
        for x in [&mut a, &mut b, &mut c, &mut d] {
            let cu = x.cu.as_mut().expect("unit");
            cu.base_types.insert(0x40, BaseType::ate(ate::BOOLEAN, 8, false));
            cu.base_types.insert(0x48, BaseType::ate(ate::FLOAT, 80, false));
            cu.base_types.insert(0x50, BaseType::ate(ate::SIGNED, 16, true));
            cu.base_types.insert(0x58, BaseType::ate(ate::UNSIGNED, 256, false));
        }
        b.initial_stack = vec![CtxEntry::Value(Value::from_u128(BaseType::ate(ate::SIGNED, 32, false), 0xffff_fff0))];
        c.object = Some(CtxEntry::Location(NormalLocation {
            places: vec![SingleLocation::Simple(mem(0x1000)), SingleLocation::Simple(reg(7, 0))],
        }));
        d.initial_stack = vec![CtxEntry::Location(RawLocation::simple(mem(0x1000)).normalize())];
        vec![a, b, c, d]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]
        /// Arbitrary bytes never panic, in any of the contexts.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..48), which in 0usize..4) {
            let c = &contexts()[which];
            let _ = evaluate(&bytes, c);
        }

        /// Sequences of plausible operations (opcodes from the DWARF 5
        /// table with small operands) never panic.
        #[test]
        fn plausible_ops_never_panic(
            ops in proptest::collection::vec((prop::sample::select(vec![
                0x06u8, 0x08, 0x09, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
                0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2d,
                0x2f, 0x30, 0x31, 0x3f, 0x50, 0x51, 0x57, 0x70, 0x77, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95,
                0x96, 0x97, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f, 0xa0, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xe0, 0xf0,
            ]), any::<u8>(), any::<u8>()), 0..16),
            which in 0usize..4,
        ) {
            let mut bytes = Vec::new();
            for (op, a, b) in ops {
                bytes.push(op);
                match op {
                    0x08 | 0x09 | 0x15 | 0x94 | 0x95 => bytes.push(a),
                    0x28 | 0x2f => bytes.extend([a % 8, if b % 2 == 0 { 0 } else { 0xff }]),
                    0x10 | 0x11 | 0x23 | 0x70 | 0x77 | 0x90 | 0x91 | 0x93 => bytes.push(a & 0x7f),
                    0xa8 | 0xa9 => bytes.push([0x2a, 0x30, 0x31, 0x32, 0x36, 0, 0x40, 0x48, 0x50, 0x58, 0x7f][(a % 11) as usize]),
                    0x92 | 0x9d | 0xa5 => bytes.extend([a & 0x7f, b & 0x7f]),
                    0x9e => {
                        bytes.push(a % 9);
                        bytes.extend(std::iter::repeat_n(b, (a % 9) as usize));
                    }
                    0xa0 => bytes.extend([0x40, 0, 0, 0, b & 0x7f]),
                    0xa4 => {
                        let die = [0x2a, 0x30, 0x31, 0x32, 0x36, 0, 0x40, 0x48, 0x50, 0x58][(a % 10) as usize];
                        let n = [4u8, 4, 8, 16, 4, 8, 1, 10, 2, 32][(a % 10) as usize];
                        bytes.extend([die, n]);
                        bytes.extend(std::iter::repeat_n(b, n as usize));
                    }
                    0xa6 | 0xa7 => bytes.extend([[4u8, 8, 16, 2, 10, 32][(a % 6) as usize], [0x2a, 0x31, 0x32, 0x35, 0x48, 0x58][(b % 6) as usize]]),
                    _ => {}
                }
            }
            let c = &contexts()[which];
            let _ = evaluate(&bytes, c);
        }
    }
}
