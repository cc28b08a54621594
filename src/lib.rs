//! dwarfcheck: a differential conformance and fuzz harness for DWARF
//! expressions and call frame information, covering DWARF 5 and the
//! LLVM/AMD "DWARF Extensions For Heterogeneous Debugging" (hetero-2020).
//!
//! The harness is the top of a workspace (docs/architecture.md):
//! `dwarfcheck-core` (what the evaluators share), `dwarfcheck-reference`
//! (the spec-literal interpreter) and `dwarfcheck-fast` (the embeddable
//! evaluator) are crates of their own. This crate holds everything that
//! feeds them and judges them, its modules listed bottom layer first:
//!
//! - [`testing`]: support for tests whose oracle is an installed tool;
//!   [`text`]: small text helpers ("did you mean");
//! - [`catalogue`]: the rule catalogue's text;
//! - [`asm`]: the text assembler/disassembler of expressions and CFI, and
//!   frame sections built from a layout;
//! - [`case`]: cases and the YAML case files; [`edition`]: the edition
//!   classifier;
//! - [`consumer`]: the consumer trait, the two evaluators behind it, and
//!   the third-party adapters; [`synth`]: executables and core files
//!   synthesised from cases for the debuggers;
//! - [`spirv`]: SPIR-V OpenCL.DebugInfo.100 debug operations (their
//!   lowering sits below [`case`]; the module reader `spirv::module`
//!   beside [`elf`]);
//! - [`elf`]: cases from real binaries; [`runner`]: comparison and
//!   reports; [`matrix`]: the rule × consumer conformance matrix;
//!   [`fuzzing`]: fuzz targets' logic, minimisation and corpora;
//!   [`conformance`]: the suite run in-process on a Rust consumer, from
//!   its own `cargo test`;
//! - [`visa`]: Intel vISA debug info (above [`consumer`], whose contained
//!   process runner drives GenX_IR): decoding, layout
//!   detection, validation, ocloc's containers, the GenX_IR oracle;
//! - [`producers`]: producer findings on real input (above [`elf`] and
//!   [`runner`]): each rejected expression with its DIE and producer,
//!   confirmed by llvm-dwarfdump, SARIF, and `docs/producers.md`;
//! - [`tru64`]: the Tru64 optimization symbol table (beside [`visa`]):
//!   PPODE decoding, encoding, validation and the direct reading of split
//!   lifetimes and discontiguous scopes.

#![warn(missing_docs)]

pub mod asm;
pub mod bench;
pub mod case;
pub mod catalogue;
pub mod conformance;
pub mod consumer;
pub mod edition;
pub mod elf;
pub mod export;
pub mod fuzzing;
pub mod matrix;
pub mod producers;
pub mod runner;
pub mod spirv;
pub mod synth;
pub mod testing;
pub mod text;
pub mod tru64;
pub mod visa;
