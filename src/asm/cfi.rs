//! Call frame instruction text <-> bytes, in llvm-dwarfdump spelling.
//!
//! One instruction per line or `;`-separated: `DW_CFA_def_cfa: reg7 +8`,
//! `DW_CFA_offset: reg16 -8`, `DW_CFA_advance_loc: 4`. As llvm-dwarfdump
//! prints them, offsets and deltas in the text are **unfactored** byte
//! values: the assembler divides by the CIE's alignment factors (and
//! refuses values that are not a multiple), the disassembler multiplies.
//! Registers are `regN`, a plain number, or a target register name (`rsp`,
//! `RSP`). Expression blocks are hex bytes in braces: `{77 08}` (text
//! operations can be plugged in once the expression assembler is shared).
//! `DW_CFA_set_loc` shows the *stored* operand (for `.eh_frame`, the raw
//! value of the FDE pointer encoding's format, before pcrel etc.), with a
//! segment selector as `SEG:ADDR` when the CIE has one.
//! `DW_CFA_LLVM_def_aspace_cfa(_sf)` read `reg7 +8 in addrspace1`.
//! Encodings: DWARF 5 §7.24 Table 7.29 (via `encoding::cfa`).

use dwarfcheck_core::cfi::Cie;
use dwarfcheck_core::encoding::cfa::{self, Cfa, CfaOperand};
use dwarfcheck_core::encoding::eh_pe;
use dwarfcheck_core::encoding::leb128::{read_sleb, read_uleb, write_sleb, write_uleb};
use dwarfcheck_core::target::{Endian, Target};

/// An assembly error: where in the text (char offset) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at character {offset}: {message}")]
pub struct AsmError {
    /// Character offset in the text of the instruction or operand at fault.
    pub offset: usize,
    /// What was expected.
    pub message: String,
}

/// The CIE facts instruction encoding depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CfiAsmParams {
    /// Code alignment factor (divides advance deltas).
    pub code_align: u64,
    /// Data alignment factor (divides factored offsets).
    pub data_align: i64,
    /// Address size in **bytes** (`DW_CFA_set_loc` with absptr).
    pub address_size: u8,
    /// Segment selector size in **bytes** (`DW_CFA_set_loc`).
    pub segment_selector_size: u8,
    /// FDE pointer encoding; only its value format (low nibble) is used,
    /// for the `DW_CFA_set_loc` operand.
    pub pointer_encoding: u8,
}

impl CfiAsmParams {
    /// Parameters of a decoded CIE.
    pub fn from_cie(cie: &Cie) -> Self {
        CfiAsmParams {
            code_align: cie.code_align,
            data_align: cie.data_align,
            address_size: cie.address_size,
            segment_selector_size: cie.segment_selector_size,
            pointer_encoding: cie.fde_encoding,
        }
    }
}

/// One decoded instruction of [`decode`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedInsn {
    /// Byte offset of the opcode in the input.
    pub offset: usize,
    /// Encoded length in bytes (0 for a `<bad: ...>` entry).
    pub len: usize,
    /// Text in the assembler's syntax, or `<bad: ...>`.
    pub text: String,
}

fn reg_text(r: u64) -> String {
    format!("reg{r}")
}

fn block_text(b: &[u8]) -> String {
    let h: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{{{}}}", h.join(" "))
}

/// Decodes `bytes` into instructions; an undecodable tail ends the list
/// with a `<bad: ...>` entry. Never fails or panics.
pub fn decode(bytes: &[u8], target: &Target, p: &CfiAsmParams) -> Vec<DecodedInsn> {
    let big = target.endian == Endian::Big;
    let mut out = Vec::new();
    let mut pos = 0usize;
    let caf = i128::from(p.code_align);
    let daf = i128::from(p.data_align);
    while pos < bytes.len() {
        let start = pos;
        let op = bytes[pos];
        pos += 1;
        let bad = |msg: String| DecodedInsn { offset: start, len: 0, text: format!("<bad: {msg} at {start}>") };
        let Some(spec) = cfa::lookup(target.arch, op) else {
            out.push(bad(format!("unknown opcode {op:#04x}")));
            return out;
        };
        // Operand reader closures.
        let mut vals: Vec<Operand> = Vec::new();
        let mut fail = None;
        for o in spec.operands {
            let rest = &bytes[pos.min(bytes.len())..];
            let r = match o {
                CfaOperand::Uleb => read_uleb(rest).map(|(v, n)| (Operand::U(v), n)).map_err(|e| e.to_string()),
                CfaOperand::Sleb => read_sleb(rest).map(|(v, n)| (Operand::S(v), n)).map_err(|e| e.to_string()),
                CfaOperand::U8 => fixed(rest, 1, big).map(|v| (Operand::U(v), 1)),
                CfaOperand::U16 => fixed(rest, 2, big).map(|v| (Operand::U(v), 2)),
                CfaOperand::U32 => fixed(rest, 4, big).map(|v| (Operand::U(v), 4)),
                CfaOperand::Addr => {
                    let seg = usize::from(p.segment_selector_size);
                    read_set_loc(rest, seg, p, big).map(|(s, v, n)| (Operand::Addr(s, v), n))
                }
                CfaOperand::Block => match read_uleb(rest) {
                    Ok((len, n)) => match usize::try_from(len).ok().and_then(|l| rest.get(n..n.checked_add(l)?)) {
                        Some(b) => Ok((Operand::Block(b.to_vec()), n + b.len())),
                        None => Err("block runs past the end".to_string()),
                    },
                    Err(e) => Err(e.to_string()),
                },
            };
            match r {
                Ok((v, n)) => {
                    vals.push(v);
                    pos += n;
                }
                Err(e) => {
                    fail = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = fail {
            out.push(bad(format!("{}: {e}", spec.name)));
            return out;
        }
        let low = u64::from(op & 0x3f);
        let u = |i: usize| match vals.get(i) {
            Some(Operand::U(v)) => *v,
            _ => 0,
        };
        let s = |i: usize| match vals.get(i) {
            Some(Operand::S(v)) => *v,
            _ => 0,
        };
        let blk = |i: usize| match vals.get(i) {
            Some(Operand::Block(b)) => block_text(b),
            _ => String::new(),
        };
        let ops = match spec.cfa {
            Cfa::AdvanceLoc => format!("{}", i128::from(low) * caf),
            Cfa::AdvanceLoc1 | Cfa::AdvanceLoc2 | Cfa::AdvanceLoc4 => format!("{}", i128::from(u(0)) * caf),
            Cfa::SetLoc => match vals.first() {
                Some(Operand::Addr(Some(sg), a)) => format!("{sg:#x}:{a:#x}"),
                Some(Operand::Addr(None, a)) => format!("{a:#x}"),
                _ => String::new(),
            },
            Cfa::Offset => format!("{} {}", reg_text(low), i128::from(u(0)) * daf),
            Cfa::OffsetExtended | Cfa::ValOffset => format!("{} {}", reg_text(u(0)), i128::from(u(1)) * daf),
            Cfa::GnuNegativeOffsetExtended => format!("{} {}", reg_text(u(0)), -(i128::from(u(1)) * daf)),
            Cfa::OffsetExtendedSf | Cfa::ValOffsetSf => format!("{} {}", reg_text(u(0)), i128::from(s(1)) * daf),
            Cfa::Restore => reg_text(low),
            Cfa::RestoreExtended | Cfa::Undefined | Cfa::SameValue | Cfa::DefCfaRegister => reg_text(u(0)),
            Cfa::Register => format!("{} {}", reg_text(u(0)), reg_text(u(1))),
            Cfa::DefCfa => format!("{} +{}", reg_text(u(0)), u(1)),
            Cfa::DefCfaSf => format!("{} {}", reg_text(u(0)), i128::from(s(1)) * daf),
            Cfa::DefCfaOffset | Cfa::GnuArgsSize => format!("+{}", u(0)),
            Cfa::DefCfaOffsetSf => format!("{}", i128::from(s(0)) * daf),
            Cfa::DefCfaExpression => blk(0),
            Cfa::Expression | Cfa::ValExpression => format!("{} {}", reg_text(u(0)), blk(1)),
            Cfa::LlvmDefAspaceCfa => format!("{} +{} in addrspace{}", reg_text(u(0)), u(1), u(2)),
            Cfa::LlvmDefAspaceCfaSf => {
                format!("{} {} in addrspace{}", reg_text(u(0)), i128::from(s(1)) * daf, u(2))
            }
            Cfa::Nop | Cfa::RememberState | Cfa::RestoreState | Cfa::GnuWindowSave | Cfa::Aarch64NegateRaState => {
                String::new()
            }
        };
        let text = if ops.is_empty() { format!("{}:", spec.name) } else { format!("{}: {ops}", spec.name) };
        out.push(DecodedInsn { offset: start, len: pos - start, text });
    }
    out
}

enum Operand {
    U(u64),
    S(i64),
    Addr(Option<u64>, u64),
    Block(Vec<u8>),
}

fn fixed(rest: &[u8], n: usize, big: bool) -> Result<u64, String> {
    let b = rest.get(..n).ok_or_else(|| format!("{n}-byte operand runs past the end"))?;
    let mut v = 0u64;
    if big {
        for &x in b {
            v = (v << 8) | u64::from(x);
        }
    } else {
        for &x in b.iter().rev() {
            v = (v << 8) | u64::from(x);
        }
    }
    Ok(v)
}

/// Reads a `DW_CFA_set_loc` operand: optional segment selector, then the
/// value in the pointer encoding's format (raw, no application).
fn read_set_loc(rest: &[u8], seg: usize, p: &CfiAsmParams, big: bool) -> Result<(Option<u64>, u64, usize), String> {
    let s = if seg > 0 { Some(fixed(rest, seg, big)?) } else { None };
    let rest = &rest[seg..];
    let (v, n) = match p.pointer_encoding & eh_pe::FORMAT_MASK {
        eh_pe::ABSPTR => (fixed(rest, usize::from(p.address_size), big)?, usize::from(p.address_size)),
        eh_pe::ULEB128 => read_uleb(rest).map_err(|e| e.to_string())?,
        eh_pe::SLEB128 => read_sleb(rest).map(|(v, n)| (v as u64, n)).map_err(|e| e.to_string())?,
        eh_pe::UDATA2 | eh_pe::SDATA2 => (fixed(rest, 2, big)?, 2),
        eh_pe::UDATA4 | eh_pe::SDATA4 => (fixed(rest, 4, big)?, 4),
        eh_pe::UDATA8 | eh_pe::SDATA8 => (fixed(rest, 8, big)?, 8),
        f => return Err(format!("pointer format {f:#x}")),
    };
    Ok((s, v, seg + n))
}

/// Disassembles `bytes` to text, one instruction per line (no trailing
/// newline). Never fails: an undecodable tail is shown as `<bad: ...>`.
pub fn disassemble(bytes: &[u8], target: &Target, p: &CfiAsmParams) -> String {
    decode(bytes, target, p).into_iter().map(|d| d.text).collect::<Vec<_>>().join("\n")
}

/// A token with its character offset.
struct Tok<'a> {
    at: usize,
    s: &'a str,
}

fn tokens(line: &str, base: usize) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut start = None;
    let mut depth = 0;
    for (i, c) in line.char_indices() {
        let sep = depth == 0 && (c.is_whitespace() || c == ',');
        if c == '{' {
            depth += 1;
        }
        if c == '}' {
            depth -= 1;
        }
        if sep {
            if let Some(s) = start.take() {
                out.push(Tok { at: base + s, s: &line[s..i] });
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(Tok { at: base + s, s: &line[s..] });
    }
    out
}

fn err(at: usize, m: impl Into<String>) -> AsmError {
    AsmError { offset: at, message: m.into() }
}

/// Parses an integer: decimal or `0x` hex, optional sign.
pub fn parse_int(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u128::from_str_radix(h, 16).ok()?
    } else {
        body.parse::<u128>().ok()?
    };
    let v = i128::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// Parses a register: `regN`, `N`, or a target register name.
pub fn parse_register(s: &str, target: &Target) -> Option<u64> {
    if let Some(n) = s.strip_prefix("reg").or_else(|| s.strip_prefix("REG")) {
        if let Ok(v) = n.parse::<u64>() {
            return Some(v);
        }
    }
    if let Ok(v) = s.parse::<u64>() {
        return Some(v);
    }
    target.register_by_name(s).map(|r| r.number)
}

/// Parses a `{hex bytes}` block.
pub fn parse_block(s: &str) -> Option<Vec<u8>> {
    let inner = s.strip_prefix('{')?.strip_suffix('}')?;
    let hex: String = inner.chars().filter(|c| !c.is_whitespace()).collect();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok()).collect()
}

/// Assembles call frame instructions (syntax in the module docs) into
/// bytes. Errors give the char offset of the instruction or operand and
/// what was expected (unknown name, missing operand, an offset that is not
/// a multiple of the alignment factor, a register above 63 for the packed
/// forms, ...).
pub fn assemble(text: &str, target: &Target, p: &CfiAsmParams) -> Result<Vec<u8>, AsmError> {
    let mut out = Vec::new();
    let big = target.endian == Endian::Big;
    let mut base = 0usize;
    for line in text.split(['\n', ';']) {
        let toks = tokens(line, base);
        base += line.len() + 1;
        let Some(first) = toks.first() else { continue };
        if first.s.starts_with('#') {
            continue;
        }
        let name = first.s.trim_end_matches(':');
        let Some(which) = cfa::by_name(name) else {
            return Err(err(first.at, format!("expected a DW_CFA_* instruction name, found {name:?}")));
        };
        // Operands, minus an llvm-dwarfdump "to 0x..." suffix on advances.
        let mut ops: Vec<&Tok> = toks[1..].iter().collect();
        if ops.len() >= 2 && ops[ops.len() - 2].s == "to" {
            ops.truncate(ops.len() - 2);
        }
        let end_at = toks.last().map(|t| t.at + t.s.len()).unwrap_or(first.at);
        let want = |i: usize, what: &str| -> Result<&Tok, AsmError> {
            ops.get(i).copied().ok_or_else(|| err(end_at, format!("{name}: expected {what} as operand {}", i + 1)))
        };
        let reg = |i: usize| -> Result<u64, AsmError> {
            let t = want(i, "a register (regN, N or a target register name)")?;
            parse_register(t.s, target)
                .ok_or_else(|| err(t.at, format!("{name}: expected a register (regN, N or a name), found {:?}", t.s)))
        };
        let int = |i: usize| -> Result<(i128, usize), AsmError> {
            let t = want(i, "an integer")?;
            parse_int(t.s)
                .map(|v| (v, t.at))
                .ok_or_else(|| err(t.at, format!("{name}: expected an integer, found {:?}", t.s)))
        };
        let block = |i: usize| -> Result<Vec<u8>, AsmError> {
            let t = want(i, "an expression block {hex bytes}")?;
            parse_block(t.s).ok_or_else(|| err(t.at, format!("{name}: expected {{hex bytes}}, found {:?}", t.s)))
        };
        let unfactor = |v: i128, at: usize, f: i128, what: &str| -> Result<i128, AsmError> {
            if f == 0 {
                return if v == 0 {
                    Ok(0)
                } else {
                    Err(err(at, format!("{name}: {what} factor is 0, offset must be 0")))
                };
            }
            if v % f != 0 {
                return Err(err(at, format!("{name}: {v} is not a multiple of the {what} alignment factor {f}")));
            }
            Ok(v / f)
        };
        let as_u64 = |v: i128, at: usize| -> Result<u64, AsmError> {
            u64::try_from(v).map_err(|_| err(at, format!("{name}: operand {v} must be an unsigned 64-bit value")))
        };
        let as_i64 = |v: i128, at: usize| -> Result<i64, AsmError> {
            i64::try_from(v).map_err(|_| err(at, format!("{name}: operand {v} must fit a signed 64-bit value")))
        };
        let caf = i128::from(p.code_align);
        let daf = i128::from(p.data_align);
        let (opcode, _) = cfa::encoding_of(which).ok_or_else(|| err(first.at, format!("{name}: no encoding")))?;
        if which == Cfa::Aarch64NegateRaState && target.arch != dwarfcheck_core::target::Arch::Aarch64
            || which == Cfa::GnuWindowSave && target.arch == dwarfcheck_core::target::Arch::Aarch64
        {
            return Err(err(first.at, format!("{name}: opcode 0x2d means something else on this target")));
        }
        let max_ops = match which {
            Cfa::Nop | Cfa::RememberState | Cfa::RestoreState | Cfa::GnuWindowSave | Cfa::Aarch64NegateRaState => 0,
            Cfa::AdvanceLoc | Cfa::AdvanceLoc1 | Cfa::AdvanceLoc2 | Cfa::AdvanceLoc4 | Cfa::SetLoc => 1,
            Cfa::Restore | Cfa::RestoreExtended | Cfa::Undefined | Cfa::SameValue | Cfa::DefCfaRegister => 1,
            Cfa::DefCfaOffset | Cfa::DefCfaOffsetSf | Cfa::DefCfaExpression | Cfa::GnuArgsSize => 1,
            Cfa::LlvmDefAspaceCfa | Cfa::LlvmDefAspaceCfaSf => 4,
            _ => 2,
        };
        if let Some(extra) = ops.get(max_ops) {
            return Err(err(extra.at, format!("{name}: unexpected operand {:?}", extra.s)));
        }
        match which {
            Cfa::Nop | Cfa::RememberState | Cfa::RestoreState | Cfa::GnuWindowSave | Cfa::Aarch64NegateRaState => {
                out.push(opcode)
            }
            Cfa::AdvanceLoc | Cfa::AdvanceLoc1 | Cfa::AdvanceLoc2 | Cfa::AdvanceLoc4 => {
                let (v, at) = int(0)?;
                let d = as_u64(unfactor(v, at, caf, "code")?, at)?;
                let (limit, n) = match which {
                    Cfa::AdvanceLoc => (0x3f, 0),
                    Cfa::AdvanceLoc1 => (0xff, 1),
                    Cfa::AdvanceLoc2 => (0xffff, 2),
                    _ => (0xffff_ffff, 4),
                };
                if d > limit {
                    return Err(err(at, format!("{name}: factored delta {d} exceeds {limit}")));
                }
                if n == 0 {
                    out.push(opcode | d as u8);
                } else {
                    out.push(opcode);
                    push_uint(&mut out, d, n, big);
                }
            }
            Cfa::SetLoc => {
                let t = want(0, "an address")?;
                let (seg, addr) = match t.s.split_once(':') {
                    Some((s, a)) => (parse_int(s), parse_int(a)),
                    None => (Some(0), parse_int(t.s)),
                };
                let (Some(seg), Some(addr)) = (seg, addr) else {
                    return Err(err(t.at, format!("{name}: expected an address or SEG:ADDR, found {:?}", t.s)));
                };
                out.push(opcode);
                if p.segment_selector_size > 0 {
                    push_uint(&mut out, seg as u64, usize::from(p.segment_selector_size), big);
                }
                let a = addr as u64;
                match p.pointer_encoding & eh_pe::FORMAT_MASK {
                    eh_pe::ABSPTR => push_uint(&mut out, a, usize::from(p.address_size), big),
                    eh_pe::ULEB128 => write_uleb(&mut out, a),
                    eh_pe::SLEB128 => write_sleb(&mut out, addr as i64),
                    eh_pe::UDATA2 | eh_pe::SDATA2 => push_uint(&mut out, a, 2, big),
                    eh_pe::UDATA4 | eh_pe::SDATA4 => push_uint(&mut out, a, 4, big),
                    _ => push_uint(&mut out, a, 8, big),
                }
            }
            Cfa::Offset | Cfa::Restore => {
                let r = reg(0)?;
                if r > 0x3f {
                    return Err(err(
                        ops[0].at,
                        format!("{name}: register {r} does not fit 6 bits; use the _extended form"),
                    ));
                }
                out.push(opcode | r as u8);
                if which == Cfa::Offset {
                    let (v, at) = int(1)?;
                    write_uleb(&mut out, as_u64(unfactor(v, at, daf, "data")?, at)?);
                }
            }
            Cfa::OffsetExtended | Cfa::ValOffset | Cfa::GnuNegativeOffsetExtended => {
                let r = reg(0)?;
                let (v, at) = int(1)?;
                let v = if which == Cfa::GnuNegativeOffsetExtended { -v } else { v };
                out.push(opcode);
                write_uleb(&mut out, r);
                write_uleb(&mut out, as_u64(unfactor(v, at, daf, "data")?, at)?);
            }
            Cfa::OffsetExtendedSf | Cfa::ValOffsetSf | Cfa::DefCfaSf => {
                let r = reg(0)?;
                let (v, at) = int(1)?;
                out.push(opcode);
                write_uleb(&mut out, r);
                write_sleb(&mut out, as_i64(unfactor(v, at, daf, "data")?, at)?);
            }
            Cfa::RestoreExtended | Cfa::Undefined | Cfa::SameValue | Cfa::DefCfaRegister => {
                let r = reg(0)?;
                out.push(opcode);
                write_uleb(&mut out, r);
            }
            Cfa::Register => {
                let (a, b) = (reg(0)?, reg(1)?);
                out.push(opcode);
                write_uleb(&mut out, a);
                write_uleb(&mut out, b);
            }
            Cfa::DefCfa => {
                let r = reg(0)?;
                let (v, at) = int(1)?;
                out.push(opcode);
                write_uleb(&mut out, r);
                write_uleb(&mut out, as_u64(v, at)?);
            }
            Cfa::DefCfaOffset | Cfa::GnuArgsSize => {
                let (v, at) = int(0)?;
                out.push(opcode);
                write_uleb(&mut out, as_u64(v, at)?);
            }
            Cfa::DefCfaOffsetSf => {
                let (v, at) = int(0)?;
                out.push(opcode);
                write_sleb(&mut out, as_i64(unfactor(v, at, daf, "data")?, at)?);
            }
            Cfa::DefCfaExpression => {
                let b = block(0)?;
                out.push(opcode);
                write_uleb(&mut out, b.len() as u64);
                out.extend(b);
            }
            Cfa::Expression | Cfa::ValExpression => {
                let r = reg(0)?;
                let b = block(1)?;
                out.push(opcode);
                write_uleb(&mut out, r);
                write_uleb(&mut out, b.len() as u64);
                out.extend(b);
            }
            Cfa::LlvmDefAspaceCfa | Cfa::LlvmDefAspaceCfaSf => {
                let r = reg(0)?;
                let (v, at) = int(1)?;
                // "in addrspaceN" or "in addrspace N" or a bare number.
                let rest: Vec<&str> = ops[2..].iter().map(|t| t.s).filter(|s| *s != "in").collect();
                let joined = rest.concat();
                let asp = joined.strip_prefix("addrspace").unwrap_or(&joined);
                let asp_at = ops.get(2).map(|t| t.at).unwrap_or(end_at);
                let asp = parse_int(asp)
                    .and_then(|v| u64::try_from(v).ok())
                    .ok_or_else(|| err(asp_at, format!("{name}: expected 'in addrspaceN' after the offset")))?;
                out.push(opcode);
                write_uleb(&mut out, r);
                if which == Cfa::LlvmDefAspaceCfa {
                    write_uleb(&mut out, as_u64(v, at)?);
                } else {
                    write_sleb(&mut out, as_i64(unfactor(v, at, daf, "data")?, at)?);
                }
                write_uleb(&mut out, asp);
            }
        }
    }
    Ok(out)
}

fn push_uint(out: &mut Vec<u8>, v: u64, n: usize, big: bool) {
    let b = v.to_le_bytes();
    if big {
        out.extend(b[..n].iter().rev());
    } else {
        out.extend(&b[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::target::presets;
    use proptest::prelude::*;

    fn p() -> CfiAsmParams {
        CfiAsmParams { code_align: 1, data_align: -8, address_size: 8, segment_selector_size: 0, pointer_encoding: 0 }
    }

    #[test]
    fn hand_encoded() {
        let t = presets::x86_64();
        // DWARF 5 Table 7.29 by hand: def_cfa 0x0c reg 7 off 8; offset
        // (0x80|16) factored 1 (-8 / -8); advance_loc 0x40|4.
        let b =
            assemble("DW_CFA_def_cfa: reg7 +8\nDW_CFA_offset: rip -8; DW_CFA_advance_loc: 4 to 0x4", &t, &p()).unwrap();
        assert_eq!(b, vec![0x0c, 7, 8, 0x90, 1, 0x44]);
        assert_eq!(
            disassemble(&b, &t, &p()),
            "DW_CFA_def_cfa: reg7 +8\nDW_CFA_offset: reg16 -8\nDW_CFA_advance_loc: 4"
        );
        let b = assemble("DW_CFA_LLVM_def_aspace_cfa: reg7 +8 in addrspace1", &t, &p()).unwrap();
        assert_eq!(b, vec![0x30, 7, 8, 1]);
        let b = assemble("DW_CFA_expression: RBP {77 08}", &t, &p()).unwrap();
        assert_eq!(b, vec![0x10, 6, 2, 0x77, 8]);
    }

    #[test]
    fn errors_say_what_was_expected() {
        let t = presets::x86_64();
        let e = assemble("DW_CFA_offset: reg16 -4", &t, &p()).unwrap_err();
        assert!(e.message.contains("multiple"), "{e}");
        assert_eq!(e.offset, 21);
        let e = assemble("DW_CFA_bogus: 1", &t, &p()).unwrap_err();
        assert_eq!(e.offset, 0);
        let e = assemble("DW_CFA_offset: reg99 -8", &t, &p()).unwrap_err();
        assert!(e.message.contains("6 bits"), "{e}");
        assert!(disassemble(&[0x0c, 0x80], &t, &p()).contains("<bad:"));
    }

    /// One valid instruction, generated as its minimal encoding.
    fn insn() -> impl Strategy<Value = Vec<u8>> {
        let reg = 0u64..200;
        let small = 0u64..0x3f;
        prop_oneof![
            small.clone().prop_map(|d| vec![0x40 | d as u8]),
            (small.clone(), 0u64..1000).prop_map(|(r, o)| {
                let mut v = vec![0x80 | r as u8];
                write_uleb(&mut v, o);
                v
            }),
            small.prop_map(|r| vec![0xc0 | r as u8]),
            Just(vec![0x00]),
            Just(vec![0x0a]),
            Just(vec![0x0b]),
            Just(vec![0x2d]),
            any::<u8>().prop_map(|d| vec![0x02, d]),
            any::<u16>().prop_map(|d| {
                let mut v = vec![0x03];
                v.extend(d.to_le_bytes());
                v
            }),
            any::<u32>().prop_map(|d| {
                let mut v = vec![0x04];
                v.extend(d.to_le_bytes());
                v
            }),
            any::<u64>().prop_map(|a| {
                let mut v = vec![0x01];
                v.extend(a.to_le_bytes());
                v
            }),
            (prop::sample::select(vec![0x05u8, 0x14, 0x2f, 0x0c, 0x09]), reg.clone(), any::<u32>()).prop_map(
                |(o, r, x)| {
                    let mut v = vec![o];
                    write_uleb(&mut v, r);
                    write_uleb(&mut v, u64::from(x));
                    v
                }
            ),
            (prop::sample::select(vec![0x11u8, 0x15, 0x12]), reg.clone(), any::<i32>()).prop_map(|(o, r, x)| {
                let mut v = vec![o];
                write_uleb(&mut v, r);
                write_sleb(&mut v, i64::from(x));
                v
            }),
            (prop::sample::select(vec![0x06u8, 0x07, 0x08, 0x0d, 0x0e, 0x2e]), reg.clone()).prop_map(|(o, r)| {
                let mut v = vec![o];
                write_uleb(&mut v, r);
                v
            }),
            any::<i32>().prop_map(|x| {
                let mut v = vec![0x13];
                write_sleb(&mut v, i64::from(x));
                v
            }),
            prop::collection::vec(any::<u8>(), 0..6).prop_map(|b| {
                let mut v = vec![0x0f, b.len() as u8];
                v.extend(b);
                v
            }),
            (prop::sample::select(vec![0x10u8, 0x16]), reg.clone(), prop::collection::vec(any::<u8>(), 0..6)).prop_map(
                |(o, r, b)| {
                    let mut v = vec![o];
                    write_uleb(&mut v, r);
                    v.push(b.len() as u8);
                    v.extend(b);
                    v
                }
            ),
            (reg.clone(), any::<u32>(), 0u64..4).prop_map(|(r, o, a)| {
                let mut v = vec![0x30];
                write_uleb(&mut v, r);
                write_uleb(&mut v, u64::from(o));
                write_uleb(&mut v, a);
                v
            }),
            (reg, any::<i32>(), 0u64..4).prop_map(|(r, o, a)| {
                let mut v = vec![0x31];
                write_uleb(&mut v, r);
                write_sleb(&mut v, i64::from(o));
                write_uleb(&mut v, a);
                v
            }),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(stream in prop::collection::vec(insn(), 0..20), caf in 1u64..5, daf in prop::sample::select(vec![-8i64, -4, 1, 4])) {
            let t = presets::x86_64();
            let params = CfiAsmParams { code_align: caf, data_align: daf, address_size: 8, segment_selector_size: 0, pointer_encoding: 0 };
            let bytes: Vec<u8> = stream.concat();
            let text = disassemble(&bytes, &t, &params);
            let back = assemble(&text, &t, &params).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(back, bytes, "{}", text);
        }

        #[test]
        fn never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let t = presets::aarch64();
            let _ = disassemble(&bytes, &t, &p());
        }
    }
}
