//! Cases: one expression or one FDE, with its context and optional expected
//! outcome, ready for any consumer. [`yaml`] loads them from case files
//! (docs/architecture.md §6); the `elf` module extracts them from binaries.

pub mod blob;
pub mod files;
pub mod select;
pub mod yaml;

use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::context::Context;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use std::sync::Arc;

/// Where a case came from, for reports: `file:line` of a YAML case, or the
/// binary, unit and DIE offset of an extracted expression.
pub type Origin = String;

/// One DWARF expression to evaluate.
#[derive(Debug, Clone)]
pub struct ExprCase {
    /// Unique name within its source.
    pub name: String,
    /// Where it came from.
    pub origin: Origin,
    /// The operation expression bytes (the attribute's value when `form`
    /// is `None`).
    pub expr: Arc<[u8]>,
    /// The attribute whose evaluation context applies; `None`: evaluate
    /// `expr` with the context exactly as given (no attribute-specific
    /// initial stack or object).
    pub attribute: Option<dwarfcheck_core::context::Attribute>,
    /// The attribute's value when it is not the exprloc `expr`: a location
    /// list (`.debug_loclists`/`.debug_loc` of `ctx.cu`) or a constant.
    pub form: Option<dwarfcheck_core::context::AttrForm>,
    /// A SPIR-V OpenCL.DebugInfo.100 expression (a `spirv:` case, or one
    /// read from a module): the evaluators interpret it directly, and
    /// `expr` holds its lowering to DWARF operations for third parties
    /// (`spirv::lower`). `attribute` and `form` are then `None`.
    pub spirv: Option<Arc<dwarfcheck_core::encoding::spirv::SpirvExpression>>,
    /// The evaluation context.
    pub ctx: Arc<Context>,
    /// Rule IDs this case is written to exercise.
    pub rules: Vec<String>,
    /// The hand-derived expected outcome, if any.
    pub expect: Option<Outcome>,
}

impl ExprCase {
    /// A case of `expr` evaluated in `ctx` exactly as given: no attribute,
    /// no other form, no SPIR-V, no rules and no expectation.
    pub fn plain(name: impl Into<String>, origin: impl Into<Origin>, expr: &[u8], ctx: Arc<Context>) -> ExprCase {
        ExprCase {
            name: name.into(),
            origin: origin.into(),
            expr: expr.into(),
            attribute: None,
            form: None,
            spirv: None,
            ctx,
            rules: Vec::new(),
            expect: None,
        }
    }

    /// The attribute's value as the evaluators take it: `form`, or the
    /// exprloc `expr` when there is none.
    pub fn value(&self) -> dwarfcheck_core::context::AttrValue<'_> {
        match (&self.spirv, &self.form) {
            (Some(e), _) => dwarfcheck_core::context::AttrValue::Spirv(e),
            (None, Some(f)) => f.as_value(),
            (None, None) => dwarfcheck_core::context::AttrValue::Exprloc(&self.expr),
        }
    }
}

/// One FDE whose row table is to be built.
#[derive(Debug, Clone)]
pub struct CfiCase {
    /// Unique name within its source.
    pub name: String,
    /// Where it came from.
    pub origin: Origin,
    /// The frame section holding the FDE and its CIE.
    pub section: Arc<CfiSection>,
    /// Offset of the FDE in the section.
    pub fde_offset: u64,
    /// Rule IDs this case is written to exercise.
    pub rules: Vec<String>,
    /// The hand-derived expected outcome, if any.
    pub expect: Option<CfiOutcome>,
    /// Virtual unwinding through `section` from a machine state, if the
    /// case asks for it.
    pub unwind: Option<UnwindCase>,
}

/// Virtual unwinding through a CFI case's section (`unwind.*` rules).
#[derive(Debug, Clone)]
pub struct UnwindCase {
    /// The top frame's machine state: `pc`, registers, memory per address
    /// space, thread and lane, budgets (`frames` bounds the steps).
    pub ctx: Arc<Context>,
    /// Stop after this many steps ([`UnwindEnd::Limit`]) unless the base
    /// of the stack comes first; `None`: unwind to the base of the stack.
    ///
    /// [`UnwindEnd::Limit`]: dwarfcheck_core::outcome::unwind::UnwindEnd::Limit
    pub limit: Option<u32>,
    /// The hand-derived expected unwinding, if any.
    pub expect: Option<dwarfcheck_core::outcome::unwind::Unwind>,
}

/// Any case.
#[derive(Debug, Clone)]
pub enum Case {
    /// An expression case.
    Expr(ExprCase),
    /// A CFI case.
    Cfi(CfiCase),
}

impl Case {
    /// The case's name.
    pub fn name(&self) -> &str {
        match self {
            Case::Expr(c) => &c.name,
            Case::Cfi(c) => &c.name,
        }
    }
    /// Where it came from.
    pub fn origin(&self) -> &str {
        match self {
            Case::Expr(c) => &c.origin,
            Case::Cfi(c) => &c.origin,
        }
    }
    /// Rule IDs it exercises.
    pub fn rules(&self) -> &[String] {
        match self {
            Case::Expr(c) => &c.rules,
            Case::Cfi(c) => &c.rules,
        }
    }
}
