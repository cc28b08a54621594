//! Reference evaluation of DWARF operation expressions (hetero-2020 "DWARF
//! Expressions", DWARF 5 §2.5 where the seed defers to it).
//!
//! Slow and obvious: the expression is decoded whole first (docs/architecture.md
//! §2, "Decoding is static"), then each operation is executed on a stack of
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
//!    memory), a read's walk charged to the work budget before any bit is
//!    read (`window`, rule `expr.budget.work`);
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
//! live in `calls`, `implicit`, [`loclist`] and `attribute`. A nested
//! evaluation reports its failures at the outermost operation that started
//! it (docs/ambiguities.md items 38, 57).
//!
//! # Machine state
//! Every operation reads the context through [`MachineState`] only (the
//! machine's current state and the top frame's). A nested evaluation whose
//! context differs (a calling frame's for `DW_OP_entry_value` and CFI
//! expression rules, an attribute's, a location list entry's, an implicit
//! pointer target's) runs in an
//! [`Overlay`](dwarfcheck_core::context::Overlay) over the state it derives
//! from. The calling frames are the ones [`MachineState::caller`] gives;
//! this module never unwinds by itself. When the CFA or a calling frame was
//! to come from virtual unwinding that failed ([`ContextError::Unwinding`]),
//! the operation that needed it reports that fault
//! (`unwind.context-from-cfi`).
//!
//! [`ContextError::Unwinding`]: dwarfcheck_core::context::ContextError::Unwinding
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
mod spirv;
mod stop;
#[cfg(test)]
mod tests;
mod unspecified;
pub(crate) mod unwound;
mod window;

pub use stop::{Stop, TraceStep};

use dwarfcheck_core::context::{AttrValue, Attribute, MachineState};
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::rules::RuleId;

/// Evaluates `expr` in `state` and returns the outcome.
///
/// `state` is asked for everything the operations need: result kind,
/// initial stack, registers, memory, CFA, frame base, calling frame, unit.
/// The calling frames are whatever `state.caller()` gives; to find them by
/// virtually unwinding through the program's CFI, pass an
/// [`unwound_frames`](crate::unwind::unwound_frames) of the state.
///
/// Ill-formed and evaluation-error outcomes carry the rule ID and the byte
/// offset of the operation at fault (`None` when the fault is the final
/// result-kind check, which belongs to no operation). For the nested frame
/// base evaluation of `DW_OP_fbreg`, `at` is the offset of the `DW_OP_fbreg`.
pub fn evaluate(expr: &[u8], state: &dyn MachineState) -> Outcome {
    machine::evaluate(expr, state, None).0
}

/// Like [`evaluate`], and also returns the `unspecified` rules whose
/// decision the answer rests on for these operands (a NaN produced, a sign
/// bit where signedness is open, a shift count past the width, ...), so
/// that a third party's different answer is recorded, not failed
/// (docs/architecture.md §8). Empty when the answer is fixed by the spec.
pub fn evaluate_noting_unspecified(expr: &[u8], state: &dyn MachineState) -> (Outcome, Vec<RuleId>) {
    machine::evaluate(expr, state, None)
}

/// Like [`evaluate`], and also returns one [`TraceStep`] per operation
/// executed in `expr` (operations of nested evaluations are not listed).
pub fn evaluate_traced(expr: &[u8], state: &dyn MachineState) -> (Outcome, Vec<TraceStep>) {
    let mut trace = Vec::new();
    let (out, _) = machine::evaluate(expr, state, Some(&mut trace));
    (out, trace)
}

/// Evaluates the value `value` of `attribute` in `state`: the attribute's
/// evaluation context (result kind, initial stack, object; rules `attr.*`,
/// specs/rules/attribute.yaml; hetero-2020 "Debugging Information Entry
/// Attributes") and the value's form (exprloc, location list, constant;
/// `loclist.*`, `attr.form-not-allowed`) applied, noting the `unspecified`
/// rules as [`evaluate_noting_unspecified`] does. With no attribute, an
/// exprloc is [`evaluate_noting_unspecified`] of its expression in `state`
/// as given.
///
/// The attribute's context is an [`Overlay`](dwarfcheck_core::context::Overlay)
/// over `state`: nothing is copied.
pub fn evaluate_attribute(
    attribute: Option<Attribute>,
    value: AttrValue<'_>,
    state: &dyn MachineState,
) -> (Outcome, Vec<RuleId>) {
    match (attribute, value) {
        (None, AttrValue::Exprloc(expr)) => evaluate_noting_unspecified(expr, state),
        _ => attribute::evaluate_attribute(attribute, value, state),
    }
}
