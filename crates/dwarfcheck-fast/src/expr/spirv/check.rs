//! The static checks of a SPIR-V `DebugExpression`, before anything runs
//! (`specs/rules/spirv-expressions.yaml`, order of checks): each operation
//! in list order, its code, operand count and placement.

use crate::expr::evaluation::{Fail, Stop};
use dwarfcheck_core::encoding::spirv::{code, operand_count, SpirvExpression};
use dwarfcheck_core::rules::id as R;

/// The first static fault of `expr`, at the index of its operation: for
/// each operation in order its code (`spirv.op.unknown-code`), its number
/// of literals (`spirv.op.operand-count`), `StackValue` placement
/// (`spirv.stack-value.placement`), `Fragment` placement
/// (`spirv.fragment.last`), `Fragment` with `BitPiece`
/// (`spirv.fragment.with-bit-piece`), the `Fragment`'s bounds (the
/// evaluation error `spirv.context.variable-size` without the variable's
/// size, then `spirv.fragment.within-variable`). Linear in the list.
pub(super) fn check(expr: &SpirvExpression) -> Result<(), Stop> {
    let ops = &expr.operations;
    for (i, op) in ops.iter().enumerate() {
        let ill = |rule| Err(Stop { fail: Fail::IllFormed(rule), at: Some(i as u64) });
        let Some(count) = operand_count(op.code) else {
            return ill(R::SPIRV_OP_UNKNOWN_CODE);
        };
        if op.operands.len() != count {
            return ill(R::SPIRV_OP_OPERAND_COUNT);
        }
        let next = ops.get(i + 1).map(|o| o.code);
        match op.code {
            code::STACK_VALUE if !matches!(next, None | Some(code::BIT_PIECE | code::FRAGMENT)) => {
                return ill(R::SPIRV_STACK_VALUE_PLACEMENT);
            }
            code::FRAGMENT => {
                if next.is_some() {
                    return ill(R::SPIRV_FRAGMENT_LAST);
                }
                // (Reached once: the Fragment is the last operation.)
                if ops.iter().any(|o| o.code == code::BIT_PIECE) {
                    return ill(R::SPIRV_FRAGMENT_WITH_BIT_PIECE);
                }
                let (offset, size) = (u64::from(op.operands[0]), u64::from(op.operands[1]));
                // A zero size is wrong whatever the variable; the bounds
                // need the variable's size.
                if size == 0 {
                    return ill(R::SPIRV_FRAGMENT_WITHIN_VARIABLE);
                }
                let Some(bits) = expr.variable_bits else {
                    return Err(Stop { fail: Fail::EvalError(R::SPIRV_CONTEXT_VARIABLE_SIZE), at: Some(i as u64) });
                };
                if offset + size > bits {
                    return ill(R::SPIRV_FRAGMENT_WITHIN_VARIABLE);
                }
            }
            _ => {}
        }
    }
    Ok(())
}
