//! Frame sections (`.debug_frame`, `.eh_frame`): the input layer that finds
//! CIEs and FDEs and decodes their headers. Executing call frame
//! instructions into rows is the evaluators' job, not this module's.

use crate::target::Target;
use std::sync::Arc;

/// Which kind of frame section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FrameKind {
    /// `.debug_frame` (DWARF 5 §6.4.1, CIE versions 1, 3, 4).
    DebugFrame,
    /// `.eh_frame` (LSB exception frames, CIE version 1 and 3).
    EhFrame,
}

/// A whole frame section plus what is needed to resolve its pointers.
#[derive(Debug, Clone)]
pub struct CfiSection {
    /// Section kind.
    pub kind: FrameKind,
    /// Section contents.
    pub bytes: Arc<[u8]>,
    /// Virtual address of the section (for `DW_EH_PE_pcrel`).
    pub address: u64,
    /// Base for `DW_EH_PE_textrel`, if known.
    pub text_base: Option<u64>,
    /// Base for `DW_EH_PE_datarel` (on x86-64 the GOT), if known.
    pub data_base: Option<u64>,
    /// The target (address size, endianity, register names, CFA opcode 0x2d).
    pub target: Arc<Target>,
}
