//! Architecture families: the one fact about the target that changes how
//! bytes are named (call frame instruction 0x2d, `DW_CFA_GNU_window_save` or
//! `DW_CFA_AARCH64_negate_ra_state`, DWARF 5 §7.24 and AADWARF64).

/// Architecture family; decides target-specific encodings such as CFA
/// opcode 0x2d.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Arch {
    /// x86-64 (System V psABI).
    #[cfg_attr(feature = "serde", serde(rename = "x86_64"))]
    X86_64,
    /// AArch64 (AADWARF64).
    Aarch64,
    /// AMD GPU (AMDGPUUsage).
    Amdgpu,
    /// Anything else, described inline.
    Other,
}
