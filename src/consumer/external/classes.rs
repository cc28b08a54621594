//! The known classes of llvm-dwarfdump, readelf and pyelftools
//! disagreement on the bundled CFI suite (docs/consumers.md, "Disagreement
//! classes (bundled suite)", X1 to X6 and P1 to P5), recognised from the
//! case's headers and instructions and the answers.

use super::Tool;
use crate::case::CfiCase;
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::outcome::CfiOutcome;

/// One line per class, in the project's words.
const EXPLANATIONS: &[(&str, &str)] = &[
    ("X1", "prints nothing and says nothing for a readable entry (CIE versions 1 and 3)"),
    ("X2", "drops the rule of a register past its register name table"),
    ("X3", "decodes a pointer or header encoding otherwise (textrel, datarel, funcrel, aligned, indirect, LEB128 pointers, segment selector, DWARF64 .eh_frame)"),
    ("X4", "stops at an augmentation string the LSB lets a reader skip"),
    ("X5", "does not decode the GNU instruction DW_CFA_GNU_negative_offset_extended"),
    ("X6", "misplaces the instructions of an FDE whose CIE has address size 4 in an ELF64 file"),
    ("L1", "decodes a header otherwise (text- and data-relative pointers, DWARF64 .eh_frame, segment selector, address size 4 in an ELF64 file, a range up to the last address)"),
    ("P1", "takes DW_CFA_def_cfa_sf's offset unfactored (without the data alignment factor)"),
    ("P2", "raises on DW_CFA_GNU_args_size when it builds the rows (FDE.get_decoded)"),
    ("P3", "does not decode the GNU instruction DW_CFA_GNU_negative_offset_extended"),
    ("P4", "stops at a CIE augmentation it does not know (B, G, S, eh, vendor strings), and loses every entry of the section with it"),
    ("P5", "decodes a header otherwise (FDE and LSDA pointer encodings other than absolute and pc-relative, .eh_frame without R, segment selector, DWARF64, address size 4 in an ELF64 file)"),
];

/// A public report of class `id`, if one is known.
pub fn report(id: &str) -> Option<&'static str> {
    match id {
        // The same opcode once stopped pyelftools' parsing; parsing was
        // fixed, the row builder still raises.
        "P2" => Some("https://github.com/eliben/pyelftools/issues/320"),
        _ => None,
    }
}

/// The one-line explanation of class `id`, if it is one.
pub fn explanation(id: &str) -> Option<&'static str> {
    EXPLANATIONS.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)
}

/// The class of a disagreement of `tool` with the reference on `case`
/// (`reference` the reference's whole outcome, `answer` the tool's), or
/// `None`. Signatures, checked in this order:
/// - X1 (readelf): the reference builds a table and readelf does not show
///   the FDE at all (`readelf:not-shown`);
/// - X3 (both): the CIE's FDE pointer encoding has an application part of
///   textrel, datarel, funcrel or aligned (0x20-0x50), is indirect (0x80) or
///   a LEB128 form (0x01, 0x09), its LSDA encoding is funcrel, it has a
///   segment selector, or it is a DWARF64 `.eh_frame` CIE; for
///   llvm-dwarfdump also a pc-relative FDE encoding with a
///   `DW_CFA_set_loc` (0x01) byte among the instructions;
/// - X4 (llvm-dwarfdump): the augmentation holds a letter other than z, L,
///   P, R, S, B, G, or starts with `eh`;
/// - X5 (llvm-dwarfdump): the instructions disassemble to a
///   `DW_CFA_GNU_negative_offset_extended`;
/// - X6 (readelf): the CIE's address size is 4;
/// - X2 (readelf): the reference's table has a rule for a register
///   numbered 128 or above that readelf's answer does not name (it drops
///   the rule, or reports the register as bad).
pub fn known_class(tool: Tool, case: &CfiCase, reference: &CfiOutcome, answer: &CfiOutcome) -> Option<&'static str> {
    if tool == Tool::Pyelftools {
        return pyelftools_class(case, answer);
    }
    if tool == Tool::Libdw {
        return libdw_class(case);
    }
    let readelf = tool == Tool::Readelf;
    let table = matches!(reference, CfiOutcome::Table(_));
    if readelf && table && answer.rule().is_some_and(|r| r.as_str() == "readelf:not-shown") {
        return Some("X1");
    }
    let cie = crate::consumer::fde_cie(&case.section, case.fde_offset)?;
    let fde = case.section.parse_fde(case.fde_offset).ok().map(|(f, _)| f);
    let enc = cie.fde_encoding;
    let odd_application = (0x20..=0x50).contains(&(enc & 0x70));
    let leb = matches!(enc & 0x0f, 0x01 | 0x09);
    let lsda_funcrel = cie.lsda_encoding.is_some_and(|l| l & 0x70 == 0x40);
    let dwarf64_eh = case.section.kind == dwarfcheck_core::cfi::FrameKind::EhFrame && cie.format == Format::Dwarf64;
    let bytes = |r: std::ops::Range<u64>| case.section.bytes.get(r.start as usize..r.end as usize).unwrap_or(&[]);
    let fde_bytes = fde.as_ref().map(|f| bytes(f.instructions.clone())).unwrap_or(&[]);
    let set_loc_pcrel = !readelf && enc & 0x70 == 0x10 && fde_bytes.contains(&0x01);
    if odd_application
        || enc & 0x80 != 0
        || leb
        || lsda_funcrel
        || cie.segment_selector_size != 0
        || dwarf64_eh
        || set_loc_pcrel
    {
        return Some("X3");
    }
    if !readelf {
        let aug = cie.augmentation.as_str();
        if aug.starts_with("eh") || aug.chars().any(|c| !"zLPRSBG".contains(c)) {
            return Some("X4");
        }
        let p = crate::asm::cfi::CfiAsmParams::from_cie(&cie);
        let text = |b: &[u8]| crate::asm::cfi::disassemble(b, &case.section.target, &p);
        if (text(bytes(cie.instructions.clone())) + &text(fde_bytes)).contains("DW_CFA_GNU_negative_offset_extended") {
            return Some("X5");
        }
        return None;
    }
    if cie.address_size == 4 {
        return Some("X6");
    }
    let CfiOutcome::Table(r) = reference else {
        return None;
    };
    let named = |n: u64| match answer {
        CfiOutcome::Table(a) => a.rows.iter().any(|row| row.registers.contains_key(&n)),
        _ => false,
    };
    r.rows.iter().flat_map(|row| row.registers.keys()).any(|&n| n >= 128 && !named(n)).then_some("X2")
}

/// pyelftools' classes, checked in this order:
/// - P4: its answer is a diagnostic and some CIE of the section has an
///   augmentation other than empty or `z` followed by L, P and R, or does
///   not parse (pyelftools reads every entry before it builds any row);
/// - P5: the FDE's CIE has an FDE or LSDA pointer encoding with an
///   application part other than absolute or pc-relative, or indirect, or
///   a LEB128 form; or it is an `.eh_frame` CIE without `R` (absolute
///   pointers by default); or it has a segment selector, the 64-bit format,
///   or address size 4;
/// - P1, P2, P3: the CIE's and FDE's instructions disassemble to
///   `DW_CFA_def_cfa_sf`, `DW_CFA_GNU_args_size`,
///   `DW_CFA_GNU_negative_offset_extended`.
fn pyelftools_class(case: &CfiCase, answer: &CfiOutcome) -> Option<&'static str> {
    let diagnosed = answer.rule().is_some_and(|r| r.as_str() == "pyelftools:diagnostic");
    let known_augmentation =
        |a: &str| a.is_empty() || a.strip_prefix('z').is_some_and(|r| r.chars().all(|c| "LPR".contains(c)));
    let section = &case.section;
    let odd_augmentation = section
        .entries()
        .filter_map(Result::ok)
        .filter(|e| e.kind == dwarfcheck_core::cfi::EntryKind::Cie)
        .any(|e| section.parse_cie(e.offset).map_or(true, |c| !known_augmentation(&c.augmentation)));
    if diagnosed && odd_augmentation {
        return Some("P4");
    }
    let cie = crate::consumer::fde_cie(section, case.fde_offset)?;
    let odd = |enc: u8| !matches!(enc & 0x70, 0x00 | 0x10) || enc & 0x80 != 0 || matches!(enc & 0x0f, 0x01 | 0x09);
    let eh_without_r = section.kind == dwarfcheck_core::cfi::FrameKind::EhFrame && !cie.augmentation.contains('R');
    if odd(cie.fde_encoding)
        || cie.lsda_encoding.is_some_and(odd)
        || eh_without_r
        || cie.segment_selector_size != 0
        || cie.format == Format::Dwarf64
        || cie.address_size == 4
    {
        return Some("P5");
    }
    let fde = section.parse_fde(case.fde_offset).ok().map(|(f, _)| f)?;
    let bytes = |r: std::ops::Range<u64>| section.bytes.get(r.start as usize..r.end as usize).unwrap_or(&[]);
    let p = crate::asm::cfi::CfiAsmParams::from_cie(&cie);
    let text = crate::asm::cfi::disassemble(bytes(cie.instructions.clone()), &section.target, &p)
        + &crate::asm::cfi::disassemble(bytes(fde.instructions.clone()), &section.target, &p);
    [("DW_CFA_def_cfa_sf", "P1"), ("DW_CFA_GNU_args_size", "P2"), ("DW_CFA_GNU_negative_offset_extended", "P3")]
        .into_iter()
        .find(|(name, _)| text.contains(name))
        .map(|(_, id)| id)
}

/// libdw's class: L1 when the FDE's CIE has an FDE pointer encoding with an
/// application part other than absolute or pc-relative, a segment
/// selector, the 64-bit format in `.eh_frame`, or address size 4, or the
/// FDE's range ends at the last address of a 32-bit space or beyond.
fn libdw_class(case: &CfiCase) -> Option<&'static str> {
    let section = &case.section;
    let cie = crate::consumer::fde_cie(section, case.fde_offset)?;
    let odd_pointer = !matches!(cie.fde_encoding & 0x70, 0x00 | 0x10);
    let dwarf64_eh = section.kind == dwarfcheck_core::cfi::FrameKind::EhFrame && cie.format == Format::Dwarf64;
    let range_end = section.parse_fde(case.fde_offset).ok().map(|(f, _)| f.pc_begin.saturating_add(f.pc_range));
    let to_the_end = range_end.is_some_and(|e| e >= 0xffff_ffff);
    (odd_pointer || cie.segment_selector_size != 0 || dwarf64_eh || cie.address_size == 4 || to_the_end).then_some("L1")
}
