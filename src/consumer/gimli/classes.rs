//! The known classes of gimli disagreement (docs/consumers.md,
//! "Disagreements"), recognised from a case and the two outcomes, so that
//! the fuzz oracles report only disagreements of a new class.

use crate::case::ExprCase;
use crate::outcome::location::{SingleLocation, Source};
use crate::outcome::Outcome;

/// The class (`"G1"`, `"G3"`, `"G5"`, `"G7"`, `"G8"`, `"G9"`) a disagreement between the
/// reference's outcome `reference` and gimli's `gimli` on `case` belongs
/// to, or `None` for a disagreement no class explains. Signatures:
/// - G1: the expression converts (`DW_OP_convert`, 0xa8, or
///   `DW_OP_GNU_convert`, 0xf7) and both sides have a result;
/// - G3: the reference says `op.bit-piece.offset-past-storage` and gimli
///   has a result;
/// - G5: the reference says `op.deref.past-storage-end` at an operation
///   that reads a register as an address or a typed value (`DW_OP_breg*`,
///   `DW_OP_bregx`, `DW_OP_regval_type`, `DW_OP_GNU_regval_type`), whatever
///   gimli says (it reads the whole register, then goes on);
/// - G7: the reference's result is the undefined location of an emptied
///   stack (`expr.result.location-empty-undefined`) and gimli reports
///   `NotEnoughStackItems`;
/// - G8: both results are composites, the expression has pieces
///   (`DW_OP_piece` 0x93, `DW_OP_bit_piece` 0x9d), and gimli's composite is
///   longer: gimli joins parts that hetero-2020 puts in separate
///   composites (`op.piece.pops-part-creates`);
/// - G9: gimli reports `UnsupportedTypeOperation` on an expression with a
///   `DW_OP_neg` (0x1f) byte: gimli refuses to negate a value of an
///   unsigned base type, which DWARF 5 reads as signed (`op.neg.signed`).
///
/// The byte tests look at every byte, operands included: a signature may
/// claim a disagreement it does not explain, never the reverse of a class
/// it names, so a new class can hide behind G1 only in expressions that
/// convert.
pub fn known_class(case: &ExprCase, reference: &Outcome, gimli: &Outcome) -> Option<&'static str> {
    let result = |o: &Outcome| matches!(o, Outcome::Value(_) | Outcome::Location(_));
    let rule = |o: &Outcome| o.rule().map(|r| r.as_str().to_string()).unwrap_or_default();
    let has = |f: &dyn Fn(u8) -> bool| case.expr.iter().any(|b| f(*b));
    if result(reference) && result(gimli) && has(&|b| b == 0xa8 || b == 0xf7) {
        return Some("G1");
    }
    if rule(reference) == "op.bit-piece.offset-past-storage" && result(gimli) {
        return Some("G3");
    }
    let at = match reference {
        Outcome::EvalError { at: Some(a), .. } => usize::try_from(*a).ok().and_then(|a| case.expr.get(a).copied()),
        _ => None,
    };
    let reads_register = |b: u8| (0x70..=0x8f).contains(&b) || [0x92, 0xa5, 0xf5].contains(&b);
    if rule(reference) == "op.deref.past-storage-end" && at.is_some_and(reads_register) {
        return Some("G5");
    }
    if rule(gimli) == "gimli:UnsupportedTypeOperation" && has(&|b| b == 0x1f) {
        return Some("G9");
    }
    let undefined = matches!(reference, Outcome::Location(l)
        if l.places == [SingleLocation::Simple(Source::Undefined)]);
    if undefined && rule(gimli) == "gimli:NotEnoughStackItems" {
        return Some("G7");
    }
    let bits = |o: &Outcome| match o {
        Outcome::Location(l) => match l.places.as_slice() {
            [SingleLocation::Composite(parts)] => Some(parts.iter().map(|p| u128::from(p.bits)).sum::<u128>()),
            _ => None,
        },
        _ => None,
    };
    if let (Some(r), Some(g)) = (bits(reference), bits(gimli)) {
        if g > r && has(&|b| b == 0x93 || b == 0x9d) {
            return Some("G8");
        }
    }
    None
}
