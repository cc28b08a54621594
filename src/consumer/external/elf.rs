//! A minimal ELF file holding one frame section at its address, so that
//! command-line tools can read a case's `CfiSection`.
//!
//! Layout (ELF64, `ET_EXEC`, no program headers): the null section, the
//! frame section (`.eh_frame` with `SHF_ALLOC`, or `.debug_frame`) at
//! `CfiSection::address`, `.text` and `.got` as `SHT_NOBITS` sections at the
//! text and data bases when the section has them (the tools take
//! `DW_EH_PE_textrel`/`DW_EH_PE_datarel` bases from them), and
//! `.shstrtab`. It is written by hand rather than with the `object` crate's
//! writer: five section headers need no symbol, string or segment
//! bookkeeping, and `object`'s reader checks the result in the tests.

use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::target::{Arch, Endian};

/// `EM_X86_64`.
const EM_X86_64: u16 = 62;
/// `EM_AARCH64`.
const EM_AARCH64: u16 = 183;
/// `EM_AMDGPU` (AMDGPUUsage "Header").
const EM_AMDGPU: u16 = object::elf::EM_AMDGPU.0;
/// `ELFOSABI_AMDGPU_HSA`, with ABI version 2 (code object V4).
const AMDGPU_OSABI: (u8, u8) = (64, 2);
/// `EF_AMDGPU_MACH_AMDGCN_GFX90A`: the processor of the fixtures and of the
/// `amdgpu-wave64` preset.
const AMDGPU_MACH_GFX90A: u32 = 0x3f;

const SHT_PROGBITS: u32 = 1;
const SHT_STRTAB: u32 = 3;
const SHT_NOBITS: u32 = 8;
const SHF_ALLOC: u64 = 2;
const SHF_EXECINSTR: u64 = 4;
const SHF_WRITE: u64 = 1;

/// Why no ELF file can carry a section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoElf(pub String);

struct Shdr {
    name: u32,
    kind: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
}

/// Little helper that writes integers in the file's byte order.
struct Out {
    bytes: Vec<u8>,
    big: bool,
}

impl Out {
    fn u16(&mut self, v: u16) {
        self.bytes.extend(if self.big { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    fn u32(&mut self, v: u32) {
        self.bytes.extend(if self.big { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    fn u64(&mut self, v: u64) {
        self.bytes.extend(if self.big { v.to_be_bytes() } else { v.to_le_bytes() });
    }
}

/// The bytes of an ELF file for `section`'s target holding the section.
///
/// The machine follows `section.target.arch` (x86-64, AArch64, AMDGPU
/// gfx90a), the byte order its endianity. Errors: a target of another
/// architecture (no ELF machine to name), or an address size other than 8
/// bytes (the tools read the address size from the ELF class; every preset
/// is 64-bit).
pub fn synthesise(section: &CfiSection) -> Result<Vec<u8>, NoElf> {
    let t = &section.target;
    let (machine, osabi, flags) = match t.arch {
        Arch::X86_64 => (EM_X86_64, (0, 0), 0),
        Arch::Aarch64 => (EM_AARCH64, (0, 0), 0),
        Arch::Amdgpu => (EM_AMDGPU, AMDGPU_OSABI, AMDGPU_MACH_GFX90A),
        Arch::Other => return Err(NoElf(format!("target `{}` has no ELF machine", t.name))),
    };
    if t.address_bytes() != 8 {
        return Err(NoElf(format!(
            "target `{}` has {}-byte addresses; only ELF64 is written",
            t.name,
            t.address_bytes()
        )));
    }
    let big = t.endian == Endian::Big;
    let name = match section.kind {
        FrameKind::EhFrame => ".eh_frame",
        FrameKind::DebugFrame => ".debug_frame",
    };
    // Section name string table.
    let mut strtab = vec![0u8];
    let mut add_name = |s: &str| {
        let at = strtab.len() as u32;
        strtab.extend_from_slice(s.as_bytes());
        strtab.push(0);
        at
    };
    let frame_name = add_name(name);
    let text_name = add_name(".text");
    let got_name = add_name(".got");
    let shstrtab_name = add_name(".shstrtab");

    const EHDR: u64 = 64;
    let data_off = EHDR;
    let strtab_off = data_off + section.bytes.len() as u64;
    let mut shdrs = vec![Shdr { name: 0, kind: 0, flags: 0, addr: 0, offset: 0, size: 0 }];
    let alloc = if section.kind == FrameKind::EhFrame { SHF_ALLOC } else { 0 };
    shdrs.push(Shdr {
        name: frame_name,
        kind: SHT_PROGBITS,
        flags: alloc,
        addr: section.address,
        offset: data_off,
        size: section.bytes.len() as u64,
    });
    if let Some(a) = section.text_base {
        let flags = SHF_ALLOC | SHF_EXECINSTR;
        shdrs.push(Shdr { name: text_name, kind: SHT_NOBITS, flags, addr: a, offset: strtab_off, size: 0 });
    }
    if let Some(a) = section.data_base {
        let flags = SHF_ALLOC | SHF_WRITE;
        shdrs.push(Shdr { name: got_name, kind: SHT_NOBITS, flags, addr: a, offset: strtab_off, size: 0 });
    }
    let shstrndx = shdrs.len() as u16;
    shdrs.push(Shdr {
        name: shstrtab_name,
        kind: SHT_STRTAB,
        flags: 0,
        addr: 0,
        offset: strtab_off,
        size: strtab.len() as u64,
    });
    let shoff = (strtab_off + strtab.len() as u64).next_multiple_of(8);

    let mut o = Out { bytes: Vec::with_capacity(shoff as usize + shdrs.len() * 64), big };
    // e_ident: magic, ELFCLASS64, data encoding, EV_CURRENT, OS ABI.
    o.bytes.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, if big { 2 } else { 1 }, 1, osabi.0, osabi.1]);
    o.bytes.resize(16, 0);
    o.u16(2); // ET_EXEC
    o.u16(machine);
    o.u32(1); // EV_CURRENT
    o.u64(0); // e_entry
    o.u64(0); // e_phoff
    o.u64(shoff);
    o.u32(flags);
    o.u16(EHDR as u16);
    o.u16(56); // e_phentsize
    o.u16(0); // e_phnum
    o.u16(64); // e_shentsize
    o.u16(shdrs.len() as u16);
    o.u16(shstrndx);
    o.bytes.extend_from_slice(&section.bytes);
    o.bytes.extend_from_slice(&strtab);
    o.bytes.resize(shoff as usize, 0);
    for s in &shdrs {
        o.u32(s.name);
        o.u32(s.kind);
        o.u64(s.flags);
        o.u64(s.addr);
        o.u64(s.offset);
        o.u64(s.size);
        o.u32(0); // sh_link
        o.u32(0); // sh_info
        o.u64(if s.kind == SHT_PROGBITS { 8 } else { 1 }); // sh_addralign
        o.u64(0); // sh_entsize
    }
    Ok(o.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::target::presets;
    use object::{Object, ObjectSection};
    use std::sync::Arc;

    #[test]
    fn object_reads_back_the_section_at_its_address() {
        // Four arbitrary bytes at 0x2000 with a .got at 0x5000: the reader
        // must find exactly them, at that address, on an x86-64 ELF64 file.
        let mut s = CfiSection::new(FrameKind::EhFrame, vec![1u8, 2, 3, 4], 0x2000, Arc::new(presets::x86_64()));
        s.data_base = Some(0x5000);
        let bytes = synthesise(&s).unwrap();
        let f = object::File::parse(&*bytes).unwrap();
        assert_eq!(f.architecture(), object::Architecture::X86_64);
        assert!(f.is_64() && f.is_little_endian());
        let eh = f.section_by_name(".eh_frame").unwrap();
        assert_eq!((eh.address(), eh.data().unwrap()), (0x2000, &[1u8, 2, 3, 4][..]));
        assert_eq!(f.section_by_name(".got").unwrap().address(), 0x5000);
        assert!(f.section_by_name(".text").is_none());
    }

    #[test]
    fn machines_follow_the_target() {
        let d = |t: dwarfcheck_core::target::Target| {
            let s = CfiSection::new(FrameKind::DebugFrame, vec![0u8; 3], 0, Arc::new(t));
            synthesise(&s)
        };
        let a64 = d(presets::aarch64()).unwrap();
        assert_eq!(object::File::parse(&*a64).unwrap().architecture(), object::Architecture::Aarch64);
        let gpu = d(presets::amdgpu_wave64()).unwrap();
        // e_machine at byte 18 (little-endian): 224; e_flags at 48: gfx90a.
        assert_eq!(u16::from_le_bytes([gpu[18], gpu[19]]), 224);
        assert_eq!(u32::from_le_bytes(gpu[48..52].try_into().unwrap()), 0x3f);
        let mut other = presets::x86_64();
        other.arch = Arch::Other;
        assert!(d(other).is_err());
    }
}
