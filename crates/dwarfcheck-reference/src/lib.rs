//! The reference interpreter of dwarfcheck: DWARF 5 expressions, call frame
//! information and virtual unwinding, plus the LLVM/AMD "DWARF Extensions
//! For Heterogeneous Debugging" (hetero-2020), written as the spec text
//! reads, to judge other consumers against.
//!
//! It is slow and obvious on purpose: expressions are decoded whole before
//! they run, every operation is one `match` arm that follows its section of
//! the text, and every ill-formed or evaluation-error branch names its rule
//! ID (`specs/rules/*.yaml`, [`rules::id`]). Bad input never panics, hangs
//! or allocates without bound: budgets ([`context::Budgets`]) bound steps,
//! stack, nesting, sizes and unwound frames.
//!
//! # Entry points
//! - [`expr::evaluate`], [`expr::evaluate_noting_unspecified`],
//!   [`expr::evaluate_traced`]: one operation expression
//!   ([`outcome::Outcome`]: a value, a location description in normal form,
//!   or a failure with rule ID and byte offset);
//! - [`expr::evaluate_attribute`]: an attribute's value (exprloc, location
//!   list or constant) in the attribute's evaluation context;
//! - [`cfi::frame_table`], [`cfi::frame_table_traced`]: the row table of one
//!   FDE ([`outcome::CfiOutcome`]);
//! - [`unwind::unwind`]: virtual unwinding from a machine state, step by
//!   step ([`outcome::unwind::Unwind`]);
//! - [`unwind::unwound_frames`]: a machine state whose CFA and calling frames
//!   come from that unwinding (`unwind.context-from-cfi`), for evaluating
//!   an expression against a program's CFI.
//!
//! # Machine state
//! Everything an evaluation needs from outside (registers, memory, program
//! location, CFA, frame base, calling frames, the current unit, base types,
//! DIEs, `.debug_addr`, location list sections, result kind, initial stack,
//! object, budgets) is asked through [`context::MachineState`], piece by
//! piece, so a debugger can answer from a live process or a core file
//! without copying it in. [`context::Context`] is an in-memory state; the
//! contexts an evaluation derives (a calling frame's, an attribute's, a
//! location list entry's, a CFI expression rule's) are
//! [`context::Overlay`]s over the state it was given, never copies.
//!
//! # Independence
//! The fast evaluator (`dwarfcheck-fast`) must agree with this crate on
//! every outcome, rule IDs and byte offsets included. The two are written
//! apart from each other and from the spec text's prose; they share only
//! `dwarfcheck-core` (encodings, targets, rule IDs, outcomes, frame-section
//! headers, the machine state interface), never evaluation logic.

#![warn(missing_docs)]

pub mod cfi;
pub mod expr;
pub mod unwind;

/// The core modules a user of the reference needs: machine state and its
/// elements ([`context`]), encodings and LEB128 ([`encoding`]), outcomes
/// and the normal form of locations ([`outcome`]), rule IDs ([`rules`]),
/// targets ([`target`]). The frame-section types of `dwarfcheck_core::cfi`
/// are re-exported by [`cfi`] itself, next to the reference row tables.
pub use dwarfcheck_core::{context, encoding, outcome, rules, target};
