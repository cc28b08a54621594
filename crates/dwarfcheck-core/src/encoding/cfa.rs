//! Call frame instruction encodings `DW_CFA_*` (DWARF 5 §7.24, Table 7.29),
//! the GNU and AArch64 vendor instructions, and the heterogeneous-debugging
//! `DW_CFA_LLVM_def_aspace_cfa(_sf)` (hetero-2020 "Call Frame Information"
//! encodings).
//!
//! Instructions whose high two bits are non-zero (`advance_loc`, `offset`,
//! `restore`) carry an operand in their low six bits.

use super::Arch;

/// The shape of one call frame instruction operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CfaOperand {
    /// Unsigned LEB128 (register numbers, factored unsigned offsets).
    Uleb,
    /// Signed LEB128 (factored signed offsets).
    Sleb,
    /// 1-byte delta (`advance_loc1`).
    U8,
    /// 2-byte delta (`advance_loc2`).
    U16,
    /// 4-byte delta (`advance_loc4`).
    U32,
    /// A target address; in `.eh_frame` encoded with the FDE pointer encoding.
    Addr,
    /// ULEB128 length followed by a DWARF expression of that many bytes.
    Block,
}

/// Every call frame instruction the tables know.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cfa {
    AdvanceLoc,
    Offset,
    Restore,
    Nop,
    SetLoc,
    AdvanceLoc1,
    AdvanceLoc2,
    AdvanceLoc4,
    OffsetExtended,
    RestoreExtended,
    Undefined,
    SameValue,
    Register,
    RememberState,
    RestoreState,
    DefCfa,
    DefCfaRegister,
    DefCfaOffset,
    DefCfaExpression,
    Expression,
    OffsetExtendedSf,
    DefCfaSf,
    DefCfaOffsetSf,
    ValOffset,
    ValOffsetSf,
    ValExpression,
    GnuWindowSave,
    Aarch64NegateRaState,
    GnuArgsSize,
    GnuNegativeOffsetExtended,
    LlvmDefAspaceCfa,
    LlvmDefAspaceCfaSf,
}

/// One row of the call frame instruction table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CfaSpec {
    /// The instruction.
    pub cfa: Cfa,
    /// llvm-dwarfdump's spelling, e.g. `DW_CFA_def_cfa`.
    pub name: &'static str,
    /// Operands after the opcode byte (the low-6-bit operand of the three
    /// packed instructions is not listed).
    pub operands: &'static [CfaOperand],
}

use CfaOperand::*;

const fn s(cfa: Cfa, name: &'static str, operands: &'static [CfaOperand]) -> CfaSpec {
    CfaSpec { cfa, name, operands }
}

/// High-two-bit opcode of `DW_CFA_advance_loc`.
pub const ADVANCE_LOC: u8 = 0x40;
/// High-two-bit opcode of `DW_CFA_offset`.
pub const OFFSET: u8 = 0x80;
/// High-two-bit opcode of `DW_CFA_restore`.
pub const RESTORE: u8 = 0xc0;

/// Instructions with zero high bits, by their full opcode byte.
const EXTENDED: &[(u8, CfaSpec)] = &[
    (0x00, s(Cfa::Nop, "DW_CFA_nop", &[])),
    (0x01, s(Cfa::SetLoc, "DW_CFA_set_loc", &[Addr])),
    (0x02, s(Cfa::AdvanceLoc1, "DW_CFA_advance_loc1", &[U8])),
    (0x03, s(Cfa::AdvanceLoc2, "DW_CFA_advance_loc2", &[U16])),
    (0x04, s(Cfa::AdvanceLoc4, "DW_CFA_advance_loc4", &[U32])),
    (0x05, s(Cfa::OffsetExtended, "DW_CFA_offset_extended", &[Uleb, Uleb])),
    (0x06, s(Cfa::RestoreExtended, "DW_CFA_restore_extended", &[Uleb])),
    (0x07, s(Cfa::Undefined, "DW_CFA_undefined", &[Uleb])),
    (0x08, s(Cfa::SameValue, "DW_CFA_same_value", &[Uleb])),
    (0x09, s(Cfa::Register, "DW_CFA_register", &[Uleb, Uleb])),
    (0x0a, s(Cfa::RememberState, "DW_CFA_remember_state", &[])),
    (0x0b, s(Cfa::RestoreState, "DW_CFA_restore_state", &[])),
    (0x0c, s(Cfa::DefCfa, "DW_CFA_def_cfa", &[Uleb, Uleb])),
    (0x0d, s(Cfa::DefCfaRegister, "DW_CFA_def_cfa_register", &[Uleb])),
    (0x0e, s(Cfa::DefCfaOffset, "DW_CFA_def_cfa_offset", &[Uleb])),
    (0x0f, s(Cfa::DefCfaExpression, "DW_CFA_def_cfa_expression", &[Block])),
    (0x10, s(Cfa::Expression, "DW_CFA_expression", &[Uleb, Block])),
    (0x11, s(Cfa::OffsetExtendedSf, "DW_CFA_offset_extended_sf", &[Uleb, Sleb])),
    (0x12, s(Cfa::DefCfaSf, "DW_CFA_def_cfa_sf", &[Uleb, Sleb])),
    (0x13, s(Cfa::DefCfaOffsetSf, "DW_CFA_def_cfa_offset_sf", &[Sleb])),
    (0x14, s(Cfa::ValOffset, "DW_CFA_val_offset", &[Uleb, Uleb])),
    (0x15, s(Cfa::ValOffsetSf, "DW_CFA_val_offset_sf", &[Uleb, Sleb])),
    (0x16, s(Cfa::ValExpression, "DW_CFA_val_expression", &[Uleb, Block])),
    (0x2e, s(Cfa::GnuArgsSize, "DW_CFA_GNU_args_size", &[Uleb])),
    (0x2f, s(Cfa::GnuNegativeOffsetExtended, "DW_CFA_GNU_negative_offset_extended", &[Uleb, Uleb])),
    (0x30, s(Cfa::LlvmDefAspaceCfa, "DW_CFA_LLVM_def_aspace_cfa", &[Uleb, Uleb, Uleb])),
    (0x31, s(Cfa::LlvmDefAspaceCfaSf, "DW_CFA_LLVM_def_aspace_cfa_sf", &[Uleb, Sleb, Uleb])),
];

const GNU_WINDOW_SAVE: CfaSpec = s(Cfa::GnuWindowSave, "DW_CFA_GNU_window_save", &[]);
const AARCH64_NEGATE_RA_STATE: CfaSpec = s(Cfa::Aarch64NegateRaState, "DW_CFA_AARCH64_negate_ra_state", &[]);

/// Opcode 0x2d: `DW_CFA_GNU_window_save` on SPARC, reused by AArch64 as
/// `DW_CFA_AARCH64_negate_ra_state`; the target decides.
pub const WINDOW_SAVE_OR_NEGATE_RA_STATE: u8 = 0x2d;

/// Looks up an opcode byte. For the packed instructions (high bits set) the
/// returned spec is that of the family; the caller takes `opcode & 0x3f` as
/// its first operand. `arch` resolves opcode 0x2d.
pub fn lookup(arch: Arch, opcode: u8) -> Option<CfaSpec> {
    match opcode & 0xc0 {
        ADVANCE_LOC => Some(s(Cfa::AdvanceLoc, "DW_CFA_advance_loc", &[])),
        OFFSET => Some(s(Cfa::Offset, "DW_CFA_offset", &[Uleb])),
        RESTORE => Some(s(Cfa::Restore, "DW_CFA_restore", &[])),
        _ if opcode == WINDOW_SAVE_OR_NEGATE_RA_STATE => {
            Some(if arch == Arch::Aarch64 { AARCH64_NEGATE_RA_STATE } else { GNU_WINDOW_SAVE })
        }
        _ => EXTENDED.iter().find(|(c, _)| *c == opcode).map(|(_, s)| *s),
    }
}

/// The opcode byte (before any packed operand) and spec for an instruction.
pub fn encoding_of(cfa: Cfa) -> Option<(u8, CfaSpec)> {
    match cfa {
        Cfa::AdvanceLoc | Cfa::Offset | Cfa::Restore => {
            let code = match cfa {
                Cfa::AdvanceLoc => ADVANCE_LOC,
                Cfa::Offset => OFFSET,
                _ => RESTORE,
            };
            lookup(Arch::X86_64, code).map(|s| (code, s))
        }
        Cfa::GnuWindowSave => Some((WINDOW_SAVE_OR_NEGATE_RA_STATE, GNU_WINDOW_SAVE)),
        Cfa::Aarch64NegateRaState => Some((WINDOW_SAVE_OR_NEGATE_RA_STATE, AARCH64_NEGATE_RA_STATE)),
        _ => EXTENDED.iter().find(|(_, s)| s.cfa == cfa).map(|(c, s)| (*c, *s)),
    }
}

/// Looks an instruction up by its llvm-dwarfdump name.
pub fn by_name(name: &str) -> Option<Cfa> {
    [
        s(Cfa::AdvanceLoc, "DW_CFA_advance_loc", &[]),
        s(Cfa::Offset, "DW_CFA_offset", &[]),
        s(Cfa::Restore, "DW_CFA_restore", &[]),
        GNU_WINDOW_SAVE,
        AARCH64_NEGATE_RA_STATE,
    ]
    .iter()
    .chain(EXTENDED.iter().map(|(_, s)| s))
    .find(|s| s.name == name)
    .map(|s| s.cfa)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_7_29_codes() {
        // Hand-checked against DWARF 5 Table 7.29.
        assert_eq!(lookup(Arch::X86_64, 0x0c).unwrap().cfa, Cfa::DefCfa);
        assert_eq!(lookup(Arch::X86_64, 0x16).unwrap().cfa, Cfa::ValExpression);
        assert_eq!(lookup(Arch::X86_64, 0x45).unwrap().cfa, Cfa::AdvanceLoc);
        assert_eq!(lookup(Arch::X86_64, 0x86).unwrap().cfa, Cfa::Offset);
        assert_eq!(lookup(Arch::X86_64, 0xc3).unwrap().cfa, Cfa::Restore);
        assert_eq!(lookup(Arch::X86_64, 0x17), None);
        assert_eq!(lookup(Arch::Aarch64, 0x2d).unwrap().cfa, Cfa::Aarch64NegateRaState);
        assert_eq!(lookup(Arch::X86_64, 0x2d).unwrap().cfa, Cfa::GnuWindowSave);
        assert_eq!(lookup(Arch::Amdgpu, 0x30).unwrap().operands, &[Uleb, Uleb, Uleb]);
        for c in 0u8..=0x3f {
            if let Some(spec) = lookup(Arch::X86_64, c) {
                assert_eq!(by_name(spec.name), Some(spec.cfa));
                assert_eq!(encoding_of(spec.cfa).map(|e| e.0), Some(c));
            }
        }
    }
}
