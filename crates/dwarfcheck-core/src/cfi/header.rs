//! CIE and FDE header decoding, entry iteration and `DW_EH_PE_*` pointers.
//!
//! Sources: DWARF 5 §6.4.1 (CIE/FDE fields), §7.2.2/§7.4 (initial length,
//! 32/64-bit formats), §7.24 (CIE id, version); LSB "Exception Frames" and
//! the x86-64 psABI "Stack Unwind Algorithm" for `.eh_frame` (CIE id 0,
//! relative CIE pointers, zero terminator, augmentation letters, pointer
//! encodings). Every error names its rule (`specs/rules/cfi-sections.yaml`).

use super::{CfiSection, FrameKind};
use crate::encoding::eh_pe;
use crate::encoding::leb128::{read_sleb, read_uleb, LebError};
use crate::encoding::Format;
use crate::outcome::CfiOutcome;
use crate::outcome::Failure;
use crate::rules::{id, RuleId};
use crate::target::{Arch, Endian};
use std::ops::Range;

/// Whether an error makes the input ill-formed or is an evaluation error
/// (missing context such as an unknown `textrel` base).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bytes break a rule of kind `ill-formed` (or an `unspecified`
    /// rule whose decision is "ill-formed").
    IllFormed,
    /// The bytes are fine but cannot be resolved with the given context.
    EvalError,
}

/// Why a header (or a pointer in an instruction) could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CfiError {
    /// Ill-formed or evaluation error.
    pub kind: ErrorKind,
    /// The rule broken.
    pub rule: RuleId,
    /// Byte offset in the section of the field at fault.
    pub at: u64,
    /// A short human explanation (not compared).
    pub detail: String,
}

impl CfiError {
    fn ill(rule: RuleId, at: u64, detail: impl Into<String>) -> Self {
        CfiError { kind: ErrorKind::IllFormed, rule, at, detail: detail.into() }
    }
    fn eval(rule: RuleId, at: u64, detail: impl Into<String>) -> Self {
        CfiError { kind: ErrorKind::EvalError, rule, at, detail: detail.into() }
    }

    /// The matching `CfiOutcome::IllFormed` / `EvalError`.
    pub fn to_outcome(&self) -> CfiOutcome {
        match self.kind {
            ErrorKind::IllFormed => {
                CfiOutcome::Failed(Failure::IllFormed { rule: self.rule.clone(), at: Some(self.at) })
            }
            ErrorKind::EvalError => {
                CfiOutcome::Failed(Failure::EvalError { rule: self.rule.clone(), at: Some(self.at) })
            }
        }
    }
}

impl std::fmt::Display for CfiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] at section offset {:#x}: {}", self.rule, self.at, self.detail)
    }
}

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A Common Information Entry.
    Cie,
    /// A Frame Description Entry; `cie_offset` is where its CIE pointer
    /// leads (section offset), not yet checked to be a CIE.
    Fde {
        /// Section offset of the CIE the pointer denotes.
        cie_offset: u64,
    },
    /// The `.eh_frame` zero terminator (rule `cfi.eh-frame.zero-terminator`).
    Terminator,
}

/// One entry found while walking a section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Section offset of the entry's length field.
    pub offset: u64,
    /// 32- or 64-bit format (from the initial length).
    pub format: Format,
    /// CIE, FDE or terminator.
    pub kind: EntryKind,
    /// Section offset just after the CIE id / CIE pointer field.
    pub body: u64,
    /// Section offset one past the entry's last byte.
    pub end: u64,
}

/// A decoded CIE header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cie {
    /// Section offset of the CIE's length field.
    pub offset: u64,
    /// 32- or 64-bit format.
    pub format: Format,
    /// CIE version (1, 3 or 4; rule `cfi.cie.version`).
    pub version: u8,
    /// The augmentation string (lossy UTF-8).
    pub augmentation: String,
    /// Size of a target address in **bytes** (version 4 field, else the
    /// target's; rule `cfi.cie.address-size`).
    pub address_size: u8,
    /// Size of a segment selector in **bytes** (version 4 field, else 0).
    pub segment_selector_size: u8,
    /// Code alignment factor (multiplies advance deltas).
    pub code_align: u64,
    /// Data alignment factor (multiplies factored offsets).
    pub data_align: i64,
    /// Return address column (`cfi.cie.return-address-register`).
    pub return_address_register: u64,
    /// Pointer encoding of FDE addresses (`R`; `DW_EH_PE_absptr` without it).
    pub fde_encoding: u8,
    /// LSDA pointer encoding (`L`), if present and not `DW_EH_PE_omit`.
    pub lsda_encoding: Option<u8>,
    /// Personality routine pointer (`P`), before any indirection.
    pub personality: Option<u64>,
    /// `S`: signal frame.
    pub signal_frame: bool,
    /// Whether the augmentation starts with `z`.
    pub has_z: bool,
    /// Section offsets of the initial instructions (through the padding).
    pub instructions: Range<u64>,
}

/// A decoded FDE header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fde {
    /// Section offset of the FDE's length field.
    pub offset: u64,
    /// 32- or 64-bit format.
    pub format: Format,
    /// Section offset of its CIE.
    pub cie_offset: u64,
    /// Segment selector of the initial location (0 without one).
    pub segment: u64,
    /// First address covered (`initial_location`, pointer resolved).
    pub pc_begin: u64,
    /// Number of bytes covered (`address_range`).
    pub pc_range: u64,
    /// LSDA pointer (`L` augmentation), before any indirection.
    pub lsda: Option<u64>,
    /// Section offsets of the instructions (through the padding).
    pub instructions: Range<u64>,
}

/// A byte reader over `[pos, limit)` of a section; every failure is
/// reported with the rule the caller chose for "ran past the end".
struct Reader<'a> {
    bytes: &'a [u8],
    pos: u64,
    limit: u64,
    big: bool,
    overrun: RuleId,
}

impl<'a> Reader<'a> {
    fn new(sec: &'a CfiSection, pos: u64, limit: u64, overrun: RuleId) -> Self {
        let limit = limit.min(sec.bytes.len() as u64);
        Reader { bytes: &sec.bytes, pos, limit, big: sec.target.endian == Endian::Big, overrun }
    }

    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], CfiError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.limit);
        match end {
            Some(e) => {
                let s = &self.bytes[self.pos as usize..e as usize];
                self.pos = e;
                Ok(s)
            }
            None => Err(CfiError::ill(self.overrun.clone(), self.pos, format!("{what}: {n} bytes do not fit"))),
        }
    }

    fn uint(&mut self, n: u64, what: &str) -> Result<u64, CfiError> {
        let s = self.take(n, what)?;
        let mut v: u64 = 0;
        if self.big {
            for &b in s {
                v = (v << 8) | u64::from(b);
            }
        } else {
            for &b in s.iter().rev() {
                v = (v << 8) | u64::from(b);
            }
        }
        Ok(v)
    }

    fn u8(&mut self, what: &str) -> Result<u8, CfiError> {
        Ok(self.take(1, what)?[0])
    }

    fn leb_err(&self, e: LebError, what: &str, overflow: RuleId) -> CfiError {
        match e {
            LebError::Truncated => CfiError::ill(self.overrun.clone(), self.pos, format!("{what}: truncated LEB128")),
            LebError::Overflow => CfiError::ill(overflow, self.pos, format!("{what}: LEB128 does not fit 64 bits")),
        }
    }

    fn window(&self) -> &'a [u8] {
        self.bytes.get(self.pos as usize..self.limit as usize).unwrap_or_default()
    }

    fn uleb(&mut self, what: &str, overflow: RuleId) -> Result<u64, CfiError> {
        let (v, n) = read_uleb(self.window()).map_err(|e| self.leb_err(e, what, overflow))?;
        self.pos += n as u64;
        Ok(v)
    }

    fn sleb(&mut self, what: &str, overflow: RuleId) -> Result<i64, CfiError> {
        let (v, n) = read_sleb(self.window()).map_err(|e| self.leb_err(e, what, overflow))?;
        self.pos += n as u64;
        Ok(v)
    }

    fn cstr(&mut self, what: &str) -> Result<&'a [u8], CfiError> {
        let w = self.window();
        match w.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += n as u64 + 1;
                Ok(&w[..n])
            }
            None => Err(CfiError::ill(self.overrun.clone(), self.pos, format!("{what}: no terminating NUL"))),
        }
    }
}

/// Masks `v` to an address of `size` bytes.
pub fn mask_address(v: u64, size: u8) -> u64 {
    if size >= 8 {
        v
    } else {
        v & ((1u64 << (u32::from(size) * 8)) - 1)
    }
}

/// Whether `enc` is a pointer encoding LSB lists (`DW_EH_PE_omit` excluded).
/// Rule `cfi.eh-pe.invalid`.
pub fn encoding_is_valid(enc: u8) -> bool {
    let format_ok = matches!(
        enc & eh_pe::FORMAT_MASK,
        eh_pe::ABSPTR
            | eh_pe::ULEB128
            | eh_pe::UDATA2
            | eh_pe::UDATA4
            | eh_pe::UDATA8
            | eh_pe::SLEB128
            | eh_pe::SDATA2
            | eh_pe::SDATA4
            | eh_pe::SDATA8
    );
    format_ok && (enc & eh_pe::APPLICATION_MASK) <= eh_pe::ALIGNED
}

/// A pointer decoded from a `DW_EH_PE_*` encoded field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pointer {
    /// The address after applying the application (pcrel, ...), masked to
    /// the address size. With `indirect`, the address *holding* the pointer.
    pub value: u64,
    /// Whether `DW_EH_PE_indirect` was set (one more load needed).
    pub indirect: bool,
    /// Section offset just past the field.
    pub next: u64,
}

impl CfiSection {
    /// Reads a `DW_EH_PE_*` encoded pointer at section offset `pos`, not
    /// past `limit`.
    ///
    /// `address_size` (bytes) sizes `absptr`; `func_base` is the function
    /// start for `funcrel` (`None` where there is none: FDE initial
    /// location). `overrun` is the rule reported if the field does not fit
    /// (header or instruction context).
    ///
    /// Errors: `cfi.eh-pe.invalid` (bad format/application, `omit`, funcrel
    /// without function), `cfi.eh-pe.base-unknown` (textrel/datarel without
    /// base, an evaluation error), `overrun`, `cfi.entry.leb128-overflow`.
    /// Rules `cfi.eh-pe.format`, `.pcrel`, `.textrel`, `.datarel`,
    /// `.funcrel`, `.aligned`, `.indirect`.
    pub fn read_pointer(
        &self,
        enc: u8,
        pos: u64,
        limit: u64,
        address_size: u8,
        func_base: Option<u64>,
        overrun: RuleId,
    ) -> Result<Pointer, CfiError> {
        if enc == eh_pe::OMIT || !encoding_is_valid(enc) {
            return Err(CfiError::ill(id::CFI_EH_PE_INVALID, pos, format!("pointer encoding {enc:#04x}")));
        }
        let app = enc & eh_pe::APPLICATION_MASK;
        let mut r = Reader::new(self, pos, limit, overrun);
        if app == eh_pe::ALIGNED {
            let a = u64::from(address_size.max(1));
            let addr = self.address.wrapping_add(pos);
            let pad = (a - addr % a) % a;
            r.take(pad, "aligned pointer padding")?;
        }
        let field_addr = self.address.wrapping_add(r.pos);
        let raw = read_value(&mut r, enc & eh_pe::FORMAT_MASK, address_size)?;
        let base = match app {
            eh_pe::ABSPTR | eh_pe::ALIGNED => 0,
            eh_pe::PCREL => field_addr,
            eh_pe::TEXTREL => self.text_base.ok_or_else(|| {
                CfiError::eval(id::CFI_EH_PE_BASE_UNKNOWN, pos, "textrel pointer but no text base is known")
            })?,
            eh_pe::DATAREL => self.data_base.ok_or_else(|| {
                CfiError::eval(id::CFI_EH_PE_BASE_UNKNOWN, pos, "datarel pointer but no data base is known")
            })?,
            _ => func_base.ok_or_else(|| {
                CfiError::ill(id::CFI_EH_PE_INVALID, pos, "funcrel pointer where there is no function start")
            })?,
        };
        Ok(Pointer {
            value: mask_address(base.wrapping_add(raw), address_size),
            indirect: enc & eh_pe::INDIRECT != 0,
            next: r.pos,
        })
    }

    /// Reads the operand of a `DW_CFA_set_loc` at section offset `pos`
    /// (instructions end at `end`): a segment selector when the CIE has
    /// one, then an address in the CIE's FDE pointer encoding (`funcrel`
    /// relative to `pc_begin`). Rules `cfi.set-loc`, `cfi.cie.segment-selector`.
    /// Returns the address and the offset past the operand.
    ///
    /// Errors (with `at` = the field's offset; callers report the opcode's):
    /// `cfi.insn.truncated`, `cfi.insn.leb128-overflow`, `cfi.eh-pe.base-unknown`,
    /// `cfi.eh-pe.indirect-unreadable` (evaluation errors).
    pub fn read_set_loc(&self, cie: &Cie, pc_begin: u64, pos: u64, end: u64) -> Result<(u64, u64), CfiError> {
        let mut r = Reader::new(self, pos, end, id::CFI_INSN_TRUNCATED);
        if cie.segment_selector_size > 0 {
            r.uint(u64::from(cie.segment_selector_size), "segment selector")?;
        }
        let p = self
            .read_pointer(cie.fde_encoding, r.pos, end, cie.address_size, Some(pc_begin), id::CFI_INSN_TRUNCATED)
            .map_err(|mut e| {
                if e.rule == id::CFI_ENTRY_LEB128_OVERFLOW {
                    e.rule = id::CFI_INSN_LEB128_OVERFLOW;
                }
                e
            })?;
        if p.indirect {
            return Err(CfiError::eval(
                id::CFI_EH_PE_INDIRECT_UNREADABLE,
                pos,
                "indirect DW_CFA_set_loc operand: the memory it points at is not available",
            ));
        }
        Ok((p.value, p.next))
    }

    /// Walks the entries of the section from offset 0 (rule
    /// `cfi.entry.initial-length`). The iterator yields each entry, stops
    /// after the `.eh_frame` terminator, and yields one error and stops
    /// when an entry cannot be delimited.
    pub fn entries(&self) -> Entries<'_> {
        Entries { sec: self, pos: 0, done: false }
    }

    /// Section offsets of every FDE, in section order (used by ELF
    /// extraction). Errors as [`CfiSection::entries`].
    pub fn fde_offsets(&self) -> impl Iterator<Item = Result<u64, CfiError>> + '_ {
        self.entries().filter_map(|e| match e {
            Ok(Entry { kind: EntryKind::Fde { .. }, offset, .. }) => Some(Ok(offset)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }

    /// Delimits the entry at `offset`: initial length, format, and the
    /// CIE id / CIE pointer field (rules `cfi.entry.*`,
    /// `cfi.debug-frame.cie-id`, `cfi.eh-frame.cie-id`,
    /// `cfi.eh-frame.zero-terminator`).
    pub fn entry_at(&self, offset: u64) -> Result<Entry, CfiError> {
        let len = self.bytes.len() as u64;
        let mut r = Reader::new(self, offset, len, id::CFI_ENTRY_PAST_SECTION_END);
        let first = r.uint(4, "initial length")?;
        let (format, length) = match first {
            0xffff_ffff => (Format::Dwarf64, r.uint(8, "64-bit length")?),
            0xffff_fff0..=0xffff_fffe => {
                return Err(CfiError::ill(id::CFI_ENTRY_RESERVED_LENGTH, offset, format!("length {first:#x}")))
            }
            l => (Format::Dwarf32, l),
        };
        let start = r.pos;
        if length == 0 && self.kind == FrameKind::EhFrame {
            return Ok(Entry { offset, format, kind: EntryKind::Terminator, body: start, end: start });
        }
        let end = start.checked_add(length).filter(|&e| e <= len).ok_or_else(|| {
            CfiError::ill(id::CFI_ENTRY_PAST_SECTION_END, offset, format!("length {length:#x} runs past the section"))
        })?;
        let mut r = Reader::new(self, start, end, id::CFI_ENTRY_HEADER_OVERRUN);
        let kind = match self.kind {
            FrameKind::DebugFrame => {
                let n = format.offset_bytes() as u64;
                let v = r.uint(n, "CIE id")?;
                let all_ones = if n == 4 { 0xffff_ffff } else { u64::MAX };
                if v == all_ones {
                    EntryKind::Cie
                } else {
                    EntryKind::Fde { cie_offset: v }
                }
            }
            FrameKind::EhFrame => {
                let field = r.pos;
                let v = r.uint(4, "CIE id")?;
                if v == 0 {
                    EntryKind::Cie
                } else {
                    // Counted backwards from the pointer field; an
                    // underflow is left as an impossible offset.
                    EntryKind::Fde { cie_offset: field.checked_sub(v).unwrap_or(u64::MAX) }
                }
            }
        };
        Ok(Entry { offset, format, kind, body: r.pos, end })
    }

    /// Decodes the CIE at `offset` (DWARF 5 §6.4.1 CIE fields; LSB/psABI
    /// augmentations). Errors name rules in `cfi-sections.yaml`; asking
    /// for a CIE where there is an FDE or terminator reports
    /// `cfi.fde.cie-pointer-invalid` at `offset`.
    pub fn parse_cie(&self, offset: u64) -> Result<Cie, CfiError> {
        let e = self.entry_at(offset)?;
        if e.kind != EntryKind::Cie {
            return Err(CfiError::ill(id::CFI_FDE_CIE_POINTER_INVALID, offset, "not a CIE"));
        }
        let ovf = id::CFI_ENTRY_LEB128_OVERFLOW;
        let mut r = Reader::new(self, e.body, e.end, id::CFI_ENTRY_HEADER_OVERRUN);
        let vpos = r.pos;
        let version = r.u8("version")?;
        let ok = match self.kind {
            FrameKind::DebugFrame => matches!(version, 1 | 3 | 4),
            FrameKind::EhFrame => matches!(version, 1 | 3),
        };
        if !ok {
            return Err(CfiError::ill(id::CFI_CIE_VERSION, vpos, format!("CIE version {version}")));
        }
        let apos = r.pos;
        let aug = r.cstr("augmentation")?.to_vec();
        let augmentation = String::from_utf8_lossy(&aug).into_owned();
        let arch = self.target.arch;
        // Classify the augmentation string.
        let has_z = aug.first() == Some(&b'z');
        if !has_z && aug.contains(&b'z') {
            return Err(CfiError::ill(
                id::CFI_AUGMENTATION_Z_NOT_FIRST,
                apos,
                format!("augmentation {augmentation:?}"),
            ));
        }
        let is_eh = aug == b"eh";
        let known_plain = aug.is_empty()
            || is_eh
            || is_bracketed(&aug)
            || (arch == Arch::Aarch64 && aug.iter().all(|c| matches!(c, b'B' | b'G')));
        if !has_z && !known_plain {
            return Err(CfiError::ill(
                id::CFI_AUGMENTATION_UNKNOWN_WITHOUT_Z,
                apos,
                format!("augmentation {augmentation:?} is not understood and has no 'z' length"),
            ));
        }
        let target_asize = self.target.address_bytes();
        if is_eh {
            r.take(u64::from(target_asize), "eh augmentation pointer")?;
        }
        let (address_size, segment_selector_size) = if version == 4 {
            let p = r.pos;
            let a = r.u8("address_size")?;
            let s = r.u8("segment_selector_size")?;
            if !matches!(a, 1 | 2 | 4 | 8) || s > 8 {
                return Err(CfiError::ill(
                    id::CFI_CIE_ADDRESS_SIZE_INVALID,
                    p,
                    format!("address_size {a}, segment_selector_size {s}"),
                ));
            }
            (a, s)
        } else {
            (target_asize, 0)
        };
        let code_align = r.uleb("code_alignment_factor", ovf.clone())?;
        let data_align = r.sleb("data_alignment_factor", ovf.clone())?;
        let return_address_register = if version == 1 {
            u64::from(r.u8("return_address_register")?)
        } else {
            r.uleb("return_address_register", ovf.clone())?
        };
        let mut cie = Cie {
            offset,
            format: e.format,
            version,
            augmentation,
            address_size,
            segment_selector_size,
            code_align,
            data_align,
            return_address_register,
            fde_encoding: eh_pe::ABSPTR,
            lsda_encoding: None,
            personality: None,
            signal_frame: false,
            has_z,
            instructions: 0..0,
        };
        if has_z {
            let len = r.uleb("augmentation data length", ovf)?;
            let dstart = r.pos;
            r.take(len, "augmentation data")?;
            let dend = r.pos;
            let mut d = Reader::new(self, dstart, dend, id::CFI_AUGMENTATION_DATA_OVERRUN);
            for &c in &aug[1..] {
                match c {
                    b'R' => {
                        let p = d.pos;
                        let enc = d.u8("R encoding")?;
                        if enc == eh_pe::OMIT || !encoding_is_valid(enc) {
                            return Err(CfiError::ill(id::CFI_EH_PE_INVALID, p, format!("FDE encoding {enc:#04x}")));
                        }
                        cie.fde_encoding = enc;
                    }
                    b'L' => {
                        let p = d.pos;
                        let enc = d.u8("L encoding")?;
                        if enc != eh_pe::OMIT && !encoding_is_valid(enc) {
                            return Err(CfiError::ill(id::CFI_EH_PE_INVALID, p, format!("LSDA encoding {enc:#04x}")));
                        }
                        cie.lsda_encoding = (enc != eh_pe::OMIT).then_some(enc);
                    }
                    b'P' => {
                        let enc = d.u8("P encoding")?;
                        if enc != eh_pe::OMIT {
                            let ptr = self.read_pointer(
                                enc,
                                d.pos,
                                dend,
                                address_size,
                                None,
                                id::CFI_AUGMENTATION_DATA_OVERRUN,
                            )?;
                            d.pos = ptr.next;
                            cie.personality = Some(ptr.value);
                        }
                    }
                    b'S' => cie.signal_frame = true,
                    b'B' | b'G' if arch == Arch::Aarch64 => {}
                    // An unknown letter: stop interpreting; 'z' lets us skip.
                    _ => break,
                }
            }
        }
        cie.instructions = r.pos..e.end;
        Ok(cie)
    }

    /// Decodes the FDE at `offset` and its CIE. Errors: anything
    /// [`CfiSection::parse_cie`] reports for the CIE, and
    /// `cfi.fde.cie-pointer-invalid`, `cfi.eh-pe.*`,
    /// `cfi.fde.range-overflow`, `cfi.entry.*`,
    /// `cfi.augmentation.data-overrun`. Asking for an FDE where there is a
    /// CIE or terminator reports `cfi.fde.cie-pointer-invalid` at `offset`.
    pub fn parse_fde(&self, offset: u64) -> Result<(Fde, Cie), CfiError> {
        let mut cache = None;
        let fde = self.parse_fde_using(offset, &mut cache)?;
        Ok((fde, cache.expect("parse_fde_using fills the cache on success")))
    }

    /// As [`CfiSection::parse_fde`], reusing `cache` when it holds the
    /// FDE's CIE (same offset) and leaving that CIE in it on success. For
    /// walking a whole section without re-decoding shared CIEs.
    pub fn parse_fde_using(&self, offset: u64, cache: &mut Option<Cie>) -> Result<Fde, CfiError> {
        let e = self.entry_at(offset)?;
        self.parse_fde_entry(&e, cache)
    }

    /// As [`CfiSection::parse_fde_using`], for an entry already delimited
    /// by [`CfiSection::entries`] (saves reading its length twice).
    pub fn parse_fde_entry(&self, e: &Entry, cache: &mut Option<Cie>) -> Result<Fde, CfiError> {
        let offset = e.offset;
        let EntryKind::Fde { cie_offset } = e.kind else {
            return Err(CfiError::ill(id::CFI_FDE_CIE_POINTER_INVALID, offset, "not an FDE"));
        };
        let ptr_field = e.body - if self.kind == FrameKind::EhFrame { 4 } else { e.format.offset_bytes() as u64 };
        let bad_ptr = || {
            CfiError::ill(
                id::CFI_FDE_CIE_POINTER_INVALID,
                ptr_field,
                format!("CIE pointer leads to {cie_offset:#x}, which is not a CIE"),
            )
        };
        if cache.as_ref().is_none_or(|c| c.offset != cie_offset) {
            *cache = None;
            if cie_offset >= self.bytes.len() as u64 {
                return Err(bad_ptr());
            }
            match self.entry_at(cie_offset) {
                Ok(Entry { kind: EntryKind::Cie, .. }) => {}
                Ok(_) => return Err(bad_ptr()),
                Err(_) => return Err(bad_ptr()),
            }
            *cache = Some(self.parse_cie(cie_offset)?);
        }
        let cie = cache.as_ref().expect("filled above");
        let mut r = Reader::new(self, e.body, e.end, id::CFI_ENTRY_HEADER_OVERRUN);
        let segment = if cie.segment_selector_size > 0 {
            r.uint(u64::from(cie.segment_selector_size), "segment selector")?
        } else {
            0
        };
        let pbpos = r.pos;
        let pb =
            self.read_pointer(cie.fde_encoding, r.pos, e.end, cie.address_size, None, id::CFI_ENTRY_HEADER_OVERRUN)?;
        if pb.indirect {
            return Err(CfiError::eval(
                id::CFI_EH_PE_INDIRECT_UNREADABLE,
                pbpos,
                "indirect initial location: the memory it points at is not available",
            ));
        }
        r.pos = pb.next;
        let pc_range = mask_address(
            read_value(&mut r, cie.fde_encoding & eh_pe::FORMAT_MASK, cie.address_size)?,
            cie.address_size,
        );
        let max = mask_address(u64::MAX, cie.address_size);
        if pc_range > max - pb.value {
            return Err(CfiError::ill(
                id::CFI_FDE_RANGE_OVERFLOW,
                pbpos,
                format!("{:#x} + {pc_range:#x} exceeds the address size", pb.value),
            ));
        }
        let mut lsda = None;
        if cie.has_z {
            let len = r.uleb("augmentation data length", id::CFI_ENTRY_LEB128_OVERFLOW)?;
            let dstart = r.pos;
            r.take(len, "augmentation data")?;
            if let Some(enc) = cie.lsda_encoding {
                let p = self.read_pointer(
                    enc,
                    dstart,
                    r.pos,
                    cie.address_size,
                    Some(pb.value),
                    id::CFI_AUGMENTATION_DATA_OVERRUN,
                )?;
                lsda = Some(p.value);
            }
        }
        let fde = Fde {
            offset,
            format: e.format,
            cie_offset,
            segment,
            pc_begin: pb.value,
            pc_range,
            lsda,
            instructions: r.pos..e.end,
        };
        Ok(fde)
    }
}

/// Reads a value of pointer-encoding format `format` (low nibble).
fn read_value(r: &mut Reader<'_>, format: u8, address_size: u8) -> Result<u64, CfiError> {
    let ovf = id::CFI_ENTRY_LEB128_OVERFLOW;
    let sext = |v: u64, bits: u32| ((v << (64 - bits)) as i64 >> (64 - bits)) as u64;
    Ok(match format {
        eh_pe::ABSPTR => r.uint(u64::from(address_size), "address")?,
        eh_pe::ULEB128 => r.uleb("uleb128 pointer", ovf)?,
        eh_pe::UDATA2 => r.uint(2, "udata2 pointer")?,
        eh_pe::UDATA4 => r.uint(4, "udata4 pointer")?,
        eh_pe::UDATA8 => r.uint(8, "udata8 pointer")?,
        eh_pe::SLEB128 => r.sleb("sleb128 pointer", ovf)? as u64,
        eh_pe::SDATA2 => sext(r.uint(2, "sdata2 pointer")?, 16),
        eh_pe::SDATA4 => sext(r.uint(4, "sdata4 pointer")?, 32),
        eh_pe::SDATA8 => r.uint(8, "sdata8 pointer")?,
        _ => return Err(CfiError::ill(id::CFI_EH_PE_INVALID, r.pos, format!("pointer format {format:#x}"))),
    })
}

/// Whether `aug` is one or more hetero-2020 `[vendor:vX.Y(:options)]`
/// groups (rule `cfi.augmentation.vendor-bracketed`).
fn is_bracketed(aug: &[u8]) -> bool {
    let mut rest = aug;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        if rest[0] != b'[' {
            return false;
        }
        let Some(close) = rest.iter().position(|&c| c == b']') else { return false };
        let inner = &rest[1..close];
        let mut parts = inner.splitn(3, |&c| c == b':');
        let vendor = parts.next().unwrap_or_default();
        let ver = parts.next().unwrap_or_default();
        let ver_ok = ver.first() == Some(&b'v') && {
            let v = &ver[1..];
            let mut it = v.splitn(2, |&c| c == b'.');
            let (a, b) = (it.next().unwrap_or_default(), it.next().unwrap_or_default());
            !a.is_empty() && !b.is_empty() && a.iter().all(u8::is_ascii_digit) && b.iter().all(u8::is_ascii_digit)
        };
        if vendor.is_empty() || !ver_ok {
            return false;
        }
        rest = &rest[close + 1..];
    }
    true
}

/// Iterator over a section's entries; see [`CfiSection::entries`].
pub struct Entries<'a> {
    sec: &'a CfiSection,
    pos: u64,
    done: bool,
}

impl Iterator for Entries<'_> {
    type Item = Result<Entry, CfiError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.sec.bytes.len() as u64 {
            return None;
        }
        match self.sec.entry_at(self.pos) {
            Ok(e) => {
                if e.kind == EntryKind::Terminator {
                    self.done = true;
                }
                self.pos = e.end;
                Some(Ok(e))
            }
            Err(err) => {
                self.done = true;
                Some(Err(err))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::presets;
    use std::sync::Arc;

    fn sec(kind: FrameKind, bytes: Vec<u8>, address: u64) -> CfiSection {
        CfiSection::new(kind, bytes, address, Arc::new(presets::x86_64()))
    }

    /// A GCC-style .eh_frame CIE decoded field by field (hand-encoded).
    #[test]
    fn eh_frame_cie_fields() {
        // len 0x1c, id 0, v1, "zPLR", caf 1, daf -8 (0x78), ra 16,
        // aug len 7: P = 0x9b + sdata4 0x00001000, L = 0x1b, R = 0x1b; def_cfa r7 8; offset r16 1.
        let b = vec![
            0x1c, 0, 0, 0, 0, 0, 0, 0, 1, b'z', b'P', b'L', b'R', 0, 1, 0x78, 0x10, 7, 0x9b, 0, 0x10, 0, 0, 0x1b, 0x1b,
            0x0c, 7, 8, 0x90, 1, 0, 0,
        ];
        let s = sec(FrameKind::EhFrame, b, 0x2000);
        let c = s.parse_cie(0).unwrap();
        assert_eq!((c.version, c.code_align, c.data_align, c.return_address_register), (1, 1, -8, 16));
        assert_eq!(c.augmentation, "zPLR");
        assert_eq!((c.fde_encoding, c.lsda_encoding), (0x1b, Some(0x1b)));
        // Personality field at offset 19, address 0x2013; + 0x1000.
        assert_eq!(c.personality, Some(0x3013));
        assert_eq!(c.instructions, 25..32);
        assert_eq!(c.address_size, 8);
    }

    /// Pointer applications on hand-computed values.
    #[test]
    fn pointer_applications() {
        let mut s =
            sec(FrameKind::EhFrame, vec![0xf0, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0], 0x2000);
        s.text_base = Some(0x400);
        s.data_base = Some(0x800);
        let rd = |enc, pos, f| s.read_pointer(enc, pos, 16, 8, f, id::CFI_INSN_TRUNCATED);
        // sdata4 -16 at 0x2000: pcrel 0x1ff0, textrel 0x3f0, datarel 0x7f0, funcrel from 0x100 = 0xf0.
        assert_eq!(rd(0x1b, 0, None).unwrap().value, 0x1ff0);
        assert_eq!(rd(0x2b, 0, None).unwrap().value, 0x3f0);
        assert_eq!(rd(0x3b, 0, None).unwrap().value, 0x7f0);
        assert_eq!(rd(0x4b, 0, Some(0x100)).unwrap().value, 0xf0);
        // udata4 0xfffffff0 is not sign-extended.
        assert_eq!(rd(0x03, 0, None).unwrap().value, 0xffff_fff0);
        // aligned from offset 1 (0x2001) skips to 8 (0x2008) and reads 8 bytes: 0x10.
        let p = rd(0x50, 1, None).unwrap();
        assert_eq!((p.value, p.next), (0x10, 16));
        // indirect is reported, not followed.
        assert!(rd(0x9b, 0, None).unwrap().indirect);
        // Errors.
        assert_eq!(rd(0x4b, 0, None).unwrap_err().rule, id::CFI_EH_PE_INVALID);
        assert_eq!(rd(0x0d, 0, None).unwrap_err().rule, id::CFI_EH_PE_INVALID);
        assert_eq!(rd(0xff, 0, None).unwrap_err().rule, id::CFI_EH_PE_INVALID);
        assert_eq!(rd(0x04, 12, None).unwrap_err().rule, id::CFI_INSN_TRUNCATED);
        s.text_base = None;
        let e = s.read_pointer(0x2b, 0, 16, 8, None, id::CFI_INSN_TRUNCATED).unwrap_err();
        assert_eq!((e.kind, e.rule), (ErrorKind::EvalError, id::CFI_EH_PE_BASE_UNKNOWN));
    }

    #[test]
    fn bracketed_augmentations() {
        assert!(is_bracketed(b"[llvm:v0.0]"));
        assert!(is_bracketed(b"[abc:v0.0][def:v1.2:feature-a=on,feature-b=3]"));
        assert!(!is_bracketed(b"[llvm]"));
        assert!(!is_bracketed(b"[llvm:v1]"));
        assert!(!is_bracketed(b"[llvm:v1.0"));
        assert!(!is_bracketed(b"x[llvm:v1.0]"));
    }

    #[test]
    fn never_panics_on_garbage() {
        // Every offset of a few awkward sections, both kinds.
        let inputs: [&[u8]; 4] = [
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            &[8, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff],
            &[4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0],
            &[0x0c, 0, 0, 0, 0, 0, 0, 0, 1, b'z', b'P', 0, 0, 0, 0],
        ];
        for b in inputs {
            for kind in [FrameKind::DebugFrame, FrameKind::EhFrame] {
                let s = sec(kind, b.to_vec(), u64::MAX - 3);
                for off in 0..b.len() as u64 + 2 {
                    let _ = s.parse_fde(off);
                    let _ = s.parse_cie(off);
                }
                let _ = s.fde_offsets().count();
            }
        }
    }
}
