//! Builds frame section bytes from a description: one CIE followed by FDEs
//! (and the `.eh_frame` zero terminator). Used by case files
//! (`case::yaml::cfi`), tests and fuzzing.
//!
//! Layout facts (DWARF 5 §6.4.1, §7.24; LSB Exception Frames; psABI
//! augmentations) are the same the reader in `dwarfcheck_core::cfi::header` decodes;
//! this writer is checked against llvm-dwarfdump in the case suite.

use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_core::encoding::eh_pe;
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::target::{Endian, Target};

/// Description of the CIE to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CieLayout {
    /// CIE version (1, 3 or 4).
    pub version: u8,
    /// Augmentation string (without the terminating NUL).
    pub augmentation: Vec<u8>,
    /// Version 4 `address_size` in **bytes**; `None` = the target's.
    pub address_size: Option<u8>,
    /// Version 4 `segment_selector_size` in **bytes**.
    pub segment_selector_size: u8,
    /// Code alignment factor.
    pub code_align: u64,
    /// Data alignment factor.
    pub data_align: i64,
    /// Return address column.
    pub return_address_register: u64,
    /// Value of the legacy `eh` augmentation pointer.
    pub eh_ptr: u64,
    /// `R` encoding (`None` = absptr; used even without `R` when set, for
    /// writing FDE addresses).
    pub fde_encoding: Option<u8>,
    /// `L` encoding.
    pub lsda_encoding: Option<u8>,
    /// `P` encoding and personality address.
    pub personality: Option<(u8, u64)>,
    /// Raw augmentation data replacing the generated one (for unknown
    /// letters or deliberately bad data).
    pub augmentation_data: Option<Vec<u8>>,
    /// Initial instruction bytes.
    pub instructions: Vec<u8>,
}

/// Description of one FDE to write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FdeLayout {
    /// Segment selector (written when the CIE's selector size is non-zero).
    pub segment: u64,
    /// First address covered.
    pub pc_begin: u64,
    /// Bytes covered.
    pub pc_range: u64,
    /// LSDA address (written when the CIE has `L`).
    pub lsda: Option<u64>,
    /// Raw augmentation data replacing the generated one.
    pub augmentation_data: Option<Vec<u8>>,
    /// Instruction bytes.
    pub instructions: Vec<u8>,
}

/// A whole section to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionLayout {
    /// `.debug_frame` or `.eh_frame`.
    pub kind: FrameKind,
    /// 32- or 64-bit entries.
    pub format: Format,
    /// Virtual address of the section (for pcrel/aligned pointers).
    pub address: u64,
    /// Base for textrel pointers.
    pub text_base: Option<u64>,
    /// Base for datarel pointers.
    pub data_base: Option<u64>,
    /// Pad each entry with `DW_CFA_nop` so that length field + length is a
    /// multiple of the address size.
    pub pad: bool,
    /// The CIE (written at offset 0).
    pub cie: CieLayout,
    /// FDEs, written after the CIE in order.
    pub fdes: Vec<FdeLayout>,
}

struct W {
    out: Vec<u8>,
    big: bool,
}

impl W {
    /// `v` as an `n`-byte unsigned integer in the section's byte order;
    /// fields wider than 8 bytes (a CIE may say `address_size: 9`) are
    /// zero-extended.
    fn uint(&mut self, v: u64, n: usize) {
        let b = v.to_le_bytes();
        let low = &b[..n.min(8)];
        let high = std::iter::repeat_n(0u8, n.saturating_sub(8));
        if self.big {
            self.out.extend(high.chain(low.iter().rev().copied()));
        } else {
            self.out.extend(low.iter().copied().chain(high));
        }
    }
}

/// Why a section layout cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// A relative pointer whose base the layout does not give.
    #[error("{0} pointer needs {1}")]
    NoBase(&'static str, &'static str),
    /// A `DW_EH_PE_*` application the writer does not know.
    #[error("cannot write pointer encoding {0:#04x}")]
    Encoding(u8),
    /// A `DW_EH_PE_*` value format the writer does not know.
    #[error("cannot write pointer format {0:#x}")]
    Format(u8),
    /// An augmentation letter whose data cannot be generated.
    #[error("augmentation letter {0:?} needs explicit augmentation_data")]
    AugmentationLetter(char),
    /// A CIE version 1 return address column above 255.
    #[error("CIE version 1 stores the return address column in one byte; {0} does not fit")]
    ReturnAddressColumn(u64),
    /// Generated augmentation data of 128 bytes or more.
    #[error("generated augmentation data longer than 127 bytes")]
    AugmentationTooLong,
}

/// Writes a pointer `value` with encoding `enc` at the end of `w.out`
/// (section offset = `w.out.len()`).
fn write_pointer(
    w: &mut W,
    l: &SectionLayout,
    enc: u8,
    value: u64,
    asize: u8,
    func: Option<u64>,
) -> Result<(), LayoutError> {
    if enc == eh_pe::OMIT {
        return Ok(());
    }
    let app = enc & eh_pe::APPLICATION_MASK;
    if app == eh_pe::ALIGNED {
        let a = u64::from(asize.max(1));
        while !l.address.wrapping_add(w.out.len() as u64).is_multiple_of(a) {
            w.out.push(0);
        }
    }
    let here = l.address.wrapping_add(w.out.len() as u64);
    let base = match app {
        eh_pe::ABSPTR | eh_pe::ALIGNED => 0,
        eh_pe::PCREL => here,
        eh_pe::TEXTREL => l.text_base.ok_or(LayoutError::NoBase("textrel", "text_base"))?,
        eh_pe::DATAREL => l.data_base.ok_or(LayoutError::NoBase("datarel", "data_base"))?,
        eh_pe::FUNCREL => func.ok_or(LayoutError::NoBase("funcrel", "a function start"))?,
        _ => return Err(LayoutError::Encoding(enc)),
    };
    write_value(w, enc & eh_pe::FORMAT_MASK, value.wrapping_sub(base), asize)
}

fn write_value(w: &mut W, format: u8, v: u64, asize: u8) -> Result<(), LayoutError> {
    match format {
        eh_pe::ABSPTR => w.uint(v, asize as usize),
        eh_pe::ULEB128 => write_uleb(&mut w.out, v),
        eh_pe::UDATA2 | eh_pe::SDATA2 => w.uint(v, 2),
        eh_pe::UDATA4 | eh_pe::SDATA4 => w.uint(v, 4),
        eh_pe::UDATA8 | eh_pe::SDATA8 => w.uint(v, 8),
        eh_pe::SLEB128 => write_sleb(&mut w.out, v as i64),
        _ => return Err(LayoutError::Format(format)),
    }
    Ok(())
}

/// Starts an entry: writes the initial length placeholder; returns the
/// offset of the length field.
fn begin(w: &mut W, format: Format) -> usize {
    let at = w.out.len();
    match format {
        Format::Dwarf32 => w.uint(0, 4),
        Format::Dwarf64 => {
            w.uint(0xffff_ffff, 4);
            w.uint(0, 8);
        }
    }
    at
}

/// Pads with `DW_CFA_nop` and patches the length of the entry at `at`.
fn finish(w: &mut W, at: usize, format: Format, pad: bool, asize: u8) {
    if pad {
        let a = usize::from(asize.max(1));
        while !(w.out.len() - at).is_multiple_of(a) {
            w.out.push(0);
        }
    }
    let (field, len_bytes) = match format {
        Format::Dwarf32 => (at, 4),
        Format::Dwarf64 => (at + 4, 8),
    };
    let len = (w.out.len() - field - len_bytes) as u64;
    let mut tmp = W { out: Vec::new(), big: w.big };
    tmp.uint(len, len_bytes);
    w.out[field..field + len_bytes].copy_from_slice(&tmp.out);
}

/// Writes the section. Returns its bytes and the section offset of each
/// FDE. Errors (a message saying what is missing) when a pointer cannot
/// be encoded (e.g. textrel without `text_base`).
pub fn build(l: &SectionLayout, target: &Target) -> Result<(Vec<u8>, Vec<u64>), LayoutError> {
    let mut w = W { out: Vec::new(), big: target.endian == Endian::Big };
    let c = &l.cie;
    let asize = if c.version == 4 { c.address_size.unwrap_or(target.address_bytes()) } else { target.address_bytes() };
    // CIE.
    let cie_at = begin(&mut w, l.format);
    match (l.kind, l.format) {
        (FrameKind::DebugFrame, Format::Dwarf32) => w.uint(0xffff_ffff, 4),
        (FrameKind::DebugFrame, Format::Dwarf64) => w.uint(u64::MAX, 8),
        (FrameKind::EhFrame, _) => w.uint(0, 4),
    }
    w.out.push(c.version);
    w.out.extend(&c.augmentation);
    w.out.push(0);
    if c.augmentation == b"eh" {
        w.uint(c.eh_ptr, target.address_bytes() as usize);
    }
    if c.version == 4 {
        w.out.push(asize);
        w.out.push(c.segment_selector_size);
    }
    write_uleb(&mut w.out, c.code_align);
    write_sleb(&mut w.out, c.data_align);
    if c.version == 1 {
        let ra = u8::try_from(c.return_address_register)
            .map_err(|_| LayoutError::ReturnAddressColumn(c.return_address_register))?;
        w.out.push(ra);
    } else {
        write_uleb(&mut w.out, c.return_address_register);
    }
    let has_z = c.augmentation.first() == Some(&b'z');
    if has_z {
        let data = match &c.augmentation_data {
            Some(d) => d.clone(),
            None => {
                // Pointers inside are position dependent: write in place
                // after a 1-byte length guess, then fix the length.
                let mut d = W { out: Vec::new(), big: w.big };
                let mut tmp_layout = l.clone();
                for &ch in &c.augmentation[1..] {
                    match ch {
                        b'R' => d.out.push(c.fde_encoding.unwrap_or(eh_pe::ABSPTR)),
                        b'L' => d.out.push(c.lsda_encoding.unwrap_or(eh_pe::ABSPTR)),
                        b'P' => {
                            let (enc, v) = c.personality.unwrap_or((eh_pe::ABSPTR, 0));
                            d.out.push(enc);
                            // Offset of this field in the section: current
                            // section length + 1 (length byte) + d so far.
                            tmp_layout.address = l.address.wrapping_add(w.out.len() as u64 + 1);
                            let mut dd = W { out: d.out.clone(), big: w.big };
                            write_pointer(&mut dd, &tmp_layout, enc, v, asize, None)?;
                            d.out = dd.out;
                        }
                        b'S' | b'B' | b'G' => {}
                        other => return Err(LayoutError::AugmentationLetter(other as char)),
                    }
                }
                if d.out.len() >= 0x80 {
                    return Err(LayoutError::AugmentationTooLong);
                }
                d.out
            }
        };
        write_uleb(&mut w.out, data.len() as u64);
        w.out.extend(&data);
    }
    w.out.extend(&c.instructions);
    finish(&mut w, cie_at, l.format, l.pad, asize);
    // FDEs.
    let mut offsets = Vec::new();
    let fde_enc = c.fde_encoding.unwrap_or(eh_pe::ABSPTR);
    for f in &l.fdes {
        let at = begin(&mut w, l.format);
        offsets.push(at as u64);
        match (l.kind, l.format) {
            (FrameKind::DebugFrame, Format::Dwarf32) => w.uint(cie_at as u64, 4),
            (FrameKind::DebugFrame, Format::Dwarf64) => w.uint(cie_at as u64, 8),
            (FrameKind::EhFrame, _) => {
                let field = w.out.len() as u64;
                w.uint(field - cie_at as u64, 4)
            }
        }
        if c.segment_selector_size > 0 {
            w.uint(f.segment, c.segment_selector_size as usize);
        }
        write_pointer(&mut w, l, fde_enc, f.pc_begin, asize, None)?;
        write_value(&mut w, fde_enc & eh_pe::FORMAT_MASK, f.pc_range, asize)?;
        if has_z {
            let data = match &f.augmentation_data {
                Some(d) => d.clone(),
                None => match c.lsda_encoding.filter(|_| c.augmentation.contains(&b'L')) {
                    Some(enc) => {
                        let mut tmp_layout = l.clone();
                        tmp_layout.address = l.address.wrapping_add(w.out.len() as u64 + 1);
                        let mut d = W { out: Vec::new(), big: w.big };
                        write_pointer(&mut d, &tmp_layout, enc, f.lsda.unwrap_or(0), asize, Some(f.pc_begin))?;
                        d.out
                    }
                    None => Vec::new(),
                },
            };
            write_uleb(&mut w.out, data.len() as u64);
            w.out.extend(&data);
        }
        w.out.extend(&f.instructions);
        finish(&mut w, at, l.format, l.pad, asize);
    }
    if l.kind == FrameKind::EhFrame {
        w.uint(0, 4);
    }
    Ok((w.out, offsets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_wider_than_eight_bytes_are_zero_extended() {
        // 0x0102 in 9 bytes: little-endian 02 01 then seven zeros;
        // big-endian one zero of extension, then the 8-byte value 00..01 02.
        let mut le = W { out: Vec::new(), big: false };
        le.uint(0x0102, 9);
        assert_eq!(le.out, [2, 1, 0, 0, 0, 0, 0, 0, 0]);
        let mut be = W { out: Vec::new(), big: true };
        be.uint(0x0102, 9);
        assert_eq!(be.out, [0, 0, 0, 0, 0, 0, 0, 1, 2]);
        let mut short = W { out: Vec::new(), big: true };
        short.uint(0x0102, 2);
        assert_eq!(short.out, [1, 2]);
    }
    use dwarfcheck_core::target::presets;

    /// DWARF 5 Appendix D.6, Tables D.4 and D.5: the CIE is 40 bytes with
    /// length 36, the FDE 44 bytes with length 40 (4-byte addresses).
    #[test]
    fn appendix_d6_sizes() {
        let t = presets::x86_64();
        let cie_insns =
            vec![0x0c, 7, 0, 0x08, 0, 0x07, 1, 0x07, 2, 0x07, 3, 0x08, 4, 0x08, 5, 0x08, 6, 0x08, 7, 0x09, 8, 1];
        let fde_insns = vec![
            0x41, 0x0e, 12, 0x41, 0x88, 1, 0x41, 0x86, 2, 0x41, 0x0d, 6, 0x41, 0x84, 3, 0x4b, 0xc4, 0x41, 0xc6, 0x0d,
            7, 0x41, 0xc8, 0x41, 0x0e, 0,
        ];
        let l = SectionLayout {
            kind: FrameKind::DebugFrame,
            format: Format::Dwarf32,
            address: 0,
            text_base: None,
            data_base: None,
            pad: true,
            cie: CieLayout {
                version: 4,
                augmentation: vec![],
                address_size: Some(4),
                segment_selector_size: 0,
                code_align: 4,
                data_align: -4,
                return_address_register: 8,
                eh_ptr: 0,
                fde_encoding: None,
                lsda_encoding: None,
                personality: None,
                augmentation_data: None,
                instructions: cie_insns,
            },
            fdes: vec![FdeLayout { pc_begin: 0x1000, pc_range: 84, instructions: fde_insns, ..Default::default() }],
        };
        let (b, offs) = build(&l, &t).unwrap();
        assert_eq!(offs, vec![40]);
        assert_eq!(&b[0..4], &[36, 0, 0, 0]);
        assert_eq!(&b[4..8], &[0xff; 4]);
        assert_eq!(&b[8..12], &[4, 0, 4, 0]); // version, augmentation, address_size, segment size
        assert_eq!(&b[40..44], &[40, 0, 0, 0]);
        assert_eq!(b.len(), 84);
        // fde+40: DW_CFA_def_cfa_offset(0) ends at fde+42; fde+42, fde+43: DW_CFA_nop padding.
        assert_eq!(&b[79..84], &[0x41, 0x0e, 0, 0, 0]);
    }
}
