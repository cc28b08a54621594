//! Where an operation's answer rests on a choice the spec leaves open: given
//! the operands (and result) of one executed operation, the `unspecified`
//! rules (docs/ambiguities.md) whose decision actually mattered.
//!
//! A rule is named only when the operands make the choice visible: a NaN
//! produced or compared, a sign bit set where signedness is open, a shift
//! count at or past the width, an overflow of a typed integer. The runner
//! then records a third party's different answer instead of failing it
//! (docs/architecture.md §8).

use super::arith::{class, f32_of, f64_of, mask, sext, Class};
use dwarfcheck_core::encoding::Op;
use dwarfcheck_core::outcome::{BaseType, Value};
use dwarfcheck_core::rules::{id, RuleId};

/// Whether `v` is a float value that is NaN.
fn is_nan(v: &Value) -> bool {
    match class(&v.ty) {
        Class::F32 => f32_of(v).is_nan(),
        Class::F64 => f64_of(v).is_nan(),
        _ => false,
    }
}

fn int(v: &Value) -> Option<(u32, u128, bool, bool)> {
    match class(&v.ty) {
        Class::Int { bits, signed, generic } if (1..=128).contains(&bits) => {
            Some((bits, v.to_u128() & mask(bits), signed, generic))
        }
        _ => None,
    }
}

fn sign_bit(x: u128, w: u32) -> bool {
    (x >> (w - 1)) & 1 == 1
}

/// Rules a binary arithmetic or logical operation `a op b = r` relied on.
pub(super) fn binary(op: Op, a: &Value, b: &Value, r: &Value) -> Option<RuleId> {
    if matches!(class(&a.ty), Class::F32 | Class::F64) {
        return is_nan(r).then_some(id::OP_ARITH_FLOAT);
    }
    let (w, x, signed, generic) = int(a)?;
    let y = b.to_u128() & mask(w);
    let signed_view = signed || generic;
    match op {
        Op::Div => {
            if signed_view && sext(x, w) == sext(1u128 << (w - 1), w) && y == mask(w) {
                Some(id::OP_DIV_OVERFLOW)
            } else if !generic && signed && (sign_bit(x, w) || sign_bit(y, w)) {
                Some(id::OP_DIV_TYPED_SIGNEDNESS)
            } else {
                None
            }
        }
        Op::Mod => (sign_bit(x, w) || sign_bit(y, w)).then_some(id::OP_MOD_SIGNEDNESS),
        Op::Shl | Op::Shr | Op::Shra => (y >= u128::from(w)).then_some(id::OP_SHIFT_COUNT_TOO_LARGE),
        Op::Plus | Op::Minus | Op::Mul if !generic => {
            let overflow = if signed {
                let (p, q) = (sext(x, w), sext(y, w));
                let exact = match op {
                    Op::Plus => p.checked_add(q),
                    Op::Minus => p.checked_sub(q),
                    _ => p.checked_mul(q),
                };
                exact.is_none_or(|e| e != sext(r.to_u128() & mask(w), w))
            } else {
                let exact = match op {
                    Op::Plus => x.checked_add(y),
                    Op::Minus => x.checked_sub(y),
                    _ => x.checked_mul(y),
                };
                exact.is_none_or(|e| e != r.to_u128() & mask(w))
            };
            overflow.then_some(id::OP_ARITH_TYPED_WRAPS)
        }
        _ => None,
    }
}

/// Rules `DW_OP_abs` / `DW_OP_neg` of `v` relied on. On a float, the
/// answer is a choice when the operand is a NaN or a negative zero: clearing
/// the sign bit (IEEE 754 `abs`) and negating when "less than zero" differ
/// there.
pub(super) fn unary(op: Op, v: &Value) -> Option<RuleId> {
    let negative_zero = match class(&v.ty) {
        Class::F32 => f32_of(v) == 0.0 && f32_of(v).is_sign_negative(),
        Class::F64 => f64_of(v) == 0.0 && f64_of(v).is_sign_negative(),
        _ => false,
    };
    if matches!(class(&v.ty), Class::F32 | Class::F64) {
        return (is_nan(v) || negative_zero).then_some(id::OP_ARITH_FLOAT);
    }
    let (w, x, signed, generic) = int(v)?;
    let most_negative = x == 1u128 << (w - 1);
    match op {
        Op::Abs if !signed && !generic && sign_bit(x, w) => Some(id::OP_ABS_UNSIGNED_TYPE),
        Op::Abs if most_negative => Some(id::OP_ABS_OVERFLOW),
        Op::Neg if most_negative => Some(id::OP_NEG_OVERFLOW),
        _ => None,
    }
}

/// Rules a relational operation on `a` and `b` relied on.
pub(super) fn compare(a: &Value, b: &Value) -> Option<RuleId> {
    if matches!(class(&a.ty), Class::F32 | Class::F64) {
        return (is_nan(a) || is_nan(b)).then_some(id::OP_RELATIONAL_FLOAT);
    }
    let (w, x, _, generic) = int(a)?;
    let y = b.to_u128() & mask(w);
    (!generic && (sign_bit(x, w) || sign_bit(y, w))).then_some(id::OP_RELATIONAL_TYPED_SIGNEDNESS)
}

/// Rules `DW_OP_convert` of `v` to `to`, giving `r`, relied on.
pub(super) fn convert(v: &Value, to: BaseType, r: &Value) -> Option<RuleId> {
    let from_float = matches!(class(&v.ty), Class::F32 | Class::F64);
    let to_float = matches!(class(&to), Class::F32 | Class::F64);
    if from_float || to_float {
        // Float to integer out of range or NaN saturates; NaN results are
        // canonical. Both are choices; ordinary conversions are IEEE 754.
        let lossy_to_int = from_float && !to_float && {
            let f = if class(&v.ty) == Class::F32 { f64::from(f32_of(v)) } else { f64_of(v) };
            f.is_nan() || f.is_infinite() || f.abs() >= 2f64.powi(to.bits.min(127) as i32 - 1)
        };
        return (is_nan(v) || is_nan(r) || lossy_to_int).then_some(id::OP_CONVERT_FLOAT);
    }
    let (w, x, signed, generic) = int(v)?;
    let (tw, tx, _, _) = int(r)?;
    // Did the value survive? Compare its meaning before and after.
    let before = if signed || generic { sext(x, w) } else { x as i128 };
    let after_signed = sext(tx, tw);
    let after_unsigned = tx as i128;
    (before != after_signed && before != after_unsigned).then_some(id::OP_CONVERT_INTEGRAL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::encoding::ate;

    fn f64v(f: f64) -> Value {
        Value::from_u128(BaseType::ate(ate::FLOAT, 64, false), u128::from(f.to_bits()))
    }
    fn g(v: u128) -> Value {
        Value::from_u128(BaseType::generic(64, false), v)
    }
    fn s8(v: i8) -> Value {
        Value::from_u128(BaseType::ate(ate::SIGNED, 8, false), u128::from(v as u8))
    }

    #[test]
    fn float_answers_rest_on_a_choice_only_for_nan() {
        // 1.5 * 2.0 = 3.0 exactly under IEEE 754: nothing open.
        assert_eq!(binary(Op::Mul, &f64v(1.5), &f64v(2.0), &f64v(3.0)), None);
        // 0/0 is a NaN whose bits the spec does not fix (op.arith.float).
        assert_eq!(binary(Op::Div, &f64v(0.0), &f64v(0.0), &f64v(f64::NAN)), Some(id::OP_ARITH_FLOAT));
        assert_eq!(compare(&f64v(f64::NAN), &f64v(1.0)), Some(id::OP_RELATIONAL_FLOAT));
        assert_eq!(compare(&f64v(2.0), &f64v(1.0)), None);
        // abs(-0.0): +0.0 by clearing the sign bit, -0.0 by "negate if less
        // than zero" (gimli); abs(-2.0) is 2.0 either way.
        assert_eq!(unary(Op::Abs, &f64v(-0.0)), Some(id::OP_ARITH_FLOAT));
        assert_eq!(unary(Op::Abs, &f64v(-2.0)), None);
        assert_eq!(unary(Op::Neg, &f64v(f64::NAN)), Some(id::OP_ARITH_FLOAT));
    }

    #[test]
    fn integer_choices_matter_only_for_some_operands() {
        // Shift counts below the width are fixed; 64 on a 64-bit type is not.
        assert_eq!(binary(Op::Shl, &g(1), &g(63), &g(1 << 63)), None);
        assert_eq!(binary(Op::Shl, &g(1), &g(64), &g(0)), Some(id::OP_SHIFT_COUNT_TOO_LARGE));
        // Generic mod of small positive numbers: signedness is irrelevant.
        assert_eq!(binary(Op::Mod, &g(7), &g(3), &g(1)), None);
        assert_eq!(binary(Op::Mod, &g(u64::MAX.into()), &g(3), &g(0)), Some(id::OP_MOD_SIGNEDNESS));
        // signed8: 100 + 100 overflows, 100 + 27 does not.
        assert_eq!(binary(Op::Plus, &s8(100), &s8(27), &s8(127)), None);
        assert_eq!(binary(Op::Plus, &s8(100), &s8(100), &s8(-56)), Some(id::OP_ARITH_TYPED_WRAPS));
        // Most negative signed8 divided by -1, negated, made absolute.
        assert_eq!(binary(Op::Div, &s8(-128), &s8(-1), &s8(-128)), Some(id::OP_DIV_OVERFLOW));
        assert_eq!(unary(Op::Neg, &s8(-128)), Some(id::OP_NEG_OVERFLOW));
        assert_eq!(unary(Op::Abs, &s8(-128)), Some(id::OP_ABS_OVERFLOW));
        assert_eq!(unary(Op::Abs, &s8(-5)), None);
    }
}
