//! Built-in target presets, from the register maps in the psABI documents
//! and AMDGPUUsage (see `../shared/reference/`).

use super::{AddressSpace, Arch, Endian, Register, Target};
use crate::encoding::VendorProfile;

/// Names accepted by [`by_name`].
pub const NAMES: &[&str] = &["x86_64", "aarch64", "amdgpu-gfx90a"];

/// Looks up a preset by name. Besides [`NAMES`], `x86-64` is accepted for
/// `x86_64`, and `aarch64-vg<N>` (N even, 2–32) selects an SVE vector
/// granule other than the default (see [`aarch64_vg`]).
pub fn by_name(name: &str) -> Option<Target> {
    match name {
        "x86_64" | "x86-64" => Some(x86_64()),
        "aarch64" => Some(aarch64()),
        _ if name.starts_with("aarch64-vg") => match name["aarch64-vg".len()..].parse::<u32>() {
            Ok(vg) if vg % 2 == 0 && (2..=32).contains(&vg) => Some(aarch64_vg(vg)),
            _ => None,
        },
        "amdgpu-gfx90a" => Some(amdgpu_gfx90a()),
        _ => None,
    }
}

fn reg(number: u64, name: impl Into<String>, bits: u32) -> Register {
    Register { number, name: name.into(), bits }
}

fn flat_memory(bits: u32) -> Vec<AddressSpace> {
    vec![AddressSpace { number: 0, name: "memory".into(), address_bits: bits, per_thread: false, per_lane: false }]
}

/// x86-64 System V psABI, section "DWARF Definition" > "DWARF Register
/// Number Mapping" (the register number table).
///
/// The table gives numbers and names only; the sizes in **bits** are the
/// architectural widths: 64 for the integer registers (0–15, APX r16–r31),
/// the return address column (16, named `rip` as llvm-dwarfdump does),
/// rFLAGS, `fs.base`/`gs.base` and the mask registers k0–k7 (AVX-512BW
/// width); 128 for xmm0–xmm31 (the DWARF numbers name the xmm views, not
/// ymm/zmm); 80 for the x87 registers st0–st7; 64 for mm0–mm7; 16 for the
/// segment selectors, `tr`, `ldtr`, `fcw` and `fsw`; 32 for `mxcsr`; 8192
/// (1 KiB) for the AMX tiles tmm0–tmm7 and 512 for `tilecfg` (64 bytes).
/// Reserved numbers (56–57, 60–61, 83–117, 126–129) have no register.
pub fn x86_64() -> Target {
    let gprs = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp"];
    let mut registers: Vec<Register> = gprs.iter().enumerate().map(|(i, n)| reg(i as u64, *n, 64)).collect();
    registers.extend((8..16).map(|i| reg(i, format!("r{i}"), 64)));
    registers.push(reg(16, "rip", 64));
    registers.extend((0..16).map(|i| reg(17 + i, format!("xmm{i}"), 128)));
    registers.extend((0..8).map(|i| reg(33 + i, format!("st{i}"), 80)));
    registers.extend((0..8).map(|i| reg(41 + i, format!("mm{i}"), 64)));
    registers.push(reg(49, "rflags", 64));
    for (i, n) in ["es", "cs", "ss", "ds", "fs", "gs"].iter().enumerate() {
        registers.push(reg(50 + i as u64, *n, 16));
    }
    registers.push(reg(58, "fs.base", 64));
    registers.push(reg(59, "gs.base", 64));
    registers.push(reg(62, "tr", 16));
    registers.push(reg(63, "ldtr", 16));
    registers.push(reg(64, "mxcsr", 32));
    registers.push(reg(65, "fcw", 16));
    registers.push(reg(66, "fsw", 16));
    registers.extend((16..32).map(|i| reg(67 + i - 16, format!("xmm{i}"), 128)));
    registers.extend((0..8).map(|i| reg(118 + i, format!("k{i}"), 64)));
    registers.extend((16..32).map(|i| reg(130 + i - 16, format!("r{i}"), 64)));
    registers.extend((0..8).map(|i| reg(146 + i, format!("tmm{i}"), 8192)));
    registers.push(reg(154, "tilecfg", 512));
    Target {
        name: "x86_64".into(),
        arch: Arch::X86_64,
        endian: Endian::Little,
        registers,
        address_spaces: flat_memory(64),
        lanes: 1,
        vendor: VendorProfile::gnu(),
        return_address_register: 16,
    }
}

/// AArch64 with the smallest SVE vector length (VG = 2, 128-bit Z
/// registers); see [`aarch64_vg`].
pub fn aarch64() -> Target {
    aarch64_vg(2)
}

/// AArch64, from AADWARF64 "DWARF register names" (the register mapping
/// table and its notes), for an SVE vector granule of `vg` (VG = vector
/// length in bits / 64; an even number from 2 to 32 per the notes).
///
/// Sizes in **bits**: x0–x30, sp, pc, ELR_mode, RA_SIGN_STATE (same size as
/// a general register per its note), the TPIDR registers and VG are 64;
/// v0–v31 are 128 (the table's FP/SIMD width; the notes say only the low 64
/// bits are meant when no context gives a size, which is the consumer's
/// business, not the storage size). The SVE sizes depend on the vector
/// length, which a debugger reads at run time: z0–z31 are `vg * 64` bits,
/// p0–p15 and FFR `vg * 8` bits. A fixed preset has to pick one; the
/// default [`aarch64`] picks the minimum, VG = 2. The document spells the
/// thread ID registers `TPIDRRO_ELO`/`TPIDR_ELO` (letter O); they are the
/// EL0 registers and are named `tpidrro_el0`/`tpidr_el0` here. Numbers
/// 40–45 are reserved. The return address column is x30 (the link
/// register).
pub fn aarch64_vg(vg: u32) -> Target {
    let mut registers: Vec<Register> = (0..31).map(|i| reg(i, format!("x{i}"), 64)).collect();
    registers.push(reg(31, "sp", 64));
    registers.push(reg(32, "pc", 64));
    registers.push(reg(33, "elr_mode", 64));
    registers.push(reg(34, "ra_sign_state", 64));
    for (i, n) in ["tpidrro_el0", "tpidr_el0", "tpidr_el1", "tpidr_el2", "tpidr_el3"].iter().enumerate() {
        registers.push(reg(35 + i as u64, *n, 64));
    }
    registers.push(reg(46, "vg", 64));
    registers.push(reg(47, "ffr", vg * 8));
    registers.extend((0..16).map(|i| reg(48 + i, format!("p{i}"), vg * 8)));
    registers.extend((0..32).map(|i| reg(64 + i, format!("v{i}"), 128)));
    registers.extend((0..32).map(|i| reg(96 + i, format!("z{i}"), vg * 64)));
    Target {
        name: if vg == 2 { "aarch64".into() } else { format!("aarch64-vg{vg}") },
        arch: Arch::Aarch64,
        endian: Endian::Little,
        registers,
        address_spaces: flat_memory(64),
        lanes: 1,
        vendor: VendorProfile::gnu(),
        return_address_register: 30,
    }
}

/// `DW_ASPACE_AMDGPU_private_lane`: per-lane scratch memory.
pub const AMDGPU_PRIVATE_LANE: u64 = 5;
/// `DW_ASPACE_AMDGPU_private_wave`: the unswizzled wavefront view of scratch.
pub const AMDGPU_PRIVATE_WAVE: u64 = 6;

/// AMDGPU gfx90a executing in wavefront 64 mode in a 64-bit process
/// address space, from AMDGPUUsage "DWARF Debug Information":
///
/// - registers ("Register Identifier", the register mapping table), only
///   the wave64 / 64-bit-process definitions, since a code object's DWARF
///   uses the ones matching its mode: `pc_64` (16, 64 bits, also the CIE
///   return address column per "Call Frame Information"), `exec_mask_64`
///   (17, 64), `sgpr0`–`sgpr63` (32–95, 32 each), `status` (128, 32),
///   `vcc_64` (768, 64), `sgpr64`–`sgpr105` (1088–1129, 32), `vgpr0`–
///   `vgpr255` (2560–2815) and `agpr0`–`agpr255` (3072–3327, gfx90a has
///   accumulation registers), each vector register 64 lanes x 32 bits =
///   2048 bits with lane 0 in the least significant dword;
/// - address spaces ("Address Space Identifier", 64-bit process column):
///   0 `none` (global, the default, 64-bit addresses), 1 `generic` (64),
///   2 `region` (32), 3 `local` (32), 5 `private_lane` (32, per lane),
///   6 `private_wave` (32, per wavefront); 4 is reserved;
/// - 64 lanes; vendor profile `hetero-2020` (the direct 0xe1–0xec opcodes
///   that `[llvm:v0.0]` producers use).
pub fn amdgpu_gfx90a() -> Target {
    let mut registers = vec![reg(16, "pc_64", 64), reg(17, "exec_mask_64", 64)];
    registers.extend((0..64).map(|i| reg(32 + i, format!("sgpr{i}"), 32)));
    registers.push(reg(128, "status", 32));
    registers.push(reg(768, "vcc_64", 64));
    registers.extend((64..106).map(|i| reg(1088 + i - 64, format!("sgpr{i}"), 32)));
    registers.extend((0..256).map(|i| reg(2560 + i, format!("vgpr{i}"), 64 * 32)));
    registers.extend((0..256).map(|i| reg(3072 + i, format!("agpr{i}"), 64 * 32)));
    let space = |number: u64, name: &str, address_bits: u32, per_thread: bool, per_lane: bool| AddressSpace {
        number,
        name: name.into(),
        address_bits,
        per_thread,
        per_lane,
    };
    Target {
        name: "amdgpu-gfx90a".into(),
        arch: Arch::Amdgpu,
        endian: Endian::Little,
        registers,
        address_spaces: vec![
            space(0, "none", 64, false, false),
            space(1, "generic", 64, false, false),
            space(2, "region", 32, false, false),
            space(3, "local", 32, false, false),
            space(AMDGPU_PRIVATE_LANE, "private_lane", 32, true, true),
            space(AMDGPU_PRIVATE_WAVE, "private_wave", 32, true, false),
        ],
        lanes: 64,
        vendor: VendorProfile::hetero_2020(),
        return_address_register: 16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(t: &Target, name: &str) -> (u64, u32) {
        let r = t.register_by_name(name).unwrap_or_else(|| panic!("{} has no {name}", t.name));
        (r.number, r.bits)
    }

    // Expected numbers and sizes are read off the reference documents by hand.
    #[test]
    fn x86_64_psabi_spot_checks() {
        let t = x86_64();
        assert_eq!(bits(&t, "rsp"), (7, 64));
        assert_eq!(bits(&t, "rdx"), (1, 64));
        assert_eq!(bits(&t, "xmm0"), (17, 128));
        assert_eq!(bits(&t, "xmm15"), (32, 128));
        assert_eq!(bits(&t, "st0"), (33, 80));
        assert_eq!(bits(&t, "mm7"), (48, 64));
        assert_eq!(bits(&t, "rflags"), (49, 64));
        assert_eq!(bits(&t, "gs"), (55, 16));
        assert_eq!(bits(&t, "fs.base"), (58, 64));
        assert_eq!(bits(&t, "FS_BASE"), (58, 64));
        assert_eq!(bits(&t, "ldtr"), (63, 16));
        assert_eq!(bits(&t, "mxcsr"), (64, 32));
        assert_eq!(bits(&t, "fsw"), (66, 16));
        assert_eq!(bits(&t, "xmm16"), (67, 128));
        assert_eq!(bits(&t, "xmm31"), (82, 128));
        assert_eq!(bits(&t, "k0"), (118, 64));
        assert_eq!(bits(&t, "k7"), (125, 64));
        assert!(t.register(56).is_none() && t.register(83).is_none());
        assert_eq!(t.return_address_register, 16);
    }

    #[test]
    fn aarch64_aadwarf64_spot_checks() {
        let t = aarch64();
        assert_eq!(bits(&t, "x30"), (30, 64));
        assert_eq!(bits(&t, "sp"), (31, 64));
        assert_eq!(bits(&t, "pc"), (32, 64));
        assert_eq!(bits(&t, "ra_sign_state"), (34, 64));
        assert_eq!(bits(&t, "vg"), (46, 64));
        assert_eq!(bits(&t, "v0"), (64, 128));
        assert_eq!(bits(&t, "v31"), (95, 128));
        // VG = 2: Z is VG x 64 bits, P and FFR are VG x 8 bits.
        assert_eq!(bits(&t, "z0"), (96, 128));
        assert_eq!(bits(&t, "p15"), (63, 16));
        assert_eq!(bits(&t, "ffr"), (47, 16));
        let t8 = by_name("aarch64-vg8").unwrap();
        assert_eq!(bits(&t8, "z31"), (127, 512));
        assert_eq!(bits(&t8, "p0"), (48, 64));
        assert!(by_name("aarch64-vg3").is_none());
        assert!(t.register(40).is_none());
    }

    #[test]
    fn amdgpu_gfx90a_spot_checks() {
        let t = amdgpu_gfx90a();
        assert_eq!(bits(&t, "pc_64"), (16, 64));
        assert_eq!(bits(&t, "exec_mask_64"), (17, 64));
        assert_eq!(bits(&t, "sgpr0"), (32, 32));
        assert_eq!(bits(&t, "sgpr63"), (95, 32));
        assert_eq!(bits(&t, "sgpr64"), (1088, 32));
        assert_eq!(bits(&t, "sgpr105"), (1129, 32));
        assert_eq!(bits(&t, "vcc_64"), (768, 64));
        assert_eq!(bits(&t, "vgpr0"), (2560, 2048));
        assert_eq!(bits(&t, "vgpr255"), (2815, 2048));
        assert_eq!(bits(&t, "agpr0"), (3072, 2048));
        assert!(t.register(1536).is_none(), "wave32 VGPRs are not part of a wave64 preset");
        assert_eq!(t.lanes, 64);
        assert_eq!(t.generic_bits(), 64);
        assert_eq!(t.address_space(3).map(|a| a.address_bits), Some(32));
        assert_eq!(t.address_space(1).map(|a| a.address_bits), Some(64));
        assert!(t.address_space(4).is_none());
        assert!(t.address_space(5).unwrap().per_lane);
        assert_eq!(t.vendor.name, "hetero-2020");
        assert_eq!(t.return_address_register, 16);
    }

    #[test]
    fn presets_validate() {
        for n in NAMES {
            let t = by_name(n).unwrap();
            // Target::register binary-searches, so presets must be sorted.
            assert!(t.registers.windows(2).all(|w| w[0].number < w[1].number), "{n}");
            assert_eq!(t.clone().validate().unwrap(), t);
        }
    }
}
