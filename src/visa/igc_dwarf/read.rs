//! Reads the variables of an IGC-written DWARF ELF: per subprogram its
//! `DW_TAG_variable` / `DW_TAG_formal_parameter` DIEs with their
//! `DW_AT_location` (an exprloc over the subprogram's range, or a
//! `.debug_loc` list), with gimli.
//!
//! IGC's relocatable ELFs (zebin, `e_machine` 205; the x86-64-labelled
//! dump of a zebin compile) carry `.rela.debug_info`: unapplied, every
//! `DW_AT_location` offset reads 0. [`relocated`] applies the 32- and
//! 64-bit symbol-plus-addend relocations of both machines.

use gimli::{EndianSlice, RunTimeEndian};
use object::{Object as _, ObjectSection as _, ObjectSymbol as _};

/// One location entry of a variable: Gen byte range `[lo, hi)` and the
/// expression bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// First Gen byte offset (as the DWARF says: relocated address).
    pub lo: u64,
    /// One past the last.
    pub hi: u64,
    /// The DWARF expression.
    pub expr: Vec<u8>,
}

/// A variable or parameter with a location.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Variable {
    /// The enclosing subprogram's `DW_AT_name` ("" when none).
    pub subprogram: String,
    /// Its `DW_AT_name`.
    pub name: String,
    /// `.debug_info` offset of the DIE.
    pub die: u64,
    /// Its location entries (one for an exprloc).
    pub entries: Vec<Entry>,
}

/// What one DWARF ELF gave.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IgcDwarf {
    /// `e_machine`.
    pub machine: u16,
    /// Subprograms: name and `[low_pc, high_pc)`.
    pub subprograms: Vec<(String, u64, u64)>,
    /// Variables and parameters that have a `DW_AT_location`.
    pub variables: Vec<Variable>,
    /// Variables and parameters without one.
    pub without_location: usize,
}

/// The ELF relocation types applied: x86-64 `R_X86_64_64` (1) and
/// `R_X86_64_32` (10); IGC's zebin `R_ZE_SYM_ADDR` (1, 64-bit) and
/// `R_ZE_SYM_ADDR_32` (2) (IGC `ZEELFObjectBuilder`'s relocation kinds).
fn reloc_bytes(machine: u16, r_type: u32) -> Option<usize> {
    match (machine, r_type) {
        (62, 1) | (205, 1) => Some(8),
        (62, 10) | (205, 2) => Some(4),
        _ => None,
    }
}

/// Section `name` of `file`, with its relocations applied when `file` is
/// relocatable (value: symbol value plus addend). `None`: absent.
pub fn relocated(file: &object::File<'_>, machine: u16, name: &str) -> Option<Vec<u8>> {
    let sec = file.section_by_name(name)?;
    let mut bytes = sec.uncompressed_data().ok()?.into_owned();
    if file.kind() != object::ObjectKind::Relocatable {
        return Some(bytes);
    }
    for (offset, r) in sec.relocations() {
        let object::RelocationFlags::Elf { r_type } = r.flags() else { continue };
        let Some(len) = reloc_bytes(machine, r_type.0) else { continue };
        let base = match r.target() {
            object::RelocationTarget::Symbol(i) => file.symbol_by_index(i).map(|s| s.address()).unwrap_or(0),
            _ => 0,
        };
        let v = base.wrapping_add(r.addend() as u64).to_le_bytes();
        if let Some(field) = usize::try_from(offset).ok().and_then(|o| bytes.get_mut(o..o.checked_add(len)?)) {
            field.copy_from_slice(&v[..len]);
        }
    }
    Some(bytes)
}

/// The ELF header's `e_machine` (little-endian files only).
pub fn e_machine(bytes: &[u8]) -> Option<u16> {
    Some(u16::from_le_bytes([*bytes.get(18)?, *bytes.get(19)?]))
}

/// The `.debug_frame` of the ELF `bytes`, relocated; `None` when the
/// file does not parse or has no such section.
pub fn debug_frame(bytes: &[u8]) -> Option<Vec<u8>> {
    let file = object::File::parse(bytes).ok()?;
    relocated(&file, e_machine(bytes)?, ".debug_frame")
}

/// Reads the variables of the ELF `bytes`.
///
/// Errors: not an ELF `object` can parse, or a DWARF unit gimli cannot
/// read (the message says which).
pub fn read(bytes: &[u8]) -> Result<IgcDwarf, String> {
    let file = object::File::parse(bytes).map_err(|e| format!("ELF: {e}"))?;
    let machine = e_machine(bytes).unwrap_or(0);
    let load = |id: gimli::SectionId| -> Result<std::borrow::Cow<'_, [u8]>, String> {
        Ok(relocated(&file, machine, id.name()).map(std::borrow::Cow::Owned).unwrap_or_default())
    };
    let owned = gimli::DwarfSections::load(load)?;
    let dwarf = owned.borrow(|s| EndianSlice::new(s, RunTimeEndian::Little));
    let mut out = IgcDwarf { machine, ..IgcDwarf::default() };
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(|e| format!("unit header: {e}"))? {
        let unit = dwarf.unit(header).map_err(|e| format!("unit: {e}"))?;
        unit_variables(&dwarf, &unit, &mut out).map_err(|e| format!("unit: {e}"))?;
    }
    Ok(out)
}

type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// The string of attribute `at` of `e`.
fn name_of(
    dwarf: &gimli::Dwarf<R<'_>>,
    unit: &gimli::Unit<R<'_>>,
    e: &gimli::DebuggingInformationEntry<R<'_>>,
) -> String {
    e.attr_value(gimli::DW_AT_name)
        .and_then(|v| dwarf.attr_string(unit, v).ok())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `[low_pc, high_pc)` of `e`, when it has both.
fn pc_range(e: &gimli::DebuggingInformationEntry<R<'_>>) -> Option<(u64, u64)> {
    let lo = match e.attr_value(gimli::DW_AT_low_pc)? {
        gimli::AttributeValue::Addr(a) => a,
        _ => return None,
    };
    let hi = match e.attr_value(gimli::DW_AT_high_pc)? {
        gimli::AttributeValue::Addr(a) => a,
        v => lo.wrapping_add(v.udata_value()?),
    };
    Some((lo, hi))
}

/// A subprogram being walked: its depth, name and pc range.
type Scope = (isize, String, Option<(u64, u64)>);

fn unit_variables(dwarf: &gimli::Dwarf<R<'_>>, unit: &gimli::Unit<R<'_>>, out: &mut IgcDwarf) -> gimli::Result<()> {
    let mut entries = unit.entries();
    // The subprogram at each depth of the walk.
    let mut stack: Vec<Scope> = Vec::new();
    while let Some(e) = entries.next_dfs()? {
        let depth = e.depth();
        stack.retain(|(d, _, _)| *d < depth);
        match e.tag() {
            gimli::DW_TAG_subprogram => {
                let name = name_of(dwarf, unit, e);
                let range = pc_range(e);
                if let Some((lo, hi)) = range {
                    out.subprograms.push((name.clone(), lo, hi));
                }
                stack.push((depth, name, range));
            }
            gimli::DW_TAG_variable | gimli::DW_TAG_formal_parameter => {
                let (subprogram, range) = stack.last().map(|(_, n, r)| (n.clone(), *r)).unwrap_or_default();
                let die = e.offset().to_debug_info_offset(&unit.header).map_or(0, |o| o.0 as u64);
                let name = name_of(dwarf, unit, e);
                let mut list = Vec::new();
                match e.attr_value(gimli::DW_AT_location) {
                    Some(gimli::AttributeValue::Exprloc(x)) => {
                        let (lo, hi) = range.unwrap_or((0, u64::MAX));
                        list.push(Entry { lo, hi, expr: x.0.slice().to_vec() });
                    }
                    Some(gimli::AttributeValue::LocationListsRef(o)) => {
                        let mut locs = dwarf.locations(unit, o)?;
                        while let Some(l) = locs.next()? {
                            list.push(Entry { lo: l.range.begin, hi: l.range.end, expr: l.data.0.slice().to_vec() });
                        }
                    }
                    Some(gimli::AttributeValue::SecOffset(o)) => {
                        let mut locs = dwarf.locations(unit, gimli::LocationListsOffset(o))?;
                        while let Some(l) = locs.next()? {
                            list.push(Entry { lo: l.range.begin, hi: l.range.end, expr: l.data.0.slice().to_vec() });
                        }
                    }
                    _ => {
                        out.without_location += 1;
                        continue;
                    }
                }
                out.variables.push(Variable { subprogram, name, die, entries: list });
            }
            _ => {}
        }
    }
    Ok(())
}
