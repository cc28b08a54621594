//! Outcomes written as a case file's `expect:` text: the inverse of the
//! loader's `context::expectation` (docs/case-format.md, "Locations and
//! entries").

use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::{BudgetKind, Failure, Outcome, SingleLocation, Source, TypeEncoding, Value};
use std::fmt::Write as _;

/// `o` as the flow mapping a case's `expect:` takes, e.g.
/// `{ location: { memory: 0x1000 } }` or `{ ill_formed: op.x, at: 3 }`,
/// such that the loader reads it back to an outcome equal to `o`.
///
/// `big_endian` is the target's byte order (a typed value written by its
/// type name takes the target's endianity). `None` for outcomes the format
/// cannot state: `Unsupported`, `ConsumerFault`, a time budget, and values
/// of a vector type, of a type whose endianity is not the target's, or of
/// an encoding with no `DW_ATE_` name.
pub fn expectation(o: &Outcome, big_endian: bool) -> Option<String> {
    let at = |a: &Option<u64>| a.map(|a| format!(", at: {a}")).unwrap_or_default();
    Some(match o {
        Outcome::Value(v) => format!("{{ value: {} }}", value(v, big_endian)?),
        Outcome::Location(l) => {
            let places: Vec<String> = l.places.iter().map(single).collect();
            match places.as_slice() {
                [one] => format!("{{ location: {one} }}"),
                _ => format!("{{ location: {{ any_of: [ {} ] }} }}", places.join(", ")),
            }
        }
        Outcome::Failed(Failure::IllFormed { rule, at: a }) => format!("{{ ill_formed: {rule}{} }}", at(a)),
        Outcome::Failed(Failure::EvalError { rule, at: a }) => format!("{{ eval_error: {rule}{} }}", at(a)),
        Outcome::Failed(Failure::Budget { budget, at: a }) => {
            format!("{{ budget: {}{} }}", budget_name(*budget)?, at(a))
        }
        Outcome::Failed(Failure::Unsupported { .. } | Failure::ConsumerFault { .. }) => return None,
    })
}

fn budget_name(b: BudgetKind) -> Option<&'static str> {
    Some(match b {
        BudgetKind::Steps => "steps",
        BudgetKind::Stack => "stack",
        BudgetKind::Depth => "depth",
        BudgetKind::Size => "size",
        BudgetKind::Frames => "frames",
        BudgetKind::Memory => "memory",
        BudgetKind::Work => "work",
        BudgetKind::Time => return None,
    })
}

/// A generic value as a hex integer; a typed one as `{ type, hex }` (the
/// bit pattern most significant byte first).
fn value(v: &Value, big_endian: bool) -> Option<String> {
    let hex = dwarfcheck_core::encoding::hex::to_hex_last_first(&v.bytes);
    match v.ty.encoding {
        TypeEncoding::Generic => Some(format!("{:#x}", v.to_u128())),
        TypeEncoding::Ate(e) => {
            let name = ate::name(e)?.strip_prefix("DW_ATE_")?;
            if v.ty.vector_size != 1 || v.ty.big_endian != big_endian || v.bytes.is_empty() {
                return None;
            }
            Some(format!("{{ type: {name}{}, hex: \"{hex}\" }}", v.ty.bits))
        }
    }
}

fn single(s: &SingleLocation) -> String {
    match s {
        SingleLocation::Simple(src) => format!("{{ {} }}", source(src)),
        SingleLocation::Composite(pieces) => {
            let parts: Vec<String> = pieces
                .iter()
                .map(|p| {
                    let alts: Vec<String> = p.sources.iter().map(|s| format!("{{ {} }}", source(s))).collect();
                    match alts.as_slice() {
                        [_] => format!("{{ bits: {}, {} }}", p.bits, p.sources.iter().map(source).collect::<String>()),
                        _ => format!("{{ bits: {}, any_of: [ {} ] }}", p.bits, alts.join(", ")),
                    }
                })
                .collect();
            format!("{{ composite: [ {} ] }}", parts.join(", "))
        }
    }
}

/// The keys of one place, without braces.
fn source(s: &Source) -> String {
    let bit_offset = |b: u64| if b == 0 { String::new() } else { format!(", bit_offset: {b}") };
    match s {
        Source::Memory { aspace, bit_addr, thread, lane } => {
            let mut t = format!("memory: {:#x}{}", bit_addr / 8, bit_offset((bit_addr % 8) as u64));
            if *aspace != 0 {
                let _ = write!(t, ", aspace: {aspace}");
            }
            if let Some(th) = thread {
                let _ = write!(t, ", thread: {th}");
            }
            if let Some(l) = lane {
                let _ = write!(t, ", lane: {l}");
            }
            t
        }
        Source::Register { regno, bit_offset: b } => format!("register: {regno}{}", bit_offset(*b)),
        Source::Implicit { bytes, bit_offset: b } => {
            format!("implicit: \"{}\"{}", dwarfcheck_core::encoding::hex::to_hex(bytes), bit_offset(*b))
        }
        Source::ImplicitPointer { die, aspace, byte_displacement, bit_offset: b } => {
            let aspace = aspace.map(|a| format!(", aspace: {a}")).unwrap_or_default();
            format!("implicit_pointer: {{ die: {die:#x}, offset: {byte_displacement}{aspace} }}{}", bit_offset(*b))
        }
        Source::Undefined => "undefined: true".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::expectation;
    use crate::case::{yaml::load_str, Case};
    use dwarfcheck_core::outcome::Outcome;

    /// The expectation of a one-case file whose `expect:` is `expect`.
    fn loaded(target: &str, expect: &str) -> Outcome {
        let text = format!(
            "target: {target}\ncases:\n  - name: c\n    rules: [expr.eval.runs-to-end]\n    context:\n      cu: {{ base_types: {{ 0x2a: {{ encoding: DW_ATE_signed, bits: 32 }} }} }}\n    expr: DW_OP_lit0\n    expect: {expect}\n"
        );
        match load_str("t.yaml", &text).map_err(|e| format!("{e:?}\n{text}")).unwrap().remove(0) {
            Case::Expr(c) => c.expect.unwrap(),
            Case::Cfi(_) => unreachable!("an expression case"),
        }
    }

    #[test]
    fn every_form_reads_back_the_same() {
        for (target, e) in [
            ("x86_64", "{ value: 0x1234 }"),
            ("x86_64", "{ value: { type: signed32, v: -5 } }"),
            ("x86_64", "{ value: { type: float64, hex: \"400921fb54442d18\" } }"),
            ("x86_64", "{ value: { type: 0x2a, v: 7 } }"),
            ("x86_64", "{ location: { memory: 0x7ffc0010, bit_offset: 3 } }"),
            ("amdgpu-gfx90a", "{ location: { memory: 0x10, aspace: 5, lane: 3 } }"),
            ("x86_64", "{ location: { register: rax, bit_offset: 8 } }"),
            ("x86_64", "{ location: { implicit: \"01 00 00 00\", bit_offset: 8 } }"),
            ("x86_64", "{ location: { implicit_pointer: { die: 0x40, offset: -8 } } }"),
            ("x86_64", "{ location: { undefined: true } }"),
            ("x86_64", "{ location: { any_of: [ { register: 0 }, { memory: 0x10 } ] } }"),
            (
                "x86_64",
                "{ location: { composite: [ { bits: 32, register: 0 }, { bits: 16, undefined: true }, \
                 { bits: 8, any_of: [ { register: 1 }, { memory: 0x20 } ] } ] } }",
            ),
            ("x86_64", "{ ill_formed: op.bra.target-not-op-start, at: 3 }"),
            ("x86_64", "{ eval_error: op.deref.memory-unreadable }"),
            ("x86_64", "{ budget: steps, at: 0 }"),
        ] {
            let want = loaded(target, e);
            let big = false;
            let text = expectation(&want, big).unwrap_or_else(|| panic!("no text for {want}"));
            assert_eq!(loaded(target, &text), want, "{e} -> {text}");
        }
    }
}
