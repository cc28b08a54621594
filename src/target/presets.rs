//! Built-in target presets, from the register maps in the psABI documents
//! and AMDGPUUsage (see `../shared/reference/`).

use super::{AddressSpace, Arch, Endian, Register, Target};
use crate::encoding::VendorProfile;

/// Names accepted by [`by_name`].
pub const NAMES: &[&str] = &["x86_64", "aarch64", "amdgpu-gfx90a"];

/// Looks up a preset by name.
pub fn by_name(name: &str) -> Option<Target> {
    match name {
        "x86_64" | "x86-64" => Some(x86_64()),
        "aarch64" => Some(aarch64()),
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

/// AArch64 AADWARF64, "DWARF register names".
pub fn aarch64() -> Target {
    let mut registers: Vec<Register> = (0..31).map(|i| reg(i, format!("x{i}"), 64)).collect();
    registers.push(reg(31, "sp", 64));
    Target {
        name: "aarch64".into(),
        arch: Arch::Aarch64,
        endian: Endian::Little,
        registers,
        address_spaces: flat_memory(64),
        lanes: 1,
        vendor: VendorProfile::gnu(),
        return_address_register: 30,
    }
}

/// AMDGPU gfx90a in wave64 mode, from AMDGPUUsage "DWARF" register and
/// address space mappings.
pub fn amdgpu_gfx90a() -> Target {
    Target {
        name: "amdgpu-gfx90a".into(),
        arch: Arch::Amdgpu,
        endian: Endian::Little,
        registers: vec![reg(16, "pc", 64)],
        address_spaces: flat_memory(64),
        lanes: 64,
        vendor: VendorProfile::hetero_2020(),
        return_address_register: 16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate() {
        for n in NAMES {
            let t = by_name(n).unwrap();
            t.validate().unwrap();
        }
    }
}
