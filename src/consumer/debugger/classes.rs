//! The known classes of GDB, LLDB and Delve disagreement (docs/debuggers.md,
//! "Classes of failure"), recognised from the case and the two answers by
//! signature, so that the matrix groups them and says which are
//! understood.

use super::Kind;
use crate::case::ExprCase;
use dwarfcheck_core::outcome::location::{SingleLocation, Source};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::Outcome;

/// Every class: `(id, which debuggers, explanation, public report)`.
const CLASSES: &[(&str, &[Kind], &str, Option<&str>)] = &[
    (
        "D1",
        &[Kind::Gdb],
        "GDB stops with an internal error (dwarf2_get_symbol_read_needs: assertion on visited operations) on every \
         expression with DW_OP_bra, while it works out what reading the variable needs",
        None,
    ),
    (
        "D2",
        &[Kind::Gdb],
        "GDB divides the most negative 64-bit value by -1 natively and dies of SIGFPE (DWARF 5 §2.5.1.4 gives the \
         operation no trap)",
        None,
    ),
    (
        "D3",
        &[Kind::Gdb, Kind::Lldb],
        "no limit on executed operations: an expression that loops (DW_OP_skip/DW_OP_bra backwards) hangs the \
         debugger (the reference stops at its steps budget)",
        None,
    ),
    (
        "D4",
        &[Kind::Lldb],
        "LLDB pops DW_OP_bra's condition from an empty stack and crashes (SIGSEGV): its operation table gave \
         DW_OP_bra an arity of 0 (fixed upstream after LLVM 19)",
        Some("https://github.com/llvm/llvm-project/pull/114136"),
    ),
    ("D5", &[Kind::Lldb], "LLDB crashes (SIGSEGV) on a DW_OP_piece of 2^64-1 bytes", None),
    (
        "D6",
        &[Kind::Gdb, Kind::Lldb],
        "DW_OP_deref_size larger than the generic type: ill-formed in DWARF 5, defined by hetero-2020 (read the \
         generic size); the debuggers follow DWARF 5 (docs/ambiguities.md item 26)",
        None,
    ),
    (
        "D7",
        &[Kind::Lldb],
        "after a comparison (DW_OP_eq .. DW_OP_ne) LLDB's result is not a value of the generic type's size, so the \
         8-byte variable cannot be read (\"extracting data from value failed\")",
        None,
    ),
    (
        "D8",
        &[Kind::Lldb],
        "LLDB reads the parts of a composite that have no location (DWARF 5 §2.6.1.2: undefined) as zero bytes, \
         and does not say they are optimized out",
        None,
    ),
    (
        "D9",
        &[Kind::Gdb],
        "GDB reads past the end of a register (DW_OP_bit_piece offset past it, DW_OP_regval_type with a wider \
         type) and shows zeros or the register's bytes where the reference reports an error",
        None,
    ),
    (
        "D10",
        &[Kind::Gdb, Kind::Lldb, Kind::Delve],
        "an expression that leaves the stack empty is an error to the debugger; hetero-2020 makes it the undefined \
         location (expr.result.location-empty-undefined); DWARF 5 does not say",
        None,
    ),
    ("D11", &[Kind::Lldb], "LLDB finds no variable in a 64-bit DWARF (DWARF64) unit", None),
    (
        "D12",
        &[Kind::Gdb, Kind::Lldb],
        "a location list's DW_LLE_default_location entry (DWARF 5 §2.6.2) is not taken: GDB reports the list as \
         corrupted, LLDB shows the variable as not available",
        None,
    ),
    (
        "D13",
        &[Kind::Lldb],
        "LLDB shows a variable whose DW_OP_fbreg has no frame base to use as optimized out, where the reference \
         reports the missing frame base (ctx.frame-base-missing)",
        None,
    ),
    ("D14", &[Kind::Lldb], "LLDB cannot read a DW_OP_bit_piece of a register (\"unable to read data\")", None),
    (
        "D15",
        &[Kind::Delve],
        "Delve 1.20 shows every element of a C array as the first element, wherever the array is (memory, a \
         register, an implicit value, a composite; GCC's own `int a[8]` at -O0 too)",
        None,
    ),
    (
        "D16",
        &[Kind::Delve],
        "Delve finds no entry of a DWARF 5 location list (.debug_loclists) at the pc, though one covers it \
         (\"could not find loclist entry\")",
        None,
    ),
    (
        "D17",
        &[Kind::Delve],
        "Delve evaluates a variable's location without memory: DW_OP_deref, DW_OP_deref_size and DW_OP_xderef fail \
         (\"memory read unavailable\")",
        None,
    ),
    ("D18", &[Kind::Delve], "Delve does not read the vector registers (xmm0-15, DWARF 17-32) of a core file", None),
    (
        "D19",
        &[Kind::Delve],
        "Delve reads memory at the value of DW_CFA_def_cfa_expression, as for a DW_CFA_expression register rule \
         (DWARF 5 §6.4.2.2: the value is the CFA), so the frame has no CFA and no variable of it can be read \
         (\"unable to find function context\")",
        None,
    ),
    (
        "D20",
        &[Kind::Lldb, Kind::Delve],
        "a DWARF 4 location list (.debug_loc) of a unit whose address size is 4, inside a 64-bit ELF file, is read \
         with 8-byte addresses (DWARF 4 §7.7.3 sizes them by the unit's address_size): LLDB finds no entry though \
         one covers the pc and shows the variable as not available; Delve's reader runs off the section's end \
         (\"Internal debugger error: runtime error: slice bounds out of range\")",
        None,
    ),
];

/// The class of a disagreement between the reference's `reference` and the
/// debugger's `answer` on `case`, or `None`.
pub fn known_class(kind: Kind, case: &ExprCase, reference: &Outcome, answer: &Outcome) -> Option<&'static str> {
    let has = |op: u8| case.expr.contains(&op);
    let fault = |what: &str| matches!(answer, Outcome::Failed(Failure::ConsumerFault { what: w }) if w.contains(what));
    let error =
        |what: &str| matches!(answer, Outcome::Failed(Failure::EvalError { rule, .. }) if rule.as_str().contains(what));
    let result = |o: &Outcome| matches!(o, Outcome::Value(_) | Outcome::Location(_));
    let id = if kind == Kind::Gdb && fault("internal-error") && has(0x28) {
        "D1"
    } else if kind == Kind::Gdb && fault("SIGFPE") && has(0x1b) {
        "D2"
    } else if fault("killed after") && matches!(reference, Outcome::Failed(Failure::Budget { .. })) {
        "D3"
    } else if kind == Kind::Lldb && fault("SIGSEGV") && case.expr.first() == Some(&0x28) {
        "D4"
    } else if kind == Kind::Lldb
        && fault("SIGSEGV")
        && matches!(reference, Outcome::Failed(Failure::Budget { .. }))
        && has(0x93)
    {
        "D5"
    } else if has(0x94)
        && result(reference)
        && matches!(answer, Outcome::Failed(Failure::EvalError { .. }))
        && !error("memory read unavailable")
    {
        "D6"
    } else if kind == Kind::Lldb && error("extracting data from value failed") && (0x29..=0x2e).any(has) {
        "D7"
    } else if kind == Kind::Lldb && undefined_parts(reference) && result(answer) {
        "D8"
    } else if kind == Kind::Gdb
        && result(answer)
        && reference
            .rule()
            .is_some_and(|r| ["op.bit-piece.offset-past-storage", "op.deref.past-storage-end"].contains(&r.as_str()))
    {
        "D9"
    } else if reference_is_undefined(reference) && matches!(answer, Outcome::Failed(Failure::EvalError { .. })) {
        "D10"
    } else if kind == Kind::Lldb
        && error("no variable v")
        && case.ctx.cu.as_ref().is_some_and(|c| c.format == dwarfcheck_core::encoding::Format::Dwarf64)
    {
        "D11"
    } else if default_location(case)
        && result(reference)
        && (error("Corrupted DWARF expression") || kind == Kind::Lldb && all_optimized_out(answer))
    {
        "D12"
    } else if kind == Kind::Lldb
        && reference.rule().is_some_and(|r| r.as_str() == "ctx.frame-base-missing")
        && all_optimized_out(answer)
    {
        "D13"
    } else if kind == Kind::Lldb && error("unable to read data") && has(0x9d) {
        "D14"
    } else if kind == Kind::Delve && result(reference) && repeated_first_byte(answer) {
        "D15"
    } else if kind == Kind::Delve
        && error("could not find loclist entry")
        && case.form.is_some()
        && case.ctx.cu.as_ref().is_some_and(|c| c.version >= 5)
    {
        "D16"
    } else if kind == Kind::Delve && error("memory read unavailable") && [0x06, 0x94, 0x18, 0x95].into_iter().any(has) {
        "D17"
    } else if kind == Kind::Delve
        && (error("from register 1") || error("read out of bounds"))
        && case.expr.first() == Some(&0x90)
        && case.expr.get(1).is_some_and(|r| (17..=32).contains(r))
    {
        "D18"
    } else if kind == Kind::Delve && error("unable to find function context") && case.ctx.cfa.is_some() {
        "D19"
    } else if result(reference)
        && (kind == Kind::Lldb && all_optimized_out(answer)
            || kind == Kind::Delve && error("slice bounds out of range"))
        && case.form.is_some()
        && case.ctx.cu.as_ref().is_some_and(|c| c.version < 5 && c.address_size == 4)
    {
        "D20"
    } else {
        return None;
    };
    Some(id)
}

/// Whether the case's location list has a `DW_LLE_default_location`
/// entry (kind 0x05 in `.debug_loclists`; a coarse byte test over the
/// section, as the other signatures are over the expression).
fn default_location(case: &ExprCase) -> bool {
    case.form.is_some() && case.ctx.cu.as_ref().is_some_and(|c| c.debug_loclists.contains(&0x05))
}

/// Whether a debugger's answer is a variable all of whose bytes are
/// optimized out.
fn all_optimized_out(o: &Outcome) -> bool {
    matches!(o, Outcome::Location(l) if l.places.iter().all(|p| matches!(p,
        SingleLocation::Composite(parts) if parts.iter().all(|x| x.sources.contains(&Source::Undefined)))))
}

/// Whether a debugger's answer is two or more known bytes, all equal to
/// the first (Delve's D15).
fn repeated_first_byte(o: &Outcome) -> bool {
    let Outcome::Location(l) = o else { return false };
    let [SingleLocation::Composite(parts)] = l.places.as_slice() else { return false };
    let mut bytes = Vec::new();
    for p in parts {
        match p.sources.iter().next() {
            Some(Source::Implicit { bytes: b, .. }) if p.sources.len() == 1 => bytes.extend_from_slice(b),
            _ => return false,
        }
    }
    bytes.len() > 1 && bytes.iter().all(|b| *b == bytes[0])
}

/// Whether the reference's location has an undefined part.
fn undefined_parts(o: &Outcome) -> bool {
    matches!(o, Outcome::Location(l) if l.places.iter().any(|p| matches!(p,
        SingleLocation::Composite(parts) if parts.iter().any(|x| x.sources.contains(&Source::Undefined)))))
}

fn reference_is_undefined(o: &Outcome) -> bool {
    matches!(o, Outcome::Location(l) if l.places == [SingleLocation::Simple(Source::Undefined)])
}

/// The explanation and public report of class `id`.
pub fn describe(id: &str) -> Option<(&'static str, Option<&'static str>)> {
    CLASSES.iter().find(|c| c.0 == id).map(|c| (c.2, c.3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_described_once() {
        for (i, c) in CLASSES.iter().enumerate() {
            assert_eq!(c.0, format!("D{}", i + 1));
            assert!(describe(c.0).is_some());
        }
    }
}
