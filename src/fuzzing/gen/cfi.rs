//! Generated CFI: a CIE and FDEs of CFA definitions, register rules with
//! small expressions, remember/restore and advances, for a preset target.

use crate::asm::cfi::CfiAsmParams;
use crate::asm::section::{build, CieLayout, FdeLayout, SectionLayout};
use arbitrary::{Result, Unstructured};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::encoding::eh_pe;
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::target::Target;
use std::sync::Arc;

/// One call frame instruction as text: CFA definitions (including the
/// signed, extended and address-space forms), register rules with small
/// expressions, remember/restore, advances and `DW_CFA_set_loc` (not in
/// a CIE).
fn cfi_insn(u: &mut Unstructured, cie: bool) -> Result<String> {
    let r = u.int_in_range(0u8..=17)?;
    let off = u.int_in_range(-8i64..=8)? * 8;
    let hi = if cie { 22 } else { 27 };
    Ok(match u.int_in_range(0u8..=hi)? {
        0 => format!("DW_CFA_def_cfa: reg{r} {:+}", off.unsigned_abs()),
        1 => format!("DW_CFA_def_cfa_offset: {:+}", off.unsigned_abs()),
        2 => format!("DW_CFA_def_cfa_register: reg{r}"),
        3 => format!("DW_CFA_offset: reg{r} {:+}", -(off.abs())),
        4 => format!("DW_CFA_val_offset: reg{r} {off:+}"),
        5 => format!("DW_CFA_register: reg{r} reg{}", u.int_in_range(0u8..=17)?),
        6 => format!("DW_CFA_same_value: reg{r}"),
        7 => format!("DW_CFA_undefined: reg{r}"),
        8 => format!("DW_CFA_expression: reg{r} {{{}}}", block(u)?),
        9 => format!("DW_CFA_val_expression: reg{r} {{{}}}", block(u)?),
        10 => format!("DW_CFA_def_cfa_expression: {{{}}}", block(u)?),
        11 => "DW_CFA_nop".to_string(),
        // The signed and extended forms, and the address-space CFA
        // (address space 0: the only one x86-64 has).
        12 => format!("DW_CFA_def_cfa_sf: reg{r} {off:+}"),
        13 => format!("DW_CFA_def_cfa_offset_sf: {off:+}"),
        14 => format!("DW_CFA_offset_extended: reg{r} {:+}", -(off.abs())),
        15 => format!("DW_CFA_offset_extended_sf: reg{r} {off:+}"),
        16 => format!("DW_CFA_val_offset_sf: reg{r} {off:+}"),
        17 => format!("DW_CFA_GNU_negative_offset_extended: reg{r} {:+}", off.abs()),
        18 => format!("DW_CFA_LLVM_def_aspace_cfa: reg{r} {:+} in addrspace0", off.unsigned_abs()),
        19 => format!("DW_CFA_LLVM_def_aspace_cfa_sf: reg{r} {off:+} in addrspace0"),
        20 => format!("DW_CFA_GNU_args_size: {:+}", off.unsigned_abs()),
        21 => format!("DW_CFA_restore_extended: reg{r}"),
        22 => format!("DW_CFA_def_cfa: reg{r} {:+}", off.unsigned_abs()),
        23 => format!("DW_CFA_advance_loc: {}", u.int_in_range(1u8..=8)?),
        24 => "DW_CFA_remember_state".to_string(),
        25 => "DW_CFA_restore_state".to_string(),
        26 => format!("DW_CFA_set_loc: {:#x}", u.int_in_range(0x1000u64..=0x4100)?),
        _ => format!("DW_CFA_restore: reg{r}"),
    })
}

/// A small CFI expression block as hex: the CFA or a register plus an
/// offset, sometimes dereferenced.
fn block(u: &mut Unstructured) -> Result<String> {
    let b: &[&str] = &["77 08", "77 10 06", "70 00", "9c", "08 10 22", "77 00 23 08", "53", "e6 03", "e3"];
    Ok(u.choose(b)?.to_string())
}

/// A frame section for `target`: one CIE (a CFA definition and a return
/// address rule, then up to 4 instructions) and 1 to 4 FDEs covering
/// [0x1000 * (i + 1), + 0x100) with up to 12 instructions each.
/// `.debug_frame` or `.eh_frame`. `None` if the layout cannot be written.
pub fn cfi_section(u: &mut Unstructured, target: &Arc<Target>) -> Result<Option<Arc<CfiSection>>> {
    let eh = u.arbitrary::<bool>()?;
    let p = CfiAsmParams {
        code_align: 1,
        data_align: -8,
        address_size: target.address_bytes(),
        segment_selector_size: 0,
        pointer_encoding: if eh { eh_pe::UDATA8 } else { eh_pe::ABSPTR },
    };
    let ra = target.return_address_register;
    let mut cie = vec![format!("DW_CFA_def_cfa: reg7 +8"), format!("DW_CFA_offset: reg{ra} -8")];
    for _ in 0..u.int_in_range(0u8..=4)? {
        cie.push(cfi_insn(u, true)?);
    }
    // Each instruction on its own, so that one the assembler refuses
    // (none should) drops alone.
    let asm = |v: &[String]| -> Vec<u8> {
        v.iter().flat_map(|i| crate::asm::cfi::assemble(i, target, &p).unwrap_or_default()).collect()
    };
    let mut fdes = Vec::new();
    for i in 0..u.int_in_range(1u64..=4)? {
        let mut f = Vec::new();
        for _ in 0..u.int_in_range(0u8..=12)? {
            f.push(cfi_insn(u, false)?);
        }
        fdes.push(FdeLayout {
            segment: 0,
            pc_begin: 0x1000 * (i + 1),
            pc_range: 0x100,
            lsda: None,
            augmentation_data: None,
            instructions: asm(&f),
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
            instructions: asm(&cie),
        },
        fdes,
    };
    Ok(build(&layout, target)
        .ok()
        .map(|(bytes, _)| Arc::new(CfiSection::new(layout.kind, bytes, 0x4000, target.clone()))))
}
