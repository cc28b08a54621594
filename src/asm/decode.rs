//! Static decoding of DWARF expression bytes into whole operations, for the
//! disassembler and the edition classifier (never used by the evaluators,
//! which decode on their own; docs/architecture.md §2).

use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::encoding::leb128::{read_sleb, read_uleb, LebError};
use dwarfcheck_core::encoding::op::{lookup, lookup_llvm_user, Decoded};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::{Op, OpSpec, Operand, VendorProfile};
use dwarfcheck_core::target::Endian;

/// How to read operands whose size or byte order depends on the unit and
/// target.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    /// Vendor profile deciding the opcode range 0xe0–0xff.
    pub vendor: &'a VendorProfile,
    /// Byte order of fixed-size multi-byte operands.
    pub endian: Endian,
    /// 32- or 64-bit DWARF: size of DIE-offset operands (4 or 8 **bytes**).
    pub format: Format,
    /// Size of a `DW_OP_addr` operand in **bytes** (1, 2, 4 or 8).
    pub address_size: u8,
}

impl<'a> Params<'a> {
    /// The parameters a context's expressions are read with: its vendor
    /// profile, its target's byte order, its unit's format (32-bit without
    /// a unit) and its address size in **bytes**.
    pub fn for_context(ctx: &'a dwarfcheck_core::context::Context) -> Self {
        Params {
            vendor: &ctx.vendor,
            endian: ctx.target.endian,
            format: ctx.cu.as_ref().map(|c| c.format).unwrap_or_default(),
            address_size: ctx.address_bytes(),
        }
    }
}

/// One decoded operand value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperandValue {
    /// An unsigned fixed-size, ULEB128, address or DIE-offset operand.
    Unsigned(u64),
    /// A signed fixed-size, SLEB128 or branch-displacement operand.
    Signed(i64),
    /// The bytes of a block operand (its length prefix is not repeated).
    Block(Vec<u8>),
}

/// One whole operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedOp {
    /// Byte offset of the opcode in the decoded buffer.
    pub offset: usize,
    /// Length in **bytes**, opcode and operands included.
    pub length: usize,
    /// The operation's table row (name and operand shapes).
    pub spec: OpSpec,
    /// The `DW_OP_LLVM_user` sub-opcode, when the operation used that form.
    pub subop: Option<u64>,
    /// Operand values, one per entry of `spec.operands`.
    pub operands: Vec<OperandValue>,
    /// Byte offset of each operand in the decoded buffer, one per entry of
    /// `spec.operands` (for tools that rewrite an operand in place).
    pub operand_at: Vec<usize>,
}

impl DecodedOp {
    /// The operation.
    pub fn op(&self) -> Op {
        self.spec.op
    }
}

/// Why decoding stopped (mirrors the `expr.decode.*` rules of
/// `specs/rules/decoding.yaml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// No operation has this opcode (or `DW_OP_LLVM_user` sub-opcode) under
    /// the vendor profile.
    UnknownOpcode,
    /// The expression ends inside an operand.
    Truncated,
    /// A LEB128 operand does not fit in 64 bits.
    LebOverflow,
    /// The address size is not 1, 2, 4 or 8 bytes, so `DW_OP_addr` cannot
    /// be read.
    BadAddressSize,
}

/// A decoding failure at the operation starting at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// Byte offset of the opcode of the operation that failed to decode.
    pub offset: usize,
    /// What went wrong.
    pub kind: FaultKind,
}

impl Fault {
    /// A short English description.
    pub fn describe(&self) -> &'static str {
        match self.kind {
            FaultKind::UnknownOpcode => "unknown opcode",
            FaultKind::Truncated => "truncated operand",
            FaultKind::LebOverflow => "LEB128 operand does not fit in 64 bits",
            FaultKind::BadAddressSize => "unsupported address size",
        }
    }
}

fn leb_fault(e: LebError) -> FaultKind {
    match e {
        LebError::Truncated => FaultKind::Truncated,
        LebError::Overflow => FaultKind::LebOverflow,
    }
}

/// Reads an `n`-byte unsigned integer (`n` <= 8) in `endian` order.
pub fn read_fixed(bytes: &[u8], n: usize, endian: Endian) -> Option<u64> {
    let b = bytes.get(..n)?;
    let mut v: u64 = 0;
    match endian {
        Endian::Little => b.iter().rev().for_each(|x| v = (v << 8) | u64::from(*x)),
        Endian::Big => b.iter().for_each(|x| v = (v << 8) | u64::from(*x)),
    }
    Some(v)
}

/// Writes the low `n` bytes (`n` <= 8) of `v` in `endian` order.
pub fn write_fixed(out: &mut Vec<u8>, v: u64, n: usize, endian: Endian) {
    let le = v.to_le_bytes();
    match endian {
        Endian::Little => out.extend_from_slice(&le[..n]),
        Endian::Big => out.extend(le[..n].iter().rev()),
    }
}

fn sign_extend(v: u64, bytes: usize) -> i64 {
    let shift = 64 - 8 * bytes as u32;
    ((v << shift) as i64) >> shift
}

/// Decodes the operation whose opcode is at `bytes[pos]`.
///
/// Errors: [`Fault`] with `offset == pos` when the opcode is unknown under
/// the profile, an operand is cut short, or a LEB128 operand overflows.
pub fn decode_op(bytes: &[u8], pos: usize, p: &Params) -> Result<DecodedOp, Fault> {
    let fault = |kind| Fault { offset: pos, kind };
    let opcode = *bytes.get(pos).ok_or(fault(FaultKind::Truncated))?;
    let mut at = pos + 1;
    let (spec, subop) = match lookup(p.vendor, opcode) {
        Decoded::Op(spec) => (spec, None),
        Decoded::LlvmUser => {
            let (sub, n) = read_uleb(&bytes[at..]).map_err(|e| fault(leb_fault(e)))?;
            at += n;
            (lookup_llvm_user(sub).ok_or(fault(FaultKind::UnknownOpcode))?, Some(sub))
        }
        Decoded::Unknown => return Err(fault(FaultKind::UnknownOpcode)),
    };
    let mut operands = Vec::with_capacity(spec.operands.len());
    let mut operand_at = Vec::with_capacity(spec.operands.len());
    for shape in spec.operands {
        operand_at.push(at);
        let rest = &bytes[at..];
        let fixed = |n: usize| read_fixed(rest, n, p.endian).ok_or(fault(FaultKind::Truncated));
        let (value, used) = match shape {
            Operand::U8 => (OperandValue::Unsigned(fixed(1)?), 1),
            Operand::U16 => (OperandValue::Unsigned(fixed(2)?), 2),
            Operand::U32 => (OperandValue::Unsigned(fixed(4)?), 4),
            Operand::U64 => (OperandValue::Unsigned(fixed(8)?), 8),
            Operand::I8 => (OperandValue::Signed(sign_extend(fixed(1)?, 1)), 1),
            Operand::I16 | Operand::Branch => (OperandValue::Signed(sign_extend(fixed(2)?, 2)), 2),
            Operand::I32 => (OperandValue::Signed(sign_extend(fixed(4)?, 4)), 4),
            Operand::I64 => (OperandValue::Signed(fixed(8)? as i64), 8),
            Operand::Uleb => {
                let (v, n) = read_uleb(rest).map_err(|e| fault(leb_fault(e)))?;
                (OperandValue::Unsigned(v), n)
            }
            Operand::Sleb => {
                let (v, n) = read_sleb(rest).map_err(|e| fault(leb_fault(e)))?;
                (OperandValue::Signed(v), n)
            }
            Operand::Addr => {
                let n = usize::from(p.address_size);
                if !matches!(n, 1 | 2 | 4 | 8) {
                    return Err(fault(FaultKind::BadAddressSize));
                }
                (OperandValue::Unsigned(fixed(n)?), n)
            }
            Operand::DieOffset => {
                let n = p.format.offset_bytes();
                (OperandValue::Unsigned(fixed(n)?), n)
            }
            Operand::Block | Operand::Block1 => {
                let (len, n) = if *shape == Operand::Block {
                    read_uleb(rest).map_err(|e| fault(leb_fault(e)))?
                } else {
                    (fixed(1)?, 1)
                };
                let body = rest.get(n..).ok_or(fault(FaultKind::Truncated))?;
                if len > body.len() as u64 {
                    return Err(fault(FaultKind::Truncated));
                }
                let len = len as usize;
                (OperandValue::Block(body[..len].to_vec()), n + len)
            }
        };
        operands.push(value);
        at += used;
    }
    Ok(DecodedOp { offset: pos, length: at - pos, spec, subop, operands, operand_at })
}

/// Decodes a whole expression: the operations before the first fault, and
/// the fault if there is one (then nothing after it is decoded).
pub fn decode_all(bytes: &[u8], p: &Params) -> (Vec<DecodedOp>, Option<Fault>) {
    let mut ops = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        match decode_op(bytes, pos, p) {
            Ok(op) => {
                pos += op.length;
                ops.push(op);
            }
            Err(f) => return (ops, Some(f)),
        }
    }
    (ops, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: &VendorProfile) -> Params<'_> {
        Params { vendor: v, endian: Endian::Little, format: Format::Dwarf32, address_size: 8 }
    }

    #[test]
    fn decodes_operands_by_shape() {
        let v = VendorProfile::gnu();
        // DW_OP_const2s -2 (0x0b fe ff), DW_OP_bregx 7 -8 (0x92 07 78).
        let (ops, fault) = decode_all(&[0x0b, 0xfe, 0xff, 0x92, 0x07, 0x78], &params(&v));
        assert_eq!(fault, None);
        assert_eq!(ops[0].operands, vec![OperandValue::Signed(-2)]);
        assert_eq!(ops[1].offset, 3);
        assert_eq!(ops[1].operands, vec![OperandValue::Unsigned(7), OperandValue::Signed(-8)]);
    }

    #[test]
    fn faults_carry_opcode_offset() {
        let v = VendorProfile::dwarf5();
        // DW_OP_lit1, then DW_OP_implicit_value claiming 4 bytes but giving 1.
        let (ops, fault) = decode_all(&[0x31, 0x9e, 0x04, 0x00], &params(&v));
        assert_eq!(ops.len(), 1);
        assert_eq!(fault, Some(Fault { offset: 1, kind: FaultKind::Truncated }));
        // 0xf0 is DW_OP_GNU_uninit only under a GNU profile.
        let (_, fault) = decode_all(&[0x50, 0xf0], &params(&v));
        assert_eq!(fault, Some(Fault { offset: 1, kind: FaultKind::UnknownOpcode }));
        let big = [0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02];
        assert_eq!(decode_all(&big, &params(&v)).1.map(|f| f.kind), Some(FaultKind::LebOverflow));
    }

    #[test]
    fn big_endian_fixed_operands() {
        let v = VendorProfile::dwarf5();
        let p = Params { endian: Endian::Big, address_size: 4, ..params(&v) };
        let (ops, _) = decode_all(&[0x03, 0x12, 0x34, 0x56, 0x78], &p);
        assert_eq!(ops[0].operands, vec![OperandValue::Unsigned(0x1234_5678)]);
    }
}
