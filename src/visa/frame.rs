//! Lowers an object's `CallFrameInfo` (seed "CallFrameInfo") to a
//! `.debug_frame` CIE and FDEs, and builds the machine state one frame is
//! unwound from (issue 17 item 3; docs/architecture.md "vISA CFI").
//!
//! One CIE (version 4, code and data alignment 1, return address column
//! `ip`, no initial instructions) and, per object, one FDE per BE_FP
//! interval held in a GRF, over the Gen range `[reloc + start, reloc +
//! end)` (end read as exclusive: ambiguity 105). In each FDE:
//! - CFA: the frame base, BE_FP read from its sub-register times the
//!   platform's BE_FP unit, in scratch (`DW_CFA_def_cfa_expression` of
//!   [`super::lower::expression`] of "0 bytes off BE_FP"). IGC's scratch
//!   stack grows upward and a callee's frame starts where the caller's
//!   stack pointer was at the call, which is DWARF 5 §6.4's definition of
//!   the CFA (ambiguities 105 and 110; IGC's own CFA is the caller's frame
//!   base instead, docs/consumers.md class IG11).
//! - return address (`ip`): a BE_FP-relative slot `o` is
//!   `DW_CFA_offset_extended_sf ip, o` (CFA-relative); an absolute
//!   slot or a register is `DW_CFA_expression` of its location.
//! - caller's BE_FP: the GRF holding BE_FP gets a composite rule, its
//!   4 bytes at BE_FP's sub-register from the slot, the rest undefined
//!   (the blob says nothing about them).
//! - callee- and caller-save entries, from their Gen IP on
//!   (`DW_CFA_advance_loc4`): each whole GRF of `srcRegOff .. + numBytes`
//!   gets the rule of its part of the destination. Partial registers are
//!   skipped (counted in [`Lowered::skipped_saves`]); entries whose Gen IP
//!   no FDE covers give no rule.
//!
//! Only the interval of each list (return address, caller BE_FP) that
//! covers the FDE's start is used; the decoded fixtures have one each.

use super::lower::{dwarf_register, expression, BE_FP_VALUE};
use super::model::{Blob, Interval, Location, Object, RegFile, RegSave, SaveAtIp, SaveDst};
use super::platform::Platform;
use super::target::{self, ASPACE_SCRATCH, IP};
use crate::case::{CfiCase, UnwindCase};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::context::{Context, MemorySegment};
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use std::sync::Arc;

/// The caller pc every unwinding state stores in a memory return address
/// slot, so that the unwound caller pc can be derived by hand.
pub const RA_VALUE: u32 = 0x2468;

/// The caller's BE_FP every unwinding state stores in a memory caller
/// BE_FP slot.
pub const CALLER_BE_FP_VALUE: u32 = 0x0800;

/// The most FDEs lowered per blob (each is one BE_FP interval): each
/// unwinding looks through all of them, so this bounds the work per point.
pub const MAX_FDES: usize = 512;

/// One FDE of the lowered section.
#[derive(Debug, Clone)]
pub struct LoweredFde {
    /// Index of the object in the blob.
    pub object: usize,
    /// Section offset of the FDE.
    pub fde_offset: u64,
    /// Its pc range `[start, end)` (relocation offset plus Gen offsets).
    pub range: (u64, u64),
    /// BE_FP's GRF and sub-register over the range.
    pub befp: (u16, u16),
}

/// A blob's call frame information lowered to one `.debug_frame`.
#[derive(Debug, Clone)]
pub struct Lowered {
    /// The section (CIE at offset 0, then the FDEs).
    pub section: Arc<CfiSection>,
    /// The FDEs in section order.
    pub fdes: Vec<LoweredFde>,
    /// Save entries (one register range each) inside an FDE not lowered:
    /// not whole GRFs, or into a register at a non-zero sub-register.
    /// (Entries whose Gen IP no FDE covers give no rule and are not
    /// counted.)
    pub skipped_saves: usize,
}

/// The CIE: version 4, no augmentation, 8-byte addresses, code and data
/// alignment 1, return address column `ip`; DWARF 32.
fn cie() -> Vec<u8> {
    let mut body = vec![0xff, 0xff, 0xff, 0xff, 4, 0, 8, 0];
    write_uleb(&mut body, 1);
    write_sleb(&mut body, 1);
    write_uleb(&mut body, IP);
    entry(&body)
}

/// `body` with its 4-byte length in front, padded with `DW_CFA_nop` so
/// that the whole entry is a multiple of the address size, 8 bytes
/// (DWARF 5 §6.4.1).
fn entry(body: &[u8]) -> Vec<u8> {
    let mut b = body.to_vec();
    while !(b.len() + 4).is_multiple_of(8) {
        b.push(0);
    }
    let mut out = (b.len() as u32).to_le_bytes().to_vec();
    out.extend(b);
    out
}

/// `DW_CFA_expression reg, [DW_OP_drop; loc]`: the register is at the
/// location `loc` gives (the CFA the instruction pushes first is dropped).
fn expression_rule(out: &mut Vec<u8>, reg: u64, loc: &[u8]) {
    out.push(0x10);
    write_uleb(out, reg);
    write_uleb(out, loc.len() as u64 + 1);
    out.push(0x96);
    out.extend_from_slice(loc);
}

/// The rule for register `reg` whose value is at `loc` (a whole register
/// or memory) in a frame whose BE_FP is `befp`, counting `unit` bytes.
/// `None` when the location cannot be lowered.
fn whole_rule(out: &mut Vec<u8>, reg: u64, loc: &Location, befp: (u16, u16), unit: u32) -> Option<()> {
    match *loc {
        // The CFA is the frame base: a BE_FP-relative byte offset is
        // CFA-relative as it stands.
        Location::Memory { absolute: false, offset, .. } => {
            out.push(0x11);
            write_uleb(out, reg);
            write_sleb(out, i64::from(offset));
        }
        _ => expression_rule(out, reg, &expression(loc, Some(befp), unit).ok()?),
    }
    Some(())
}

/// The caller's BE_FP, at `loc`, as the rule of the GRF `befp.0` whose
/// bytes `befp.1 .. + 4` hold it: a composite of undefined pieces around
/// the 4-byte piece at `loc`.
fn caller_befp_rule(out: &mut Vec<u8>, loc: &Location, befp: (u16, u16), grf_bytes: u32, unit: u32) -> Option<()> {
    let at = u32::from(befp.1);
    if at + 4 > grf_bytes {
        return None;
    }
    let mut e = Vec::new();
    let undefined = |e: &mut Vec<u8>, n: u32| {
        if n > 0 {
            e.push(0xe7);
            e.push(0x93);
            write_uleb(e, u64::from(n));
        }
    };
    undefined(&mut e, at);
    e.extend(expression(loc, Some(befp), unit).ok()?);
    e.extend([0x93, 4]);
    undefined(&mut e, grf_bytes - at - 4);
    expression_rule(out, dwarf_register(RegFile::Grf, befp.0), &e);
    Some(())
}

/// The interval of `list` that covers Gen offset `gen`, if any.
fn covering(list: &Option<Vec<Interval>>, gen: u32) -> Option<Location> {
    list.as_ref()?.iter().find(|i| i.start <= gen && gen <= i.end).map(|i| i.location)
}

/// The rules of one save entry: every whole GRF in `src .. src + n`.
/// Returns how many were skipped (0 or 1).
fn save_rules(out: &mut Vec<u8>, e: &RegSave, befp: (u16, u16), grf: u32, unit: u32) -> usize {
    let (src, n) = (u32::from(e.src_reg_off), u32::from(e.num_bytes));
    if grf == 0 || src % grf != 0 || n % grf != 0 || n == 0 {
        return 1;
    }
    for k in 0..n / grf {
        let reg = dwarf_register(RegFile::Grf, ((src / grf) + k) as u16);
        let part = k * grf;
        let loc = match e.dst {
            SaveDst::Memory { absolute, offset, raw } => {
                Location::Memory { absolute, offset: offset.wrapping_add(part as i32), raw }
            }
            SaveDst::Register { reg, sub: 0 } => {
                Location::Register { file: RegFile::Grf, reg: reg.wrapping_add(k as u16), sub: 0 }
            }
            SaveDst::Register { .. } => return 1,
        };
        if whole_rule(out, reg, &loc, befp, unit).is_none() {
            return 1;
        }
    }
    0
}

/// The FDE instructions of `object` over the BE_FP interval `[start, end)`
/// on `platform`; `saves` are its callee- and caller-save entries in Gen
/// IP order.
fn program(
    object: &Object,
    saves: &[&SaveAtIp],
    (start, end): (u32, u32),
    befp: (u16, u16),
    platform: Platform,
    skipped: &mut usize,
) -> Vec<u8> {
    let (grf, unit) = (platform.grf_bytes(), platform.be_fp_unit());
    let f = &object.frame;
    let mut out = Vec::new();
    // With BE_FP given, `expression` does not fail.
    let cfa =
        expression(&Location::Memory { absolute: false, offset: 0, raw: 0 }, Some(befp), unit).unwrap_or_default();
    out.push(0x0f);
    write_uleb(&mut out, cfa.len() as u64);
    out.extend(cfa);
    match covering(&f.ret_addr, start) {
        Some(loc) => {
            if whole_rule(&mut out, IP, &loc, befp, unit).is_none() {
                out.extend([0x07, IP as u8]);
            }
        }
        None => out.extend([0x07, IP as u8]),
    }
    if let Some(loc) = covering(&f.caller_befp, start) {
        // A caller BE_FP the composite cannot say leaves the GRF undefined.
        if caller_befp_rule(&mut out, &loc, befp, grf, unit).is_none() {
            out.push(0x07);
            write_uleb(&mut out, dwarf_register(RegFile::Grf, befp.0));
        }
    }
    let mut at = start;
    let first = saves.partition_point(|s| s.gen_ip < start);
    for s in saves[first..].iter().take_while(|s| s.gen_ip < end) {
        if s.gen_ip > at {
            out.push(0x04);
            out.extend((s.gen_ip - at).to_le_bytes());
            at = s.gen_ip;
        }
        for e in &s.entries {
            *skipped += save_rules(&mut out, e, befp, grf, unit);
        }
    }
    out
}

/// Lowers the call frame information of every object of `blob` compiled
/// for `platform`: linear in its BE_FP intervals and save entries, at most
/// [`MAX_FDES`] FDEs.
pub fn lower_frames(blob: &Blob, platform: Platform) -> Lowered {
    let target = Arc::new(target::target(platform));
    let mut bytes = cie();
    let (mut fdes, mut skipped) = (Vec::new(), 0);
    'objects: for (oi, object) in blob.objects.iter().enumerate() {
        let mut saves: Vec<&SaveAtIp> = object.frame.callee_save.iter().chain(&object.frame.caller_save).collect();
        saves.sort_by_key(|s| s.gen_ip);
        for iv in object.frame.befp.iter().flatten() {
            let Location::Register { file: RegFile::Grf, reg, sub } = iv.location else { continue };
            if iv.start >= iv.end {
                continue;
            }
            if fdes.len() == MAX_FDES {
                break 'objects;
            }
            let base = u64::from(object.reloc_offset);
            let range = (base + u64::from(iv.start), base + u64::from(iv.end));
            let mut body = 0u32.to_le_bytes().to_vec();
            body.extend(range.0.to_le_bytes());
            body.extend((range.1 - range.0).to_le_bytes());
            body.extend(program(object, &saves, (iv.start, iv.end), (reg, sub), platform, &mut skipped));
            let fde_offset = bytes.len() as u64;
            bytes.extend(entry(&body));
            fdes.push(LoweredFde { object: oi, fde_offset, range, befp: (reg, sub) });
        }
    }
    let section = Arc::new(CfiSection::new(FrameKind::DebugFrame, bytes, 0, target));
    Lowered { section, fdes, skipped_saves: skipped }
}

/// The CFI case of FDE `fde` of `lowered`, unwinding one frame from `pc`
/// in [`unwind_state`].
pub fn case(lowered: &Lowered, fde: &LoweredFde, blob: &Blob, pc: u64, platform: Platform) -> CfiCase {
    let ctx = unwind_state(&blob.objects[fde.object], fde, pc, platform, &lowered.section.target);
    CfiCase {
        name: format!("{}@{:#x}", blob.objects[fde.object].name, pc),
        origin: "visa".into(),
        section: lowered.section.clone(),
        fde_offset: fde.fde_offset,
        rules: Vec::new(),
        expect: None,
        unwind: Some(UnwindCase { ctx: Arc::new(ctx), limit: Some(1), expect: None }),
    }
}

/// The machine state at `pc` inside `fde`: BE_FP's GRF holding
/// [`BE_FP_VALUE`] at its sub-register (other bytes 0), `ip` the pc, and a
/// scratch frame `[BE_FP_VALUE × unit, + frame size)` (bytes; at least 64
/// bytes; unit from [`Platform::be_fp_unit`]) with
/// [`RA_VALUE`] at the return address slot and [`CALLER_BE_FP_VALUE`] at
/// the caller BE_FP slot when those are BE_FP-relative memory.
pub fn unwind_state(
    object: &Object,
    fde: &LoweredFde,
    pc: u64,
    platform: Platform,
    target: &Arc<dwarfcheck_core::target::Target>,
) -> Context {
    let mut ctx = Context::new(target.clone());
    ctx.pc = Some(pc);
    ctx.registers.insert(IP, (pc as u32).to_le_bytes().to_vec());
    let mut grf = vec![0u8; platform.grf_bytes() as usize];
    let at = usize::from(fde.befp.1);
    if let Some(slot) = grf.get_mut(at..at + 4) {
        slot.copy_from_slice(&BE_FP_VALUE.to_le_bytes());
    }
    ctx.registers.insert(dwarf_register(RegFile::Grf, fde.befp.0), grf);
    let f = &object.frame;
    let start = (fde.range.0 - u64::from(object.reloc_offset)) as u32;
    let mut frame = vec![0u8; usize::from(f.size).max(64)];
    let mut put = |loc: Option<Location>, v: u32| {
        if let Some(Location::Memory { absolute: false, offset, .. }) = loc {
            if let Ok(o) = usize::try_from(offset) {
                if let Some(s) = frame.get_mut(o..o + 4) {
                    s.copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    };
    put(covering(&f.ret_addr, start), RA_VALUE);
    put(covering(&f.caller_befp, start), CALLER_BE_FP_VALUE);
    let base = u64::from(BE_FP_VALUE) * u64::from(platform.be_fp_unit());
    ctx.memory.push(MemorySegment::shared(ASPACE_SCRATCH, base, frame));
    ctx
}
