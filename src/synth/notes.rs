//! The process notes of a synthesised core file besides the registers:
//! the ELF note record itself, `NT_PRPSINFO` (`struct elf_prpsinfo` of
//! x86-64 Linux) and `NT_FILE` (the file-backed mappings), as the Linux
//! kernel lays them out (`fs/binfmt_elf.c`; `include/uapi/linux/elfcore.h`).
//!
//! eu-stack (elfutils' libdwfl) refuses a core without `NT_PRPSINFO`, and
//! finds the executable's mappings through `NT_FILE`.

use object::elf;
use object::endian::{LittleEndian, U32};

/// Appends one note to `out`: header (`object::elf::NoteHeader64`), then
/// the name (NUL-terminated) and the descriptor, each padded to 4 bytes.
pub fn note(out: &mut Vec<u8>, kind: elf::NoteType, name: &[u8], desc: &[u8]) {
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

/// Size of x86-64 Linux `struct elf_prpsinfo`, in **bytes**.
pub const PRPSINFO_BYTES: usize = 136;
/// Byte offsets in `struct elf_prpsinfo` (x86-64): `pr_pid`, `pr_fname`
/// (16 bytes), `pr_psargs` (80 bytes).
const PRPSINFO_PID: usize = 24;
const PRPSINFO_FNAME: usize = 40;
const PRPSINFO_PSARGS: usize = 56;

/// The `NT_PRPSINFO` payload ([`PRPSINFO_BYTES`] bytes): state `R`
/// (running), process id `pid`, parent, group and session 1, the command
/// name `fname` (cut to 15 bytes) and the command line `args` (cut to 79
/// bytes), both NUL-terminated.
pub fn prpsinfo(pid: u32, fname: &str, args: &str) -> Vec<u8> {
    let mut d = vec![0u8; PRPSINFO_BYTES];
    d[1] = b'R'; // pr_sname
    d[PRPSINFO_PID..PRPSINFO_PID + 4].copy_from_slice(&pid.to_le_bytes());
    for f in 1..4 {
        // pr_ppid, pr_pgrp, pr_sid
        d[PRPSINFO_PID + 4 * f..PRPSINFO_PID + 4 * f + 4].copy_from_slice(&1u32.to_le_bytes());
    }
    let put = |d: &mut Vec<u8>, at: usize, cap: usize, s: &str| {
        let n = s.len().min(cap - 1);
        d[at..at + n].copy_from_slice(&s.as_bytes()[..n]);
    };
    put(&mut d, PRPSINFO_FNAME, 16, fname);
    put(&mut d, PRPSINFO_PSARGS, 80, args);
    d
}

/// One file-backed mapping of `NT_FILE`: `[start, end)` virtual
/// addresses (page-aligned) and the file offset of `start`, in **pages**.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// First address mapped.
    pub start: u64,
    /// First address past the mapping.
    pub end: u64,
    /// File offset of `start`, in units of the page size.
    pub page_offset: u64,
}

/// The `NT_FILE` payload: the count, the page size (**bytes**), one
/// `(start, end, page_offset)` triple of 8-byte words per mapping, then
/// one NUL-terminated file name per mapping (here every mapping is of
/// `path`).
pub fn file_note(page: u64, mappings: &[Mapping], path: &str) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&(mappings.len() as u64).to_le_bytes());
    d.extend_from_slice(&page.to_le_bytes());
    for m in mappings {
        for w in [m.start, m.end, m.page_offset] {
            d.extend_from_slice(&w.to_le_bytes());
        }
    }
    for _ in mappings {
        d.extend_from_slice(path.as_bytes());
        d.push(0);
    }
    d
}
