//! Assembles the structured `cu.loclists` of a case file into section
//! bytes: `.debug_loclists` with a header and an offsets table for unit
//! version 5 and later (DWARF 5 §7.29), `.debug_loc` before (DWARF 4
//! §2.6.2), so cases need not spell location lists in hex.

use super::schema::LleSpec;
use dwarfcheck_core::encoding::leb128::write_uleb;
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::target::Endian;

/// How to lay out the section.
pub struct Layout {
    /// Unit version: 5 and later write `.debug_loclists`.
    pub version: u16,
    /// 32- or 64-bit DWARF (header and offsets table).
    pub format: Format,
    /// Address size in **bytes**.
    pub address_size: u8,
    /// Byte order of addresses and fixed-size fields.
    pub endian: Endian,
}

/// The assembled section and, for `.debug_loclists`, the loclists_base
/// (byte offset of the offsets table).
pub struct Assembled {
    /// Section bytes.
    pub bytes: Vec<u8>,
    /// `DW_AT_loclists_base` (0 for `.debug_loc`).
    pub base: u64,
}

/// Why a structured location list cannot be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoclistError {
    /// An error in entry `entry` of list `list`.
    #[error("loclists[{list}][{entry}]: {source}")]
    At {
        /// List index.
        list: usize,
        /// Entry index within the list.
        entry: usize,
        /// What is wrong with it.
        source: Box<LoclistError>,
    },
    /// Not exactly one kind key.
    #[error(
        "an entry has exactly one kind key (base_addressx, startx_endx, startx_length, offset_pair, \
         default_location, base_address, start_end, start_length, end_of_list)"
    )]
    Kind,
    /// `expr:` on an entry that takes none, or missing on one that does.
    #[error("bounded and default entries have `expr:`; base address and end-of-list entries do not")]
    Expr,
    /// A DWARF 5 entry kind in a version 4 unit.
    #[error("a version 4 unit's .debug_loc takes offset_pair, base_address and end_of_list only")]
    Version4,
    /// The entry's expression text does not assemble (the assembler's
    /// message).
    #[error("{0}")]
    Assembler(String),
}

/// Assembles `lists`; `expr` turns an entry's expression text into bytes
/// (its error, a message, becomes [`LoclistError::Assembler`]). Every list
/// ends with an end-of-list entry appended after its entries.
///
/// Errors: a [`LoclistError::At`] naming the list and entry.
pub fn assemble(
    lists: &[Vec<LleSpec>],
    layout: &Layout,
    expr: &mut dyn FnMut(&str) -> Result<Vec<u8>, LoclistError>,
) -> Result<Assembled, LoclistError> {
    let v5 = layout.version >= 5;
    let mut bodies = Vec::new();
    for (i, l) in lists.iter().enumerate() {
        let mut b = Vec::new();
        for (j, e) in l.iter().enumerate() {
            entry(e, layout, v5, &mut b, expr).map_err(|m| LoclistError::At {
                list: i,
                entry: j,
                source: Box::new(m),
            })?;
        }
        if v5 {
            b.push(0x00);
        } else {
            b.extend(std::iter::repeat_n(0u8, 2 * usize::from(layout.address_size)));
        }
        bodies.push(b);
    }
    if !v5 {
        return Ok(Assembled { bytes: bodies.concat(), base: 0 });
    }
    let off = layout.format.offset_bytes();
    let table = off * lists.len();
    let mut offsets = Vec::new();
    let mut at = table as u64;
    for b in &bodies {
        offsets.extend(fixed(at, off, layout.endian));
        at += b.len() as u64;
    }
    let mut rest = Vec::new();
    rest.extend(fixed(5, 2, layout.endian));
    rest.push(layout.address_size);
    rest.push(0);
    rest.extend(fixed(lists.len() as u64, 4, layout.endian));
    let unit_length = (rest.len() + offsets.len() + bodies.iter().map(Vec::len).sum::<usize>()) as u64;
    let mut bytes = match layout.format {
        Format::Dwarf32 => fixed(unit_length, 4, layout.endian),
        Format::Dwarf64 => [vec![0xff; 4], fixed(unit_length, 8, layout.endian)].concat(),
    };
    bytes.extend(rest);
    let base = bytes.len() as u64;
    bytes.extend(offsets);
    bytes.extend(bodies.concat());
    Ok(Assembled { bytes, base })
}

fn fixed(v: u64, n: usize, endian: Endian) -> Vec<u8> {
    let le = v.to_le_bytes();
    let mut b: Vec<u8> = le[..n.min(8)].to_vec();
    if endian == Endian::Big {
        b.reverse();
    }
    b
}

fn uleb(v: u64, out: &mut Vec<u8>) {
    write_uleb(out, v);
}

/// Writes one entry.
fn entry(
    e: &LleSpec,
    layout: &Layout,
    v5: bool,
    out: &mut Vec<u8>,
    expr: &mut dyn FnMut(&str) -> Result<Vec<u8>, LoclistError>,
) -> Result<(), LoclistError> {
    let a = usize::from(layout.address_size);
    let addr = |v: u64| fixed(v, a, layout.endian);
    let kinds = [
        e.base_addressx.is_some(),
        e.startx_endx.is_some(),
        e.startx_length.is_some(),
        e.offset_pair.is_some(),
        e.default_location == Some(true),
        e.base_address.is_some(),
        e.start_end.is_some(),
        e.start_length.is_some(),
        e.end_of_list == Some(true),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(LoclistError::Kind);
    }
    let bounded = !(e.base_addressx.is_some() || e.base_address.is_some() || e.end_of_list == Some(true));
    if bounded != e.expr.is_some() {
        return Err(LoclistError::Expr);
    }
    if !v5 {
        // .debug_loc: only address pairs relative to the base, base
        // selections and the end.
        if let Some([b, end]) = e.offset_pair {
            out.extend(addr(b));
            out.extend(addr(end));
        } else if let Some(b) = e.base_address {
            out.extend(addr(u64::MAX));
            out.extend(addr(b));
        } else if e.end_of_list == Some(true) {
            out.extend(addr(0));
            out.extend(addr(0));
        } else {
            return Err(LoclistError::Version4);
        }
        if let Some(t) = &e.expr {
            let x = expr(t)?;
            out.extend(fixed(x.len() as u64, 2, layout.endian));
            out.extend(x);
        }
        return Ok(());
    }
    if let Some(i) = e.base_addressx {
        out.push(0x01);
        uleb(i, out);
    } else if let Some([i, j]) = e.startx_endx {
        out.push(0x02);
        uleb(i, out);
        uleb(j, out);
    } else if let Some([i, n]) = e.startx_length {
        out.push(0x03);
        uleb(i, out);
        uleb(n, out);
    } else if let Some([b, end]) = e.offset_pair {
        out.push(0x04);
        uleb(b, out);
        uleb(end, out);
    } else if e.default_location == Some(true) {
        out.push(0x05);
    } else if let Some(b) = e.base_address {
        out.push(0x06);
        out.extend(addr(b));
    } else if let Some([b, end]) = e.start_end {
        out.push(0x07);
        out.extend(addr(b));
        out.extend(addr(end));
    } else if let Some([b, n]) = e.start_length {
        out.push(0x08);
        out.extend(addr(b));
        uleb(n, out);
    } else {
        out.push(0x00);
    }
    if let Some(t) = &e.expr {
        let x = expr(t)?;
        uleb(x.len() as u64, out);
        out.extend(x);
    }
    Ok(())
}
