//! `llvm-spirv-15 -r` judged on the `DIExpression` it makes of a SPIR-V
//! `DebugExpression`: the module of the case (assembled word for word) is
//! translated to LLVM IR, the variable's `llvm.dbg.declare`/`llvm.dbg.value`
//! call is read from `llvm-dis-15`'s text, its expression is turned into
//! DWARF operations ([`super::diexpression`]) and evaluated by the
//! reference with the case's initial stack and a location result: the same
//! way `spirv::lower`'s lowering is evaluated, so a translation that means
//! what the seed means gives the reference's outcome.
//!
//! The variable's size (for `DW_OP_LLVM_fragment`) is read from the IR
//! (`size:` of the variable's `DIBasicType`), so the translator's reading
//! of the type is judged too. A `llvm.dbg.value` with an empty expression
//! is the value itself (`DW_OP_stack_value`), as `spirv::lower` writes an
//! empty `DebugValue`.

use super::{diexpression, failed, fault, tools, Tool};
use crate::case::ExprCase;
use crate::consumer::external::process::TempDir;
use crate::spirv::module::build::module_text;
use dwarfcheck_core::context::ResultKind;
use dwarfcheck_core::encoding::spirv::SpirvExpression;
use dwarfcheck_core::outcome::{Failure, Outcome};
use std::sync::Arc;

const TOOL: Tool = Tool::LlvmSpirv;

/// `llvm-spirv-15 -r`'s answer to `case`, whose expression is `e` (see
/// the module docs): the reference's outcome on the translated
/// expression; ill-formed with the tool's reason when it (or its verifier)
/// refuses the module; a consumer fault when it crashes; `Unsupported`
/// when its `DIExpression` has an operation with no DWARF meaning here,
/// or the case's context does not give exactly one initial stack entry.
pub fn answer(case: &ExprCase, e: &SpirvExpression) -> Outcome {
    if case.ctx.initial_stack.len() != 1 {
        // What the seed does then is the reference's own rule
        // (`spirv.context.initial-entry`); an LLVM IR call applies its
        // expression to exactly one operand.
        let n = case.ctx.initial_stack.len();
        return Outcome::Failed(Failure::Unsupported {
            what: format!("a context of {n} initial stack entries: a llvm.dbg call has exactly one operand"),
        });
    }
    let dir = match TempDir::new() {
        Ok(d) => d,
        Err(err) => return fault(TOOL, format!("temporary directory: {err}")),
    };
    let d = dir.path();
    if let Err(f) = tools::assemble(d, "k", &module_text(e)) {
        return fault(TOOL, format!("the module does not assemble word for word: {f}"));
    }
    let ir = match tools::reverse_translate(d, "k") {
        Ok(ir) => ir,
        Err(f) => return failed(TOOL, f),
    };
    let Some(call) = ir.lines().find(|l| l.contains("call void @llvm.dbg.")) else {
        return fault(TOOL, "no llvm.dbg.declare or llvm.dbg.value call in its IR");
    };
    let Some(text) = tools::first_dbg_expression(&ir) else {
        return fault(TOOL, format!("no DIExpression in `{}`", call.trim()));
    };
    let ops = match diexpression::parse(text) {
        Ok(ops) => ops,
        Err(err) => return fault(TOOL, format!("{text}: {err}")),
    };
    let (mut bytes, mut ctx) = match diexpression::to_dwarf(&ops, &case.ctx, variable_bits(&ir)) {
        Ok(x) => x,
        Err(err) => return Outcome::Failed(Failure::Unsupported { what: format!("{text}: {err}") }),
    };
    if call.contains("@llvm.dbg.value") && ops.is_empty() {
        bytes.extend(diexpression::stack_value(&ctx));
    }
    ctx.result_kind = Some(ResultKind::Location);
    let mut translated = case.clone();
    translated.spirv = None;
    translated.attribute = None;
    translated.form = None;
    translated.expr = bytes.into();
    translated.ctx = Arc::new(ctx);
    crate::consumer::builtin::reference_outcome(&translated).0
}

/// The size in **bits** of the local variable `v`'s type, from the IR's
/// metadata: `!DILocalVariable(name: "v", ..., type: !N)` and
/// `!N = !DIBasicType(..., size: S, ...)`. `None` when the type has no
/// size (a composite whose size is unknown) or is not found.
pub fn variable_bits(ir: &str) -> Option<u64> {
    let var = ir.lines().find(|l| l.contains("!DILocalVariable(") && l.contains("name: \"v\""))?;
    let ty = field(var, "type: ")?;
    let def = ir.lines().find(|l| l.starts_with(&format!("{ty} = ")))?;
    field(def, "size: ")?.parse().ok()
}

/// The value of `key` in one line of metadata (up to the next `,` or `)`).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = &line[line.find(key)? + key.len()..];
    Some(rest[..rest.find([',', ')']).unwrap_or(rest.len())].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Metadata lines in the shape llvm-dis-15 prints them.
    #[test]
    fn reads_the_variable_size_from_the_metadata() {
        let ir = "\
!10 = !DILocalVariable(name: \"v\", scope: !7, file: !1, line: 2, type: !12)
!11 = !DILocalVariable(name: \"w\", scope: !7, file: !1, line: 2, type: !13)
!12 = !DIBasicType(name: \"int\", size: 48, encoding: DW_ATE_signed)
!13 = !DIBasicType(name: \"int\", size: 8, encoding: DW_ATE_signed)
";
        assert_eq!(variable_bits(ir), Some(48));
        let none = "!10 = !DILocalVariable(name: \"v\", type: !12)\n!12 = !DICompositeType(tag: DW_TAG_structure_type, name: \"s\")\n";
        assert_eq!(variable_bits(none), None);
    }
}
