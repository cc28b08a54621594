//! The x86-64 Linux core-file register notes: where each DWARF register
//! lives in `NT_PRSTATUS` (`struct elf_prstatus`, general registers as
//! `struct user_regs_struct`) and `NT_FPREGSET` (`struct
//! user_fpregs_struct`, the FXSAVE layout).
//!
//! DWARF register numbers are the psABI's ("DWARF Register Number Mapping",
//! reference/x86-64 register map): 0-15 the general registers in the order
//! rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15; 16 the return address
//! (the debuggers read it as rip); 17-32 xmm0-xmm15.

pub use super::regnotes::{unset_register, Slot};

/// DWARF number of the return address column, read as `rip`.
pub const RIP: u64 = 16;
/// DWARF number of `rsp`.
pub const RSP: u64 = 7;

/// Size of `struct elf_prstatus` on x86-64 Linux, in **bytes**.
pub const PRSTATUS_BYTES: usize = 336;
/// Byte offset of `pr_pid` in `struct elf_prstatus`.
const PR_PID: usize = 32;
/// Byte offset of `pr_reg` (the `user_regs_struct`) in `struct elf_prstatus`.
const PR_REG: usize = 112;
/// Size of `struct user_fpregs_struct`, in **bytes**.
pub const FPREGSET_BYTES: usize = 512;
/// Byte offset of `xmm_space` in `struct user_fpregs_struct`.
const XMM_SPACE: usize = 160;
/// Byte offset of `mxcsr` in `struct user_fpregs_struct` (its reset value
/// 0x1f80 keeps debuggers from reporting a bogus FP state).
const MXCSR: usize = 24;

/// Index of each general register in `user_regs_struct` (8-byte slots:
/// r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip
/// cs eflags rsp ss fs_base gs_base ds es fs gs), by DWARF number 0-16.
const GPR_SLOT: [usize; 17] = [
    10, // rax
    12, // rdx
    11, // rcx
    5,  // rbx
    13, // rsi
    14, // rdi
    4,  // rbp
    19, // rsp
    9,  // r8
    8,  // r9
    7,  // r10
    6,  // r11
    3,  // r12
    2,  // r13
    1,  // r14
    0,  // r15
    16, // rip
];

/// The slot of DWARF register `regno`, or `None` for registers a core file
/// of this layout does not hold.
pub fn slot(regno: u64) -> Option<Slot> {
    match regno {
        0..=16 => Some(Slot::Prstatus(PR_REG + 8 * GPR_SLOT[regno as usize])),
        17..=32 => Some(Slot::Fpregset(XMM_SPACE + 16 * (regno as usize - 17))),
        _ => None,
    }
}

/// The layout [`super::regnotes::fill`] writes.
const LAYOUT: super::regnotes::Layout = super::regnotes::Layout { slot, registers: &[0..=32], pc: RIP };

/// The two note payloads, `(NT_PRSTATUS, NT_FPREGSET)`, holding
/// `registers` (DWARF number to bytes in target order; shorter values are
/// zero-extended, longer ones cut to the slot) and `rip = pc`. Registers
/// 0-32 the case does not give hold [`unset_register`].
pub fn notes(registers: &std::collections::BTreeMap<u64, Vec<u8>>, pc: u64, pid: u32) -> (Vec<u8>, Vec<u8>) {
    let mut prstatus = vec![0u8; PRSTATUS_BYTES];
    let mut fpregs = vec![0u8; FPREGSET_BYTES];
    prstatus[PR_PID..PR_PID + 4].copy_from_slice(&pid.to_le_bytes());
    fpregs[MXCSR..MXCSR + 4].copy_from_slice(&0x1f80u32.to_le_bytes());
    super::regnotes::fill(&LAYOUT, &mut prstatus, &mut fpregs, registers, pc);
    (prstatus, fpregs)
}
