//! The edition of a whole expression case: the expression as its attribute
//! and result kind use it, plus what the context makes it depend on (the
//! frame base, called DIEs, location list entries, initial stack and object).
//!
//! Rules beyond those of [`super::expr`], each a `REASON_*` constant:
//! - [`REASON_CONTEXT_ENTRY`]: an initial stack entry or the current object
//!   is something DWARF 5 cannot hand an expression: DWARF 5 passes only
//!   addresses and generic values (§2.5.1.3 `DW_OP_push_object_address`,
//!   §5.7.6 `DW_AT_use_location`). A single memory location in address space
//!   0, at a whole byte and not bound to a thread or lane, is such an address.
//! - [`REASON_FRAME_BASE`]: `DW_OP_fbreg` is used and the frame base is not a
//!   DWARF 5 register or memory location description (§2.5.1.2, §3.3.5):
//!   not DWARF 5 itself, or a composite, implicit or empty one.
//! - [`REASON_CALLEE`]: a `DW_OP_call*` target whose `DW_AT_location` is not
//!   a DWARF 5 expression computing a value or address (§2.5.1.5 runs it as
//!   part of the caller's expression), is a location list, or which has only
//!   `DW_AT_const_value` (DWARF 5: no effect; hetero-2020: an implicit
//!   location).
//! - [`REASON_EXTENSION_ATTRIBUTE`]: the `DW_AT_LLVM_*` attributes exist only
//!   in the extensions.
//! - Location lists: every entry's expression is classified; a list that does
//!   not decode (gimli's location-list reader) is classified hetero-2020 as
//!   [`super::expr::REASON_UNDECODABLE`].

use super::expr::{explain_expr, Usage, REASON_UNDECODABLE};
use super::{Classification, Edition};
use crate::asm::decode::{decode_all, OperandValue, Params};
use crate::case::ExprCase;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::context::{AttrForm, Attribute, Context, Entry, ResultKind};
use dwarfcheck_core::encoding::Op;
use dwarfcheck_core::outcome::{SingleLocation, Source, TypeEncoding};

/// Rule: an initial stack entry or the object is not an address or a
/// generic value.
pub const REASON_CONTEXT_ENTRY: &str = "context-entry-not-dwarf5";
/// Rule: `DW_OP_fbreg` with a frame base DWARF 5 does not allow.
pub const REASON_FRAME_BASE: &str = "frame-base-not-dwarf5";
/// Rule: a called DIE's attribute is not a DWARF 5 expression.
pub const REASON_CALLEE: &str = "call-target-not-dwarf5";
/// Rule: an attribute that only the extensions define.
pub const REASON_EXTENSION_ATTRIBUTE: &str = "extension-attribute";
/// A SPIR-V case ([`Edition::SpirvDebugInfo100`]).
pub const REASON_SPIRV: &str = "spirv-debug-operations";

/// How deep called DIEs are followed; deeper calls are classified
/// hetero-2020 (undecodable), as the expression classifier does for nested
/// entry values.
const MAX_CALL_DEPTH: u32 = 8;

fn hetero(reason: &'static str, at: Option<usize>) -> Classification {
    Classification { edition: Edition::Hetero2020, reason: Some(reason), at }
}

fn params(ctx: &Context) -> Params<'_> {
    Params {
        vendor: &ctx.vendor,
        endian: ctx.target.endian,
        format: ctx.cu.as_ref().map(|u| u.format).unwrap_or_default(),
        address_size: ctx.address_bytes(),
    }
}

/// How the case's attribute (or, without one, its result kind) uses the
/// expression; `None` for an extension attribute.
fn usage(case: &ExprCase) -> Option<Usage> {
    Some(match case.attribute {
        None => match case.ctx.result_kind {
            Some(ResultKind::Value) => Usage::Value,
            _ => Usage::Location,
        },
        Some(Attribute::CallValue | Attribute::CallDataValue) => Usage::Value,
        Some(Attribute::LlvmLanes | Attribute::LlvmLanePc | Attribute::LlvmActiveLane) => return None,
        Some(_) => Usage::Location,
    })
}

/// The edition of an expression case (module documentation).
pub fn explain_case(case: &ExprCase) -> Classification {
    let ctx = &case.ctx;
    if case.spirv.is_some() {
        return Classification { edition: Edition::SpirvDebugInfo100, reason: Some(REASON_SPIRV), at: None };
    }
    let Some(usage) = usage(case) else {
        return hetero(REASON_EXTENSION_ATTRIBUTE, None);
    };
    let mut result = Classification::DWARF5;
    for e in ctx.initial_stack.iter().chain(ctx.object.as_ref()) {
        if !dwarf5_entry(e) {
            return hetero(REASON_CONTEXT_ENTRY, None);
        }
    }
    let exprs: Vec<Vec<u8>> = match &case.form {
        None => vec![case.expr.to_vec()],
        Some(AttrForm::Exprloc(e)) => vec![e.clone()],
        Some(AttrForm::Constant(_)) => Vec::new(),
        Some(AttrForm::LocList { .. } | AttrForm::LocListX { .. }) => match loclist_exprs(ctx, case.form.as_ref()) {
            Some(v) => v,
            None => return hetero(REASON_UNDECODABLE, None),
        },
    };
    for e in &exprs {
        let c = expression(e, ctx, usage, 0);
        if c.edition == Edition::Hetero2020 {
            return c;
        }
        result = result.max(c);
    }
    result
}

/// An expression and what it depends on through the context.
fn expression(bytes: &[u8], ctx: &Context, usage: Usage, depth: u32) -> Classification {
    let p = params(ctx);
    let mut result = explain_expr(bytes, &p, usage);
    if result.edition == Edition::Hetero2020 {
        return result;
    }
    let (ops, _) = decode_all(bytes, &p);
    for o in &ops {
        let c = match o.op() {
            Op::Fbreg => frame_base(ctx),
            Op::Call2 | Op::Call4 | Op::CallRef => match o.operands.first() {
                Some(OperandValue::Unsigned(off)) => {
                    let unit = if o.op() == Op::CallRef { 0 } else { ctx.cu.as_ref().map_or(0, |u| u.offset) };
                    callee(ctx, unit.wrapping_add(*off), depth)
                }
                _ => Classification::DWARF5,
            },
            _ => Classification::DWARF5,
        };
        if c.edition == Edition::Hetero2020 {
            return Classification { at: Some(o.offset), ..c };
        }
        result = result.max(Classification { at: Some(o.offset), ..c });
    }
    result
}

/// DWARF 5 frame bases: one register (`DW_OP_reg*`) or an address
/// computation; no composite, implicit or empty location.
fn frame_base(ctx: &Context) -> Classification {
    let Some(fb) = &ctx.frame_base else { return Classification::DWARF5 };
    let p = params(ctx);
    let c = explain_expr(fb, &p, Usage::Location);
    if c.edition == Edition::Hetero2020 {
        return hetero(REASON_FRAME_BASE, None);
    }
    let (ops, _) = decode_all(fb, &p);
    let not_simple = ops.is_empty()
        || ops.iter().any(|o| {
            matches!(
                o.op(),
                Op::Piece
                    | Op::BitPiece
                    | Op::StackValue
                    | Op::ImplicitValue
                    | Op::ImplicitPointer
                    | Op::GnuImplicitPointer
            )
        });
    if not_simple {
        return hetero(REASON_FRAME_BASE, None);
    }
    c
}

fn callee(ctx: &Context, die: u64, depth: u32) -> Classification {
    if depth + 1 > MAX_CALL_DEPTH {
        return hetero(REASON_UNDECODABLE, None);
    }
    let Some(d) = ctx.cu.as_ref().and_then(|u| u.dies.get(&die)) else {
        return Classification::DWARF5;
    };
    match (&d.location, &d.const_value) {
        (Some(AttrForm::Exprloc(e)), _) => {
            let c = expression(e, ctx, Usage::Value, depth + 1);
            if c.edition == Edition::Hetero2020 {
                hetero(REASON_CALLEE, None)
            } else {
                c
            }
        }
        (Some(_), _) | (None, Some(_)) => hetero(REASON_CALLEE, None),
        (None, None) => Classification::DWARF5,
    }
}

fn dwarf5_entry(e: &Entry) -> bool {
    match e {
        Entry::Value(v) => v.ty.encoding == TypeEncoding::Generic,
        Entry::Location(l) => matches!(
            l.places.as_slice(),
            [SingleLocation::Simple(Source::Memory { aspace: 0, bit_addr, thread: None, lane: None })]
                if bit_addr % 8 == 0
        ),
    }
}

/// The expressions of every entry of the case's location list, decoded with
/// gimli's location-list reader; `None` when the list does not decode.
fn loclist_exprs(ctx: &Context, form: Option<&AttrForm>) -> Option<Vec<Vec<u8>>> {
    let cu = ctx.cu.as_ref()?;
    let endian = match ctx.target.endian {
        dwarfcheck_core::target::Endian::Big => gimli::RunTimeEndian::Big,
        dwarfcheck_core::target::Endian::Little => gimli::RunTimeEndian::Little,
    };
    let format = match cu.format {
        dwarfcheck_core::encoding::Format::Dwarf32 => gimli::Format::Dwarf32,
        dwarfcheck_core::encoding::Format::Dwarf64 => gimli::Format::Dwarf64,
    };
    let encoding = gimli::Encoding { address_size: cu.address_size, format, version: cu.version };
    let lists = gimli::LocationLists::new(
        gimli::DebugLoc::new(&cu.debug_loc, endian),
        gimli::DebugLocLists::new(&cu.debug_loclists, endian),
    );
    let offset = match form? {
        AttrForm::LocList { offset } => gimli::LocationListsOffset(usize::try_from(*offset).ok()?),
        AttrForm::LocListX { index } => lists
            .get_offset(
                encoding,
                gimli::DebugLocListsBase(usize::try_from(cu.loclists_base).ok()?),
                gimli::DebugLocListsIndex(usize::try_from(*index).ok()?),
            )
            .ok()?,
        _ => return None,
    };
    let mut iter = lists.raw_locations(offset, encoding).ok()?;
    let mut out = Vec::new();
    // A list longer than the section is impossible; the cap only guards
    // against a reader bug.
    while let Some(entry) = iter.next().ok()? {
        use gimli::RawLocListEntry as E;
        let data = match entry {
            E::AddressOrOffsetPair { data, .. }
            | E::StartxEndx { data, .. }
            | E::StartxLength { data, .. }
            | E::OffsetPair { data, .. }
            | E::DefaultLocation { data }
            | E::StartEnd { data, .. }
            | E::StartLength { data, .. } => data,
            E::BaseAddress { .. } | E::BaseAddressx { .. } => continue,
        };
        out.push(data.0.to_vec());
        if out.len() > cu.debug_loclists.len() + cu.debug_loc.len() {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "case_tests.rs"]
mod tests;
