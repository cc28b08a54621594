//! `spirv:` cases: a SPIR-V OpenCL.DebugInfo.100 `DebugExpression` applied
//! by `DebugDeclare` or `DebugValue`, its initial entry and its variable's
//! size (docs/case-format.md, "SPIR-V cases"). The case's `expr` is the
//! expression's lowering to DWARF operations (`crate::spirv::lower`), for
//! third parties; both evaluators interpret the SPIR-V form itself.

use super::context::{context, expectation, problem, value, R};
use super::schema::CaseSpec;
use crate::case::{Case, ExprCase};
use dwarfcheck_core::context::Entry;
use dwarfcheck_core::encoding::spirv::{Applies, SpirvExpression};
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::target::Target;
use std::sync::Arc;

/// The case `c`, whose `spirv:` is set. The vendor profile is hetero-2020
/// whatever the file says: the lowering is written in its encodings.
pub(super) fn spirv_case(target: &Arc<Target>, c: CaseSpec, origin: String) -> R<Case> {
    let s = c.spirv.as_ref().expect("called for spirv cases");
    let others = c.expr.is_some()
        || c.expr_bytes.is_some()
        || c.loclist.is_some()
        || c.loclistx.is_some()
        || c.constant.is_some()
        || c.attribute.is_some();
    if others {
        return Err(problem(
            "a `spirv:` case has none of `expr:`, `expr_bytes:`, `loclist:`, `loclistx:`, `constant:`, `attribute:`",
            &["spirv:"],
        ));
    }
    let (applies, text) = match (&s.declare, &s.value) {
        (Some(t), None) => (Applies::Declare, t),
        (None, Some(t)) => (Applies::Value, t),
        _ => return Err(problem("`spirv:` has exactly one of `declare:` or `value:`", &["spirv:"])),
    };
    let operations = crate::spirv::text::parse(text).map_err(|e| problem(format!("spirv: {e}"), &[text.as_str()]))?;
    let vendor = VendorProfile::by_name("hetero-2020").expect("a built-in profile");
    let mut ctx = context(target, vendor, &c.context)?;
    match &s.entry {
        Some(_) if !ctx.initial_stack.is_empty() => {
            return Err(problem("give the initial entry once: `spirv.entry` or `context.initial_stack`", &["entry:"]))
        }
        Some(y) => ctx.initial_stack = vec![Entry::Value(value(y, &ctx)?)],
        None => {}
    }
    let e = SpirvExpression { applies, operations, variable_bits: s.variable_bits };
    // An expression with no lowering (ill-formed before it runs) leaves
    // `expr` empty; third parties are then judged on nothing.
    let expr = crate::spirv::lower::lower(&e).unwrap_or_default();
    Ok(Case::Expr(ExprCase {
        expect: c.expect.as_ref().map(|y| expectation(y, &ctx)).transpose()?,
        name: c.name,
        origin,
        expr: expr.into(),
        attribute: None,
        form: None,
        spirv: Some(Arc::new(e)),
        ctx: Arc::new(ctx),
        rules: c.rules,
    }))
}
