//! Extraction of expressions, location lists and FDEs from ELF files into
//! cases with a deterministic synthetic context (docs/architecture.md §1, "real ELF files").
//!
//! [`extract`] reads one ELF file (executable, shared object, relocatable
//! object, or a split `.debug` file whose code sections are `NOBITS`) of an
//! x86-64, AArch64 or AMDGPU machine, decompresses its sections if needed,
//! applies the relocations of a relocatable object's debug sections (see
//! [`section_data`]), and returns:
//! - one [`ExprCase`] per `DW_AT_location` / `DW_AT_frame_base` exprloc, and
//!   one per entry of a location list (`.debug_loc` or `.debug_loclists`),
//!   see [`dwarf`];
//! - one [`CfiCase`] per FDE of `.eh_frame` and `.debug_frame`, see
//!   [`frames`].
//!
//! Which units are read (ordinary units; split units of a `.dwo` or `.dwp`
//! input; the split unit of each skeleton unit, from a `.dwp` or `.dwo`
//! beside) is decided by `walk`, with the help of `split`.
//!
//! [`extract_folded`] does the same unit by unit (compilation units,
//! package rows, runs of FDEs), in parallel, handing each unit's cases to a
//! [`fold::Fold`] as soon as they are extracted and merging the results in
//! unit order: memory then grows with the largest unit, not the file.

pub mod describe;
pub mod dwarf;
pub mod fold;
pub mod frames;
mod split;
mod walk;

use crate::case::{CfiCase, ExprCase};
use dwarfcheck_core::target::{presets, Target};
use object::{Object, ObjectSection, ObjectSymbol};
use std::path::Path;
use std::sync::Arc;

/// What to extract and how to build the synthetic contexts.
#[derive(Debug, Clone)]
pub struct Options {
    /// Extract location expressions and location-list entries.
    pub expressions: bool,
    /// Extract FDEs of `.eh_frame` and `.debug_frame`.
    pub frames: bool,
    /// Seed of the synthetic machine state (`Context::synthetic`).
    pub seed: u64,
    /// Vendor profile for every expression and CFI program of the file,
    /// overriding the target's and any unit's `DW_AT_LLVM_augmentation`
    /// (a CIE names no vendor encoding, so CFI that uses `DW_OP_LLVM_user`
    /// needs this).
    pub vendor: Option<dwarfcheck_core::encoding::VendorProfile>,
    /// Per frame section, how many FDEs (evenly spaced) also get virtual
    /// unwinding from a synthetic machine state in the middle of their
    /// range (`CfiCase::unwind`; 0: none).
    pub unwind_samples: usize,
    /// When extraction must stop: units and frame sections not reached by
    /// then are left out and counted in [`Extracted::unfinished`] (`None`:
    /// no deadline).
    pub deadline: Option<std::time::Instant>,
}

/// The default of [`Options::unwind_samples`].
pub const DEFAULT_UNWIND_SAMPLES: usize = 256;

impl Default for Options {
    fn default() -> Self {
        Options {
            expressions: true,
            frames: true,
            seed: DEFAULT_SEED,
            vendor: None,
            unwind_samples: DEFAULT_UNWIND_SAMPLES,
            deadline: None,
        }
    }
}

/// The seed used unless [`Options::seed`] says otherwise.
pub const DEFAULT_SEED: u64 = 0x5eed_d3a7;

/// How much was found in one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Compilation units read.
    pub units: usize,
    /// `DW_AT_location` / `DW_AT_frame_base` attributes in exprloc (or
    /// DWARF 2/3 block) form.
    pub expressions: usize,
    /// Location-list entries with an expression (`.debug_loc` and
    /// `.debug_loclists`; base-address entries, empty ranges and
    /// tombstones are not counted).
    pub loclist_entries: usize,
    /// Of the cases above, those that are `DW_AT_frame_base`.
    pub frame_bases: usize,
    /// FDEs in `.eh_frame`.
    pub eh_frame_fdes: usize,
    /// FDEs in `.debug_frame`.
    pub debug_frame_fdes: usize,
    /// FDEs that also get virtual unwinding ([`Options::unwind_samples`]).
    pub unwind_fdes: usize,
    /// Of the units read, the split units (`DW_UT_split_compile`, or GNU
    /// DWARF 4 units of a `.dwo`): from a `.dwo` file or `.dwp` package
    /// given as input, or found for a skeleton unit.
    pub split_units: usize,
    /// Skeleton units whose split unit was found in no `.dwo` file or
    /// `.dwp` package: their locations are not checked.
    pub skeletons_without_split: usize,
}

impl std::ops::AddAssign for Counts {
    /// Adds the counts of another file.
    fn add_assign(&mut self, o: Counts) {
        self.units += o.units;
        self.expressions += o.expressions;
        self.loclist_entries += o.loclist_entries;
        self.frame_bases += o.frame_bases;
        self.eh_frame_fdes += o.eh_frame_fdes;
        self.debug_frame_fdes += o.debug_frame_fdes;
        self.unwind_fdes += o.unwind_fdes;
        self.split_units += o.split_units;
        self.skeletons_without_split += o.skeletons_without_split;
    }
}

impl Counts {
    /// Expression cases in total (exprlocs plus location-list entries).
    pub fn expr_cases(&self) -> usize {
        self.expressions + self.loclist_entries
    }
    /// FDEs in total.
    pub fn fdes(&self) -> usize {
        self.eh_frame_fdes + self.debug_frame_fdes
    }
}

/// Everything extracted from one file.
#[derive(Debug, Clone, Default)]
pub struct Extracted {
    /// Expression cases (no expected outcome: purely differential).
    pub exprs: Vec<ExprCase>,
    /// CFI cases, one per FDE.
    pub cfi: Vec<CfiCase>,
    /// What was found.
    pub counts: Counts,
    /// Problems that stopped part of the extraction (a bad unit, a bad
    /// frame entry) without making the whole file unusable.
    pub warnings: Vec<String>,
    /// What was left out because [`Options::deadline`] passed; `None` when
    /// everything was extracted.
    pub unfinished: Option<Unfinished>,
}

/// What extraction left out when its deadline passed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unfinished {
    /// Compilation units whose DIEs were not read (their headers were
    /// counted).
    pub units_not_read: usize,
    /// Frame sections (`.eh_frame`, `.debug_frame`) not read.
    pub frame_sections_not_read: usize,
}

impl Options {
    /// Whether [`Options::deadline`] has passed.
    pub fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| std::time::Instant::now() >= d)
    }
}

impl Extracted {
    /// The record of what was left out, created on first use.
    fn unfinished_mut(&mut self) -> &mut Unfinished {
        self.unfinished.get_or_insert_with(Unfinished::default)
    }

    /// Appends what was extracted after this (the next units of the file):
    /// cases, warnings and what was left out follow, counts add up.
    pub fn append(&mut self, next: Extracted) {
        self.exprs.extend(next.exprs);
        self.cfi.extend(next.cfi);
        self.counts += next.counts;
        self.warnings.extend(next.warnings);
        self.unfinished = Unfinished::sum(self.unfinished, next.unfinished);
    }
}

impl Unfinished {
    /// Both records added up; `None` when neither has one.
    pub fn sum(a: Option<Unfinished>, b: Option<Unfinished>) -> Option<Unfinished> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Unfinished {
                units_not_read: a.units_not_read + b.units_not_read,
                frame_sections_not_read: a.frame_sections_not_read + b.frame_sections_not_read,
            }),
            (a, b) => a.or(b),
        }
    }
}

/// Reads the ELF file at `path` and extracts its cases.
///
/// Errors: the file cannot be read, is not an ELF file, has a machine other
/// than x86-64, AArch64 or AMDGPU (`EM_AMDGPU`, 224), or has a section that
/// cannot be decompressed.
/// Malformed DWARF inside a unit or a frame section is reported in
/// [`Extracted::warnings`] and skips the rest of that unit or section.
/// Never panics.
///
/// Split DWARF: a `.dwo` file or a `.dwp` package is read as such (its
/// split units without addresses: see [`Counts::split_units`]); for each
/// skeleton unit of an executable or object, its split unit is read from
/// `<path>.dwp` if that package holds it, else from the `.dwo` file its
/// `DW_AT_dwo_name` names (absolute, under its `DW_AT_comp_dir`, or beside
/// `path`), with the skeleton's `.debug_addr` and `DW_AT_addr_base`.
/// Skeletons whose split unit is found nowhere are counted in
/// [`Counts::skeletons_without_split`], each with a warning.
pub fn extract(path: &Path, opts: &Options) -> Result<Extracted, ElfError> {
    extract_folded(path, opts, &fold::Collect)
}

/// [`extract`], unit by unit: each unit's cases (a compilation unit with
/// the split unit of a skeleton, a package row, a run of at most
/// [`frames::FDES_PER_UNIT`] FDEs) go to `fold` as soon as they are
/// extracted, units in parallel (rayon), and the results are merged in
/// unit order: expression units first, then `.eh_frame`, then
/// `.debug_frame`. The deadline is checked before each unit.
pub fn extract_folded<F: fold::Fold>(path: &Path, opts: &Options, fold: &F) -> Result<F::Acc, ElfError> {
    let data = std::fs::read(path).map_err(|source| ElfError::Read { origin: path.display().to_string(), source })?;
    extract_at(&data, &path.display().to_string(), Some(path), opts, fold)
}

/// [`extract`] on the bytes of an ELF file; `origin` names the file in case
/// origins and errors. `.dwo` files are looked for only by their absolute
/// path or under their `DW_AT_comp_dir`, and no package is read.
pub fn extract_bytes(data: &[u8], origin: &str, opts: &Options) -> Result<Extracted, ElfError> {
    extract_at(data, origin, None, opts, &fold::Collect)
}

/// [`extract_bytes`] into `fold`; `.dwo` files and a `.dwp` package are
/// also looked for beside `input`.
fn extract_at<F: fold::Fold>(
    data: &[u8],
    origin: &str,
    input: Option<&Path>,
    opts: &Options,
    fold: &F,
) -> Result<F::Acc, ElfError> {
    let file =
        object::File::parse(data).map_err(|e| ElfError::Parse { origin: origin.to_string(), detail: e.to_string() })?;
    if file.format() != object::BinaryFormat::Elf {
        return Err(ElfError::NotElf { origin: origin.to_string() });
    }
    let mut target = target_of(&file, data)
        .map_err(|machine| ElfError::Machine { origin: origin.to_string(), machine: format!("{machine:?}") })?;
    if let Some(v) = e_machine(data).and_then(vendor_for_machine) {
        target.vendor = v;
    }
    if let Some(v) = &opts.vendor {
        target.vendor = v.clone();
    }
    let target = Arc::new(target);
    let mut out = fold.empty();
    if opts.expressions {
        out = fold.merge(out, walk::extract_exprs(&file, origin, input, &target, opts, fold)?);
    }
    if opts.frames {
        out = fold.merge(out, frames::extract_fdes(&file, origin, &target, opts, fold)?);
    }
    Ok(out)
}

/// Why a file yields no cases at all (problems inside a unit or a frame
/// section are warnings instead, [`Extracted::warnings`]).
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// The file cannot be read.
    #[error("{origin}: cannot read: {source}")]
    Read {
        /// The file.
        origin: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// `object` cannot parse the file.
    #[error("{origin}: not a readable ELF file: {detail}")]
    Parse {
        /// The file.
        origin: String,
        /// `object`'s error.
        detail: String,
    },
    /// An object file of another format.
    #[error("{origin}: not an ELF file")]
    NotElf {
        /// The file.
        origin: String,
    },
    /// A machine without a target preset.
    #[error("{origin}: unsupported ELF machine {machine} (x86-64, AArch64 and AMDGPU have target presets)")]
    Machine {
        /// The file.
        origin: String,
        /// The machine, as `object` names it.
        machine: String,
    },
    /// A section that cannot be decompressed.
    #[error("{origin}: section {name}: {detail}")]
    Section {
        /// The file.
        origin: String,
        /// The section's name.
        name: String,
        /// `object`'s error.
        detail: String,
    },
}

impl ElfError {
    /// The file the error is about.
    pub fn origin(&self) -> &str {
        match self {
            ElfError::Read { origin, .. }
            | ElfError::Parse { origin, .. }
            | ElfError::NotElf { origin }
            | ElfError::Machine { origin, .. }
            | ElfError::Section { origin, .. } => origin,
        }
    }

    /// What went wrong, without the file's name (every message reads
    /// `origin: reason`).
    pub fn reason(&self) -> String {
        let full = self.to_string();
        match full.strip_prefix(self.origin()).and_then(|r| r.strip_prefix(": ")) {
            Some(r) => r.to_string(),
            None => full,
        }
    }
}

/// The ELF header's `e_machine`, read from the raw bytes (offset 18, two
/// bytes in the byte order `EI_DATA` gives). `None` if the header is short.
fn e_machine(data: &[u8]) -> Option<u16> {
    let b = [*data.get(18)?, *data.get(19)?];
    Some(if data.get(5) == Some(&2) { u16::from_be_bytes(b) } else { u16::from_le_bytes(b) })
}

/// Intel GPU `e_machine` values: 0xb6, which ocloc's `INTC` container
/// kernels carry, and 205 (`EM_INTELGT`), which zebin files carry.
pub const INTEL_GPU_MACHINES: [u16; 2] = [0xb6, 205];

/// The vendor profile an ELF machine implies, over the preset's default:
/// the `intel` profile for Intel GPU machines ([`INTEL_GPU_MACHINES`]),
/// whose IGC-written DWARF uses `DW_OP_INTEL_*` at 0xeb–0xef
/// (docs/ambiguities.md). `None`: keep the preset's profile. A `--vendor`
/// option still overrides this choice.
pub fn vendor_for_machine(machine: u16) -> Option<dwarfcheck_core::encoding::VendorProfile> {
    INTEL_GPU_MACHINES.contains(&machine).then(dwarfcheck_core::encoding::VendorProfile::intel)
}

/// The target preset for the ELF machine, with the file's byte order.
///
/// AMDGPU code objects get the wavefront 64 preset: the DWARF register
/// numbers say which wavefront size a function uses (AMDGPUUsage "Register
/// Identifier"), and gfx9 (gfx90a, the fixtures' processor) runs wave64.
///
/// Errors: the architecture `object` reports, when no preset has it.
fn target_of(file: &object::File<'_>, data: &[u8]) -> Result<Target, object::Architecture> {
    let mut t = match file.architecture() {
        object::Architecture::X86_64 => presets::x86_64(),
        object::Architecture::Aarch64 => presets::aarch64(),
        // `object` has no `Architecture` for AMD GPU code objects.
        _ if e_machine(data) == Some(object::elf::EM_AMDGPU.0) => presets::amdgpu_wave64(),
        // Intel GPU kernels name no platform family: the widest register file.
        _ if e_machine(data).is_some_and(|m| INTEL_GPU_MACHINES.contains(&m)) => presets::intel_gpu(),
        other => return Err(other),
    };
    if !file.is_little_endian() {
        t.endian = dwarfcheck_core::target::Endian::Big;
    }
    Ok(t)
}

/// The contents of section `name`, decompressed; `None` if the section is
/// absent or has no contents in the file (`SHT_NOBITS`).
///
/// In a relocatable object (`ET_REL`) the section's absolute 32- and 64-bit
/// relocations are applied first, so that section offsets (`DW_AT_addr_base`,
/// `DW_AT_loclists_base`, `.debug_frame` CIE pointers) and addresses hold
/// their linked values: symbol value (section-relative in an object) plus
/// addend. With RELA relocations (AMDGPU, x86-64, AArch64) the field in the
/// section is zero and the addend carries the value. Other relocation kinds
/// are left as they are; a relocation outside the section is ignored.
fn section_data<'d>(
    file: &object::File<'d>,
    origin: &str,
    name: &str,
) -> Result<Option<std::borrow::Cow<'d, [u8]>>, ElfError> {
    let Some(sec) = file.section_by_name(name) else { return Ok(None) };
    if sec.kind() == object::SectionKind::UninitializedData {
        return Ok(None);
    }
    let d = sec.uncompressed_data().map_err(|e| ElfError::Section {
        origin: origin.to_string(),
        name: name.to_string(),
        detail: e.to_string(),
    })?;
    if d.is_empty() {
        return Ok(None);
    }
    if file.kind() != object::ObjectKind::Relocatable || sec.relocations().next().is_none() {
        return Ok(Some(d));
    }
    let mut bytes = d.into_owned();
    let amdgpu = file.architecture() == object::Architecture::Unknown;
    let little = file.is_little_endian();
    for (offset, r) in sec.relocations() {
        // Width in bits of an absolute relocation, or skip it.
        let bits = match (r.kind(), r.size(), r.flags()) {
            (object::RelocationKind::Absolute, 32 | 64, _) => r.size(),
            // AMDGPUUsage relocation types: R_AMDGPU_ABS64 = 3, R_AMDGPU_ABS32 = 6.
            (_, _, object::RelocationFlags::Elf { r_type: object::elf::RelocationType(3) }) if amdgpu => 64,
            (_, _, object::RelocationFlags::Elf { r_type: object::elf::RelocationType(6) }) if amdgpu => 32,
            _ => continue,
        };
        let base = match r.target() {
            object::RelocationTarget::Symbol(i) => file.symbol_by_index(i).map(|s| s.address()).unwrap_or(0),
            object::RelocationTarget::Section(i) => file.section_by_index(i).map(|s| s.address()).unwrap_or(0),
            _ => 0,
        };
        let len = (bits / 8) as usize;
        let Some(field) = usize::try_from(offset).ok().and_then(|o| bytes.get_mut(o..o.checked_add(len)?)) else {
            continue;
        };
        let implicit = if r.has_implicit_addend() { read_uint(field, little) } else { 0 };
        let v = base.wrapping_add(r.addend() as u64).wrapping_add(implicit);
        write_uint(field, v, little);
    }
    Ok(Some(std::borrow::Cow::Owned(bytes)))
}

/// The unsigned integer in `field` (4 or 8 bytes).
fn read_uint(field: &[u8], little: bool) -> u64 {
    let mut b = [0u8; 8];
    if little {
        b[..field.len()].copy_from_slice(field);
        u64::from_le_bytes(b)
    } else {
        b[8 - field.len()..].copy_from_slice(field);
        u64::from_be_bytes(b)
    }
}

/// Stores the low `field.len()` bytes of `v` into `field`.
fn write_uint(field: &mut [u8], v: u64, little: bool) {
    let n = field.len();
    if little {
        field.copy_from_slice(&v.to_le_bytes()[..n]);
    } else {
        field.copy_from_slice(&v.to_be_bytes()[8 - n..]);
    }
}

#[cfg(test)]
mod tests;

/// Every separate debug file under `/usr/lib/debug/.build-id`
/// (`*/*.debug`: libc6-dbg's when it is installed), in path order.
pub fn debug_files() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir("/usr/lib/debug/.build-id").into_iter().flatten().flatten() {
        for f in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|e| e == "debug") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

/// The largest of [`debug_files`]: libc's own when libc6-dbg is installed
/// (the benchmark's and the tests' real input). `None` when there is none.
pub fn largest_debug_file() -> Option<std::path::PathBuf> {
    debug_files().into_iter().max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
}
