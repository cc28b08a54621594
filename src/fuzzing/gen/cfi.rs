//! Generated CFI: a CIE and FDEs of CFA definitions, register rules with
//! small expressions, remember/restore and advances, for a preset target,
//! written straight to instruction bytes.

use crate::asm::section::{build, CieLayout, FdeLayout, SectionLayout};
use arbitrary::{Result, Unstructured};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::{cfa, eh_pe};
use dwarfcheck_core::target::Target;
use std::sync::Arc;

/// Appends one call frame instruction to `out`, with the generator's
/// factors (code 1, data -8) and registers 0 to 17: CFA definitions (the
/// signed, extended and address-space forms included), register rules
/// with small expressions, and in an FDE (not `cie`) also
/// remember/restore, advances and `DW_CFA_set_loc`. Offsets are
/// multiples of 8 bytes within 64 either side of the CFA.
fn cfi_insn(u: &mut Unstructured, cie: bool, out: &mut Vec<u8>) -> Result<()> {
    let r = u.int_in_range(0u8..=17)?;
    // The offset in bytes is 8 * k; factored by the data alignment -8 it
    // is -k.
    let k = u.int_in_range(-8i64..=8)?;
    let (bytes, factored, magnitude) = (8 * k.unsigned_abs(), -k, k.unsigned_abs());
    let hi = if cie { 22 } else { 30 };
    let with = |out: &mut Vec<u8>, code: u8, uleb: &[u64], sleb: Option<i64>| {
        out.push(code);
        uleb.iter().for_each(|v| write_uleb(out, *v));
        if let Some(v) = sleb {
            write_sleb(out, v);
        }
    };
    let reg = u64::from(r);
    match u.int_in_range(0u8..=hi)? {
        0 | 22 => with(out, 0x0c, &[reg, bytes], None), // def_cfa
        1 => with(out, 0x0e, &[bytes], None),           // def_cfa_offset
        2 => with(out, 0x0d, &[reg], None),             // def_cfa_register
        3 => with(out, cfa::OFFSET | r, &[magnitude], None),
        // val_offset's factored offset is unsigned: CFA + 0, + 8, ...
        4 if factored >= 0 => with(out, 0x14, &[reg, factored as u64], None),
        4 => {}
        5 => with(out, 0x09, &[reg, u.int_in_range(0u64..=17)?], None), // register
        6 => with(out, 0x08, &[reg], None),                             // same_value
        7 => with(out, 0x07, &[reg], None),                             // undefined
        8 | 9 => {
            // expression, val_expression
            let b = block(u)?;
            with(out, if k % 2 == 0 { 0x10 } else { 0x16 }, &[reg, b.len() as u64], None);
            out.extend(b);
        }
        10 => {
            let b = block(u)?;
            with(out, 0x0f, &[b.len() as u64], None); // def_cfa_expression
            out.extend(b);
        }
        11 => out.push(0x00),                           // nop
        12 => with(out, 0x12, &[reg], Some(factored)),  // def_cfa_sf
        13 => with(out, 0x13, &[], Some(factored)),     // def_cfa_offset_sf
        14 => with(out, 0x05, &[reg, magnitude], None), // offset_extended
        15 => with(out, 0x11, &[reg], Some(factored)),  // offset_extended_sf
        16 => with(out, 0x15, &[reg], Some(factored)),  // val_offset_sf
        17 => with(out, 0x2f, &[reg, magnitude], None), // GNU_negative_offset_extended
        18 => with(out, 0x30, &[reg, bytes, 0], None),  // LLVM_def_aspace_cfa, space 0
        19 => {
            with(out, 0x31, &[reg], Some(factored)); // LLVM_def_aspace_cfa_sf, space 0
            out.push(0);
        }
        20 => with(out, 0x2e, &[bytes], None), // GNU_args_size
        21 => with(out, 0x06, &[reg], None),   // restore_extended
        23 => out.push(cfa::ADVANCE_LOC | u.int_in_range(1u8..=8)?),
        24 => out.push(0x0a), // remember_state
        25 => out.push(0x0b), // restore_state
        26 => {
            out.push(0x01); // set_loc: 8 bytes, absolute or udata8
            out.extend(u.int_in_range(0x1000u64..=0x4100)?.to_le_bytes());
        }
        27 => out.push(cfa::RESTORE | r),
        28 => out.extend([0x02, u.int_in_range(1u8..=8)?]), // advance_loc1
        29 => out.extend([0x03, u.int_in_range(1u8..=8)?, 0]), // advance_loc2
        _ => out.extend([0x04, u.int_in_range(1u8..=8)?, 0, 0, 0]), // advance_loc4
    }
    Ok(())
}

/// A small CFI expression block: the CFA or a register plus an offset,
/// sometimes dereferenced.
fn block(u: &mut Unstructured) -> Result<&'static [u8]> {
    let b: &[&[u8]] = &[
        &[0x77, 0x08],
        &[0x77, 0x10, 0x06],
        &[0x70, 0x00],
        &[0x9c],
        &[0x08, 0x10, 0x22],
        &[0x77, 0x00, 0x23, 0x08],
        &[0x53],
        &[0xe6, 0x03],
        &[0xe3],
    ];
    Ok(u.choose(b)?)
}

/// A frame section for `target`: one CIE (a CFA definition and a return
/// address rule, then up to 4 instructions) and 1 to 4 FDEs covering
/// [0x1000 * (i + 1), + 0x100) with up to 12 instructions each.
/// `.debug_frame` or `.eh_frame`. `None` if the layout cannot be written.
pub fn cfi_section(u: &mut Unstructured, target: &Arc<Target>) -> Result<Option<Arc<CfiSection>>> {
    let eh = u.arbitrary::<bool>()?;
    let ra = target.return_address_register;
    // DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: <ra> -8 (factored 1).
    let mut cie = vec![0x0c, 7, 8];
    if ra < 0x40 {
        cie.extend([cfa::OFFSET | ra as u8, 1]);
    } else {
        cie.push(0x05);
        write_uleb(&mut cie, ra);
        cie.push(1);
    }
    for _ in 0..u.int_in_range(0u8..=4)? {
        cfi_insn(u, true, &mut cie)?;
    }
    let mut fdes = Vec::new();
    for i in 0..u.int_in_range(1u64..=4)? {
        let mut f = Vec::new();
        for _ in 0..u.int_in_range(0u8..=12)? {
            cfi_insn(u, false, &mut f)?;
        }
        fdes.push(FdeLayout {
            segment: 0,
            pc_begin: 0x1000 * (i + 1),
            pc_range: 0x100,
            lsda: None,
            augmentation_data: None,
            instructions: f,
        });
    }
    let layout = SectionLayout {
        kind: if eh { FrameKind::EhFrame } else { FrameKind::DebugFrame },
        format: Format::Dwarf32,
        address: 0x4000,
        text_base: None,
        data_base: None,
        pad: true,
        cie: CieLayout {
            version: if eh { 1 } else { 4 },
            augmentation: if eh { b"zR".to_vec() } else { Vec::new() },
            address_size: None,
            segment_selector_size: 0,
            code_align: 1,
            data_align: -8,
            return_address_register: ra,
            eh_ptr: 0,
            fde_encoding: eh.then_some(eh_pe::UDATA8),
            lsda_encoding: None,
            personality: None,
            augmentation_data: None,
            instructions: cie,
        },
        fdes,
    };
    Ok(build(&layout, target)
        .ok()
        .map(|(bytes, _)| Arc::new(CfiSection::new(layout.kind, bytes, 0x4000, target.clone()))))
}
