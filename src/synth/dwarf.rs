//! The DWARF of a synthesised debuggee, written with gimli's writer: one
//! compilation unit with the case's base types and DIEs, a subprogram
//! covering the program counter (with the case's frame base), the variable
//! `v` located by the case's expression, a line table ([`super::lines`]),
//! and a `.debug_frame` FDE for the subprogram (CFA from the case, DWARF 5
//! §6.4).

use super::machine::Machine;
use super::patch::{patch, Placement};
use super::{Rewrite, Unrepresentable, VarShape, CODE_BYTES, MAX_VAR_BYTES, VARIABLE};
use crate::case::ExprCase;
use dwarfcheck_core::context::AttrForm;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::outcome::TypeEncoding;
use gimli::write::{
    Address, AttributeValue, CallFrameInstruction, CommonInformationEntry, DwarfUnit, EndianVec, Expression,
    FrameDescriptionEntry, FrameTable, Sections, UnitEntryId,
};
use gimli::{constants as dw, Encoding, LittleEndian, Register};
use std::collections::BTreeMap;

/// One named section of the executable.
pub type Section = (&'static str, Vec<u8>);

/// DIE name prefixes the read-back looks for.
const DIE_PREFIX: &str = "dwarfcheck_die_";
const TYPE_PREFIX: &str = "dwarfcheck_type_";

/// The DWARF sections (`.debug_abbrev`, `.debug_info`, `.debug_str` if
/// used, `.debug_frame`) for `case` on `machine`, with `v` shaped as `shape` in a
/// subprogram covering [`pc`, `pc` + [`CODE_BYTES`]).
///
/// Errors: [`Unrepresentable`] from [`patch`], for a variable larger than
/// [`MAX_VAR_BYTES`], or if gimli's writer refuses the unit.
pub fn write(case: &ExprCase, machine: Machine, shape: VarShape, pc: u64) -> Result<Vec<Section>, Unrepresentable> {
    if let VarShape::Bytes { byte_size, .. } = shape {
        if byte_size == 0 || byte_size > MAX_VAR_BYTES {
            return Err(Unrepresentable(format!("a variable of {byte_size} bytes")));
        }
    }
    let format = case.ctx.cu.as_ref().map(|c| c.format).unwrap_or_default();
    // First pass with the case's own offsets, to learn where the DIEs land;
    // the second pass re-points the operands (same lengths, same layout).
    let first = build_with(case, shape, pc, format, &case.expr, &|e| Ok(e.to_vec()))?;
    let place = placement(case, &first)?;
    let p = crate::asm::decode::Params::for_context(&case.ctx);
    let expr = patch(&case.expr, &p, &place)?;
    let mut sections = build_with(case, shape, pc, format, &expr, &|e| patch(e, &p, &place))?;
    sections.push((".debug_frame", frame(case, machine, pc)?));
    Ok(sections)
}

fn writer_error(e: gimli::write::Error) -> Unrepresentable {
    Unrepresentable(format!("gimli's writer: {e}"))
}

/// Writes the unit once with `expr` as the variable's location and the
/// case's other expressions passed through `rewrite`.
fn build_with(
    case: &ExprCase,
    shape: VarShape,
    pc: u64,
    format: Format,
    expr: &[u8],
    rewrite: &Rewrite<'_>,
) -> Result<Vec<Section>, Unrepresentable> {
    let ctx = &case.ctx;
    let version = ctx.cu.as_ref().map(|c| c.version).filter(|v| (2..=5).contains(v)).unwrap_or(5);
    let format = match format {
        Format::Dwarf32 => gimli::Format::Dwarf32,
        Format::Dwarf64 => gimli::Format::Dwarf64,
    };
    let encoding = Encoding { format, version, address_size: ctx.address_bytes() };
    let mut du = DwarfUnit::new(encoding);
    du.unit.line_program = super::lines::program(encoding, &[(pc, CODE_BYTES)]);
    let unit = &mut du.unit;
    let root = unit.root();
    let set =
        |unit: &mut gimli::write::Unit, id: UnitEntryId, at: dw::DwAt, v: AttributeValue| unit.get_mut(id).set(at, v);
    set(unit, root, dw::DW_AT_name, AttributeValue::String(b"dwarfcheck-case".to_vec()));
    set(unit, root, dw::DW_AT_producer, AttributeValue::String(b"dwarfcheck synth".to_vec()));
    set(unit, root, dw::DW_AT_language, AttributeValue::Language(dw::DW_LANG_C99));
    // The unit's base address is the case's (the base of location list
    // offset pairs, DWARF 5 §2.6.2), and its range still covers the code.
    let low = match (&case.form, ctx.cu.as_ref().and_then(|c| c.base_address)) {
        (Some(_), Some(base)) if base <= pc => base,
        (Some(_), Some(base)) => return Err(Unrepresentable(format!("a unit base address {base:#x} above the pc"))),
        _ => pc,
    };
    set(unit, root, dw::DW_AT_low_pc, AttributeValue::Address(Address::Constant(low)));
    set(unit, root, dw::DW_AT_high_pc, AttributeValue::Udata(pc - low + CODE_BYTES));

    // The case's `.debug_addr` goes into the executable as it is (below),
    // with the unit's DW_AT_addr_base; gimli's writer has no `.debug_addr`
    // of its own nor a section-offset form for the attribute, so the offset
    // is a constant of the offset size, which GDB and LLDB read as well.
    let debug_addr = ctx.cu.as_ref().map(|c| (c.debug_addr.to_vec(), c.addr_base)).filter(|(b, _)| !b.is_empty());
    if let Some((_, base)) = &debug_addr {
        let v = match format {
            gimli::Format::Dwarf32 => AttributeValue::Data4(
                u32::try_from(*base).map_err(|_| Unrepresentable(format!("DW_AT_addr_base {base:#x}")))?,
            ),
            gimli::Format::Dwarf64 => AttributeValue::Data8(*base),
        };
        set(unit, root, dw::DW_AT_addr_base, v);
    }
    let byte = unit.add(root, dw::DW_TAG_base_type);
    set(unit, byte, dw::DW_AT_name, AttributeValue::String(b"unsigned char".to_vec()));
    set(unit, byte, dw::DW_AT_encoding, AttributeValue::Encoding(dw::DW_ATE_unsigned_char));
    set(unit, byte, dw::DW_AT_byte_size, AttributeValue::Udata(1));

    // The case's base types, by their unit-relative offset.
    if let Some(cu) = &ctx.cu {
        for (off, t) in &cu.base_types {
            let id = unit.add(root, dw::DW_TAG_base_type);
            set(unit, id, dw::DW_AT_name, AttributeValue::String(format!("{TYPE_PREFIX}{off:x}").into_bytes()));
            let ate = match t.encoding {
                TypeEncoding::Generic => dw::DW_ATE_unsigned,
                TypeEncoding::Ate(a) => dw::DwAte(a),
            };
            set(unit, id, dw::DW_AT_encoding, AttributeValue::Encoding(ate));
            set(unit, id, dw::DW_AT_byte_size, AttributeValue::Udata(u64::from(t.bits / 8)));
        }
        // The case's DIEs (call and implicit pointer targets) as variables
        // of `unsigned char[byte_size]` (1 byte when the size is unknown).
        for (off, d) in &cu.dies {
            let id = unit.add(root, dw::DW_TAG_variable);
            set(unit, id, dw::DW_AT_name, AttributeValue::String(format!("{DIE_PREFIX}{off:x}").into_bytes()));
            let ty = array_of(unit, root, byte, d.byte_size.unwrap_or(1).clamp(1, MAX_VAR_BYTES));
            set(unit, id, dw::DW_AT_type, AttributeValue::UnitRef(ty));
            match &d.location {
                Some(AttrForm::Exprloc(e)) => {
                    set(unit, id, dw::DW_AT_location, AttributeValue::Exprloc(Expression::raw(rewrite(e)?)))
                }
                Some(_) => return Err(Unrepresentable(format!("DIE {off:#x} has a location list"))),
                None => {}
            }
            if let Some(c) = &d.const_value {
                set(unit, id, dw::DW_AT_const_value, AttributeValue::Block(c.clone()));
            }
        }
    }

    let sub = unit.add(root, dw::DW_TAG_subprogram);
    set(unit, sub, dw::DW_AT_name, AttributeValue::String(super::FUNCTION.as_bytes().to_vec()));
    set(unit, sub, dw::DW_AT_low_pc, AttributeValue::Address(Address::Constant(pc)));
    set(unit, sub, dw::DW_AT_high_pc, AttributeValue::Udata(CODE_BYTES));
    if let Some(fb) = &ctx.frame_base {
        set(unit, sub, dw::DW_AT_frame_base, AttributeValue::Exprloc(Expression::raw(rewrite(fb)?)));
    }
    let var = unit.add(sub, dw::DW_TAG_variable);
    set(unit, var, dw::DW_AT_name, AttributeValue::String(VARIABLE.as_bytes().to_vec()));
    let (ty, mut location) = match shape {
        VarShape::Bytes { byte_size, stack_value } => {
            let mut e = expr.to_vec();
            if stack_value && !super::ends_in_location(expr, ctx) {
                e.push(dw::DW_OP_stack_value.0);
            }
            (array_of(unit, root, byte, byte_size), e)
        }
        VarShape::Pointer => {
            let p = unit.add(root, dw::DW_TAG_pointer_type);
            set(unit, p, dw::DW_AT_type, AttributeValue::UnitRef(byte));
            set(unit, p, dw::DW_AT_byte_size, AttributeValue::Udata(u64::from(encoding.address_size)));
            (p, expr.to_vec())
        }
    };
    set(unit, var, dw::DW_AT_type, AttributeValue::UnitRef(ty));
    match (&case.form, &ctx.cu) {
        (Some(form), Some(cu)) => {
            let stack_value = matches!(shape, VarShape::Bytes { stack_value: true, .. });
            let list = super::loclist::entries(cu, form, &|e| {
                let mut out = rewrite(e)?;
                if stack_value && !super::ends_in_location(e, ctx) {
                    out.push(dw::DW_OP_stack_value.0);
                }
                Ok(out)
            })?;
            let id = unit.locations.add(list);
            set(unit, var, dw::DW_AT_location, AttributeValue::LocationListRef(id));
        }
        _ => {
            set(unit, var, dw::DW_AT_location, AttributeValue::Exprloc(Expression::raw(std::mem::take(&mut location))))
        }
    }

    let mut out = write_unit(&mut du)?;
    if let Some((bytes, _)) = debug_addr {
        out.push((".debug_addr", bytes));
    }
    Ok(out)
}

/// Writes `du` with gimli's writer (little-endian): its non-empty
/// sections by name.
///
/// Errors: [`Unrepresentable`] when the writer refuses the unit.
pub fn write_unit(du: &mut DwarfUnit) -> Result<Vec<Section>, Unrepresentable> {
    let mut sections = Sections::new(EndianVec::new(LittleEndian));
    du.write(&mut sections).map_err(writer_error)?;
    let mut out = Vec::new();
    sections
        .for_each(|id, data| {
            let bytes = data.slice().to_vec();
            if !bytes.is_empty() {
                out.push((id.name(), bytes));
            }
            Ok::<(), ()>(())
        })
        .map_err(|_| Unrepresentable("section".into()))?;
    Ok(out)
}

/// A new `unsigned char[n]` array type.
fn array_of(unit: &mut gimli::write::Unit, root: UnitEntryId, byte: UnitEntryId, n: u64) -> UnitEntryId {
    let a = unit.add(root, dw::DW_TAG_array_type);
    unit.get_mut(a).set(dw::DW_AT_type, AttributeValue::UnitRef(byte));
    let r = unit.add(a, dw::DW_TAG_subrange_type);
    unit.get_mut(r).set(dw::DW_AT_count, AttributeValue::Udata(n));
    a
}

/// Reads the first pass back (gimli's reader) and maps the case's DIE and
/// base type offsets to where the named DIEs landed.
fn placement(case: &ExprCase, sections: &[Section]) -> Result<Placement, Unrepresentable> {
    let get = |name: &str| sections.iter().find(|(n, _)| *n == name).map(|(_, b)| b.as_slice()).unwrap_or(&[]);
    let info = gimli::DebugInfo::new(get(".debug_info"), LittleEndian);
    let abbrev = gimli::DebugAbbrev::new(get(".debug_abbrev"), LittleEndian);
    let bad = |e: gimli::Error| Unrepresentable(format!("reading the unit back: {e}"));
    let header = info.units().next().map_err(bad)?.ok_or_else(|| Unrepresentable("no unit written".into()))?;
    let new_unit = header.offset().0 as u64;
    let abbrevs = header.abbreviations(&abbrev).map_err(bad)?;
    let mut named: BTreeMap<String, u64> = BTreeMap::new();
    let mut entries = header.entries(&abbrevs);
    while let Some(e) = entries.next_dfs().map_err(bad)? {
        if let Some(gimli::AttributeValue::String(s)) = e.attr_value(dw::DW_AT_name) {
            named.insert(String::from_utf8_lossy(s.slice()).into_owned(), e.offset().0 as u64);
        }
    }
    let mut place =
        Placement { old_unit: case.ctx.cu.as_ref().map_or(0, |c| c.offset), new_unit, ..Default::default() };
    if let Some(cu) = &case.ctx.cu {
        for off in cu.base_types.keys() {
            if let Some(rel) = named.get(&format!("{TYPE_PREFIX}{off:x}")) {
                place.types.insert(*off, *rel);
            }
        }
        for off in cu.dies.keys() {
            if let Some(rel) = named.get(&format!("{DIE_PREFIX}{off:x}")) {
                place.dies.insert(*off, new_unit + rel);
            }
        }
    }
    Ok(place)
}

/// `.debug_frame`: one CIE of version 1 (the version GCC writes, which
/// every consumer reads; Delve misreads version 4, class DV1 of
/// docs/consumers.md) with `machine`'s code alignment, data alignment -8
/// and return address column ([`Machine::return_address_column`]: 16 on
/// x86-64, x30 on AArch64), and one FDE over the subprogram whose CFA is
/// the case's (`DW_CFA_def_cfa_expression` of its value) or else the CFA
/// at a function's entry ([`Machine::entry_cfa`]: `rsp + 8`, `sp + 0`).
/// The return address is where a call leaves it: at CFA - 8 on x86-64, in
/// x30 itself on AArch64 (`DW_CFA_same_value`).
fn frame(case: &ExprCase, machine: Machine, pc: u64) -> Result<Vec<u8>, Unrepresentable> {
    let encoding = Encoding { format: gimli::Format::Dwarf32, version: 1, address_size: 8 };
    let ra = Register(machine.return_address_column() as u16);
    let mut cie = CommonInformationEntry::new(encoding, machine.code_alignment(), -8, ra);
    match case.ctx.cfa {
        Some(cfa) => {
            let mut e = Expression::new();
            e.op_constu(cfa);
            cie.add_instruction(CallFrameInstruction::CfaExpression(e));
        }
        None => {
            let (sp, offset) = machine.entry_cfa();
            cie.add_instruction(CallFrameInstruction::Cfa(Register(sp as u16), offset));
        }
    }
    // A defined return address: GDB treats a frame whose return address is
    // undefined as having no CFA at all.
    match machine {
        Machine::X86_64 => cie.add_instruction(CallFrameInstruction::Offset(ra, -8)),
        Machine::Aarch64 => cie.add_instruction(CallFrameInstruction::SameValue(ra)),
    }
    let mut table = FrameTable::default();
    let id = table.add_cie(cie);
    table.add_fde(id, FrameDescriptionEntry::new(Address::Constant(pc), CODE_BYTES as u32));
    let mut out = gimli::write::DebugFrame::from(EndianVec::new(LittleEndian));
    table.write_debug_frame(&mut out).map_err(writer_error)?;
    Ok(out.slice().to_vec())
}
