//! dwarfcheck: a differential conformance and fuzz harness for DWARF
//! expressions and call frame information, covering DWARF 5 and the
//! LLVM/AMD "DWARF Extensions For Heterogeneous Debugging" (hetero-2020).
//!
//! Layout (DESIGN §10):
//! - [`encoding`], [`context`], [`outcome`], [`rules`], [`target`]: the only
//!   things the two evaluators share;
//! - [`reference`]: the spec-literal interpreter; [`fast`]: the embeddable
//!   evaluator, written apart;
//! - [`asm`]: text assembler/disassembler; [`case`]: YAML cases; [`elf`]:
//!   cases from real binaries; [`cfi`]: frame sections;
//! - [`consumer`]: the consumer trait and third-party adapters;
//! - [`edition`]: the edition classifier; [`runner`]: comparison and reports;
//!   [`matrix`]: the rule x consumer conformance matrix.

#![warn(missing_docs)]

pub mod asm;
pub mod case;
pub mod cfi;
pub mod consumer;
pub mod context;
pub mod edition;
pub mod elf;
pub mod encoding;
pub mod fast;
pub mod fuzzing;
pub mod matrix;
pub mod outcome;
pub mod reference;
pub mod rules;
pub mod runner;
pub mod synth;
pub mod target;
pub mod testing;
