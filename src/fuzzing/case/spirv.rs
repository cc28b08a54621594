//! The SPIR-V part of a fuzz case (the `spirv_expr` target): a
//! `DebugExpression` with its initial entry, put into an evaluation context
//! and written as the `spirv:` mapping of a case file (docs/case-format.md,
//! "SPIR-V cases").

use dwarfcheck_core::context::{Context, Entry as StackEntry, MachineState};
use dwarfcheck_core::encoding::spirv::{Applies, DebugOperation, SpirvExpression};
use dwarfcheck_core::outcome::Value;
use std::fmt::Write;
use std::sync::Arc;

/// A SPIR-V expression and the one initial stack entry it starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpirvPart {
    /// The expression (`DebugDeclare` or `DebugValue`, its operations,
    /// the variable's size in **bits**).
    pub expression: SpirvExpression,
    /// The initial entry, a generic-typed value: the variable's address
    /// (Declare) or value (Value).
    pub entry: u64,
}

impl SpirvPart {
    /// Puts the initial entry into `ctx` (its only one) and returns the
    /// expression's lowering to DWARF (`crate::spirv::lower`; empty when
    /// there is none) and the expression, as the case loader does.
    pub fn apply(&self, ctx: &mut Context) -> (Arc<[u8]>, Option<Arc<SpirvExpression>>) {
        let generic = ctx.generic_type();
        ctx.initial_stack = vec![StackEntry::Value(Value::from_u128(generic, u128::from(self.entry)))];
        let lowered = crate::spirv::lower::lower(&self.expression).unwrap_or_default();
        (lowered.into(), Some(Arc::new(self.expression.clone())))
    }

    /// The `spirv:` mapping, each line starting with `indent`: `declare:`
    /// or `value:` with the operations in spirv-dis spelling (unknown
    /// codes as `#N`), `variable_bits:` when known, and `entry:`.
    pub fn yaml(&self, indent: &str) -> String {
        let e = &self.expression;
        let key = match e.applies {
            Applies::Declare => "declare",
            Applies::Value => "value",
        };
        let mut s = format!("{indent}spirv:\n{indent}  {key}: \"{}\"\n", spirv_text(&e.operations));
        if let Some(b) = e.variable_bits {
            let _ = writeln!(s, "{indent}  variable_bits: {b}");
        }
        let _ = writeln!(s, "{indent}  entry: {:#x}", self.entry);
        s
    }
}

/// `ops` in the spelling `crate::spirv::text::parse` reads back
/// (`DebugOperation`'s display: `#N` for a code the seed does not
/// define), comma-separated.
fn spirv_text(ops: &[DebugOperation]) -> String {
    ops.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
