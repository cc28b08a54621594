//! Frame sections (`.debug_frame`, `.eh_frame`): the input layer that finds
//! CIEs and FDEs and decodes their headers. Executing call frame
//! instructions into rows is the evaluators' job, not this module's.
//!
//! - [`header`]: entry iteration, CIE/FDE header decoding, `DW_EH_PE_*`
//!   pointer decoding ([`CfiSection::read_pointer`]).
//!
//! This module is shared by the reference and the fast row-table builders
//! (header parsing is shared input, docs/architecture.md); instruction
//! decoding and execution are written separately in each.
//!
//! # Budgets
//! Row-table construction is bounded by three explicit limits, checked at
//! the same points by both builders (the outcome is `CfiOutcome::Budget`):
//! - [`MAX_INSTRUCTIONS`]: instructions executed per table (CIE initial
//!   instructions and FDE instructions together, `DW_CFA_nop` included),
//!   checked before each instruction: executing instruction number
//!   `MAX_INSTRUCTIONS + 1` reports `Budget { Steps, at: its offset }`;
//! - [`MAX_REMEMBER_DEPTH`]: `DW_CFA_remember_state` with this many
//!   entries already on the implicit stack reports `Budget { Stack, at }`;
//! - [`MAX_REGISTER_RULES`]: an instruction that would give an explicit
//!   rule to a register while this many other registers already have one
//!   reports `Budget { Size, at }`;
//! - [`MAX_TABLE_CELLS`]: each row closed (a non-empty row, when a
//!   row-creation instruction or the end of the instructions ends it)
//!   costs 1 + its number of register rules; when the total for the table
//!   exceeds this, `Budget { Size, at }` names the instruction that closed
//!   the row (the end of the FDE for the last row). This bounds the memory
//!   of a table to O(cells).

pub mod header;

pub use header::{CfiError, Cie, Entry, EntryKind, ErrorKind, Fde};

use crate::target::Target;
use std::sync::Arc;

/// Maximum call frame instructions executed while building one row table
/// (CIE initial instructions plus FDE instructions).
pub const MAX_INSTRUCTIONS: u64 = 100_000;

/// Maximum depth of the `DW_CFA_remember_state` implicit stack.
pub const MAX_REMEMBER_DEPTH: usize = 64;

/// Maximum number of registers with an explicit rule in one row.
pub const MAX_REGISTER_RULES: usize = 256;

/// Maximum cells (rows plus register rules over all rows) in one table.
pub const MAX_TABLE_CELLS: u64 = 1 << 20;

/// DWARF register number of AArch64's `RA_SIGN_STATE` pseudo-register
/// (AADWARF64 "DWARF register names", Note 8), toggled by
/// `DW_CFA_AARCH64_negate_ra_state`.
pub const AARCH64_RA_SIGN_STATE: u64 = 34;

/// Which kind of frame section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum FrameKind {
    /// `.debug_frame` (DWARF 5 §6.4.1, CIE versions 1, 3, 4).
    #[cfg_attr(feature = "serde", serde(alias = "debug_frame", alias = ".debug_frame"))]
    DebugFrame,
    /// `.eh_frame` (LSB exception frames, CIE version 1 and 3).
    #[cfg_attr(feature = "serde", serde(alias = "eh_frame", alias = ".eh_frame"))]
    EhFrame,
}

/// A whole frame section plus what is needed to resolve its pointers.
#[derive(Debug, Clone)]
pub struct CfiSection {
    /// Section kind.
    pub kind: FrameKind,
    /// Section contents.
    pub bytes: Arc<[u8]>,
    /// Virtual address of the section (for `DW_EH_PE_pcrel` and
    /// `DW_EH_PE_aligned`).
    pub address: u64,
    /// Base for `DW_EH_PE_textrel`, if known.
    pub text_base: Option<u64>,
    /// Base for `DW_EH_PE_datarel` (on x86-64 the GOT), if known.
    pub data_base: Option<u64>,
    /// The target (address size, endianity, register names, CFA opcode 0x2d).
    pub target: Arc<Target>,
}

impl CfiSection {
    /// A section of `kind` at virtual `address` holding `bytes`, with no
    /// text or data base.
    pub fn new(kind: FrameKind, bytes: impl Into<Arc<[u8]>>, address: u64, target: Arc<Target>) -> Self {
        CfiSection { kind, bytes: bytes.into(), address, text_base: None, data_base: None, target }
    }
}
