//! DWARF expression text <-> bytes, in llvm-dwarfdump's spelling.
//!
//! # Text syntax accepted by [`assemble`]
//!
//! An expression is a sequence of operations separated by commas and/or
//! white space (`DW_OP_reg0 DW_OP_piece 4` and llvm-dwarfdump's
//! `DW_OP_reg0 RAX, DW_OP_piece 0x4` are the same). The empty text and
//! `<empty>` both give zero bytes. Each operation is its llvm-dwarfdump name
//! followed by its operands, separated by white space:
//!
//! - numbers are decimal or `0x` hexadecimal, optionally signed (`-8`, `+16`);
//!   each is range-checked against its operand's encoding;
//! - register operands (`DW_OP_regx`, `DW_OP_bregx`, `DW_OP_regval_type`,
//!   `DW_OP_LLVM_aspace_bregx`, `DW_OP_LLVM_call_frame_entry_reg`) take a
//!   register number or a register name of the target (case-insensitive);
//!   `DW_OP_reg<n>` and `DW_OP_breg<n>` may repeat the register name, which
//!   must then be register `n`; a displacement may follow the name directly,
//!   as llvm-dwarfdump prints it (`DW_OP_breg7 RSP+16`, `DW_OP_bregx rsp -8`);
//! - base type references (`DW_OP_convert`, `DW_OP_const_type`, ...) are a
//!   number, `(0x0000002a)` optionally followed by a quoted name
//!   (llvm-dwarfdump's form; the name is ignored), or
//!   `<base_type ref: 0x2a>`; the number is the DIE offset relative to the
//!   compilation unit (llvm-dwarfdump prints the section offset, which is
//!   the same for a unit at section offset 0);
//! - blocks are a length then exactly that many byte values:
//!   `DW_OP_implicit_value 0x2 0x01 0x02`,
//!   `DW_OP_const_type (0x2a) 0x4 0x00 0x00 0x80 0x3f`
//!   (the `DW_OP_const_type` length is one byte);
//! - `DW_OP_entry_value` / `DW_OP_GNU_entry_value` take either a nested
//!   expression in parentheses, as llvm-dwarfdump prints it
//!   (`DW_OP_entry_value(DW_OP_reg5 RDI)`), assembled recursively with its
//!   ULEB128 length computed, or a raw block (`DW_OP_entry_value 0x1 0x55`)
//!   for sub-expressions that do not decode;
//! - `DW_OP_LLVM_user DW_OP_LLVM_offset_uconst 8` and plain
//!   `DW_OP_LLVM_offset_uconst 8` both use the vendor profile's encoding of
//!   the operation (the `DW_OP_LLVM_user` prefix form needs the
//!   `llvm-user` profile).
//!
//! # Disassembly and llvm-dwarfdump
//!
//! [`disassemble`] prints what llvm-dwarfdump 19 prints for
//! `--debug-info`/`--debug-loclists` (checked against libc6-dbg files and
//! LLVM's expression printer): `, ` between operations, unsigned operands as
//! `0x` hex, signed ones with an explicit sign (`+16`, `-8`), register names
//! after register operations in upper case (`DW_OP_breg7 RSP+16`,
//! `DW_OP_regx XMM15`), blocks as a hex length then `0x%02x` bytes, and
//! `DW_OP_entry_value(...)` with the nested operations inside. Known
//! differences:
//! - base type references print as `(0x0000002a)` with the **unit-relative**
//!   offset and no type name (llvm-dwarfdump adds the unit's offset and the
//!   DIE's `DW_AT_name`);
//! - register names come from the target, in upper case with `.` shown as
//!   `_`; llvm-dwarfdump takes them from LLVM's register info. On x86-64
//!   they agree for every register LLVM 19 names (0–55, 58–59, 67–82,
//!   118–125, 130–145); LLVM 19 prints numbers for `tr`, `ldtr`, `mxcsr`,
//!   `fcw`, `fsw` (62–66) and the AMX tiles (146–154), which the presets
//!   name. AArch64 and AMDGPU names may differ from LLVM's;
//! - `DW_OP_const_type`, `DW_OP_deref_type`, `DW_OP_xderef_type`,
//!   `DW_OP_reinterpret`, the GNU typed operations and
//!   `DW_OP_GNU_parameter_ref` are printed in the same style as the
//!   operations llvm-dwarfdump does know, where llvm-dwarfdump 19 reports a
//!   decoding error;
//! - an undecodable tail is `<bad: what at offset N: xx xx>` where
//!   llvm-dwarfdump prints `<decoding error> xx xx`;
//! - a nested `DW_OP_entry_value` block that does not decode as whole
//!   operations is shown as a raw block (`DW_OP_entry_value 0x1 0xff`);
//! - llvm-dwarfdump 19 prints the closing `)` of `DW_OP_entry_value(...)`
//!   correctly only when the nested expression is one operation (for
//!   longer ones it never closes it); we always close it;
//! - llvm-dwarfdump 19 does not know the hetero-2020 operations
//!   (0xe1–0xec); their names come from the hetero-2020 text, and the
//!   `DW_OP_LLVM_user` form is printed as `DW_OP_LLVM_user <name>`, the way
//!   llvm-dwarfdump prints its own `DW_OP_LLVM_user` sub-operations.
//!
//! # Round trip
//!
//! `assemble(disassemble(b)) == b` for every decodable `b` whose LEB128
//! operands are in their shortest form. The disassembler shows values, not
//! encodings, so a padded LEB128 (`0x85 0x80 0x00`) re-assembles to its
//! shortest form (`0x05`); tests generate canonical LEB128 only.

use super::decode::{decode_all, write_fixed, DecodedOp, Fault, OperandValue, Params};
use crate::context::Format;
use crate::encoding::leb128::{write_sleb, write_uleb};
use crate::encoding::op::{encoding_of, name_of, op_by_name};
use crate::encoding::{Op, Operand, VendorProfile};
use crate::target::Target;
use std::fmt::Write as _;

/// Nesting limit for `DW_OP_entry_value(...)` in both directions; deeper
/// nesting is an assembler error, and is disassembled as a raw block.
pub const MAX_NESTING: u32 = 32;

/// A text that does not assemble.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at character {offset}: {message}")]
pub struct AsmError {
    /// Offset in **characters** (not bytes) from the start of the text.
    pub offset: usize,
    /// What was expected there.
    pub message: String,
}

/// One disassembled operation (the structured form of [`disassemble`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisOp {
    /// Byte offset of the opcode in the whole expression (nested
    /// operations of `DW_OP_entry_value` too).
    pub offset: usize,
    /// Length in **bytes**, opcode and operands included.
    pub length: usize,
    /// The operation; `None` for the `<bad: ...>` entry of an undecodable
    /// tail.
    pub op: Option<Op>,
    /// The `DW_OP_LLVM_user` sub-opcode if that form was used.
    pub subop: Option<u64>,
    /// Operand values in encoding order (blocks without their length).
    pub operands: Vec<OperandValue>,
    /// The decoded operations of a `DW_OP_entry_value` block, empty when the
    /// block is shown raw.
    pub nested: Vec<DisOp>,
    /// llvm-dwarfdump-style text of this operation (nested ones included).
    pub text: String,
}

/// Assembles `text` into DWARF expression bytes.
///
/// `vendor` decides which opcodes the vendor names use, `format` the size
/// of DIE-offset operands (4 or 8 bytes), `address_size` the size in
/// **bytes** of `DW_OP_addr`'s operand; multi-byte fixed-size operands use
/// the target's byte order.
///
/// Errors: [`AsmError`] at the first character that does not fit the
/// syntax described in the module documentation, an operand out of range,
/// an unknown register name, or an operation the profile cannot encode.
pub fn assemble(
    text: &str,
    target: &Target,
    vendor: &VendorProfile,
    format: Format,
    address_size: u8,
) -> Result<Vec<u8>, AsmError> {
    let mut a = Asm { text, pos: 0, target, vendor, format, address_size };
    let mut out = Vec::new();
    if text.trim() == "<empty>" {
        return Ok(out);
    }
    a.seq(&mut out, 0)?;
    Ok(out)
}

/// Disassembles `bytes` into one line of llvm-dwarfdump-style text.
///
/// Never fails: an undecodable tail is shown as `<bad: ...>`; no bytes give
/// `<empty>`. Parameters as for [`assemble`].
pub fn disassemble(bytes: &[u8], target: &Target, vendor: &VendorProfile, format: Format, address_size: u8) -> String {
    if bytes.is_empty() {
        return "<empty>".into();
    }
    let ops = disassemble_ops(bytes, target, vendor, format, address_size);
    join(&ops)
}

/// The structured form of [`disassemble`]: one [`DisOp`] per top-level
/// operation, then one with `op == None` if a tail does not decode.
pub fn disassemble_ops(
    bytes: &[u8],
    target: &Target,
    vendor: &VendorProfile,
    format: Format,
    address_size: u8,
) -> Vec<DisOp> {
    let p = Params { vendor, endian: target.endian, format, address_size };
    let d = Dis { target, p };
    let (ops, fault) = decode_all(bytes, &p);
    let mut out: Vec<DisOp> = ops.iter().map(|o| d.op(o, 0, 0)).collect();
    if let Some(f) = fault {
        out.push(bad(bytes, f));
    }
    out
}

fn join(ops: &[DisOp]) -> String {
    ops.iter().map(|o| o.text.as_str()).collect::<Vec<_>>().join(", ")
}

fn bad(bytes: &[u8], f: Fault) -> DisOp {
    let mut text = format!("<bad: {} at offset {}:", f.describe(), f.offset);
    for b in &bytes[f.offset..] {
        let _ = write!(text, " {b:02x}");
    }
    text.push('>');
    DisOp {
        offset: f.offset,
        length: bytes.len() - f.offset,
        op: None,
        subop: None,
        operands: vec![],
        nested: vec![],
        text,
    }
}

struct Dis<'a> {
    target: &'a Target,
    p: Params<'a>,
}

fn block_text(t: &mut String, b: &[u8]) {
    let _ = write!(t, " 0x{:x}", b.len());
    for x in b {
        let _ = write!(t, " 0x{x:02x}");
    }
}

fn base_ref_text(t: &mut String, v: u64) {
    let _ = write!(t, " (0x{v:08x})");
}

impl Dis<'_> {
    fn reg_name(&self, n: u64) -> Option<String> {
        self.target.register(n).map(|r| r.name.to_uppercase().replace('.', "_"))
    }

    /// Disassembles one decoded operation; `base` is the offset of the
    /// buffer `o` was decoded from within the whole expression.
    fn op(&self, o: &DecodedOp, base: usize, depth: u32) -> DisOp {
        let op = o.op();
        let mut t = match o.subop {
            Some(_) => format!("DW_OP_LLVM_user {}", name_of(op)),
            None => name_of(op),
        };
        let u = |i: usize| match o.operands.get(i) {
            Some(OperandValue::Unsigned(v)) => *v,
            Some(OperandValue::Signed(v)) => *v as u64,
            _ => 0,
        };
        let signed_text = |i: usize| match o.operands.get(i) {
            Some(OperandValue::Signed(v)) => format!("{v:+}"),
            Some(OperandValue::Unsigned(v)) => format!("+{v}"),
            _ => String::new(),
        };
        let mut nested = Vec::new();
        match op {
            Op::Reg(n) => {
                if let Some(name) = self.reg_name(u64::from(n)) {
                    let _ = write!(t, " {name}");
                }
            }
            Op::Breg(n) => match self.reg_name(u64::from(n)) {
                Some(name) => {
                    let _ = write!(t, " {name}{}", signed_text(0));
                }
                None => {
                    let _ = write!(t, " {}", signed_text(0));
                }
            },
            Op::Regx | Op::LlvmCallFrameEntryReg => match self.reg_name(u(0)) {
                Some(name) => {
                    let _ = write!(t, " {name}");
                }
                None => {
                    let _ = write!(t, " 0x{:x}", u(0));
                }
            },
            Op::Bregx | Op::LlvmAspaceBregx => match self.reg_name(u(0)) {
                Some(name) => {
                    let _ = write!(t, " {name}{}", signed_text(1));
                }
                None => {
                    let _ = write!(t, " 0x{:x} {}", u(0), signed_text(1));
                }
            },
            Op::RegvalType | Op::GnuRegvalType => {
                match self.reg_name(u(0)) {
                    Some(name) => {
                        let _ = write!(t, " {name}");
                    }
                    None => {
                        let _ = write!(t, " 0x{:x}", u(0));
                    }
                }
                base_ref_text(&mut t, u(1));
            }
            Op::ConstType | Op::GnuConstType => {
                base_ref_text(&mut t, u(0));
                if let Some(OperandValue::Block(b)) = o.operands.get(1) {
                    block_text(&mut t, b);
                }
            }
            Op::DerefType | Op::XderefType | Op::GnuDerefType => {
                let _ = write!(t, " 0x{:x}", u(0));
                base_ref_text(&mut t, u(1));
            }
            Op::Convert | Op::Reinterpret | Op::GnuConvert | Op::GnuReinterpret => {
                if u(0) == 0 {
                    t.push_str(" 0x0");
                } else {
                    base_ref_text(&mut t, u(0));
                }
            }
            Op::EntryValue | Op::GnuEntryValue => {
                let block: &[u8] = match o.operands.first() {
                    Some(OperandValue::Block(b)) => b,
                    _ => &[],
                };
                let start = base + o.offset + o.length - block.len();
                let (inner, fault) = decode_all(block, &self.p);
                if fault.is_none() && depth < MAX_NESTING {
                    nested = inner.iter().map(|i| self.op(i, start, depth + 1)).collect();
                    let _ = write!(t, "({})", join(&nested));
                } else {
                    block_text(&mut t, block);
                }
            }
            _ => {
                for v in &o.operands {
                    match v {
                        OperandValue::Unsigned(v) => {
                            let _ = write!(t, " 0x{v:x}");
                        }
                        OperandValue::Signed(v) => {
                            let _ = write!(t, " {v:+}");
                        }
                        OperandValue::Block(b) => block_text(&mut t, b),
                    }
                }
            }
        }
        DisOp {
            offset: base + o.offset,
            length: o.length,
            op: Some(op),
            subop: o.subop,
            operands: o.operands.clone(),
            nested,
            text: t,
        }
    }
}

struct Asm<'a> {
    text: &'a str,
    pos: usize,
    target: &'a Target,
    vendor: &'a VendorProfile,
    format: Format,
    address_size: u8,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

impl Asm<'_> {
    fn err<T>(&self, at: usize, message: impl Into<String>) -> Result<T, AsmError> {
        Err(AsmError { offset: self.text[..at.min(self.text.len())].chars().count(), message: message.into() })
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if !c.is_whitespace() {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    fn skip_separators(&mut self) {
        while let Some(c) = self.peek() {
            if !c.is_whitespace() && c != ',' {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    /// What the text shows at the current position, for messages.
    fn found(&self) -> String {
        let rest = &self.text[self.pos..];
        match rest.chars().next() {
            None => "the end of the text".into(),
            Some(_) => {
                let word: String = rest.chars().take_while(|c| !c.is_whitespace() && *c != ',').take(24).collect();
                format!("`{word}`")
            }
        }
    }

    fn ident(&mut self) -> Option<&str> {
        let start = self.pos;
        if !self.peek().is_some_and(is_ident_start) {
            return None;
        }
        while self.peek().is_some_and(is_ident_char) {
            self.pos += 1;
        }
        Some(&self.text[start..self.pos])
    }

    /// An identifier that is not an operation name, or nothing (position
    /// unchanged).
    fn optional_name(&mut self) -> Option<(usize, String)> {
        let save = self.pos;
        self.skip_ws();
        let start = self.pos;
        match self.ident() {
            Some(id) if !id.starts_with("DW_OP_") => Some((start, id.to_string())),
            _ => {
                self.pos = save;
                None
            }
        }
    }

    /// A decimal or `0x` hexadecimal number with an optional sign.
    fn number(&mut self, what: &str) -> Result<(usize, i128), AsmError> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut i = self.pos;
        let neg = match bytes.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let (radix, digits_start) =
            if bytes.get(i) == Some(&b'0') && matches!(bytes.get(i + 1), Some(b'x') | Some(b'X')) {
                (16, i + 2)
            } else {
                (10, i)
            };
        let mut j = digits_start;
        let mut v: i128 = 0;
        while let Some(d) = bytes.get(j).and_then(|b| (*b as char).to_digit(radix)) {
            v = match v.checked_mul(i128::from(radix)).and_then(|v| v.checked_add(i128::from(d))) {
                Some(v) if v <= i128::from(u64::MAX) => v,
                _ => return self.err(start, format!("{what}: number does not fit in 64 bits")),
            };
            j += 1;
        }
        if j == digits_start {
            return self
                .err(start, format!("expected {what} (a decimal or 0x hexadecimal number), found {}", self.found()));
        }
        if bytes.get(j).is_some_and(|b| is_ident_char(*b as char)) {
            self.pos = j;
            return self.err(j, format!("expected {what}: unexpected character after the number"));
        }
        self.pos = j;
        Ok((start, if neg { -v } else { v }))
    }

    fn unsigned(&mut self, max: u64, what: &str) -> Result<u64, AsmError> {
        let (start, v) = self.number(what)?;
        if v < 0 || v > i128::from(max) {
            return self.err(start, format!("expected {what}: an unsigned number from 0 to {max:#x}, found {v}"));
        }
        Ok(v as u64)
    }

    fn signed(&mut self, min: i64, max: i64, what: &str) -> Result<i64, AsmError> {
        let (start, v) = self.number(what)?;
        if v < i128::from(min) || v > i128::from(max) {
            return self.err(start, format!("expected {what}: a signed number from {min} to {max}, found {v}"));
        }
        Ok(v as i64)
    }

    fn register(&mut self) -> Result<u64, AsmError> {
        self.skip_ws();
        let start = self.pos;
        if let Some(id) = self.ident() {
            let id = id.to_string();
            return match self.target.register_by_name(&id) {
                Some(r) => Ok(r.number),
                None => self.err(
                    start,
                    format!("expected a register: `{id}` is not a register name of target `{}`", self.target.name),
                ),
            };
        }
        self.unsigned(u64::MAX, "a register name or DWARF register number")
    }

    /// Checks an optional register name after `DW_OP_reg<n>`/`DW_OP_breg<n>`.
    fn check_numbered_register(&mut self, n: u8) -> Result<(), AsmError> {
        if let Some((start, id)) = self.optional_name() {
            match self.target.register_by_name(&id) {
                Some(r) if r.number == u64::from(n) => {}
                Some(r) => {
                    return self.err(
                        start,
                        format!("register `{id}` is number {}, but the operation names register {n}", r.number),
                    )
                }
                None => {
                    return self.err(
                        start,
                        format!(
                            "expected register {n}'s name: `{id}` is not a register of target `{}`",
                            self.target.name
                        ),
                    )
                }
            }
        }
        Ok(())
    }

    fn base_type_ref(&mut self) -> Result<u64, AsmError> {
        self.skip_ws();
        let what = "a base type DIE offset";
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let v = self.unsigned(u64::MAX, what)?;
                self.skip_ws();
                if self.peek() != Some(')') {
                    return self
                        .err(self.pos, format!("expected `)` after the base type offset, found {}", self.found()));
                }
                self.pos += 1;
                let save = self.pos;
                self.skip_ws();
                if self.peek() == Some('"') {
                    match self.text[self.pos + 1..].find('"') {
                        Some(end) => self.pos += end + 2,
                        None => return self.err(self.pos, "expected a closing `\"` after the type name"),
                    }
                } else {
                    self.pos = save;
                }
                Ok(v)
            }
            Some('<') => {
                let start = self.pos;
                let Some(end) = self.text[start..].find('>') else {
                    return self.err(start, "expected `>` closing `<base_type ref: 0x..>`");
                };
                let inner = &self.text[start + 1..start + end];
                let Some(colon) = inner.rfind(':').filter(|_| inner.contains("base_type ref")) else {
                    return self.err(start, "expected `<base_type ref: 0x..>`");
                };
                self.pos = start + 1 + colon + 1;
                let v = self.unsigned(u64::MAX, what)?;
                self.skip_ws();
                if self.peek() != Some('>') {
                    return self.err(self.pos, "expected `>` after the base type offset");
                }
                self.pos += 1;
                Ok(v)
            }
            _ => self.unsigned(u64::MAX, what),
        }
    }

    fn block(&mut self, out: &mut Vec<u8>, one_byte_len: bool) -> Result<(), AsmError> {
        let len = if one_byte_len {
            let l = self.unsigned(0xff, "a block length in bytes")?;
            out.push(l as u8);
            l
        } else {
            let l = self.unsigned(u64::MAX, "a block length in bytes")?;
            write_uleb(out, l);
            l
        };
        for i in 0..len {
            self.skip_ws();
            if !self.peek().is_some_and(|c| c.is_ascii_digit() || c == '+') {
                return self.err(
                    self.pos,
                    format!(
                        "expected {} more block byte(s) (the block length is {len}), found {}",
                        len - i,
                        self.found()
                    ),
                );
            }
            out.push(self.unsigned(0xff, "a block byte")? as u8);
        }
        Ok(())
    }

    fn seq(&mut self, out: &mut Vec<u8>, depth: u32) -> Result<(), AsmError> {
        loop {
            self.skip_separators();
            match self.peek() {
                None if depth > 0 => {
                    return self.err(self.pos, "expected `)` closing the DW_OP_entry_value expression")
                }
                None => return Ok(()),
                Some(')') if depth > 0 => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => {}
            }
            self.operation(out, depth)?;
            match self.peek() {
                None | Some(',') | Some(')') => {}
                Some(c) if c.is_whitespace() => {}
                Some(_) => {
                    return self.err(
                        self.pos,
                        format!("expected `,` or white space after an operation, found {}", self.found()),
                    )
                }
            }
        }
    }

    fn operation(&mut self, out: &mut Vec<u8>, depth: u32) -> Result<(), AsmError> {
        let start = self.pos;
        let name = match self.ident() {
            Some(n) if n.starts_with("DW_OP_") => n.to_string(),
            _ => {
                self.pos = start;
                return self.err(start, format!("expected an operation name (DW_OP_...), found {}", self.found()));
            }
        };
        let (op, want_user) = if name == "DW_OP_LLVM_user" {
            self.skip_ws();
            let sub_start = self.pos;
            match self.ident().map(op_by_name) {
                Some(Some(op)) => (op, Some(sub_start)),
                _ => return self.err(sub_start, "expected a DW_OP_LLVM_* operation name after DW_OP_LLVM_user"),
            }
        } else {
            match op_by_name(&name) {
                Some(op) => (op, None),
                None => return self.err(start, format!("unknown operation `{name}`")),
            }
        };
        let Some((code, subop, spec)) = encoding_of(self.vendor, op) else {
            return self.err(
                start,
                format!("operation `{}` has no encoding under vendor profile `{}`", name_of(op), self.vendor.name),
            );
        };
        if let Some(at) = want_user {
            if subop.is_none() {
                return self.err(
                    at,
                    format!(
                        "`{}` has no DW_OP_LLVM_user sub-opcode under vendor profile `{}`",
                        name_of(op),
                        self.vendor.name
                    ),
                );
            }
        }
        out.push(code);
        if let Some(s) = subop {
            write_uleb(out, s);
        }
        let endian = self.target.endian;
        match op {
            Op::Reg(n) => self.check_numbered_register(n)?,
            Op::Breg(n) => {
                self.check_numbered_register(n)?;
                write_sleb(out, self.signed(i64::MIN, i64::MAX, "a byte displacement")?);
            }
            Op::Regx | Op::LlvmCallFrameEntryReg => write_uleb(out, self.register()?),
            Op::Bregx | Op::LlvmAspaceBregx => {
                write_uleb(out, self.register()?);
                if spec.operands.get(1) == Some(&Operand::Uleb) {
                    write_uleb(out, self.unsigned(u64::MAX, "an unsigned byte displacement")?);
                } else {
                    write_sleb(out, self.signed(i64::MIN, i64::MAX, "a byte displacement")?);
                }
            }
            Op::RegvalType | Op::GnuRegvalType => {
                write_uleb(out, self.register()?);
                write_uleb(out, self.base_type_ref()?);
            }
            Op::ConstType | Op::GnuConstType => {
                write_uleb(out, self.base_type_ref()?);
                self.block(out, true)?;
            }
            Op::DerefType | Op::XderefType | Op::GnuDerefType => {
                out.push(self.unsigned(0xff, "a size in bytes")? as u8);
                write_uleb(out, self.base_type_ref()?);
            }
            Op::Convert | Op::Reinterpret | Op::GnuConvert | Op::GnuReinterpret => {
                write_uleb(out, self.base_type_ref()?)
            }
            Op::EntryValue | Op::GnuEntryValue => {
                self.skip_ws();
                if self.peek() == Some('(') {
                    if depth >= MAX_NESTING {
                        return self
                            .err(self.pos, format!("entry value expressions nested more than {MAX_NESTING} deep"));
                    }
                    self.pos += 1;
                    let mut inner = Vec::new();
                    self.seq(&mut inner, depth + 1)?;
                    write_uleb(out, inner.len() as u64);
                    out.extend_from_slice(&inner);
                } else if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.block(out, false)?;
                } else {
                    return self.err(
                        self.pos,
                        format!("expected `(` and a nested expression, or a block length, found {}", self.found()),
                    );
                }
            }
            _ => {
                for shape in spec.operands {
                    self.generic_operand(out, *shape, endian)?;
                }
            }
        }
        Ok(())
    }

    fn generic_operand(
        &mut self,
        out: &mut Vec<u8>,
        shape: Operand,
        endian: crate::target::Endian,
    ) -> Result<(), AsmError> {
        let fixed_u = |a: &mut Self, out: &mut Vec<u8>, n: usize| -> Result<(), AsmError> {
            let max = if n == 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
            let v = a.unsigned(max, &format!("a {n}-byte unsigned operand"))?;
            write_fixed(out, v, n, endian);
            Ok(())
        };
        let fixed_s = |a: &mut Self, out: &mut Vec<u8>, n: usize, what: &str| -> Result<(), AsmError> {
            let max = if n == 8 { i64::MAX } else { (1i64 << (8 * n - 1)) - 1 };
            let v = a.signed(-max - 1, max, what)?;
            write_fixed(out, v as u64, n, endian);
            Ok(())
        };
        match shape {
            Operand::U8 => fixed_u(self, out, 1),
            Operand::U16 => fixed_u(self, out, 2),
            Operand::U32 => fixed_u(self, out, 4),
            Operand::U64 => fixed_u(self, out, 8),
            Operand::I8 => fixed_s(self, out, 1, "a 1-byte signed operand"),
            Operand::I16 => fixed_s(self, out, 2, "a 2-byte signed operand"),
            Operand::I32 => fixed_s(self, out, 4, "a 4-byte signed operand"),
            Operand::I64 => fixed_s(self, out, 8, "an 8-byte signed operand"),
            Operand::Branch => fixed_s(self, out, 2, "a branch displacement in bytes"),
            Operand::Uleb => {
                write_uleb(out, self.unsigned(u64::MAX, "an unsigned LEB128 operand")?);
                Ok(())
            }
            Operand::Sleb => {
                write_sleb(out, self.signed(i64::MIN, i64::MAX, "a signed LEB128 operand")?);
                Ok(())
            }
            Operand::Addr => {
                let n = usize::from(self.address_size);
                if !matches!(n, 1 | 2 | 4 | 8) {
                    return self.err(self.pos, format!("address size {n} is not 1, 2, 4 or 8 bytes"));
                }
                fixed_u(self, out, n)
            }
            Operand::DieOffset => fixed_u(self, out, self.format.offset_bytes()),
            Operand::Block => self.block(out, false),
            Operand::Block1 => self.block(out, true),
        }
    }
}

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;
