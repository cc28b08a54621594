//! The text parser behind `asm::expr::assemble` (syntax documented there).

use super::decode::write_fixed;
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck_core::encoding::op::{encoding_of, name_of, op_by_name, op_names};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::{Op, Operand, VendorProfile};
use dwarfcheck_core::target::Target;

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

/// Parser state: the text, the position (a byte index on a character
/// boundary) and the encoding parameters.
pub(crate) struct Asm<'a> {
    pub(crate) text: &'a str,
    pub(crate) pos: usize,
    pub(crate) target: &'a Target,
    pub(crate) vendor: &'a VendorProfile,
    pub(crate) format: Format,
    pub(crate) address_size: u8,
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

    /// A register number by target name, or by the spelling llvm-dwarfdump
    /// 19 uses where it differs from the target's (AArch64 `w<n>`/`wsp`).
    fn register_number(&self, name: &str) -> Option<u64> {
        if let Some(r) = self.target.register_by_name(name) {
            return Some(r.number);
        }
        if self.target.arch == dwarfcheck_core::target::Arch::Aarch64 {
            let lower = name.to_ascii_lowercase();
            if lower == "wsp" {
                return Some(31);
            }
            if let Some(digits) = lower.strip_prefix('w') {
                let canonical = digits == "0" || !digits.starts_with('0');
                if let (true, Ok(n)) = (canonical && digits.bytes().all(|b| b.is_ascii_digit()), digits.parse::<u64>())
                {
                    if n <= 30 {
                        return Some(n);
                    }
                }
            }
        }
        None
    }

    fn register(&mut self) -> Result<u64, AsmError> {
        self.skip_ws();
        let start = self.pos;
        if let Some(id) = self.ident() {
            let id = id.to_string();
            return match self.register_number(&id) {
                Some(r) => Ok(r),
                None => self.err(
                    start,
                    format!(
                        "expected a register: `{id}` is not a register name of target `{}`{}",
                        self.target.name,
                        crate::text::suggest::did_you_mean(&id, self.target.registers.iter().map(|r| &r.name))
                    ),
                ),
            };
        }
        self.unsigned(u64::MAX, "a register name or DWARF register number")
    }

    /// Checks an optional register name after `DW_OP_reg<n>`/`DW_OP_breg<n>`.
    fn check_numbered_register(&mut self, n: u8) -> Result<(), AsmError> {
        if let Some((start, id)) = self.optional_name() {
            match self.register_number(&id) {
                Some(r) if r == u64::from(n) => {}
                Some(r) => {
                    return self
                        .err(start, format!("register `{id}` is number {r}, but the operation names register {n}"))
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

    /// Assembles operations up to the end (depth 0) or the `)` closing a
    /// nested entry value expression (depth > 0).
    pub(crate) fn seq(&mut self, out: &mut Vec<u8>, depth: u32) -> Result<(), AsmError> {
        loop {
            self.skip_separators();
            match self.peek() {
                None if depth > 0 => {
                    return self.err(
                        self.pos,
                        "expected `)` closing the DW_OP_entry_value expression (llvm-dwarfdump 19 omits it when the \
                         nested expression has more than one operation; add it where the nested expression ends)",
                    );
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
                None => {
                    let hint = crate::text::suggest::did_you_mean(&name, op_names());
                    return self.err(start, format!("unknown operation `{name}`{hint}"));
                }
            }
        };
        let Some((code, subop, spec)) = encoding_of(self.vendor, op) else {
            return self.err(
                start,
                format!(
                    "operation `{}` has no encoding under vendor profile `{}`{}",
                    name_of(op),
                    self.vendor.name,
                    profiles_encoding(op)
                ),
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
        endian: dwarfcheck_core::target::Endian,
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

/// `"; vendor profiles that encode it: ..."` naming every profile with an
/// encoding of `op` (`--vendor` on the command line, `vendor:` in a case
/// file), or the empty string when none has one.
fn profiles_encoding(op: dwarfcheck_core::encoding::Op) -> String {
    let names: Vec<&str> = VendorProfile::NAMES
        .iter()
        .copied()
        .filter(|n| VendorProfile::by_name(n).is_some_and(|p| encoding_of(&p, op).is_some()))
        .collect();
    match names.first() {
        None => String::new(),
        Some(first) => format!(
            "; vendor profiles that encode it: {} (`--vendor {first}`, or `vendor: {first}` in a case file)",
            names.join(", ")
        ),
    }
}
