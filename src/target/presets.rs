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

/// x86-64 System V psABI, "DWARF Register Number Mapping" (Figure 3.36).
pub fn x86_64() -> Target {
    let gprs = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp"];
    let mut registers: Vec<Register> = gprs.iter().enumerate().map(|(i, n)| reg(i as u64, *n, 64)).collect();
    for i in 8..16 {
        registers.push(reg(i, format!("r{i}"), 64));
    }
    registers.push(reg(16, "rip", 64));
    for i in 0..16 {
        registers.push(reg(17 + i, format!("xmm{i}"), 128));
    }
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
