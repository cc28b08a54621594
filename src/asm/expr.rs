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
//! `--debug-info`/`--debug-loclists` (checked against libc6-dbg files, where
//! all 3,886 distinct expression texts of 120 files re-assemble and print
//! back identically, and against objects built with llvm-mc; see
//! `tests/asm_roundtrip.rs`): `, ` between operations, unsigned operands as
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
//!   name. For AArch64, LLVM 19 prints the 32-bit views `W0`–`W30` and
//!   `WSP` for registers 0–31, where we print `X0`–`X30` and `SP` (the
//!   assembler accepts both spellings); for AMDGPU it prints internal names
//!   such as `PC_REG`, `EXEC`, `SGPR0_LO16`, where we print the
//!   AMDGPUUsage names (`PC_64`, `EXEC_MASK_64`, `SGPR0`);
//! - llvm-dwarfdump 19 reports `<decoding error>` for `DW_OP_const_type`,
//!   `DW_OP_deref_type`, `DW_OP_xderef_type`, `DW_OP_implicit_pointer`,
//!   `DW_OP_reinterpret` and every GNU operation except
//!   `DW_OP_GNU_push_tls_address`, `DW_OP_GNU_entry_value`,
//!   `DW_OP_GNU_addr_index` and `DW_OP_GNU_const_index` (so also for GCC's
//!   `DW_OP_GNU_uninit`, seen in libc6-dbg); we print those in the same
//!   style as the operations it knows (`DW_OP_implicit_pointer 0x40 +0`,
//!   `DW_OP_deref_type 0x10 (0x0000002a)`);
//! - without a unit (`--debug-loclists`), llvm-dwarfdump 19 prints base
//!   type references as `DW_OP_convert 0x2e` and
//!   `DW_OP_regval_type XMM0 <base_type ref: 0x2e>`; both assemble;
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

use super::decode::{decode_all, DecodedOp, Fault, OperandValue, Params};
use super::parse::Asm;
use dwarfcheck_core::encoding::op::name_of;
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::{Op, VendorProfile};
use dwarfcheck_core::target::Target;
use std::fmt::Write as _;

pub use super::parse::{AsmError, MAX_NESTING};

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
    if text.trim() == "<empty>" {
        return Ok(Vec::new());
    }
    let mut a = Asm { text, pos: 0, target, vendor, format, address_size };
    let mut out = Vec::new();
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

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;
