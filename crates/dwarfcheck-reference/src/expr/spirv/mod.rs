//! Reference interpretation of SPIR-V OpenCL.DebugInfo.100 `DebugExpression`s
//! (seed `opencl-debuginfo-100.txt` §3.6, §4.8; rules `spirv.*` of
//! specs/rules/spirv-expressions.yaml).
//!
//! The operation list runs directly on the reference machine's stack: each
//! operation that names a DWARF operation is executed by the machine's own
//! step for that operation ([`Machine::step`]) with its operands in DWARF
//! order; nothing is encoded to DWARF bytes. Faults are reported at the
//! operation's index in the list.
//!
//! Order (the catalogue's header): the static checks of every operation
//! ([`check`]), then the initial entry (`spirv.context.initial-entry`),
//! then the operations in order, each checking the steps budget, its stack
//! depth (`spirv.stack.underflow`), then the rules of its DWARF operation,
//! then the stack budget; then the location result.

mod check;
mod fragment;

use super::decode::Insn;
use super::entry::Entry;
use super::machine::{failed, initial_stack, Final, Machine, Stack};
use super::stop::Stop;
use check::Checked;
use dwarfcheck_core::context::{MachineState, ResultKind};
use dwarfcheck_core::encoding::spirv::{Applies, SpirvExpression};
use dwarfcheck_core::encoding::Op;
use dwarfcheck_core::outcome::{BudgetKind, Failure, Outcome};
use dwarfcheck_core::rules::{id, RuleId};

/// The outcome of `expr` in `state` (its result kind is not asked: the
/// result is always a location, `spirv.result.location`), and the
/// `unspecified` rules it rests on. `at` of a failure is the index of the
/// faulty operation; `None` for the initial entry and the result.
pub(super) fn evaluate(expr: &SpirvExpression, state: &dyn MachineState) -> (Outcome, Vec<RuleId>) {
    let ops = match check::checked(expr) {
        Ok(ops) => ops,
        Err((stop, at)) => return (failed((stop, Some(at as u64))), Vec::new()),
    };
    // spirv.context.initial-entry
    let stack = match state.initial_stack() {
        one @ [_] => initial_stack(one),
        _ => {
            return (
                Outcome::Failed(Failure::EvalError { rule: id::SPIRV_CONTEXT_INITIAL_ENTRY, at: None }),
                Vec::new(),
            )
        }
    };
    let mut m = Machine::new(state);
    let r = m.run_spirv(expr.applies, &ops, stack);
    (m.outcome(r), m.unspecified)
}

impl Machine<'_> {
    /// Runs the checked operations `ops` of a DebugDeclare or DebugValue
    /// (`applies`) on `stack` (the initial entry) and takes the result.
    fn run_spirv(&mut self, applies: Applies, ops: &[Checked], mut stack: Stack) -> Result<Final, (Stop, Option<u64>)> {
        let value = applies == Applies::Value;
        if value && ops.is_empty() {
            // spirv.value.empty-expression: the value itself, as
            // DW_OP_stack_value makes it; a location stays.
            self.rely_on(Some(id::SPIRV_VALUE_EMPTY_EXPRESSION));
            if let Some(Entry::Value(_)) = stack.last() {
                let insn = check::dwarf_insn(Op::StackValue, 0, Vec::new());
                self.step(&insn, &[], 0, &mut stack, 0).map_err(|s| (s, None))?;
            }
        }
        let mut after_stack_value = false;
        for (i, op) in ops.iter().enumerate() {
            let at = Some(i as u64);
            // expr.budget (steps), before the operation.
            self.steps += 1;
            if self.steps > self.ctx.budgets().clamped().steps {
                return Err((Stop::Budget(BudgetKind::Steps), at));
            }
            self.spirv_op(op, value, after_stack_value, &mut stack).map_err(|s| (s, at))?;
            after_stack_value = matches!(op, Checked::Dwarf { insn, .. } if insn.op == Op::StackValue);
            if stack.len() > self.ctx.budgets().clamped().stack {
                return Err((Stop::Budget(BudgetKind::Stack), at));
            }
        }
        // spirv.value.without-stack-value: a value left on top of a
        // DebugValue's stack is the variable's address.
        if value && !ops.is_empty() && matches!(stack.last(), Some(Entry::Value(_) | Entry::ImplicitPointerValue(_))) {
            self.rely_on(Some(id::SPIRV_VALUE_WITHOUT_STACK_VALUE));
        }
        // spirv.result.location
        self.finish(stack, Some(ResultKind::Location)).map_err(|s| (s, None))
    }

    /// Executes one checked operation (`value`: of a DebugValue;
    /// `after_stack_value`: the previous operation was StackValue).
    fn spirv_op(&mut self, op: &Checked, value: bool, after_stack_value: bool, stack: &mut Stack) -> Result<(), Stop> {
        // A piece of a DebugValue that turns a value into a location takes
        // the value as the variable's address (spirv.value.without-stack-value).
        let piece = matches!(op, Checked::Fragment { .. } | Checked::Dwarf { insn: Insn { op: Op::BitPiece, .. }, .. });
        if value && piece && matches!(stack.last(), Some(Entry::Value(_) | Entry::ImplicitPointerValue(_))) {
            self.rely_on(Some(id::SPIRV_VALUE_WITHOUT_STACK_VALUE));
        }
        match op {
            Checked::Fragment { offset, size, variable_bits } => self.fragment(stack, *offset, *size, *variable_bits),
            Checked::Dwarf { insn, pops } => {
                // spirv.stack.underflow, before anything else.
                if stack.len() < *pops {
                    return Err(Stop::Ill(id::SPIRV_STACK_UNDERFLOW));
                }
                if insn.op == Op::BitPiece && after_stack_value {
                    self.rely_on(Some(id::SPIRV_BIT_PIECE_AFTER_STACK_VALUE));
                }
                // The address space number, below the address.
                let aspace_nonzero = stack.len() >= 2
                    && matches!(&stack[stack.len() - 2], Entry::Value(v) if v.bytes.iter().any(|b| *b != 0));
                let r = self.step(insn, &[], 0, stack, 0).map(|_| ());
                if insn.op == Op::Xderef && aspace_nonzero && !xderef_pop_fault(&r) {
                    // A number other than 0 (the default address space,
                    // whatever the mapping) was taken as the target's DWARF
                    // address space (spirv.xderef.address-space).
                    self.rely_on(Some(id::SPIRV_XDEREF_ADDRESS_SPACE));
                }
                r
            }
        }
    }
}

/// Whether DW_OP_xderef stopped on its operands (before it took the
/// address space number): a non-integral or unconvertible entry.
fn xderef_pop_fault(r: &Result<(), Stop>) -> bool {
    match r {
        Err(Stop::Ill(rule) | Stop::Eval(rule)) => [
            id::OP_XDEREF_REQUIRES_INTEGRAL,
            id::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION,
            id::LOC_CONVERT_LOCATION_NOT_VALUE,
            id::OP_IMPLICIT_POINTER_VALUE_MISUSE,
        ]
        .contains(rule),
        _ => false,
    }
}
