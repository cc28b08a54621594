//! DWARF expression operation encodings: DWARF 5 Table 7.9, the GNU vendor
//! operations GCC emits, the hetero-2020 direct opcodes 0xe1–0xec, and the
//! newer `DW_OP_LLVM_user` (0xe9) sub-opcodes, and IGC's `DW_OP_INTEL_*`
//! operations 0xeb–0xef (the `intel` profile).
//!
//! The table says which operation an opcode names and the *shape* of its
//! operands. The vendor range 0xe0–0xff is ambiguous; [`VendorProfile`]
//! decides it. The evaluators use [`Op`] to dispatch but read operands on
//! their own, so that a table error cannot make them agree by accident.

use super::vendor::VendorProfile;

/// The shape of one operand, in encoding order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// 1-byte unsigned.
    U8,
    /// 1-byte signed.
    I8,
    /// 2-byte unsigned, target endianity.
    U16,
    /// 2-byte signed, target endianity.
    I16,
    /// 4-byte unsigned, target endianity.
    U32,
    /// 4-byte signed, target endianity.
    I32,
    /// 8-byte unsigned, target endianity.
    U64,
    /// 8-byte signed, target endianity.
    I64,
    /// Unsigned LEB128.
    Uleb,
    /// Signed LEB128.
    Sleb,
    /// A target address of the compilation unit's address size (bytes).
    Addr,
    /// A DIE offset of the DWARF format's offset size: 4 bytes in 32-bit
    /// DWARF, 8 in 64-bit DWARF (DWARF 5 §7.4).
    DieOffset,
    /// A ULEB128 byte count followed by that many bytes.
    Block,
    /// A 1-byte byte count followed by that many bytes (`DW_OP_const_type`).
    Block1,
    /// 2-byte signed branch displacement in bytes, measured from the end of
    /// this operation.
    Branch,
}

/// Every operation the tables know, vendor operations included.
///
/// Families that differ only by a number in the opcode (`lit0`..`lit31`,
/// `reg0`..`reg31`, `breg0`..`breg31`) carry that number.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Addr,
    Deref,
    Const1u,
    Const1s,
    Const2u,
    Const2s,
    Const4u,
    Const4s,
    Const8u,
    Const8s,
    Constu,
    Consts,
    Dup,
    Drop,
    Over,
    Pick,
    Swap,
    Rot,
    Xderef,
    Abs,
    And,
    Div,
    Minus,
    Mod,
    Mul,
    Neg,
    Not,
    Or,
    Plus,
    PlusUconst,
    Shl,
    Shr,
    Shra,
    Xor,
    Bra,
    Eq,
    Ge,
    Gt,
    Le,
    Lt,
    Ne,
    Skip,
    Lit(u8),
    Reg(u8),
    Breg(u8),
    Regx,
    Fbreg,
    Bregx,
    Piece,
    DerefSize,
    XderefSize,
    Nop,
    PushObjectAddress,
    Call2,
    Call4,
    CallRef,
    FormTlsAddress,
    CallFrameCfa,
    BitPiece,
    ImplicitValue,
    StackValue,
    ImplicitPointer,
    Addrx,
    Constx,
    EntryValue,
    ConstType,
    RegvalType,
    DerefType,
    XderefType,
    Convert,
    Reinterpret,
    // GNU vendor operations (GCC).
    GnuPushTlsAddress,
    GnuUninit,
    GnuImplicitPointer,
    GnuEntryValue,
    GnuConstType,
    GnuRegvalType,
    GnuDerefType,
    GnuConvert,
    GnuReinterpret,
    GnuParameterRef,
    GnuAddrIndex,
    GnuConstIndex,
    GnuVariableValue,
    // Heterogeneous-debugging extensions (hetero-2020 and DW_OP_LLVM_user).
    LlvmFormAspaceAddress,
    LlvmPushLane,
    LlvmOffset,
    LlvmOffsetUconst,
    LlvmBitOffset,
    LlvmCallFrameEntryReg,
    LlvmUndefined,
    LlvmAspaceBregx,
    LlvmAspaceImplicitPointer,
    LlvmPieceEnd,
    LlvmExtend,
    LlvmSelectBitPiece,
    // Intel Graphics Compiler (IGC) vendor operations (the `intel` profile).
    IntelRegs,
    IntelPushBitPieceStack,
    IntelPushSimdLane,
    IntelPieceStack,
    IntelBitPieceStack,
}

/// One row of an opcode table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpSpec {
    /// The operation.
    pub op: Op,
    /// llvm-dwarfdump's spelling, e.g. `DW_OP_bregx`.
    pub name: &'static str,
    /// The operands after the opcode (and after the sub-opcode for
    /// `DW_OP_LLVM_user` forms), in order.
    pub operands: &'static [Operand],
}

use Operand::*;

const fn s(op: Op, name: &'static str, operands: &'static [Operand]) -> OpSpec {
    OpSpec { op, name, operands }
}

/// `DW_OP_lo_user`: the first opcode of the vendor range.
pub const LO_USER: u8 = 0xe0;
/// `DW_OP_hi_user`: the last opcode of the vendor range.
pub const HI_USER: u8 = 0xff;
/// `DW_OP_LLVM_user`: the prefix opcode of the newest LLVM encoding.
pub const LLVM_USER: u8 = 0xe9;

/// DWARF 5 Table 7.9, opcodes 0x03–0xa9 outside the numbered families.
const DWARF5: &[(u8, OpSpec)] = &[
    (0x03, s(Op::Addr, "DW_OP_addr", &[Addr])),
    (0x06, s(Op::Deref, "DW_OP_deref", &[])),
    (0x08, s(Op::Const1u, "DW_OP_const1u", &[U8])),
    (0x09, s(Op::Const1s, "DW_OP_const1s", &[I8])),
    (0x0a, s(Op::Const2u, "DW_OP_const2u", &[U16])),
    (0x0b, s(Op::Const2s, "DW_OP_const2s", &[I16])),
    (0x0c, s(Op::Const4u, "DW_OP_const4u", &[U32])),
    (0x0d, s(Op::Const4s, "DW_OP_const4s", &[I32])),
    (0x0e, s(Op::Const8u, "DW_OP_const8u", &[U64])),
    (0x0f, s(Op::Const8s, "DW_OP_const8s", &[I64])),
    (0x10, s(Op::Constu, "DW_OP_constu", &[Uleb])),
    (0x11, s(Op::Consts, "DW_OP_consts", &[Sleb])),
    (0x12, s(Op::Dup, "DW_OP_dup", &[])),
    (0x13, s(Op::Drop, "DW_OP_drop", &[])),
    (0x14, s(Op::Over, "DW_OP_over", &[])),
    (0x15, s(Op::Pick, "DW_OP_pick", &[U8])),
    (0x16, s(Op::Swap, "DW_OP_swap", &[])),
    (0x17, s(Op::Rot, "DW_OP_rot", &[])),
    (0x18, s(Op::Xderef, "DW_OP_xderef", &[])),
    (0x19, s(Op::Abs, "DW_OP_abs", &[])),
    (0x1a, s(Op::And, "DW_OP_and", &[])),
    (0x1b, s(Op::Div, "DW_OP_div", &[])),
    (0x1c, s(Op::Minus, "DW_OP_minus", &[])),
    (0x1d, s(Op::Mod, "DW_OP_mod", &[])),
    (0x1e, s(Op::Mul, "DW_OP_mul", &[])),
    (0x1f, s(Op::Neg, "DW_OP_neg", &[])),
    (0x20, s(Op::Not, "DW_OP_not", &[])),
    (0x21, s(Op::Or, "DW_OP_or", &[])),
    (0x22, s(Op::Plus, "DW_OP_plus", &[])),
    (0x23, s(Op::PlusUconst, "DW_OP_plus_uconst", &[Uleb])),
    (0x24, s(Op::Shl, "DW_OP_shl", &[])),
    (0x25, s(Op::Shr, "DW_OP_shr", &[])),
    (0x26, s(Op::Shra, "DW_OP_shra", &[])),
    (0x27, s(Op::Xor, "DW_OP_xor", &[])),
    (0x28, s(Op::Bra, "DW_OP_bra", &[Branch])),
    (0x29, s(Op::Eq, "DW_OP_eq", &[])),
    (0x2a, s(Op::Ge, "DW_OP_ge", &[])),
    (0x2b, s(Op::Gt, "DW_OP_gt", &[])),
    (0x2c, s(Op::Le, "DW_OP_le", &[])),
    (0x2d, s(Op::Lt, "DW_OP_lt", &[])),
    (0x2e, s(Op::Ne, "DW_OP_ne", &[])),
    (0x2f, s(Op::Skip, "DW_OP_skip", &[Branch])),
    (0x90, s(Op::Regx, "DW_OP_regx", &[Uleb])),
    (0x91, s(Op::Fbreg, "DW_OP_fbreg", &[Sleb])),
    (0x92, s(Op::Bregx, "DW_OP_bregx", &[Uleb, Sleb])),
    (0x93, s(Op::Piece, "DW_OP_piece", &[Uleb])),
    (0x94, s(Op::DerefSize, "DW_OP_deref_size", &[U8])),
    (0x95, s(Op::XderefSize, "DW_OP_xderef_size", &[U8])),
    (0x96, s(Op::Nop, "DW_OP_nop", &[])),
    (0x97, s(Op::PushObjectAddress, "DW_OP_push_object_address", &[])),
    (0x98, s(Op::Call2, "DW_OP_call2", &[U16])),
    (0x99, s(Op::Call4, "DW_OP_call4", &[U32])),
    (0x9a, s(Op::CallRef, "DW_OP_call_ref", &[DieOffset])),
    (0x9b, s(Op::FormTlsAddress, "DW_OP_form_tls_address", &[])),
    (0x9c, s(Op::CallFrameCfa, "DW_OP_call_frame_cfa", &[])),
    (0x9d, s(Op::BitPiece, "DW_OP_bit_piece", &[Uleb, Uleb])),
    (0x9e, s(Op::ImplicitValue, "DW_OP_implicit_value", &[Block])),
    (0x9f, s(Op::StackValue, "DW_OP_stack_value", &[])),
    (0xa0, s(Op::ImplicitPointer, "DW_OP_implicit_pointer", &[DieOffset, Sleb])),
    (0xa1, s(Op::Addrx, "DW_OP_addrx", &[Uleb])),
    (0xa2, s(Op::Constx, "DW_OP_constx", &[Uleb])),
    (0xa3, s(Op::EntryValue, "DW_OP_entry_value", &[Block])),
    (0xa4, s(Op::ConstType, "DW_OP_const_type", &[Uleb, Block1])),
    (0xa5, s(Op::RegvalType, "DW_OP_regval_type", &[Uleb, Uleb])),
    (0xa6, s(Op::DerefType, "DW_OP_deref_type", &[U8, Uleb])),
    (0xa7, s(Op::XderefType, "DW_OP_xderef_type", &[U8, Uleb])),
    (0xa8, s(Op::Convert, "DW_OP_convert", &[Uleb])),
    (0xa9, s(Op::Reinterpret, "DW_OP_reinterpret", &[Uleb])),
];

/// The GNU vendor operations that GCC emits (values from GCC's dwarf2.def).
const GNU: &[(u8, OpSpec)] = &[
    (0xe0, s(Op::GnuPushTlsAddress, "DW_OP_GNU_push_tls_address", &[])),
    (0xf0, s(Op::GnuUninit, "DW_OP_GNU_uninit", &[])),
    (0xf2, s(Op::GnuImplicitPointer, "DW_OP_GNU_implicit_pointer", &[DieOffset, Sleb])),
    (0xf3, s(Op::GnuEntryValue, "DW_OP_GNU_entry_value", &[Block])),
    (0xf4, s(Op::GnuConstType, "DW_OP_GNU_const_type", &[Uleb, Block1])),
    (0xf5, s(Op::GnuRegvalType, "DW_OP_GNU_regval_type", &[Uleb, Uleb])),
    (0xf6, s(Op::GnuDerefType, "DW_OP_GNU_deref_type", &[U8, Uleb])),
    (0xf7, s(Op::GnuConvert, "DW_OP_GNU_convert", &[Uleb])),
    (0xf9, s(Op::GnuReinterpret, "DW_OP_GNU_reinterpret", &[Uleb])),
    (0xfa, s(Op::GnuParameterRef, "DW_OP_GNU_parameter_ref", &[U32])),
    (0xfb, s(Op::GnuAddrIndex, "DW_OP_GNU_addr_index", &[Uleb])),
    (0xfc, s(Op::GnuConstIndex, "DW_OP_GNU_const_index", &[Uleb])),
    (0xfd, s(Op::GnuVariableValue, "DW_OP_GNU_variable_value", &[DieOffset])),
];

/// Hetero-2020 "Operation Expressions" encoding table: direct opcodes.
/// `DW_OP_LLVM_aspace_bregx`'s displacement is resolved by the profile.
const HETERO_2020: &[(u8, OpSpec)] = &[
    (0xe1, s(Op::LlvmFormAspaceAddress, "DW_OP_LLVM_form_aspace_address", &[])),
    (0xe2, s(Op::LlvmPushLane, "DW_OP_LLVM_push_lane", &[])),
    (0xe3, s(Op::LlvmOffset, "DW_OP_LLVM_offset", &[])),
    (0xe4, s(Op::LlvmOffsetUconst, "DW_OP_LLVM_offset_uconst", &[Uleb])),
    (0xe5, s(Op::LlvmBitOffset, "DW_OP_LLVM_bit_offset", &[])),
    (0xe6, s(Op::LlvmCallFrameEntryReg, "DW_OP_LLVM_call_frame_entry_reg", &[Uleb])),
    (0xe7, s(Op::LlvmUndefined, "DW_OP_LLVM_undefined", &[])),
    (0xe8, ASPACE_BREGX_SLEB),
    (0xe9, s(Op::LlvmAspaceImplicitPointer, "DW_OP_LLVM_aspace_implicit_pointer", &[DieOffset, Sleb])),
    (0xea, s(Op::LlvmPieceEnd, "DW_OP_LLVM_piece_end", &[])),
    (0xeb, s(Op::LlvmExtend, "DW_OP_LLVM_extend", &[Uleb, Uleb])),
    (0xec, s(Op::LlvmSelectBitPiece, "DW_OP_LLVM_select_bit_piece", &[Uleb, Uleb])),
];

/// IGC's vendor operations, 0xeb–0xef, as IGC defines them in
/// `IGC/DebugInfo/DIE.hpp` (intel/intel-graphics-compiler). None carries an
/// inline operand: IGC's emitter (`IGC/DebugInfo/DwarfCompileUnit.cpp`)
/// writes each as the single opcode byte and passes its inputs on the
/// stack — e.g. a register location, a bit offset and a bit size pushed
/// with `DW_OP_const1u` before `DW_OP_INTEL_push_bit_piece_stack`, or a
/// register number computed from `DW_OP_INTEL_push_simd_lane` before
/// `DW_OP_INTEL_regs`. Two of them collide with hetero-2020's
/// `DW_OP_LLVM_extend` (0xeb) and `DW_OP_LLVM_select_bit_piece` (0xec),
/// which take two ULEB128 operands (docs/ambiguities.md).
const INTEL: &[(u8, OpSpec)] = &[
    (0xeb, s(Op::IntelRegs, "DW_OP_INTEL_regs", &[])),
    (0xec, s(Op::IntelPushBitPieceStack, "DW_OP_INTEL_push_bit_piece_stack", &[])),
    (0xed, s(Op::IntelPushSimdLane, "DW_OP_INTEL_push_simd_lane", &[])),
    (0xee, s(Op::IntelPieceStack, "DW_OP_INTEL_piece_stack", &[])),
    (0xef, s(Op::IntelBitPieceStack, "DW_OP_INTEL_bit_piece_stack", &[])),
];

const ASPACE_BREGX_SLEB: OpSpec = s(Op::LlvmAspaceBregx, "DW_OP_LLVM_aspace_bregx", &[Uleb, Sleb]);
const ASPACE_BREGX_ULEB: OpSpec = s(Op::LlvmAspaceBregx, "DW_OP_LLVM_aspace_bregx", &[Uleb, Uleb]);

/// Newest LLVM extensions document, "DW_OP_LLVM_user Vendor Extension
/// Operation Encodings": sub-opcodes after the 0xe9 prefix.
/// `DW_OP_LLVM_aspace_implicit_pointer` has no sub-opcode assigned yet.
const LLVM_USER_SUBOPS: &[(u64, OpSpec)] = &[
    (0x02, s(Op::LlvmFormAspaceAddress, "DW_OP_LLVM_form_aspace_address", &[])),
    (0x03, s(Op::LlvmPushLane, "DW_OP_LLVM_push_lane", &[])),
    (0x04, s(Op::LlvmOffset, "DW_OP_LLVM_offset", &[])),
    (0x05, s(Op::LlvmOffsetUconst, "DW_OP_LLVM_offset_uconst", &[Uleb])),
    (0x06, s(Op::LlvmBitOffset, "DW_OP_LLVM_bit_offset", &[])),
    (0x07, s(Op::LlvmCallFrameEntryReg, "DW_OP_LLVM_call_frame_entry_reg", &[Uleb])),
    (0x08, s(Op::LlvmUndefined, "DW_OP_LLVM_undefined", &[])),
    (0x09, ASPACE_BREGX_SLEB),
    (0x0a, s(Op::LlvmPieceEnd, "DW_OP_LLVM_piece_end", &[])),
    (0x0b, s(Op::LlvmExtend, "DW_OP_LLVM_extend", &[Uleb, Uleb])),
    (0x0c, s(Op::LlvmSelectBitPiece, "DW_OP_LLVM_select_bit_piece", &[Uleb, Uleb])),
];

/// What a leading opcode byte means under a vendor profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    /// A complete operation; operands follow the opcode byte.
    Op(OpSpec),
    /// The `DW_OP_LLVM_user` prefix: a ULEB128 sub-opcode follows, to be
    /// looked up with [`lookup_llvm_user`].
    LlvmUser,
    /// No operation has this opcode under the profile.
    Unknown,
}

/// Looks up a leading opcode byte under `profile`.
pub fn lookup(profile: &VendorProfile, opcode: u8) -> Decoded {
    match opcode {
        0x30..=0x4f => Decoded::Op(numbered(Op::Lit(opcode - 0x30))),
        0x50..=0x6f => Decoded::Op(numbered(Op::Reg(opcode - 0x50))),
        0x70..=0x8f => Decoded::Op(numbered(Op::Breg(opcode - 0x70))),
        LO_USER..=HI_USER => {
            if profile.llvm_user && opcode == LLVM_USER {
                return Decoded::LlvmUser;
            }
            if profile.intel {
                if let Some((_, spec)) = INTEL.iter().find(|(c, _)| *c == opcode) {
                    return Decoded::Op(*spec);
                }
            }
            if profile.hetero_2020 {
                if let Some((_, spec)) = HETERO_2020.iter().find(|(c, _)| *c == opcode) {
                    if spec.op == Op::LlvmAspaceBregx && !profile.aspace_bregx_signed {
                        return Decoded::Op(ASPACE_BREGX_ULEB);
                    }
                    return Decoded::Op(*spec);
                }
            }
            if profile.gnu {
                if let Some((_, spec)) = GNU.iter().find(|(c, _)| *c == opcode) {
                    return Decoded::Op(*spec);
                }
            }
            Decoded::Unknown
        }
        _ => match DWARF5.iter().find(|(c, _)| *c == opcode) {
            Some((_, spec)) => Decoded::Op(*spec),
            None => Decoded::Unknown,
        },
    }
}

/// Looks up a `DW_OP_LLVM_user` sub-opcode.
pub fn lookup_llvm_user(subop: u64) -> Option<OpSpec> {
    LLVM_USER_SUBOPS.iter().find(|(c, _)| *c == subop).map(|(_, s)| *s)
}

/// How `op` is encoded under `profile`: the leading byte, and for the
/// `DW_OP_LLVM_user` form the sub-opcode. `None` if the profile cannot
/// encode it.
pub fn encoding_of(profile: &VendorProfile, op: Op) -> Option<(u8, Option<u64>, OpSpec)> {
    match op {
        Op::Lit(n) if n < 32 => return Some((0x30 + n, None, numbered(op))),
        Op::Reg(n) if n < 32 => return Some((0x50 + n, None, numbered(op))),
        Op::Breg(n) if n < 32 => return Some((0x70 + n, None, numbered(op))),
        Op::Lit(_) | Op::Reg(_) | Op::Breg(_) => return None,
        _ => {}
    }
    if let Some((c, spec)) = DWARF5.iter().find(|(_, s)| s.op == op) {
        return Some((*c, None, *spec));
    }
    if profile.gnu {
        if let Some((c, spec)) = GNU.iter().find(|(_, s)| s.op == op) {
            return Some((*c, None, *spec));
        }
    }
    if profile.intel {
        if let Some((c, spec)) = INTEL.iter().find(|(_, s)| s.op == op) {
            return Some((*c, None, *spec));
        }
    }
    if profile.llvm_user {
        if let Some((sub, spec)) = LLVM_USER_SUBOPS.iter().find(|(_, s)| s.op == op) {
            return Some((LLVM_USER, Some(*sub), *spec));
        }
    }
    if profile.hetero_2020 {
        if let Some((c, _)) = HETERO_2020.iter().find(|(_, s)| s.op == op) {
            if let Decoded::Op(spec) = lookup(profile, *c) {
                return Some((*c, None, spec));
            }
        }
    }
    None
}

/// Looks up an operation by its llvm-dwarfdump name, e.g. `DW_OP_breg7`.
pub fn op_by_name(name: &str) -> Option<Op> {
    for (prefix, make) in [("DW_OP_lit", Op::Lit as fn(u8) -> Op), ("DW_OP_reg", Op::Reg), ("DW_OP_breg", Op::Breg)] {
        if let Some(rest) = name.strip_prefix(prefix) {
            if let Ok(n) = rest.parse::<u8>() {
                if n < 32 && !rest.starts_with('+') && (rest == "0" || !rest.starts_with('0')) {
                    return Some(make(n));
                }
            }
        }
    }
    DWARF5.iter().chain(GNU).chain(HETERO_2020).chain(INTEL).map(|(_, s)| s).find(|s| s.name == name).map(|s| s.op)
}

/// Every operation name [`op_by_name`] accepts (the numbered families
/// `DW_OP_lit0`..`DW_OP_lit31`, `DW_OP_reg*`, `DW_OP_breg*` spelt out), for
/// "did you mean" suggestions.
pub fn op_names() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for prefix in ["DW_OP_lit", "DW_OP_reg", "DW_OP_breg"] {
        out.extend((0..32).map(|n| format!("{prefix}{n}")));
    }
    out.extend(DWARF5.iter().chain(GNU).chain(HETERO_2020).chain(INTEL).map(|(_, s)| s.name.to_string()));
    out
}

/// The llvm-dwarfdump name of an operation.
pub fn name_of(op: Op) -> String {
    match op {
        Op::Lit(n) => format!("DW_OP_lit{n}"),
        Op::Reg(n) => format!("DW_OP_reg{n}"),
        Op::Breg(n) => format!("DW_OP_breg{n}"),
        _ => DWARF5
            .iter()
            .chain(GNU)
            .chain(HETERO_2020)
            .chain(INTEL)
            .map(|(_, s)| s)
            .find(|s| s.op == op)
            .map(|s| s.name.to_string())
            .unwrap_or_else(|| format!("{op:?}")),
    }
}

fn numbered(op: Op) -> OpSpec {
    match op {
        Op::Lit(_) => s(op, "DW_OP_lit", &[]),
        Op::Reg(_) => s(op, "DW_OP_reg", &[]),
        Op::Breg(_) => s(op, "DW_OP_breg", &[Sleb]),
        _ => unreachable!("numbered() is only called for lit/reg/breg"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dwarf5_table_is_complete_and_unique() {
        // DWARF 5 Table 7.9 defines 0x03, 0x06, 0x08–0x2f, 0x30–0x8f
        // (numbered families), 0x90–0xa9. Count the non-family codes.
        let expected: Vec<u8> =
            std::iter::once(0x03).chain(std::iter::once(0x06)).chain(0x08..=0x2f).chain(0x90..=0xa9).collect();
        let mut codes: Vec<u8> = DWARF5.iter().map(|(c, _)| *c).collect();
        codes.sort();
        assert_eq!(codes, expected);
        let p = VendorProfile::dwarf5();
        for c in 0u8..=0xff {
            let known = matches!(lookup(&p, c), Decoded::Op(_));
            let in_table = expected.contains(&c) || (0x30..=0x8f).contains(&c);
            assert_eq!(known, in_table, "opcode {c:#04x}");
        }
    }

    #[test]
    fn vendor_range_follows_profile() {
        let gnu = VendorProfile::gnu();
        let h = VendorProfile::hetero_2020();
        let u = VendorProfile::llvm_user();
        assert!(matches!(lookup(&gnu, 0xe9), Decoded::Unknown));
        assert!(matches!(lookup(&h, 0xe9), Decoded::Op(s) if s.op == Op::LlvmAspaceImplicitPointer));
        assert_eq!(lookup(&u, 0xe9), Decoded::LlvmUser);
        assert!(matches!(lookup(&u, 0xe1), Decoded::Unknown));
        assert!(matches!(lookup(&gnu, 0xf3), Decoded::Op(s) if s.op == Op::GnuEntryValue));
        assert_eq!(lookup_llvm_user(0x0b).map(|s| s.op), Some(Op::LlvmExtend));
        // The seed's encoding table and its prose disagree on the
        // aspace_bregx displacement; the profile switch picks one.
        let mut uleb = VendorProfile::hetero_2020();
        uleb.aspace_bregx_signed = false;
        assert!(matches!(lookup(&uleb, 0xe8), Decoded::Op(s) if s.operands == [Uleb, Uleb]));
        assert!(matches!(lookup(&h, 0xe8), Decoded::Op(s) if s.operands == [Uleb, Sleb]));
        // IGC's operations share 0xeb/0xec with hetero-2020 but take no
        // inline operands; 0xed–0xef are unknown to hetero-2020.
        let i = VendorProfile::intel();
        assert!(matches!(lookup(&h, 0xec), Decoded::Op(s) if s.op == Op::LlvmSelectBitPiece));
        assert!(matches!(lookup(&i, 0xec), Decoded::Op(s) if s.op == Op::IntelPushBitPieceStack));
        assert!(matches!(lookup(&h, 0xed), Decoded::Unknown));
        assert!(matches!(lookup(&i, 0xef), Decoded::Op(s) if s.op == Op::IntelBitPieceStack));
        assert!(matches!(lookup(&i, 0xea), Decoded::Unknown));
        assert!(matches!(lookup(&i, 0xf3), Decoded::Op(s) if s.op == Op::GnuEntryValue));
    }

    #[test]
    fn names_round_trip() {
        let p = VendorProfile::hetero_2020();
        for c in 0u8..=0xff {
            if let Decoded::Op(spec) = lookup(&p, c) {
                let name = name_of(spec.op);
                assert_eq!(op_by_name(&name), Some(spec.op), "{name}");
                assert_eq!(encoding_of(&p, spec.op).map(|e| e.0), Some(c), "{name}");
            }
        }
        let i = VendorProfile::intel();
        for c in 0xebu8..=0xef {
            let Decoded::Op(spec) = lookup(&i, c) else { panic!("{c:#04x} unknown under intel") };
            assert!(spec.operands.is_empty(), "{c:#04x}");
            let name = name_of(spec.op);
            assert!(name.starts_with("DW_OP_INTEL_"), "{name}");
            assert_eq!(op_by_name(&name), Some(spec.op), "{name}");
            assert_eq!(encoding_of(&i, spec.op).map(|e| e.0), Some(c), "{name}");
        }
        assert_eq!(op_by_name("DW_OP_lit32"), None);
        assert_eq!(op_by_name("DW_OP_reg07"), None);
    }
}
