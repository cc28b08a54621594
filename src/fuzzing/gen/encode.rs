//! Operations written straight to expression bytes for the generator
//! (no text and no assembler on the fuzzing path): the opcode under the
//! context's vendor profile from `dwarfcheck_core::encoding::op`, then
//! each operand in the shape the table gives.

use crate::asm::decode::write_fixed;
use dwarfcheck_core::context::{Context, MachineState};
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck_core::encoding::op::{encoding_of, Operand};
use dwarfcheck_core::encoding::{Format, Op, VendorProfile};
use dwarfcheck_core::target::Endian;

/// One operand value: unsigned, signed, or the bytes of a block.
#[derive(Debug, Clone, Copy)]
pub(super) enum Arg<'a> {
    /// An unsigned value (LEB128, fixed size, address, DIE offset).
    U(u64),
    /// A signed value (SLEB128, fixed size, branch displacement).
    S(i64),
    /// A block's bytes, without its length.
    B(&'a [u8]),
}

impl Arg<'_> {
    fn bits(self) -> u64 {
        match self {
            Arg::U(v) => v,
            Arg::S(v) => v as u64,
            Arg::B(_) => 0,
        }
    }
}

/// What the encoding depends on: the vendor profile, byte order, address
/// size (**bytes**) and DWARF format of the context.
#[derive(Debug, Clone)]
pub(super) struct Encoder {
    vendor: VendorProfile,
    endian: Endian,
    address_bytes: usize,
    offset_bytes: usize,
}

impl Encoder {
    /// The encoder of expressions for `ctx`.
    pub(super) fn of(ctx: &Context) -> Encoder {
        let format = ctx.cu.as_ref().map(|c| c.format).unwrap_or_default();
        Encoder {
            vendor: ctx.vendor.clone(),
            endian: ctx.target.endian,
            address_bytes: usize::from(ctx.address_bytes()),
            offset_bytes: if format == Format::Dwarf64 { 8 } else { 4 },
        }
    }

    fn fixed(&self, out: &mut Vec<u8>, v: u64, n: usize) {
        write_fixed(out, v, n.min(8), self.endian);
    }

    /// Appends `op` with `args` (one per operand, in order) to `out`.
    /// Returns false, leaving `out` as it was, when the profile cannot
    /// encode `op` or the arguments do not fit its operands. An unsigned
    /// LEB128 operand given a negative value takes its magnitude.
    pub(super) fn op(&self, out: &mut Vec<u8>, op: Op, args: &[Arg]) -> bool {
        let Some((code, sub, spec)) = encoding_of(&self.vendor, op) else { return false };
        if spec.operands.len() != args.len() {
            return false;
        }
        let start = out.len();
        out.push(code);
        if let Some(s) = sub {
            write_uleb(out, s);
        }
        for (shape, a) in spec.operands.iter().zip(args) {
            match (shape, *a) {
                (Operand::U8 | Operand::I8, a) => out.push(a.bits() as u8),
                (Operand::U16 | Operand::I16 | Operand::Branch, a) => self.fixed(out, a.bits(), 2),
                (Operand::U32 | Operand::I32, a) => self.fixed(out, a.bits(), 4),
                (Operand::U64 | Operand::I64, a) => self.fixed(out, a.bits(), 8),
                (Operand::Addr, a) => self.fixed(out, a.bits(), self.address_bytes),
                (Operand::DieOffset, a) => self.fixed(out, a.bits(), self.offset_bytes),
                (Operand::Uleb, Arg::U(v)) => write_uleb(out, v),
                (Operand::Uleb, Arg::S(v)) => write_uleb(out, v.unsigned_abs()),
                (Operand::Sleb, Arg::S(v)) => write_sleb(out, v),
                (Operand::Sleb, Arg::U(v)) => write_sleb(out, v as i64),
                (Operand::Block, Arg::B(b)) => {
                    write_uleb(out, b.len() as u64);
                    out.extend(b);
                }
                (Operand::Block1, Arg::B(b)) if b.len() < 256 => {
                    out.push(b.len() as u8);
                    out.extend(b);
                }
                _ => {
                    out.truncate(start);
                    return false;
                }
            }
        }
        true
    }

    /// `op` with `args` as a new byte vector; `None` as for
    /// [`Encoder::op`].
    pub(super) fn one(&self, op: Op, args: &[Arg]) -> Option<Vec<u8>> {
        let mut v = Vec::with_capacity(8);
        self.op(&mut v, op, args).then_some(v)
    }

    /// `DW_OP_regN` (or `DW_OP_regx` past 31) of register `r`.
    pub(super) fn reg(&self, out: &mut Vec<u8>, r: u64) -> bool {
        match u8::try_from(r) {
            Ok(n) if n < 32 => self.op(out, Op::Reg(n), &[]),
            _ => self.op(out, Op::Regx, &[Arg::U(r)]),
        }
    }

    /// `DW_OP_bregN off` (or `DW_OP_bregx` past 31) of register `r`.
    pub(super) fn breg(&self, out: &mut Vec<u8>, r: u64, off: i64) -> bool {
        match u8::try_from(r) {
            Ok(n) if n < 32 => self.op(out, Op::Breg(n), &[Arg::S(off)]),
            _ => self.op(out, Op::Bregx, &[Arg::U(r), Arg::S(off)]),
        }
    }
}
