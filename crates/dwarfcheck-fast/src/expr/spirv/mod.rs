//! Fast interpretation of SPIR-V OpenCL.DebugInfo.100 `DebugExpression`s
//! (seed `opencl-debuginfo-100.txt` §3.6 "Debug Operations", §4.8 "Local
//! Variables"; rules `spirv.*` in `specs/rules/spirv-expressions.yaml`).
//!
//! The operation list runs directly, one operation at a time: the static
//! checks of [`check`] first, then the context's one initial entry, then
//! each operation checks its stack depth (`spirv.stack.underflow`) and runs
//! as the DWARF operation it names, through the same instruction step the
//! DWARF interpreter loop takes (built from the operation's code and
//! literals, never from bytes); `Fragment`, which no DWARF operation is,
//! is [`fragment`]. Every fault is reported at the operation's index in
//! the list, not at a byte offset; faults of the result carry none, as for
//! a DWARF expression.

mod check;
mod fragment;
#[cfg(test)]
mod tests;

use super::decode::{insn, kind_of, Insn};
use super::evaluation::{Evaluation, Fail, Stop};
use super::exec::top_level;
use super::machine::{complete_top, Entry, Scratch};
use super::program::Program;
use dwarfcheck_core::context::{MachineState, ResultKind};
use dwarfcheck_core::encoding::spirv::{code, Applies, DebugOperation, SpirvExpression};
use dwarfcheck_core::encoding::Op;
use dwarfcheck_core::outcome::{BudgetKind, Failure, Outcome};
use dwarfcheck_core::rules::id as R;

/// The outcome of `expr` in `state`: a location description (rule
/// `spirv.result.location`), or the first fault, at the index of the
/// operation it is found at (`None` for the context's initial entry and
/// for the result).
pub(super) fn evaluate(expr: &SpirvExpression, state: &dyn MachineState) -> Outcome {
    if let Err(stop) = check::check(expr) {
        return stop.outcome();
    }
    // Rules spirv.expr.initial-entry, spirv.context.initial-entry.
    let [initial] = state.initial_stack() else {
        return Outcome::Failed(Failure::EvalError { rule: R::SPIRV_CONTEXT_INITIAL_ENTRY, at: None });
    };
    let evaluation = top_level(state);
    let mut s = Scratch::new();
    let entry = s.import(initial);
    s.stack.push(entry);
    match run(&evaluation, expr, &mut s) {
        Ok(e) => evaluation.outcome_of(&mut s, e),
        Err(stop) => stop.outcome(),
    }
}

/// How many entries operation `code` pops, checked before it runs (rule
/// `spirv.stack.underflow`); `BitPiece` and `Fragment` take an empty
/// stack as an undefined part.
fn pops(code: u32) -> usize {
    match code {
        code::PLUS | code::MINUS | code::SWAP | code::XDEREF => 2,
        code::DEREF | code::PLUS_UCONST | code::STACK_VALUE => 1,
        _ => 0,
    }
}

/// The DWARF operation SPIR-V operation `code` names (`None`: `Fragment`,
/// or a code the static checks refuse).
fn dwarf_op(code: u32) -> Option<Op> {
    Some(match code {
        code::DEREF => Op::Deref,
        code::PLUS => Op::Plus,
        code::MINUS => Op::Minus,
        code::PLUS_UCONST => Op::PlusUconst,
        code::BIT_PIECE => Op::BitPiece,
        code::SWAP => Op::Swap,
        code::XDEREF => Op::Xderef,
        code::STACK_VALUE => Op::StackValue,
        code::CONSTU => Op::Constu,
        _ => return None,
    })
}

/// The DWARF instruction of a checked operation `op` (not `Fragment`) at
/// index `at`: its literals zero-extended (rule `spirv.stack.element-size`),
/// `BitPiece Offset Size` as `DW_OP_bit_piece Size Offset` (rule
/// `spirv.op.bit-piece.part`).
fn dwarf_insn(op: &DebugOperation, at: usize) -> Option<Insn> {
    let dw = dwarf_op(op.code)?;
    let word = |k: usize| op.operands.get(k).map_or(0, |w| u64::from(*w));
    let operands = if op.code == code::BIT_PIECE { [word(1), word(0), 0] } else { [word(0), word(1), 0] };
    Some(insn(dw, kind_of(dw), at, operands))
}

/// Runs the checked operations of `expr` on the stack holding the initial
/// entry; gives the result (rules `spirv.result.location`,
/// `spirv.value.empty-expression`, `spirv.value.without-stack-value`).
fn run(evaluation: &Evaluation<'_>, expr: &SpirvExpression, s: &mut Scratch) -> Result<Entry, Stop> {
    // (The operations DWARF's step runs here read no block.)
    let no_blocks = Program::new();
    for (i, op) in expr.operations.iter().enumerate() {
        let stop = |fail| Stop { fail, at: Some(i as u64) };
        // As the DWARF loop counts an operation run: the steps budget
        // before anything else, then the stack depth.
        s.steps += 1;
        if s.steps > evaluation.budgets.steps {
            return Err(stop(Fail::Budget(BudgetKind::Steps)));
        }
        if evaluation.avail(s) < pops(op.code) {
            return Err(stop(Fail::IllFormed(R::SPIRV_STACK_UNDERFLOW)));
        }
        let r = if op.code == code::FRAGMENT {
            match (op.operands.as_slice(), expr.variable_bits) {
                (&[offset, size], Some(bits)) => evaluation.fragment(s, u64::from(offset), u64::from(size), bits),
                // (The static checks let no such Fragment through.)
                _ => Err(Fail::EvalError(R::SPIRV_CONTEXT_VARIABLE_SIZE)),
            }
        } else {
            match dwarf_insn(op, i) {
                Some(ins) => evaluation.step(&no_blocks, &ins, s).map(|_| ()),
                // (Nor an unknown code.)
                None => Err(Fail::IllFormed(R::SPIRV_OP_UNKNOWN_CODE)),
            }
        };
        r.map_err(stop)?;
        if evaluation.avail(s) > evaluation.budgets.stack {
            return Err(stop(Fail::Budget(BudgetKind::Stack)));
        }
    }
    let result = |fail| Stop { fail, at: None };
    let top = evaluation.top(s);
    if expr.operations.is_empty() && expr.applies == Applies::Value {
        // The value itself: implicit storage holding it, as
        // DW_OP_stack_value makes it; a location stays that location.
        return match top {
            Some(e @ Entry::Location(_)) => Ok(e),
            Some(e) => evaluation.stack_value(s, e).map_err(result),
            None => Err(result(Fail::EvalError(R::SPIRV_CONTEXT_INITIAL_ENTRY))),
        };
    }
    if let Some(e) = &top {
        complete_top(s, e);
    }
    evaluation.result_of(s, top, Some(ResultKind::Location)).map_err(result)
}
