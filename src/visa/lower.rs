//! Lowers vISA variable live intervals to DWARF location expressions, one
//! expression case per interval evaluated at a pc inside it (issue 17 item
//! 3), on the [`super::target`] preset.
//!
//! Per physical location:
//! - a register `rN.S` (`fN.S`, `a0.S`; `S` in bytes) becomes
//!   `DW_OP_regx (base + N)` then, when `S` is not 0,
//!   `DW_OP_LLVM_offset_uconst S`: a register location whose bit offset is
//!   8 × S (hetero-2020 "Register Location Description Operations" and
//!   "General Location Description Operations", `DW_OP_LLVM_offset_uconst`).
//!   Not `DW_OP_bit_piece`: that needs the piece's size, which the blob does
//!   not give, and would make a composite where the variable is one place.
//! - memory relative to BE_FP becomes BE_FP's value read from its own
//!   location at that pc (the frame's BE_FP interval, a GRF sub-register:
//!   `DW_OP_regx; DW_OP_LLVM_offset_uconst; DW_OP_deref_size 4`), times
//!   the platform's BE_FP unit when that is not 1 byte (`DW_OP_constu 16;
//!   DW_OP_mul` before Xe-HPG: [`Platform::be_fp_unit`], ambiguity 110),
//!   plus the offset in bytes (`DW_OP_consts; DW_OP_plus`), made an address in scratch
//!   (`DW_OP_constu 1; DW_OP_LLVM_form_aspace_address`). A plain
//!   `DW_OP_bregx` cannot say this: BE_FP is 32 bits at a byte offset
//!   inside a GRF, and `bregx` reads the register from bit 0.
//! - absolute scratch memory becomes `DW_OP_consts off; DW_OP_constu 1;
//!   DW_OP_LLVM_form_aspace_address`.
//!
//! Intervals are in vISA indices (bounds inclusive); the pc is the Gen
//! offset the object's index map gives the first vISA index of the interval
//! that has one (vISA indices without Gen code are not in the map), plus
//! the object's relocation offset. An interval with no mapped index, or
//! whose BE_FP is unknown at that pc, is not lowered ([`NotLowered`]).

use super::model::{Blob, Interval, Location, Object, RegFile};
use super::platform::Platform;
use super::target::{self, A0_BASE, ASPACE_SCRATCH, F0_BASE, GRF_BASE};
use crate::case::ExprCase;
use dwarfcheck_core::context::Context;
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use std::sync::Arc;

/// The value BE_FP holds in every lowered case's machine state, in BE_FP
/// units ([`Platform::be_fp_unit`]), so that BE_FP-relative locations can
/// be derived by hand: scratch byte `BE_FP_VALUE × unit + offset`.
pub const BE_FP_VALUE: u32 = 0x1000;

/// Why an interval was not lowered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotLowered {
    /// The index map has no entry for any vISA index of the interval (no
    /// Gen instruction inside it).
    Unmapped,
    /// BE_FP-relative memory where no BE_FP interval in a GRF covers the pc.
    NoBeFp,
}

/// One variable interval, lowered or not.
#[derive(Debug, Clone)]
pub struct LoweredInterval {
    /// Index of the object in the blob.
    pub object: usize,
    /// The variable's name.
    pub variable: String,
    /// The interval as decoded.
    pub interval: Interval,
    /// The expression case at a pc inside the interval, or why there is none.
    pub case: Result<ExprCase, NotLowered>,
}

/// The DWARF register number of register `reg` of `file`.
pub fn dwarf_register(file: RegFile, reg: u16) -> u64 {
    let base = match file {
        RegFile::Grf => GRF_BASE,
        RegFile::Flag => F0_BASE,
        RegFile::Address => A0_BASE,
    };
    base + u64::from(reg)
}

/// `DW_OP_regx n` then, for a non-zero byte offset, `DW_OP_LLVM_offset_uconst`.
fn register_location(out: &mut Vec<u8>, regno: u64, sub: u16) {
    out.push(0x90);
    write_uleb(out, regno);
    if sub != 0 {
        out.push(0xe4);
        write_uleb(out, u64::from(sub));
    }
}

/// `offset` (already on the stack as the address) made a scratch address.
fn scratch_address(out: &mut Vec<u8>) {
    out.push(0x10);
    write_uleb(out, ASPACE_SCRATCH);
    out.push(0xe1);
}

/// The expression bytes of `location`; `befp` is BE_FP's GRF and
/// sub-register (bytes) at the pc, when known, and `unit` the bytes per
/// BE_FP unit ([`Platform::be_fp_unit`]).
///
/// Errors: [`NotLowered::NoBeFp`] for BE_FP-relative memory without `befp`.
pub fn expression(location: &Location, befp: Option<(u16, u16)>, unit: u32) -> Result<Vec<u8>, NotLowered> {
    let mut out = Vec::new();
    match *location {
        Location::Register { file, reg, sub } => register_location(&mut out, dwarf_register(file, reg), sub),
        Location::Memory { absolute: true, offset, .. } => {
            out.push(0x11);
            write_sleb(&mut out, i64::from(offset));
            scratch_address(&mut out);
        }
        Location::Memory { absolute: false, offset, .. } => {
            let (reg, sub) = befp.ok_or(NotLowered::NoBeFp)?;
            register_location(&mut out, dwarf_register(RegFile::Grf, reg), sub);
            out.extend([0x94, 4]);
            if unit != 1 {
                out.push(0x10);
                write_uleb(&mut out, u64::from(unit));
                out.push(0x1e);
            }
            out.push(0x11);
            write_sleb(&mut out, i64::from(offset));
            out.push(0x22);
            scratch_address(&mut out);
        }
    }
    Ok(out)
}

/// BE_FP's GRF and sub-register at Gen offset `gen` of `object`: the first
/// BE_FP interval (Gen offsets, bounds inclusive) in a GRF covering it.
pub fn befp_at(object: &Object, gen: u32) -> Option<(u16, u16)> {
    object.frame.befp.as_ref()?.iter().find_map(|i| match i.location {
        Location::Register { file: RegFile::Grf, reg, sub } if i.start <= gen && gen <= i.end => Some((reg, sub)),
        _ => None,
    })
}

/// Lowers every variable interval of `blob` compiled for `platform`.
/// Linear in the blob's intervals plus its index map entries.
pub fn lower(blob: &Blob, platform: Platform) -> Vec<LoweredInterval> {
    let target = Arc::new(target::target(platform));
    let mut out = Vec::new();
    for (oi, object) in blob.objects.iter().enumerate() {
        let map: std::collections::BTreeMap<u32, u32> = object.index_map.iter().map(|e| (e.visa, e.gen)).collect();
        for v in &object.variables {
            for iv in &v.intervals {
                let first = (iv.start <= iv.end).then(|| map.range(iv.start..=iv.end).next()).flatten();
                let case = first
                    .ok_or(NotLowered::Unmapped)
                    .and_then(|(_, &gen)| lower_one(object, iv, gen, platform, &target));
                out.push(LoweredInterval { object: oi, variable: v.name.clone(), interval: *iv, case });
            }
        }
    }
    out
}

/// The case of one interval whose start is at Gen offset `gen`.
fn lower_one(
    object: &Object,
    iv: &Interval,
    gen: u32,
    platform: Platform,
    target: &Arc<dwarfcheck_core::target::Target>,
) -> Result<ExprCase, NotLowered> {
    let befp = befp_at(object, gen);
    let expr = expression(&iv.location, befp, platform.be_fp_unit())?;
    let mut ctx = Context::new(target.clone());
    ctx.pc = Some(u64::from(object.reloc_offset) + u64::from(gen));
    if let (Location::Memory { absolute: false, .. }, Some((reg, sub))) = (iv.location, befp) {
        let mut bytes = vec![0u8; platform.grf_bytes() as usize];
        let at = usize::from(sub);
        if let Some(slot) = bytes.get_mut(at..at + 4) {
            slot.copy_from_slice(&BE_FP_VALUE.to_le_bytes());
        }
        ctx.registers.insert(dwarf_register(RegFile::Grf, reg), bytes);
    }
    Ok(ExprCase::plain(format!("{}@{:#x}", object.name, iv.at), "visa", &expr, Arc::new(ctx)))
}
