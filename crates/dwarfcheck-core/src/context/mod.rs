//! The evaluation context: the machine state and debug-information state an
//! expression is evaluated against (hetero-2020 "DWARF Expression
//! Evaluation Context").
//!
//! This is the part of the context both evaluators share
//! (docs/architecture.md). It only answers questions ("what bytes are at
//! this address?"); it never decides what an operation means.
//!
//! - [`MachineState`]: the pull interface an evaluator asks through;
//! - [`Context`]: an in-memory machine state (case files, real binaries
//!   with synthetic registers and memory);
//! - [`Overlay`]: another state with some answers changed (the context of
//!   a nested evaluation, of a calling frame, of an attribute);
//! - the elements: [`UnitInfo`] and [`Die`] of the current unit,
//!   [`CallerFrame`]s, [`Entry`] values of the initial stack and the
//!   current object, [`Budgets`].

pub mod attribute;
mod frame;
mod overlay;
mod owned;
mod state;
pub mod synthetic;
mod unit;

pub use attribute::Attribute;
pub use frame::CallerFrame;
pub use overlay::Overlay;
pub use owned::{Context, MemorySegment};
pub use state::MachineState;
pub use unit::{AttrForm, AttrValue, CompUnit, DebugSection, Die, UnitInfo};

use crate::outcome::{Failure, NormalLocation, Value};

/// The result kind the caller asks for (hetero-2020 "current result kind").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ResultKind {
    /// A location description is required.
    Location,
    /// A value is required.
    Value,
}

/// An entry given by the context: a value or a location description
/// (initial stack entries and the current object).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Entry {
    /// A value.
    Value(Value),
    /// A location description.
    Location(NormalLocation),
}

/// Which memory location storage of an address space is meant: the space,
/// and for per-thread / per-lane spaces the thread and lane it is bound to
/// (hetero-2020 "Memory Location Description Operations": the storage is
/// selected when the location description is created).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemoryStorage {
    /// DWARF address space identifier.
    pub aspace: u64,
    /// Thread of per-thread storage, else `None`.
    pub thread: Option<u64>,
    /// Lane of per-lane storage, else `None`.
    pub lane: Option<u32>,
}

impl MemoryStorage {
    /// Shared storage of `aspace`.
    pub fn shared(aspace: u64) -> Self {
        MemoryStorage { aspace, thread: None, lane: None }
    }
}

/// The canonical frame address of a frame: a byte address in an address
/// space (hetero-2020 "Call Frame Information": `DW_CFA_LLVM_def_aspace_cfa`
/// gives the space; 0 otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cfa {
    /// Byte address.
    pub address: u64,
    /// DWARF address space identifier.
    pub aspace: u64,
}

/// A context element that can be missing ([`ContextError::Missing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Element {
    /// The current compilation unit.
    Unit,
    /// A base type DIE at the given unit offset.
    BaseType,
    /// An entry of `.debug_addr`.
    DebugAddrEntry,
    /// The current frame's CFA.
    Cfa,
    /// The calling frame.
    Caller,
}

impl std::fmt::Display for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Element::Unit => "compilation unit",
            Element::BaseType => "base type DIE",
            Element::DebugAddrEntry => ".debug_addr entry",
            Element::Cfa => "CFA",
            Element::Caller => "calling frame",
        })
    }
}

/// Why the context could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// A context element the operation requires was not specified.
    #[error("context element not specified: {0}")]
    Missing(Element),
    /// The target has no register with this number.
    #[error("register {0} does not exist on the target")]
    NoSuchRegister(u64),
    /// The register exists but its value is not available.
    #[error("register {0} has no value in this context")]
    RegisterUnavailable(u64),
    /// Memory at this address cannot be read.
    #[error("memory in address space {aspace} at {address:#x} cannot be read")]
    MemoryUnreadable {
        /// Address space.
        aspace: u64,
        /// First unreadable byte address.
        address: u64,
    },
    /// The element was to come from virtually unwinding the current frame
    /// through the program's CFI, which failed (`unwind.context-from-cfi`):
    /// the failure of that unwinding.
    #[error("virtual unwinding failed: {0}")]
    Unwinding(Failure),
}

/// Explicit evaluation budgets (docs/architecture.md §9). Exceeding one yields
/// `Outcome::Budget`, never a panic. Both evaluators apply them at the same
/// points so that they agree on the outcome:
/// - `steps`: checked before each operation is executed; executing
///   operation number `steps + 1` (1-based, nested evaluations included)
///   reports `Budget { Steps, at: <its offset> }`;
/// - `stack`: checked after an operation; more than `stack` entries
///   reports `Budget { Stack, at }`;
/// - `depth`: nested evaluations (frame base, `DW_OP_call*`,
///   `DW_OP_entry_value`, implicit pointers) deeper than `depth`;
/// - `size_bytes`: any single value, implicit storage or composite larger
///   than this many **bytes** (or a piece/part of more than `8 * size_bytes`
///   **bits**);
/// - `memory_bytes`: the storage one evaluation creates, counted over its
///   whole run, nested evaluations included, in **bytes**:
///   [`Budgets::PART_MEMORY_BYTES`] per composite part a `DW_OP_piece`,
///   `DW_OP_bit_piece`, `DW_OP_LLVM_extend` or
///   `DW_OP_LLVM_select_bit_piece` creates (weighed as the size budget
///   weighs them), the byte size of each implicit storage `DW_OP_implicit_value`
///   or a DIE's constant creates, and the byte size of each value a typed
///   operation (`DW_OP_const_type`, `DW_OP_regval_type`,
///   `DW_OP_deref_type`, `DW_OP_xderef_type`, `DW_OP_convert`,
///   `DW_OP_reinterpret`) or an entry value of a register creates. The
///   charge is made where the size budget is checked; going over reports
///   `Budget { Memory, at }` (rule `expr.budget.memory`). Nothing is given
///   back when an entry is dropped, so this bounds both what an evaluation
///   holds at once and what it allocates in total;
/// - `work`: the composite parts one evaluation visits, counted over its
///   whole run, nested evaluations included: every read from a location
///   description, every part location weighed by `DW_OP_piece`,
///   `DW_OP_bit_piece`, `DW_OP_LLVM_extend` or `DW_OP_LLVM_select_bit_piece`,
///   and the normal form of a location result walk the composites they
///   cover front to back, and each part such a walk reaches costs 1
///   (rule `expr.budget.work` defines the walk). Going over reports
///   `Budget { Work, at }`. This bounds the time an evaluation spends in
///   composites, which neither `steps` (one `DW_OP_deref` may cross
///   thousands of parts) nor `memory_bytes` (parts are shared, not copied)
///   bounds;
/// - `frames`: virtual unwinding that would make step number `frames + 1`
///   reports `Budget { Frames }` (`unwind.frames-budget`).
///
/// Every budget has a hard ceiling ([`Budgets::CEILING`]): evaluators use
/// [`Budgets::clamped`], and loaders of case files reject a larger value
/// ([`Budgets::check_ceiling`]). The depth ceiling is what keeps nested
/// evaluations, which recurse on the native stack, within a 2 MiB thread
/// stack.
///
/// Serialized (feature `serde`) as a mapping of these keys; a missing key
/// takes its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct Budgets {
    /// Maximum operations executed per evaluation.
    pub steps: u64,
    /// Maximum stack entries.
    pub stack: usize,
    /// Maximum nesting depth of evaluations.
    pub depth: u32,
    /// Maximum size of one value or storage, in **bytes**.
    pub size_bytes: u64,
    /// Maximum frames one virtual unwinding steps through.
    pub frames: u32,
    /// Maximum storage one evaluation creates in total, in **bytes**.
    pub memory_bytes: u64,
    /// Maximum composite parts one evaluation visits in total
    /// (`expr.budget.work`): a count of parts, not bytes.
    pub work: u64,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            steps: 100_000,
            stack: 1024,
            depth: 16,
            size_bytes: 1 << 20,
            frames: 256,
            memory_bytes: 8 << 20,
            work: 1 << 20,
        }
    }
}

/// A budget asked for above its hard ceiling ([`Budgets::check_ceiling`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("budget `{name}` = {asked} is above its ceiling {ceiling}")]
pub struct BudgetCeilingError {
    /// The budget's key (`steps`, `stack`, `depth`, `size_bytes`,
    /// `frames`, `memory_bytes`, `work`).
    pub name: &'static str,
    /// The value asked for.
    pub asked: u64,
    /// The largest value allowed.
    pub ceiling: u64,
}

impl Budgets {
    /// Bytes of the size budget one composite part is charged by
    /// `DW_OP_LLVM_extend` and `DW_OP_LLVM_select_bit_piece`
    /// (`op.extend.size-limits`).
    pub const PART_BYTES: u64 = 8;

    /// Bytes of the memory budget one composite part is charged by every
    /// operation that creates parts (`expr.budget.memory`): about what a
    /// part takes in either evaluator, so that the budget bounds real
    /// memory, not a nominal count.
    pub const PART_MEMORY_BYTES: u64 = 64;

    /// The largest value of each budget. `depth` is bounded so that the
    /// deepest nesting (`DW_OP_call*` chains, frame bases, entry values,
    /// implicit pointers) fits a 2 MiB native stack, the smallest an
    /// evaluator runs on here (test and rayon threads); `tests` in both
    /// evaluator crates run the deepest shapes at this depth on such a
    /// thread. The others bound total work (`steps` × the per-operation
    /// cost bounded by `size_bytes`) and memory.
    pub const CEILING: Budgets = Budgets {
        steps: 10_000_000,
        stack: 1 << 16,
        depth: 128,
        size_bytes: 64 << 20,
        frames: 4096,
        memory_bytes: 256 << 20,
        work: 1 << 28,
    };

    /// These budgets with each one lowered to its ceiling: what both
    /// evaluators apply, whatever the machine state asks for.
    pub fn clamped(self) -> Budgets {
        let c = Budgets::CEILING;
        Budgets {
            steps: self.steps.min(c.steps),
            stack: self.stack.min(c.stack),
            depth: self.depth.min(c.depth),
            size_bytes: self.size_bytes.min(c.size_bytes),
            frames: self.frames.min(c.frames),
            memory_bytes: self.memory_bytes.min(c.memory_bytes),
            work: self.work.min(c.work),
        }
    }

    /// `Err` naming the first budget above its ceiling
    /// ([`Budgets::CEILING`]), for loaders that must refuse such input.
    pub fn check_ceiling(&self) -> Result<(), BudgetCeilingError> {
        let c = Budgets::CEILING;
        let pairs: [(&'static str, u64, u64); 7] = [
            ("steps", self.steps, c.steps),
            ("stack", self.stack as u64, c.stack as u64),
            ("depth", u64::from(self.depth), u64::from(c.depth)),
            ("size_bytes", self.size_bytes, c.size_bytes),
            ("frames", u64::from(self.frames), u64::from(c.frames)),
            ("memory_bytes", self.memory_bytes, c.memory_bytes),
            ("work", self.work, c.work),
        ];
        match pairs.into_iter().find(|&(_, asked, ceiling)| asked > ceiling) {
            Some((name, asked, ceiling)) => Err(BudgetCeilingError { name, asked, ceiling }),
            None => Ok(()),
        }
    }
}
