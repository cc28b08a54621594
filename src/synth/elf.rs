//! The two ELF files of a synthesised debuggee, written with the `object`
//! crate's ELF writer (two-phase: reserve, then write).
//!
//! - The executable (`ET_EXEC`, of the [`Machine`]; [`image`], shared with
//!   the unwinding executables of [`super::cfi`]): `.text` holding
//!   [`CODE_BYTES`] of code at the program counter (`nop`s and a `ret`,
//!   [`Machine::function`]) in one `PT_LOAD`, a
//!   symbol table naming it [`super::FUNCTION`], and the DWARF sections of
//!   [`super::dwarf`] (not loaded).
//! - The core file (`ET_CORE`): a `PT_NOTE` with `NT_PRSTATUS` and
//!   `NT_FPREGSET` (name `CORE`, the machine's layout, [`Machine::notes`]), then one
//!   read-write `PT_LOAD` per memory segment of the case, at its address.
//!
//! Both say `ELFOSABI_GNU` (Linux): LLDB picks its core-file reader by the
//! OS, and refuses a core whose OS it does not know.

use super::dwarf::Section;
use super::machine::Machine;
use super::notes::note;
use super::{Unrepresentable, CODE_BYTES};
use dwarfcheck_core::context::Context;
use object::elf;
use object::endian::Endianness;
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Sym, Writer};

/// Page size of the Linux images (x86-64, and the 4 KiB granule of
/// AArch64), in **bytes**.
pub const PAGE: u64 = 0x1000;
/// Process id written into `NT_PRSTATUS` (debuggers name the thread by it).
pub const PID: u32 = 4242;

/// The ELF file header of a file of type `e_type` for `machine`.
pub(super) fn header(machine: Machine, e_type: elf::FileType) -> FileHeader {
    FileHeader {
        os_abi: elf::ELFOSABI_GNU,
        abi_version: 0,
        e_type,
        e_machine: machine.e_machine(),
        e_entry: 0,
        e_flags: Default::default(),
    }
}

pub(super) fn write_error(e: object::write::Error) -> Unrepresentable {
    Unrepresentable(format!("object's ELF writer: {e}"))
}

/// One allocated section of an executable image, in a `PT_LOAD` of its
/// own at `address` (file offset congruent to it modulo the page size).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Section name (`.text`, `.eh_frame`, `.eh_frame_hdr`).
    pub name: &'static str,
    /// Virtual address of its first byte.
    pub address: u64,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Executable code (`SHF_EXECINSTR`, segment `R+X`) or read-only data
    /// (segment `R`).
    pub code: bool,
}

/// A function symbol (`STT_FUNC`, global) of an executable image.
#[derive(Debug, Clone)]
pub struct FunctionSymbol {
    /// Its name.
    pub name: String,
    /// Its address.
    pub address: u64,
    /// Its size, in **bytes**.
    pub size: u64,
    /// Index into [`Image::loaded`] of the section holding it.
    pub section: usize,
}

/// Everything an executable of [`image`] holds.
#[derive(Debug, Clone, Default)]
pub struct Image {
    /// Allocated sections, each in its own `PT_LOAD`.
    pub loaded: Vec<Loaded>,
    /// Sections not loaded (DWARF).
    pub unloaded: Vec<Section>,
    /// Function symbols (`.symtab`/`.strtab` when there are any).
    pub symbols: Vec<FunctionSymbol>,
    /// Index into [`Image::loaded`] of the `.eh_frame_hdr`, which a
    /// `PT_GNU_EH_FRAME` then also points at.
    pub eh_frame_hdr: Option<usize>,
    /// A page-aligned address at which a first, read-only `PT_LOAD` maps
    /// the file's start (ELF header and program headers), as in a linked
    /// executable: libdwfl finds a module in a core by that header.
    pub headers_at: Option<u64>,
}

/// The executable for `machine`: `.text` at `pc` and the `sections`
/// (DWARF).
///
/// Errors: [`Unrepresentable`] if the writer fails.
pub fn executable(machine: Machine, sections: &[Section], pc: u64) -> Result<Vec<u8>, Unrepresentable> {
    let code = machine.function(CODE_BYTES as usize);
    image(
        machine,
        &Image {
            loaded: vec![Loaded { name: ".text", address: pc, bytes: code, code: true }],
            unloaded: sections.to_vec(),
            // Delve refuses a file without a symbol table, and names frames by it.
            symbols: vec![FunctionSymbol { name: super::FUNCTION.into(), address: pc, size: CODE_BYTES, section: 0 }],
            ..Default::default()
        },
    )
}

/// An executable (`ET_EXEC`) for `machine` holding `img`: one `PT_LOAD` per
/// loaded section (in the order given), a `PT_GNU_EH_FRAME` if asked,
/// the unloaded sections, and `.symtab`/`.strtab` if there are symbols.
///
/// Errors: [`Unrepresentable`] if the writer fails.
pub fn image(machine: Machine, img: &Image) -> Result<Vec<u8>, Unrepresentable> {
    let mut buf = Vec::new();
    let mut w = Writer::new(Endianness::Little, true, &mut buf);
    w.reserve_file_header();
    let extra = u32::from(img.eh_frame_hdr.is_some()) + u32::from(img.headers_at.is_some());
    w.reserve_program_headers(img.loaded.len() as u32 + extra);
    let headers_len = w.reserved_len();
    let mut loaded = Vec::new();
    for l in &img.loaded {
        // File offset congruent to the address modulo the page size.
        let here = w.reserved_len();
        let pad = (l.address % PAGE + PAGE - here % PAGE) % PAGE;
        w.reserve_until(here + pad);
        let off = w.reserve(l.bytes.len() as u64, 1);
        let name = w.add_section_name(l.name.as_bytes());
        let index = w.reserve_section_index();
        loaded.push((name, off, index));
    }
    let mut placed = Vec::new();
    for (name, bytes) in &img.unloaded {
        let off = w.reserve(bytes.len() as u64, 1);
        let id = w.add_section_name(name.as_bytes());
        w.reserve_section_index();
        placed.push((id, off, bytes));
    }
    let names: Vec<_> = img.symbols.iter().map(|s| w.add_string(s.name.as_bytes())).collect();
    for s in &img.symbols {
        w.reserve_symbol_index(Some(loaded[s.section].2));
    }
    if !img.symbols.is_empty() {
        w.reserve_symtab_section_index();
        w.reserve_strtab_section_index();
        w.reserve_symtab();
        w.reserve_strtab().map_err(write_error)?;
    }
    w.reserve_shstrtab_section_index();
    w.reserve_shstrtab().map_err(write_error)?;
    w.reserve_section_headers();

    w.write_file_header(&header(machine, elf::ET_EXEC)).map_err(write_error)?;
    w.write_align_program_headers();
    if let Some(at) = img.headers_at {
        w.write_program_header(&ProgramHeader {
            p_type: elf::PT_LOAD,
            p_flags: elf::PF_R,
            p_offset: 0,
            p_vaddr: at,
            p_paddr: at,
            p_filesz: headers_len,
            p_memsz: headers_len,
            p_align: PAGE,
        });
    }
    for (l, (_, off, _)) in img.loaded.iter().zip(&loaded) {
        let n = l.bytes.len() as u64;
        w.write_program_header(&ProgramHeader {
            p_type: elf::PT_LOAD,
            p_flags: if l.code { elf::PF_R | elf::PF_X } else { elf::PF_R },
            p_offset: *off,
            p_vaddr: l.address,
            p_paddr: l.address,
            p_filesz: n,
            p_memsz: n,
            p_align: PAGE,
        });
    }
    if let Some(i) = img.eh_frame_hdr {
        let (l, off) = (&img.loaded[i], loaded[i].1);
        let n = l.bytes.len() as u64;
        w.write_program_header(&ProgramHeader {
            p_type: elf::PT_GNU_EH_FRAME,
            p_flags: elf::PF_R,
            p_offset: off,
            p_vaddr: l.address,
            p_paddr: l.address,
            p_filesz: n,
            p_memsz: n,
            p_align: 4,
        });
    }
    for (l, (_, off, _)) in img.loaded.iter().zip(&loaded) {
        w.pad_until(*off);
        w.write(&l.bytes);
    }
    for (_, off, bytes) in &placed {
        w.pad_until(*off);
        w.write(bytes);
    }
    if !img.symbols.is_empty() {
        w.write_null_symbol();
        for (s, name) in img.symbols.iter().zip(&names) {
            w.write_symbol(&Sym {
                section: Some(loaded[s.section].2 .0),
                st_name: w.string_offset(Some(*name)),
                st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_FUNC),
                st_other: elf::STV_DEFAULT.into(),
                st_shndx: elf::SHN_UNDEF,
                st_value: s.address,
                st_size: s.size,
            });
        }
        w.write_strtab();
    }
    w.write_shstrtab();
    w.write_null_section_header();
    for (l, (name, off, _)) in img.loaded.iter().zip(&loaded) {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(*name)),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: if l.code { elf::SHF_ALLOC | elf::SHF_EXECINSTR } else { elf::SHF_ALLOC },
            sh_addr: l.address,
            sh_offset: *off,
            sh_size: l.bytes.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
    for (id, off, bytes) in &placed {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(*id)),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: Default::default(),
            sh_addr: 0,
            sh_offset: *off,
            sh_size: bytes.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 1,
            sh_entsize: 0,
        });
    }
    if !img.symbols.is_empty() {
        // Only the null symbol is local.
        w.write_symtab_section_header(1);
        w.write_strtab_section_header();
    }
    w.write_shstrtab_section_header();
    Ok(buf)
}

/// The core file for `machine` of `ctx`'s registers and
/// default-address-space memory, with the thread stopped at `pc`.
///
/// Errors: [`Unrepresentable`] if the writer fails.
pub fn core(machine: Machine, ctx: &Context, pc: u64) -> Result<Vec<u8>, Unrepresentable> {
    let (prstatus, fpregs) = machine.notes(&ctx.registers, pc, PID);
    let mut notes = Vec::new();
    note(&mut notes, elf::NT_PRSTATUS, elf::ELF_NOTE_CORE, &prstatus);
    note(&mut notes, elf::NT_FPREGSET, elf::ELF_NOTE_CORE, &fpregs);
    core_file(machine, &notes, &memory_segments(ctx))
}

/// One `PT_LOAD` of a core file: `bytes` at `address`, `size` bytes of
/// memory (at least `bytes.len()`; more for a mapping the core does not
/// dump, as the kernel writes read-only file mappings).
#[derive(Debug, Clone, Copy)]
pub struct CoreSegment<'a> {
    /// Its first address.
    pub address: u64,
    /// The bytes the core holds for it.
    pub bytes: &'a [u8],
    /// Its size in memory, in **bytes**.
    pub size: u64,
    /// Writable data (`R+W`) or code (`R+X`).
    pub writable: bool,
}

/// The default-address-space memory segments of `ctx` that hold bytes, as
/// writable [`CoreSegment`]s.
pub fn memory_segments(ctx: &Context) -> Vec<CoreSegment<'_>> {
    ctx.memory
        .iter()
        .filter(|m| m.aspace == 0 && !m.bytes.is_empty())
        .map(|m| CoreSegment { address: m.address, bytes: &m.bytes, size: m.bytes.len() as u64, writable: true })
        .collect()
}

/// A core file (`ET_CORE`) for `machine`: one `PT_NOTE` holding `notes` (records of
/// [`note`]), then one `PT_LOAD` per segment of `segs`.
///
/// Errors: [`Unrepresentable`] if the writer fails.
pub fn core_file(machine: Machine, notes: &[u8], segs: &[CoreSegment<'_>]) -> Result<Vec<u8>, Unrepresentable> {
    let mut buf = Vec::new();
    let mut w = Writer::new(Endianness::Little, true, &mut buf);
    w.reserve_file_header();
    w.reserve_program_headers(1 + segs.len() as u32);
    let notes_off = w.reserve(notes.len() as u64, 4);
    let offs: Vec<u64> = segs.iter().map(|g| w.reserve(g.bytes.len() as u64, 8)).collect();
    w.write_file_header(&header(machine, elf::ET_CORE)).map_err(write_error)?;
    w.write_align_program_headers();
    w.write_program_header(&ProgramHeader {
        p_type: elf::PT_NOTE,
        p_flags: Default::default(),
        p_offset: notes_off,
        p_vaddr: 0,
        p_paddr: 0,
        p_filesz: notes.len() as u64,
        p_memsz: 0,
        p_align: 4,
    });
    for (g, off) in segs.iter().zip(&offs) {
        w.write_program_header(&ProgramHeader {
            p_type: elf::PT_LOAD,
            p_flags: if g.writable { elf::PF_R | elf::PF_W } else { elf::PF_R | elf::PF_X },
            p_offset: *off,
            p_vaddr: g.address,
            p_paddr: 0,
            p_filesz: g.bytes.len() as u64,
            p_memsz: g.size.max(g.bytes.len() as u64),
            p_align: 1,
        });
    }
    w.pad_until(notes_off);
    w.write(notes);
    for (g, off) in segs.iter().zip(&offs) {
        w.pad_until(*off);
        w.write(g.bytes);
    }
    Ok(buf)
}
