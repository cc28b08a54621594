//! The AArch64 Linux core-file register notes: where each DWARF register
//! lives in `NT_PRSTATUS` (`struct elf_prstatus`, general registers as
//! `struct user_pt_regs`) and `NT_FPREGSET` (`struct user_fpsimd_state`),
//! and the pointer-authentication notes (`NT_AUXV`, `NT_ARM_PAC_MASK`).
//!
//! DWARF register numbers are AADWARF64's (the `aarch64` target preset):
//! 0-30 x0-x30, 31 sp, 32 pc, 64-95 v0-v31. The return address column is
//! x30; RA_SIGN_STATE (34) is a pseudo-register with no slot.
//!
//! Layouts, as the Linux uapi headers define them for arm64:
//! - `struct elf_prstatus` is the generic one (`include/uapi/linux/
//!   elfcore.h`): the same 112-byte header as on x86-64 (signal info,
//!   pending and held signals, pid/ppid/pgrp/sid, four `timeval`s), then
//!   `pr_reg` (`elf_gregset_t`, which arm64 defines as `struct
//!   user_pt_regs`: `regs[31]`, `sp`, `pc`, `pstate`, 34 eight-byte words),
//!   then the 4-byte `pr_fpvalid`, padded to 8: 392 bytes.
//! - `struct user_fpsimd_state` (`arch/arm64/include/uapi/asm/ptrace.h`):
//!   `vregs[32]` of 16 bytes each, then the 4-byte `fpsr` and `fpcr` and two
//!   reserved 4-byte words: 528 bytes.
//! - `struct user_pac_mask` (same header; note type `NT_ARM_PAC_MASK`):
//!   `data_mask`, `insn_mask`, 8 bytes each.
//! - `NT_PRPSINFO` is the generic `struct elf_prpsinfo` with arm64's 4-byte
//!   `__kernel_uid_t`/`__kernel_gid_t`, so it has x86-64's layout
//!   ([`super::notes::prpsinfo`] serves both).

use std::collections::BTreeMap;

pub use super::regnotes::{unset_register, Slot};

/// DWARF number of x30, the link register and return address column.
pub const LR: u64 = 30;
/// DWARF number of `sp`.
pub const SP: u64 = 31;
/// DWARF number of `pc`.
pub const PC: u64 = 32;

/// Size of `struct elf_prstatus` on arm64 Linux, in **bytes**.
pub const PRSTATUS_BYTES: usize = 392;
/// Byte offset of `pr_pid` in `struct elf_prstatus`.
const PR_PID: usize = 32;
/// Byte offset of `pr_reg` (the `user_pt_regs`) in `struct elf_prstatus`.
const PR_REG: usize = 112;
/// Byte offset of `pr_fpvalid` (after the 34 words of `user_pt_regs`).
const PR_FPVALID: usize = PR_REG + 34 * 8;
/// Size of `struct user_fpsimd_state`, in **bytes**.
pub const FPREGSET_BYTES: usize = 528;

/// The slot of DWARF register `regno`, or `None` for registers a core file
/// of this layout does not hold: x0-x30, sp and pc are words 0-32 of
/// `user_pt_regs`; v0-v31 the `vregs` of `user_fpsimd_state`.
pub fn slot(regno: u64) -> Option<Slot> {
    match regno {
        0..=PC => Some(Slot::Prstatus(PR_REG + 8 * regno as usize)),
        64..=95 => Some(Slot::Fpregset(16 * (regno as usize - 64))),
        _ => None,
    }
}

/// The layout [`super::regnotes::fill`] writes.
const LAYOUT: super::regnotes::Layout = super::regnotes::Layout { slot, registers: &[0..=SP, 64..=95], pc: PC };

/// The two note payloads, `(NT_PRSTATUS, NT_FPREGSET)`, holding
/// `registers` (DWARF number to bytes in target order; shorter values are
/// zero-extended, longer ones cut to the slot) and `pc`; `pstate` is 0
/// (EL0, flags clear) and `pr_fpvalid` 1. Registers 0-31 and 64-95 the
/// case does not give hold [`unset_register`].
pub fn notes(registers: &BTreeMap<u64, Vec<u8>>, pc: u64, pid: u32) -> (Vec<u8>, Vec<u8>) {
    let mut prstatus = vec![0u8; PRSTATUS_BYTES];
    let mut fpregs = vec![0u8; FPREGSET_BYTES];
    prstatus[PR_PID..PR_PID + 4].copy_from_slice(&pid.to_le_bytes());
    prstatus[PR_FPVALID..PR_FPVALID + 4].copy_from_slice(&1u32.to_le_bytes());
    super::regnotes::fill(&LAYOUT, &mut prstatus, &mut fpregs, registers, pc);
    (prstatus, fpregs)
}

/// `NT_ARM_PAC_MASK`, the note type of `struct user_pac_mask`
/// (`include/uapi/linux/elf.h`).
pub const NT_ARM_PAC_MASK: object::elf::NoteType = object::elf::NoteType(0x406);
/// `AT_HWCAP`, the auxiliary vector's hardware-capability entry.
const AT_HWCAP: u64 = 16;
/// `HWCAP_PACA` (bit 30 of `AT_HWCAP`, `arch/arm64/include/uapi/asm/
/// hwcap.h`): address authentication with the architected algorithm.
const HWCAP_PACA: u64 = 1 << 30;
/// The PAC mask Linux reports for a 48-bit user address space: bits
/// 48..54 (the kernel's `GENMASK(54, vabits)`; bit 55 selects the half and
/// the top byte is left to TBI), the same for data and instruction
/// addresses.
pub const PAC_MASK: u64 = 0x007f_0000_0000_0000;

/// The pointer-authentication notes a core of a PAC-enabled process
/// holds: `NT_AUXV` (`AT_HWCAP` = [`HWCAP_PACA`], then `AT_NULL`), by which
/// GDB decides the process has pointer authentication at all, and
/// `NT_ARM_PAC_MASK` (`data_mask`, `insn_mask`, both [`PAC_MASK`]), the
/// bits GDB and LLDB clear from a signed return address. As
/// `(auxv, pac_mask)` payloads.
pub fn pac_notes() -> (Vec<u8>, Vec<u8>) {
    let words = |w: &[u64]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    (words(&[AT_HWCAP, HWCAP_PACA, 0, 0]), words(&[PAC_MASK, PAC_MASK]))
}
