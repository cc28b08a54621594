//! The rules of `specs/rules/visa-debuginfo.yaml` that a decoded blob can
//! break without breaking its framing: interval order, vISA indices within
//! the index map, ordered Gen offsets, registers within the platform's
//! files, a kernel without a return address, subroutine ranges, save
//! entries that fit the frame.

use super::model::*;
use super::platform::Platform;
use super::read::Fault;
use dwarfcheck_core::rules::id;

/// Every fault of `blob` on `platform`, in order of byte offset.
pub fn validate(blob: &Blob, platform: Platform) -> Vec<Fault> {
    let mut out = Vec::new();
    for (i, o) in blob.objects.iter().enumerate() {
        // The object's code ends where the next object's begins.
        let code_size = blob.objects.get(i + 1).and_then(|n| n.reloc_offset.checked_sub(o.reloc_offset));
        object(o, code_size, platform, &mut out);
    }
    out.sort_by_key(|f| f.at);
    out
}

fn object(o: &Object, code_size: Option<u32>, p: Platform, out: &mut Vec<Fault>) {
    for (what, m) in [("offset map", &o.offset_map), ("index map", &o.index_map)] {
        gen_order(what, m, code_size, out);
    }
    let max_index = o.index_map.iter().map(|e| e.visa).max();
    for v in &o.variables {
        for iv in &v.intervals {
            interval(iv, p, out);
            if let Some(max) = max_index {
                for (b, which) in [(iv.start, "start"), (iv.end, "end")] {
                    if b > max {
                        out.push(Fault::new(
                            id::VISA_INTERVAL_VISA_INDEX,
                            iv.at,
                            format!("{}: interval {which} {b} past the index map's largest index {max}", v.name),
                        ));
                    }
                }
            }
        }
    }
    for s in &o.subroutines {
        if s.start > s.end {
            out.push(Fault::new(
                id::VISA_SUBROUTINE_RANGE,
                s.at,
                format!("{}: starts at vISA index {} after its end {}", s.name, s.start, s.end),
            ));
        }
        for iv in &s.retval {
            interval(iv, p, out);
            if s.retval_visa && (iv.start < s.start || iv.end > s.end) {
                out.push(Fault::new(
                    id::VISA_SUBROUTINE_RANGE,
                    iv.at,
                    format!(
                        "{}: return value interval ({}, {}) outside the subroutine ({}, {})",
                        s.name, iv.start, iv.end, s.start, s.end
                    ),
                ));
            }
        }
    }
    let f = &o.frame;
    for iv in [&f.befp, &f.caller_befp, &f.ret_addr].into_iter().flatten().flatten() {
        interval(iv, p, out);
    }
    if o.reloc_offset == 0 && f.ret_addr.is_some() {
        out.push(Fault::new(
            id::VISA_FRAME_VALID_FLAG,
            f.ret_addr_flag_at,
            format!("{}: a kernel (relocation offset 0) with a return address", o.name),
        ));
    }
    for ip in f.callee_save.iter().chain(&f.caller_save) {
        for e in &ip.entries {
            save(e, f.size, p, out);
        }
    }
}

fn gen_order(what: &str, m: &[MapEntry], code_size: Option<u32>, out: &mut Vec<Fault>) {
    let mut prev: Option<u32> = None;
    for e in m {
        if prev.is_some_and(|p| e.gen < p) {
            out.push(Fault::new(
                id::VISA_MAP_GEN_ORDER,
                e.at,
                format!("{what}: Gen offset {} after {}", e.gen, prev.unwrap_or(0)),
            ));
        }
        if let Some(size) = code_size.filter(|&s| e.gen > s) {
            out.push(Fault::new(
                id::VISA_MAP_GEN_ORDER,
                e.at,
                format!("{what}: Gen offset {} past the end of the object's {size} bytes of code", e.gen),
            ));
        }
        prev = Some(e.gen);
    }
}

fn interval(iv: &Interval, p: Platform, out: &mut Vec<Fault>) {
    if iv.start > iv.end {
        out.push(Fault::new(id::VISA_INTERVAL_ORDER, iv.at, format!("start {} after end {}", iv.start, iv.end)));
    }
    if let Location::Register { file, reg, sub } = iv.location {
        let (count, width, name) = match file {
            RegFile::Grf => (p.grf_count(), p.grf_bytes(), "r"),
            RegFile::Flag => (p.flag_count(), 4, "f"),
            RegFile::Address => (p.address_count(), p.address_bytes(), "a"),
        };
        if u32::from(reg) >= count || u32::from(sub) >= width {
            out.push(Fault::new(
                id::VISA_REGISTER_GRF,
                iv.at,
                format!("{name}{reg}.{sub}: {p} has {count} such register(s) of {width} byte(s)"),
            ));
        }
    }
}

fn save(e: &RegSave, frame_size: u16, p: Platform, out: &mut Vec<Fault>) {
    let grf = p.grf_bytes();
    if u32::from(e.src_reg_off) % grf != 0 || e.num_bytes == 0 {
        out.push(Fault::new(
            id::VISA_SAVE_FITS_FRAME,
            e.at,
            format!(
                "{} byte(s) from byte {} of the GRF: not whole registers of {grf} bytes",
                e.num_bytes, e.src_reg_off
            ),
        ));
    }
    match e.dst {
        SaveDst::Memory { absolute: false, offset, .. } => {
            let end = i64::from(offset) + i64::from(e.num_bytes);
            if offset < 0 || end > i64::from(frame_size) {
                out.push(Fault::new(
                    id::VISA_SAVE_FITS_FRAME,
                    e.at,
                    format!("saved at BE_FP{offset:+} .. {end}, outside the frame of {frame_size} bytes"),
                ));
            }
        }
        SaveDst::Register { reg, sub } if u32::from(reg) >= p.grf_count() || u32::from(sub) >= grf => {
            out.push(Fault::new(
                id::VISA_SAVE_FITS_FRAME,
                e.at,
                format!("saved in r{reg}.{sub}: {p} has {} registers of {grf} bytes", p.grf_count()),
            ));
        }
        _ => {}
    }
}
