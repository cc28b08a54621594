//! Reading a module's debug expressions and checking the module rules of
//! `specs/rules/spirv-module.yaml` at each instruction.

use super::debuginfo::{self, op, ExtInst};
use super::index::Index;
use super::load::{self, LoadError, Position};
use super::{Application, Expression, Module, Operation, Variable, Violation};
use dwarfcheck_core::encoding::spirv::{Applies, DebugOperation, SpirvExpression};
use dwarfcheck_core::rules::id;
use foldhash::HashMap;
use foldhash::HashMapExt as _;

/// Reads the module in `bytes`: its debug operations, expressions and the
/// `DebugDeclare`s and `DebugValue`s with their variables, and the module
/// rules each breaks. A module that does not import OpenCL.DebugInfo.100
/// has none of these. Work is linear in the module's size (type chains are
/// followed at most [`super::index::MAX_TYPE_DEPTH`] deep).
///
/// # Errors
/// [`LoadError`] when rspirv cannot decode the binary. Never panics.
pub fn read(bytes: &[u8]) -> Result<Module, LoadError> {
    let insts = load::instructions(bytes)?;
    let ix = Index::new(&insts);
    let mut m = Module { address_bytes: ix.address_bits.map(|b| (b / 8) as u8), ..Module::default() };
    if !ix.has_debug_info() {
        return Ok(m);
    }
    // Operations and expressions first, so that a DebugDeclare or
    // DebugValue finds its expression (even one defined after it) read
    // once; then the applications. Violations end up in module order.
    let mut by_id: HashMap<u32, usize> = HashMap::new();
    for (pos, inst) in &insts {
        let Some(e) = ix.debug(inst) else { continue };
        let id = inst.result_id.unwrap_or(0);
        match e.number {
            op::OPERATION => operation(&mut m, *pos, id, &e),
            op::EXPRESSION => {
                let operations = expression(&ix, &mut m, *pos, &e);
                by_id.insert(id, m.expressions.len());
                m.expressions.push(Expression { position: *pos, id, operations });
            }
            _ => {}
        }
    }
    for (pos, inst) in &insts {
        let Some(e) = ix.debug(inst) else { continue };
        if matches!(e.number, op::DECLARE | op::VALUE) {
            let x = e.words.get(2).and_then(|x| by_id.get(x)).map(|&i| m.expressions[i].operations.clone());
            application(&ix, &mut m, *pos, inst.result_id.unwrap_or(0), &e, x);
        }
    }
    m.violations.sort_by_key(|v| v.position);
    Ok(m)
}

/// A `DebugOperation`: recorded.
///
/// Rule `spirv.module.operation-literals` is not checked: in the binary a
/// literal and an <id> are the same word, so an operand that happens to
/// equal a constant's <id> cannot be told from one that is meant as an
/// <id> (clang and llvm-spirv's `Fragment 16 16` next to a constant `%16`
/// would be reported), and spirv-as refuses an <id> where the grammar has
/// a literal, so text cannot break it either.
fn operation(m: &mut Module, position: Position, id: u32, e: &ExtInst) {
    let Some((&code, operands)) = e.words.split_first() else {
        m.warnings.push(format!("DebugOperation %{id} at {position} has no operation code"));
        return;
    };
    m.operations.push(Operation { position, id, operation: DebugOperation { code, operands: operands.to_vec() } });
}

/// The operation list of a `DebugExpression`; `None` (with a violation)
/// when an operand is not a `DebugOperation`.
fn expression(ix: &Index<'_>, m: &mut Module, position: Position, e: &ExtInst) -> Option<Vec<DebugOperation>> {
    let mut ops = Some(Vec::with_capacity(e.words.len()));
    for &w in &e.words {
        match ix.debug_def(w) {
            Some(o) if o.number == op::OPERATION => match o.words.split_first() {
                Some((&code, rest)) => {
                    if let Some(v) = ops.as_mut() {
                        v.push(DebugOperation { code, operands: rest.to_vec() });
                    }
                }
                None => ops = None,
            },
            other => {
                m.violations.push(Violation {
                    rule: id::SPIRV_MODULE_EXPRESSION_OPERAND_IS_OPERATION,
                    position,
                    detail: format!("operand %{w} is {}, not a DebugOperation", what(ix, w, other.as_ref())),
                });
                ops = None;
            }
        }
    }
    ops
}

/// What the instruction defining `w` is, for messages.
fn what(ix: &Index<'_>, w: u32, debug: Option<&ExtInst>) -> String {
    match (debug, ix.def(w)) {
        (Some(d), _) => format!("a {}", debuginfo::name(d.number)),
        (None, Some((_, i))) => format!("an Op{}", i.class.opname),
        (None, None) => "defined nowhere".to_string(),
    }
}

/// A `DebugDeclare` or `DebugValue`: its variable, its expression, and the
/// rules on its operands. `operations`: what its Expression operand reads
/// as when that is a `DebugExpression` (`Some(None)`: one that cannot be
/// read), `None` when it is no `DebugExpression`.
fn application(
    ix: &Index<'_>,
    m: &mut Module,
    position: Position,
    id: u32,
    e: &ExtInst,
    operations: Option<Option<Vec<DebugOperation>>>,
) {
    let applies = if e.number == op::DECLARE { Applies::Declare } else { Applies::Value };
    let [var_id, operand, expression_id, indexes @ ..] = e.words.as_slice() else {
        m.warnings.push(format!("{} %{id} at {position} has fewer than 3 operands", debuginfo::name(e.number)));
        return;
    };
    let mut violate =
        |rule: dwarfcheck_core::rules::RuleId, detail: String| m.violations.push(Violation { rule, position, detail });
    let variable = variable(ix, *var_id);
    if !variable.as_ref().is_some_and(|(v, local)| *local && v.instruction == "DebugLocalVariable") {
        violate(
            id::SPIRV_MODULE_VARIABLE_IS_LOCAL_VARIABLE,
            format!("Local Variable %{var_id} is {}", what(ix, *var_id, ix.debug_def(*var_id).as_ref())),
        );
    }
    let variable = variable.map(|(v, _)| v);
    let mut storage_class = None;
    if applies == Applies::Declare {
        match ix.pointer_storage_class(*operand) {
            Some(s) => storage_class = Some(format!("{s:?}")),
            None => violate(
                id::SPIRV_MODULE_DECLARE_POINTER,
                format!(
                    "Variable %{operand} is {}, not a pointer",
                    what(ix, *operand, ix.debug_def(*operand).as_ref())
                ),
            ),
        }
    } else if !indexes.is_empty() && !variable.as_ref().is_some_and(|v| v.composite) {
        violate(
            id::SPIRV_MODULE_VALUE_INDEXES_COMPOSITE,
            format!("{} Indexes on a variable whose type is not a composite", indexes.len()),
        );
    }
    let expression = match (operations, ix.debug_def(*expression_id)) {
        (Some(operations), _) => operations.map(|operations| SpirvExpression {
            applies,
            operations,
            variable_bits: variable.as_ref().and_then(|v| v.bits),
        }),
        (None, other) => {
            violate(
                id::SPIRV_MODULE_EXPRESSION_IS_EXPRESSION,
                format!("Expression %{expression_id} is {}", what(ix, *expression_id, other.as_ref())),
            );
            None
        }
    };
    m.applications.push(Application {
        position,
        id,
        variable,
        operand: *operand,
        storage_class,
        indexes: indexes.to_vec(),
        expression_id: *expression_id,
        expression,
        applies,
    });
}

/// The variable `id` names, and whether it is a local one (a
/// `DebugLocalVariable`, or a `DebugInlinedVariable` of one); `None` when
/// `id` is no variable.
fn variable(ix: &Index<'_>, id: u32) -> Option<(Variable, bool)> {
    let e = ix.debug_def(id)?;
    let (e, id) = if e.number == op::INLINED_VARIABLE {
        let inner = *e.words.first()?;
        (ix.debug_def(inner)?, inner)
    } else {
        (e, id)
    };
    let local = match e.number {
        op::LOCAL_VARIABLE => true,
        op::GLOBAL_VARIABLE => false,
        _ => return None,
    };
    let type_id = e.words.get(1).copied();
    Some((
        Variable {
            id,
            instruction: debuginfo::name(e.number),
            name: e.words.first().and_then(|n| ix.string(*n)),
            type_id,
            bits: type_id.and_then(|t| ix.type_bits(t)),
            composite: type_id.is_some_and(|t| ix.is_composite(t)),
            line: e.words.get(3).copied(),
        },
        local,
    ))
}
