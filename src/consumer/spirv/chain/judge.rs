//! Judging a chain object: each variable's DWARF location (from `elf`'s
//! extraction) against the SPIR-V expression evaluated directly in the
//! corresponding context (the correspondence: `super`'s documentation).

use super::dies::VariableDie;
use crate::asm::decode::{decode_all, Params};
use crate::case::ExprCase;
use crate::consumer::builtin::{fast_outcome, reference_outcome};
use dwarfcheck_core::context::{Entry, ResultKind};
use dwarfcheck_core::encoding::leb128::write_uleb;
use dwarfcheck_core::encoding::op::Op;
use dwarfcheck_core::encoding::spirv::SpirvExpression;
use dwarfcheck_core::outcome::location::{Piece, SingleLocation, Source};
use dwarfcheck_core::outcome::{BaseType, Outcome, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// One `DebugDeclare`/`DebugValue` of the module, as the chain matches it
/// to a DWARF variable: by name and line.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The variable's name.
    pub name: Option<String>,
    /// The variable's source line.
    pub line: Option<u64>,
    /// The expression (with `Declare`/`Value` and the variable's size).
    pub expression: SpirvExpression,
}

/// The comparisons the judging uses, given by the caller (the harness's
/// outcome comparison, `runner::compare`, sits above this layer).
pub struct Compare {
    /// Reference against fast: identical outcomes.
    pub same_evaluator: fn(&Outcome, &Outcome) -> bool,
    /// The DWARF outcome (first) agrees with the SPIR-V one (second).
    pub agree: fn(&Outcome, &Outcome) -> bool,
}

/// What one DWARF expression (an exprloc, a location-list entry, or a
/// `DW_AT_const_value`) gives against one SPIR-V expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// The DWARF expression's bytes.
    pub dwarf: Vec<u8>,
    /// Its operations, decoded (up to a fault).
    pub dwarf_ops: Vec<Op>,
    /// The initial entry its prefix gives (a generic value).
    pub entry: u128,
    /// The DWARF outcome, a composite padded to the variable's size.
    pub dwarf_outcome: Outcome,
    /// The SPIR-V outcome.
    pub spirv_outcome: Outcome,
}

/// How one variable came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// Every DWARF expression of the variable agrees with one of its
    /// SPIR-V expressions.
    Agree,
    /// One DWARF expression agrees with none (the first such pair, with
    /// the SPIR-V expression of the variable's only application or, with
    /// several, its first).
    Differ(Box<Pair>, SpirvExpression),
    /// The variable DIE has no `DW_AT_location` and no `DW_AT_const_value`
    /// while the module applies an expression to it.
    NoLocation(SpirvExpression),
    /// The prefix of a DWARF expression fails to evaluate (both
    /// evaluators), so the variable has no location there while the SPIR-V
    /// one has an initial entry: the prefix's first operation and the
    /// reference's outcome for it.
    PrefixFails(Op, Outcome),
    /// Reference and fast disagree on one side: an evaluator bug.
    EvaluatorsDiffer(String),
    /// No judging: why (no application of that name and line; a DWARF
    /// expression without a prefix; ...).
    NotJudged(&'static str),
}

/// One variable of the object, judged.
#[derive(Debug, Clone)]
pub struct Variable {
    /// The DIE.
    pub die: VariableDie,
    /// How many SPIR-V applications it matched.
    pub applications: usize,
    /// How many DWARF expressions it has.
    pub expressions: usize,
    /// The verdict.
    pub judgement: Judgement,
}

/// The DIE offset and attribute of an `elf` case name (`die0x2a.loc`,
/// `die0x2a.loc.3`): `(0x2a, "loc")`.
pub fn die_of(case_name: &str) -> Option<(u64, &str)> {
    let rest = case_name.strip_prefix("die0x")?;
    let (hex, tail) = rest.split_once('.')?;
    let attr = tail.split('.').next()?;
    Some((u64::from_str_radix(hex, 16).ok()?, attr))
}

/// Judges every variable DIE of an object: `cases` are the object's
/// expression cases from `elf`, `dies` its variable DIEs, `applied` the
/// module's applications.
pub fn judge(cases: &[ExprCase], dies: &[VariableDie], applied: &[Applied], cmp: &Compare) -> Vec<Variable> {
    dies.iter()
        .map(|die| {
            let candidates: Vec<&Applied> =
                applied.iter().filter(|a| a.name == die.name && a.line == die.line).collect();
            let mine: Vec<&ExprCase> = cases.iter().filter(|c| die_of(&c.name) == Some((die.offset, "loc"))).collect();
            let judgement = variable(die, &candidates, &mine, cases, cmp);
            Variable { die: die.clone(), applications: candidates.len(), expressions: mine.len(), judgement }
        })
        .collect()
}

/// The judgement of one variable.
fn variable(
    die: &VariableDie,
    candidates: &[&Applied],
    mine: &[&ExprCase],
    all: &[ExprCase],
    cmp: &Compare,
) -> Judgement {
    let Some(first) = candidates.first() else { return Judgement::NotJudged("no application of that name and line") };
    let constant;
    let mine: Vec<&ExprCase> = match (die.const_value, mine.is_empty()) {
        (_, false) => mine.to_vec(),
        (Some(n), true) => {
            // DW_AT_const_value N stands for `DW_OP_constu N;
            // DW_OP_stack_value`, in any context of the object.
            let Some(any) = all.first() else { return Judgement::NotJudged("no context in the object") };
            let mut bytes = vec![0x10];
            write_uleb(&mut bytes, n);
            bytes.push(0x9f);
            constant = ExprCase { name: "const_value".into(), expr: bytes.into(), ..any.clone() };
            vec![&constant]
        }
        (None, true) => return Judgement::NoLocation(first.expression.clone()),
    };
    let mut first_differ = None;
    for d in mine {
        let mut agreed = false;
        for a in candidates {
            match pair(d, &a.expression, cmp) {
                Err(j) => return j,
                Ok(p) if (cmp.agree)(&p.dwarf_outcome, &p.spirv_outcome) => {
                    agreed = true;
                    break;
                }
                Ok(p) => {
                    first_differ.get_or_insert((p, a.expression.clone()));
                }
            }
        }
        if !agreed {
            let (p, e) = first_differ.take().expect("a candidate was tried");
            return Judgement::Differ(Box::new(p), e);
        }
    }
    Judgement::Agree
}

/// One DWARF expression against one SPIR-V expression.
///
/// Errors: [`Judgement::NotJudged`] when the DWARF expression has no
/// prefix to take the initial entry from, [`Judgement::EvaluatorsDiffer`].
fn pair(d: &ExprCase, e: &SpirvExpression, cmp: &Compare) -> Result<Pair, Judgement> {
    let entry = initial_entry(d)?;
    let target = &d.ctx.target;
    let ty = BaseType::generic(target.generic_bits(), target.endian == dwarfcheck_core::target::Endian::Big);
    let mut ctx = (*d.ctx).clone();
    ctx.result_kind = Some(ResultKind::Location);
    ctx.initial_stack = vec![Entry::Value(Value::from_u128(ty, entry))];
    let s = ExprCase {
        name: format!("{}.spirv", d.name),
        expr: crate::spirv::lower::lower(e).unwrap_or_default().into(),
        spirv: Some(Arc::new(e.clone())),
        ctx: Arc::new(ctx),
        ..d.clone()
    };
    let (sr, sf) = (reference_outcome(&s).0, fast_outcome(&s));
    let (dr, df) = (reference_outcome(d).0, fast_outcome(d));
    if !(cmp.same_evaluator)(&sr, &sf) {
        return Err(Judgement::EvaluatorsDiffer(format!("SPIR-V {e}: reference {sr}, fast {sf}")));
    }
    if !(cmp.same_evaluator)(&dr, &df) {
        return Err(Judgement::EvaluatorsDiffer(format!("DWARF {:02x?}: reference {dr}, fast {df}", &d.expr[..])));
    }
    let (ops, _) = decode_all(&d.expr, &Params::for_context(&d.ctx));
    let dwarf_ops = ops.iter().map(|o| o.spec.op).collect();
    Ok(Pair { dwarf: d.expr.to_vec(), dwarf_ops, entry, dwarf_outcome: padded(dr, e.variable_bits), spirv_outcome: sr })
}

/// The generic value the prefix of `d`'s expression denotes: its first
/// operation that is not a `DW_OP_piece`/`DW_OP_bit_piece`, evaluated
/// alone (with a `DW_OP_constu M; DW_OP_and` after it, LLVM's zero
/// extension) followed by `DW_OP_stack_value` in `d`'s context; a register
/// location (`DW_OP_regN`, `DW_OP_regx R`) stands for the register's value
/// (`DW_OP_bregN 0`, `DW_OP_bregx R 0`).
fn initial_entry(d: &ExprCase) -> Result<u128, Judgement> {
    let (ops, _) = decode_all(&d.expr, &Params::for_context(&d.ctx));
    let Some(at) = ops.iter().position(|o| !matches!(o.spec.op, Op::Piece | Op::BitPiece)) else {
        return Err(Judgement::NotJudged("a DWARF expression with no operation before its pieces"));
    };
    let op = &ops[at];
    // A piece with a location after an earlier one: parts of several
    // applications (a DebugValue per fragment) merged into one entry.
    let located = ops
        .iter()
        .enumerate()
        .filter(|(i, o)| {
            matches!(o.spec.op, Op::Piece | Op::BitPiece)
                && *i > 0
                && !matches!(ops[i - 1].spec.op, Op::Piece | Op::BitPiece)
        })
        .count();
    if located > 1 {
        return Err(Judgement::NotJudged("a DWARF entry whose pieces come from several applications"));
    }
    // LLVM's zero extension of a narrower value in a wider register,
    // `DW_OP_constu 2^N-1; DW_OP_and`, belongs to the prefix.
    let mask = match ops.get(at + 1..at + 3) {
        Some([m, a]) if m.spec.op == Op::Constu && a.spec.op == Op::And => m.length + a.length,
        _ => 0,
    };
    let mut bytes = match op.spec.op {
        Op::Reg(n) => vec![0x70 + n, 0],
        Op::Regx => {
            let mut b = vec![0x92];
            b.extend_from_slice(&d.expr[op.offset + 1..op.offset + op.length]);
            b.push(0);
            b
        }
        _ => d.expr[op.offset..op.offset + op.length].to_vec(),
    };
    bytes.extend_from_slice(&d.expr[op.offset + op.length..op.offset + op.length + mask]);
    bytes.push(0x9f);
    let p = ExprCase { expr: bytes.into(), ..d.clone() };
    match reference_outcome(&p).0 {
        Outcome::Location(l) => match l.places.as_slice() {
            [SingleLocation::Simple(Source::Implicit { bytes, bit_offset: 0 })] if bytes.len() <= 16 => {
                let mut b = [0u8; 16];
                b[..bytes.len()].copy_from_slice(bytes);
                Ok(u128::from_le_bytes(b))
            }
            _ => Err(Judgement::NotJudged("a prefix that gives no value")),
        },
        failed @ Outcome::Failed(_) if failed == fast_outcome(&p) => Err(Judgement::PrefixFails(op.spec.op, failed)),
        _ => Err(Judgement::NotJudged("a prefix that gives no value")),
    }
}

/// `o` with a composite shorter than `bits` (the variable's size) padded
/// with an undefined part up to it: LLVM leaves the parts of a variable no
/// fragment covers out of the end of its `DW_OP_piece`s, where the SPIR-V
/// `Fragment` gives a composite of the whole variable.
pub fn padded(o: Outcome, bits: Option<u64>) -> Outcome {
    let (Outcome::Location(mut l), Some(v)) = (o.clone(), bits) else { return o };
    let [SingleLocation::Composite(parts)] = l.places.as_mut_slice() else { return o };
    let covered: u64 = parts.iter().map(|p| p.bits).sum();
    if covered >= v {
        return o;
    }
    let undefined: BTreeSet<Source> = [Source::Undefined].into();
    match parts.last_mut() {
        Some(last) if last.sources == undefined => last.bits += v - covered,
        _ => parts.push(Piece { bits: v - covered, sources: undefined }),
    }
    Outcome::Location(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn die_names() {
        assert_eq!(die_of("die0x2a.loc"), Some((0x2a, "loc")));
        assert_eq!(die_of("die0x2a.loc.3"), Some((0x2a, "loc")));
        assert_eq!(die_of("die0x1f.fb"), Some((0x1f, "fb")));
        assert_eq!(die_of("const_value"), None);
    }
}
