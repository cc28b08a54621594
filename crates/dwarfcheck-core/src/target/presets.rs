//! Built-in target presets, from the DWARF register maps of the System V
//! x86-64 psABI ("DWARF Register Number Mapping"), Arm's AADWARF64 ("DWARF
//! register names") and LLVM's AMDGPUUsage ("Register Identifier").

use super::{AddressSpace, Arch, Endian, Register, Target};
use crate::encoding::VendorProfile;

/// Names accepted by [`by_name`].
pub const NAMES: &[&str] = &[
    "x86_64",
    "aarch64",
    "amdgpu-gfx90a",
    "amdgpu-wave64",
    "amdgpu-wave32",
    "intel-gpu",
    "intel-gpu-skl",
    "intel-gpu-tgllp",
    "intel-gpu-dg2",
    "intel-gpu-pvc",
];

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
        "amdgpu-wave64" => Some(amdgpu_wave64()),
        "amdgpu-wave32" => Some(amdgpu_wave32()),
        "intel-gpu" => Some(intel_gpu()),
        "intel-gpu-skl" | "intel-gpu-tgllp" | "intel-gpu-dg2" => {
            Some(super::intel::intel_gpu(name, super::intel::GEN_128X32))
        }
        "intel-gpu-pvc" => Some(super::intel::intel_gpu(name, super::intel::XE_HPC_256X64)),
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
/// ymm/zmm); 128 for the x87 registers st0–st7 (see below); 64 for mm0–mm7; 16 for the
/// segment selectors, `tr`, `ldtr`, `fcw` and `fsw`; 32 for `mxcsr`; 8192
/// (1 KiB) for the AMX tiles tmm0–tmm7 and 512 for `tilecfg` (64 bytes).
/// Reserved numbers (56–57, 60–61, 83–117, 126–129) have no register.
///
/// st0–st7 hold 80 significant bits, but their storage here is 128 bits:
/// the psABI gives `long double` a 16-byte representation, and GCC
/// describes such values in x87 registers with `DW_OP_regx st0;
/// DW_OP_piece 16` and with `DW_OP_regval_type` of a 16-byte base type
/// (seen throughout libc6-dbg). With 80-bit storage that real output would
/// read past the end of the register. Bytes 10–15 read as the context gives
/// them.
pub fn x86_64() -> Target {
    let gprs = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp"];
    let mut registers: Vec<Register> = gprs.iter().enumerate().map(|(i, n)| reg(i as u64, *n, 64)).collect();
    registers.extend((8..16).map(|i| reg(i, format!("r{i}"), 64)));
    registers.push(reg(16, "rip", 64));
    registers.extend((0..16).map(|i| reg(17 + i, format!("xmm{i}"), 128)));
    registers.extend((0..8).map(|i| reg(33 + i, format!("st{i}"), 128)));
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
pub const AMDGPU_PRIVATE_LANE: u64 = super::amdgpu::ASPACE_PRIVATE_LANE;
/// `DW_ASPACE_AMDGPU_private_wave`: the unswizzled wavefront view of scratch.
pub const AMDGPU_PRIVATE_WAVE: u64 = super::amdgpu::ASPACE_PRIVATE_WAVE;

/// AMDGPU gfx90a, which executes in wavefront 64 mode in a 64-bit process
/// address space: the [`amdgpu_wave64`] preset under the name
/// `amdgpu-gfx90a` (gfx90a has the accumulation registers the preset
/// lists). See [`super::amdgpu`] for every register and address space.
pub fn amdgpu_gfx90a() -> Target {
    super::amdgpu::amdgpu(super::amdgpu::Wave::W64, "amdgpu-gfx90a")
}

/// AMDGPU in wavefront 64 mode (`amdgpu-wave64`, 64 lanes, 2048-bit vector
/// registers); see [`super::amdgpu`].
pub fn amdgpu_wave64() -> Target {
    super::amdgpu::wave64()
}

/// AMDGPU in wavefront 32 mode (`amdgpu-wave32`, 32 lanes, 1024-bit vector
/// registers); see [`super::amdgpu`].
pub fn amdgpu_wave32() -> Target {
    super::amdgpu::wave32()
}

/// An Intel GPU whose platform family is not known (`intel-gpu`): the
/// widest register file of [`super::intel`] (256 GRFs of 64 bytes, four
/// flag registers), so every register number IGC writes resolves. The ELF
/// reader uses it for `e_machine` 0xb6 and 205, which do not name the
/// family; `intel-gpu-<family>` presets give the exact file.
pub fn intel_gpu() -> Target {
    super::intel::intel_gpu("intel-gpu", super::intel::XE_HPC_256X64)
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
        assert_eq!(bits(&t, "st0"), (33, 128));
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
    fn amdgpu_preset_names() {
        // gfx90a runs wave64 code: the wave64 numbers, under its own name.
        let g = by_name("amdgpu-gfx90a").unwrap();
        let w64 = by_name("amdgpu-wave64").unwrap();
        assert_eq!((g.name.as_str(), w64.name.as_str()), ("amdgpu-gfx90a", "amdgpu-wave64"));
        assert_eq!(g.registers, w64.registers);
        assert_eq!(g.address_spaces, w64.address_spaces);
        let w32 = by_name("amdgpu-wave32").unwrap();
        assert_eq!((w32.lanes, bits(&w32, "vgpr1")), (32, (1537, 1024)));
        assert_eq!(bits(&w64, "vgpr1"), (2561, 2048));
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
