//! Arithmetic, logical, relational and conversion operations on values
//! (DWARF 5 §2.5.1.4, §2.5.1.5 relational operators, §2.5.1.6; hetero-2020
//! "Arithmetic and Logical Operations", "Type Conversion Operations").
//!
//! Integral values up to 128 bits and `DW_ATE_float` values of 32 and 64
//! bits are computed; anything else is reported as unsupported by the
//! reference (never silently wrong).

use super::stop::Stop;
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::encoding::Op;
use dwarfcheck_core::outcome::{BaseType, TypeEncoding, Value};
use dwarfcheck_core::rules::id;

/// How the reference computes with a base type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// An integral type (the generic type, or an integral `DW_ATE_*`).
    /// `signed` is the type's own signedness; the generic type reports
    /// `false` and each operation decides (rules `op.div.signed-generic`,
    /// `op.relational.generic-signed`, `op.mod.signedness`).
    Int {
        /// Width in **bits**.
        bits: u32,
        /// `DW_ATE_signed` or `DW_ATE_signed_char`.
        signed: bool,
        /// The generic type.
        generic: bool,
    },
    /// IEEE 754 binary32 (`DW_ATE_float`, 32 bits).
    F32,
    /// IEEE 754 binary64 (`DW_ATE_float`, 64 bits).
    F64,
    /// Anything else: not integral, no arithmetic defined by the reference.
    Other,
}

/// Classifies a base type.
pub fn class(ty: &BaseType) -> Class {
    if ty.vector_size != 1 {
        return Class::Other;
    }
    match ty.encoding {
        TypeEncoding::Generic => Class::Int { bits: ty.bits, signed: false, generic: true },
        TypeEncoding::Ate(e) if ate::is_integral(e) => {
            Class::Int { bits: ty.bits, signed: matches!(e, ate::SIGNED | ate::SIGNED_CHAR), generic: false }
        }
        TypeEncoding::Ate(ate::FLOAT) if ty.bits == 32 => Class::F32,
        TypeEncoding::Ate(ate::FLOAT) if ty.bits == 64 => Class::F64,
        TypeEncoding::Ate(_) => Class::Other,
    }
}

fn unsupported(what: &str, ty: &BaseType) -> Stop {
    Stop::Unsupported(format!("{what} on values of type {ty}"))
}

/// Mask of the low `bits` bits (1..=128).
pub(super) fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// Sign-extends the low `bits` bits of `x`.
pub(super) fn sext(x: u128, bits: u32) -> i128 {
    if bits >= 128 || bits == 0 {
        x as i128
    } else {
        let shift = 128 - bits;
        ((x << shift) as i128) >> shift
    }
}

/// The integer view of a value: (bits, value masked to its width, own
/// signedness, generic). Errors: unsupported above 128 bits.
fn int_of(v: &Value, what: &str) -> Result<Option<(u32, u128, bool, bool)>, Stop> {
    match class(&v.ty) {
        Class::Int { bits, signed, generic } => {
            if bits > 128 || bits == 0 {
                return Err(unsupported(what, &v.ty));
            }
            Ok(Some((bits, v.to_u128() & mask(bits), signed, generic)))
        }
        _ => Ok(None),
    }
}

const NAN32: u32 = 0x7fc0_0000;
const NAN64: u64 = 0x7ff8_0000_0000_0000;

pub(super) fn f32_of(v: &Value) -> f32 {
    f32::from_bits(v.to_u128() as u32)
}
pub(super) fn f64_of(v: &Value) -> f64 {
    f64::from_bits(v.to_u128() as u64)
}
fn from_f32(ty: BaseType, f: f32) -> Value {
    let bits = if f.is_nan() { NAN32 } else { f.to_bits() };
    Value::from_u128(ty, u128::from(bits))
}
fn from_f64(ty: BaseType, f: f64) -> Value {
    let bits = if f.is_nan() { NAN64 } else { f.to_bits() };
    Value::from_u128(ty, u128::from(bits))
}

/// True for the operations that accept non-integral operands
/// (DWARF 5 §2.5.1.4: abs, div, minus, mul, neg, plus).
fn allows_non_integral(op: Op) -> bool {
    matches!(op, Op::Abs | Op::Div | Op::Minus | Op::Mul | Op::Neg | Op::Plus)
}

/// A two-operand arithmetic or logical operation: `a` is the former second
/// entry, `b` the former top entry.
///
/// Errors (in this order): `op.arith.same-type`, `op.arith.requires-integral`
/// (ill-formed); `op.div.by-zero`, `op.mod.by-zero` (evaluation errors);
/// unsupported for types the reference does not compute with.
pub fn binary(op: Op, a: &Value, b: &Value) -> Result<Value, Stop> {
    if a.ty != b.ty {
        return Err(Stop::Ill(id::OP_ARITH_SAME_TYPE));
    }
    let ty = a.ty;
    let c = class(&ty);
    if !matches!(c, Class::Int { .. }) && !allows_non_integral(op) {
        return Err(Stop::Ill(id::OP_ARITH_REQUIRES_INTEGRAL));
    }
    match c {
        Class::F32 => {
            let (x, y) = (f32_of(a), f32_of(b));
            return Ok(from_f32(
                ty,
                match op {
                    Op::Plus => x + y,
                    Op::Minus => x - y,
                    Op::Mul => x * y,
                    _ => x / y,
                },
            ));
        }
        Class::F64 => {
            let (x, y) = (f64_of(a), f64_of(b));
            return Ok(from_f64(
                ty,
                match op {
                    Op::Plus => x + y,
                    Op::Minus => x - y,
                    Op::Mul => x * y,
                    _ => x / y,
                },
            ));
        }
        Class::Other => return Err(unsupported("arithmetic", &ty)),
        Class::Int { .. } => {}
    }
    let (w, x, signed, generic) = int_of(a, "arithmetic")?.expect("integral");
    let y = b.to_u128() & mask(w);
    let m = mask(w);
    let r: u128 = match op {
        Op::Plus => x.wrapping_add(y),
        Op::Minus => x.wrapping_sub(y),
        Op::Mul => x.wrapping_mul(y),
        Op::And => x & y,
        Op::Or => x | y,
        Op::Xor => x ^ y,
        Op::Div => {
            if y == 0 {
                return Err(Stop::Eval(id::OP_DIV_BY_ZERO));
            }
            // Generic: signed division (op.div.signed-generic); base types
            // follow their signedness (op.div.typed-signedness).
            if generic || signed {
                sext(x, w).wrapping_div(sext(y, w)) as u128
            } else {
                x / y
            }
        }
        Op::Mod => {
            if y == 0 {
                return Err(Stop::Eval(id::OP_MOD_BY_ZERO));
            }
            // Generic: unsigned (op.mod.signedness); signed types: the
            // remainder has the sign of the dividend.
            if signed && !generic {
                sext(x, w).wrapping_rem(sext(y, w)) as u128
            } else {
                x % y
            }
        }
        Op::Shl => {
            if y >= u128::from(w) {
                0
            } else {
                x << y
            }
        }
        Op::Shr => {
            if y >= u128::from(w) {
                0
            } else {
                x >> y
            }
        }
        Op::Shra => {
            let s = sext(x, w);
            if y >= u128::from(w) {
                if s < 0 {
                    m
                } else {
                    0
                }
            } else {
                (s >> y) as u128
            }
        }
        _ => unreachable!("binary() called with {op:?}"),
    };
    Ok(Value::from_u128(ty, r & m))
}

/// `DW_OP_abs`, `DW_OP_neg`, `DW_OP_not` on one value.
///
/// Errors: `op.arith.requires-integral` for `DW_OP_not` on a non-integral
/// type; unsupported for types the reference does not compute with.
pub fn unary(op: Op, v: &Value) -> Result<Value, Stop> {
    let ty = v.ty;
    match class(&ty) {
        Class::F32 | Class::F64 if op != Op::Not => {
            let sign = 1u128 << (ty.bits - 1);
            let x = v.to_u128();
            let r = if op == Op::Abs { x & !sign } else { x ^ sign };
            Ok(Value::from_u128(ty, r))
        }
        Class::Int { .. } => {
            let (w, x, _, _) = int_of(v, "arithmetic")?.expect("integral");
            let m = mask(w);
            let r = match op {
                // Both read the value as signed; the most negative number
                // stays as it is (op.abs.overflow, op.neg.overflow).
                Op::Abs => sext(x, w).wrapping_abs() as u128,
                Op::Neg => x.wrapping_neg(),
                _ => !x,
            };
            Ok(Value::from_u128(ty, r & m))
        }
        _ if op == Op::Not => Err(Stop::Ill(id::OP_ARITH_REQUIRES_INTEGRAL)),
        _ => Err(unsupported("arithmetic", &ty)),
    }
}

/// `DW_OP_plus_uconst k`: adds `k`, read as a value of `v`'s type.
///
/// Errors: `op.arith.requires-integral`; unsupported above 128 bits.
pub fn plus_uconst(v: &Value, k: u64) -> Result<Value, Stop> {
    match int_of(v, "arithmetic")? {
        Some((w, x, _, _)) => Ok(Value::from_u128(v.ty, x.wrapping_add(u128::from(k)) & mask(w))),
        None => Err(Stop::Ill(id::OP_ARITH_REQUIRES_INTEGRAL)),
    }
}

/// A relational operation `a OP b` (`a` the former second entry); the
/// result is 1 or 0 with type `generic`.
///
/// Errors: `op.relational.same-type` (ill-formed); unsupported for types
/// the reference does not compare.
pub fn compare(op: Op, a: &Value, b: &Value, generic: BaseType) -> Result<Value, Stop> {
    use std::cmp::Ordering;
    if a.ty != b.ty {
        return Err(Stop::Ill(id::OP_RELATIONAL_SAME_TYPE));
    }
    let ord: Option<Ordering> = match class(&a.ty) {
        Class::Int { .. } => {
            let (w, x, signed, is_generic) = int_of(a, "comparison")?.expect("integral");
            let y = b.to_u128() & mask(w);
            if signed || is_generic {
                Some(sext(x, w).cmp(&sext(y, w)))
            } else {
                Some(x.cmp(&y))
            }
        }
        Class::F32 => f32_of(a).partial_cmp(&f32_of(b)),
        Class::F64 => f64_of(a).partial_cmp(&f64_of(b)),
        Class::Other => return Err(unsupported("comparison", &a.ty)),
    };
    let t = match (op, ord) {
        (Op::Ne, None) => true,
        (_, None) => false,
        (Op::Eq, Some(o)) => o == Ordering::Equal,
        (Op::Ne, Some(o)) => o != Ordering::Equal,
        (Op::Lt, Some(o)) => o == Ordering::Less,
        (Op::Le, Some(o)) => o != Ordering::Greater,
        (Op::Gt, Some(o)) => o == Ordering::Greater,
        (Op::Ge, Some(o)) => o != Ordering::Less,
        _ => unreachable!("compare() called with {op:?}"),
    };
    Ok(Value::from_u128(generic, u128::from(t)))
}

/// `DW_OP_convert`: `v` converted to type `to` (rules `op.convert.*`).
///
/// Errors: unsupported for types outside integral ≤ 128 bits and
/// binary32/binary64.
pub fn convert(v: &Value, to: BaseType) -> Result<Value, Stop> {
    let from_c = class(&v.ty);
    let to_c = class(&to);
    if let Class::Int { bits, .. } = to_c {
        if bits > 128 || bits == 0 {
            return Err(unsupported("conversion", &to));
        }
    }
    match (from_c, to_c) {
        (Class::Int { .. }, Class::Int { bits: tw, .. }) => {
            let (w, x, signed, generic) = int_of(v, "conversion")?.expect("integral");
            let wide = if signed && !generic { sext(x, w) as u128 } else { x };
            Ok(Value::from_u128(to, wide & mask(tw)))
        }
        (Class::Int { .. }, Class::F32 | Class::F64) => {
            let (w, x, signed, generic) = int_of(v, "conversion")?.expect("integral");
            let f = if signed && !generic { sext(x, w) as f64 } else { x as f64 };
            Ok(if to_c == Class::F32 {
                // Round once, directly from the integer.
                from_f32(to, if signed && !generic { sext(x, w) as f32 } else { x as f32 })
            } else {
                from_f64(to, f)
            })
        }
        (Class::F32 | Class::F64, Class::Int { bits: tw, signed, generic }) => {
            let f = if from_c == Class::F32 { f64::from(f32_of(v)) } else { f64_of(v) };
            let r: u128 = if f.is_nan() {
                0
            } else if signed && !generic {
                let max = 2f64.powi(tw as i32 - 1);
                if f >= max {
                    mask(tw) >> 1
                } else if f < -max {
                    !(mask(tw) >> 1)
                } else {
                    f.trunc() as i128 as u128
                }
            } else {
                let max = 2f64.powi(tw as i32);
                if f <= -1.0 || f < 0.0 {
                    0
                } else if f >= max {
                    mask(tw)
                } else {
                    f.trunc() as u128
                }
            };
            Ok(Value::from_u128(to, r & mask(tw)))
        }
        (Class::F32, Class::F32) | (Class::F64, Class::F64) => Ok(Value { ty: to, bytes: v.bytes.clone() }),
        (Class::F32, Class::F64) => Ok(from_f64(to, f64::from(f32_of(v)))),
        (Class::F64, Class::F32) => Ok(from_f32(to, f64_of(v) as f32)),
        (Class::Other, _) => Err(unsupported("conversion", &v.ty)),
        (_, Class::Other) => Err(unsupported("conversion", &to)),
    }
}
