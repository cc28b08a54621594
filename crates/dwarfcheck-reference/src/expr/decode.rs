//! Static decoding of an operation expression into whole operations
//! (docs/architecture.md §2, "Decoding is static"; rules `expr.decode.*`).
//!
//! The opcode table says which operation a byte names and the shape of its
//! operands; this module reads the operands itself, byte by byte.

use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::encoding::leb128::{read_sleb, read_uleb, LebError};
use dwarfcheck_core::encoding::op::{lookup, lookup_llvm_user, Decoded};
use dwarfcheck_core::encoding::{Op, Operand};
use dwarfcheck_core::rules::{id, RuleId};
use dwarfcheck_core::target::{Endian, Target};

/// One decoded operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// An unsigned operand (fixed size, ULEB128, address, DIE offset).
    U(u64),
    /// A signed operand (fixed size, SLEB128, branch displacement).
    S(i64),
    /// A block of bytes (`DW_OP_implicit_value`, `DW_OP_const_type`,
    /// `DW_OP_entry_value`).
    Block(Vec<u8>),
}

/// One decoded operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    /// Byte offset of the opcode in the expression.
    pub at: usize,
    /// Byte offset one past the last operand byte.
    pub end: usize,
    /// The operation.
    pub op: Op,
    /// llvm-dwarfdump's name of the operation.
    pub name: &'static str,
    /// Operands in encoding order.
    pub args: Vec<Arg>,
}

impl Insn {
    /// Operand `i` as unsigned (0 if it is not one: the table guarantees
    /// the shape, so this never happens for a decoded operation).
    pub fn u(&self, i: usize) -> u64 {
        match self.args.get(i) {
            Some(Arg::U(v)) => *v,
            Some(Arg::S(v)) => *v as u64,
            _ => 0,
        }
    }
    /// Operand `i` as signed.
    pub fn s(&self, i: usize) -> i64 {
        match self.args.get(i) {
            Some(Arg::S(v)) => *v,
            Some(Arg::U(v)) => *v as i64,
            _ => 0,
        }
    }
    /// Operand `i` as a block.
    pub fn block(&self, i: usize) -> &[u8] {
        match self.args.get(i) {
            Some(Arg::Block(b)) => b,
            _ => &[],
        }
    }

    /// llvm-dwarfdump-like text: the name, then operands (unsigned in hex,
    /// signed in decimal, blocks as a size and hex bytes); register operands
    /// use the target's register name in upper case, as llvm-dwarfdump
    /// prints them (`DW_OP_breg7 RSP+16`, `DW_OP_regx XMM0`).
    pub fn text(&self, target: &Target) -> String {
        let reg = |n: u64| match target.register(n) {
            Some(r) => r.name.to_uppercase(),
            None => format!("0x{n:x}"),
        };
        let mut s = match self.op {
            Op::Lit(_) | Op::Reg(_) | Op::Breg(_) => dwarfcheck_core::encoding::op::name_of(self.op),
            _ => self.name.to_string(),
        };
        match self.op {
            Op::Reg(n) => s.push_str(&format!(" {}", reg(u64::from(n)))),
            Op::Breg(n) => s.push_str(&format!(" {}{:+}", reg(u64::from(n)), self.s(0))),
            Op::Regx => s.push_str(&format!(" {}", reg(self.u(0)))),
            Op::Bregx => s.push_str(&format!(" {}{:+}", reg(self.u(0)), self.s(1))),
            Op::RegvalType | Op::GnuRegvalType => s.push_str(&format!(" {} 0x{:x}", reg(self.u(0)), self.u(1))),
            _ => {
                for a in &self.args {
                    match a {
                        Arg::U(v) => s.push_str(&format!(" 0x{v:x}")),
                        Arg::S(v) => s.push_str(&format!(" {v}")),
                        Arg::Block(b) => {
                            s.push_str(&format!(" 0x{:x}", b.len()));
                            for x in b {
                                s.push_str(&format!(" 0x{x:02x}"));
                            }
                        }
                    }
                }
            }
        }
        s
    }
}

/// Decodes all of `expr` under the state's vendor profile ([`MachineState::vendor`]),
/// reading addresses of its address size and section offsets of its unit's
/// format (32-bit DWARF without a unit; DWARF 5 §7.7.1).
///
/// Errors: the rule (`expr.decode.unknown-opcode`,
/// `expr.decode.truncated-operand`, `expr.decode.leb128-overflow`) and the
/// byte offset of the opcode of the first operation that cannot be decoded.
pub fn decode(expr: &[u8], ctx: &dyn MachineState) -> Result<Vec<Insn>, (RuleId, usize)> {
    // Room for the short expressions most are (at most one operation per byte).
    let mut out = Vec::with_capacity(expr.len().min(4));
    let mut pos = 0;
    while pos < expr.len() {
        let at = pos;
        let opcode = expr[pos];
        pos += 1;
        let spec = match lookup(ctx.vendor(), opcode) {
            Decoded::Op(spec) => spec,
            Decoded::LlvmUser => {
                let (sub, n) = read_uleb(&expr[pos..]).map_err(|e| (leb_rule(e), at))?;
                pos += n;
                lookup_llvm_user(sub).ok_or((id::EXPR_DECODE_UNKNOWN_OPCODE, at))?
            }
            Decoded::Unknown => return Err((id::EXPR_DECODE_UNKNOWN_OPCODE, at)),
        };
        let mut args = Vec::with_capacity(spec.operands.len());
        for operand in spec.operands {
            let (arg, n) = read_operand(*operand, &expr[pos..], ctx).map_err(|r| (r, at))?;
            args.push(arg);
            pos += n;
        }
        out.push(Insn { at, end: pos, op: spec.op, name: spec.name, args });
    }
    Ok(out)
}

fn leb_rule(e: LebError) -> RuleId {
    match e {
        LebError::Truncated => id::EXPR_DECODE_TRUNCATED_OPERAND,
        LebError::Overflow => id::EXPR_DECODE_LEB128_OVERFLOW,
    }
}

/// Reads `n` bytes as an unsigned number in the target's byte order.
fn fixed(bytes: &[u8], n: usize, big: bool) -> Result<u64, RuleId> {
    let b = bytes.get(..n).ok_or(id::EXPR_DECODE_TRUNCATED_OPERAND)?;
    let mut v: u128 = 0;
    if big {
        for x in b {
            v = (v << 8) | u128::from(*x);
        }
    } else {
        for x in b.iter().rev() {
            v = (v << 8) | u128::from(*x);
        }
    }
    Ok(v as u64)
}

fn read_operand(operand: Operand, bytes: &[u8], ctx: &dyn MachineState) -> Result<(Arg, usize), RuleId> {
    let big = ctx.target().endian == Endian::Big;
    Ok(match operand {
        Operand::U8 => (Arg::U(fixed(bytes, 1, big)?), 1),
        Operand::I8 => (Arg::S(fixed(bytes, 1, big)? as u8 as i8 as i64), 1),
        Operand::U16 => (Arg::U(fixed(bytes, 2, big)?), 2),
        Operand::I16 | Operand::Branch => (Arg::S(fixed(bytes, 2, big)? as u16 as i16 as i64), 2),
        Operand::U32 => (Arg::U(fixed(bytes, 4, big)?), 4),
        Operand::I32 => (Arg::S(fixed(bytes, 4, big)? as u32 as i32 as i64), 4),
        Operand::U64 => (Arg::U(fixed(bytes, 8, big)?), 8),
        Operand::I64 => (Arg::S(fixed(bytes, 8, big)? as i64), 8),
        Operand::Uleb => {
            let (v, n) = read_uleb(bytes).map_err(leb_rule)?;
            (Arg::U(v), n)
        }
        Operand::Sleb => {
            let (v, n) = read_sleb(bytes).map_err(leb_rule)?;
            (Arg::S(v), n)
        }
        Operand::Addr => {
            let n = usize::from(ctx.address_bytes());
            (Arg::U(fixed(bytes, n, big)?), n)
        }
        Operand::DieOffset => {
            let n = ctx.unit().map(|u| u.format.offset_bytes()).unwrap_or(4);
            (Arg::U(fixed(bytes, n, big)?), n)
        }
        Operand::Block => {
            let (len, n) = read_uleb(bytes).map_err(leb_rule)?;
            let block = usize::try_from(len)
                .ok()
                .and_then(|l| bytes.get(n..)?.get(..l))
                .ok_or(id::EXPR_DECODE_TRUNCATED_OPERAND)?;
            (Arg::Block(block.to_vec()), n + block.len())
        }
        Operand::Block1 => {
            let len = usize::from(*bytes.first().ok_or(id::EXPR_DECODE_TRUNCATED_OPERAND)?);
            let block = bytes.get(1..1 + len).ok_or(id::EXPR_DECODE_TRUNCATED_OPERAND)?;
            (Arg::Block(block.to_vec()), 1 + len)
        }
    })
}
