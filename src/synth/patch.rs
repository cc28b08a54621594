//! Re-pointing the DIE references inside a case's expression at the DIEs
//! of the synthesised unit, in place and without changing any operation's
//! length (so the layout gimli computed stays valid).
//!
//! A case names DIEs by the offsets of its own (virtual) unit: base types
//! by unit-relative offset (`DW_OP_const_type`, `regval_type`,
//! `deref_type`, `xderef_type`, `convert`, `reinterpret` and their GNU
//! forms; DWARF 5 §2.5.1.6/§2.5.1.7), call targets by unit-relative
//! (`DW_OP_call2`/`call4`) or `.debug_info` offset (`DW_OP_call_ref`), and
//! implicit pointer targets by `.debug_info` offset (DWARF 5 §2.6.1.1.4).
//! The synthesised unit puts those DIEs elsewhere, so each such operand is
//! rewritten: fixed-size operands keep their size, ULEB128 operands keep
//! their byte count (a value may be written with padding groups, which
//! DWARF 5 §7.6 allows). An offset the case has no DIE for becomes 1, which
//! is inside the unit header and so names no DIE in the synthesised unit
//! either.

use super::Unrepresentable;
use crate::asm::decode::{decode_all, write_fixed, OperandValue, Params};
use dwarfcheck_core::encoding::Op;
use std::collections::BTreeMap;

/// Where the synthesised unit put the case's DIEs.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// The case unit's `.debug_info` offset (`CompUnit::offset`).
    pub old_unit: u64,
    /// The synthesised unit's `.debug_info` offset.
    pub new_unit: u64,
    /// Case DIE `.debug_info` offset to synthesised DIE `.debug_info` offset.
    pub dies: BTreeMap<u64, u64>,
    /// Case base type unit-relative offset to synthesised unit-relative
    /// offset.
    pub types: BTreeMap<u64, u64>,
}

/// An offset that names no DIE (inside the unit header).
const NO_DIE: u64 = 1;

/// `expr` with every DIE reference re-pointed by `place`.
///
/// Errors: [`Unrepresentable`] for operations that need calling frames
/// (`DW_OP_entry_value`, `DW_OP_GNU_parameter_ref`) or a new offset that does
/// not fit its operand. Bytes the decoder cannot read are kept as they are
/// (the debugger meets the same fault there).
pub fn patch(expr: &[u8], p: &Params, place: &Placement) -> Result<Vec<u8>, Unrepresentable> {
    let mut out = expr.to_vec();
    let (ops, _) = decode_all(expr, p);
    let die = |old: u64| place.dies.get(&old).copied().unwrap_or(NO_DIE);
    let ty = |old: u64| if old == 0 { 0 } else { place.types.get(&old).copied().unwrap_or(NO_DIE) };
    for d in &ops {
        let unit_rel = |old: u64| {
            let new = die(place.old_unit.wrapping_add(old));
            if new == NO_DIE {
                NO_DIE
            } else {
                new - place.new_unit
            }
        };
        // (operand index, new value)
        let change: Option<(usize, u64)> = match d.op() {
            Op::EntryValue | Op::GnuEntryValue | Op::GnuParameterRef => {
                return Err(Unrepresentable(format!(
                    "{} (needs a calling frame)",
                    dwarfcheck_core::encoding::op::name_of(d.op())
                )))
            }
            Op::Call2 | Op::Call4 => Some((0, unit_rel(unsigned(&d.operands[0])))),
            Op::CallRef | Op::ImplicitPointer | Op::GnuImplicitPointer | Op::GnuVariableValue => {
                Some((0, die(unsigned(&d.operands[0]))))
            }
            Op::ConstType | Op::GnuConstType | Op::Convert | Op::GnuConvert | Op::Reinterpret | Op::GnuReinterpret => {
                Some((0, ty(unsigned(&d.operands[0]))))
            }
            Op::RegvalType | Op::GnuRegvalType | Op::DerefType | Op::GnuDerefType | Op::XderefType => {
                Some((1, ty(unsigned(&d.operands[1]))))
            }
            _ => None,
        };
        if let Some((i, new)) = change {
            let at = d.operand_at[i];
            let end = d.operand_at.get(i + 1).copied().unwrap_or(d.offset + d.length);
            rewrite(&mut out[at..end], d.spec.operands[i], new, p)?;
        }
    }
    Ok(out)
}

fn unsigned(v: &OperandValue) -> u64 {
    match v {
        OperandValue::Unsigned(u) => *u,
        OperandValue::Signed(s) => *s as u64,
        OperandValue::Block(_) => 0,
    }
}

/// Writes `value` over the operand bytes `field`, keeping their length.
fn rewrite(
    field: &mut [u8],
    shape: dwarfcheck_core::encoding::Operand,
    value: u64,
    p: &Params,
) -> Result<(), Unrepresentable> {
    use dwarfcheck_core::encoding::Operand;
    let too_big = || Unrepresentable(format!("DIE offset {value:#x} does not fit a {}-byte operand", field.len()));
    match shape {
        Operand::Uleb => {
            let n = field.len();
            if n < 10 && value >> (7 * n) != 0 {
                return Err(too_big());
            }
            let mut v = value;
            for (i, b) in field.iter_mut().enumerate() {
                *b = (v & 0x7f) as u8 | if i + 1 < n { 0x80 } else { 0 };
                v >>= 7;
            }
        }
        _ => {
            let n = field.len();
            if n < 8 && value >> (8 * n) != 0 {
                return Err(too_big());
            }
            let mut bytes = Vec::with_capacity(n);
            write_fixed(&mut bytes, value, n, p.endian);
            field.copy_from_slice(&bytes);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::encoding::Format;
    use dwarfcheck_core::encoding::VendorProfile;
    use dwarfcheck_core::target::Endian;

    fn params(v: &VendorProfile) -> Params<'_> {
        Params { vendor: v, endian: Endian::Little, format: Format::Dwarf32, address_size: 8 }
    }

    #[test]
    fn typed_and_call_operands_are_repointed_in_place() {
        let v = VendorProfile::dwarf5();
        // DW_OP_const_type 0x10 (1-byte ULEB), size 1, 0x2a;
        // DW_OP_regval_type reg7, type 0x18; DW_OP_call2 0x0040;
        // DW_OP_implicit_pointer .debug_info 0x40, +0.
        let expr = [0xa4, 0x10, 0x01, 0x2a, 0xa5, 0x07, 0x18, 0x98, 0x40, 0x00, 0xa0, 0x40, 0, 0, 0, 0x00];
        let mut place = Placement { old_unit: 0, new_unit: 0, ..Default::default() };
        place.types.insert(0x10, 0x2c);
        place.types.insert(0x18, 0x33);
        place.dies.insert(0x40, 0x51);
        let got = patch(&expr, &params(&v), &place).unwrap();
        // Hand-derived: each operand replaced, every length kept.
        assert_eq!(got, [0xa4, 0x2c, 0x01, 0x2a, 0xa5, 0x07, 0x33, 0x98, 0x51, 0x00, 0xa0, 0x51, 0, 0, 0, 0x00]);
    }

    #[test]
    fn padded_uleb_and_overflow() {
        let v = VendorProfile::dwarf5();
        // DW_OP_convert with a 2-byte ULEB type operand (0x90 0x00 = 0x10).
        let expr = [0xa8, 0x90, 0x00];
        let mut place = Placement::default();
        place.types.insert(0x10, 0x85);
        // 0x85 in two groups: 0x85 & 0x7f = 0x05 | 0x80, then 0x85 >> 7 = 1.
        assert_eq!(patch(&expr, &params(&v), &place).unwrap(), [0xa8, 0x85, 0x01]);
        // A 1-byte ULEB cannot hold 0x85.
        let mut small = Placement::default();
        small.types.insert(0x10, 0x85);
        assert!(patch(&[0xa8, 0x10], &params(&v), &small).is_err());
        // Unknown type offsets point into the unit header; 0 stays generic.
        assert_eq!(
            patch(&[0xa8, 0x22, 0xa8, 0x00], &params(&v), &Placement::default()).unwrap(),
            [0xa8, 0x01, 0xa8, 0x00]
        );
    }

    #[test]
    fn entry_value_is_refused() {
        let v = VendorProfile::dwarf5();
        assert!(patch(&[0xa3, 0x01, 0x50], &params(&v), &Placement::default()).is_err());
    }
}
