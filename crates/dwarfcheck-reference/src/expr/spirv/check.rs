//! The static checks of a SPIR-V `DebugExpression` (rules
//! `spirv.op.unknown-code`, `spirv.op.operand-count`,
//! `spirv.stack-value.placement`, `spirv.fragment.*`,
//! `spirv.context.variable-size`), made before anything runs, and the
//! checked operations they give.

use crate::expr::decode::{Arg, Insn};
use crate::expr::stop::Stop;
use dwarfcheck_core::encoding::op::encoding_of;
use dwarfcheck_core::encoding::spirv::{code, operand_count, DebugOperation, SpirvExpression};
use dwarfcheck_core::encoding::{Op, VendorProfile};
use dwarfcheck_core::rules::id;

/// One operation that passed the static checks.
pub(super) enum Checked {
    /// An operation that is the DWARF operation `insn` names (its `at` is
    /// the operation's index in the list, not a byte offset), which needs
    /// `pops` stack entries (`spirv.stack.underflow`).
    Dwarf {
        /// The DWARF operation with its operands in DWARF order.
        insn: Insn,
        /// The stack entries it needs before it runs.
        pops: usize,
    },
    /// `Fragment offset size` (bits) of a variable of `variable_bits` bits,
    /// bounds already checked (`spirv.op.fragment.part`).
    Fragment {
        /// First bit of the variable the location holds.
        offset: u64,
        /// Number of bits the location holds (not 0).
        size: u64,
        /// The variable's size in bits (at least `offset + size`).
        variable_bits: u64,
    },
}

/// The operations of `expr`, checked in list order, each against, in
/// order: its code, its operand count, StackValue placement, Fragment
/// placement, Fragment with a BitPiece in the expression, the Fragment's
/// bounds (order of the catalogue's header; within the bounds, a size of 0
/// before the variable's size is needed). Errors: the first failing
/// check and the index of its operation.
pub(super) fn checked(expr: &SpirvExpression) -> Result<Vec<Checked>, (Stop, usize)> {
    let ops = &expr.operations;
    let any_bit_piece = ops.iter().any(|o| o.code == code::BIT_PIECE);
    let mut out = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let next = ops.get(i + 1).map(|o| o.code);
        out.push(check_one(i, op, next, any_bit_piece, expr.variable_bits).map_err(|s| (s, i))?);
    }
    Ok(out)
}

/// The checks of operation `i`, `op`, followed by an operation of code
/// `next` (none: the last).
fn check_one(
    i: usize,
    op: &DebugOperation,
    next: Option<u32>,
    any_bit_piece: bool,
    variable_bits: Option<u64>,
) -> Result<Checked, Stop> {
    // spirv.op.unknown-code, spirv.op.operand-count
    let count = operand_count(op.code).ok_or(Stop::Ill(id::SPIRV_OP_UNKNOWN_CODE))?;
    if op.operands.len() != count {
        return Err(Stop::Ill(id::SPIRV_OP_OPERAND_COUNT));
    }
    // spirv.stack-value.placement: last, or right before a piece.
    if op.code == code::STACK_VALUE && !matches!(next, None | Some(code::BIT_PIECE | code::FRAGMENT)) {
        return Err(Stop::Ill(id::SPIRV_STACK_VALUE_PLACEMENT));
    }
    let w = |k: usize| op.operands.get(k).map_or(0, |v| u64::from(*v));
    let (dwarf, args, pops) = match op.code {
        code::DEREF => (Op::Deref, vec![], 1),
        code::PLUS => (Op::Plus, vec![], 2),
        code::MINUS => (Op::Minus, vec![], 2),
        code::PLUS_UCONST => (Op::PlusUconst, vec![Arg::U(w(0))], 1),
        // spirv.op.bit-piece.part: offset first, the reverse of
        // DW_OP_bit_piece's (size, offset).
        code::BIT_PIECE => (Op::BitPiece, vec![Arg::U(w(1)), Arg::U(w(0))], 0),
        code::SWAP => (Op::Swap, vec![], 2),
        code::XDEREF => (Op::Xderef, vec![], 2),
        code::STACK_VALUE => (Op::StackValue, vec![], 1),
        code::CONSTU => (Op::Constu, vec![Arg::U(w(0))], 0),
        _ => return fragment(op, next, any_bit_piece, variable_bits, w(0), w(1)),
    };
    Ok(Checked::Dwarf { insn: dwarf_insn(dwarf, i, args), pops })
}

/// The checks of a Fragment (`spirv.fragment.last`,
/// `spirv.fragment.with-bit-piece`, `spirv.context.variable-size`,
/// `spirv.fragment.within-variable`).
fn fragment(
    op: &DebugOperation,
    next: Option<u32>,
    any_bit_piece: bool,
    variable_bits: Option<u64>,
    offset: u64,
    size: u64,
) -> Result<Checked, Stop> {
    if op.code != code::FRAGMENT {
        // Every known code other than Fragment is matched by the caller.
        return Err(Stop::Ill(id::SPIRV_OP_UNKNOWN_CODE));
    }
    if next.is_some() {
        return Err(Stop::Ill(id::SPIRV_FRAGMENT_LAST));
    }
    if any_bit_piece {
        return Err(Stop::Ill(id::SPIRV_FRAGMENT_WITH_BIT_PIECE));
    }
    // A size of 0 is ill-formed whatever the variable (the operands alone
    // decide it, before the context is asked).
    if size == 0 {
        return Err(Stop::Ill(id::SPIRV_FRAGMENT_WITHIN_VARIABLE));
    }
    let variable_bits = variable_bits.ok_or(Stop::Eval(id::SPIRV_CONTEXT_VARIABLE_SIZE))?;
    // Both operands are 32-bit words: the sum does not overflow.
    if offset + size > variable_bits {
        return Err(Stop::Ill(id::SPIRV_FRAGMENT_WITHIN_VARIABLE));
    }
    Ok(Checked::Fragment { offset, size, variable_bits })
}

/// DWARF operation `op` with operands `args` (DWARF order) standing for
/// the SPIR-V operation at index `at`: its `at` is that index, its `end`
/// the next index (no byte offsets; nothing is encoded).
pub(super) fn dwarf_insn(op: Op, at: usize, args: Vec<Arg>) -> Insn {
    let name = encoding_of(&VendorProfile::default(), op).map_or("", |(_, _, spec)| spec.name);
    Insn { at, end: at + 1, op, name, args }
}
