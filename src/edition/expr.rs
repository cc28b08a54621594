//! Edition rules for DWARF expressions.
//!
//! An expression is [`Edition::Dwarf5`] when it decodes and every rule below
//! holds; GNU vendor operations make it [`Edition::Dwarf5Gnu`]; breaking a
//! structural rule or using an extension operation makes it
//! [`Edition::Hetero2020`], whose evaluation model (hetero-2020 "DWARF
//! Expressions": location descriptions are ordinary stack entries) gives
//! meaning to what DWARF 5 only allows in fixed shapes.
//!
//! Structural rules (DWARF 5 §2.6.1), for an expression used as a location
//! description ([`Usage::Location`]): the expression is split into
//! *segments* at the composition operations `DW_OP_piece` and
//! `DW_OP_bit_piece`. `DW_OP_nop` counts as an operation of its segment:
//! DWARF 5 says a register or implicit location description *consists of*
//! its operation, so `DW_OP_reg0 DW_OP_nop` is not one (gimli rejects it
//! too; `tests/edition_oracles.rs`).
//! - Rule [`REASON_TRAILING_AFTER_PIECES`]: once composition operations are used,
//!   the expression ends with one; each simple location is followed by its
//!   composition operation (§2.6.1 item 2, §2.6.1.2).
//! - Rule [`REASON_REGISTER_NOT_ALONE`]: `DW_OP_reg<n>`/`DW_OP_regx` are the whole
//!   segment (§2.6.1.1.3: a register location description stands alone).
//! - Rule [`REASON_IMPLICIT_NOT_ALONE`]: `DW_OP_implicit_value`,
//!   `DW_OP_implicit_pointer` (and `DW_OP_GNU_implicit_pointer`) are the
//!   whole segment (§2.6.1.1.4: each is the entire simple location
//!   description; nothing computes a value for them).
//! - Rule [`REASON_AFTER_STACK_VALUE`]: `DW_OP_stack_value` is the last operation
//!   of its segment: only a composition operation (or the end) may follow
//!   (§2.6.1.1.4 item 2: it terminates the expression).
//! - Rule [`REASON_BRANCH_LEAVES_SEGMENT`]: a `DW_OP_bra`/`DW_OP_skip` target lies
//!   inside its own segment (at most the `DW_OP_stack_value` that ends it, or
//!   the segment's end): each simple location description is evaluated on
//!   its own (§2.6.1 item 2), so control may not flow into another piece or
//!   skip the `DW_OP_stack_value` that makes the segment a value.
//! - Rule [`REASON_BRANCH_INTO_OPERATION`]: every `DW_OP_bra`/`DW_OP_skip`
//!   target is the start of an operation or the end of the expression
//!   (otherwise ill-formed in every edition; classified conservatively).
//! - Rule [`REASON_GNU_UNINIT_PLACEMENT`]: `DW_OP_GNU_uninit` (GNU) marks the
//!   location just before it, so it is only accepted as the last operation
//!   of a segment (GCC emits `DW_OP_reg12 DW_OP_GNU_uninit`); elsewhere it
//!   has no GNU meaning and is classified conservatively as hetero-2020.
//!
//! For [`Usage::Value`] (DWARF expressions that must yield a value: CFI
//! expressions, `DW_OP_entry_value` blocks, most non-location attributes),
//! [`REASON_LOCATION_IN_VALUE`]: no location description operation may
//! appear at all (register, implicit, `DW_OP_stack_value`, composition).
//!
//! `DW_OP_entry_value` (DWARF 5 §2.5.1.7 item 2) and `DW_OP_GNU_entry_value`:
//! the block is a register location description (exactly one
//! `DW_OP_reg<n>`/`DW_OP_regx`) or a value expression, classified
//! recursively as [`Usage::Value`]; [`REASON_ENTRY_VALUE_BLOCK`] when it is
//! neither (e.g. `DW_OP_breg7 0 DW_OP_stack_value`, a composite, a register
//! with an offset applied by hetero-2020 operations).
//!
//! Operand rule [`REASON_DEREF_SIZE_OVER_ADDRESS`]: `DW_OP_deref_size` or
//! `DW_OP_xderef_size` reading more than an address.
//!
//! Operations: [`REASON_EXTENSION_OP`] for any hetero-2020 operation
//! (`DW_OP_LLVM_*`, direct or `DW_OP_LLVM_user` form);
//! [`REASON_GNU_OP`] for a GNU operation (edition [`Edition::Dwarf5Gnu`]);
//! [`REASON_INTEL_OP`] for an IGC `DW_OP_INTEL_*` operation.
//!
//! Undecodable input ([`REASON_UNDECODABLE`]): an expression that does not
//! decode into whole operations under the vendor profile (unknown opcode,
//! truncated operand, LEB128 overflow, or nesting deeper than
//! [`MAX_DEPTH`]) is classified [`Edition::Hetero2020`]. This is the
//! conservative answer: the classifier never claims a narrower edition than
//! it can prove, so DWARF-5-only consumers are not judged on it (the
//! reference reports it ill-formed anyway, which no consumer can fail).

use super::{Classification, Edition};
use crate::asm::decode::{decode_all, DecodedOp, OperandValue, Params};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::{Op, VendorProfile};
use dwarfcheck_core::target::Endian;

/// Rule: the bytes do not decode into whole operations.
pub const REASON_UNDECODABLE: &str = "undecodable";
/// Rule: a hetero-2020 extension operation is used.
pub const REASON_EXTENSION_OP: &str = "extension-operation";
/// Rule: an IGC vendor operation (`DW_OP_INTEL_*`, the `intel` profile) is
/// used: outside DWARF 5, classified with the widest edition as undecodable
/// input is, so that DWARF-5-only consumers are not judged on it.
pub const REASON_INTEL_OP: &str = "intel-operation";
/// Rule: a GNU vendor operation is used.
pub const REASON_GNU_OP: &str = "gnu-operation";
/// Rule: operations follow the last composition operation.
pub const REASON_TRAILING_AFTER_PIECES: &str = "location-after-last-piece";
/// Rule: a register location operation shares its segment.
pub const REASON_REGISTER_NOT_ALONE: &str = "register-location-not-alone";
/// Rule: an implicit value/pointer operation shares its segment.
pub const REASON_IMPLICIT_NOT_ALONE: &str = "implicit-location-not-alone";
/// Rule: something other than a composition operation follows
/// `DW_OP_stack_value`.
pub const REASON_AFTER_STACK_VALUE: &str = "operation-after-stack-value";
/// Rule: a branch target lies outside its segment.
pub const REASON_BRANCH_LEAVES_SEGMENT: &str = "branch-leaves-piece";
/// Rule: a branch target is not the first byte of an operation (or the
/// end): the expression is ill-formed in every edition, and what executing
/// from the middle of an operation means cannot be classified.
pub const REASON_BRANCH_INTO_OPERATION: &str = "branch-into-operation";
/// Rule: `DW_OP_GNU_uninit` is not the last operation of its segment.
pub const REASON_GNU_UNINIT_PLACEMENT: &str = "gnu-uninit-placement";
/// Rule: a location description operation where only a value is allowed.
pub const REASON_LOCATION_IN_VALUE: &str = "location-where-value-required";
/// Rule: a `DW_OP_entry_value` block is neither a register location nor a
/// value expression.
pub const REASON_ENTRY_VALUE_BLOCK: &str = "entry-value-block";

/// Rule: `DW_OP_deref_size S` or `DW_OP_xderef_size S` with S larger than
/// the address size. DWARF 5 §2.5.1.3 says S "may not be larger" than an
/// address; hetero-2020 ("DW_OP_deref_size") defines it (the value read is
/// truncated to the generic type), so only hetero-2020 gives it a meaning
/// (docs/ambiguities.md item 26).
pub const REASON_DEREF_SIZE_OVER_ADDRESS: &str = "deref-size-over-address-size";

/// Nesting limit for `DW_OP_entry_value` blocks; deeper input is
/// classified as undecodable.
pub const MAX_DEPTH: u32 = 16;

/// What the expression is used for, which decides the shapes DWARF 5 allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    /// A location description (`DW_AT_location` and the like, DWARF 5
    /// §2.6): simple or composite locations allowed.
    Location,
    /// A DWARF expression that yields a value (DWARF 5 §2.5): no location
    /// description operations.
    Value,
}

/// Classifies a location-description expression (little-endian operands;
/// use [`explain_expr`] for other byte orders or value usage).
///
/// `format` sizes DIE-offset operands, `address_size` (bytes) sizes
/// `DW_OP_addr`'s operand, `vendor` decides 0xe0–0xff.
pub fn classify_expr(bytes: &[u8], vendor: &VendorProfile, format: Format, address_size: u8) -> Edition {
    let p = Params { vendor, endian: Endian::Little, format, address_size };
    explain_expr(bytes, &p, Usage::Location).edition
}

/// Classifies an expression and says which rule decided (see the module
/// documentation for the rules).
pub fn explain_expr(bytes: &[u8], p: &Params, usage: Usage) -> Classification {
    classify(bytes, p, usage, 0)
}

fn hetero(reason: &'static str, at: usize) -> Classification {
    Classification::new(Edition::Hetero2020, reason, at)
}

fn is_gnu(op: Op) -> bool {
    matches!(
        op,
        Op::GnuPushTlsAddress
            | Op::GnuUninit
            | Op::GnuImplicitPointer
            | Op::GnuEntryValue
            | Op::GnuConstType
            | Op::GnuRegvalType
            | Op::GnuDerefType
            | Op::GnuConvert
            | Op::GnuReinterpret
            | Op::GnuParameterRef
            | Op::GnuAddrIndex
            | Op::GnuConstIndex
            | Op::GnuVariableValue
    )
}

fn is_extension(op: Op) -> bool {
    matches!(
        op,
        Op::LlvmFormAspaceAddress
            | Op::LlvmPushLane
            | Op::LlvmOffset
            | Op::LlvmOffsetUconst
            | Op::LlvmBitOffset
            | Op::LlvmCallFrameEntryReg
            | Op::LlvmUndefined
            | Op::LlvmAspaceBregx
            | Op::LlvmAspaceImplicitPointer
            | Op::LlvmPieceEnd
            | Op::LlvmExtend
            | Op::LlvmSelectBitPiece
    )
}

fn is_intel(op: Op) -> bool {
    matches!(
        op,
        Op::IntelRegs
            | Op::IntelPushBitPieceStack
            | Op::IntelPushSimdLane
            | Op::IntelPieceStack
            | Op::IntelBitPieceStack
    )
}

fn is_register_location(op: Op) -> bool {
    matches!(op, Op::Reg(_) | Op::Regx)
}

fn is_implicit_location(op: Op) -> bool {
    matches!(op, Op::ImplicitValue | Op::ImplicitPointer | Op::GnuImplicitPointer)
}

fn is_composition(op: Op) -> bool {
    matches!(op, Op::Piece | Op::BitPiece)
}

fn classify(bytes: &[u8], p: &Params, usage: Usage, depth: u32) -> Classification {
    let (ops, fault) = decode_all(bytes, p);
    if let Some(f) = fault {
        return hetero(REASON_UNDECODABLE, f.offset);
    }
    let mut result = Classification::DWARF5;
    // Operation rules, nested entry values included.
    for o in &ops {
        let op = o.op();
        if is_extension(op) {
            return hetero(REASON_EXTENSION_OP, o.offset);
        }
        if is_intel(op) {
            return hetero(REASON_INTEL_OP, o.offset);
        }
        if matches!(op, Op::DerefSize | Op::XderefSize)
            && matches!(o.operands.first(), Some(OperandValue::Unsigned(n)) if *n > u64::from(p.address_size))
        {
            return hetero(REASON_DEREF_SIZE_OVER_ADDRESS, o.offset);
        }
        if is_gnu(op) && result.edition < Edition::Dwarf5Gnu {
            result = Classification::new(Edition::Dwarf5Gnu, REASON_GNU_OP, o.offset);
        }
        if matches!(op, Op::EntryValue | Op::GnuEntryValue) {
            let inner = entry_value_block(o, p, depth);
            if inner.edition == Edition::Hetero2020 {
                return Classification { at: Some(o.offset), ..inner };
            }
            result = result.max(Classification { at: Some(o.offset), ..inner });
        }
    }
    let starts: Vec<usize> = ops.iter().map(|o| o.offset).chain(std::iter::once(bytes.len())).collect();
    for o in &ops {
        if let Some(t) = branch_target(o) {
            // Targets outside the expression are judged by the segment rule.
            if usize::try_from(t).is_ok_and(|t| t <= bytes.len() && starts.binary_search(&t).is_err()) {
                return hetero(REASON_BRANCH_INTO_OPERATION, o.offset);
            }
        }
    }
    let structure = match usage {
        Usage::Value => value_structure(&ops),
        Usage::Location => location_structure(&ops, bytes.len()),
    };
    result.max(structure)
}

fn entry_value_block(o: &DecodedOp, p: &Params, depth: u32) -> Classification {
    let Some(OperandValue::Block(block)) = o.operands.first() else {
        return hetero(REASON_UNDECODABLE, 0);
    };
    if depth + 1 > MAX_DEPTH {
        return hetero(REASON_UNDECODABLE, 0);
    }
    let (inner, fault) = decode_all(block, p);
    if fault.is_none() && inner.len() == 1 && is_register_location(inner[0].op()) {
        return Classification::DWARF5;
    }
    let c = classify(block, p, Usage::Value, depth + 1);
    if c.reason == Some(REASON_LOCATION_IN_VALUE) {
        return hetero(REASON_ENTRY_VALUE_BLOCK, 0);
    }
    c
}

fn value_structure(ops: &[DecodedOp]) -> Classification {
    for o in ops {
        let op = o.op();
        if is_register_location(op)
            || is_implicit_location(op)
            || is_composition(op)
            || matches!(op, Op::StackValue | Op::GnuUninit)
        {
            return hetero(REASON_LOCATION_IN_VALUE, o.offset);
        }
    }
    Classification::DWARF5
}

fn branch_target(o: &DecodedOp) -> Option<i128> {
    match (o.op(), o.operands.first()) {
        (Op::Bra | Op::Skip, Some(OperandValue::Signed(d))) => Some((o.offset + o.length) as i128 + i128::from(*d)),
        _ => None,
    }
}

fn location_structure(ops: &[DecodedOp], len: usize) -> Classification {
    let mut seg_start_offset = 0usize;
    let mut seg: Vec<&DecodedOp> = Vec::new();
    let mut pieces = false;
    for o in ops {
        if is_composition(o.op()) {
            let c = segment(&seg, seg_start_offset, o.offset);
            if c.edition == Edition::Hetero2020 {
                return c;
            }
            pieces = true;
            seg.clear();
            seg_start_offset = o.offset + o.length;
        } else {
            seg.push(o);
        }
    }
    if pieces {
        if let Some(first) = seg.first() {
            return hetero(REASON_TRAILING_AFTER_PIECES, first.offset);
        }
        return Classification::DWARF5;
    }
    segment(&seg, seg_start_offset, len)
}

/// Checks one simple location description: `ops` (no nops, no composition
/// operations) spanning bytes `start..end`.
fn segment(ops: &[&DecodedOp], start: usize, end: usize) -> Classification {
    let mut ops = ops;
    if let Some((last, rest)) = ops.split_last() {
        if last.op() == Op::GnuUninit {
            ops = rest;
        }
    }
    for o in ops {
        if o.op() == Op::GnuUninit {
            return hetero(REASON_GNU_UNINIT_PLACEMENT, o.offset);
        }
    }
    let alone = ops.len() == 1;
    let mut limit = end;
    for (i, o) in ops.iter().enumerate() {
        let op = o.op();
        if is_register_location(op) && !alone {
            return hetero(REASON_REGISTER_NOT_ALONE, o.offset);
        }
        if is_implicit_location(op) && !alone {
            return hetero(REASON_IMPLICIT_NOT_ALONE, o.offset);
        }
        if op == Op::StackValue {
            if let Some(next) = ops.get(i + 1) {
                return hetero(REASON_AFTER_STACK_VALUE, next.offset);
            }
            limit = o.offset;
        }
    }
    for o in ops {
        if let Some(t) = branch_target(o) {
            if t < start as i128 || t > limit as i128 {
                return hetero(REASON_BRANCH_LEAVES_SEGMENT, o.offset);
            }
        }
    }
    Classification::DWARF5
}

#[cfg(test)]
#[path = "expr_tests.rs"]
mod tests;
