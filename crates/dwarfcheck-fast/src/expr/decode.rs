//! One-pass decoder: operation bytes to a compact instruction vector with
//! pre-resolved branch targets (DWARF 5 §7.7.1, hetero-2020 "DWARF Operation
//! Expressions"; rules `expr.decode.*`).

use dwarfcheck_core::encoding::leb128::{read_sleb, read_uleb, LebError};
use dwarfcheck_core::encoding::op::{lookup, lookup_llvm_user, Decoded};
use dwarfcheck_core::encoding::{Op, OpSpec, Operand, VendorProfile};
use dwarfcheck_core::rules::{id, RuleId};

/// What an instruction does, with operands already read.
///
/// Operand meaning per kind is documented on [`Insn`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Push generic value `a` (`DW_OP_lit*`, `DW_OP_const*`).
    Const,
    /// Push memory location at byte address `a` (`DW_OP_addr`).
    Addr,
    /// Push memory location at `.debug_addr[a]` (`DW_OP_addrx`, `DW_OP_GNU_addr_index`).
    Addrx,
    /// Push generic value `.debug_addr[a]` (`DW_OP_constx`, `DW_OP_GNU_const_index`).
    Constx,
    /// `DW_OP_dup`.
    Dup,
    /// `DW_OP_drop`.
    Drop,
    /// `DW_OP_over`.
    Over,
    /// `DW_OP_pick a`.
    Pick,
    /// `DW_OP_swap`.
    Swap,
    /// `DW_OP_rot`.
    Rot,
    /// `DW_OP_deref`.
    Deref,
    /// `DW_OP_deref_size a` (bytes).
    DerefSize,
    /// `DW_OP_deref_type a (bytes), b (DIE)`.
    DerefType,
    /// `DW_OP_xderef`.
    Xderef,
    /// `DW_OP_xderef_size a`.
    XderefSize,
    /// `DW_OP_xderef_type a, b`.
    XderefType,
    /// `DW_OP_abs`.
    Abs,
    /// `DW_OP_and`.
    And,
    /// `DW_OP_div`.
    Div,
    /// `DW_OP_minus`.
    Minus,
    /// `DW_OP_mod`.
    Mod,
    /// `DW_OP_mul`.
    Mul,
    /// `DW_OP_neg`.
    Neg,
    /// `DW_OP_not`.
    Not,
    /// `DW_OP_or`.
    Or,
    /// `DW_OP_plus`.
    Plus,
    /// `DW_OP_plus_uconst a`.
    PlusUconst,
    /// `DW_OP_shl`.
    Shl,
    /// `DW_OP_shr`.
    Shr,
    /// `DW_OP_shra`.
    Shra,
    /// `DW_OP_xor`.
    Xor,
    /// `DW_OP_eq`.
    Eq,
    /// `DW_OP_ge`.
    Ge,
    /// `DW_OP_gt`.
    Gt,
    /// `DW_OP_le`.
    Le,
    /// `DW_OP_lt`.
    Lt,
    /// `DW_OP_ne`.
    Ne,
    /// `DW_OP_skip`: `a` = target instruction index ([`END`] or [`BAD_TARGET`]).
    Skip,
    /// `DW_OP_bra`: as `Skip`.
    Bra,
    /// Register location `a` (`DW_OP_reg*`, `DW_OP_regx`).
    Reg,
    /// `DW_OP_breg*`/`DW_OP_bregx`: register `a`, displacement `b as i64`.
    Breg,
    /// `DW_OP_fbreg`: displacement `b as i64`.
    Fbreg,
    /// `DW_OP_piece a` (bytes).
    Piece,
    /// `DW_OP_bit_piece a (bits), b (bit displacement)`.
    BitPiece,
    /// `DW_OP_nop`, `DW_OP_GNU_uninit`.
    Nop,
    /// `DW_OP_LLVM_form_aspace_address`.
    FormAspaceAddress,
    /// `DW_OP_LLVM_push_lane`.
    PushLane,
    /// `DW_OP_LLVM_offset`.
    Offset,
    /// `DW_OP_LLVM_offset_uconst a` (bytes).
    OffsetUconst,
    /// `DW_OP_LLVM_bit_offset`.
    BitOffset,
    /// `DW_OP_LLVM_undefined`.
    Undefined,
    /// `DW_OP_LLVM_aspace_bregx`: register `a`, displacement `b` (SLEB as
    /// `i64`, or ULEB, per vendor profile).
    AspaceBregx,
    /// `DW_OP_LLVM_piece_end`.
    PieceEnd,
    /// `DW_OP_LLVM_extend a (element bits), b (count)`.
    Extend,
    /// `DW_OP_LLVM_select_bit_piece a (element bits), b (count)`.
    SelectBitPiece,
    /// `DW_OP_push_object_address`.
    PushObjectAddress,
    /// `DW_OP_form_tls_address`, `DW_OP_GNU_push_tls_address`.
    FormTlsAddress,
    /// `DW_OP_call_frame_cfa`.
    CallFrameCfa,
    /// `DW_OP_implicit_value`: block at byte `a`, length `b`.
    ImplicitValue,
    /// `DW_OP_stack_value`.
    StackValue,
    /// `DW_OP_implicit_pointer`: DIE `a`, displacement `b as i64`.
    ImplicitPointer,
    /// `DW_OP_const_type`: DIE `a`, block at byte `b`, length `c`.
    ConstType,
    /// `DW_OP_regval_type`: register `a`, DIE `b`.
    RegvalType,
    /// `DW_OP_convert a`.
    Convert,
    /// `DW_OP_reinterpret a`.
    Reinterpret,
    /// `DW_OP_call2`/`DW_OP_call4` (`a` relative to the unit) and
    /// `DW_OP_call_ref` (`a` relative to `.debug_info`); `b` = 1 for
    /// `call_ref`.
    Call,
    /// `DW_OP_entry_value`, `DW_OP_GNU_entry_value`: block at byte `a`, length `b`.
    EntryValue,
    /// `DW_OP_LLVM_call_frame_entry_reg a`.
    CallFrameEntryReg,
    /// `DW_OP_LLVM_aspace_implicit_pointer`: DIE `a`, displacement `b as i64`.
    AspaceImplicitPointer,
    /// An operation this evaluator does not implement.
    Unsupported,
}

impl Kind {
    /// Whether the operation pushes one entry made from its operands and
    /// the machine state alone, popping nothing (see `direct`).
    pub fn produces(self) -> bool {
        matches!(
            self,
            Kind::Const
                | Kind::Addr
                | Kind::Reg
                | Kind::Breg
                | Kind::Fbreg
                | Kind::CallFrameCfa
                | Kind::ImplicitPointer
                | Kind::EntryValue
        )
    }
}

/// Branch target meaning "one past the last operation": evaluation ends.
pub const END: u64 = u64::MAX - 1;
/// Branch target inside the expression that is not the start of an
/// operation (ill-formed if taken).
pub const BAD_TARGET: u64 = u64::MAX;
/// Branch target before offset 0 or beyond one past the end (ill-formed if taken).
pub const OUT_OF_RANGE: u64 = u64::MAX - 2;

/// One decoded operation: 32 bytes, operands pre-read.
#[derive(Debug, Clone, Copy)]
pub struct Insn {
    /// First operand (meaning per [`Kind`]).
    pub a: u64,
    /// Second operand.
    pub b: u64,
    /// Byte offset of the opcode in the expression.
    pub off: u32,
    /// Third operand (block length of `DW_OP_const_type`).
    pub c: u32,
    /// What to do.
    pub kind: Kind,
    /// The operation as decoded (for names and diagnostics).
    pub op: Op,
}

/// Why decoding stopped: rule and opcode offset of the first bad operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// `expr.decode.*` rule.
    pub rule: RuleId,
    /// Byte offset of the bad operation's opcode.
    pub at: u64,
}

/// Encoding parameters the operand sizes depend on: what is the same for
/// every expression of a unit, so that a caller reads it from the machine
/// state once per unit ([`Encoding::of`]) rather than at every decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encoding {
    /// The vendor profile for 0xe0–0xff, as the index of its opcode table
    /// ([`Encoding::profile`]).
    profile: u8,
    /// `DW_OP_addr` operand size in **bytes**.
    pub address_bytes: u8,
    /// DIE-offset operand size in **bytes** (4 or 8).
    pub offset_bytes: u8,
    /// Multi-byte operands are big-endian.
    pub big_endian: bool,
}

impl Encoding {
    /// The encoding of expressions evaluated in `state`: its vendor
    /// profile, address size, its unit's offset size (4 without a unit)
    /// and its target's byte order.
    pub fn of(state: &dyn dwarfcheck_core::context::MachineState) -> Self {
        Encoding {
            profile: Encoding::profile(state.vendor()),
            address_bytes: state.address_bytes(),
            offset_bytes: state.unit().map_or(4, |u| u.format.offset_bytes()) as u8,
            big_endian: state.target().endian == dwarfcheck_core::target::Endian::Big,
        }
    }

    /// The index of `vendor`'s opcode table: one bit per switch of the
    /// profile (its name does not change how bytes decode).
    pub fn profile(vendor: &VendorProfile) -> u8 {
        u8::from(vendor.gnu)
            | u8::from(vendor.hetero_2020) << 1
            | u8::from(vendor.llvm_user) << 2
            | u8::from(vendor.aspace_bregx_signed) << 3
            | u8::from(vendor.intel) << 4
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    big_endian: bool,
}

fn leb_rule(e: LebError) -> RuleId {
    match e {
        LebError::Truncated => id::EXPR_DECODE_TRUNCATED_OPERAND,
        LebError::Overflow => id::EXPR_DECODE_LEB128_OVERFLOW,
    }
}

impl Reader<'_> {
    fn fixed(&mut self, n: usize) -> Result<u64, RuleId> {
        let s = self.bytes.get(self.pos..self.pos + n).ok_or(id::EXPR_DECODE_TRUNCATED_OPERAND)?;
        self.pos += n;
        let mut v = 0u64;
        if self.big_endian {
            for &b in s.iter().take(8) {
                v = (v << 8) | u64::from(b);
            }
            // Wider than 8 bytes (odd unit address sizes): keep the low bytes.
            if n > 8 {
                v = 0;
                for &b in &s[n - 8..] {
                    v = (v << 8) | u64::from(b);
                }
            }
        } else {
            for (i, &b) in s.iter().take(8).enumerate() {
                v |= u64::from(b) << (8 * i);
            }
        }
        Ok(v)
    }
    fn sfixed(&mut self, n: usize) -> Result<u64, RuleId> {
        let v = self.fixed(n)?;
        let sh = 64 - 8 * n as u32;
        Ok((((v << sh) as i64) >> sh) as u64)
    }
    #[inline]
    fn uleb(&mut self) -> Result<u64, RuleId> {
        // (One byte, the common case, without the general reader.)
        if let Some(&b) = self.bytes.get(self.pos).filter(|&&b| b < 0x80) {
            self.pos += 1;
            return Ok(u64::from(b));
        }
        let (v, n) = read_uleb(&self.bytes[self.pos..]).map_err(leb_rule)?;
        self.pos += n;
        Ok(v)
    }
    #[inline]
    fn sleb(&mut self) -> Result<u64, RuleId> {
        if let Some(&b) = self.bytes.get(self.pos).filter(|&&b| b < 0x80) {
            self.pos += 1;
            // Bit 6 is the sign of a one-byte number.
            return Ok((((b << 1) as i8) >> 1) as i64 as u64);
        }
        let (v, n) = read_sleb(&self.bytes[self.pos..]).map_err(leb_rule)?;
        self.pos += n;
        Ok(v as u64)
    }
    /// Skips a block of `len` bytes; returns its start.
    fn block(&mut self, len: u64) -> Result<u64, RuleId> {
        let start = self.pos;
        let rest = (self.bytes.len() - self.pos) as u64;
        if len > rest {
            return Err(id::EXPR_DECODE_TRUNCATED_OPERAND);
        }
        self.pos += len as usize;
        Ok(start as u64)
    }
}

/// What operation `op` does, as the interpreter dispatches it.
pub(super) fn kind_of(op: Op) -> Kind {
    use Kind as K;
    match op {
        Op::Addr => K::Addr,
        Op::Deref => K::Deref,
        Op::Const1u | Op::Const1s | Op::Const2u | Op::Const2s | Op::Const4u | Op::Const4s => K::Const,
        Op::Const8u | Op::Const8s | Op::Constu | Op::Consts | Op::Lit(_) => K::Const,
        Op::Dup => K::Dup,
        Op::Drop => K::Drop,
        Op::Over => K::Over,
        Op::Pick => K::Pick,
        Op::Swap => K::Swap,
        Op::Rot => K::Rot,
        Op::Xderef => K::Xderef,
        Op::Abs => K::Abs,
        Op::And => K::And,
        Op::Div => K::Div,
        Op::Minus => K::Minus,
        Op::Mod => K::Mod,
        Op::Mul => K::Mul,
        Op::Neg => K::Neg,
        Op::Not => K::Not,
        Op::Or => K::Or,
        Op::Plus => K::Plus,
        Op::PlusUconst => K::PlusUconst,
        Op::Shl => K::Shl,
        Op::Shr => K::Shr,
        Op::Shra => K::Shra,
        Op::Xor => K::Xor,
        Op::Bra => K::Bra,
        Op::Eq => K::Eq,
        Op::Ge => K::Ge,
        Op::Gt => K::Gt,
        Op::Le => K::Le,
        Op::Lt => K::Lt,
        Op::Ne => K::Ne,
        Op::Skip => K::Skip,
        Op::Reg(_) | Op::Regx => K::Reg,
        Op::Breg(_) | Op::Bregx => K::Breg,
        Op::Fbreg => K::Fbreg,
        Op::Piece => K::Piece,
        Op::DerefSize => K::DerefSize,
        Op::XderefSize => K::XderefSize,
        Op::Nop | Op::GnuUninit => K::Nop,
        Op::LlvmFormAspaceAddress => K::FormAspaceAddress,
        Op::LlvmPushLane => K::PushLane,
        Op::LlvmOffset => K::Offset,
        Op::LlvmOffsetUconst => K::OffsetUconst,
        Op::LlvmBitOffset => K::BitOffset,
        Op::LlvmUndefined => K::Undefined,
        Op::LlvmAspaceBregx => K::AspaceBregx,
        Op::LlvmPieceEnd => K::PieceEnd,
        Op::LlvmExtend => K::Extend,
        Op::LlvmSelectBitPiece => K::SelectBitPiece,
        Op::PushObjectAddress => K::PushObjectAddress,
        Op::FormTlsAddress | Op::GnuPushTlsAddress => K::FormTlsAddress,
        Op::CallFrameCfa => K::CallFrameCfa,
        Op::BitPiece => K::BitPiece,
        Op::ImplicitValue => K::ImplicitValue,
        Op::StackValue => K::StackValue,
        Op::ImplicitPointer | Op::GnuImplicitPointer => K::ImplicitPointer,
        Op::Addrx | Op::GnuAddrIndex => K::Addrx,
        Op::Constx | Op::GnuConstIndex => K::Constx,
        Op::ConstType | Op::GnuConstType => K::ConstType,
        Op::RegvalType | Op::GnuRegvalType => K::RegvalType,
        Op::DerefType | Op::GnuDerefType => K::DerefType,
        Op::XderefType => K::XderefType,
        Op::Convert | Op::GnuConvert => K::Convert,
        Op::Reinterpret | Op::GnuReinterpret => K::Reinterpret,
        Op::Call2 | Op::Call4 | Op::CallRef => K::Call,
        Op::EntryValue | Op::GnuEntryValue => K::EntryValue,
        Op::LlvmCallFrameEntryReg => K::CallFrameEntryReg,
        Op::LlvmAspaceImplicitPointer => K::AspaceImplicitPointer,
        _ => K::Unsupported,
    }
}

/// The meaning of every leading opcode byte under the profile with table
/// index `key` ([`Encoding::profile`]), computed once per distinct profile
/// (the shared table lookup is a linear search).
fn table(key: u8) -> &'static [(Decoded, Kind); 256] {
    use std::sync::OnceLock;
    static TABLES: [OnceLock<[(Decoded, Kind); 256]>; 32] = [const { OnceLock::new() }; 32];
    TABLES[usize::from(key & 31)].get_or_init(|| {
        let profile = VendorProfile {
            name: String::new(),
            gnu: key & 1 != 0,
            hetero_2020: key & 2 != 0,
            llvm_user: key & 4 != 0,
            aspace_bregx_signed: key & 8 != 0,
            intel: key & 16 != 0,
        };
        std::array::from_fn(|c| {
            let d = lookup(&profile, c as u8);
            let k = match d {
                Decoded::Op(s) => kind_of(s.op),
                _ => Kind::Unsupported,
            };
            (d, k)
        })
    })
}

/// Decodes one operation at `r.pos` (the opcode) into an instruction.
/// Branch targets are left as byte offsets in `a` (resolved later).
fn decode_one(r: &mut Reader<'_>, enc: &Encoding, tab: &[(Decoded, Kind); 256]) -> Result<Insn, RuleId> {
    let off = r.pos;
    let opcode = r.bytes[off];
    r.pos += 1;
    let (spec, kind): (OpSpec, Kind) = match tab[opcode as usize] {
        (Decoded::Op(s), k) => (s, k),
        (Decoded::LlvmUser, _) => {
            let sub = r.uleb()?;
            let s = lookup_llvm_user(sub).ok_or(id::EXPR_DECODE_UNKNOWN_OPCODE)?;
            (s, kind_of(s.op))
        }
        (Decoded::Unknown, _) => return Err(id::EXPR_DECODE_UNKNOWN_OPCODE),
    };
    let mut ops = [0u64; 3];
    // (The operand lists real expressions use most, read directly.)
    match spec.operands {
        [] => return Ok(insn(spec.op, kind, off, ops)),
        [Operand::Uleb] => ops[0] = r.uleb()?,
        [Operand::Sleb] => ops[0] = r.sleb()?,
        [Operand::Uleb, Operand::Sleb] => (ops[0], ops[1]) = (r.uleb()?, r.sleb()?),
        [Operand::Addr] => ops[0] = r.fixed(usize::from(enc.address_bytes))?,
        _ => read_operands(r, enc, spec.operands, &mut ops)?,
    }
    Ok(insn(spec.op, kind, off, ops))
}

/// Reads `operands` at `r.pos` into `ops` (a block is its start and its
/// length; a branch, its target byte offset).
fn read_operands(r: &mut Reader<'_>, enc: &Encoding, operands: &[Operand], ops: &mut [u64; 3]) -> Result<(), RuleId> {
    let mut n = 0;
    for operand in operands {
        match operand {
            Operand::U8 => ops[n] = r.fixed(1)?,
            Operand::I8 => ops[n] = r.sfixed(1)?,
            Operand::U16 => ops[n] = r.fixed(2)?,
            Operand::I16 => ops[n] = r.sfixed(2)?,
            Operand::U32 => ops[n] = r.fixed(4)?,
            Operand::I32 => ops[n] = r.sfixed(4)?,
            Operand::U64 | Operand::I64 => ops[n] = r.fixed(8)?,
            Operand::Uleb => ops[n] = r.uleb()?,
            Operand::Sleb => ops[n] = r.sleb()?,
            Operand::Addr => ops[n] = r.fixed(usize::from(enc.address_bytes))?,
            Operand::DieOffset => ops[n] = r.fixed(usize::from(enc.offset_bytes))?,
            Operand::Block => {
                let len = r.uleb()?;
                ops[n] = r.block(len)?;
                n += 1;
                ops[n] = len;
            }
            Operand::Block1 => {
                let len = r.fixed(1)?;
                ops[n] = r.block(len)?;
                n += 1;
                ops[n] = len;
            }
            Operand::Branch => {
                let d = r.sfixed(2)? as i64;
                // Target byte offset, relative to the end of this operation.
                ops[n] = (r.pos as i64).wrapping_add(d) as u64;
            }
        }
        n += 1;
    }
    Ok(())
}

/// The instruction of operation `op` (`kind`) at byte `off` with operands
/// `ops` as read.
#[inline]
pub(super) fn insn(op: Op, kind: Kind, off: usize, ops: [u64; 3]) -> Insn {
    let (a, b, c) = match op {
        Op::Lit(k) => (u64::from(k), 0, 0),
        Op::Reg(k) => (u64::from(k), 0, 0),
        Op::Breg(k) => (u64::from(k), ops[0], 0),
        Op::Fbreg => (0, ops[0], 0),
        Op::CallRef => (ops[0], 1, 0),
        // DIE, block start, block length.
        Op::ConstType | Op::GnuConstType => (ops[0], ops[1], ops[2] as u32),
        _ => (ops[0], ops[1], ops[2] as u32),
    };
    Insn { a, b, off: off as u32, c, kind, op }
}

/// Decodes a whole operation expression.
///
/// Errors: the first operation that does not decode, as
/// `expr.decode.unknown-opcode`, `expr.decode.truncated-operand` or
/// `expr.decode.leb128-overflow` with its opcode offset. Branch targets are
/// resolved to instruction indices ([`END`] for one past the last
/// operation, [`OUT_OF_RANGE`] before 0 or past the end, [`BAD_TARGET`]
/// inside an operation).
pub fn decode(bytes: &[u8], enc: &Encoding, out: &mut Vec<Insn>) -> Result<(), DecodeError> {
    out.clear();
    let mut r = Reader { bytes, pos: 0, big_endian: enc.big_endian };
    let tab = table(enc.profile);
    let mut branches = false;
    while r.pos < bytes.len() {
        let at = r.pos as u64;
        let insn = decode_one(&mut r, enc, tab).map_err(|rule| DecodeError { rule, at })?;
        branches |= matches!(insn.kind, Kind::Skip | Kind::Bra);
        out.push(insn);
    }
    if !branches {
        return Ok(());
    }
    let len = bytes.len() as u64;
    for i in 0..out.len() {
        if matches!(out[i].kind, Kind::Skip | Kind::Bra) {
            let t = out[i].a as i64;
            out[i].a = if t == len as i64 {
                END
            } else if t < 0 || t > len as i64 {
                OUT_OF_RANGE
            } else {
                match out.binary_search_by_key(&(t as u64), |x| u64::from(x.off)) {
                    Ok(j) => j as u64,
                    Err(_) => BAD_TARGET,
                }
            };
        }
    }
    Ok(())
}
