//! One case as JSON (docs/suite-format.md "Cases"): its bytes, decoded
//! operations, context, edition, rules and expected normalised outcome.

use super::context::{context, form, section, to_json, Targets};
use crate::asm::decode::{decode_all, OperandValue, Params};
use crate::case::{CfiCase, ExprCase};
use crate::consumer::builtin::{reference_outcome, Reference};
use crate::consumer::Consumer;
use dwarfcheck_core::encoding::hex::to_hex;
use dwarfcheck_core::encoding::op::name_of;
use dwarfcheck_core::encoding::Op;
use serde_json::{json, Value};

/// How deep the operations of nested blocks (`DW_OP_entry_value`) are
/// decoded: deeper blocks are left as their hex operand only.
pub const MAX_NESTED_DEPTH: usize = 8;

/// `expected_from` of a case with a hand-written `expect`.
pub const FROM_CASE: &str = "case";
/// `expected_from` of a case without one: the reference's outcome.
pub const FROM_REFERENCE: &str = "reference";

/// The decoded operations of `bytes` (docs/suite-format.md
/// "Operations"): one object per operation, and a `decode_error` object
/// after the last one when decoding stopped early.
pub fn operations(bytes: &[u8], p: &Params, depth: usize) -> (Vec<Value>, Value) {
    let (ops, fault) = decode_all(bytes, p);
    let list = ops
        .iter()
        .map(|d| {
            let operands: Vec<Value> = d
                .operands
                .iter()
                .map(|o| match o {
                    OperandValue::Unsigned(u) => json!(u),
                    OperandValue::Signed(s) => json!(s),
                    OperandValue::Block(b) => json!(to_hex(b)),
                })
                .collect();
            let mut v = json!({
                "offset": d.offset,
                "length": d.length,
                "name": name_of(d.op()),
                "operands": operands,
            });
            if let (Op::EntryValue | Op::GnuEntryValue, Some(OperandValue::Block(b))) = (d.op(), d.operands.first()) {
                if depth < MAX_NESTED_DEPTH {
                    let (nested, err) = operations(b, p, depth + 1);
                    v["nested"] = json!(nested);
                    if !err.is_null() {
                        v["nested_decode_error"] = err;
                    }
                }
            }
            v
        })
        .collect();
    let err = fault.map_or(Value::Null, |f| json!({ "offset": f.offset, "reason": f.describe() }));
    (list, err)
}

/// An expression case (`kind` `expr`, or `spirv-expr` for a SPIR-V
/// OpenCL.DebugInfo.100 expression, whose `bytes` are its lowering to
/// DWARF operations and whose `spirv` holds the expression itself).
/// `unspecified` lists the `unspecified` rules the reference's answer
/// rests on: where a consumer may answer otherwise (verdict `unspecified`).
pub fn expr_case(c: &ExprCase, id: &str, targets: &mut Targets) -> Value {
    let (reference, unspecified) = reference_outcome(c);
    let (expected, from) = match &c.expect {
        Some(e) => (e.clone(), FROM_CASE),
        None => (reference, FROM_REFERENCE),
    };
    let unspecified: Vec<&str> = unspecified.iter().map(|r| r.as_str()).collect();
    let p = Params::for_context(&c.ctx);
    let (ops, err) = operations(&c.expr, &p, 0);
    json!({
        "id": id,
        "name": c.name,
        "kind": if c.spirv.is_some() { "spirv-expr" } else { "expr" },
        "origin": c.origin,
        "rules": c.rules,
        "edition": to_json(&crate::edition::of_expr_case(c)),
        "bytes": to_hex(&c.expr),
        "operations": ops,
        "decode_error": err,
        "attribute": c.attribute.map(|a| a.dw_name()),
        "form": c.form.as_ref().map(form),
        "spirv": c.spirv.as_deref().map(to_json),
        "context": context(&c.ctx, targets),
        "expected": to_json(&expected),
        "expected_from": from,
        "unspecified": unspecified,
    })
}

/// A CFI case (`kind` `cfi`): the frame section, the FDE's offset, the
/// expected row table and, for an unwinding case, its machine state and
/// expected unwinding.
pub fn cfi_case(c: &CfiCase, id: &str, targets: &mut Targets) -> Value {
    let (expected, from) = match &c.expect {
        Some(e) => (e.clone(), FROM_CASE),
        None => (Reference.frame_table(c), FROM_REFERENCE),
    };
    let unwind = c.unwind.as_ref().map(|u| {
        let (exp, from) = match &u.expect {
            Some(e) => (Some(e.clone()), FROM_CASE),
            None => (Reference.unwind(c, u), FROM_REFERENCE),
        };
        json!({
            "context": context(&u.ctx, targets),
            "limit": u.limit,
            "expected": exp.as_ref().map(to_json),
            "expected_from": from,
        })
    });
    json!({
        "id": id,
        "name": c.name,
        "kind": "cfi",
        "origin": c.origin,
        "rules": c.rules,
        "edition": to_json(&crate::edition::of_cfi_case(c)),
        "section": section(&c.section, targets),
        "fde_offset": c.fde_offset,
        "expected": to_json(&expected),
        "expected_from": from,
        "unwind": unwind,
    })
}
