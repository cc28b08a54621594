//! The one place that decides the per-architecture facts of a synthesised
//! debuggee: ELF machine number, code bytes, and the core's register-note
//! layout ([`super::x86_64`], [`super::aarch64`]).

use super::regnotes::Slot;
use super::{aarch64, x86_64, Unrepresentable};
use dwarfcheck_core::target::Arch;
use std::collections::BTreeMap;

/// A machine the synthesiser writes executables and core files for (both
/// little-endian, 64-bit, Linux).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machine {
    /// x86-64 (`EM_X86_64`).
    X86_64,
    /// AArch64 (`EM_AARCH64`).
    Aarch64,
}

/// `nop` on x86-64, one byte.
const X86_NOP: u8 = 0x90;
/// `ret` on x86-64, one byte.
const X86_RET: u8 = 0xc3;
/// `nop` on AArch64 (`0xd503201f`), one 4-byte instruction.
const A64_NOP: u32 = 0xd503_201f;
/// `ret` (`ret x30`) on AArch64 (`0xd65f03c0`).
const A64_RET: u32 = 0xd65f_03c0;

impl Machine {
    /// The machine of `arch`, if the synthesiser writes it.
    pub fn of(arch: Arch) -> Option<Machine> {
        match arch {
            Arch::X86_64 => Some(Machine::X86_64),
            Arch::Aarch64 => Some(Machine::Aarch64),
            _ => None,
        }
    }

    /// The machine of the target named `name` with architecture `arch`.
    ///
    /// Errors: [`Unrepresentable`] for a machine not synthesised.
    pub fn for_target(arch: Arch, name: &str) -> Result<Machine, Unrepresentable> {
        Machine::of(arch)
            .ok_or_else(|| Unrepresentable(format!("target {name} (only x86_64 and aarch64 are synthesised)")))
    }

    /// `e_machine` of the ELF header.
    pub fn e_machine(self) -> object::elf::Machine {
        match self {
            Machine::X86_64 => object::elf::EM_X86_64,
            Machine::Aarch64 => object::elf::EM_AARCH64,
        }
    }

    /// `len` bytes of `nop`s. On AArch64 a tail shorter than an
    /// instruction (a range not a multiple of 4 bytes) is zero.
    pub fn nops(self, len: usize) -> Vec<u8> {
        match self {
            Machine::X86_64 => vec![X86_NOP; len],
            Machine::Aarch64 => {
                let mut v: Vec<u8> = A64_NOP.to_le_bytes().iter().copied().cycle().take(len / 4 * 4).collect();
                v.resize(len, 0);
                v
            }
        }
    }

    /// A function body of `len` bytes: `nop`s ending in a `ret` (where
    /// `len` holds one: at least 1 byte on x86-64, 4 on AArch64).
    pub fn function(self, len: usize) -> Vec<u8> {
        let mut v = self.nops(len);
        match self {
            Machine::X86_64 if len >= 1 => v[len - 1] = X86_RET,
            Machine::Aarch64 if len >= 4 => {
                let at = len / 4 * 4 - 4;
                v[at..at + 4].copy_from_slice(&A64_RET.to_le_bytes());
            }
            _ => {}
        }
        v
    }

    /// The DWARF number of the register that holds the program counter in
    /// the core (x86-64's return address column 16, read as `rip`;
    /// AArch64's `pc`, 32).
    pub fn pc_register(self) -> u64 {
        match self {
            Machine::X86_64 => x86_64::RIP,
            Machine::Aarch64 => aarch64::PC,
        }
    }

    /// The DWARF number of the stack pointer.
    pub fn sp_register(self) -> u64 {
        match self {
            Machine::X86_64 => x86_64::RSP,
            Machine::Aarch64 => aarch64::SP,
        }
    }

    /// Where DWARF register `regno` lives in the core's notes, or `None`.
    pub fn slot(self, regno: u64) -> Option<Slot> {
        match self {
            Machine::X86_64 => x86_64::slot(regno),
            Machine::Aarch64 => aarch64::slot(regno),
        }
    }

    /// The register notes `(NT_PRSTATUS, NT_FPREGSET)` payloads for
    /// `registers` with the thread stopped at `pc`, process id `pid`.
    pub fn notes(self, registers: &BTreeMap<u64, Vec<u8>>, pc: u64, pid: u32) -> (Vec<u8>, Vec<u8>) {
        match self {
            Machine::X86_64 => x86_64::notes(registers, pc, pid),
            Machine::Aarch64 => aarch64::notes(registers, pc, pid),
        }
    }

    /// The `.debug_frame` code alignment factor (DWARF 5 §6.4.1): the
    /// instruction size, 1 on x86-64, 4 on AArch64.
    pub fn code_alignment(self) -> u8 {
        match self {
            Machine::X86_64 => 1,
            Machine::Aarch64 => 4,
        }
    }

    /// Alignment of an instruction's address, in **bytes** (x86-64: 1;
    /// AArch64: 4, A64 instructions are 4-byte aligned).
    pub fn instruction_alignment(self) -> u64 {
        u64::from(self.code_alignment())
    }

    /// The DWARF return address column: x86-64's 16 (read as `rip`), the
    /// link register x30 on AArch64.
    pub fn return_address_column(self) -> u64 {
        match self {
            Machine::X86_64 => x86_64::RIP,
            Machine::Aarch64 => aarch64::LR,
        }
    }

    /// The CFA at a function's entry, `(register, offset in bytes)`: the
    /// stack pointer before the call. On x86-64 `call` pushed the 8-byte
    /// return address, so `rsp + 8`; on AArch64 `bl` leaves it in x30 and
    /// the stack untouched, so `sp + 0`.
    pub fn entry_cfa(self) -> (u64, i32) {
        match self {
            Machine::X86_64 => (x86_64::RSP, 8),
            Machine::Aarch64 => (aarch64::SP, 0),
        }
    }
}
