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

/// The general registers a debugger shows for a frame, by DWARF number and
/// the name GDB and LLDB both read them by: x86-64's rax .. r15 and the
/// return address column as rip (psABI numbering).
const X86_GENERAL: [(u64, &str); 17] = [
    (0, "rax"),
    (1, "rdx"),
    (2, "rcx"),
    (3, "rbx"),
    (4, "rsi"),
    (5, "rdi"),
    (6, "rbp"),
    (7, "rsp"),
    (8, "r8"),
    (9, "r9"),
    (10, "r10"),
    (11, "r11"),
    (12, "r12"),
    (13, "r13"),
    (14, "r14"),
    (15, "r15"),
    (16, "rip"),
];

/// AArch64's x0 .. x30 and sp (AADWARF64 0-31).
const A64_GENERAL: [(u64, &str); 32] = [
    (0, "x0"),
    (1, "x1"),
    (2, "x2"),
    (3, "x3"),
    (4, "x4"),
    (5, "x5"),
    (6, "x6"),
    (7, "x7"),
    (8, "x8"),
    (9, "x9"),
    (10, "x10"),
    (11, "x11"),
    (12, "x12"),
    (13, "x13"),
    (14, "x14"),
    (15, "x15"),
    (16, "x16"),
    (17, "x17"),
    (18, "x18"),
    (19, "x19"),
    (20, "x20"),
    (21, "x21"),
    (22, "x22"),
    (23, "x23"),
    (24, "x24"),
    (25, "x25"),
    (26, "x26"),
    (27, "x27"),
    (28, "x28"),
    (29, "x29"),
    (30, "x30"),
    (31, "sp"),
];

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

    /// The general registers (DWARF number, debugger name) an unwinder's
    /// caller frame is compared on: x86-64's DWARF 0-16 (rax .. r15, rip);
    /// AArch64's 0-31 (x0 .. x30, sp). AArch64's pc (32) is the caller pc,
    /// compared as such, and RA_SIGN_STATE (34) is never a caller register.
    pub fn general_registers(self) -> &'static [(u64, &'static str)] {
        match self {
            Machine::X86_64 => &X86_GENERAL,
            Machine::Aarch64 => &A64_GENERAL,
        }
    }

    /// Where DWARF register `regno` lives in the core's notes, or `None`.
    pub fn slot(self, regno: u64) -> Option<Slot> {
        match self {
            Machine::X86_64 => x86_64::slot(regno),
            Machine::Aarch64 => aarch64::slot(regno),
        }
    }

    /// Appends the notes a core of this machine holds besides the
    /// registers and the process notes: on AArch64 the pointer
    /// authentication notes ([`aarch64::pac_notes`]); none on x86-64.
    pub fn machine_notes(self, out: &mut Vec<u8>) {
        if self == Machine::Aarch64 {
            let (auxv, mask) = aarch64::pac_notes();
            super::notes::note(out, object::elf::NT_AUXV, object::elf::ELF_NOTE_CORE, &auxv);
            super::notes::note(out, aarch64::NT_ARM_PAC_MASK, b"LINUX", &mask);
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
