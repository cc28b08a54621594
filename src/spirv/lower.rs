//! Lowering of a SPIR-V `DebugExpression` to DWARF operations whose
//! evaluation, with the same initial stack, gives the same outcome as
//! interpreting the SPIR-V operations directly (issue 16, item 3; rules of
//! specs/rules/spirv-expressions.yaml).
//!
//! Operation by operation (hetero-2020 vendor profile):
//!
//! | SPIR-V | DWARF |
//! |---|---|
//! | `Deref` | `DW_OP_deref` |
//! | `Plus` / `Minus` | `DW_OP_plus` / `DW_OP_minus` |
//! | `PlusUconst N` | `DW_OP_plus_uconst N` |
//! | `BitPiece O S` | `DW_OP_bit_piece S O` (operands swapped) |
//! | `Swap` | `DW_OP_swap` |
//! | `Xderef` | `DW_OP_xderef` |
//! | `StackValue` | `DW_OP_stack_value` |
//! | `Constu N` | `DW_OP_constu N` |
//! | `Fragment O S` | see below |
//! | (a `DebugValue` with no operations) | `DW_OP_stack_value` |
//!
//! `Fragment O S` of a variable of V bits becomes a composite of V bits
//! with the popped location L at bits `[O, O + S)`:
//! `DW_OP_LLVM_undefined DW_OP_bit_piece O 0` (an undefined part; left out
//! when O is 0), `DW_OP_pick 1` (a copy of L, which the incomplete
//! composite now sits above; left out when O is 0), `DW_OP_bit_piece S 0`,
//! `DW_OP_LLVM_undefined DW_OP_bit_piece (V - O - S) 0` (left out when
//! empty), `DW_OP_LLVM_piece_end`. hetero-2020 keeps the incomplete
//! composite on the stack between pieces (`op.piece.pops-part-creates`),
//! which is what lets the undefined part come first.
//!
//! The lowering assumes the initial entry is a value (every `spirv:` case
//! and module context gives one): an empty `DebugValue` turns it into an
//! implicit location, as `spirv.value.empty-expression` does.

use dwarfcheck_core::encoding::leb128::write_uleb;
use dwarfcheck_core::encoding::op::{encoding_of, Op};
use dwarfcheck_core::encoding::spirv::{code, operand_count, Applies, SpirvExpression};
use dwarfcheck_core::encoding::VendorProfile;

/// Why an expression has no lowering.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unlowerable {
    /// The expression fails before it runs, where no DWARF operation
    /// sequence says the same: it is ill-formed (an unknown code, a wrong
    /// operand count, a Fragment that is not last, comes with a BitPiece
    /// or lies outside the variable), or its Fragment has no variable size
    /// to place it in (`spirv.context.variable-size`, an evaluation error).
    #[error("operation {at} is ill-formed before evaluation ({rule})")]
    IllFormed {
        /// Rule ID of specs/rules/spirv-expressions.yaml.
        rule: &'static str,
        /// Index of the operation in the expression.
        at: usize,
    },
}

/// The opcode byte of `op` under the hetero-2020 vendor profile, from the
/// core crate's operation table (`encoding::op`): every operation the
/// lowering writes has a one-byte encoding there.
fn opcode(op: Op) -> u8 {
    match encoding_of(&VendorProfile::hetero_2020(), op) {
        Some((byte, None, _)) => byte,
        _ => unreachable!("{op:?} has a one-byte hetero-2020 encoding"),
    }
}

/// The DWARF operation bytes (hetero-2020 vendor profile) for `e`, to be
/// evaluated with the same initial stack and a location result.
///
/// # Errors
/// [`Unlowerable::IllFormed`] for an expression ill-formed before it runs
/// in a way DWARF cannot repeat (see the variant). Misplaced `StackValue`s
/// and stack underflows are lowered as they are: the DWARF evaluation
/// reports its own rule for them.
pub fn lower(e: &SpirvExpression) -> Result<Vec<u8>, Unlowerable> {
    let ill = |rule, at| Err(Unlowerable::IllFormed { rule, at });
    let ops = &e.operations;
    for (i, op) in ops.iter().enumerate() {
        match operand_count(op.code) {
            None => return ill("spirv.op.unknown-code", i),
            Some(n) if n != op.operands.len() => return ill("spirv.op.operand-count", i),
            Some(_) => {}
        }
    }
    let has_bit_piece = ops.iter().any(|o| o.code == code::BIT_PIECE);
    let mut out = Vec::new();
    if e.applies == Applies::Value && ops.is_empty() {
        out.push(opcode(Op::StackValue));
        return Ok(out);
    }
    for (i, op) in ops.iter().enumerate() {
        let w = |k: usize| u64::from(op.operands[k]);
        match op.code {
            code::DEREF => out.push(opcode(Op::Deref)),
            code::PLUS => out.push(opcode(Op::Plus)),
            code::MINUS => out.push(opcode(Op::Minus)),
            code::PLUS_UCONST => {
                out.push(opcode(Op::PlusUconst));
                write_uleb(&mut out, w(0));
            }
            code::BIT_PIECE => bit_piece(&mut out, w(1), w(0)),
            code::SWAP => out.push(opcode(Op::Swap)),
            code::XDEREF => out.push(opcode(Op::Xderef)),
            code::STACK_VALUE => out.push(opcode(Op::StackValue)),
            code::CONSTU => {
                out.push(opcode(Op::Constu));
                write_uleb(&mut out, w(0));
            }
            code::FRAGMENT => {
                if i + 1 != ops.len() {
                    return ill("spirv.fragment.last", i);
                }
                if has_bit_piece {
                    return ill("spirv.fragment.with-bit-piece", i);
                }
                let (o, s) = (w(0), w(1));
                if s == 0 {
                    return ill("spirv.fragment.within-variable", i);
                }
                let Some(v) = e.variable_bits else { return ill("spirv.context.variable-size", i) };
                if o.checked_add(s).is_none_or(|end| end > v) {
                    return ill("spirv.fragment.within-variable", i);
                }
                fragment(&mut out, o, s, v - o - s);
            }
            _ => return ill("spirv.op.unknown-code", i),
        }
    }
    Ok(out)
}

/// `DW_OP_bit_piece size offset` (both ULEB128, in bits).
fn bit_piece(out: &mut Vec<u8>, size: u64, offset: u64) {
    out.push(opcode(Op::BitPiece));
    write_uleb(out, size);
    write_uleb(out, offset);
}

/// The composite of a `Fragment`: `before` undefined bits, `size` bits of
/// the location on top, `after` undefined bits (module documentation).
pub fn fragment(out: &mut Vec<u8>, before: u64, size: u64, after: u64) {
    if before > 0 {
        out.push(opcode(Op::LlvmUndefined));
        bit_piece(out, before, 0);
        out.extend([opcode(Op::Pick), 1]);
    }
    bit_piece(out, size, 0);
    if after > 0 {
        out.push(opcode(Op::LlvmUndefined));
        bit_piece(out, after, 0);
    }
    out.push(opcode(Op::LlvmPieceEnd));
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::encoding::spirv::DebugOperation;

    fn e(applies: Applies, ops: &[(u32, &[u32])], bits: Option<u64>) -> SpirvExpression {
        SpirvExpression {
            applies,
            operations: ops.iter().map(|(c, o)| DebugOperation { code: *c, operands: o.to_vec() }).collect(),
            variable_bits: bits,
        }
    }

    #[test]
    fn o0_declare_shape() {
        // Constu 0, Swap, Xderef: 10 00 16 18, written out by hand.
        let x = e(Applies::Declare, &[(code::CONSTU, &[0]), (code::SWAP, &[]), (code::XDEREF, &[])], None);
        assert_eq!(lower(&x).unwrap(), [0x10, 0x00, 0x16, 0x18]);
    }

    #[test]
    fn o2_value_shape_with_fragment() {
        // PlusUconst 1, Constu 0, Swap, Xderef, StackValue, Fragment 32 32
        // of a 64-bit variable: 23 01 10 00 16 18 9f, then the undefined
        // low half (e7 9d 20 00), a copy of the implicit location (15 01),
        // its 32 bits (9d 20 00), no tail, piece_end (ea).
        let x = e(
            Applies::Value,
            &[
                (code::PLUS_UCONST, &[1]),
                (code::CONSTU, &[0]),
                (code::SWAP, &[]),
                (code::XDEREF, &[]),
                (code::STACK_VALUE, &[]),
                (code::FRAGMENT, &[32, 32]),
            ],
            Some(64),
        );
        assert_eq!(
            lower(&x).unwrap(),
            [0x23, 0x01, 0x10, 0x00, 0x16, 0x18, 0x9f, 0xe7, 0x9d, 0x20, 0x00, 0x15, 0x01, 0x9d, 0x20, 0x00, 0xea]
        );
    }

    #[test]
    fn fragment_at_zero_has_only_a_tail() {
        let x = e(Applies::Value, &[(code::STACK_VALUE, &[]), (code::FRAGMENT, &[0, 16])], Some(48));
        assert_eq!(lower(&x).unwrap(), [0x9f, 0x9d, 0x10, 0x00, 0xe7, 0x9d, 0x20, 0x00, 0xea]);
    }

    #[test]
    fn bit_piece_operands_are_swapped() {
        // BitPiece offset 8, size 16 -> DW_OP_bit_piece 16 8.
        let x = e(Applies::Declare, &[(code::BIT_PIECE, &[8, 16])], None);
        assert_eq!(lower(&x).unwrap(), [0x9d, 0x10, 0x08]);
    }

    #[test]
    fn empty_value_is_the_value() {
        assert_eq!(lower(&e(Applies::Value, &[], None)).unwrap(), [0x9f]);
        assert_eq!(lower(&e(Applies::Declare, &[], None)).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn ill_formed_before_running() {
        let bad = |ops: &[(u32, &[u32])], bits| lower(&e(Applies::Value, ops, bits)).unwrap_err();
        let r = |rule, at| Unlowerable::IllFormed { rule, at };
        assert_eq!(bad(&[(34, &[])], None), r("spirv.op.unknown-code", 0));
        assert_eq!(bad(&[(code::PLUS, &[]), (code::DEREF, &[7])], None), r("spirv.op.operand-count", 1));
        assert_eq!(bad(&[(code::FRAGMENT, &[0, 8]), (code::DEREF, &[])], Some(8)), r("spirv.fragment.last", 0));
        assert_eq!(
            bad(&[(code::BIT_PIECE, &[0, 8]), (code::FRAGMENT, &[0, 8])], Some(8)),
            r("spirv.fragment.with-bit-piece", 1)
        );
        assert_eq!(bad(&[(code::FRAGMENT, &[8, 8])], Some(8)), r("spirv.fragment.within-variable", 0));
        assert_eq!(bad(&[(code::FRAGMENT, &[0, 0])], Some(8)), r("spirv.fragment.within-variable", 0));
        assert_eq!(bad(&[(code::FRAGMENT, &[0, 8])], None), r("spirv.context.variable-size", 0));
        // A misplaced StackValue is lowered; DWARF reports its own rule.
        assert!(lower(&e(Applies::Value, &[(code::STACK_VALUE, &[]), (code::DEREF, &[])], None)).is_ok());
    }
}
