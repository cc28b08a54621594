//! AMDGPU target presets for wavefront 64 and wavefront 32 mode (AMDGPUUsage "DWARF Debug Information").
//!
//! Source: AMDGPUUsage, sections "Register Identifier" (the DWARF register
//! mapping table), "Address Space Identifier" (the address space mapping
//! table), "Lane identifier" and "Call Frame Information" of LLVM's
//! `llvm/docs/AMDGPUUsage.rst`. Facts used, in our words:
//!
//! - A code object's DWARF names the registers of the mode its code runs in:
//!   each wavefront size and each process address size has its own DWARF
//!   numbers, so every register has one fixed size. A preset therefore holds
//!   only the registers of one mode. The `amdgcn` target supports only the
//!   64-bit process address space, so both presets use the 64-bit process
//!   definitions (`pc_64`, the 64-bit address column).
//! - Registers common to both wave sizes: `pc_64` (16, 64 bits), `sgpr0`–
//!   `sgpr63` (32–95, 32 bits), `status` (128, 32 bits), `sgpr64`–`sgpr105`
//!   (1088–1129, 32 bits).
//! - Wavefront 64: `exec_mask_64` (17, 64 bits), `vcc_64` (768, 64 bits),
//!   `vgpr0`–`vgpr255` (2560–2815) and `agpr0`–`agpr255` (3072–3327), each
//!   vector register 64 lanes x 32 bits = 2048 bits.
//! - Wavefront 32: `exec_mask_32` (1, 32 bits), `vcc_32` (512, 32 bits),
//!   `vgpr0`–`vgpr255` (1536–1791) and `agpr0`–`agpr255` (2048–2303), each
//!   32 lanes x 32 bits = 1024 bits.
//! - A vector register holds one dword per lane, lane 0 in the least
//!   significant bits; the lane count is the wavefront size.
//! - Address spaces (64-bit process column): 0 `none` (global memory, the
//!   default, 64-bit addresses), 1 `generic` (flat, 64), 2 `region` (GDS,
//!   32), 3 `local` (LDS, 32), 4 reserved, 5 `private_lane` (scratch as seen
//!   by the focused lane, 32), 6 `private_wave` (scratch as the whole
//!   wavefront sees it, unswizzled, 32).
//! - The CIE return address column is `pc_64` ("Call Frame Information",
//!   item 6).

use super::{AddressSpace, Arch, Endian, Register, Target};
use crate::encoding::VendorProfile;

/// `DW_ASPACE_LLVM_none`: the default (global) address space.
pub const ASPACE_NONE: u64 = 0;
/// `DW_ASPACE_AMDGPU_generic`: flat addresses that may point into global,
/// local or private memory.
pub const ASPACE_GENERIC: u64 = 1;
/// `DW_ASPACE_AMDGPU_region`: GDS memory, one per device.
pub const ASPACE_REGION: u64 = 2;
/// `DW_ASPACE_AMDGPU_local`: LDS memory of the work-group.
pub const ASPACE_LOCAL: u64 = 3;
/// `DW_ASPACE_AMDGPU_private_lane`: per-lane scratch memory.
pub const ASPACE_PRIVATE_LANE: u64 = 5;
/// `DW_ASPACE_AMDGPU_private_wave`: the unswizzled wavefront view of scratch.
pub const ASPACE_PRIVATE_WAVE: u64 = 6;

/// Wavefront size an AMDGPU preset describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Wave {
    /// Wavefront 32 mode: 32 lanes.
    W32,
    /// Wavefront 64 mode: 64 lanes.
    W64,
}

impl Wave {
    /// Lanes per wavefront (32 or 64).
    pub fn lanes(self) -> u32 {
        match self {
            Wave::W32 => 32,
            Wave::W64 => 64,
        }
    }
}

fn reg(number: u64, name: impl Into<String>, bits: u32) -> Register {
    Register { number, name: name.into(), bits }
}

fn space(number: u64, name: &str, address_bits: u32, per_thread: bool, per_lane: bool) -> AddressSpace {
    AddressSpace { number, name: name.into(), address_bits, per_thread, per_lane }
}

/// An AMDGPU target in wavefront `wave` mode, 64-bit process address
/// space, named `name` (see the module documentation for every number).
///
/// Address space flags: `private_lane` is per thread and per lane (each
/// lane has its own scratch view); `private_wave` is per thread (the
/// executing wavefront) but not per lane; global, generic, region and local
/// storage is shared between the lanes of a wavefront.
///
/// Vendor profile: `hetero-2020` (the direct 0xe1–0xec opcodes that
/// `[llvm:v0.0]` producers use), the LLVM profile of the original gfx90a
/// preset. A compilation unit's `DW_AT_LLVM_augmentation` may select
/// another one (see `elf::dwarf`).
pub fn amdgpu(wave: Wave, name: &str) -> Target {
    let lanes = wave.lanes();
    let vector_bits = lanes * 32;
    // DWARF numbers that depend on the wave size: (exec, vcc, first VGPR,
    // first AGPR) and the exec/vcc names and sizes in bits.
    let (exec, vcc, vgpr0, agpr0, mask_bits) = match wave {
        Wave::W32 => (1, 512, 1536, 2048, 32),
        Wave::W64 => (17, 768, 2560, 3072, 64),
    };
    let mut registers = vec![
        reg(16, "pc_64", 64),
        reg(exec, format!("exec_mask_{mask_bits}"), mask_bits),
        reg(128, "status", 32),
        reg(vcc, format!("vcc_{mask_bits}"), mask_bits),
    ];
    registers.extend((0..64).map(|i| reg(32 + i, format!("sgpr{i}"), 32)));
    registers.extend((64..106).map(|i| reg(1088 + i - 64, format!("sgpr{i}"), 32)));
    registers.extend((0..256).map(|i| reg(vgpr0 + i, format!("vgpr{i}"), vector_bits)));
    registers.extend((0..256).map(|i| reg(agpr0 + i, format!("agpr{i}"), vector_bits)));
    registers.sort_by_key(|r| r.number);
    Target {
        name: name.into(),
        arch: Arch::Amdgpu,
        endian: Endian::Little,
        registers,
        address_spaces: vec![
            space(ASPACE_NONE, "none", 64, false, false),
            space(ASPACE_GENERIC, "generic", 64, false, false),
            space(ASPACE_REGION, "region", 32, false, false),
            space(ASPACE_LOCAL, "local", 32, false, false),
            space(ASPACE_PRIVATE_LANE, "private_lane", 32, true, true),
            space(ASPACE_PRIVATE_WAVE, "private_wave", 32, true, false),
        ],
        lanes,
        vendor: VendorProfile::hetero_2020(),
        return_address_register: 16,
    }
}

/// Wavefront 64 mode (`amdgpu-wave64`); see [`amdgpu`].
pub fn wave64() -> Target {
    amdgpu(Wave::W64, "amdgpu-wave64")
}

/// Wavefront 32 mode (`amdgpu-wave32`); see [`amdgpu`].
pub fn wave32() -> Target {
    amdgpu(Wave::W32, "amdgpu-wave32")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num_bits(t: &Target, name: &str) -> (u64, u32) {
        let r = t.register_by_name(name).unwrap_or_else(|| panic!("{} has no {name}", t.name));
        (r.number, r.bits)
    }

    // Every expected number below is read off the AMDGPUUsage tables by hand
    // (register mapping table; address space mapping table, 64-bit column).
    #[test]
    fn wave64_register_ranges() {
        let t = wave64();
        assert_eq!(num_bits(&t, "pc_64"), (16, 64));
        assert_eq!(num_bits(&t, "exec_mask_64"), (17, 64));
        assert_eq!(num_bits(&t, "sgpr0"), (32, 32));
        assert_eq!(num_bits(&t, "sgpr63"), (95, 32));
        assert_eq!(num_bits(&t, "status"), (128, 32));
        assert_eq!(num_bits(&t, "vcc_64"), (768, 64));
        assert_eq!(num_bits(&t, "sgpr64"), (1088, 32));
        assert_eq!(num_bits(&t, "sgpr105"), (1129, 32));
        // "64*32" in the bit size column.
        assert_eq!(num_bits(&t, "vgpr0"), (2560, 2048));
        assert_eq!(num_bits(&t, "vgpr255"), (2815, 2048));
        assert_eq!(num_bits(&t, "agpr0"), (3072, 2048));
        assert_eq!(num_bits(&t, "agpr255"), (3327, 2048));
        // Reserved or other-mode numbers have no register.
        for n in [0, 1, 2, 18, 96, 127, 512, 1024, 1130, 1536, 2048, 2816, 3328] {
            assert!(t.register(n).is_none(), "wave64 register {n}");
        }
        assert_eq!(t.lanes, 64);
        assert_eq!(t.return_address_register, 16);
    }

    #[test]
    fn wave32_register_ranges() {
        let t = wave32();
        assert_eq!(num_bits(&t, "pc_64"), (16, 64));
        assert_eq!(num_bits(&t, "exec_mask_32"), (1, 32));
        assert_eq!(num_bits(&t, "vcc_32"), (512, 32));
        assert_eq!(num_bits(&t, "sgpr0"), (32, 32));
        assert_eq!(num_bits(&t, "sgpr105"), (1129, 32));
        // "32*32" in the bit size column.
        assert_eq!(num_bits(&t, "vgpr0"), (1536, 1024));
        assert_eq!(num_bits(&t, "vgpr255"), (1791, 1024));
        assert_eq!(num_bits(&t, "agpr0"), (2048, 1024));
        assert_eq!(num_bits(&t, "agpr255"), (2303, 1024));
        for n in [0, 17, 768, 1792, 2304, 2560, 3072] {
            assert!(t.register(n).is_none(), "wave32 register {n}");
        }
        assert!(t.register_by_name("exec_mask_64").is_none());
        assert_eq!(t.lanes, 32);
        assert_eq!(t.return_address_register, 16);
    }

    #[test]
    fn address_spaces_64_bit_process() {
        for t in [wave64(), wave32()] {
            let a = |n: u64| t.address_space(n).map(|a| (a.name.as_str(), a.address_bits, a.per_thread, a.per_lane));
            assert_eq!(a(0), Some(("none", 64, false, false)));
            assert_eq!(a(1), Some(("generic", 64, false, false)));
            assert_eq!(a(2), Some(("region", 32, false, false)));
            assert_eq!(a(3), Some(("local", 32, false, false)));
            assert_eq!(a(4), None, "0x04 is reserved");
            assert_eq!(a(5), Some(("private_lane", 32, true, true)));
            assert_eq!(a(6), Some(("private_wave", 32, true, false)));
            assert_eq!(t.generic_bits(), 64);
            assert_eq!(t.vendor.name, "hetero-2020");
            assert_eq!(t.clone().validate().unwrap(), t);
        }
    }
}
