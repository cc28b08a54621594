//! Reads an IGC location expression structurally: which register (or
//! constant address) each piece names, at SIMD lane 0, without executing
//! the `DW_OP_INTEL_*` operations (they are `Unsupported` in both
//! evaluators, docs/ambiguities.md).
//!
//! The forms IGC writes (seen in every fixture, docs/consumers.md "IGC's
//! DWARF against the lowering"):
//! - `DW_OP_regN` / `DW_OP_regx N`, then `DW_OP_bit_piece size offset`: a
//!   scalar in bits `offset..offset+size` of register N;
//! - `DW_OP_INTEL_push_simd_lane; lit k; shr; plus_uconst R;
//!   DW_OP_INTEL_regs; push_simd_lane; lit m; and; const1u W; mul;
//!   const1u W; DW_OP_INTEL_push_bit_piece_stack` (then
//!   `DW_OP_stack_value`, or not): a SIMD vector whose lane L is in
//!   register R + (L >> k) at bit (L & m) × W, W bits wide. With
//!   `DW_OP_stack_value` those bits are the value; without it they are the
//!   variable's address (IGC's -O0 allocas). Repeated: one piece each;
//! - `DW_OP_regx N; const1u off; const1u size; push_bit_piece_stack` then
//!   arithmetic: an address computed from register bits;
//! - `DW_OP_const8u A; push_simd_lane; lit k; shl; plus; deref`: an
//!   address computed from a constant;
//! - `DW_OP_implicit_value`: a constant.
//!
//! The reading is a small stack walk over constants only (the lane is 0);
//! a register's bits are a symbolic value, never read.

use dwarfcheck_core::encoding::leb128;

/// How a piece's register is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Use {
    /// The register's bits are the value.
    Value,
    /// The register's bits (plus arithmetic) are the variable's address.
    Address,
}

/// One register piece at lane 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RegPiece {
    /// DWARF register number (IGC numbering: rN = 16 + N).
    pub regno: u64,
    /// Bit offset inside the register, at lane 0.
    pub bit_offset: u64,
    /// Bits, when the expression says.
    pub bit_size: Option<u64>,
    /// Whether the register number or bit offset depends on the SIMD lane.
    pub simd: bool,
    /// Value or address.
    pub usage: Use,
}

/// What an expression says, read structurally.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Place {
    /// One or more register pieces.
    Registers {
        /// The pieces, in expression order.
        pieces: Vec<RegPiece>,
    },
    /// An address computed from constants only (and the lane).
    ConstAddress {
        /// The constant at lane 0.
        address: u64,
    },
    /// A constant value (`DW_OP_implicit_value`, or constants then
    /// `DW_OP_stack_value`).
    Constant,
    /// An empty expression (optimised out).
    Empty,
    /// An operation outside the forms above, or malformed bytes.
    Unreadable {
        /// Byte offset in the expression.
        at: usize,
        /// The opcode (or 0 for a truncated operand).
        op: u8,
    },
}

#[derive(Debug, Clone, Copy)]
enum Val {
    Num(u64, bool),
    Bits(RegPiece),
}

/// Reads `expr` (bounded by its length: one step per operation).
pub fn read(expr: &[u8]) -> Place {
    if expr.is_empty() {
        return Place::Empty;
    }
    let mut st: Vec<Val> = Vec::new();
    let mut loc: Option<(u64, bool)> = None; // register named by regN/regx/INTEL_regs
    let mut pieces: Vec<RegPiece> = Vec::new();
    let mut pending_value = false; // a DW_OP_stack_value was seen
    let mut constant = false;
    let mut i = 0usize;
    let bad = |at: usize, op: u8| Place::Unreadable { at, op };
    macro_rules! uleb {
        () => {{
            match leb128::read_uleb(&expr[i..]) {
                Ok((v, n)) => {
                    i += n;
                    v
                }
                Err(_) => return bad(i, 0),
            }
        }};
    }
    macro_rules! fixed {
        ($n:expr) => {{
            let Some(b) = expr.get(i..i + $n) else { return bad(i, 0) };
            i += $n;
            let mut w = [0u8; 8];
            w[..$n].copy_from_slice(b);
            u64::from_le_bytes(w)
        }};
    }
    macro_rules! num {
        () => {
            match st.pop() {
                Some(Val::Num(v, s)) => (v, s),
                _ => return bad(i - 1, expr[i - 1]),
            }
        };
    }
    while i < expr.len() {
        let op = expr[i];
        i += 1;
        match op {
            0x30..=0x4f => st.push(Val::Num(u64::from(op - 0x30), false)),
            0x08 => st.push(Val::Num(fixed!(1), false)),
            0x0a => st.push(Val::Num(fixed!(2), false)),
            0x0c => st.push(Val::Num(fixed!(4), false)),
            0x0e => st.push(Val::Num(fixed!(8), false)),
            0x10 => st.push(Val::Num(uleb!(), false)),
            0xed => st.push(Val::Num(0, true)),
            0x23 => {
                let k = uleb!();
                match st.pop() {
                    Some(Val::Num(v, s)) => st.push(Val::Num(v.wrapping_add(k), s)),
                    Some(b @ Val::Bits(_)) => st.push(b),
                    None => return bad(i - 1, op),
                }
            }
            0x1a | 0x1e | 0x22 | 0x24 | 0x25 | 0x1c => {
                let (b, bs) = num!();
                let a = st.pop();
                let r = match a {
                    Some(Val::Num(a, s)) => Val::Num(
                        match op {
                            0x1a => a & b,
                            0x1e => a.wrapping_mul(b),
                            0x22 => a.wrapping_add(b),
                            0x24 => a.checked_shl(b as u32).unwrap_or(0),
                            0x25 => a.checked_shr(b as u32).unwrap_or(0),
                            _ => a.wrapping_sub(b),
                        },
                        s || bs,
                    ),
                    // Arithmetic on register bits: still an address from them.
                    Some(bits @ Val::Bits(_)) => bits,
                    None => return bad(i - 1, op),
                };
                st.push(r);
            }
            0x50..=0x6f => loc = Some((u64::from(op - 0x50), false)),
            0x90 => loc = Some((uleb!(), false)),
            0xeb => {
                let (n, s) = num!();
                loc = Some((n, s));
            }
            0xec => {
                let (size, s1) = num!();
                let (off, s2) = num!();
                let Some((regno, s0)) = loc.take() else { return bad(i - 1, op) };
                st.push(Val::Bits(RegPiece {
                    regno,
                    bit_offset: off,
                    bit_size: Some(size),
                    simd: s0 || s1 || s2,
                    usage: Use::Address,
                }));
            }
            0x9d => {
                let size = uleb!();
                let off = uleb!();
                match loc.take() {
                    Some((regno, simd)) => {
                        pieces.push(RegPiece { regno, bit_offset: off, bit_size: Some(size), simd, usage: Use::Value })
                    }
                    None => return bad(i - 1, op),
                }
            }
            0x93 => {
                let size = uleb!();
                if let Some((regno, simd)) = loc.take() {
                    pieces.push(RegPiece { regno, bit_offset: 0, bit_size: Some(size * 8), simd, usage: Use::Value });
                }
            }
            0x9f => pending_value = true,
            0x9e => {
                let n = uleb!();
                match usize::try_from(n).ok().and_then(|n| i.checked_add(n)).filter(|&e| e <= expr.len()) {
                    Some(e) => i = e,
                    None => return bad(i, 0),
                }
                constant = true;
            }
            0x06 => {
                // A load: what is on the stack is an address either way.
            }
            _ => return bad(i - 1, op),
        }
    }
    if constant {
        return Place::Constant;
    }
    if let Some((regno, simd)) = loc {
        pieces.push(RegPiece { regno, bit_offset: 0, bit_size: None, simd, usage: Use::Value });
    }
    for v in st.iter() {
        if let Val::Bits(mut p) = *v {
            if pending_value {
                p.usage = Use::Value;
            }
            pieces.push(p);
        }
    }
    if !pieces.is_empty() {
        return Place::Registers { pieces };
    }
    match st.last() {
        Some(Val::Num(_, _)) if pending_value => Place::Constant,
        Some(Val::Num(a, _)) => Place::ConstAddress { address: *a },
        _ => bad(expr.len(), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simd_value_in_r7() {
        // lanes-tgllp-O2's `gid`: lane L in r(7 + L/8) bits (L%8)*32..+32.
        let e = [0xed, 0x33, 0x25, 0x23, 0x17, 0xeb, 0xed, 0x37, 0x1a, 0x08, 0x20, 0x1e, 0x08, 0x20, 0xec, 0x9f];
        let Place::Registers { pieces } = read(&e) else { panic!("{:?}", read(&e)) };
        assert_eq!(pieces.len(), 1);
        assert_eq!((pieces[0].regno, pieces[0].bit_offset, pieces[0].bit_size), (23, 0, Some(32)));
        assert!(pieces[0].simd);
        assert_eq!(pieces[0].usage, Use::Value);
    }

    #[test]
    fn scalar_bit_piece_and_address_forms() {
        let Place::Registers { pieces } = read(&[0x63, 0x9d, 0x20, 0x40]) else { panic!() };
        assert_eq!((pieces[0].regno, pieces[0].bit_offset, pieces[0].usage), (19, 64, Use::Value));
        // -O0: the address of the variable in r26 (42 - 16), 64-bit lanes.
        let e = [0xed, 0x32, 0x25, 0x23, 0x2a, 0xeb, 0xed, 0x33, 0x1a, 0x08, 0x40, 0x1e, 0x08, 0x40, 0xec];
        let Place::Registers { pieces } = read(&e) else { panic!() };
        assert_eq!((pieces[0].regno, pieces[0].bit_size, pieces[0].usage), (42, Some(64), Use::Address));
        assert_eq!(
            read(&[0x0e, 0, 0, 0, 0, 0, 0, 0, 9, 0xed, 0x33, 0x24, 0x22, 0x06]),
            Place::ConstAddress { address: 0x0900_0000_0000_0000 }
        );
        assert_eq!(read(&[0x9e, 8, 4, 0, 0, 0, 0, 0, 0, 0]), Place::Constant);
        assert_eq!(read(&[0xff]), Place::Unreadable { at: 0, op: 0xff });
        assert!(matches!(read(&[0x0e, 1]), Place::Unreadable { .. }));
        // An implicit_value length past the end (and past usize).
        assert!(matches!(read(&[0x9e, 0x09, 0]), Place::Unreadable { .. }));
        assert!(matches!(
            read(&[0x9e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
            Place::Unreadable { .. }
        ));
    }
}
