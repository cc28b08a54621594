//! The variables of a chain object's DWARF (`DW_TAG_variable` and
//! `DW_TAG_formal_parameter` DIEs): name, line, `DW_AT_const_value`, read
//! with gimli. The object is compiled with inline names
//! ([`super::compile::LLC_OPTIONS`]) and holds one unit, so nothing read
//! here needs a relocation; the locations come from `elf`'s extraction.

use gimli::{AttributeValue, EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection};

/// One variable DIE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableDie {
    /// Its `.debug_info` offset (what `elf` names its cases by, `die0x2a`).
    pub offset: u64,
    /// `DW_AT_name`, when inline (`DW_FORM_string`).
    pub name: Option<String>,
    /// `DW_AT_decl_line`.
    pub line: Option<u64>,
    /// `DW_AT_const_value` of a constant form, as a 64-bit pattern (a
    /// signed form sign-extended).
    pub const_value: Option<u64>,
    /// Whether it has a `DW_AT_location`.
    pub has_location: bool,
}

/// Every variable DIE of the ELF object `data`, in `.debug_info` order;
/// `Err` with gimli's or object's message when the object or a unit cannot
/// be read (the DIEs before it are lost: the chain's objects are small).
pub fn variables(data: &[u8]) -> Result<Vec<VariableDie>, String> {
    let file = object::File::parse(data).map_err(|e| e.to_string())?;
    let endian = if file.is_little_endian() { RunTimeEndian::Little } else { RunTimeEndian::Big };
    let load = |id: gimli::SectionId| -> Result<EndianSlice<'_, RunTimeEndian>, gimli::Error> {
        let d = file.section_by_name(id.name()).and_then(|s| s.data().ok()).unwrap_or(&[]);
        Ok(EndianSlice::new(d, endian))
    };
    let dwarf = gimli::Dwarf::load(load).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next().map_err(|e| e.to_string())? {
        let unit_off = header.offset().0 as u64;
        let unit = dwarf.unit(header).map_err(|e| e.to_string())?;
        let mut cursor = unit.entries();
        while let Some(die) = cursor.next_dfs().map_err(|e| e.to_string())? {
            if die.tag() != gimli::DW_TAG_variable && die.tag() != gimli::DW_TAG_formal_parameter {
                continue;
            }
            let name = match die.attr_value(gimli::DW_AT_name) {
                Some(AttributeValue::String(s)) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            };
            let const_value = die.attr_value(gimli::DW_AT_const_value).and_then(|v| match v {
                AttributeValue::Sdata(s) => Some(s as u64),
                v => v.udata_value(),
            });
            out.push(VariableDie {
                offset: unit_off + die.offset().0 as u64,
                name,
                line: die.attr_value(gimli::DW_AT_decl_line).and_then(|v| v.udata_value()),
                const_value,
                has_location: die.attr_value(gimli::DW_AT_location).is_some(),
            });
        }
    }
    Ok(out)
}
