//! Fast evaluation of DWARF operation expressions: decode once, run many
//! times without allocating per operation.
//!
//! Usage: [`evaluate`] for one-off calls, or [`Program::compile`] once and
//! [`Program::run`] with a per-thread [`Scratch`]; a caller evaluating many
//! expressions of one unit reads the unit's [`Facts`] once and uses
//! [`Program::recompile_with`] and [`Program::run_with`], which allocate
//! nothing once the program and scratch area have grown. Semantics follow
//! hetero-2020 "DWARF Expressions" (on top of DWARF 5 §2.5) and the project
//! decisions in `specs/rules/*.yaml`; this module is written apart from
//! `crate::reference` and must agree with it on every outcome.
//!
//! Design:
//! - [`decode`]: one pass over the bytes into 32-byte [`decode::Insn`]s
//!   with operands read and branch targets resolved to instruction indices
//!   (or markers for "end", "out of range", "inside an operation"); a
//!   per-vendor-profile 256-entry opcode table replaces the shared linear
//!   lookup. Decoding failures are kept and reported before anything runs.
//! - [`machine`]: stack entries are `Copy`: values of at most 128 bits
//!   inline, wider values, implicit storage, composite parts and multi-place
//!   locations by index into the arenas of a reusable [`Scratch`], so the
//!   common path allocates nothing until the outcome is built.
//! - The machine state is asked only through
//!   [`MachineState`](dwarfcheck_core::context::MachineState); what every
//!   operation needs (target, budgets, generic type) is read once per
//!   evaluation into the evaluation state. A context that differs from the
//!   one given (a calling frame's, an attribute's, a CFI expression rule's,
//!   a nested evaluation without object) is an
//!   [`Overlay`](dwarfcheck_core::context::Overlay), never a copy.
//! - Checks inside one operation come in the order of
//!   `docs/ambiguities.md` item 45 (nested evaluations: items 57-58), so
//!   rule IDs match the reference.
//!
//! Layers, bottom first. A module uses (imports, and calls methods of)
//! only the modules listed before it, in the order given, never one
//! listed after it:
//! 1. `decode` (opcodes to instructions), `program` ([`Program`], the
//!    per-thread cache of programs compiled for nested evaluations);
//! 2. `machine` (values, location descriptions, stack entries, the
//!    [`Scratch`] arenas, context entries imported), `export` (the normal
//!    form, window by window; composite nesting kept shallow by
//!    flattening), `weight` (the parts a walk reaches, for the work budget;
//!    the weight of a part, for the size and memory budgets);
//! 3. `evaluation`: the evaluation state every family works on (the state
//!    asked and the facts read from it, nesting, the frame evaluated in),
//!    why an operation stops, stack primitives, conversion to a value;
//! 4. operation families: `arith` (values), `aspace` (memory locations in
//!    any address space, bound to the current thread and lane), `loclist`
//!    (this evaluator's own `.debug_loclists`/`.debug_loc` reader),
//!    `storage` (storage sizes, moving a location, parts that fit), `read`
//!    (`DW_OP_deref*`, with a byte-aligned fast path), `locations` (entries
//!    as location descriptions, implicit pointers back to their DIE, nested
//!    location results, location lists as the union of matching entries),
//!    `frame` (calling frames through CFI register rules,
//!    `DW_OP_entry_value`, `DW_OP_LLVM_call_frame_entry_reg`; every register
//!    location names a top-frame register), `calls` (`DW_OP_call*`), `ext`
//!    (the hetero-2020 location operations), `place` (frame base, pieces),
//!    `finish` (the result of the final stack as the result kind asks, and
//!    its outcome), `direct` (the operations that push one entry from
//!    their operands and the state, `DW_OP_stack_value`, and the
//!    straight-line run of one of them alone or with `DW_OP_stack_value`,
//!    which is most of what compilers emit, without the loop);
//! 5. `exec`: the interpreter loop and the dispatch of each operation to
//!    its family (a program the straight-line run takes does not enter
//!    it), [`evaluate`];
//! 6. `spirv` (SPIR-V OpenCL.DebugInfo.100 `DebugExpression`s: each
//!    operation run as the DWARF operation it names, through the loop's
//!    step), `attribute` (attribute contexts and value forms,
//!    [`evaluate_attribute`]), `unwind_frame` (the evaluations of one
//!    virtual unwinding step, for `crate::unwind`).
//!
//! Nested evaluations (frame base, `DW_OP_call*`, `DW_OP_entry_value`,
//! implicit pointer targets, location list entries, CFI expression rules)
//! re-enter the loop through the evaluation state's `run` (a function the
//! loop hands down when it starts an evaluation), so the families below
//! the loop never name it.
//!
//! Out of scope (reported as `Outcome::Unsupported` when executed):
//! `DW_OP_GNU_parameter_ref`, `DW_OP_GNU_variable_value`, displacements and
//! arithmetic on values wider than 128 bits, vectors or floats other than
//! binary32/64.

// (Their layers are listed in the module documentation.)
mod arith;
mod aspace;
mod attribute;
mod calls;
pub mod decode;
mod direct;
mod evaluation;
mod exec;
mod export;
mod ext;
mod finish;
mod frame;
mod locations;
mod loclist;
pub mod machine;
mod place;
mod program;
mod read;
mod spirv;
mod storage;
pub(crate) mod unwind_frame;
mod weight;

#[cfg(test)]
mod die_tests;
#[cfg(test)]
mod ext_tests;
#[cfg(test)]
mod tests;

pub use evaluation::{Facts, Fail, Stop};
pub use machine::Scratch;
pub use program::Program;

pub use attribute::evaluate_attribute;
pub use exec::evaluate;
