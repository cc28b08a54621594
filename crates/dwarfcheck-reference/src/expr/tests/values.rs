//! Tests of results, literals, stack, arithmetic, control flow and decoding.

use super::*;
use dwarfcheck_core::outcome::Failure;

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
    assert_eq!(
        evaluate(&[0x2f, 0xfd, 0xff], &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Steps, at: Some(0) })
    );
    // A counting loop that does finish: 3, then "dup bra" back while non-zero with
    // lit1 minus: 0: lit3, 1: lit1, 2: minus, 3: dup, 4: bra -6 (to 1).
    assert_eq!(value(&[0x33, 0x31, 0x1c, 0x12, 0x28, 0xfa, 0xff]), g64(0));
}

#[test]
fn stack_budget() {
    let mut c = ctx();
    c.budgets.stack = 2;
    assert_eq!(
        evaluate(&[0x31, 0x12, 0x12], &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Stack, at: Some(2) })
    );
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

/// `copy_bits` (byte-aligned starts copy whole bytes) against the bits as
/// one little-endian integer: the `n` bits from bit `s` of the source land
/// at bit `d` of the destination, every other destination bit unchanged.
#[test]
fn copy_bits_matches_the_integer_view() {
    use crate::expr::read::copy_bits;
    let src: Vec<u8> = (0..16u32).map(|i| (i.wrapping_mul(0x9d) ^ 0x5a) as u8).collect();
    let as_int = |b: &[u8]| b.iter().rev().fold(0u128, |v, x| (v << 8) | u128::from(*x));
    for s in 0..40u64 {
        for d in 0..40u64 {
            for n in 0..=(64 - s.max(d)).min(64) {
                let mut dst = vec![0xc3u8; 16];
                let before = as_int(&dst);
                copy_bits(&src, s, &mut dst, d, n);
                let mask = if n == 0 { 0 } else { (u128::MAX >> (128 - n)) << d };
                let want = (before & !mask) | (((as_int(&src) >> s) << d) & mask);
                assert_eq!(as_int(&dst), want, "s {s} d {d} n {n}");
            }
        }
    }
}
