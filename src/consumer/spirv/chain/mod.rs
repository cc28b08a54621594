//! The chain `llvm-spirv-15 -r` → retarget → `llvm-as-15` → `llc-15` →
//! DWARF → `elf`'s extraction, judged (issue 16 item 6, "the whole chain";
//! docs/consumers.md "The llvm-spirv → llc chain").
//!
//! # The correspondence
//!
//! A variable of the object's DWARF is the SPIR-V variable of the same name
//! and line (`DW_AT_name`, `DW_AT_decl_line`; [`judge::Applied`]). Each of
//! its DWARF expressions (the `DW_AT_location` exprloc, each location-list
//! entry, or `DW_AT_const_value N` read as `DW_OP_constu N;
//! DW_OP_stack_value`) is evaluated by both evaluators in the context
//! `elf` gives it, and so is the SPIR-V expression, directly, in the
//! **same** context with one change: its initial stack entry is the
//! generic value the DWARF expression's **prefix** denotes.
//!
//! - The prefix is the part LLVM puts in front of the `DIExpression`'s
//!   operations: the first operation that is not a `DW_OP_piece` (the
//!   alloca's slot `DW_OP_fbreg N` / `DW_OP_bregR N` for a `DebugDeclare`,
//!   the constant `DW_OP_litN`/`DW_OP_constu N` or the register of a
//!   `DebugValue`). Its value is that of the prefix alone followed by
//!   `DW_OP_stack_value`; a register location `DW_OP_regR` stands for the
//!   register's value (`DW_OP_bregR 0`).
//! - A SPIR-V `Fragment O S` is a composite of the whole variable (the
//!   lowering of `spirv::lower`): LLVM writes the same parts as
//!   `DW_OP_piece`s and leaves out what follows the last one; the DWARF
//!   composite is padded with an undefined part to the variable's size
//!   ([`judge::padded`]).
//! - The two outcomes are then compared by the caller's comparison (the
//!   harness's `runner::compare::judge`, given in [`judge::Compare`]);
//!   reference and fast must give identical outcomes on each side.
//!
//! A variable with several applications (a `DebugValue` per assignment)
//! agrees when each of its DWARF expressions agrees with one of them.
//!
//! # The rewrite
//!
//! [`retarget`]: target triple and data layout, the SPIR calling
//! conventions dropped; `llc-15` runs with DWARF 4 and inline names
//! ([`compile::LLC_OPTIONS`]). Failures of each stage and disagreements are
//! classified in [`classes`].

pub mod classes;
pub mod compile;
pub mod dies;
pub mod judge;
pub mod retarget;

pub use retarget::Arch;

/// The text of the chain's module from `text`, the text
/// `spirv::module::build::module_text` gives for an expression (a layer
/// above this one): the same without its `DebugNoScope` before `OpReturn`, so that the return
/// instruction keeps the kernel's scope and line: LLVM leaves out a local
/// variable whose scope no instruction of the function has (the kernel's
/// only other instruction, the `alloca`, has no line), and llc would write
/// no DIE for `v`.
pub fn module_text(text: &str) -> String {
    text.lines().filter(|l| !l.contains("DebugNoScope")).flat_map(|l| [l, "\n"]).collect()
}
