//! The Intel GPU target preset the vISA lowering evaluates against: GRFs,
//! flag and address registers under IGC's DWARF register numbering, and
//! the scratch address space (kept here, outside `crates/`).
//!
//! Register numbering (IGC's `RegisterNumbering` in `IGC/DebugInfo/DIE.hpp`
//! of intel/intel-graphics-compiler, restated): 0 is the instruction
//! pointer, 1 the execution mask, 5..=10 hold state base addresses (6 the
//! scratch base), general register `rN` is 16 + N, address register `a0`
//! is 272 and flag register `fN` is 288 + N. IGC emits `DW_OP_regx 143`
//! for r127, which is how the committed blobs' IGC DWARF names it.
//!
//! Address spaces (dwarfcheck's choice; IGC's DWARF reaches scratch through
//! the scratch-base register instead of an address space): 0 the generic
//! (64-bit) space, [`ASPACE_SCRATCH`] the per-thread scratch (private)
//! memory that BE_FP-relative and absolute vISA memory locations live in,
//! with 32-bit addresses. Scratch is modelled as shared storage: each case
//! is one thread.

use super::platform::Platform;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::target::{AddressSpace, Arch, Endian, Register, Target};

/// DWARF number of the instruction pointer.
pub const IP: u64 = 0;
/// DWARF number of `r0`; `rN` is `GRF_BASE + N`.
pub const GRF_BASE: u64 = 16;
/// DWARF number of `a0`.
pub const A0_BASE: u64 = 272;
/// DWARF number of `f0`; `fN` is `F0_BASE + N`.
pub const F0_BASE: u64 = 288;
/// DWARF address space identifier of scratch memory.
pub const ASPACE_SCRATCH: u64 = 1;

/// The preset for `platform` (`intel-gpu-<platform>`): IP and EMask (32
/// bits each), every GRF (`grf_bytes` × 8 bits), a0 and the flag registers
/// (32 bits each); the hetero-2020 vendor profile (for
/// `DW_OP_LLVM_offset_uconst` and `DW_OP_LLVM_form_aspace_address`); one
/// lane (a case evaluates one SIMD channel's view of the registers).
pub fn target(platform: Platform) -> Target {
    let reg = |number: u64, name: String, bits: u32| Register { number, name, bits };
    let mut registers = vec![reg(IP, "ip".into(), 32), reg(1, "emask".into(), 32)];
    registers.extend(
        (0..u64::from(platform.grf_count())).map(|i| reg(GRF_BASE + i, format!("r{i}"), platform.grf_bytes() * 8)),
    );
    registers.push(reg(A0_BASE, "a0".into(), platform.address_bytes() * 8));
    registers.extend((0..u64::from(platform.flag_count())).map(|i| reg(F0_BASE + i, format!("f{i}"), 32)));
    let space = |number: u64, name: &str, address_bits: u32| AddressSpace {
        number,
        name: name.into(),
        address_bits,
        per_thread: false,
        per_lane: false,
    };
    Target {
        name: format!("intel-gpu-{platform}"),
        arch: Arch::Other,
        endian: Endian::Little,
        registers,
        address_spaces: vec![space(0, "generic", 64), space(ASPACE_SCRATCH, "scratch", 32)],
        lanes: 1,
        vendor: VendorProfile::hetero_2020(),
        return_address_register: IP,
    }
}
