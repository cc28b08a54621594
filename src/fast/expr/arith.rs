//! Arithmetic, logical, relational and conversion operations on values
//! (DWARF 5 §2.5.1.4–§2.5.1.6, which hetero-2020 keeps unchanged).

use super::decode::Kind;
use super::exec::{Ev, Fail};
use super::machine::{mask, Scratch, Val, NONE};
use super::pending as R;
use crate::encoding::ate;
use crate::outcome::{BaseType, TypeEncoding};

type Res<T> = Result<T, Fail>;

/// Whether `v` is the constant 0 (all bits clear).
pub fn is_zero(s: &Scratch, v: &Val) -> bool {
    if v.wide == NONE {
        v.lo == 0
    } else {
        s.bytes[v.wide as usize..v.wide as usize + v.ty.bytes()].iter().all(|&b| b == 0)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Generic type: unsigned arithmetic modulo 2^bits; signed where specified.
    Generic,
    Signed,
    Unsigned,
    F32,
    F64,
    /// Anything else (other floats, non-integral encodings).
    Other,
}

fn class(t: &BaseType) -> Class {
    match t.encoding {
        TypeEncoding::Generic => Class::Generic,
        TypeEncoding::Ate(e) if e == ate::FLOAT && t.vector_size == 1 && t.bits == 32 => Class::F32,
        TypeEncoding::Ate(e) if e == ate::FLOAT && t.vector_size == 1 && t.bits == 64 => Class::F64,
        TypeEncoding::Ate(e) if ate::is_integral(e) && ate::is_signed(e) => Class::Signed,
        TypeEncoding::Ate(e) if ate::is_integral(e) => Class::Unsigned,
        TypeEncoding::Ate(_) => Class::Other,
    }
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

fn mk(t: BaseType, v: u128) -> Val {
    Val { ty: t, lo: mask(v, t.bits), wide: NONE }
}

fn f32_of(v: &Val) -> f32 {
    f32::from_bits(v.lo as u32)
}
fn f64_of(v: &Val) -> f64 {
    f64::from_bits(v.lo as u64)
}

/// `DW_OP_abs`, `DW_OP_neg`, `DW_OP_not`.
pub fn unary(ev: &Ev<'_>, _s: &mut Scratch, k: Kind, v: Val) -> Res<Val> {
    let _ = ev;
    let t = v.ty;
    if t.bits > 128 {
        return Err(Fail::Unsupported("arithmetic on values wider than 128 bits".into()));
    }
    let c = class(&t);
    Ok(match (k, c) {
        (Kind::Not, Class::F32 | Class::F64 | Class::Other) => return Err(Fail::Ill(R::NEED_INTEGRAL)),
        (Kind::Not, _) => mk(t, !v.lo),
        (_, Class::Other) => return Err(Fail::Ill(R::FLOAT_UNSUPPORTED)),
        (Kind::Abs, Class::F32) => mk(t, u128::from(f32_of(&v).abs().to_bits())),
        (Kind::Abs, Class::F64) => mk(t, u128::from(f64_of(&v).abs().to_bits())),
        (Kind::Neg, Class::F32) => mk(t, u128::from((-f32_of(&v)).to_bits())),
        (Kind::Neg, Class::F64) => mk(t, u128::from((-f64_of(&v)).to_bits())),
        (Kind::Abs, Class::Unsigned) => v,
        (Kind::Abs, _) => mk(t, sext(v.lo, t.bits).unsigned_abs()),
        (_, _) => mk(t, (v.lo as i128).wrapping_neg() as u128),
    })
}

/// `DW_OP_plus_uconst`: adds the operand, interpreted in the value's type.
pub fn plus_uconst(ev: &Ev<'_>, s: &mut Scratch, v: Val, k: u64) -> Res<Val> {
    let b = mk(v.ty, u128::from(k));
    binary(ev, s, Kind::Plus, v, b)
}

/// Binary operations: `a` is the former second entry, `b` the former top.
pub fn binary(ev: &Ev<'_>, _s: &mut Scratch, k: Kind, a: Val, b: Val) -> Res<Val> {
    if a.ty != b.ty {
        return Err(Fail::Ill(R::TYPE_MISMATCH));
    }
    let t = a.ty;
    if t.bits > 128 {
        return Err(Fail::Unsupported("arithmetic on values wider than 128 bits".into()));
    }
    let c = class(&t);
    let bits = t.bits;
    let integral_only = matches!(k, Kind::And | Kind::Or | Kind::Xor | Kind::Shl | Kind::Shr | Kind::Shra | Kind::Mod);
    if integral_only && matches!(c, Class::F32 | Class::F64 | Class::Other) {
        return Err(Fail::Ill(R::NEED_INTEGRAL));
    }
    let g = ev.gty;
    let truth = |x: bool| mk(g, u128::from(x));
    match c {
        Class::F32 | Class::F64 => {
            let (x, y) = if c == Class::F32 {
                (f64::from(f32_of(&a)), f64::from(f32_of(&b)))
            } else {
                (f64_of(&a), f64_of(&b))
            };
            let r = match k {
                Kind::Plus => x + y,
                Kind::Minus => x - y,
                Kind::Mul => x * y,
                Kind::Div => x / y,
                Kind::Eq => return Ok(truth(x == y)),
                Kind::Ne => return Ok(truth(x != y)),
                Kind::Lt => return Ok(truth(x < y)),
                Kind::Le => return Ok(truth(x <= y)),
                Kind::Gt => return Ok(truth(x > y)),
                Kind::Ge => return Ok(truth(x >= y)),
                _ => return Err(Fail::Ill(R::NEED_INTEGRAL)),
            };
            // Single-precision operations round once, in f32.
            let r = if c == Class::F32 {
                let (x, y) = (f32_of(&a), f32_of(&b));
                let r32 = match k {
                    Kind::Plus => x + y,
                    Kind::Minus => x - y,
                    Kind::Mul => x * y,
                    _ => x / y,
                };
                u128::from(r32.to_bits())
            } else {
                u128::from(r.to_bits())
            };
            Ok(mk(t, r))
        }
        Class::Other => Err(Fail::Ill(R::FLOAT_UNSUPPORTED)),
        _ => {
            let signed = c == Class::Signed;
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
                        return Err(Fail::Eval(R::DIV_ZERO));
                    }
                    if c == Class::Unsigned {
                        x / y
                    } else {
                        sx.wrapping_div(sy) as u128
                    }
                }
                Kind::Mod => {
                    if y == 0 {
                        return Err(Fail::Eval(R::MOD_ZERO));
                    }
                    if signed {
                        sx.wrapping_rem(sy) as u128
                    } else {
                        x % y
                    }
                }
                Kind::Shl | Kind::Shr | Kind::Shra => {
                    if y >= u128::from(bits) {
                        match k {
                            Kind::Shra if sx < 0 => u128::MAX,
                            _ => 0,
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
                Kind::Lt | Kind::Le | Kind::Gt | Kind::Ge => {
                    let ord = if c == Class::Unsigned { x.cmp(&y) } else { sx.cmp(&sy) };
                    let r = match k {
                        Kind::Lt => ord.is_lt(),
                        Kind::Le => ord.is_le(),
                        Kind::Gt => ord.is_gt(),
                        _ => ord.is_ge(),
                    };
                    return Ok(truth(r));
                }
                _ => unreachable_kind(),
            };
            Ok(mk(t, r))
        }
    }
}

fn unreachable_kind() -> u128 {
    0
}

/// `DW_OP_convert` to type `t`.
pub fn convert(ev: &Ev<'_>, s: &mut Scratch, v: Val, t: BaseType) -> Res<Val> {
    let _ = (ev, s);
    let (cf, ct) = (class(&v.ty), class(&t));
    if v.ty.bits > 128 || t.bits > 128 {
        return Err(Fail::Unsupported("conversion of values wider than 128 bits".into()));
    }
    let int_from = |c: Class| matches!(c, Class::Generic | Class::Signed | Class::Unsigned);
    Ok(match (cf, ct) {
        (f, to) if int_from(f) && int_from(to) => {
            let x = if f == Class::Signed { sext(v.lo, v.ty.bits) as u128 } else { v.lo };
            mk(t, x)
        }
        (f, Class::F32 | Class::F64) if int_from(f) => {
            let x = if f == Class::Signed { sext(v.lo, v.ty.bits) as f64 } else { v.lo as f64 };
            if ct == Class::F32 {
                let y = if f == Class::Signed { sext(v.lo, v.ty.bits) as f32 } else { v.lo as f32 };
                mk(t, u128::from(y.to_bits()))
            } else {
                mk(t, u128::from(x.to_bits()))
            }
        }
        (Class::F32 | Class::F64, to) if int_from(to) => {
            let x = if cf == Class::F32 { f64::from(f32_of(&v)) } else { f64_of(&v) };
            let r = if to == Class::Signed { (x as i128) as u128 } else { x as u128 };
            mk(t, r)
        }
        (Class::F32, Class::F64) => mk(t, u128::from(f64::from(f32_of(&v)).to_bits())),
        (Class::F64, Class::F32) => mk(t, u128::from((f64_of(&v) as f32).to_bits())),
        (Class::F32, Class::F32) | (Class::F64, Class::F64) => mk(t, v.lo),
        _ => return Err(Fail::Ill(R::CONVERT_UNSUPPORTED)),
    })
}
