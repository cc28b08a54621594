//! Real SPIR-V modules (issue 16, item 5): every OpenCL.DebugInfo.100
//! `DebugOperation`, `DebugExpression`, `DebugDeclare` and `DebugValue`
//! of a module, with the variable each applies to, the rules of
//! `specs/rules/spirv-module.yaml` checked at each instruction (all but
//! `spirv.module.operation-literals`, which a binary cannot show: see
//! `read`), and
//! ([`cases`]) one expression case per `DebugDeclare`/`DebugValue`.
//!
//! Modules are decoded by the `rspirv` crate ([`load`]); this module only
//! reads the words of the debug instructions it decodes (seed
//! `opencl-debuginfo-100.txt` §2 "Binary Form", §4).

pub mod build;
pub mod cases;
pub mod debuginfo;
pub mod index;
pub mod load;
mod read;
pub mod suite;

pub use load::{LoadError, Position};
pub use read::read;

use dwarfcheck_core::encoding::spirv::{Applies, DebugOperation, SpirvExpression};

/// The source variable a `DebugDeclare` or `DebugValue` names.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Variable {
    /// Result <id> of its `DebugLocalVariable` (or `DebugGlobalVariable`).
    pub id: u32,
    /// `DebugLocalVariable`, `DebugGlobalVariable`, or another instruction
    /// (a violation of `spirv.module.variable-is-local-variable`).
    pub instruction: String,
    /// Its name, from the `OpString` its Name operand gives.
    pub name: Option<String>,
    /// Result <id> of its debug type.
    pub type_id: Option<u32>,
    /// Its size in **bits**, from its debug type ([`index::Index::type_bits`]).
    pub bits: Option<u64>,
    /// Whether its type is a composite (structure, array or vector).
    pub composite: bool,
    /// Its source line.
    pub line: Option<u32>,
}

/// One `DebugOperation`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Operation {
    /// Where it is.
    pub position: Position,
    /// Its result <id>.
    pub id: u32,
    /// Its code and literal operands.
    pub operation: DebugOperation,
}

/// One `DebugExpression`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Expression {
    /// Where it is.
    pub position: Position,
    /// Its result <id>.
    pub id: u32,
    /// Its operations in order; `None` when an operand is not a
    /// `DebugOperation` (`spirv.module.expression-operand-is-operation`)
    /// or is one without an operation code.
    pub operations: Option<Vec<DebugOperation>>,
}

/// One `DebugDeclare` or `DebugValue`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Application {
    /// Where it is.
    pub position: Position,
    /// Its result <id>.
    pub id: u32,
    /// The variable, when its Local Variable operand names a variable.
    pub variable: Option<Variable>,
    /// Declare's Variable operand (the pointer) or Value's Value operand.
    pub operand: u32,
    /// For a `DebugDeclare`: the storage class of the pointer, when it is
    /// one (spirv-dis spelling, `Function`).
    pub storage_class: Option<String>,
    /// A `DebugValue`'s Indexes (<id>s).
    pub indexes: Vec<u32>,
    /// Result <id> of its Expression operand.
    pub expression_id: u32,
    /// The expression as the evaluators take it; `None` when the
    /// Expression operand is no readable `DebugExpression`.
    pub expression: Option<SpirvExpression>,
    /// `Declare` or `Value`.
    pub applies: Applies,
}

impl Application {
    /// Whether it is a `DebugDeclare`.
    pub fn is_declare(&self) -> bool {
        self.applies == Applies::Declare
    }
}

/// A module rule broken at an instruction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// Rule ID of `specs/rules/spirv-module.yaml`.
    pub rule: dwarfcheck_core::rules::RuleId,
    /// The instruction that breaks it.
    pub position: Position,
    /// What is wrong, in words.
    pub detail: String,
}

/// What a module holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Module {
    /// Address size of the addressing model in **bytes** (`Physical32`: 4,
    /// `Physical64`: 8); `None` for the others.
    pub address_bytes: Option<u8>,
    /// Every `DebugOperation`, in module order.
    pub operations: Vec<Operation>,
    /// Every `DebugExpression`, in module order.
    pub expressions: Vec<Expression>,
    /// Every `DebugDeclare` and `DebugValue`, in module order.
    pub applications: Vec<Application>,
    /// Module rules broken, in module order.
    pub violations: Vec<Violation>,
    /// Debug instructions too short to read (no rule of the catalogue
    /// covers them), in module order.
    pub warnings: Vec<String>,
}

/// The module in the file at `path`.
///
/// # Errors
/// The file cannot be read ([`ReadError::Io`]) or rspirv refuses it.
pub fn read_file(path: &std::path::Path) -> Result<Module, ReadError> {
    let bytes = std::fs::read(path).map_err(|e| ReadError::Io(e.to_string()))?;
    read(&bytes).map_err(ReadError::Load)
}

/// Why a file gives no module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read.
    #[error("cannot read: {0}")]
    Io(String),
    /// rspirv refuses the binary.
    #[error(transparent)]
    Load(#[from] LoadError),
}
