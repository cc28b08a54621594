//! The ELF files a process had mapped, as the unwinder and the symbolizer
//! need them: where each is loaded (its load bias, from the core's
//! `NT_FILE` mappings and the file's `PT_LOAD` headers, ELF gABI "Program
//! Loading"), its call frame information (`.eh_frame`, `.debug_frame`) and
//! its function symbols; and for the executable, its DWARF sections.

use crate::core_file::{Core, Mapping};
use crate::die::Sections;
use dwarfcheck_fast::cfi::{CfiSection, FrameKind};
use dwarfcheck_fast::target::Target;
use object::read::elf::{ElfFile64, ProgramHeader};
use object::{elf, CompressionFormat, Endianness, Object, ObjectSection, ObjectSymbol, ReadCache, SymbolKind};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Page size assumed when relating file offsets to load addresses (x86-64).
const PAGE: u64 = 0x1000;
/// Largest section read from a file, in **bytes**.
const MAX_SECTION_BYTES: u64 = 256 << 20;

/// One loaded ELF file.
#[derive(Debug)]
pub struct Module {
    /// The file read (the executable as given, or the path `NT_FILE` names).
    pub path: PathBuf,
    /// Load bias: run-time address minus link-time address.
    pub bias: u64,
    /// Run-time byte address ranges `[start, end)` the file occupies.
    pub ranges: Vec<(u64, u64)>,
    /// `.eh_frame`, at its run-time address.
    pub eh_frame: Option<Arc<CfiSection>>,
    /// `.debug_frame` (only when the bias is 0: its addresses are link-time
    /// ones, which the unwinder does not relocate).
    pub debug_frame: Option<Arc<CfiSection>>,
    /// Function symbols: link-time address, size in bytes, name; sorted.
    symbols: Vec<(u64, u64, String)>,
}

/// The named section's address and bytes, if the file has it, it is not
/// compressed and not larger than [`MAX_SECTION_BYTES`].
fn section<'d>(elf: &ElfFile64<'d, Endianness, &'d ReadCache<File>>, name: &str) -> Option<(u64, Vec<u8>)> {
    let s = elf.section_by_name(name)?;
    let range = s.compressed_file_range().ok()?;
    if range.format != CompressionFormat::None || s.size() > MAX_SECTION_BYTES {
        return None;
    }
    Some((s.address(), s.data().ok()?.to_vec()))
}

impl Module {
    /// Loads `path` (read as `file`) mapped at `mappings` (its `NT_FILE`
    /// entries; empty for an executable the core does not list, then
    /// placed at its link-time addresses). Returns the module and, for the
    /// executable (`dwarf`), its DWARF sections.
    ///
    /// Errors: the file cannot be read or is not a 64-bit ELF file.
    pub fn load(
        file: &Path,
        mappings: &[&Mapping],
        target: &Arc<Target>,
        dwarf: bool,
    ) -> Result<(Module, Option<Sections>), String> {
        let f = File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let cache = ReadCache::new(f);
        let elf = ElfFile64::<Endianness, _>::parse(&cache).map_err(|e| format!("{}: {e}", file.display()))?;
        let endian = elf.endian();
        let loads: Vec<_> = elf.elf_program_headers().iter().filter(|p| p.p_type(endian) == elf::PT_LOAD).collect();
        let (bias, ranges) = match mappings.iter().min_by_key(|m| m.file_offset) {
            Some(m) => {
                let seg = loads.iter().find(|p| {
                    let start = p.p_offset(endian) & !(PAGE - 1);
                    start <= m.file_offset
                        && m.file_offset < p.p_offset(endian).saturating_add(p.p_filesz(endian).max(1))
                });
                let bias = match seg {
                    Some(p) => {
                        let (off, vaddr) = (p.p_offset(endian) & !(PAGE - 1), p.p_vaddr(endian) & !(PAGE - 1));
                        m.start.wrapping_sub(vaddr.wrapping_add(m.file_offset - off))
                    }
                    None => m.start.wrapping_sub(m.file_offset),
                };
                (bias, mappings.iter().map(|m| (m.start, m.end)).collect())
            }
            None => {
                let r = loads.iter().map(|p| (p.p_vaddr(endian), p.p_vaddr(endian).saturating_add(p.p_memsz(endian))));
                (0, r.collect())
            }
        };
        let cfi = |name: &str, kind: FrameKind| {
            section(&elf, name).map(|(addr, bytes)| {
                let mut s = CfiSection::new(kind, bytes, addr.wrapping_add(bias), target.clone());
                if kind == FrameKind::EhFrame {
                    s.text_base = elf.section_by_name(".text").map(|t| t.address().wrapping_add(bias));
                    s.data_base = elf.section_by_name(".got").map(|t| t.address().wrapping_add(bias));
                }
                Arc::new(s)
            })
        };
        let eh_frame = cfi(".eh_frame", FrameKind::EhFrame);
        let debug_frame = if bias == 0 { cfi(".debug_frame", FrameKind::DebugFrame) } else { None };
        let mut symbols: Vec<(u64, u64, String)> = elf
            .symbols()
            .chain(elf.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
            .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
            .collect();
        symbols.sort();
        symbols.dedup_by_key(|s| s.0);
        let sections = dwarf.then(|| {
            let get = |n: &str| section(&elf, n).map(|(_, b)| b).unwrap_or_default();
            Sections {
                info: get(".debug_info"),
                abbrev: get(".debug_abbrev"),
                str: get(".debug_str"),
                line_str: get(".debug_line_str"),
                str_offsets: get(".debug_str_offsets"),
                addr: get(".debug_addr"),
                rnglists: get(".debug_rnglists"),
                ranges: get(".debug_ranges"),
                loclists: get(".debug_loclists"),
                loc: get(".debug_loc"),
            }
        });
        Ok((Module { path: file.to_path_buf(), bias, ranges, eh_frame, debug_frame, symbols }, sections))
    }

    /// Whether run-time address `pc` lies in this module.
    pub fn contains(&self, pc: u64) -> bool {
        self.ranges.iter().any(|&(s, e)| s <= pc && pc < e)
    }

    /// The function symbol holding run-time address `pc`: the last symbol
    /// at or below it, if `pc` is inside its size (or it has no size).
    pub fn symbol(&self, pc: u64) -> Option<&str> {
        let x = pc.wrapping_sub(self.bias);
        let i = self.symbols.partition_point(|s| s.0 <= x).checked_sub(1)?;
        let (addr, size, name) = &self.symbols[i];
        (*size == 0 || x < addr.saturating_add(*size)).then_some(name.as_str())
    }
}

/// Whether two paths name the same file (same device and inode).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Loads the executable `exe` and every other file the core's `NT_FILE`
/// note names that can be read as an ELF file; the executable first.
/// Returns the modules, the executable's DWARF sections and notes on the
/// files that could not be used.
///
/// Errors: the executable itself cannot be loaded.
pub fn load_all(
    core: &mut Core,
    exe: &Path,
    target: &Arc<Target>,
) -> Result<(Vec<Module>, Sections, Vec<String>), String> {
    let mut notes = Vec::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    for m in &core.mappings {
        if !paths.contains(&m.path) {
            paths.push(m.path.clone());
        }
    }
    let exe_named = paths.iter().find(|p| same_file(p, exe)).cloned();
    if let Some(n) = &exe_named {
        core.substitute(n, exe);
    }
    let maps_of = |p: &Path| core.mappings.iter().filter(|m| m.path == p).collect::<Vec<_>>();
    let exe_maps = exe_named.as_deref().map(maps_of).unwrap_or_default();
    let (exe_module, sections) = Module::load(exe, &exe_maps, target, true)?;
    let mut modules = vec![exe_module];
    for p in paths {
        if Some(&p) == exe_named.as_ref() {
            continue;
        }
        match Module::load(&core.file_for(&p), &maps_of(&p), target, false) {
            Ok((m, _)) => modules.push(m),
            Err(e) => notes.push(format!("not used: {e}")),
        }
    }
    Ok((modules, sections.unwrap_or_default(), notes))
}
