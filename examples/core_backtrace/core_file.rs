//! Reading an x86-64 Linux core file: its threads (`NT_PRSTATUS`,
//! `NT_FPREGSET`), the files it had mapped (`NT_FILE`) and its memory
//! (`PT_LOAD` segments, and the mapped files' bytes for what the core
//! leaves out), each read from the file when asked, never copied whole.
//!
//! Note layouts (Linux `include/uapi/linux/elfcore.h` and the x86-64
//! `struct user_regs_struct` / `struct user_fpregs_struct`, as the kernel
//! and GDB write them):
//! - `NT_PRSTATUS` (type 1, 336 bytes): `pr_cursig` (u16) at byte 12,
//!   `pr_pid` (the thread's LWP id, u32) at byte 32, then from byte 112 the
//!   27 general registers, 8 bytes each, in the order of [`GREG_NAMES`];
//! - `NT_FPREGSET` (type 2, 512 bytes, the `fxsave` area): `fcw` (u16) at
//!   byte 0, `fsw` at 2, `mxcsr` (u32) at 24, the x87 registers `st0`-`st7`
//!   16 bytes apart from byte 32, `xmm0`-`xmm15` 16 bytes apart from byte 160;
//!   it belongs to the `NT_PRSTATUS` before it;
//! - `NT_FILE` (type 0x46494c45): count and page size (u64 each), then per
//!   mapping its start, end and file offset in pages (u64 each), then the
//!   mappings' path names, each ending in a NUL byte.

use object::elf;
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{Endianness, ReadCache};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The general registers of `NT_PRSTATUS`, in the order the note stores
/// them (x86-64 `struct user_regs_struct`), each 8 bytes.
pub const GREG_NAMES: [&str; 27] = [
    "r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi", "rdi", "orig_rax",
    "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
];

/// Byte offset of the general registers in an `NT_PRSTATUS` note.
const PRSTATUS_REGS: usize = 112;
/// Byte offset of `pr_pid` in an `NT_PRSTATUS` note.
const PRSTATUS_PID: usize = 32;
/// Byte offset of `pr_cursig` in an `NT_PRSTATUS` note.
const PRSTATUS_CURSIG: usize = 12;
/// Size in bytes of the `NT_FPREGSET` note (the `fxsave` area).
pub const FPREGSET_BYTES: usize = 512;
/// Most threads read from one core (a bound on what the notes can make us
/// keep).
const MAX_THREADS: usize = 1 << 16;
/// Most bytes of note data read from one core.
const MAX_NOTE_BYTES: u64 = 64 << 20;

/// Why a core file cannot be used.
#[derive(Debug)]
pub struct CoreError(pub String);

impl std::fmt::Display for CoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CoreError {}

fn err(what: impl Into<String>) -> CoreError {
    CoreError(what.into())
}

/// One thread of the core: its LWP id, the signal it stopped with and its
/// registers as the notes give them.
#[derive(Debug, Clone)]
pub struct Thread {
    /// The thread's LWP id (`pr_pid`).
    pub lwp: u32,
    /// The signal it stopped with (`pr_cursig`; 0 for none).
    pub signal: u16,
    /// General registers in `NT_PRSTATUS` order ([`GREG_NAMES`]).
    pub gregs: [u64; 27],
    /// The thread's `NT_FPREGSET` bytes ([`FPREGSET_BYTES`] long), if the
    /// core has them.
    pub fpregs: Option<Vec<u8>>,
}

/// One file-backed mapping of the process (`NT_FILE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First byte address of the mapping.
    pub start: u64,
    /// Byte address just past it.
    pub end: u64,
    /// Byte offset in the file of the byte at `start`.
    pub file_offset: u64,
    /// The mapped file's path, as the process saw it.
    pub path: PathBuf,
}

/// A `PT_LOAD` segment of the core: memory at `vaddr` of which the first
/// `filesz` bytes are in the core at `offset` (the rest, if any, is left
/// to the mapped file).
#[derive(Debug, Clone, Copy)]
struct Segment {
    vaddr: u64,
    filesz: u64,
    offset: u64,
}

/// An opened core file: its threads and mappings, and its memory read on
/// demand.
#[derive(Debug)]
pub struct Core {
    file: File,
    /// Segments sorted by address.
    segments: Vec<Segment>,
    /// The threads, in the order of their notes (the thread that got the
    /// signal first, as the kernel and GDB write them).
    pub threads: Vec<Thread>,
    /// File-backed mappings, sorted by address.
    pub mappings: Vec<Mapping>,
    /// Files to read mapped bytes from, by the path `NT_FILE` names
    /// (replaced by [`Core::substitute`]).
    substitutes: HashMap<PathBuf, PathBuf>,
    /// Opened mapped files (`None`: cannot be opened).
    opened: Mutex<HashMap<PathBuf, Option<std::sync::Arc<File>>>>,
}

/// Reads a little-endian u64 at `at` of `b`, if it is there.
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at.checked_add(8)?).map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
}

impl Core {
    /// Opens the core at `path` and reads its program headers and notes.
    ///
    /// Errors: the file cannot be read, is not a 64-bit little-endian
    /// x86-64 `ET_CORE` ELF file, or its notes are malformed.
    pub fn open(path: &Path) -> Result<Core, CoreError> {
        let file = File::open(path).map_err(|e| err(format!("{}: {e}", path.display())))?;
        let cache = ReadCache::new(file.try_clone().map_err(|e| err(e.to_string()))?);
        let elf = ElfFile64::<Endianness, _>::parse(&cache).map_err(|e| err(format!("not an ELF file: {e}")))?;
        let endian = elf.endian();
        let header = elf.elf_header();
        if header.e_type(endian) != elf::ET_CORE || header.e_machine(endian) != elf::EM_X86_64 {
            return Err(err("not an x86-64 core file"));
        }
        if endian != Endianness::Little {
            return Err(err("not a little-endian core file"));
        }
        let mut segments = Vec::new();
        let mut threads: Vec<Thread> = Vec::new();
        let mut mappings = Vec::new();
        let mut note_bytes = 0u64;
        for ph in elf.elf_program_headers() {
            let kind = ph.p_type(endian);
            if kind == elf::PT_LOAD {
                segments.push(Segment {
                    vaddr: ph.p_vaddr(endian),
                    filesz: ph.p_filesz(endian).min(ph.p_memsz(endian)),
                    offset: ph.p_offset(endian),
                });
                continue;
            }
            if kind != elf::PT_NOTE {
                continue;
            }
            note_bytes = note_bytes.saturating_add(ph.p_filesz(endian));
            if note_bytes > MAX_NOTE_BYTES {
                return Err(err("the core's notes are too large"));
            }
            let Some(mut notes) = ph.notes(endian, &cache).map_err(|e| err(format!("bad note segment: {e}")))? else {
                continue;
            };
            while let Some(note) = notes.next().map_err(|e| err(format!("bad note: {e}")))? {
                let desc = note.desc();
                match (note.name(), note.n_type(endian)) {
                    (b"CORE", elf::NT_PRSTATUS) => {
                        if threads.len() >= MAX_THREADS {
                            return Err(err("too many threads"));
                        }
                        threads.push(prstatus(desc)?);
                    }
                    (b"CORE", elf::NT_FPREGSET) => {
                        if let Some(t) = threads.last_mut() {
                            if desc.len() >= FPREGSET_BYTES && t.fpregs.is_none() {
                                t.fpregs = Some(desc[..FPREGSET_BYTES].to_vec());
                            }
                        }
                    }
                    (b"CORE", elf::NT_FILE) => mappings = nt_file(desc)?,
                    _ => {}
                }
            }
        }
        if threads.is_empty() {
            return Err(err("the core has no NT_PRSTATUS note"));
        }
        segments.sort_by_key(|s| s.vaddr);
        mappings.sort_by_key(|m: &Mapping| m.start);
        Ok(Core { file, segments, threads, mappings, substitutes: HashMap::new(), opened: Mutex::new(HashMap::new()) })
    }

    /// A core read from `file` with `segments` (byte address, file offset,
    /// bytes in the file), `threads` and `mappings`, for tests that need no
    /// ELF file.
    #[cfg(test)]
    pub fn for_test(file: File, segments: &[(u64, u64, u64)], threads: Vec<Thread>, mappings: Vec<Mapping>) -> Core {
        Core {
            file,
            segments: segments.iter().map(|&(vaddr, offset, filesz)| Segment { vaddr, filesz, offset }).collect(),
            threads,
            mappings,
            substitutes: HashMap::new(),
            opened: Mutex::new(HashMap::new()),
        }
    }

    /// Reads mapped bytes of the file `NT_FILE` calls `named` from `actual`
    /// instead (an executable given on the command line).
    pub fn substitute(&mut self, named: &Path, actual: &Path) {
        self.substitutes.insert(named.to_path_buf(), actual.to_path_buf());
    }

    /// The file to read for mapped path `named`.
    pub fn file_for(&self, named: &Path) -> PathBuf {
        self.substitutes.get(named).cloned().unwrap_or_else(|| named.to_path_buf())
    }

    /// Reads `out.len()` bytes of the process's memory from byte address
    /// `address`: from the core's `PT_LOAD` segments, and where the core
    /// holds no bytes for an address, from the file mapped there.
    ///
    /// Errors: the byte address of the first byte that neither holds.
    pub fn read_memory(&self, address: u64, out: &mut [u8]) -> Result<(), u64> {
        let mut done = 0usize;
        while done < out.len() {
            let at = address.checked_add(done as u64).ok_or(address)?;
            let n = self.read_some(at, &mut out[done..]).ok_or(at)?;
            done += n;
        }
        Ok(())
    }

    /// Reads as many bytes from `at` as one segment or mapping holds (at
    /// least one), returning how many; `None` if the byte at `at` cannot be
    /// read.
    fn read_some(&self, at: u64, out: &mut [u8]) -> Option<usize> {
        let i = self.segments.partition_point(|s| s.vaddr <= at);
        if let Some(seg) = i.checked_sub(1).map(|i| &self.segments[i]) {
            let rel = at - seg.vaddr;
            if rel < seg.filesz {
                let n = usize::try_from((seg.filesz - rel).min(out.len() as u64)).ok()?;
                self.file.read_exact_at(&mut out[..n], seg.offset.checked_add(rel)?).ok()?;
                return Some(n);
            }
        }
        // Not in the core: the mapped file's bytes.
        let j = self.mappings.partition_point(|m| m.start <= at);
        let map = j.checked_sub(1).map(|j| &self.mappings[j]).filter(|m| at < m.end)?;
        let file = self.open_mapped(&map.path)?;
        let n = usize::try_from((map.end - at).min(out.len() as u64)).ok()?;
        let offset = map.file_offset.checked_add(at - map.start)?;
        let got = read_up_to(&file, &mut out[..n], offset);
        (got > 0).then_some(got)
    }

    /// The opened file mapped as `path` (cached), if it can be opened.
    fn open_mapped(&self, path: &Path) -> Option<std::sync::Arc<File>> {
        let mut opened = self.opened.lock().ok()?;
        opened
            .entry(path.to_path_buf())
            .or_insert_with(|| File::open(self.file_for(path)).ok().map(std::sync::Arc::new))
            .clone()
    }
}

/// Reads up to `out.len()` bytes of `file` at `offset` (fewer at the end
/// of the file); returns how many.
fn read_up_to(file: &File, out: &mut [u8], offset: u64) -> usize {
    let mut done = 0;
    while done < out.len() {
        match file.read_at(&mut out[done..], offset + done as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => done += n,
        }
    }
    done
}

/// Decodes an `NT_PRSTATUS` note (layout in the module docs).
fn prstatus(desc: &[u8]) -> Result<Thread, CoreError> {
    let regs_end = PRSTATUS_REGS + 27 * 8;
    if desc.len() < regs_end {
        return Err(err(format!("NT_PRSTATUS note of {} bytes is too short", desc.len())));
    }
    let mut gregs = [0u64; 27];
    for (i, g) in gregs.iter_mut().enumerate() {
        *g = u64_at(desc, PRSTATUS_REGS + 8 * i).unwrap_or(0);
    }
    let lwp = u32::from_le_bytes([
        desc[PRSTATUS_PID],
        desc[PRSTATUS_PID + 1],
        desc[PRSTATUS_PID + 2],
        desc[PRSTATUS_PID + 3],
    ]);
    let signal = u16::from_le_bytes([desc[PRSTATUS_CURSIG], desc[PRSTATUS_CURSIG + 1]]);
    Ok(Thread { lwp, signal, gregs, fpregs: None })
}

/// Decodes an `NT_FILE` note (layout in the module docs).
fn nt_file(desc: &[u8]) -> Result<Vec<Mapping>, CoreError> {
    let bad = || err("malformed NT_FILE note");
    let count = u64_at(desc, 0).ok_or_else(bad)?;
    let page = u64_at(desc, 8).ok_or_else(bad)?;
    // Each mapping takes 24 bytes of the note: the count cannot exceed that.
    let count = usize::try_from(count).ok().filter(|&c| c <= desc.len() / 24).ok_or_else(bad)?;
    let names_at = 16 + 24 * count;
    let mut names = desc.get(names_at..).ok_or_else(bad)?.split(|&b| b == 0);
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let at = 16 + 24 * i;
        let (start, end, pages) = (u64_at(desc, at), u64_at(desc, at + 8), u64_at(desc, at + 16));
        let (Some(start), Some(end), Some(pages)) = (start, end, pages) else { return Err(bad()) };
        let name = names.next().ok_or_else(bad)?;
        let path = PathBuf::from(String::from_utf8_lossy(name).into_owned());
        let file_offset = pages.checked_mul(page).ok_or_else(bad)?;
        if end > start {
            out.push(Mapping { start, end, file_offset, path });
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn nt_file_decodes_mappings_and_names() {
        // Two mappings, page size 0x1000: /a at 0x1000..0x3000 from page 0,
        // /bc at 0x5000..0x6000 from page 2.
        let mut d = Vec::new();
        for v in [2u64, 0x1000, 0x1000, 0x3000, 0, 0x5000, 0x6000, 2] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        d.extend_from_slice(b"/a\0/bc\0");
        let m = nt_file(&d).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].start, m[0].end, m[0].file_offset), (0x1000, 0x3000, 0));
        assert_eq!(m[1].path, PathBuf::from("/bc"));
        assert_eq!(m[1].file_offset, 0x2000);
        // A count larger than the note can hold is refused, not allocated.
        let mut big = d.clone();
        big[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(nt_file(&big).is_err());
    }

    /// A file holding `bytes`, removed when dropped.
    pub struct TempFile(pub PathBuf);

    impl TempFile {
        pub fn new(tag: &str, bytes: &[u8]) -> TempFile {
            static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p = std::env::temp_dir().join(format!("core-backtrace-{}-{tag}-{n}", std::process::id()));
            std::fs::write(&p, bytes).unwrap();
            TempFile(p)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn memory_comes_from_the_core_then_from_mapped_files() {
        // The core holds 0x1000..0x1008 (bytes 0-7 of its file); a mapped
        // file covers 0x1000..0x2000 from its byte 0x10: where the core
        // has nothing (0x1008 on) the file's bytes show.
        let core_bytes: Vec<u8> = (0..8).collect();
        let mapped: Vec<u8> = (0..64).map(|i| 100 + i).collect();
        let (cf, mf) = (TempFile::new("core", &core_bytes), TempFile::new("mapped", &mapped));
        let map = Mapping { start: 0x1000, end: 0x1030, file_offset: 0x10, path: mf.0.clone() };
        let core = Core::for_test(File::open(&cf.0).unwrap(), &[(0x1000, 0, 8)], Vec::new(), vec![map]);
        let mut out = [0u8; 12];
        core.read_memory(0x1002, &mut out).unwrap();
        // 0x1002..0x1008 from the core, 0x1008..0x100e from file byte 0x18 on.
        assert_eq!(out, [2, 3, 4, 5, 6, 7, 124, 125, 126, 127, 128, 129]);
        // Past the mapping's end: the error names the first unreadable byte.
        let mut out = [0u8; 8];
        assert_eq!(core.read_memory(0x102c, &mut out), Err(0x1030));
        assert_eq!(core.read_memory(0x5000, &mut out), Err(0x5000));
    }

    #[test]
    fn prstatus_reads_pid_signal_and_registers() {
        let mut d = vec![0u8; 336];
        d[12..14].copy_from_slice(&6u16.to_le_bytes());
        d[32..36].copy_from_slice(&4242u32.to_le_bytes());
        // rip is register 16 of the note.
        d[112 + 16 * 8..112 + 17 * 8].copy_from_slice(&0x401000u64.to_le_bytes());
        let t = prstatus(&d).unwrap();
        assert_eq!((t.lwp, t.signal, t.gregs[16]), (4242, 6, 0x401000));
        assert_eq!(GREG_NAMES[16], "rip");
        assert!(prstatus(&d[..200]).is_err());
    }
}
