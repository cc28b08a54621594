//! The `.debug_info` reader: unit headers (DWARF 5 §7.5.1; versions 2-5),
//! abbreviations (§7.5.3), attribute forms (§7.5.6) and the DIE tree, read
//! once into a flat arena in depth-first order (a DIE's subtree is the run
//! of DIEs up to its `end`), with an explicit stack: no recursion driven by
//! the input.

use crate::reader::{str_at, Reader, Truncated};
use std::collections::HashMap;

/// Deepest DIE nesting accepted.
const MAX_DEPTH: usize = 4096;
/// Most nested `DW_FORM_indirect` forms followed for one attribute.
const MAX_INDIRECT: u32 = 8;

/// `DW_TAG_*` values this reader acts on (DWARF 5 §7.5.4; GNU call sites).
#[allow(missing_docs)]
pub mod tag {
    pub const ARRAY_TYPE: u16 = 0x01;
    pub const CLASS_TYPE: u16 = 0x02;
    pub const ENUMERATION_TYPE: u16 = 0x04;
    pub const FORMAL_PARAMETER: u16 = 0x05;
    pub const LEXICAL_BLOCK: u16 = 0x0b;
    pub const MEMBER: u16 = 0x0d;
    pub const POINTER_TYPE: u16 = 0x0f;
    pub const REFERENCE_TYPE: u16 = 0x10;
    pub const STRUCTURE_TYPE: u16 = 0x13;
    pub const TYPEDEF: u16 = 0x16;
    pub const UNION_TYPE: u16 = 0x17;
    pub const INLINED_SUBROUTINE: u16 = 0x1d;
    pub const SUBRANGE_TYPE: u16 = 0x21;
    pub const BASE_TYPE: u16 = 0x24;
    pub const CONST_TYPE: u16 = 0x26;
    pub const SUBPROGRAM: u16 = 0x2e;
    pub const VARIABLE: u16 = 0x34;
    pub const VOLATILE_TYPE: u16 = 0x35;
    pub const RESTRICT_TYPE: u16 = 0x37;
    pub const RVALUE_REFERENCE_TYPE: u16 = 0x42;
    pub const ATOMIC_TYPE: u16 = 0x47;
    pub const CALL_SITE: u16 = 0x48;
    pub const CALL_SITE_PARAMETER: u16 = 0x49;
    pub const GNU_CALL_SITE: u16 = 0x4109;
    pub const GNU_CALL_SITE_PARAMETER: u16 = 0x410a;
}

/// `DW_AT_*` values this reader acts on (DWARF 5 §7.5.4; GNU call sites).
#[allow(missing_docs)]
pub mod at {
    pub const LOCATION: u16 = 0x02;
    pub const NAME: u16 = 0x03;
    pub const BYTE_SIZE: u16 = 0x0b;
    pub const LOW_PC: u16 = 0x11;
    pub const HIGH_PC: u16 = 0x12;
    pub const CONST_VALUE: u16 = 0x1c;
    pub const LOWER_BOUND: u16 = 0x22;
    pub const UPPER_BOUND: u16 = 0x2f;
    pub const ABSTRACT_ORIGIN: u16 = 0x31;
    pub const COUNT: u16 = 0x37;
    pub const DATA_MEMBER_LOCATION: u16 = 0x38;
    pub const DECLARATION: u16 = 0x3c;
    pub const ENCODING: u16 = 0x3e;
    pub const FRAME_BASE: u16 = 0x40;
    pub const SPECIFICATION: u16 = 0x47;
    pub const TYPE: u16 = 0x49;
    pub const RANGES: u16 = 0x55;
    pub const STR_OFFSETS_BASE: u16 = 0x72;
    pub const ADDR_BASE: u16 = 0x73;
    pub const RNGLISTS_BASE: u16 = 0x74;
    pub const CALL_RETURN_PC: u16 = 0x7d;
    pub const CALL_VALUE: u16 = 0x7e;
    pub const LOCLISTS_BASE: u16 = 0x8c;
    pub const GNU_CALL_SITE_VALUE: u16 = 0x2111;
}

/// An attribute value, by form class (DWARF 5 §7.5.5). Indexed forms
/// (`strx`, `addrx`, `loclistx`, `rnglistx`) stay indices until used with
/// their unit's bases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `DW_FORM_addr`: a byte address.
    Addr(u64),
    /// `DW_FORM_addrx*`: an index into the unit's `.debug_addr` entries.
    AddrX(u64),
    /// `DW_FORM_data*`, `udata`: an unsigned constant (data1-data8 may also
    /// be a signed one; the type decides).
    Udata(u64),
    /// `DW_FORM_sdata`, `implicit_const`: a signed constant.
    Sdata(i64),
    /// A reference, as a `.debug_info` byte offset.
    Ref(u64),
    /// `DW_FORM_exprloc`, `block*`, `data16`: the byte range of the block
    /// in `.debug_info`.
    Block {
        /// Byte offset of the first byte.
        start: usize,
        /// Length in bytes.
        len: usize,
    },
    /// `DW_FORM_string`, `strp`, `line_strp`: the string.
    Str(String),
    /// `DW_FORM_strx*`: an index into the unit's string offsets.
    StrX(u64),
    /// `DW_FORM_sec_offset` (and DWARF 2/3 `data4`/`data8` location or
    /// range list pointers): a byte offset into another section.
    SecOffset(u64),
    /// `DW_FORM_loclistx`: an index into the unit's location list offsets.
    LocListX(u64),
    /// `DW_FORM_rnglistx`: an index into the unit's range list offsets.
    RngListX(u64),
    /// `DW_FORM_flag`, `flag_present`.
    Flag(bool),
    /// A form whose value this reader does not use (supplementary and
    /// signature references).
    Other,
}

/// One debugging information entry.
#[derive(Debug, Clone)]
pub struct Die {
    /// `.debug_info` byte offset of the DIE.
    pub offset: u64,
    /// `DW_TAG_*`.
    pub tag: u16,
    /// Index of its unit in [`Info::units`].
    pub unit: usize,
    /// Index of its parent DIE, `None` for a unit DIE.
    pub parent: Option<usize>,
    /// Index just past the last DIE of its subtree.
    pub end: usize,
    /// Its attributes in abbreviation order.
    pub attrs: Vec<(u16, Value)>,
}

impl Die {
    /// The value of attribute `name`, if the DIE has it.
    pub fn attr(&self, name: u16) -> Option<&Value> {
        self.attrs.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// One compilation unit's header facts and bases (DWARF 5 §7.5.1.1,
/// §3.1.1).
#[derive(Debug, Clone, Default)]
pub struct Unit {
    /// `.debug_info` byte offset of the unit header.
    pub offset: u64,
    /// DWARF version.
    pub version: u16,
    /// 64-bit DWARF.
    pub dwarf64: bool,
    /// Address size in **bytes**.
    pub address_size: u8,
    /// `DW_AT_low_pc` of the unit DIE (the base address of its lists).
    pub low_pc: Option<u64>,
    /// `DW_AT_str_offsets_base` (byte offset in `.debug_str_offsets`).
    pub str_offsets_base: u64,
    /// `DW_AT_addr_base` (byte offset in `.debug_addr`).
    pub addr_base: u64,
    /// `DW_AT_rnglists_base` (byte offset in `.debug_rnglists`).
    pub rnglists_base: u64,
    /// `DW_AT_loclists_base` (byte offset in `.debug_loclists`).
    pub loclists_base: u64,
}

/// The debug sections a program's DWARF is read from (empty when absent).
#[derive(Debug, Clone, Default)]
pub struct Sections {
    /// `.debug_info`.
    pub info: Vec<u8>,
    /// `.debug_abbrev`.
    pub abbrev: Vec<u8>,
    /// `.debug_str`.
    pub str: Vec<u8>,
    /// `.debug_line_str`.
    pub line_str: Vec<u8>,
    /// `.debug_str_offsets`.
    pub str_offsets: Vec<u8>,
    /// `.debug_addr`.
    pub addr: Vec<u8>,
    /// `.debug_rnglists` (DWARF 5 range lists).
    pub rnglists: Vec<u8>,
    /// `.debug_ranges` (DWARF 2-4 range lists).
    pub ranges: Vec<u8>,
    /// `.debug_loclists` (DWARF 5 location lists).
    pub loclists: Vec<u8>,
    /// `.debug_loc` (DWARF 2-4 location lists).
    pub loc: Vec<u8>,
}

/// Every compilation unit and DIE of a program.
#[derive(Debug, Default)]
pub struct Info {
    /// The sections.
    pub sections: Sections,
    /// The units, in section order.
    pub units: Vec<Unit>,
    /// The DIEs of every unit, depth-first, in section order.
    pub dies: Vec<Die>,
    /// DIE index by `.debug_info` offset.
    by_offset: HashMap<u64, usize>,
}

/// One abbreviation declaration (DWARF 5 §7.5.3).
#[derive(Debug, Clone)]
struct Abbrev {
    tag: u16,
    children: bool,
    /// (attribute, form, implicit constant)
    specs: Vec<(u16, u16, i64)>,
}

/// Parses the abbreviation table at byte offset `at` of `.debug_abbrev`.
fn abbrevs(section: &[u8], at: u64) -> Result<HashMap<u64, Abbrev>, Truncated> {
    let mut r = Reader::at(section, usize::try_from(at).map_err(|_| Truncated)?);
    let mut out = HashMap::new();
    loop {
        let code = r.uleb()?;
        if code == 0 {
            return Ok(out);
        }
        let tag = u16::try_from(r.uleb()?).map_err(|_| Truncated)?;
        let children = r.u8()? != 0;
        let mut specs = Vec::new();
        loop {
            let (name, form) = (r.uleb()?, r.uleb()?);
            if name == 0 && form == 0 {
                break;
            }
            let implicit = if form == 0x21 { r.sleb()? } else { 0 };
            let name = u16::try_from(name).unwrap_or(0);
            specs.push((name, u16::try_from(form).map_err(|_| Truncated)?, implicit));
        }
        out.insert(code, Abbrev { tag, children, specs });
    }
}

impl Info {
    /// Reads every compilation unit of `sections`. A unit that cannot be
    /// read ends the reading there; the units before it are kept (`Err`
    /// names the offset of the first bad unit alongside).
    pub fn read(sections: Sections) -> (Info, Option<String>) {
        let mut info = Info { sections, ..Info::default() };
        let mut tables: HashMap<u64, HashMap<u64, Abbrev>> = HashMap::new();
        let mut pos = 0usize;
        let mut problem = None;
        while pos < info.sections.info.len() {
            match info.read_unit(pos, &mut tables) {
                Ok(next) => pos = next,
                Err(_) => {
                    problem = Some(format!(".debug_info unit at {pos:#x} cannot be read"));
                    break;
                }
            }
        }
        for (i, d) in info.dies.iter().enumerate() {
            info.by_offset.insert(d.offset, i);
        }
        (info, problem)
    }

    /// Reads the unit whose header is at `start`; returns the offset of the
    /// next unit.
    fn read_unit(&mut self, start: usize, tables: &mut HashMap<u64, HashMap<u64, Abbrev>>) -> Result<usize, Truncated> {
        let data = std::mem::take(&mut self.sections.info);
        let out = self.read_unit_in(&data, start, tables);
        self.sections.info = data;
        out
    }

    fn read_unit_in(
        &mut self,
        data: &[u8],
        start: usize,
        tables: &mut HashMap<u64, HashMap<u64, Abbrev>>,
    ) -> Result<usize, Truncated> {
        let mut r = Reader::at(data, start);
        let (length, dwarf64) = r.initial_length()?;
        let end = r.pos.checked_add(usize::try_from(length).map_err(|_| Truncated)?).ok_or(Truncated)?;
        if end > data.len() {
            return Err(Truncated);
        }
        let version = r.u16()?;
        let (unit_type, address_size, abbrev_offset) = match version {
            2..=4 => {
                let abbrev = r.offset(dwarf64)?;
                (1u8, r.u8()?, abbrev)
            }
            5 => {
                let ut = r.u8()?;
                let size = r.u8()?;
                (ut, size, r.offset(dwarf64)?)
            }
            _ => return Ok(end),
        };
        // Only full and partial units (DW_UT_compile, DW_UT_partial).
        if unit_type != 1 && unit_type != 3 {
            return Ok(end);
        }
        let table = match tables.entry(abbrev_offset) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(abbrevs(&self.sections.abbrev, abbrev_offset)?),
        };
        let unit_index = self.units.len();
        let mut unit = Unit { offset: start as u64, version, dwarf64, address_size, ..Unit::default() };
        let mut r = Reader::at(&data[..end], r.pos);
        // Open DIEs with children: their indices.
        let mut open: Vec<usize> = Vec::new();
        let mut first = true;
        while !r.is_empty() {
            let offset = r.pos as u64;
            let code = r.uleb()?;
            if code == 0 {
                if let Some(i) = open.pop() {
                    self.dies[i].end = self.dies.len();
                }
                if open.is_empty() && !first {
                    break;
                }
                continue;
            }
            let ab = table.get(&code).ok_or(Truncated)?;
            let mut attrs = Vec::with_capacity(ab.specs.len());
            for &(name, form, implicit) in &ab.specs {
                let v = read_form(&mut r, form, implicit, &unit, &self.sections)?;
                attrs.push((name, v));
            }
            let index = self.dies.len();
            self.dies.push(Die {
                offset,
                tag: ab.tag,
                unit: unit_index,
                parent: open.last().copied(),
                end: index + 1,
                attrs,
            });
            if first {
                first = false;
                set_bases(&mut unit, &self.dies[index]);
            }
            if ab.children {
                if open.len() >= MAX_DEPTH {
                    return Err(Truncated);
                }
                open.push(index);
            }
            if open.is_empty() {
                break;
            }
        }
        // Close whatever a truncated unit left open.
        let n = self.dies.len();
        for i in open {
            self.dies[i].end = n;
        }
        self.units.push(unit);
        Ok(end)
    }

    /// The DIE at `.debug_info` byte offset `offset`.
    pub fn die_at(&self, offset: u64) -> Option<usize> {
        self.by_offset.get(&offset).copied()
    }

    /// The string value of attribute `name` of DIE `die` (`strp`,
    /// `line_strp`, `string` and `strx` forms).
    pub fn string(&self, die: usize, name: u16) -> Option<String> {
        let d = &self.dies[die];
        match d.attr(name)? {
            Value::Str(s) => Some(s.clone()),
            Value::StrX(i) => {
                let u = &self.units[d.unit];
                let size = if u.dwarf64 { 8 } else { 4 };
                let at = i.checked_mul(size)?.checked_add(u.str_offsets_base)?;
                let mut r = Reader::at(&self.sections.str_offsets, usize::try_from(at).ok()?);
                str_at(&self.sections.str, r.offset(u.dwarf64).ok()?)
            }
            _ => None,
        }
    }

    /// An address-class value of DIE `die`'s attribute `name`
    /// (`DW_FORM_addr`, or `addrx` through `.debug_addr`).
    pub fn address(&self, die: usize, name: u16) -> Option<u64> {
        let d = &self.dies[die];
        match d.attr(name)? {
            Value::Addr(a) => Some(*a),
            Value::AddrX(i) => self.debug_addr(d.unit, *i),
            _ => None,
        }
    }

    /// Entry `index` of unit `unit`'s `.debug_addr` table.
    pub fn debug_addr(&self, unit: usize, index: u64) -> Option<u64> {
        let u = &self.units[unit];
        let size = u64::from(u.address_size);
        let at = index.checked_mul(size)?.checked_add(u.addr_base)?;
        Reader::at(&self.sections.addr, usize::try_from(at).ok()?).uint(u.address_size).ok()
    }

    /// An unsigned constant of DIE `die`'s attribute `name`.
    pub fn udata(&self, die: usize, name: u16) -> Option<u64> {
        match self.dies[die].attr(name)? {
            Value::Udata(v) => Some(*v),
            Value::Sdata(v) => u64::try_from(*v).ok(),
            _ => None,
        }
    }

    /// The block (exprloc) bytes of DIE `die`'s attribute `name`.
    pub fn block(&self, die: usize, name: u16) -> Option<&[u8]> {
        match self.dies[die].attr(name)? {
            Value::Block { start, len } => self.sections.info.get(*start..start.checked_add(*len)?),
            _ => None,
        }
    }

    /// The DIE that DIE `die`'s reference attribute `name` points to.
    pub fn reference(&self, die: usize, name: u16) -> Option<usize> {
        match self.dies[die].attr(name)? {
            Value::Ref(o) => self.die_at(*o),
            _ => None,
        }
    }

    /// DIE `die`'s attribute `name`, or that of the DIE its
    /// `DW_AT_abstract_origin` / `DW_AT_specification` names (followed a
    /// bounded number of times): where concrete instances get their names
    /// and types (DWARF 5 §3.3.8.3, §2.13.2).
    pub fn inherited(&self, die: usize, name: u16) -> Option<(usize, &Value)> {
        let mut d = die;
        for _ in 0..8 {
            if let Some(v) = self.dies[d].attr(name) {
                return Some((d, v));
            }
            d = self.reference(d, at::ABSTRACT_ORIGIN).or_else(|| self.reference(d, at::SPECIFICATION))?;
        }
        None
    }

    /// DIE `die`'s name, inherited from its origin if need be.
    pub fn name(&self, die: usize) -> Option<String> {
        let (d, _) = self.inherited(die, at::NAME)?;
        self.string(d, at::NAME)
    }

    /// The DIE of DIE `die`'s type, inherited from its origin if need be.
    pub fn type_of(&self, die: usize) -> Option<usize> {
        let (d, _) = self.inherited(die, at::TYPE)?;
        self.reference(d, at::TYPE)
    }
}

/// Records the bases and base address the unit DIE gives.
fn set_bases(unit: &mut Unit, root: &Die) {
    for (name, v) in &root.attrs {
        let n = match v {
            Value::SecOffset(n) | Value::Udata(n) => *n,
            Value::Addr(a) if *name == at::LOW_PC => *a,
            _ => continue,
        };
        match *name {
            at::LOW_PC => unit.low_pc = Some(n),
            at::STR_OFFSETS_BASE => unit.str_offsets_base = n,
            at::ADDR_BASE => unit.addr_base = n,
            at::RNGLISTS_BASE => unit.rnglists_base = n,
            at::LOCLISTS_BASE => unit.loclists_base = n,
            _ => {}
        }
    }
}

/// Reads one attribute value of `form` (DWARF 5 §7.5.6 and the GNU
/// extensions gcc emits).
fn read_form(
    r: &mut Reader<'_>,
    form: u16,
    implicit: i64,
    unit: &Unit,
    sections: &Sections,
) -> Result<Value, Truncated> {
    let mut form = form;
    for _ in 0..MAX_INDIRECT {
        let block = |r: &mut Reader<'_>, len: u64| -> Result<Value, Truncated> {
            let start = r.pos;
            r.bytes(len)?;
            Ok(Value::Block { start, len: r.pos - start })
        };
        let old = unit.version < 4;
        return Ok(match form {
            0x01 => Value::Addr(r.uint(unit.address_size)?),
            0x03 => {
                let n = r.u16()?;
                block(r, u64::from(n))?
            }
            0x04 => {
                let n = r.u32()?;
                block(r, u64::from(n))?
            }
            0x09 | 0x18 => {
                let n = r.uleb()?;
                block(r, n)?
            }
            0x0a => {
                let n = r.u8()?;
                block(r, u64::from(n))?
            }
            0x1e => block(r, 16)?,
            0x0b => Value::Udata(u64::from(r.u8()?)),
            0x05 => Value::Udata(u64::from(r.u16()?)),
            // DWARF 2/3 location and range list pointers are data4/data8.
            0x06 if old => Value::SecOffset(u64::from(r.u32()?)),
            0x07 if old => Value::SecOffset(r.uint(8)?),
            0x06 => Value::Udata(u64::from(r.u32()?)),
            0x07 => Value::Udata(r.uint(8)?),
            0x08 => Value::Str(r.cstr()?),
            0x0c => Value::Flag(r.u8()? != 0),
            0x19 => Value::Flag(true),
            0x0d => Value::Sdata(r.sleb()?),
            0x0f => Value::Udata(r.uleb()?),
            0x0e => {
                let o = r.offset(unit.dwarf64)?;
                Value::Str(str_at(&sections.str, o).unwrap_or_default())
            }
            0x1f => {
                let o = r.offset(unit.dwarf64)?;
                Value::Str(str_at(&sections.line_str, o).unwrap_or_default())
            }
            0x10 => Value::Ref(if unit.version == 2 { r.uint(unit.address_size)? } else { r.offset(unit.dwarf64)? }),
            0x11 => Value::Ref(unit.offset + u64::from(r.u8()?)),
            0x12 => Value::Ref(unit.offset + u64::from(r.u16()?)),
            0x13 => Value::Ref(unit.offset + u64::from(r.u32()?)),
            0x14 => Value::Ref(unit.offset.wrapping_add(r.uint(8)?)),
            0x15 => Value::Ref(unit.offset.wrapping_add(r.uleb()?)),
            0x16 => {
                form = u16::try_from(r.uleb()?).map_err(|_| Truncated)?;
                continue;
            }
            0x17 => Value::SecOffset(r.offset(unit.dwarf64)?),
            0x1a | 0x1f02 => Value::StrX(r.uleb()?),
            0x25..=0x28 => Value::StrX(r.uint((form - 0x24) as u8)?),
            0x1b | 0x1f01 => Value::AddrX(r.uleb()?),
            0x29..=0x2c => Value::AddrX(r.uint((form - 0x28) as u8)?),
            0x1c => {
                r.u32()?;
                Value::Other
            }
            0x24 | 0x20 => {
                r.uint(8)?;
                Value::Other
            }
            0x1d | 0x1f20 | 0x1f21 => {
                r.offset(unit.dwarf64)?;
                Value::Other
            }
            0x21 => Value::Sdata(implicit),
            0x22 => Value::LocListX(r.uleb()?),
            0x23 => Value::RngListX(r.uleb()?),
            _ => return Err(Truncated),
        });
    }
    Err(Truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-assembled DWARF 5 unit: a compile unit (name as a string,
    /// low_pc) holding a subprogram with a formal parameter, then a base
    /// type.
    #[test]
    fn reads_a_hand_made_unit() {
        // Abbrevs: 1 = compile_unit, children, name:string, low_pc:addr;
        // 2 = subprogram, children, name:string, type:ref4;
        // 3 = formal_parameter, no children, location:exprloc;
        // 4 = base_type, no children, byte_size:data1, encoding:data1.
        let abbrev = [
            1, 0x11, 1, 0x03, 0x08, 0x11, 0x01, 0, 0, //
            2, 0x2e, 1, 0x03, 0x08, 0x49, 0x13, 0, 0, //
            3, 0x05, 0, 0x02, 0x18, 0, 0, //
            4, 0x24, 0, 0x0b, 0x0b, 0x3e, 0x0b, 0, 0, //
            0,
        ];
        let mut body = vec![5, 0, 1, 8, 0, 0, 0, 0]; // version 5, DW_UT_compile, address size 8, abbrev offset 0
        body.extend_from_slice(&[1, b'c', b'u', 0]);
        body.extend_from_slice(&0x1000u64.to_le_bytes());
        let sub_at = 4 + body.len();
        body.extend_from_slice(&[2, b'f', 0]);
        let type_ref_at = body.len();
        body.extend_from_slice(&[0, 0, 0, 0]);
        body.extend_from_slice(&[3, 2, 0x91, 0x78]); // DW_OP_fbreg -8
        body.push(0); // end of the subprogram's children
        let base_at = 4 + body.len();
        body.extend_from_slice(&[4, 4, 5]);
        body.push(0); // end of the unit's children
        body[type_ref_at..type_ref_at + 4].copy_from_slice(&(base_at as u32).to_le_bytes());
        let mut info = (body.len() as u32).to_le_bytes().to_vec();
        info.extend_from_slice(&body);
        let (info, problem) = Info::read(Sections { info, abbrev: abbrev.to_vec(), ..Sections::default() });
        assert_eq!(problem, None);
        assert_eq!(info.units.len(), 1);
        assert_eq!(info.units[0].low_pc, Some(0x1000));
        let tags: Vec<u16> = info.dies.iter().map(|d| d.tag).collect();
        assert_eq!(tags, vec![0x11, tag::SUBPROGRAM, tag::FORMAL_PARAMETER, tag::BASE_TYPE]);
        assert_eq!(info.dies[0].end, 4);
        assert_eq!(info.dies[1].end, 3);
        assert_eq!(info.dies[2].parent, Some(1));
        assert_eq!(info.dies[1].offset, sub_at as u64);
        assert_eq!(info.name(1).as_deref(), Some("f"));
        assert_eq!(info.type_of(1), Some(3));
        assert_eq!(info.block(2, at::LOCATION), Some(&[0x91, 0x78][..]));
        assert_eq!(info.udata(3, at::BYTE_SIZE), Some(4));
    }

    #[test]
    fn truncated_units_are_reported_not_panicked() {
        let (info, problem) =
            Info::read(Sections { info: vec![0x20, 0, 0, 0, 5, 0], abbrev: vec![0], ..Sections::default() });
        assert!(problem.is_some());
        assert!(info.units.is_empty());
    }
}
