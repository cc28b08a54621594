//! The 32-bit and 64-bit DWARF formats (DWARF 5 §7.4): the size of
//! section offsets and of the initial length.

/// 32-bit or 64-bit DWARF format (DWARF 5 §7.4): sets the size of
/// section-offset operands such as `DW_OP_call_ref`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Format {
    /// Offsets are 4 bytes.
    #[default]
    Dwarf32,
    /// Offsets are 8 bytes.
    Dwarf64,
}

impl Format {
    /// Size of a section offset in **bytes**.
    pub fn offset_bytes(self) -> usize {
        match self {
            Format::Dwarf32 => 4,
            Format::Dwarf64 => 8,
        }
    }
}
