//! `dwarfcheck-core`: what dwarfcheck's two DWARF evaluators share, and
//! nothing else.
//!
//! The reference interpreter (`dwarfcheck-reference`) and the fast
//! evaluator (`dwarfcheck-fast`) are written apart so that one bug cannot
//! make them agree. They share only what this crate holds, listed bottom
//! layer first (a module imports only modules above it in this list):
//!
//! - [`encoding`]: opcode and CFA instruction tables, `DW_ATE_*`,
//!   `DW_EH_PE_*`, LEB128, vendor profiles, the 32/64-bit format, hex text;
//! - [`target`]: target architectures (registers and their sizes in bits,
//!   address spaces, lanes, byte order) and the presets;
//! - [`rules`]: rule IDs of the catalogue `specs/rules/`;
//! - [`outcome`]: what an evaluation gives ([`outcome::Outcome`],
//!   [`outcome::CfiOutcome`], unwinding steps) and the normal form of
//!   location descriptions that makes two evaluators' answers comparable;
//! - [`cfi`]: frame sections (`.debug_frame`, `.eh_frame`): finding CIEs and
//!   FDEs and decoding their headers (instructions are each evaluator's);
//! - [`context`]: the evaluation context an expression runs in: the
//!   [`context::MachineState`] trait through which an evaluator pulls
//!   registers, memory, frame and unit state on demand, and
//!   [`context::Context`], an in-memory implementation of it.
//!
//! No evaluation logic lives here. With the default features the crate
//! depends on `thiserror` alone; the `serde` feature adds
//! `Serialize`/`Deserialize` to outcomes, targets and rule IDs.

#![warn(missing_docs)]

pub mod cfi;
pub mod context;
pub mod encoding;
pub mod outcome;
pub mod rules;
pub mod target;
