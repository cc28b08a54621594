//! Reference evaluation of DWARF operation expressions (hetero-2020 "DWARF
//! Expressions", DWARF 5 §2.5 where the seed defers to it).
//!
//! Slow and obvious: the expression is decoded whole first (BRIEF "decoding
//! is static"), then each operation is executed on a stack of
//! [`entry::Entry`] values exactly as the text describes it. Location
//! descriptions are ordinary stack entries; the implicit conversions of
//! "Memory Location Description Operations" apply wherever an operation
//! needs the other kind.
//!
//! # Order of checks inside one operation
//! Both evaluators must report the same rule when several apply, so each
//! operation checks, in this order:
//! 1. the steps budget (before the operation runs);
//! 2. what its operands alone decide: base type lookup (`ctx.cu-missing`,
//!    `op.typed.not-base-type`), block size rules
//!    (`op.const-type.size-mismatch`, `op.deref-type.size-mismatch`), the
//!    size budget of the type, implicit value or part;
//! 3. the stack depth it needs (`expr.stack.underflow`,
//!    `op.pick.index-out-of-range`), then incomplete composites touched by
//!    stack operations;
//! 4. the entries it pops, top first, with their implicit conversions
//!    (`loc.convert.*`, `loc.incomplete-composite-not-location`,
//!    `op.implicit-pointer.value-misuse`);
//! 5. rules between operands (`op.arith.same-type`, integral checks, ...);
//! 6. context elements and reads (CFA, frame base, TLS base, registers,
//!    memory);
//! 7. the stack budget (after the operation).
//!
//! Operations that start nested evaluations (`DW_OP_call*`,
//! `DW_OP_entry_value`, `DW_OP_LLVM_call_frame_entry_reg` through CFI
//! expression rules, implicit pointer values turned into locations,
//! location lists) check in the order their rules state
//! (`specs/rules/calls.yaml`, `implicit.yaml`, `loclist.yaml`); the depth
//! budget comes right before the nested expression is decoded.
//!
//! DIE-backed operations (`DW_OP_call*`, implicit pointers), the calling
//! frame (`DW_OP_entry_value`, `DW_OP_LLVM_call_frame_entry_reg`, registers
//! of non-top frames through CFI), location lists and attribute contexts
//! live in [`calls`], [`implicit`], [`loclist`] and [`attribute`]. A nested
//! evaluation reports its failures at the outermost operation that started
//! it (docs/ambiguities.md items 38, 57).
//!
//! Out of scope for now (reported as `Outcome::Unsupported` when executed):
//! `DW_OP_GNU_parameter_ref`, `DW_OP_GNU_variable_value` (the context has no
//! call sites or variable types), the AArch64 RA-signing rule in a calling
//! frame. Integer arithmetic above 128 bits and float arithmetic other than
//! binary32/binary64 are also reported as unsupported.

pub mod arith;
mod attribute;
mod calls;
mod composite;
pub mod decode;
pub mod entry;
mod extension;
mod implicit;
pub mod loclist;
mod machine;
mod ops;
pub mod read;
#[cfg(test)]
mod tests;
mod unspecified;
pub(crate) mod unwound;
mod window;

use dwarfcheck_core::context::{AttrValue, Attribute, Context};
use dwarfcheck_core::outcome::{BudgetKind, Failure, Outcome};
use dwarfcheck_core::rules::RuleId;

/// Why an operation stopped the evaluation (the outcome without its `at`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The expression is ill-formed (rule).
    Ill(RuleId),
    /// Evaluation error (rule).
    Eval(RuleId),
    /// A budget ran out.
    Budget(BudgetKind),
    /// The reference does not implement this yet.
    Unsupported(String),
}

impl Stop {
    /// The stop that reports `failure` (its offset is the operation's).
    pub fn of_failure(failure: Failure) -> Stop {
        match failure {
            Failure::IllFormed { rule, .. } => Stop::Ill(rule),
            Failure::EvalError { rule, .. } => Stop::Eval(rule),
            Failure::Budget { budget, .. } => Stop::Budget(budget),
            Failure::Unsupported { what } | Failure::ConsumerFault { what } => Stop::Unsupported(what),
        }
    }
}

/// One step of a traced evaluation: the state after one operation of the
/// outermost expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceStep {
    /// Byte offset of the operation's opcode.
    pub at: u64,
    /// llvm-dwarfdump-like text of the operation, e.g. `DW_OP_breg7 +16`.
    pub op: String,
    /// The stack after the operation, bottom first (top last), each entry
    /// as text: values as `generic64:0x…`, locations in normal form.
    pub stack: Vec<String>,
}

/// Evaluates `expr` in `ctx` and returns the outcome.
///
/// Ill-formed and evaluation-error outcomes carry the rule ID and the byte
/// offset of the operation at fault (`None` when the fault is the final
/// result-kind check, which belongs to no operation). For the nested frame
/// base evaluation of `DW_OP_fbreg`, `at` is the offset of the `DW_OP_fbreg`.
pub fn evaluate(expr: &[u8], ctx: &Context) -> Outcome {
    machine::evaluate(expr, ctx, None).0
}

/// Like [`evaluate`], and also returns the `unspecified` rules whose
/// decision the answer rests on for these operands (a NaN produced, a sign
/// bit where signedness is open, a shift count past the width, ...), so
/// that a third party's different answer is recorded, not failed
/// (DESIGN §8). Empty when the answer is fixed by the spec.
pub fn evaluate_noting_unspecified(expr: &[u8], ctx: &Context) -> (Outcome, Vec<RuleId>) {
    machine::evaluate(expr, ctx, None)
}

/// Like [`evaluate`], and also returns one [`TraceStep`] per operation
/// executed in `expr` (operations of nested evaluations are not listed).
pub fn evaluate_traced(expr: &[u8], ctx: &Context) -> (Outcome, Vec<TraceStep>) {
    let mut trace = Vec::new();
    let (out, _) = machine::evaluate(expr, ctx, Some(&mut trace));
    (out, trace)
}

/// Evaluates the value `value` of `attribute` in `ctx`: the attribute's
/// evaluation context (result kind, initial stack, object; rules `attr.*`,
/// specs/rules/attribute.yaml) and the value's form (exprloc, location
/// list, constant; `loclist.*`) applied, noting the `unspecified` rules as
/// [`evaluate_noting_unspecified`] does. With no attribute, an exprloc is
/// [`evaluate_noting_unspecified`] of its expression in `ctx` as given.
pub fn evaluate_attribute(attribute: Option<Attribute>, value: AttrValue<'_>, ctx: &Context) -> (Outcome, Vec<RuleId>) {
    match (attribute, value) {
        (None, AttrValue::Exprloc(expr)) => evaluate_noting_unspecified(expr, ctx),
        _ => attribute::evaluate_attribute(attribute, value, ctx),
    }
}
