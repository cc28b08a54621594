//! The known classes of gimli disagreement (docs/consumers.md,
//! "Disagreements"), recognised from a case and the two outcomes, so that
//! the fuzz oracles report only disagreements of a new class.

use crate::case::ExprCase;
use dwarfcheck_core::outcome::location::{Piece, SingleLocation, Source};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::Outcome;

/// One line per class of docs/consumers.md "Disagreements" (G1 to G14),
/// in the project's words: what gimli 0.34 does where the spec fixes
/// another answer.
const EXPLANATIONS: &[(&str, &str)] = &[
    ("G1", "a negative signed integer converted to a float goes through an unsigned 64-bit value (op.convert.converts)"),
    ("G2", "a DW_EH_PE_indirect initial location is used as the address instead of being read (cfi.eh-pe.indirect-unreadable)"),
    ("G3", "a bit piece that runs past the end of a register is kept (op.bit-piece.offset-past-storage)"),
    ("G5", "a register narrower than the type read from it is read whole (op.deref.past-storage-end)"),
    ("G7", "operations that empty the stack end in NotEnoughStackItems, not the undefined location (expr.result.location-empty-undefined)"),
    ("G8", "a piece whose part is not above an incomplete composite joins the earlier composite (op.piece.pops-part-creates)"),
    ("G9", "DW_OP_neg of an unsigned base type is refused (op.neg.signed)"),
    ("G10", "an empty piece takes a leftover stack entry as its location (op.piece.top-incomplete-appends)"),
    ("G11", "the size operand of DW_OP_deref_type is not checked against the type (op.deref-type.size-mismatch)"),
    ("G12", "a LEB128 operand longer than 10 bytes is refused although its value fits (expr.decode.leb128-overflow)"),
    (
        "G13",
        "a stack operation after DW_OP_piece reaches below the incomplete composite, which hetero-2020 keeps on the stack and gimli does not (op.piece.pops-part-creates)",
    ),
    (
        "G14",
        "DW_OP_shr of a signed base type, or DW_OP_shra of an unsigned one, is refused (op.shr.logical, op.shra.arithmetic)",
    ),
];

/// The one-line explanation of class `id` (`"G1"` ...), if it is one.
pub fn explanation(id: &str) -> Option<&'static str> {
    EXPLANATIONS.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)
}

/// The class (`"G1"`, `"G3"`, `"G5"`, `"G7"` to `"G14"`) a disagreement between the
/// reference's outcome `reference` and gimli's `gimli` on `case` belongs
/// to, or `None` for a disagreement no class explains. Signatures:
/// - G1: the expression converts (`DW_OP_convert`, 0xa8, or
///   `DW_OP_GNU_convert`, 0xf7) and both sides have a result, or the
///   reference's trace shows a negative signed value converted to a float
///   (whatever follows: the values differ from there on), or gimli has
///   a result and the reference cannot read memory at an operation after
///   the first conversion (`op.deref.past-storage-end`,
///   `op.deref.memory-unreadable`: the converted value became an address);
/// - G3: the reference says `op.bit-piece.offset-past-storage` and gimli
///   has a result, or the error is at the `DW_OP_bit_piece` (0x9d) itself
///   whatever gimli says (gimli goes on past it);
/// - G5: the reference says `op.deref.past-storage-end` at an operation
///   that reads a register as an address or a typed value (`DW_OP_breg*`,
///   `DW_OP_bregx`, `DW_OP_regval_type`, `DW_OP_GNU_regval_type`), or at an
///   entry value (`DW_OP_entry_value` 0xa3, `DW_OP_GNU_entry_value` 0xf3,
///   which report their inner expression's error at their own offset),
///   whatever gimli says (it reads the whole register, then goes on);
/// - G7: the reference's result is the undefined location of an emptied
///   stack (`expr.result.location-empty-undefined`) and gimli reports
///   `NotEnoughStackItems`;
/// - G8: both results are composites, the expression has pieces
///   (`DW_OP_piece` 0x93, `DW_OP_bit_piece` 0x9d), and gimli's composite is
///   longer: gimli joins parts that hetero-2020 puts in separate
///   composites (`op.piece.pops-part-creates`);
/// - G9: gimli reports `UnsupportedTypeOperation` on an expression with a
///   `DW_OP_neg` (0x1f) byte: gimli refuses to negate a value of an
///   unsigned base type, which DWARF 5 reads as signed (`op.neg.signed`);
/// - G10: both results are composites with the same part lengths, and
///   every part where they differ is undefined in the reference's: gimli
///   fills a piece that has no location operations of its own with a
///   stale stack entry (`op.piece.top-incomplete-appends`); with G8, when
///   the stale entry gimli takes is typed, gimli fails with
///   `IntegralTypeRequired` where the reference has a composite;
/// - G11: the reference says `op.deref-type.size-mismatch` and gimli asked
///   the adapter for a read whose size is not its type's (gimli does not
///   check the size operand against the type);
/// - G12: gimli says `BadSignedLeb128`/`BadUnsignedLeb128` where the
///   reference decoded the operand (an over-long LEB128 padded with zero
///   groups, which DWARF 5 §7.6 does not bound);
/// - G13: the expression has a stack operation (`DW_OP_dup` 0x12 ..
///   `DW_OP_rot` 0x17) after its first piece, the reference has a result,
///   and gimli says `NotEnoughStackItems` or gives a composite of the same
///   length in bits (its part boundaries may differ where it also takes
///   stale entries, as in G10): hetero-2020 leaves the incomplete composite on the stack
///   after `DW_OP_piece` (`op.piece.pops-part-creates`), so the operation
///   reaches entries gimli no longer has, or others. Also when the
///   reference fails at an offset past that stack operation and gimli
///   says `NotEnoughStackItems`.
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
    let at = match reference {
        Outcome::Failed(Failure::EvalError { at: Some(a), .. }) => {
            usize::try_from(*a).ok().and_then(|a| case.expr.get(a).copied())
        }
        _ => None,
    };
    // G1 downstream: the converted value went on to be an address, which
    // the reference cannot read and gimli's different value can (fuzz
    // finding expr_bytes-a44d1eb490bdeafb: signed -> float -> generic, not,
    // deref).
    // Wherever the reference itself converts a negative signed value to a
    // float, gimli's value differs from there on, and so may anything that
    // depends on it: a branch, an address, an error (fuzz finding
    // expr_ops-cc7f64965e0418fb: signed -> float -> generic, then
    // DW_OP_bra goes the other way).
    if has(&|b| b == 0xa8 || b == 0xf7) && converts_negative_signed_to_float(case) {
        return Some("G1");
    }
    let first_convert = case.expr.iter().position(|&b| b == 0xa8 || b == 0xf7);
    let reference_at = match reference {
        Outcome::Failed(Failure::EvalError { at: Some(a), .. }) => usize::try_from(*a).ok(),
        _ => None,
    };
    let read_fault = matches!(rule(reference).as_str(), "op.deref.past-storage-end" | "op.deref.memory-unreadable");
    if result(gimli) && read_fault && first_convert.zip(reference_at).is_some_and(|(c, a)| c < a) {
        return Some("G1");
    }
    if rule(reference) == "op.bit-piece.offset-past-storage" && (result(gimli) || at == Some(0x9d)) {
        return Some("G3");
    }
    let reads_register = |b: u8| (0x70..=0x8f).contains(&b) || [0x92, 0xa5, 0xf5].contains(&b);
    // An entry value (0xa3, GNU 0xf3) reports the error of its inner
    // expression at its own offset.
    let entry_value = |b: u8| b == 0xa3 || b == 0xf3;
    if rule(reference) == "op.deref.past-storage-end" && at.is_some_and(|b| reads_register(b) || entry_value(b)) {
        return Some("G5");
    }
    if rule(gimli) == "gimli:UnsupportedTypeOperation" && has(&|b| b == 0x1f) {
        return Some("G9");
    }
    if rule(gimli) == "gimli:UnsupportedTypeOperation" && has(&|b| b == 0x25 || b == 0x26) {
        return Some("G14");
    }
    let undefined = matches!(reference, Outcome::Location(l)
        if l.places == [SingleLocation::Simple(Source::Undefined)]);
    if undefined && rule(gimli) == "gimli:NotEnoughStackItems" {
        return Some("G7");
    }
    // The adapter reports this fault only when gimli asks for a size other
    // than its type's, which only DW_OP_deref_type's unchecked size operand
    // makes it do; the reference may have stopped earlier, on an error gimli
    // does not see (fuzz finding expr_bytes-3357f3c2666270f9: an xderef
    // from an unknown address space before it).
    if matches!(gimli, Outcome::Failed(Failure::ConsumerFault { what }) if what.starts_with("gimli asked for")) {
        return Some("G11");
    }
    let leb = ["gimli:BadSignedLeb128", "gimli:BadUnsignedLeb128"];
    if leb.contains(&rule(gimli).as_str()) && !rule(reference).starts_with("expr.decode.") {
        return Some("G12");
    }
    let parts = |o: &Outcome| match o {
        Outcome::Location(l) => match l.places.as_slice() {
            [SingleLocation::Composite(p)] => Some(p.clone()),
            _ => None,
        },
        _ => None,
    };
    if let (Some(r), Some(g)) = (parts(reference), parts(gimli)) {
        if stale_pieces_only(&r, &g) {
            return Some("G10");
        }
    }
    // G8/G10 with a typed stale entry: gimli cannot use it as an address.
    if parts(reference).is_some() && rule(gimli) == "gimli:IntegralTypeRequired" && has(&|b| b == 0x93 || b == 0x9d) {
        return Some("G10");
    }
    // G13: a stack operation after a piece reaches below the composite,
    // which hetero-2020 keeps on the stack and gimli does not.
    let first_piece = case.expr.iter().position(|b| *b == 0x93 || *b == 0x9d);
    let first_stack_op =
        first_piece.and_then(|p| case.expr[p..].iter().position(|b| (0x12..=0x17).contains(b)).map(|i| p + i));
    let stack_op_after = first_stack_op.is_some();
    let total = |p: &[Piece]| p.iter().map(|x| u128::from(x.bits)).sum::<u128>();
    let same_total = match (parts(reference), parts(gimli)) {
        (Some(r), Some(g)) => total(&r) == total(&g),
        _ => false,
    };
    if stack_op_after && result(reference) && (rule(gimli) == "gimli:NotEnoughStackItems" || same_total) {
        return Some("G13");
    }
    // The same when the reference stops later, at an error of an
    // operation past the stack operation gimli stumbles on (fuzz finding
    // expr_bytes-1c1cb3893e4c15ef: an entry value with no caller frame).
    // The bytes after the piece are scanned as above, so the stack
    // operation's position is a lower bound on where gimli stopped.
    let failed_at = match reference {
        Outcome::Failed(f) => f.at(),
        _ => None,
    };
    let stopped_later = match (failed_at, first_stack_op) {
        (Some(a), Some(op)) => usize::try_from(a).is_ok_and(|a| a > op),
        _ => false,
    };
    if stopped_later && rule(gimli) == "gimli:NotEnoughStackItems" {
        return Some("G13");
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

/// Whether the reference, evaluating `case`, executes a `DW_OP_convert`
/// (or `DW_OP_GNU_convert`) whose operand is a negative value of a
/// `DW_ATE_signed`/`DW_ATE_signed_char` base type and whose result has a
/// `DW_ATE_float` type: the conversion gimli 0.34 gets wrong (G1). Read
/// from the reference's trace (`evaluate_traced`), whose values print as
/// `type:0x` and their bytes, most significant first, so the first hex
/// digit holds the sign bit. Big-endian values are not claimed.
fn converts_negative_signed_to_float(case: &ExprCase) -> bool {
    let (_, trace) = crate::consumer::builtin::with_reference_state(&case.ctx, |state| {
        dwarfcheck_reference::expr::evaluate_traced(&case.expr, state)
    });
    let top = |i: usize| trace.get(i).and_then(|t| t.stack.last()).map(String::as_str);
    let negative_signed = |v: &str| {
        let Some((ty, hex)) = v.split_once(":0x") else { return false };
        let signed = ty.starts_with("signed") && !ty.ends_with("be") && !ty.contains('x');
        signed && hex.len() > 1 && hex.chars().next().and_then(|c| c.to_digit(16)).is_some_and(|d| d >= 8)
    };
    (1..trace.len()).any(|i| {
        let converts = trace[i].op.starts_with("DW_OP_convert") || trace[i].op.starts_with("DW_OP_GNU_convert");
        converts && top(i - 1).is_some_and(negative_signed) && top(i).is_some_and(|v| v.starts_with("float"))
    })
}

/// Whether composites `r` (the reference's) and `g` (gimli's) cover the
/// same number of bits and, bit range by bit range, hold the same places
/// wherever `r` is not undefined (G10).
fn stale_pieces_only(r: &[Piece], g: &[Piece]) -> bool {
    let total = |p: &[Piece]| p.iter().map(|x| u128::from(x.bits)).sum::<u128>();
    if total(r) != total(g) {
        return false;
    }
    let starts = |p: &[Piece]| {
        p.iter()
            .scan(0u128, |at, x| {
                let s = *at;
                *at += u128::from(x.bits);
                Some(s)
            })
            .collect::<Vec<_>>()
    };
    let (rs, gs) = (starts(r), starts(g));
    let mut cuts: Vec<u128> = rs.iter().chain(&gs).copied().collect();
    cuts.sort_unstable();
    cuts.dedup();
    let find = |s: &[u128], at: u128| s.partition_point(|x| *x <= at) - 1;
    cuts.into_iter().all(|at| {
        let (i, j) = (find(&rs, at), find(&gs, at));
        if r[i].sources.iter().all(|x| *x == Source::Undefined) {
            return true;
        }
        let shift = |p: &Piece, from: u128| -> Vec<Source> {
            let d = u64::try_from(at - from).unwrap_or(u64::MAX);
            p.sources.iter().map(|x| x.advanced(d)).collect()
        };
        shift(&r[i], rs[i]) == shift(&g[j], gs[j])
    })
}
