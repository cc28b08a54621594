//! Arithmetic, logical, relational and conversion operations on values
//! (DWARF 5 §2.5.1.4–§2.5.1.6, which hetero-2020 keeps unchanged; project
//! decisions in `specs/rules/arithmetic.yaml`, `control-flow.yaml`, `typed.yaml`).

use super::decode::Kind;
use super::evaluation::{Evaluation, Fail, Result};
use super::machine::{mask, Scratch, Value, NONE};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::{BaseType, TypeEncoding};
use dwarfcheck_core::rules::id as R;

/// Canonical quiet NaN of binary32 (rule `op.arith.float`).
const NAN32: u32 = 0x7fc0_0000;
/// Canonical quiet NaN of binary64.
const NAN64: u64 = 0x7ff8_0000_0000_0000;

/// Whether `v` is the constant 0: no bit set, whatever its type (rule
/// `op.bra.condition-nonzero`).
pub fn is_zero(s: &Scratch, v: &Value) -> bool {
    if v.wide == NONE {
        v.lo == 0
    } else {
        s.bytes[v.wide as usize..v.wide as usize + v.ty.bytes()].iter().all(|&b| b == 0)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    /// The generic type.
    Generic,
    /// A signed integral base type.
    Signed,
    /// Any other integral base type.
    Unsigned,
    /// `DW_ATE_float`, 32 bits.
    F32,
    /// `DW_ATE_float`, 64 bits.
    F64,
    /// Any other non-integral type.
    Other,
}

fn class(t: &BaseType) -> Class {
    if t.vector_size != 1 {
        // Vector values are only moved, read and reinterpreted.
        return Class::Other;
    }
    match t.encoding {
        TypeEncoding::Generic => Class::Generic,
        TypeEncoding::Ate(e) if ate::is_integral(e) && ate::is_signed(e) => Class::Signed,
        TypeEncoding::Ate(e) if ate::is_integral(e) => Class::Unsigned,
        TypeEncoding::Ate(e) if e == ate::FLOAT && t.vector_size == 1 && t.bits == 32 => Class::F32,
        TypeEncoding::Ate(e) if e == ate::FLOAT && t.vector_size == 1 && t.bits == 64 => Class::F64,
        TypeEncoding::Ate(_) => Class::Other,
    }
}

fn is_int(c: Class) -> bool {
    matches!(c, Class::Generic | Class::Signed | Class::Unsigned)
}

/// Sign-extends the low `bits` bits of `v`.
#[inline]
pub fn sext(v: u128, bits: u32) -> i128 {
    if bits == 0 {
        return 0;
    }
    if bits >= 128 {
        return v as i128;
    }
    let sh = 128 - bits;
    ((v << sh) as i128) >> sh
}

#[inline]
fn mk(t: BaseType, v: u128) -> Value {
    Value { ty: t, lo: mask(v, t.bits), wide: NONE }
}

fn f32v(t: BaseType, x: f32) -> Value {
    mk(t, u128::from(if x.is_nan() { NAN32 } else { x.to_bits() }))
}

fn f64v(t: BaseType, x: f64) -> Value {
    mk(t, u128::from(if x.is_nan() { NAN64 } else { x.to_bits() }))
}

fn unsupported(what: &str, t: &BaseType) -> Fail {
    Fail::Unsupported(format!("{what} on values of type {t}"))
}

/// `DW_OP_abs`, `DW_OP_neg`, `DW_OP_not` (rules `op.abs.signed`,
/// `op.abs.overflow`, `op.neg.signed`, `op.neg.overflow`, `op.not.complement`).
pub fn unary(k: Kind, v: Value) -> Result<Value> {
    let t = v.ty;
    let c = class(&t);
    if k == Kind::Not && !is_int(c) {
        return Err(Fail::IllFormed(R::OP_ARITH_REQUIRES_INTEGRAL));
    }
    if t.bits > 128 {
        return Err(unsupported("arithmetic", &t));
    }
    let sign32 = 1u128 << 31;
    let sign64 = 1u128 << 63;
    Ok(match (k, c) {
        (Kind::Not, _) => mk(t, !v.lo),
        (_, Class::Other) => return Err(unsupported("arithmetic", &t)),
        (Kind::Abs, Class::F32) => mk(t, v.lo & !sign32),
        (Kind::Abs, Class::F64) => mk(t, v.lo & !sign64),
        (Kind::Neg, Class::F32) => mk(t, v.lo ^ sign32),
        (Kind::Neg, Class::F64) => mk(t, v.lo ^ sign64),
        (Kind::Abs, _) => mk(t, sext(v.lo, t.bits).wrapping_abs() as u128),
        (_, _) => mk(t, sext(v.lo, t.bits).wrapping_neg() as u128),
    })
}

/// `DW_OP_plus_uconst`: adds the operand read as a value of the popped
/// value's type (rule `op.plus-uconst.adds`).
pub fn plus_uconst(evaluation: &Evaluation<'_>, v: Value, k: u64) -> Result<Value> {
    if !is_int(class(&v.ty)) {
        return Err(Fail::IllFormed(R::OP_ARITH_REQUIRES_INTEGRAL));
    }
    if v.ty.bits > 128 {
        return Err(unsupported("arithmetic", &v.ty));
    }
    let b = mk(v.ty, u128::from(k));
    binary(evaluation, Kind::Plus, v, b)
}

fn relational(k: Kind) -> bool {
    matches!(k, Kind::Eq | Kind::Ne | Kind::Lt | Kind::Le | Kind::Gt | Kind::Ge)
}

/// Two-operand operations: `a` is the former second entry, `b` the former
/// top (DWARF 5 §2.5.1.4, §2.5.1.5).
pub fn binary(evaluation: &Evaluation<'_>, k: Kind, a: Value, b: Value) -> Result<Value> {
    let rel = relational(k);
    if a.ty != b.ty {
        return Err(Fail::IllFormed(if rel { R::OP_RELATIONAL_SAME_TYPE } else { R::OP_ARITH_SAME_TYPE }));
    }
    let t = a.ty;
    let c = class(&t);
    let integral_only = matches!(k, Kind::And | Kind::Or | Kind::Xor | Kind::Shl | Kind::Shr | Kind::Shra | Kind::Mod);
    if integral_only && !is_int(c) {
        return Err(Fail::IllFormed(R::OP_ARITH_REQUIRES_INTEGRAL));
    }
    if t.bits > 128 {
        return Err(unsupported(if rel { "comparison" } else { "arithmetic" }, &t));
    }
    let truth = |x: bool| evaluation.generic(u128::from(x));
    match c {
        Class::F32 => {
            let (x, y) = (f32::from_bits(a.lo as u32), f32::from_bits(b.lo as u32));
            Ok(match k {
                Kind::Plus => f32v(t, x + y),
                Kind::Minus => f32v(t, x - y),
                Kind::Mul => f32v(t, x * y),
                Kind::Div => f32v(t, x / y),
                _ => truth(fcmp(k, f64::from(x), f64::from(y))),
            })
        }
        Class::F64 => {
            let (x, y) = (f64::from_bits(a.lo as u64), f64::from_bits(b.lo as u64));
            Ok(match k {
                Kind::Plus => f64v(t, x + y),
                Kind::Minus => f64v(t, x - y),
                Kind::Mul => f64v(t, x * y),
                Kind::Div => f64v(t, x / y),
                _ => truth(fcmp(k, x, y)),
            })
        }
        Class::Other => Err(unsupported(if rel { "comparison" } else { "arithmetic" }, &t)),
        _ => {
            let bits = t.bits;
            let (x, y) = (a.lo, b.lo);
            let (sx, sy) = (sext(x, bits), sext(y, bits));
            let r = match k {
                Kind::Plus => x.wrapping_add(y),
                Kind::Minus => x.wrapping_sub(y),
                Kind::Mul => x.wrapping_mul(y),
                Kind::And => x & y,
                Kind::Or => x | y,
                Kind::Xor => x ^ y,
                Kind::Div => {
                    if y == 0 {
                        return Err(Fail::EvalError(R::OP_DIV_BY_ZERO));
                    }
                    // Generic: signed (op.div.signed-generic); typed: by signedness.
                    if c == Class::Unsigned {
                        x / y
                    } else {
                        sx.wrapping_div(sy) as u128
                    }
                }
                Kind::Mod => {
                    if y == 0 {
                        return Err(Fail::EvalError(R::OP_MOD_BY_ZERO));
                    }
                    // Generic: unsigned (op.mod.signedness).
                    if c == Class::Signed {
                        sx.wrapping_rem(sy) as u128
                    } else {
                        x % y
                    }
                }
                Kind::Shl | Kind::Shr | Kind::Shra => {
                    // The count is read as unsigned (op.shift.count-too-large).
                    if y >= u128::from(bits) {
                        if k == Kind::Shra && sx < 0 {
                            u128::MAX
                        } else {
                            0
                        }
                    } else {
                        let n = y as u32;
                        match k {
                            Kind::Shl => x << n,
                            Kind::Shr => x >> n,
                            _ => (sx >> n) as u128,
                        }
                    }
                }
                Kind::Eq => return Ok(truth(x == y)),
                Kind::Ne => return Ok(truth(x != y)),
                _ => {
                    // Generic compares signed (op.relational.generic-signed);
                    // typed by signedness (op.relational.typed-signedness).
                    let ord = if c == Class::Unsigned { x.cmp(&y) } else { sx.cmp(&sy) };
                    let r = match k {
                        Kind::Lt => ord.is_lt(),
                        Kind::Le => ord.is_le(),
                        Kind::Gt => ord.is_gt(),
                        _ => ord.is_ge(),
                    };
                    return Ok(truth(r));
                }
            };
            Ok(mk(t, r))
        }
    }
}

/// IEEE 754 comparison (rule `op.relational.float`).
fn fcmp(k: Kind, x: f64, y: f64) -> bool {
    match k {
        Kind::Eq => x == y,
        Kind::Ne => x != y,
        Kind::Lt => x < y,
        Kind::Le => x <= y,
        Kind::Gt => x > y,
        _ => x >= y,
    }
}

/// Float to integer of `t`: truncation toward zero, saturating at `t`'s
/// range, NaN to 0 (rule `op.convert.float`).
fn float_to_int(x: f64, t: &BaseType, signed: bool) -> u128 {
    let bits = t.bits;
    if signed {
        let v = x as i128;
        let (lo, hi) = if bits >= 128 {
            (i128::MIN, i128::MAX)
        } else if bits == 0 {
            (0, 0)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        };
        v.clamp(lo, hi) as u128
    } else {
        let v = x as u128;
        let hi = if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 };
        v.min(hi)
    }
}

/// `DW_OP_convert` to type `t` (rules `op.convert.integral`, `op.convert.float`).
pub fn convert(v: Value, t: BaseType) -> Result<Value> {
    let (cf, ct) = (class(&v.ty), class(&t));
    if cf == Class::Other {
        return Err(unsupported("conversion", &v.ty));
    }
    if ct == Class::Other {
        return Err(unsupported("conversion", &t));
    }
    if v.ty.bits > 128 {
        return Err(unsupported("conversion", &v.ty));
    }
    if t.bits > 128 {
        return Err(unsupported("conversion", &t));
    }
    let signed_src = cf == Class::Signed;
    Ok(match (cf, ct) {
        (f, to) if is_int(f) && is_int(to) => {
            let x = if signed_src { sext(v.lo, v.ty.bits) as u128 } else { v.lo };
            mk(t, x)
        }
        (_, Class::F32) if is_int(cf) => {
            let y = if signed_src { sext(v.lo, v.ty.bits) as f32 } else { v.lo as f32 };
            f32v(t, y)
        }
        (_, Class::F64) if is_int(cf) => {
            let y = if signed_src { sext(v.lo, v.ty.bits) as f64 } else { v.lo as f64 };
            f64v(t, y)
        }
        // Same floating encoding: the bits stay (op.convert.float).
        (Class::F32, Class::F32) | (Class::F64, Class::F64) => mk(t, v.lo),
        (Class::F32 | Class::F64, to) => {
            let x = if cf == Class::F32 { f64::from(f32::from_bits(v.lo as u32)) } else { f64::from_bits(v.lo as u64) };
            match to {
                Class::F32 => f32v(t, x as f32),
                Class::F64 => f64v(t, x),
                _ => mk(t, float_to_int(x, &t, to == Class::Signed)),
            }
        }
        _ => return Err(unsupported("conversion", &t)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sext_widths() {
        assert_eq!(sext(0xff, 8), -1);
        assert_eq!(sext(0x7f, 8), 127);
        assert_eq!(sext(0x8000_0000, 32), -(1i128 << 31));
        assert_eq!(sext(u128::MAX, 128), -1);
    }

    #[test]
    fn float_to_int_saturates() {
        let s8 = BaseType::ate(ate::SIGNED, 8, false);
        let u8t = BaseType::ate(ate::UNSIGNED, 8, false);
        assert_eq!(float_to_int(1000.0, &s8, true), 127);
        assert_eq!(float_to_int(-1000.0, &s8, true) as u8, 0x80);
        assert_eq!(float_to_int(-3.9, &s8, true) as i8, -3);
        assert_eq!(float_to_int(-1.0, &u8t, false), 0);
        assert_eq!(float_to_int(300.5, &u8t, false), 255);
        assert_eq!(float_to_int(f64::NAN, &u8t, false), 0);
    }
}
