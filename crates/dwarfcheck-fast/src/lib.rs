//! `dwarfcheck-fast`: an embeddable evaluator of DWARF 5 expressions, CFI
//! row tables and virtual unwinding, with the LLVM/AMD "DWARF Extensions
//! For Heterogeneous Debugging" (hetero-2020: address spaces, lanes,
//! composite and implicit location operations).
//!
//! It decodes an expression once and evaluates it without allocating per
//! operation on the common path; it builds a frame description entry's row
//! table in one pass over its instructions; it unwinds one frame at a time
//! with an FDE index built once. It never panics, hangs or allocates
//! without bound on bad input: every fault is an outcome carrying the rule
//! of the project's catalogue that decides it (`specs/rules/`) and the byte
//! offset where it happened, and explicit budgets
//! ([`context::Budgets`]) bound steps, stack, nesting, sizes and frames.
//! It is written apart from the project's spec-literal reference
//! interpreter and agrees with it on every outcome.
//!
//! # Entry points
//!
//! - [`expr::evaluate`]: one operation expression in a machine state;
//!   [`expr::Program::compile`] once and [`expr::Program::run`] with a
//!   reused [`expr::Scratch`] for repeated evaluations;
//!   [`expr::evaluate_attribute`]: the value of an attribute
//!   (`DW_AT_location`, `DW_AT_frame_base`, ...) in its own context, a
//!   location list included.
//! - [`cfi::frame_table`]: the row table of one FDE;
//!   [`cfi::Builder`] with a [`cfi::RowSink`] to walk rows without
//!   storing them.
//! - [`unwind::unwind`]: virtual unwinding to the base of the stack;
//!   [`unwind::Unwinder`] to index a section once and step frame by
//!   frame; [`unwind::UnwoundFrames`] to give an expression the CFA and
//!   calling frames that unwinding finds.
//!
//! Everything the evaluators ask of the program being debugged goes
//! through one trait, [`context::MachineState`]: registers and memory are
//! read on demand, never copied in. [`context::Context`] is an in-memory
//! implementation (what the test cases use); a debugger implements the
//! trait over a live process or a core file.
//!
//! The crate re-exports what an embedder needs from `dwarfcheck-core`
//! ([`context`], [`encoding`], [`outcome`], [`rules`], [`target`], and the
//! frame-section headers inside [`cfi`]), so depending on
//! `dwarfcheck-fast` alone is enough.
//!
//! # Evaluating an expression against a `Context`
//!
//! ```
//! use dwarfcheck_fast::context::{Context, MemorySegment};
//! use dwarfcheck_fast::expr;
//! use dwarfcheck_fast::outcome::{BaseType, Outcome, Value};
//! use dwarfcheck_fast::target::presets;
//! use std::sync::Arc;
//!
//! let mut state = Context::new(Arc::new(presets::x86_64()));
//! // rsp (DWARF register 7) = 0x7ffc0000; 8 bytes of memory at 0x7ffc0010.
//! state.registers.insert(7, 0x7ffc_0000u64.to_le_bytes().to_vec());
//! state.memory.push(MemorySegment::shared(0, 0x7ffc_0010, 42u64.to_le_bytes().to_vec()));
//!
//! // DW_OP_breg7 16; DW_OP_deref
//! let outcome = expr::evaluate(&[0x77, 0x10, 0x06], &state);
//! assert_eq!(outcome, Outcome::Value(Value::from_u128(BaseType::generic(64, false), 42)));
//!
//! // Compiled once, run many times with one scratch area.
//! let program = expr::Program::compile(&[0x77, 0x10, 0x06], &state);
//! let mut scratch = expr::Scratch::new();
//! assert_eq!(program.run(&state, &mut scratch), outcome);
//! ```
//!
//! # Implementing `MachineState` for a debugger
//!
//! Only the target, registers and memory must be given; every other
//! element (program location, CFA, frame base, calling frames, the current
//! compilation unit, ...) defaults to "not specified", which the
//! evaluators report with the catalogue's rule when an operation needs it.
//! A sketch over a core file, read in place:
//!
//! ```
//! use dwarfcheck_fast::context::{ContextError, MachineState, MemoryStorage};
//! use dwarfcheck_fast::expr;
//! use dwarfcheck_fast::outcome::{BaseType, Outcome, Value};
//! use dwarfcheck_fast::target::{presets, Target};
//!
//! /// The registers of the thread that stopped and the loadable segments of
//! /// a core file, borrowed from the mapped file.
//! struct CoreFile<'a> {
//!     target: Target,
//!     pc: u64,
//!     /// (DWARF register number, contents in target byte order).
//!     registers: &'a [(u64, [u8; 8])],
//!     /// (byte address of the first byte, contents).
//!     segments: &'a [(u64, &'a [u8])],
//! }
//!
//! impl MachineState for CoreFile<'_> {
//!     fn target(&self) -> &Target {
//!         &self.target
//!     }
//!
//!     fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError> {
//!         let (_, bytes) = self.registers.iter().find(|(r, _)| *r == regno).ok_or(ContextError::RegisterUnavailable(regno))?;
//!         let bytes = bytes.get(offset..offset + out.len()).ok_or(ContextError::RegisterUnavailable(regno))?;
//!         out.copy_from_slice(bytes);
//!         Ok(())
//!     }
//!
//!     // (A sketch: the range must lie within one segment of the default
//!     // address space.)
//!     fn read_memory(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
//!         let unreadable = ContextError::MemoryUnreadable { aspace: storage.aspace, address };
//!         if storage != MemoryStorage::shared(0) {
//!             return Err(unreadable);
//!         }
//!         let found = self.segments.iter().find_map(|(start, bytes)| {
//!             let at = usize::try_from(address.checked_sub(*start)?).ok()?;
//!             bytes.get(at..)?.get(..out.len())
//!         });
//!         out.copy_from_slice(found.ok_or(unreadable)?);
//!         Ok(())
//!     }
//!
//!     fn pc(&self) -> Option<u64> {
//!         Some(self.pc)
//!     }
//! }
//!
//! let stack = 7u64.to_le_bytes();
//! let core = CoreFile {
//!     target: presets::x86_64(),
//!     pc: 0x401000,
//!     registers: &[(6, 0x7ffc_0040u64.to_le_bytes())], // rbp
//!     segments: &[(0x7ffc_0030, &stack)],
//! };
//! // DW_OP_breg6 -16; DW_OP_deref
//! let outcome = expr::evaluate(&[0x76, 0x70, 0x06], &core);
//! assert_eq!(outcome, Outcome::Value(Value::from_u128(BaseType::generic(64, false), 7)));
//! ```
//!
//! With the program's `.eh_frame` or `.debug_frame` parsed into a
//! [`cfi::CfiSection`], `unwind::UnwoundFrames::new(&core, &section)` is
//! the same state with the CFA and the calling frames found by virtually
//! unwinding it (for `DW_OP_call_frame_cfa`, `DW_OP_entry_value`,
//! registers of calling frames), and [`unwind::unwind`] walks its stack.

#![warn(missing_docs)]

pub mod cfi;
pub mod expr;
pub mod unwind;

pub use dwarfcheck_core::{context, encoding, outcome, rules, target};
