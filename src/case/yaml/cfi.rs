//! The `cfi:` part of a YAML case ([`CfiSpec`]) and the CFI expectation
//! ([`CfiExpect`]) of its `expect:` part (docs/architecture.md §6, docs/case-format.md). The case loader (`case::yaml`) calls [`CfiSpec::build`] and
//! [`CfiExpect::to_outcome`].
//!
//! ```yaml
//! cfi:
//!   section: eh_frame            # debug_frame (default) | eh_frame
//!   address: 0x2000              # section address (pcrel/aligned), default 0
//!   text_base: 0x1000            # optional, for textrel
//!   data_base: 0x4000            # optional, for datarel
//!   format: dwarf32              # dwarf32 (default) | dwarf64
//!   pad: true                    # pad entries to the address size (default)
//!   cie:
//!     version: 1                 # default 1 for eh_frame, 4 for debug_frame
//!     augmentation: zR           # default ""
//!     address_size: 8            # version 4 only; default: the target's
//!     segment_size: 0            # version 4 only
//!     code_align: 1              # default 1
//!     data_align: -8             # default -8
//!     ra: rip                    # register name or number; default: the target's
//!     fde_encoding: "pcrel|sdata4"   # R (DW_EH_PE_ names with or without prefix, | joined, or a number)
//!     lsda_encoding: udata4      # L
//!     personality: { encoding: absptr, value: 0x5000 }   # P
//!     augmentation_data: "1b"    # raw override (unknown letters)
//!     instructions: "DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8"
//!     # or instructions_bytes: "0c 07 08 90 01"
//!   fde:
//!     pc_begin: 0x1000
//!     pc_range: 0x40
//!     lsda: 0x6000               # with L
//!     instructions: "DW_CFA_advance_loc: 1; DW_CFA_def_cfa_offset: +16"
//!   # or, instead of cie/fde:
//!   # section_bytes: "14 00 00 00 ..."
//!   # fde_offset: 0x18
//! ```
//!
//! Expectations (`expect:`), exactly one of:
//! ```yaml
//! rows:
//!   - { at: 0x1000, cfa: "reg7+8", regs: { reg16: "[CFA-8]" } }
//!   - { at: 0x1001, cfa: "rsp+16", regs: { rbp: "[CFA-16]", rip: "[CFA-8]" } }
//! end: 0x1040                    # end of the last row (or `end:` on the row)
//! ill_formed: cfi.restore-state.empty-stack   # optionally with  at: 0x2a  (section offset)
//! eval_error: cfi.eh-pe.base-unknown
//! budget: stack                  # steps | stack | size
//! ```
//! CFA: `regN+K` / `name-K` (+ ` in addrspaceN`), or `{hex}` for a CFA
//! expression. Register rules: `undefined`, `same`, `[CFA+K]` (offset),
//! `CFA+K` (val_offset), a register (`reg4`, `rsi`), `[{hex}]`
//! (expression), `{hex}` (val_expression), `signed` / `not-signed`
//! (AArch64 RA_SIGN_STATE). Register keys: `regN`, `N` or a name.

use crate::asm::cfi::{assemble, parse_block, parse_int, parse_register, AsmError, CfiAsmParams};
use crate::asm::section::LayoutError;
use crate::asm::section::{build as write_section, CieLayout, FdeLayout, SectionLayout};
use crate::catalogue::{Catalogue, RuleKind};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::encoding::eh_pe;
use dwarfcheck_core::encoding::hex::{parse_hex, HexError};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BudgetKind, CfaRule, CfiOutcome, RegisterRule, Row, RowTable};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Target;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a `cfi:` description or a CFI expectation cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CfiSpecError {
    /// An error at one key of the description (`cie.ra`,
    /// `fdes[0].instructions`, `row 2 cfa`, ...).
    #[error("{key}: {source}")]
    At {
        /// The key, as a path.
        key: String,
        /// What is wrong there.
        source: Box<CfiSpecError>,
    },
    /// Text that is not what the key takes.
    #[error("expected {expected}, found {found:?}")]
    Expected {
        /// What the key takes.
        expected: String,
        /// The text given.
        found: String,
    },
    /// Keys that go together or exclude each other.
    #[error("{0}")]
    Keys(&'static str),
    /// Hex bytes that are not.
    #[error(transparent)]
    Hex(#[from] HexError),
    /// Instruction text the assembler rejects.
    #[error(transparent)]
    Asm(#[from] AsmError),
    /// A layout the section writer cannot write.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A rule ID that is not in the catalogue.
    #[error("unknown rule ID {0:?} (not in specs/rules/*.yaml){hint}", hint = crate::catalogue::Catalogue::get().did_you_mean(.0))]
    UnknownRule(String),
    /// A rule of the wrong kind for `ill_formed` / `eval_error`.
    #[error("rule {id} has kind {}; expected {expected} for {key}", kind.name())]
    RuleKind {
        /// The rule.
        id: String,
        /// Its kind.
        kind: RuleKind,
        /// The kinds the key takes.
        expected: &'static str,
        /// `ill_formed` or `eval_error`.
        key: &'static str,
    },
    /// The last expected row has no end.
    #[error("row {row} (at {at:#x}) is the last: give `end:` on it or on expect")]
    NoEnd {
        /// Row index.
        row: usize,
        /// Its first address.
        at: u64,
    },
    /// A row that ends before it starts.
    #[error("row {row}: end {end:#x} is before at {at:#x}")]
    EndBeforeStart {
        /// Row index.
        row: usize,
        /// Its end.
        end: u64,
        /// Its start.
        at: u64,
    },
    /// A row that starts inside the previous one.
    #[error("row {row}: at {at:#x} overlaps the previous row")]
    Overlap {
        /// Row index.
        row: usize,
        /// Its start.
        at: u64,
    },
    /// A row that gives one register twice.
    #[error("row {row}: register {register} given twice")]
    RegisterTwice {
        /// Row index.
        row: usize,
        /// The DWARF register number.
        register: u64,
    },
}

impl CfiSpecError {
    /// This error at `key`.
    fn at(self, key: impl Into<String>) -> CfiSpecError {
        CfiSpecError::At { key: key.into(), source: Box::new(self) }
    }

    fn expected(expected: impl Into<String>, found: &str) -> CfiSpecError {
        CfiSpecError::Expected { expected: expected.into(), found: found.to_string() }
    }
}

/// A register given by name or DWARF number.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum RegRef {
    /// DWARF register number.
    Number(u64),
    /// `regN`, or a target register name.
    Name(String),
}

impl RegRef {
    fn resolve(&self, target: &Target) -> Result<u64, CfiSpecError> {
        match self {
            RegRef::Number(n) => Ok(*n),
            RegRef::Name(s) => parse_register(s, target).ok_or_else(|| {
                CfiSpecError::expected(format!("a register (regN, a number or a {} name)", target.name), s)
            }),
        }
    }
}

/// A `DW_EH_PE_*` pointer encoding: a number, or names joined by `|`
/// (`"DW_EH_PE_pcrel|DW_EH_PE_sdata4"`, `"pcrel|sdata4"`, `omit`).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum EncodingSpec {
    /// The encoding byte.
    Number(u8),
    /// Names.
    Names(String),
}

impl EncodingSpec {
    /// The encoding byte.
    ///
    /// Errors: [`CfiSpecError::Expected`] naming the part that is not an
    /// encoding.
    pub fn value(&self) -> Result<u8, CfiSpecError> {
        let s = match self {
            EncodingSpec::Number(n) => return Ok(*n),
            EncodingSpec::Names(s) => s,
        };
        let mut v = 0u8;
        for part in s.split('|') {
            let p = part.trim();
            let p = p.strip_prefix("DW_EH_PE_").unwrap_or(p);
            v |= match p {
                "absptr" => eh_pe::ABSPTR,
                "uleb128" => eh_pe::ULEB128,
                "udata2" => eh_pe::UDATA2,
                "udata4" => eh_pe::UDATA4,
                "udata8" => eh_pe::UDATA8,
                "sleb128" => eh_pe::SLEB128,
                "sdata2" => eh_pe::SDATA2,
                "sdata4" => eh_pe::SDATA4,
                "sdata8" => eh_pe::SDATA8,
                "pcrel" => eh_pe::PCREL,
                "textrel" => eh_pe::TEXTREL,
                "datarel" => eh_pe::DATAREL,
                "funcrel" => eh_pe::FUNCREL,
                "aligned" => eh_pe::ALIGNED,
                "indirect" => eh_pe::INDIRECT,
                "omit" => eh_pe::OMIT,
                other => match parse_int(other).and_then(|x| u8::try_from(x).ok()) {
                    Some(x) => x,
                    None => {
                        return Err(CfiSpecError::expected(
                            "a DW_EH_PE_* name (absptr, udata4, sdata4, pcrel, ...) or a byte",
                            other,
                        ))
                    }
                },
            };
        }
        Ok(v)
    }
}

/// The `P` augmentation: encoding and personality routine address.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PersonalitySpec {
    /// Pointer encoding.
    pub encoding: EncodingSpec,
    /// Address of the personality routine (or of its slot, with indirect).
    pub value: u64,
}

/// The CIE of a [`CfiSpec`].
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct CieSpec {
    /// CIE version; default 1 in `.eh_frame`, 4 in `.debug_frame`.
    #[serde(default)]
    pub version: Option<u8>,
    /// Augmentation string.
    #[serde(default)]
    pub augmentation: String,
    /// Version 4 address size in **bytes** (default: the target's).
    #[serde(default)]
    pub address_size: Option<u8>,
    /// Version 4 segment selector size in **bytes**.
    #[serde(default, alias = "segment_selector_size")]
    pub segment_size: u8,
    /// Code alignment factor (default 1).
    #[serde(default)]
    pub code_align: Option<u64>,
    /// Data alignment factor (default -8).
    #[serde(default)]
    pub data_align: Option<i64>,
    /// Return address column (default: the target's).
    #[serde(default, alias = "return_address_register")]
    pub ra: Option<RegRef>,
    /// `R` encoding.
    #[serde(default)]
    pub fde_encoding: Option<EncodingSpec>,
    /// `L` encoding.
    #[serde(default)]
    pub lsda_encoding: Option<EncodingSpec>,
    /// `P` encoding and value.
    #[serde(default)]
    pub personality: Option<PersonalitySpec>,
    /// Value of the legacy `eh` pointer.
    #[serde(default)]
    pub eh_ptr: u64,
    /// Raw augmentation data (hex), replacing the generated data.
    #[serde(default)]
    pub augmentation_data: Option<String>,
    /// Initial instructions as text.
    #[serde(default)]
    pub instructions: String,
    /// Initial instructions as hex bytes (instead of text).
    #[serde(default)]
    pub instructions_bytes: Option<String>,
}

/// The FDE of a [`CfiSpec`].
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct FdeSpec {
    /// First address covered.
    pub pc_begin: u64,
    /// Bytes covered.
    pub pc_range: u64,
    /// Segment selector (CIE version 4 with a segment size).
    #[serde(default)]
    pub segment: u64,
    /// LSDA address (`L`).
    #[serde(default)]
    pub lsda: Option<u64>,
    /// Raw augmentation data (hex), replacing the generated data.
    #[serde(default)]
    pub augmentation_data: Option<String>,
    /// Instructions as text.
    #[serde(default)]
    pub instructions: String,
    /// Instructions as hex bytes (instead of text).
    #[serde(default)]
    pub instructions_bytes: Option<String>,
}

fn yes() -> bool {
    true
}

/// The `cfi:` part of a YAML case (module docs show every key).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CfiSpec {
    /// Section kind (default `.debug_frame`).
    #[serde(default)]
    pub section: Option<FrameKind>,
    /// Section virtual address.
    #[serde(default)]
    pub address: u64,
    /// textrel base.
    #[serde(default)]
    pub text_base: Option<u64>,
    /// datarel base.
    #[serde(default)]
    pub data_base: Option<u64>,
    /// 32- or 64-bit entries.
    #[serde(default)]
    pub format: Format,
    /// Pad entries with `DW_CFA_nop` to the address size (default true).
    #[serde(default = "yes")]
    pub pad: bool,
    /// The CIE.
    #[serde(default)]
    pub cie: Option<CieSpec>,
    /// The FDE (the one whose row table a CFI case builds).
    #[serde(default)]
    pub fde: Option<FdeSpec>,
    /// Further FDEs sharing the CIE, written after `fde` in this order
    /// (the frames of a virtual unwinding: other subprograms' CFI).
    #[serde(default)]
    pub fdes: Vec<FdeSpec>,
    /// Raw section bytes (hex), instead of `cie`/`fde`.
    #[serde(default)]
    pub section_bytes: Option<String>,
    /// With `section_bytes`: section offset of the FDE.
    #[serde(default)]
    pub fde_offset: Option<u64>,
}

impl CfiSpec {
    /// Assembles the section described and returns it with the FDE's
    /// section offset.
    ///
    /// Errors ([`CfiSpecError`], at the key they concern): both or neither
    /// of `section_bytes` and `cie`/`fde`, bad hex, an instruction text
    /// error (`cie.instructions: at character N: ...`), an unknown encoding
    /// or register name, a pointer that cannot be written (textrel without
    /// `text_base`).
    pub fn build(&self, target: &Arc<Target>) -> Result<(Arc<CfiSection>, u64), CfiSpecError> {
        self.build_all(target).map(|(s, offs)| (s, offs[0]))
    }

    /// As [`CfiSpec::build`], returning the section offsets of every FDE:
    /// `fde` first, then `fdes` in order (only the one FDE for
    /// `section_bytes`).
    pub fn build_all(&self, target: &Arc<Target>) -> Result<(Arc<CfiSection>, Vec<u64>), CfiSpecError> {
        let kind = self.section.unwrap_or(FrameKind::DebugFrame);
        if let Some(hex) = &self.section_bytes {
            if self.cie.is_some() || self.fde.is_some() || !self.fdes.is_empty() {
                return Err(CfiSpecError::Keys("give either section_bytes (+ fde_offset) or cie + fde, not both"));
            }
            let bytes = parse_hex(hex).map_err(|e| CfiSpecError::from(e).at("section_bytes"))?;
            let off = self
                .fde_offset
                .ok_or(CfiSpecError::Keys("section_bytes needs fde_offset: the FDE's section offset"))?;
            let mut s = CfiSection::new(kind, bytes, self.address, target.clone());
            s.text_base = self.text_base;
            s.data_base = self.data_base;
            return Ok((Arc::new(s), vec![off]));
        }
        let (Some(c), Some(f)) = (&self.cie, &self.fde) else {
            return Err(CfiSpecError::Keys("expected cie + fde (or section_bytes + fde_offset)"));
        };
        if self.fde_offset.is_some() {
            return Err(CfiSpecError::Keys("fde_offset goes with section_bytes only"));
        }
        let version = c.version.unwrap_or(if kind == FrameKind::EhFrame { 1 } else { 4 });
        let code_align = c.code_align.unwrap_or(1);
        let data_align = c.data_align.unwrap_or(-8);
        let enc = |e: &Option<EncodingSpec>, what: &str| -> Result<Option<u8>, CfiSpecError> {
            e.as_ref().map(|x| x.value().map_err(|m| m.at(format!("cie.{what}")))).transpose()
        };
        let fde_encoding = enc(&c.fde_encoding, "fde_encoding")?;
        let lsda_encoding = enc(&c.lsda_encoding, "lsda_encoding")?;
        let personality = match &c.personality {
            Some(p) => Some((p.encoding.value().map_err(|m| m.at("cie.personality.encoding"))?, p.value)),
            None => None,
        };
        let address_size =
            if version == 4 { c.address_size.unwrap_or(target.address_bytes()) } else { target.address_bytes() };
        let params = CfiAsmParams {
            code_align,
            data_align,
            address_size,
            segment_selector_size: if version == 4 { c.segment_size } else { 0 },
            pointer_encoding: fde_encoding.unwrap_or(eh_pe::ABSPTR),
        };
        let insns = |text: &str, bytes: &Option<String>, what: &str| -> Result<Vec<u8>, CfiSpecError> {
            match bytes {
                Some(h) => {
                    if !text.trim().is_empty() {
                        return Err(CfiSpecError::Keys("give instructions or instructions_bytes, not both").at(what));
                    }
                    parse_hex(h).map_err(|e| CfiSpecError::from(e).at(format!("{what}_bytes")))
                }
                None => assemble(text, target, &params).map_err(|e| CfiSpecError::from(e).at(what)),
            }
        };
        let ra = match &c.ra {
            Some(r) => r.resolve(target).map_err(|e| e.at("cie.ra"))?,
            None => target.return_address_register,
        };
        let layout = SectionLayout {
            kind,
            format: self.format,
            address: self.address,
            text_base: self.text_base,
            data_base: self.data_base,
            pad: self.pad,
            cie: CieLayout {
                version,
                augmentation: c.augmentation.as_bytes().to_vec(),
                address_size: c.address_size,
                segment_selector_size: c.segment_size,
                code_align,
                data_align,
                return_address_register: ra,
                eh_ptr: c.eh_ptr,
                fde_encoding,
                lsda_encoding,
                personality,
                augmentation_data: c
                    .augmentation_data
                    .as_deref()
                    .map(parse_hex)
                    .transpose()
                    .map_err(|e| CfiSpecError::from(e).at("cie.augmentation_data"))?,
                instructions: insns(&c.instructions, &c.instructions_bytes, "cie.instructions")?,
            },
            fdes: std::iter::once(f)
                .chain(&self.fdes)
                .enumerate()
                .map(|(i, f)| fde_layout(f, i, &insns))
                .collect::<Result<_, _>>()?,
        };
        let (bytes, offs) = write_section(&layout, target)?;
        let mut s = CfiSection::new(kind, bytes, self.address, target.clone());
        s.text_base = self.text_base;
        s.data_base = self.data_base;
        Ok((Arc::new(s), offs))
    }
}

/// Assembles an instruction text or hex (`text`, `bytes`, key for errors).
type Assembler<'a> = dyn Fn(&str, &Option<String>, &str) -> Result<Vec<u8>, CfiSpecError> + 'a;

/// The layout of FDE number `i` (0: `fde:`, then `fdes:`); `insns`
/// assembles its instruction text or hex.
fn fde_layout(f: &FdeSpec, i: usize, insns: &Assembler<'_>) -> Result<FdeLayout, CfiSpecError> {
    let what = if i == 0 { "fde".to_string() } else { format!("fdes[{}]", i - 1) };
    Ok(FdeLayout {
        segment: f.segment,
        pc_begin: f.pc_begin,
        pc_range: f.pc_range,
        lsda: f.lsda,
        augmentation_data: f
            .augmentation_data
            .as_deref()
            .map(parse_hex)
            .transpose()
            .map_err(|e| CfiSpecError::from(e).at(format!("{what}.augmentation_data")))?,
        instructions: insns(&f.instructions, &f.instructions_bytes, &format!("{what}.instructions"))?,
    })
}

/// One expected row.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RowSpec {
    /// First address of the row.
    pub at: u64,
    /// One past its last address (default: the next row's `at`, or the
    /// expectation's `end`).
    #[serde(default)]
    pub end: Option<u64>,
    /// CFA rule text.
    pub cfa: String,
    /// Register rule texts by register.
    #[serde(default)]
    pub regs: BTreeMap<String, String>,
}

/// The CFI `expect:` of a case (module docs show the forms).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct CfiExpect {
    /// Expected rows.
    #[serde(default)]
    pub rows: Option<Vec<RowSpec>>,
    /// End of the last row.
    #[serde(default)]
    pub end: Option<u64>,
    /// FDE offset to put in the table (default 0; prefer
    /// [`CfiExpect::to_outcome_at`] with the offset `build` returned).
    #[serde(default)]
    pub fde_offset: Option<u64>,
    /// Expected ill-formed rule.
    #[serde(default)]
    pub ill_formed: Option<String>,
    /// Expected evaluation-error rule.
    #[serde(default)]
    pub eval_error: Option<String>,
    /// Expected budget.
    #[serde(default)]
    pub budget: Option<BudgetKind>,
    /// Section offset of the fault (errors and budgets); omitted = `None`.
    #[serde(default)]
    pub at: Option<u64>,
}

fn parse_offset_suffix(s: &str) -> Option<i64> {
    let v = parse_int(s)?;
    i64::try_from(v).ok()
}

/// Parses a CFA rule text (module docs).
///
/// Errors: [`CfiSpecError::Expected`].
pub fn parse_cfa(s: &str, target: &Target) -> Result<CfaRule, CfiSpecError> {
    let t = s.trim();
    if t.starts_with('{') {
        let expr = parse_block(t).ok_or_else(|| CfiSpecError::expected("{hex bytes} for a CFA expression", s))?;
        return Ok(CfaRule::Expression { expr });
    }
    let (main, aspace) = match t.split_once(" in ") {
        Some((m, a)) => {
            let a = a.trim();
            let n = a.strip_prefix("addrspace").unwrap_or(a).trim();
            let v = parse_int(n)
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| CfiSpecError::expected("'in addrspaceN' in the CFA rule", s))?;
            (m.trim(), v)
        }
        None => (t, 0),
    };
    let main: String = main.chars().filter(|c| !c.is_whitespace()).collect();
    let split = main.rfind(['+', '-']).filter(|&i| i > 0);
    let (reg, off) = match split {
        Some(i) => (&main[..i], parse_offset_suffix(&main[i..])),
        None => (&main[..], Some(0)),
    };
    let off = off.ok_or_else(|| CfiSpecError::expected("REG+OFFSET for the CFA (e.g. \"reg7+8\")", s))?;
    let register = parse_register(reg, target).ok_or_else(|| {
        CfiSpecError::expected(format!("a register in the CFA rule (regN, a number or a {} name)", target.name), s)
    })?;
    Ok(CfaRule::RegOffset { register, offset: off, aspace })
}

/// Parses a register rule text (module docs).
///
/// Errors: [`CfiSpecError::Expected`].
pub fn parse_rule(s: &str, target: &Target) -> Result<RegisterRule, CfiSpecError> {
    let t: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let cfa_off = |x: &str| -> Option<i64> {
        let r = x.strip_prefix("CFA").or_else(|| x.strip_prefix("cfa"))?;
        if r.is_empty() {
            Some(0)
        } else {
            parse_offset_suffix(r)
        }
    };
    Ok(match t.as_str() {
        "undefined" | "u" => RegisterRule::Undefined,
        "same" | "s" | "same_value" => RegisterRule::SameValue,
        "signed" => RegisterRule::RaSigned { signed: true },
        "not-signed" | "not_signed" => RegisterRule::RaSigned { signed: false },
        _ if t.starts_with("[{") && t.ends_with("}]") => RegisterRule::Expression {
            expr: parse_block(&t[1..t.len() - 1]).ok_or_else(|| CfiSpecError::expected("[{hex bytes}]", s))?,
        },
        _ if t.starts_with('{') => RegisterRule::ValExpression {
            expr: parse_block(&t).ok_or_else(|| CfiSpecError::expected("{hex bytes}", s))?,
        },
        _ if t.starts_with('[') && t.ends_with(']') => RegisterRule::Offset {
            offset: cfa_off(&t[1..t.len() - 1]).ok_or_else(|| CfiSpecError::expected("[CFA+N] or [CFA-N]", s))?,
        },
        _ if t.starts_with("CFA") || t.starts_with("cfa") => {
            RegisterRule::ValOffset { offset: cfa_off(&t).ok_or_else(|| CfiSpecError::expected("CFA+N or CFA-N", s))? }
        }
        _ => {
            match parse_register(&t, target) {
                Some(register) => RegisterRule::Register { register },
                None => return Err(CfiSpecError::expected(
                    "a register rule (undefined, same, [CFA-8], CFA+8, a register, [{hex}], {hex}, signed, not-signed)",
                    s,
                )),
            }
        }
    })
}

fn check_rule(id: &str, want_eval: bool) -> Result<RuleId, CfiSpecError> {
    match Catalogue::get().kind(id) {
        None => Err(CfiSpecError::UnknownRule(id.to_string())),
        Some(k) => {
            let ok = match k {
                RuleKind::IllFormed => !want_eval,
                RuleKind::EvaluationError | RuleKind::Context => want_eval,
                RuleKind::Unspecified => true,
                RuleKind::Semantics => false,
            };
            if ok {
                Ok(RuleId::new(id))
            } else {
                Err(CfiSpecError::RuleKind {
                    id: id.to_string(),
                    kind: k,
                    expected: if want_eval {
                        "evaluation-error, context or unspecified"
                    } else {
                        "ill-formed or unspecified"
                    },
                    key: if want_eval { "eval_error" } else { "ill_formed" },
                })
            }
        }
    }
}

impl CfiExpect {
    /// The expected outcome, with `fde_offset` from the expectation
    /// (default 0).
    ///
    /// Errors ([`CfiSpecError`]): not exactly one of
    /// `rows`/`ill_formed`/`eval_error`/`budget`, an unknown rule ID or one
    /// of the wrong kind, unparsable rule text, rows out of order, a last
    /// row without an end.
    pub fn to_outcome(&self, target: &Target) -> Result<CfiOutcome, CfiSpecError> {
        self.to_outcome_at(target, self.fde_offset.unwrap_or(0))
    }

    /// As [`CfiExpect::to_outcome`], with the table's `fde_offset` set to
    /// `fde_offset` (what [`CfiSpec::build`] returned).
    pub fn to_outcome_at(&self, target: &Target, fde_offset: u64) -> Result<CfiOutcome, CfiSpecError> {
        let n = usize::from(self.rows.is_some())
            + usize::from(self.ill_formed.is_some())
            + usize::from(self.eval_error.is_some())
            + usize::from(self.budget.is_some());
        if n != 1 {
            return Err(CfiSpecError::Keys("give exactly one of rows, ill_formed, eval_error, budget").at("expect"));
        }
        if let Some(r) = &self.ill_formed {
            return Ok(CfiOutcome::Failed(Failure::IllFormed { rule: check_rule(r, false)?, at: self.at }));
        }
        if let Some(r) = &self.eval_error {
            return Ok(CfiOutcome::Failed(Failure::EvalError { rule: check_rule(r, true)?, at: self.at }));
        }
        if let Some(b) = self.budget {
            return Ok(CfiOutcome::Failed(Failure::Budget { budget: b, at: self.at }));
        }
        if self.at.is_some() {
            return Err(CfiSpecError::Keys("`at` goes with ill_formed, eval_error or budget").at("expect"));
        }
        let specs = self.rows.as_deref().unwrap_or_default();
        let mut rows = Vec::with_capacity(specs.len());
        for (i, r) in specs.iter().enumerate() {
            let end = match (r.end, specs.get(i + 1)) {
                (Some(e), _) => e,
                (None, Some(next)) => next.at,
                (None, None) => self.end.ok_or(CfiSpecError::NoEnd { row: i, at: r.at })?,
            };
            if end < r.at {
                return Err(CfiSpecError::EndBeforeStart { row: i, end, at: r.at });
            }
            if let Some(prev) = rows.last() {
                let prev: &Row = prev;
                if r.at < prev.end {
                    return Err(CfiSpecError::Overlap { row: i, at: r.at });
                }
            }
            let cfa = parse_cfa(&r.cfa, target).map_err(|e| e.at(format!("row {i} cfa")))?;
            let mut registers = BTreeMap::new();
            for (k, v) in &r.regs {
                let reg = parse_register(k, target).ok_or_else(|| {
                    CfiSpecError::expected("a register key (regN, N or a name)", k).at(format!("row {i}"))
                })?;
                let rule = parse_rule(v, target).map_err(|e| e.at(format!("row {i} {k}")))?;
                if registers.insert(reg, rule).is_some() {
                    return Err(CfiSpecError::RegisterTwice { row: i, register: reg });
                }
            }
            rows.push(Row { start: r.at, end, cfa, registers });
        }
        Ok(CfiOutcome::Table(RowTable { fde_offset, rows }.normalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::target::presets;

    #[test]
    fn rules_and_cfa_text() {
        let t = presets::x86_64();
        assert_eq!(parse_cfa("reg7+8", &t).unwrap(), CfaRule::RegOffset { register: 7, offset: 8, aspace: 0 });
        assert_eq!(parse_cfa("rsp - 16", &t).unwrap(), CfaRule::RegOffset { register: 7, offset: -16, aspace: 0 });
        assert_eq!(
            parse_cfa("r12+8 in addrspace1", &t).unwrap(),
            CfaRule::RegOffset { register: 12, offset: 8, aspace: 1 }
        );
        assert_eq!(parse_cfa("{77 08}", &t).unwrap(), CfaRule::Expression { expr: vec![0x77, 8] });
        assert_eq!(parse_rule("[CFA-8]", &t).unwrap(), RegisterRule::Offset { offset: -8 });
        assert_eq!(parse_rule("CFA+16", &t).unwrap(), RegisterRule::ValOffset { offset: 16 });
        assert_eq!(parse_rule("rsi", &t).unwrap(), RegisterRule::Register { register: 4 });
        assert_eq!(parse_rule("[{77 08}]", &t).unwrap(), RegisterRule::Expression { expr: vec![0x77, 8] });
        assert_eq!(parse_rule("{77 08}", &t).unwrap(), RegisterRule::ValExpression { expr: vec![0x77, 8] });
        assert!(parse_rule("bogus!", &t).is_err());
    }

    #[test]
    fn expect_forms() {
        let t = presets::x86_64();
        let e: CfiExpect = yaml_serde::from_str(
            "rows:\n  - { at: 0x10, cfa: \"reg7+8\", regs: { rip: \"[CFA-8]\" } }\n  - { at: 0x11, cfa: \"reg7+16\" }\nend: 0x14",
        )
        .unwrap();
        let CfiOutcome::Table(tab) = e.to_outcome_at(&t, 0x18).unwrap() else { panic!() };
        assert_eq!(tab.fde_offset, 0x18);
        assert_eq!(tab.rows.len(), 2);
        assert_eq!(tab.rows[1].end, 0x14);
        let e: CfiExpect = yaml_serde::from_str("ill_formed: cfi.restore-state.empty-stack\nat: 3").unwrap();
        assert!(matches!(e.to_outcome(&t).unwrap(), CfiOutcome::Failed(Failure::IllFormed { at: Some(3), .. })));
        let e: CfiExpect = yaml_serde::from_str("ill_formed: cfi.nop").unwrap();
        assert!(matches!(e.to_outcome(&t).unwrap_err(), CfiSpecError::RuleKind { .. }));
        let e: CfiExpect = yaml_serde::from_str("rows: [ { at: 0, cfa: reg7 } ]").unwrap();
        assert_eq!(e.to_outcome(&t).unwrap_err(), CfiSpecError::NoEnd { row: 0, at: 0 });
    }
}
