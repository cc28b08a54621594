//! Decodes a blob under one [`Layout`]: every framing rule of
//! `specs/rules/visa-debuginfo.yaml` (magic, counts, names, type codes,
//! valid flags, truncation, trailing bytes) is checked as it reads, and the
//! first broken one stops it. Work is linear in the blob's size: every
//! count is checked against the bytes left before anything is read.

use super::layout::Layout;
use super::model::*;
use super::read::{Fault, Reader};
use dwarfcheck_core::rules::id;

/// The magic number, read as a little-endian 32-bit word.
pub const MAGIC: u32 = 0xdead_d010;

/// Bytes of the smallest interval (no location bytes smaller than 4).
fn min_interval_bytes(bound_bytes: usize) -> usize {
    2 * bound_bytes + 2 + 4
}

/// Decodes `bytes` as a whole blob in `layout`.
///
/// Errors: the first framing fault, at the offset of the field that breaks
/// it (`visa.header.magic`, `visa.header.object-count`, `visa.truncated`,
/// `visa.name.length`, `visa.interval.type-codes`, `visa.frame.valid-flag`,
/// `visa.trailing-bytes`).
pub fn decode(bytes: &[u8], layout: Layout) -> Result<Blob, Fault> {
    let mut r = Reader::new(bytes);
    let magic = r.u32("magic")?;
    if magic != MAGIC {
        return Err(Fault::new(id::VISA_HEADER_MAGIC, 0, format!("magic {magic:#010x}, not {MAGIC:#010x}")));
    }
    let count_at = r.pos();
    let count = r.u16("object count")?;
    let min = layout.min_object_bytes();
    if count == 0 || usize::from(count) * min > r.remaining() {
        return Err(Fault::new(
            id::VISA_HEADER_OBJECT_COUNT,
            count_at,
            format!("{count} object(s) of at least {min} bytes, {} byte(s) follow", r.remaining()),
        ));
    }
    let mut objects = Vec::with_capacity(usize::from(count));
    for _ in 0..count {
        objects.push(object(&mut r, layout)?);
    }
    if r.remaining() != 0 {
        return Err(Fault::new(
            id::VISA_TRAILING_BYTES,
            r.pos(),
            format!("{} byte(s) after the last object", r.remaining()),
        ));
    }
    Ok(Blob { layout, objects })
}

/// A name: its length (1 or 2 bytes per the layout), then its bytes.
fn read_name(r: &mut Reader<'_>, layout: Layout, what: &str) -> Result<String, Fault> {
    let at = r.pos();
    let len = r.uint(layout.name_len_bytes(), what)? as usize;
    if len > r.remaining() {
        return Err(Fault::new(id::VISA_NAME_LENGTH, at, format!("{what} of {len} byte(s), {} left", r.remaining())));
    }
    let b = r.bytes(len, what)?;
    if let Some(i) = b.iter().position(|&c| c == 0) {
        return Err(Fault::new(id::VISA_NAME_LENGTH, at, format!("{what} holds a zero byte at its byte {i}")));
    }
    Ok(String::from_utf8_lossy(b).into_owned())
}

fn object(r: &mut Reader<'_>, layout: Layout) -> Result<Object, Fault> {
    let at = r.pos();
    let name = read_name(r, layout, "object name")?;
    let reloc_offset = r.u32("relocation offset")?;
    let offset_map = map(r, "offset map")?;
    let index_map = map(r, "index map")?;
    let vars_at = r.pos();
    let nvars = r.u32("variable count")?;
    r.fits(u64::from(nvars), layout.name_len_bytes() + 2, vars_at, "variables")?;
    let mut variables = Vec::with_capacity(nvars as usize);
    for _ in 0..nvars {
        let vat = r.pos();
        let vname = read_name(r, layout, "variable name")?;
        let intervals = intervals(r, layout, 2)?;
        variables.push(Variable { at: vat, name: vname, intervals });
    }
    let subs_at = r.pos();
    let nsubs = r.u16("subroutine count")?;
    r.fits(u64::from(nsubs), layout.name_len_bytes() + 8 + 2, subs_at, "subroutines")?;
    let mut subroutines = Vec::with_capacity(usize::from(nsubs));
    for _ in 0..nsubs {
        let sat = r.pos();
        let sname = read_name(r, layout, "subroutine name")?;
        let start = r.u32("subroutine start")?;
        let end = r.u32("subroutine end")?;
        let retval_visa = layout.retval_visa_intervals();
        let retval = intervals(r, layout, if retval_visa { 2 } else { 4 })?;
        subroutines.push(Subroutine { at: sat, name: sname, start, end, retval_visa, retval });
    }
    let frame = frame(r, layout)?;
    Ok(Object { at, name, reloc_offset, offset_map, index_map, variables, subroutines, frame })
}

fn map(r: &mut Reader<'_>, what: &str) -> Result<Vec<MapEntry>, Fault> {
    let at = r.pos();
    let n = r.u32(what)?;
    r.fits(u64::from(n), 8, at, what)?;
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let eat = r.pos();
        let visa = r.u32(what)?;
        let gen = r.u32(what)?;
        v.push(MapEntry { at: eat, visa, gen });
    }
    Ok(v)
}

/// A 16-bit count of intervals with bounds of `bound_bytes` (2: vISA, 4: Gen).
fn intervals(r: &mut Reader<'_>, layout: Layout, bound_bytes: usize) -> Result<Vec<Interval>, Fault> {
    let at = r.pos();
    let n = r.u16("interval count")?;
    r.fits(u64::from(n), min_interval_bytes(bound_bytes), at, "intervals")?;
    let mut v = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        v.push(interval(r, layout, bound_bytes)?);
    }
    Ok(v)
}

fn interval(r: &mut Reader<'_>, layout: Layout, bound_bytes: usize) -> Result<Interval, Fault> {
    let at = r.pos();
    let start = r.uint(bound_bytes, "interval start")?;
    let end = r.uint(bound_bytes, "interval end")?;
    let vat = r.pos();
    let virtual_type = r.u8("virtual type")?;
    if RegFile::from_code(virtual_type).is_none() {
        return Err(Fault::new(id::VISA_INTERVAL_TYPE_CODES, vat, format!("virtual type {virtual_type}")));
    }
    let pat = r.pos();
    let physical_type = r.u8("physical type")?;
    let location = match RegFile::from_code(physical_type) {
        Some(file) => {
            let reg = r.u16("register number")?;
            let sub = r.u16("sub-register")?;
            Location::Register { file, reg, sub }
        }
        None if physical_type == 3 => {
            let raw = r.u32("memory offset")?;
            let (absolute, offset) = layout.memory_word(raw);
            Location::Memory { absolute, offset, raw }
        }
        None => return Err(Fault::new(id::VISA_INTERVAL_TYPE_CODES, pat, format!("physical type {physical_type}"))),
    };
    Ok(Interval { at, start, end, virtual_type, physical_type, location })
}

/// A valid flag (0 or 1) and, when 1, Gen intervals.
fn guarded(r: &mut Reader<'_>, layout: Layout, what: &str) -> Result<Option<Vec<Interval>>, Fault> {
    let at = r.pos();
    match r.u8(what)? {
        0 => Ok(None),
        1 => intervals(r, layout, 4).map(Some),
        v => Err(Fault::new(id::VISA_FRAME_VALID_FLAG, at, format!("{what} is {v}, not 0 or 1"))),
    }
}

fn frame(r: &mut Reader<'_>, layout: Layout) -> Result<Frame, Fault> {
    let at = r.pos();
    let size = r.u16("frame size")?;
    let befp = guarded(r, layout, "befpValid")?;
    let caller_befp = guarded(r, layout, "callerbefpValid")?;
    let ret_addr_flag_at = r.pos();
    let ret_addr = guarded(r, layout, "retAddrValid")?;
    let ce = if layout.has_ce_fields() { Some((r.u16("CE offset")?, r.u16("CE IP")?)) } else { None };
    let callee_save = saves(r, layout, 2, "callee-save count")?;
    let caller_save = saves(r, layout, layout.caller_count_bytes(), "caller-save count")?;
    Ok(Frame { at, size, befp, caller_befp, ret_addr, ret_addr_flag_at, ce, callee_save, caller_save })
}

fn saves(r: &mut Reader<'_>, layout: Layout, count_bytes: usize, what: &str) -> Result<Vec<SaveAtIp>, Fault> {
    let at = r.pos();
    let n = r.uint(count_bytes, what)?;
    r.fits(u64::from(n), 6, at, "save IP entries")?;
    let mut v = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let iat = r.pos();
        let gen_ip = r.u32("save Gen IP")?;
        let eat = r.pos();
        let ne = r.u16("save entry count")?;
        r.fits(u64::from(ne), 9, eat, "save entries")?;
        let mut entries = Vec::with_capacity(usize::from(ne));
        for _ in 0..ne {
            let sat = r.pos();
            let src_reg_off = r.u16("srcRegOff")?;
            let num_bytes = r.u16("numBytes")?;
            let fat = r.pos();
            let dst = match r.u8("dstInReg")? {
                1 => SaveDst::Register { reg: r.u16("destination register")?, sub: r.u16("destination sub-register")? },
                0 => {
                    let raw = r.u32("destination offset")?;
                    let (absolute, offset) = layout.memory_word(raw);
                    SaveDst::Memory { absolute, offset, raw }
                }
                f => return Err(Fault::new(id::VISA_FRAME_VALID_FLAG, fat, format!("dstInReg is {f}, not 0 or 1"))),
            };
            entries.push(RegSave { at: sat, src_reg_off, num_bytes, dst });
        }
        v.push(SaveAtIp { at: iat, gen_ip, entries });
    }
    Ok(v)
}
