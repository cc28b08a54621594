//! What a DIE is and who wrote it, for producer findings: its unit's
//! `DW_AT_producer` and name, the DIE's tag and name, and the enclosing
//! subprogram with the pc ranges of the innermost enclosing scope.
//!
//! Read with gimli straight from the file, apart from the extraction
//! (`dwarf`): one walk per unit that holds a DIE asked about, so the work
//! is bounded by the size of those units.

use super::{split, ElfError};
use gimli::{AttributeValue, EndianSlice, RunTimeEndian};
use object::Object;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The most pc ranges kept for one scope.
pub const MAX_RANGES: usize = 16;

/// What the file says about one DIE.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DieDescription {
    /// Section offset of its unit's header in `.debug_info`.
    pub unit_offset: u64,
    /// The unit's `DW_AT_producer` (the compiler and its version).
    pub producer: Option<String>,
    /// The unit's `DW_AT_name` (usually the primary source file).
    pub unit_name: Option<String>,
    /// The DIE's tag (`DW_TAG_variable`, `DW_TAG_formal_parameter`, ...).
    pub tag: String,
    /// The DIE's `DW_AT_name`, or that of its `DW_AT_abstract_origin` or
    /// `DW_AT_specification` (one step, within its unit).
    pub name: Option<String>,
    /// The name of the innermost enclosing `DW_TAG_subprogram` or
    /// `DW_TAG_inlined_subroutine` (or its abstract origin's).
    pub function: Option<String>,
    /// The pc ranges `[begin, end)` (addresses as the file gives them) of
    /// the DIE itself when it has any, else of its innermost enclosing
    /// scope that has them; at most [`MAX_RANGES`].
    pub scope_ranges: Vec<(u64, u64)>,
}

/// Describes each DIE of `dies` (section offsets in `.debug_info`) that
/// lies in an ordinary unit of the ELF file at `path`. DIEs of split units
/// (`.dwo`, `.dwp`) and offsets that name no DIE are left out of the map.
///
/// Errors: the file cannot be read or parsed, or a DWARF section cannot be
/// read or decompressed. A unit that fails to parse is skipped.
pub fn describe(path: &Path, dies: &BTreeSet<u64>) -> Result<BTreeMap<u64, DieDescription>, ElfError> {
    if dies.is_empty() {
        return Ok(BTreeMap::new());
    }
    with_dwarf(path, |dwarf| {
        let mut out = BTreeMap::new();
        let mut headers = dwarf.units();
        while let Ok(Some(header)) = headers.next() {
            let start = header.offset().0 as u64;
            let end = start + header.length_including_self() as u64;
            let wanted: Vec<u64> = dies.range(start..end).copied().collect();
            if wanted.is_empty() {
                continue;
            }
            if let Ok(unit) = dwarf.unit(header) {
                describe_unit(dwarf, &unit, start, &wanted, &mut out);
            }
        }
        out
    })
}

/// `f` on the DWARF of the ELF file at `path`; the empty answer for a
/// `.dwo` or `.dwp` input (their DIE offsets are not `.debug_info`'s).
fn with_dwarf<T: Default>(path: &Path, f: impl FnOnce(&gimli::Dwarf<R<'_>>) -> T) -> Result<T, ElfError> {
    let origin = path.display().to_string();
    let data = std::fs::read(path).map_err(|source| ElfError::Read { origin: origin.clone(), source })?;
    let file =
        object::File::parse(&*data).map_err(|e| ElfError::Parse { origin: origin.clone(), detail: e.to_string() })?;
    if !matches!(split::layout(&file), split::Layout::Main) {
        return Ok(T::default());
    }
    let endian = if file.is_little_endian() { RunTimeEndian::Little } else { RunTimeEndian::Big };
    let sections = split::sections(&file, &origin, false)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    Ok(f(&dwarf))
}

/// Every ordinary unit's `DW_AT_producer` in the ELF file at `path`, with
/// how many units name it (`None`: units without one). Reads each unit's
/// first DIE only.
///
/// Errors: as [`describe`].
pub fn unit_producers(path: &Path) -> Result<BTreeMap<Option<String>, usize>, ElfError> {
    with_dwarf(path, |dwarf| {
        let mut out = BTreeMap::new();
        let mut headers = dwarf.units();
        while let Ok(Some(header)) = headers.next() {
            let Ok(unit) = dwarf.unit(header) else { continue };
            let mut entries = unit.entries();
            if let Ok(Some(root)) = entries.next_dfs() {
                *out.entry(string_attr(dwarf, &unit, root, gimli::DW_AT_producer)).or_default() += 1;
            }
        }
        out
    })
}

type R<'d> = EndianSlice<'d, RunTimeEndian>;

/// One enclosing DIE on the walk's stack.
struct Scope {
    depth: isize,
    function: Option<Option<String>>,
    ranges: Vec<(u64, u64)>,
}

/// Walks `unit` once, describing the DIEs at `wanted` (sorted section
/// offsets).
fn describe_unit(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    unit_offset: u64,
    wanted: &[u64],
    out: &mut BTreeMap<u64, DieDescription>,
) {
    let mut entries = unit.entries();
    let Ok(Some(root)) = entries.next_dfs() else { return };
    let producer = string_attr(dwarf, unit, root, gimli::DW_AT_producer);
    let unit_name = string_attr(dwarf, unit, root, gimli::DW_AT_name);
    let mut stack = vec![Scope { depth: 0, function: None, ranges: ranges(dwarf, unit, root) }];
    let mut left = wanted.len();
    while left > 0 {
        let Ok(Some(entry)) = entries.next_dfs() else { break };
        let depth = entry.depth();
        while stack.last().is_some_and(|s| s.depth >= depth) {
            stack.pop();
        }
        let off = unit_offset + entry.offset().0 as u64;
        let own = ranges(dwarf, unit, entry);
        if wanted.binary_search(&off).is_ok() {
            left -= 1;
            let function = stack.iter().rev().find_map(|s| s.function.clone()).flatten();
            let scope_ranges = if own.is_empty() {
                stack.iter().rev().find(|s| !s.ranges.is_empty()).map(|s| s.ranges.clone())
            } else {
                Some(own.clone())
            };
            out.insert(
                off,
                DieDescription {
                    unit_offset,
                    producer: producer.clone(),
                    unit_name: unit_name.clone(),
                    tag: entry.tag().static_string().map_or_else(|| format!("{:#x}", entry.tag().0), str::to_string),
                    name: name(dwarf, unit, entry),
                    function,
                    scope_ranges: scope_ranges.unwrap_or_default(),
                },
            );
        }
        if entry.has_children() {
            let is_function = matches!(entry.tag(), gimli::DW_TAG_subprogram | gimli::DW_TAG_inlined_subroutine);
            stack.push(Scope { depth, function: is_function.then(|| name(dwarf, unit, entry)), ranges: own });
        }
    }
}

/// A string attribute of `entry`, if it has one that reads.
fn string_attr(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    entry: &gimli::DebuggingInformationEntry<R<'_>>,
    at: gimli::DwAt,
) -> Option<String> {
    let v = entry.attr_value(at)?;
    let s = dwarf.attr_string(unit, v).ok()?;
    Some(String::from_utf8_lossy(s.slice()).into_owned())
}

/// `entry`'s name, or its abstract origin's or specification's (one step,
/// within the unit).
fn name(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    entry: &gimli::DebuggingInformationEntry<R<'_>>,
) -> Option<String> {
    string_attr(dwarf, unit, entry, gimli::DW_AT_name).or_else(|| {
        [gimli::DW_AT_abstract_origin, gimli::DW_AT_specification].iter().find_map(|at| {
            match entry.attr_value(*at)? {
                AttributeValue::UnitRef(o) => string_attr(dwarf, unit, &unit.entry(o).ok()?, gimli::DW_AT_name),
                AttributeValue::DebugInfoRef(o) => name_elsewhere(dwarf, o),
                _ => None,
            }
        })
    })
}

/// The `DW_AT_name` of the DIE at `.debug_info` offset `o`, in whichever
/// unit holds it (a `DW_FORM_ref_addr` reference: rustc's abstract origins
/// often lie in another unit). Looks through the unit headers once.
fn name_elsewhere(dwarf: &gimli::Dwarf<R<'_>>, o: gimli::DebugInfoOffset) -> Option<String> {
    let mut headers = dwarf.units();
    while let Ok(Some(h)) = headers.next() {
        let start = h.offset().0;
        if o.0 < start || o.0 >= start + h.length_including_self() {
            continue;
        }
        let unit = dwarf.unit(h).ok()?;
        let entry = unit.entry(gimli::UnitOffset(o.0 - start)).ok()?;
        return string_attr(dwarf, &unit, &entry, gimli::DW_AT_name);
    }
    None
}

/// `entry`'s pc ranges (`DW_AT_low_pc`/`DW_AT_high_pc` or `DW_AT_ranges`),
/// at most [`MAX_RANGES`]; none when it has none or they do not read.
fn ranges<'d>(
    dwarf: &gimli::Dwarf<R<'d>>,
    unit: &gimli::Unit<R<'d>>,
    entry: &gimli::DebuggingInformationEntry<R<'d>>,
) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    if let Ok(mut it) = dwarf.die_ranges(unit, entry) {
        while let Ok(Some(r)) = it.next() {
            if out.len() == MAX_RANGES {
                break;
            }
            out.push((r.begin, r.end));
        }
    }
    out
}
