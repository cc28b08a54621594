//! Intel GPU target presets: GRFs, flag and address registers under IGC's DWARF register numbering, and a scratch address space.
//!
//! Register numbering (IGC's `RegisterNumbering` in `IGC/DebugInfo/DIE.hpp`
//! of intel/intel-graphics-compiler, restated): 0 is the instruction
//! pointer, 1 the execution mask, 5..=10 hold state base addresses (6 the
//! scratch base), general register `rN` is 16 + N, address register `a0`
//! is 272 and flag register `fN` is 288 + N. IGC emits `DW_OP_regx 143`
//! for r127, which is how the committed blobs' IGC DWARF names it.
//!
//! Register files per platform family (IGC's platform tables, restated):
//! Gen9 (`skl`), Gen12LP (`tgllp`) and Xe-HPG (`dg2`) have 128 GRFs of 32
//! bytes and two 32-bit flag registers; Xe-HPC (`pvc`) in large-GRF mode has
//! 256 GRFs of 64 bytes and four flag registers. `a0` is 32 bytes (16
//! sub-registers of 2 bytes) everywhere.
//!
//! Address spaces (dwarfcheck's choice; IGC's DWARF reaches scratch through
//! the scratch-base register instead of an address space): 0 the generic
//! (64-bit) space, [`ASPACE_SCRATCH`] the per-thread scratch (private)
//! memory that BE_FP-relative and absolute vISA memory locations live in,
//! with 32-bit addresses. Scratch is modelled as shared storage: each case
//! is one thread, viewed through one SIMD channel (one lane).

use super::{AddressSpace, Arch, Endian, Register, Target};
use crate::encoding::VendorProfile;

/// DWARF number of the instruction pointer.
pub const IP: u64 = 0;
/// DWARF number of the execution mask.
pub const EMASK: u64 = 1;
/// DWARF number of `r0`; `rN` is `GRF_BASE + N`.
pub const GRF_BASE: u64 = 16;
/// DWARF number of `a0`.
pub const A0: u64 = 272;
/// DWARF number of `f0`; `fN` is `F0_BASE + N`.
pub const F0_BASE: u64 = 288;
/// DWARF address space identifier of scratch memory.
pub const ASPACE_SCRATCH: u64 = 1;

/// The shape of one platform family's register file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterFile {
    /// Number of general registers (`r0` ..).
    pub grf_count: u32,
    /// Width of one general register in **bytes**.
    pub grf_bytes: u32,
    /// Number of 32-bit flag registers (`f0` ..).
    pub flag_count: u32,
}

/// Gen9, Gen12LP and Xe-HPG: 128 GRFs of 32 bytes, two flag registers.
pub const GEN_128X32: RegisterFile = RegisterFile { grf_count: 128, grf_bytes: 32, flag_count: 2 };
/// Xe-HPC in large-GRF mode: 256 GRFs of 64 bytes, four flag registers.
pub const XE_HPC_256X64: RegisterFile = RegisterFile { grf_count: 256, grf_bytes: 64, flag_count: 4 };

/// Width of `a0` in **bytes** on every family.
pub const A0_BYTES: u32 = 32;

/// The preset named `name` for register file `file`: `ip` and `emask` (32
/// bits each), every GRF (`grf_bytes` × 8 bits), `a0` (256 bits) and the
/// flag registers (32 bits each); the generic and scratch address spaces;
/// the hetero-2020 vendor profile (the lowering of vISA locations uses
/// `DW_OP_LLVM_offset_uconst` and `DW_OP_LLVM_form_aspace_address`); one
/// lane; `ip` as the return address column.
pub fn intel_gpu(name: &str, file: RegisterFile) -> Target {
    let reg = |number: u64, name: String, bits: u32| Register { number, name, bits };
    let mut registers = vec![reg(IP, "ip".into(), 32), reg(EMASK, "emask".into(), 32)];
    registers.extend((0..u64::from(file.grf_count)).map(|i| reg(GRF_BASE + i, format!("r{i}"), file.grf_bytes * 8)));
    registers.push(reg(A0, "a0".into(), A0_BYTES * 8));
    registers.extend((0..u64::from(file.flag_count)).map(|i| reg(F0_BASE + i, format!("f{i}"), 32)));
    let space = |number: u64, name: &str, address_bits: u32| AddressSpace {
        number,
        name: name.into(),
        address_bits,
        per_thread: false,
        per_lane: false,
    };
    Target {
        name: name.to_string(),
        arch: Arch::Other,
        endian: Endian::Little,
        registers,
        address_spaces: vec![space(0, "generic", 64), space(ASPACE_SCRATCH, "scratch", 32)],
        lanes: 1,
        vendor: VendorProfile::hetero_2020(),
        return_address_register: IP,
    }
}
