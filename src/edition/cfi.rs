//! Edition rules for call frame instructions (DWARF 5 §6.4.2, hetero-2020
//! "Call Frame Information" > "Call Frame Instructions").
//!
//! - Rule [`REASON_EXTENSION_INSTRUCTION`]: `DW_CFA_LLVM_def_aspace_cfa` and
//!   `DW_CFA_LLVM_def_aspace_cfa_sf` (hetero-2020 "CFA Definition
//!   Instructions") need [`Edition::Hetero2020`].
//! - Rule [`REASON_VENDOR_INSTRUCTION`]: `DW_CFA_GNU_args_size`,
//!   `DW_CFA_GNU_negative_offset_extended`, `DW_CFA_GNU_window_save` and
//!   AArch64's `DW_CFA_AARCH64_negate_ra_state` (AADWARF64 "Call frame
//!   instructions", which GCC emits) are vendor instructions:
//!   [`Edition::Dwarf5Gnu`].
//! - The DWARF expressions of `DW_CFA_def_cfa_expression`,
//!   `DW_CFA_expression` and `DW_CFA_val_expression` are classified by
//!   [`super::expr`] as [`Usage::Value`]: DWARF 5 §6.4.2.2/§6.4.2.3 define
//!   their results as a value or an address, so a register, implicit,
//!   `DW_OP_stack_value` or composition operation there needs hetero-2020,
//!   which evaluates them as location descriptions. The classification
//!   carries the instruction's offset.
//! - Undecodable input (unknown opcode for the architecture, truncated
//!   operand, LEB128 overflow): [`Edition::Hetero2020`], conservatively, as
//!   for expressions ([`super::expr::REASON_UNDECODABLE`]).
//!
//! Operands are read as [`dwarfcheck_core::encoding::cfa`] describes them;
//! `DW_CFA_set_loc`'s address is `p.address_size` bytes (the `.debug_frame`
//! encoding; `.eh_frame` producers rarely use it).

use super::expr::{explain_expr, Usage, REASON_UNDECODABLE};
use super::{Classification, Edition};
use crate::asm::decode::{read_fixed, Params};
use dwarfcheck_core::encoding::cfa::{lookup, Cfa, CfaOperand};
use dwarfcheck_core::encoding::leb128::{read_sleb, read_uleb};
use dwarfcheck_core::target::Arch;

/// Rule: a hetero-2020 call frame instruction is used.
pub const REASON_EXTENSION_INSTRUCTION: &str = "extension-cfa-instruction";
/// Rule: a GNU or AArch64 vendor call frame instruction is used.
pub const REASON_VENDOR_INSTRUCTION: &str = "vendor-cfa-instruction";

/// Classifies a sequence of call frame instructions (a CIE's initial
/// instructions or an FDE's instructions) for `arch`, which decides
/// opcode 0x2d. `p` gives the vendor profile and operand sizes for
/// embedded DWARF expressions.
pub fn classify_cfi(instructions: &[u8], arch: Arch, p: &Params) -> Edition {
    explain_cfi(instructions, arch, p).edition
}

/// Like [`classify_cfi`], with the deciding rule and instruction offset.
pub fn explain_cfi(instructions: &[u8], arch: Arch, p: &Params) -> Classification {
    let mut result = Classification::DWARF5;
    let mut pos = 0;
    let undecodable = |at| Classification::new(Edition::Hetero2020, REASON_UNDECODABLE, at);
    while pos < instructions.len() {
        let start = pos;
        let Some(spec) = lookup(arch, instructions[pos]) else {
            return undecodable(start);
        };
        pos += 1;
        for operand in spec.operands {
            let rest = &instructions[pos..];
            let used = match operand {
                CfaOperand::Uleb => read_uleb(rest).map(|(_, n)| n).ok(),
                CfaOperand::Sleb => read_sleb(rest).map(|(_, n)| n).ok(),
                CfaOperand::U8 => read_fixed(rest, 1, p.endian).map(|_| 1),
                CfaOperand::U16 => read_fixed(rest, 2, p.endian).map(|_| 2),
                CfaOperand::U32 => read_fixed(rest, 4, p.endian).map(|_| 4),
                CfaOperand::Addr => {
                    let n = usize::from(p.address_size);
                    (matches!(n, 1 | 2 | 4 | 8) && rest.len() >= n).then_some(n)
                }
                CfaOperand::Block => match read_uleb(rest) {
                    Ok((len, n)) if len <= (rest.len() - n) as u64 => {
                        let expr = &rest[n..n + len as usize];
                        let c = explain_expr(expr, p, Usage::Value);
                        result = result.max(Classification { at: Some(start), ..c });
                        Some(n + len as usize)
                    }
                    _ => None,
                },
            };
            match used {
                Some(n) => pos += n,
                None => return undecodable(start),
            }
        }
        let vendor = match spec.cfa {
            Cfa::LlvmDefAspaceCfa | Cfa::LlvmDefAspaceCfaSf => {
                Some(Classification::new(Edition::Hetero2020, REASON_EXTENSION_INSTRUCTION, start))
            }
            Cfa::GnuArgsSize | Cfa::GnuNegativeOffsetExtended | Cfa::GnuWindowSave | Cfa::Aarch64NegateRaState => {
                Some(Classification::new(Edition::Dwarf5Gnu, REASON_VENDOR_INSTRUCTION, start))
            }
            _ => None,
        };
        if let Some(v) = vendor {
            result = result.max(v);
        }
        if result.edition == Edition::Hetero2020 {
            return result;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edition::expr::{REASON_EXTENSION_OP, REASON_LOCATION_IN_VALUE};
    use dwarfcheck_core::encoding::Format;
    use dwarfcheck_core::encoding::VendorProfile;
    use dwarfcheck_core::target::Endian;

    fn explain(bytes: &[u8], arch: Arch, v: &VendorProfile) -> Classification {
        let p = Params { vendor: v, endian: Endian::Little, format: Format::Dwarf32, address_size: 8 };
        explain_cfi(bytes, arch, &p)
    }

    fn check(bytes: &[u8], arch: Arch, edition: Edition, reason: Option<&str>, at: Option<usize>) {
        let c = explain(bytes, arch, &VendorProfile::hetero_2020());
        assert_eq!((c.edition, c.reason, c.at), (edition, reason, at), "{bytes:02x?}");
    }

    // Instruction bytes are encoded by hand from DWARF 5 Table 7.29 and the
    // hetero-2020 CFA encodings (0x30, 0x31).
    #[test]
    fn plain_dwarf5_programs() {
        // def_cfa r7 8; offset r16 1 (0x80|16); advance_loc 1; restore r6;
        // advance_loc1/2/4; set_loc (8-byte address); remember/restore state.
        let prog = [
            0x0c, 0x07, 0x08, 0x90, 0x01, 0x41, 0xc6, 0x02, 0xff, 0x03, 0x00, 0x01, 0x04, 1, 2, 3, 4, 0x01, 0, 0, 0, 0,
            0, 0, 0, 0, 0x0a, 0x0b, 0x00,
        ];
        check(&prog, Arch::X86_64, Edition::Dwarf5, None, None);
        // def_cfa_expression { breg7 8 }; expression r16 { breg7 -8 }.
        check(&[0x0f, 0x02, 0x77, 0x08, 0x10, 0x10, 0x02, 0x77, 0x78], Arch::X86_64, Edition::Dwarf5, None, None);
        check(&[], Arch::X86_64, Edition::Dwarf5, None, None);
    }

    #[test]
    fn vendor_instructions() {
        check(
            &[0x0c, 0x07, 0x08, 0x2e, 0x10],
            Arch::X86_64,
            Edition::Dwarf5Gnu,
            Some(REASON_VENDOR_INSTRUCTION),
            Some(3),
        );
        check(&[0x2d], Arch::Aarch64, Edition::Dwarf5Gnu, Some(REASON_VENDOR_INSTRUCTION), Some(0));
        check(&[0x2f, 0x10, 0x01], Arch::X86_64, Edition::Dwarf5Gnu, Some(REASON_VENDOR_INSTRUCTION), Some(0));
    }

    #[test]
    fn hetero_instructions_and_expressions() {
        // DW_CFA_LLVM_def_aspace_cfa r7 8 aspace 5; _sf r7 -1 aspace 5.
        check(
            &[0x0c, 0x07, 0x08, 0x30, 0x07, 0x08, 0x05],
            Arch::Amdgpu,
            Edition::Hetero2020,
            Some(REASON_EXTENSION_INSTRUCTION),
            Some(3),
        );
        check(
            &[0x31, 0x07, 0x7f, 0x05],
            Arch::Amdgpu,
            Edition::Hetero2020,
            Some(REASON_EXTENSION_INSTRUCTION),
            Some(0),
        );
        // def_cfa_expression { reg0 }: a register location where DWARF 5
        // wants an address.
        check(
            &[0x2e, 0x00, 0x0f, 0x01, 0x50],
            Arch::X86_64,
            Edition::Hetero2020,
            Some(REASON_LOCATION_IN_VALUE),
            Some(2),
        );
        // val_expression r16 { breg7 8, stack_value }.
        check(
            &[0x16, 0x10, 0x03, 0x77, 0x08, 0x9f],
            Arch::X86_64,
            Edition::Hetero2020,
            Some(REASON_LOCATION_IN_VALUE),
            Some(0),
        );
        // expression r16 { LLVM_offset_uconst 8 } under the hetero-2020 profile.
        check(&[0x10, 0x10, 0x02, 0xe4, 0x08], Arch::Amdgpu, Edition::Hetero2020, Some(REASON_EXTENSION_OP), Some(0));
        // The same expression under llvm-user encodes as 0xe9 0x05 0x08.
        let c = explain(&[0x10, 0x10, 0x03, 0xe9, 0x05, 0x08], Arch::Amdgpu, &VendorProfile::llvm_user());
        assert_eq!((c.edition, c.reason), (Edition::Hetero2020, Some(REASON_EXTENSION_OP)));
    }

    #[test]
    fn undecodable_is_conservative() {
        // 0x17 is not in Table 7.29.
        check(&[0x0c, 0x07, 0x08, 0x17], Arch::X86_64, Edition::Hetero2020, Some(REASON_UNDECODABLE), Some(3));
        check(&[0x0c, 0x07], Arch::X86_64, Edition::Hetero2020, Some(REASON_UNDECODABLE), Some(0));
        check(&[0x0f, 0x05, 0x77], Arch::X86_64, Edition::Hetero2020, Some(REASON_UNDECODABLE), Some(0));
        // An expression that does not decode.
        check(&[0x0f, 0x01, 0xff], Arch::X86_64, Edition::Hetero2020, Some(REASON_UNDECODABLE), Some(0));
    }
}
