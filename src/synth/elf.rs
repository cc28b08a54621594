//! The two ELF files of a synthesised debuggee, written with the `object`
//! crate's ELF writer (two-phase: reserve, then write).
//!
//! - The executable (`ET_EXEC`, x86-64): `.text` holding [`CODE_BYTES`] of
//!   code at the program counter (`nop`s and a `ret`) in one `PT_LOAD`, a
//!   symbol table naming it [`super::FUNCTION`], and the DWARF sections of
//!   [`super::dwarf`] (not loaded).
//! - The core file (`ET_CORE`): a `PT_NOTE` with `NT_PRSTATUS` and
//!   `NT_FPREGSET` (name `CORE`, the layout of [`super::x86_64`]), then one
//!   read-write `PT_LOAD` per memory segment of the case, at its address.
//!
//! Both say `ELFOSABI_GNU` (Linux): LLDB picks its core-file reader by the
//! OS, and refuses a core whose OS it does not know.

use super::dwarf::Section;
use super::{x86_64, Unrepresentable, CODE_BYTES};
use dwarfcheck_core::context::Context;
use object::elf;
use object::endian::{Endianness, LittleEndian, U32};
use object::write::elf::{FileHeader, ProgramHeader, SectionHeader, Sym, Writer};

const PAGE: u64 = 0x1000;
/// Process id written into `NT_PRSTATUS` (debuggers name the thread by it).
const PID: u32 = 4242;

fn header(e_type: elf::FileType) -> FileHeader {
    FileHeader {
        os_abi: elf::ELFOSABI_GNU,
        abi_version: 0,
        e_type,
        e_machine: elf::EM_X86_64,
        e_entry: 0,
        e_flags: Default::default(),
    }
}

fn write_error(e: object::write::Error) -> Unrepresentable {
    Unrepresentable(format!("object's ELF writer: {e}"))
}

/// The executable: `.text` at `pc` and the `sections` (DWARF).
///
/// Errors: [`Unrepresentable`] if the writer fails.
pub fn executable(sections: &[Section], pc: u64) -> Result<Vec<u8>, Unrepresentable> {
    let code: Vec<u8> = std::iter::repeat_n(0x90u8, CODE_BYTES as usize - 1).chain([0xc3]).collect();
    let mut buf = Vec::new();
    let mut w = Writer::new(Endianness::Little, true, &mut buf);
    w.reserve_file_header();
    w.reserve_program_headers(1);
    // File offset congruent to the address modulo the page size.
    let here = w.reserved_len();
    let pad = (pc % PAGE + PAGE - here % PAGE) % PAGE;
    w.reserve_until(here + pad);
    let text_off = w.reserve(CODE_BYTES, 1);
    let text_name = w.add_section_name(b".text");
    let text_index = w.reserve_section_index();
    // One function symbol over the code: Delve refuses a file without a
    // symbol table, and names frames by it.
    let symbol_name = w.add_string(super::FUNCTION.as_bytes());
    w.reserve_symbol_index(Some(text_index));
    let mut placed = Vec::new();
    for (name, bytes) in sections {
        let off = w.reserve(bytes.len() as u64, 1);
        let id = w.add_section_name(name.as_bytes());
        w.reserve_section_index();
        placed.push((id, off, bytes));
    }
    w.reserve_symtab_section_index();
    w.reserve_strtab_section_index();
    w.reserve_shstrtab_section_index();
    w.reserve_symtab();
    w.reserve_strtab().map_err(write_error)?;
    w.reserve_shstrtab().map_err(write_error)?;
    w.reserve_section_headers();

    w.write_file_header(&header(elf::ET_EXEC)).map_err(write_error)?;
    w.write_align_program_headers();
    w.write_program_header(&ProgramHeader {
        p_type: elf::PT_LOAD,
        p_flags: elf::PF_R | elf::PF_X,
        p_offset: text_off,
        p_vaddr: pc,
        p_paddr: pc,
        p_filesz: CODE_BYTES,
        p_memsz: CODE_BYTES,
        p_align: PAGE,
    });
    w.pad_until(text_off);
    w.write(&code);
    for (_, off, bytes) in &placed {
        w.pad_until(*off);
        w.write(bytes);
    }
    w.write_null_symbol();
    w.write_symbol(&Sym {
        section: Some(text_index.0),
        st_name: w.string_offset(Some(symbol_name)),
        st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_FUNC),
        st_other: elf::STV_DEFAULT.into(),
        st_shndx: Default::default(),
        st_value: pc,
        st_size: CODE_BYTES,
    });
    w.write_strtab();
    w.write_shstrtab();
    w.write_null_section_header();
    w.write_section_header(&SectionHeader {
        sh_name: w.section_name_offset(Some(text_name)),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: elf::SHF_ALLOC | elf::SHF_EXECINSTR,
        sh_addr: pc,
        sh_offset: text_off,
        sh_size: CODE_BYTES,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 1,
        sh_entsize: 0,
    });
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
    w.write_symtab_section_header(1);
    w.write_strtab_section_header();
    w.write_shstrtab_section_header();
    Ok(buf)
}

/// One note (header from `object::elf::NoteHeader64`, name and descriptor
/// each padded to 4 bytes, as the ELF note format lays them out).
fn note(out: &mut Vec<u8>, kind: elf::NoteType, name: &[u8], desc: &[u8]) {
    let e = LittleEndian;
    let h = elf::NoteHeader64 {
        n_namesz: U32::new(e, name.len() as u32 + 1),
        n_descsz: U32::new(e, desc.len() as u32),
        n_type: U32::new(e, kind),
    };
    out.extend_from_slice(object::pod::bytes_of(&h));
    out.extend_from_slice(name);
    out.push(0);
    out.resize(out.len().next_multiple_of(4), 0);
    out.extend_from_slice(desc);
    out.resize(out.len().next_multiple_of(4), 0);
}

/// The core file of `ctx`'s registers and default-address-space memory,
/// with the thread stopped at `pc`.
///
/// Errors: [`Unrepresentable`] if the writer fails.
pub fn core(ctx: &Context, pc: u64) -> Result<Vec<u8>, Unrepresentable> {
    let (prstatus, fpregs) = x86_64::notes(&ctx.registers, pc, PID);
    let mut notes = Vec::new();
    note(&mut notes, elf::NT_PRSTATUS, elf::ELF_NOTE_CORE, &prstatus);
    note(&mut notes, elf::NT_FPREGSET, elf::ELF_NOTE_CORE, &fpregs);
    let segs: Vec<_> = ctx.memory.iter().filter(|m| m.aspace == 0 && !m.bytes.is_empty()).collect();
    let mut buf = Vec::new();
    let mut w = Writer::new(Endianness::Little, true, &mut buf);
    w.reserve_file_header();
    w.reserve_program_headers(1 + segs.len() as u32);
    let notes_off = w.reserve(notes.len() as u64, 4);
    let offs: Vec<u64> = segs.iter().map(|m| w.reserve(m.bytes.len() as u64, 8)).collect();
    w.write_file_header(&header(elf::ET_CORE)).map_err(write_error)?;
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
    for (m, off) in segs.iter().zip(&offs) {
        let n = m.bytes.len() as u64;
        w.write_program_header(&ProgramHeader {
            p_type: elf::PT_LOAD,
            p_flags: elf::PF_R | elf::PF_W,
            p_offset: *off,
            p_vaddr: m.address,
            p_paddr: 0,
            p_filesz: n,
            p_memsz: n,
            p_align: 1,
        });
    }
    w.pad_until(notes_off);
    w.write(&notes);
    for (m, off) in segs.iter().zip(&offs) {
        w.pad_until(*off);
        w.write(&m.bytes);
    }
    Ok(buf)
}
