//! Split DWARF: which layout a file has (ordinary, a `.dwo` file, a `.dwp`
//! package), the `.dwo`-named sections of the last two, and where the
//! `.dwo` file of a skeleton unit is.
//!
//! With `-gsplit-dwarf` the executable keeps one skeleton unit per
//! compilation unit (`DW_UT_skeleton`, or a GNU DWARF 4 compile unit with
//! `DW_AT_GNU_dwo_name`), with the addresses (`.debug_addr`, its
//! `DW_AT_addr_base`); the DIEs and their locations are in a split unit
//! (`DW_UT_split_compile`) of a `.dwo` file named by `DW_AT_dwo_name`
//! relative to `DW_AT_comp_dir`, or gathered with the others in a `.dwp`
//! package. gimli reads both; this module only finds and loads them.

use super::{section_data, ElfError};
use gimli::{EndianSlice, RunTimeEndian};
use object::Object;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// The reader every DWARF section is read through.
pub(super) type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// How a file's DWARF is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// `.debug_info` and friends: ordinary units, perhaps skeletons.
    Main,
    /// `.debug_info.dwo` without an index: the split units of one `.dwo`.
    Dwo,
    /// `.debug_cu_index`: a `.dwp` package of split units.
    Package,
}

/// The layout of `file`, by the sections it has.
pub(super) fn layout(file: &object::File<'_>) -> Layout {
    if file.section_by_name(".debug_cu_index").is_some() {
        Layout::Package
    } else if file.section_by_name(".debug_info.dwo").is_some() && file.section_by_name(".debug_info").is_none() {
        Layout::Dwo
    } else {
        Layout::Main
    }
}

/// Loads one DWARF section for gimli: `name` gives the section's name in
/// this layout (`None`: the layout has no such section, read as empty).
/// A section that cannot be read is kept in `err` (the first one) and
/// read as empty, so that gimli's loaders, which stop at the first error,
/// load the rest.
fn load<'d>(file: &object::File<'d>, origin: &str, name: Option<&str>, err: &mut Option<ElfError>) -> Cow<'d, [u8]> {
    let Some(name) = name else { return Cow::Borrowed(&[]) };
    match section_data(file, origin, name) {
        Ok(d) => d.unwrap_or(Cow::Borrowed(&[])),
        Err(e) => {
            err.get_or_insert(e);
            Cow::Borrowed(&[])
        }
    }
}

/// The DWARF sections of `file` under their ordinary names (`dwo: false`)
/// or their `.dwo` names.
///
/// Errors: a section that cannot be read or decompressed.
pub(super) fn sections<'d>(
    file: &object::File<'d>,
    origin: &str,
    dwo: bool,
) -> Result<gimli::DwarfSections<Cow<'d, [u8]>>, ElfError> {
    let mut err = None;
    let loaded = gimli::DwarfSections::load(|id| -> Result<_, std::convert::Infallible> {
        let name = if dwo { id.dwo_name() } else { Some(id.name()) };
        Ok(load(file, origin, name, &mut err))
    });
    match (err, loaded) {
        (Some(e), _) => Err(e),
        (None, Ok(s)) => Ok(s),
    }
}

/// The sections of a `.dwp` package.
///
/// Errors: a section that cannot be read or decompressed.
pub(super) fn package_sections<'d>(
    file: &object::File<'d>,
    origin: &str,
) -> Result<gimli::DwarfPackageSections<Cow<'d, [u8]>>, ElfError> {
    let mut err = None;
    // gimli's package loader wants an error type that holds its own; the
    // closure never returns one.
    let loaded = gimli::DwarfPackageSections::load(|id| -> Result<_, gimli::Error> {
        Ok(load(file, origin, id.dwo_name(), &mut err))
    });
    match (err, loaded) {
        (Some(e), _) => Err(e),
        (None, Ok(s)) => Ok(s),
        (None, Err(e)) => {
            Err(ElfError::Section { origin: origin.to_string(), name: ".debug_cu_index".into(), detail: e.to_string() })
        }
    }
}

/// Where the `.dwo` file named `dwo_name` may be, most likely first: the
/// name itself when absolute, else relative to the unit's `comp_dir`,
/// then beside the input (`input_dir`) under the same relative name and
/// under its last component. Each path once; they may not exist.
pub(super) fn dwo_candidates(dwo_name: &str, comp_dir: Option<&str>, input_dir: Option<&Path>) -> Vec<PathBuf> {
    let name = Path::new(dwo_name);
    let mut out: Vec<PathBuf> = Vec::new();
    if name.is_absolute() {
        out.push(name.to_path_buf());
    } else {
        if let Some(d) = comp_dir {
            out.push(Path::new(d).join(name));
        }
        if let Some(d) = input_dir {
            out.push(d.join(name));
            if let Some(last) = name.file_name() {
                out.push(d.join(last));
            }
        }
    }
    let mut seen = Vec::new();
    out.retain(|p| {
        let new = !seen.contains(p);
        seen.push(p.clone());
        new
    });
    out
}

/// The package beside an input: `<input>.dwp` (the name GDB looks for),
/// if it exists.
pub(super) fn package_beside(input: &Path) -> Option<PathBuf> {
    let mut name = input.file_name()?.to_os_string();
    name.push(".dwp");
    let p = input.with_file_name(name);
    p.is_file().then_some(p)
}
