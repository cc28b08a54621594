//! The evaluation state every operation family works on: [`Evaluation`] (the
//! machine state asked, the facts read from it once per evaluation,
//! nesting, the frame evaluated in), why an operation stops ([`Fail`],
//! [`Stop`]), and the stack primitives (hetero-2020 "DWARF Expression
//! Evaluation Context", "DWARF Expression Value").

use super::decode::{Encoding, Insn};
use super::machine::{mask, Entry, Location, Scratch, Value, NONE};
use super::program::Program;
use super::weight::WalkMemo;
use dwarfcheck_core::context::{Budgets, CallerFrame, ContextError, Die, Element, MachineState};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, NormalLocation, Outcome};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Target;
use std::borrow::Cow;

/// The result of an operation (or of a step of one): `T`, or why
/// evaluation stops.
pub(super) type Result<T, E = Fail> = std::result::Result<T, E>;

/// Why an operation stopped evaluation (the offset is attached by the loop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    /// Ill-formed input.
    IllFormed(RuleId),
    /// Evaluation error.
    EvalError(RuleId),
    /// A budget ran out.
    Budget(BudgetKind),
    /// Not implemented by this evaluator.
    Unsupported(String),
}

impl Fail {
    /// The failure an operation reports for `failure`, its offset dropped
    /// (the operation reports it at its own offset).
    pub fn from_failure(failure: &Failure) -> Fail {
        match failure {
            Failure::IllFormed { rule, .. } => Fail::IllFormed(rule.clone()),
            Failure::EvalError { rule, .. } => Fail::EvalError(rule.clone()),
            Failure::Budget { budget, .. } => Fail::Budget(*budget),
            Failure::Unsupported { what } | Failure::ConsumerFault { what } => Fail::Unsupported(what.clone()),
        }
    }

    /// The failure of an operation that needs a context element the state
    /// does not give: `missing` when it is not specified, the failure of
    /// virtual unwinding when it was to come from there
    /// (`unwind.context-from-cfi`).
    pub fn from_context(e: &ContextError, missing: RuleId) -> Fail {
        match e {
            ContextError::Unwinding(f) => Fail::from_failure(f),
            _ => Fail::EvalError(missing),
        }
    }
}

/// A failure and the offset it is reported at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// What happened.
    pub fail: Fail,
    /// Reported offset.
    pub at: Option<u64>,
}

impl Stop {
    /// The outcome this stop reports.
    pub fn outcome(self) -> Outcome {
        fail_outcome(self.fail, self.at)
    }
}

/// The outcome of failure `fail` reported at `at`.
pub(super) fn fail_outcome(fail: Fail, at: Option<u64>) -> Outcome {
    match fail {
        Fail::IllFormed(rule) => Outcome::Failed(Failure::IllFormed { rule, at }),
        Fail::EvalError(rule) => Outcome::Failed(Failure::EvalError { rule, at }),
        Fail::Budget(budget) => Outcome::Failed(Failure::Budget { budget, at }),
        Fail::Unsupported(what) => Outcome::Failed(Failure::Unsupported { what }),
    }
}

/// Evaluation state of one (possibly nested) operation expression.
pub struct Evaluation<'a> {
    /// The machine state evaluated against.
    pub state: &'a dyn MachineState,
    /// Its target, read once per evaluation.
    pub target: &'a Target,
    /// Its budgets, read once per evaluation.
    pub budgets: Budgets,
    /// Stack entries below this index belong to an outer evaluation.
    pub base: usize,
    /// Nesting depth (0 = the expression being evaluated).
    pub depth: u32,
    /// Offset every failure is reported at (nested evaluations).
    pub at_override: Option<u64>,
    /// The generic type.
    pub generic_type: BaseType,
    /// For an evaluation in a calling (non-top) frame: how its registers
    /// are recovered from the frame it called (see `frame`).
    pub frame: Option<&'a FrameRegisters<'a>>,
    /// The interpreter loop, for nested evaluations ([`Evaluation::run`]).
    pub(super) run: RunNested,
    /// The caller evaluates a location description attribute: the initial
    /// stack is empty and the result kind is location, whatever the state
    /// says (a top-level evaluation only, [`Program::run_location`](super::Program::run_location)).
    pub(super) location_attribute: bool,
}

/// Runs a nested program on the stack above the evaluation's base: the
/// interpreter loop (`exec`), handed down so that the operation families
/// below it can evaluate nested expressions without importing it.
pub(super) type RunNested = fn(&Evaluation<'_>, &Program, &mut Scratch) -> Result<(), Stop>;

/// How the registers of a frame other than the machine state's own (the
/// top frame's) are found.
pub enum FrameRegisters<'a> {
    /// A calling frame given by the state ([`MachineState::caller`]): its
    /// CFI rules (from the row of the frame it called) and the evaluation
    /// state of that called frame, whose registers, CFA and memory the
    /// rules are applied to.
    Rules {
        /// The calling frame.
        caller: &'a CallerFrame,
        /// The called frame's evaluation state.
        callee: &'a Evaluation<'a>,
    },
    /// A frame reached by virtual unwinding (`crate::unwind`): its
    /// registers are already known as top-frame locations, and its own
    /// row's rules give its caller's registers (with cycle detection,
    /// rule `unwind.cyclic`).
    Unwinding(&'a UnwindingFrame<'a>),
}

/// Frame k of a virtual unwinding, as its expressions see it (rules
/// `unwind.*`, `frame.registers-through-cfi`).
pub struct UnwindingFrame<'a> {
    /// Frame k's registers as top-frame locations (or the fault of their
    /// rule), sorted by DWARF register number; a register not listed has
    /// the default rule (undefined). `None` for the top frame (frame 0),
    /// whose registers are the machine state's.
    pub regs: Option<&'a [(u64, Result<Location, Fail>)]>,
    /// Frame k's row rules (frame k+1's registers), sorted by register
    /// number, the ABI stack pointer rule included (`unwind.sp-is-cfa`);
    /// `DW_OP_LLVM_call_frame_entry_reg` in frame k reads through them.
    pub rules: &'a [(u64, RegisterRule)],
    /// Registers of frame k+1 whose computation is under way.
    pub in_progress: &'a std::cell::RefCell<Vec<u64>>,
    /// Whether frame k's CFA is being computed (then it is not known yet).
    pub cfa_in_progress: std::cell::Cell<bool>,
}

impl UnwindingFrame<'_> {
    /// The rule of frame k+1's register `regno` (default: undefined).
    pub(super) fn rule(&self, regno: u64) -> &RegisterRule {
        match self.rules.binary_search_by_key(&regno, |(r, _)| *r) {
            Ok(i) => &self.rules[i].1,
            Err(_) => &RegisterRule::Undefined,
        }
    }
}

/// What every evaluation in one unit reads from its machine state before
/// it starts: the same for every state of the unit that has the same
/// target and budgets, so that a caller evaluating many expressions of a
/// unit asks the state once ([`Facts::of`]) and gives them to
/// [`Program::run_with`](super::Program::run_with).
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// How the unit's expressions decode.
    pub encoding: Encoding,
    /// The target ([`MachineState::target`]).
    pub target: &'a Target,
    /// The budgets ([`MachineState::budgets`]), clamped to their ceilings.
    pub budgets: Budgets,
    /// The generic type ([`MachineState::generic_type`]).
    pub generic_type: BaseType,
}

impl<'a> Facts<'a> {
    /// The facts of `state`.
    pub fn of(state: &'a dyn MachineState) -> Self {
        Facts {
            encoding: Encoding::of(state),
            target: state.target(),
            budgets: state.budgets().clamped(),
            generic_type: state.generic_type(),
        }
    }
}

impl<'a> Evaluation<'a> {
    /// A top-level evaluation state in `state` with the facts `facts` (of
    /// `state`: [`Facts::of`]), nested evaluations running through `run`.
    pub(super) fn new(state: &'a dyn MachineState, facts: &Facts<'a>, run: RunNested) -> Self {
        Evaluation {
            state,
            target: facts.target,
            budgets: facts.budgets,
            base: 0,
            depth: 0,
            at_override: None,
            generic_type: facts.generic_type,
            frame: None,
            run,
            location_attribute: false,
        }
    }
}

impl Evaluation<'_> {
    /// Runs `prog` on the stack above `self.base` (a nested evaluation);
    /// leaves the entries there.
    pub(super) fn run(&self, prog: &Program, s: &mut Scratch) -> Result<(), Stop> {
        (self.run)(self, prog, s)
    }

    /// Size of the generic type in **bits**.
    #[inline]
    pub(super) fn generic_bits(&self) -> u32 {
        self.generic_type.bits
    }

    /// `v` as a value of the generic type (truncated to its size).
    #[inline]
    pub(super) fn generic(&self, v: u128) -> Value {
        Value { ty: self.generic_type, lo: mask(v, self.generic_type.bits), wide: NONE }
    }

    /// Stack entries this evaluation can pop.
    #[inline]
    pub(super) fn avail(&self, s: &Scratch) -> usize {
        s.stack.len() - self.base
    }

    /// Fails with `expr.stack.underflow` unless `n` entries are available.
    #[inline]
    pub(super) fn need(&self, s: &Scratch, n: usize) -> Result<()> {
        if self.avail(s) < n {
            return Err(Fail::IllFormed(R::EXPR_STACK_UNDERFLOW));
        }
        Ok(())
    }

    /// Whether `e` is an incomplete composite.
    pub(super) fn is_incomplete(s: &Scratch, e: &Entry) -> bool {
        matches!(e, Entry::Location(Location::Composite { idx, .. }) if !s.composites[*idx as usize].complete)
    }

    /// The entry with index `i` (0 = top) touched by a stack operation
    /// (rule `op.stack.incomplete-composite`).
    pub(super) fn touch(&self, s: &Scratch, i: usize) -> Result<Entry> {
        let e = s.stack[s.stack.len() - 1 - i];
        if Self::is_incomplete(s, &e) {
            return Err(Fail::IllFormed(R::OP_STACK_INCOMPLETE_COMPOSITE));
        }
        Ok(e)
    }

    /// Pops the top entry (undefined when the stack is empty: callers
    /// check with [`Evaluation::need`] first).
    #[inline]
    pub(super) fn pop_raw(&self, s: &mut Scratch) -> Entry {
        s.stack.pop().unwrap_or(Entry::Location(Location::Undefined))
    }

    /// Pops an entry required to be a value.
    pub(super) fn pop_value(&self, s: &mut Scratch) -> Result<Value> {
        self.need(s, 1)?;
        let e = self.pop_raw(s);
        self.to_value(s, e)
    }

    /// Entry `e` where a value is required (rules
    /// `loc.convert.memory-to-value`, `loc.convert.location-not-value`).
    pub(super) fn to_value(&self, s: &Scratch, e: Entry) -> Result<Value> {
        match e {
            Entry::Value(v) => Ok(v),
            Entry::ImplicitPointer(_) => Err(Fail::EvalError(R::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            Entry::Location(Location::Composite { idx, .. }) if !s.composites[idx as usize].complete => {
                Err(Fail::IllFormed(R::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION))
            }
            Entry::Location(Location::Memory { aspace: 0, bit, .. }) if bit % 8 == 0 => Ok(self.generic(bit / 8)),
            Entry::Location(_) => Err(Fail::IllFormed(R::LOC_CONVERT_LOCATION_NOT_VALUE)),
        }
    }

    /// Pops a value of an integral type; another type is the ill-formed
    /// `rule`.
    pub(super) fn pop_integral(&self, s: &mut Scratch, rule: RuleId) -> Result<Value> {
        let v = self.pop_value(s)?;
        if !v.ty.is_integral() {
            return Err(Fail::IllFormed(rule));
        }
        Ok(v)
    }

    /// Pushes `e`.
    #[inline]
    pub(super) fn push(&self, s: &mut Scratch, e: Entry) {
        s.stack.push(e);
    }

    /// The top entry of this evaluation's part of the stack, if any.
    pub(super) fn top(&self, s: &Scratch) -> Option<Entry> {
        if s.stack.len() > self.base {
            s.stack.last().copied()
        } else {
            None
        }
    }

    /// The base type at unit offset `die`; 0 is the generic type (rule
    /// `op.typed.die-zero-generic`).
    pub(super) fn base_type(&self, die: u64) -> Result<BaseType> {
        if die == 0 {
            return Ok(self.generic_type);
        }
        let t = self.state.base_type(die).map_err(|e| match e {
            ContextError::Missing(Element::Unit) => Fail::EvalError(R::CTX_CU_MISSING),
            _ => Fail::IllFormed(R::OP_TYPED_NOT_BASE_TYPE),
        })?;
        if t.vector_size == 0 {
            return Err(Fail::IllFormed(R::ATTR_LLVM_VECTOR_SIZE_NOT_POSITIVE));
        }
        Ok(t)
    }

    /// The DIE at `.debug_info` offset `off`; `missing` is the rule when
    /// the unit does not hold it (`op.call.die-missing`,
    /// `op.implicit-pointer.die-missing`).
    pub(super) fn die(&self, off: u64, missing: RuleId) -> Result<Cow<'_, Die>> {
        if self.state.unit().is_none() {
            return Err(Fail::EvalError(R::CTX_CU_MISSING));
        }
        self.state.die(off).ok_or(Fail::IllFormed(missing))
    }

    /// Checks the nesting budget for one more level (docs/architecture.md §9).
    pub(super) fn deeper(&self) -> Result<u32> {
        if self.depth + 1 > self.budgets.depth {
            return Err(Fail::Budget(BudgetKind::Depth));
        }
        Ok(self.depth + 1)
    }

    /// The offset nested failures are reported at: the outermost operation.
    pub(super) fn at_of(&self, ins: &Insn) -> Option<u64> {
        Some(self.at_override.unwrap_or(u64::from(ins.off)))
    }

    /// `t` if a value of it fits the size budget (docs/architecture.md §9; checked with
    /// the operation's operand checks, before the stack: ambiguities item 45),
    /// its byte size then charged to the memory budget (`expr.budget.memory`).
    pub(super) fn within_size(&self, s: &mut Scratch, t: BaseType) -> Result<BaseType> {
        if u64::from(t.bits) > self.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        self.charge_memory(s, t.bytes() as u128)?;
        Ok(t)
    }

    /// Charges `bytes` of created storage to the memory budget (rule
    /// `expr.budget.memory`). Errors: `Budget(Memory)` when the total
    /// created by the evaluation would go over `budgets.memory_bytes`.
    pub(super) fn charge_memory(&self, s: &mut Scratch, bytes: u128) -> Result<()> {
        let total = u128::from(s.created).saturating_add(bytes);
        if total > u128::from(self.budgets.memory_bytes) {
            return Err(Fail::Budget(BudgetKind::Memory));
        }
        s.created = total as u64;
        Ok(())
    }

    /// Charges the walk of `l` over bits `[0, n)` to the work budget (rule
    /// `expr.budget.work`): nothing for a location outside composite
    /// storage. Errors: `Budget(Work)` when the evaluation's total would go
    /// over `budgets.work`.
    #[inline]
    pub(super) fn charge_walk(&self, s: &mut Scratch, l: &Location, n: u64) -> Result<()> {
        if !matches!(l, Location::Composite { .. } | Location::Multi { .. }) {
            return Ok(());
        }
        let left = self.budgets.work.saturating_sub(s.work);
        let cost = s.walk_cost(l, 0, n, left, &mut WalkMemo::new()).ok_or(Fail::Budget(BudgetKind::Work))?;
        s.work += cost;
        Ok(())
    }

    /// Charges the walk of each composite single location of `l` from its
    /// offset to its end (rule `expr.budget.work`), then gives `l`'s normal
    /// form: a location result.
    pub(super) fn export(&self, s: &mut Scratch, l: &Location) -> Result<NormalLocation> {
        // (No allocation: the singles are read where they are.)
        let singles: &[Location] = match *l {
            Location::Multi { start, len } => &s.multi[start as usize..(start + len) as usize],
            _ => std::slice::from_ref(l),
        };
        let mut memo = WalkMemo::new();
        let left = self.budgets.work.saturating_sub(s.work);
        let mut cost = 0u64;
        for x in singles {
            if let Location::Composite { idx, bit } = *x {
                let whole = s.composites[idx as usize].total_bits.saturating_sub(bit);
                cost += s.walk_cost(x, 0, whole, left - cost, &mut memo).ok_or(Fail::Budget(BudgetKind::Work))?;
            }
        }
        s.work += cost;
        Ok(s.export_location(l))
    }

    /// The target's base type of register `regno`: the generic type for a
    /// register of the generic size, else an unsigned integer of the
    /// register's size, which must fit the size budget (rule
    /// `op.entry-value.register-type`).
    pub(super) fn register_type(&self, s: &mut Scratch, regno: u64) -> Result<BaseType> {
        let reg = self.target.register(regno).ok_or(Fail::EvalError(R::REG_UNKNOWN_REGISTER_READ))?;
        let t = if reg.bits == self.generic_bits() {
            self.generic_type
        } else {
            BaseType::ate(ate::UNSIGNED, reg.bits, self.generic_type.big_endian)
        };
        self.within_size(s, t)
    }
}
