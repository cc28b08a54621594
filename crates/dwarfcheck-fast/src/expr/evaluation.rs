//! The evaluation state every operation family works on: [`Ev`] (the
//! machine state asked, the facts read from it once per evaluation,
//! nesting, the frame evaluated in), why an operation stops ([`Fail`],
//! [`Stop`]), and the stack primitives (hetero-2020 "DWARF Expression
//! Evaluation Context", "DWARF Expression Value").

use super::decode::Insn;
use super::machine::{mask, Ent, Loc, Scratch, Val, NONE};
use super::program::Program;
use dwarfcheck_core::context::{Budgets, CallerFrame, ContextError, Die, Element, MachineState};
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, Outcome};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Target;
use std::borrow::Cow;

type Res<T> = Result<T, Fail>;

/// Why an operation stopped evaluation (the offset is attached by the loop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    /// Ill-formed input.
    Ill(RuleId),
    /// Evaluation error.
    Eval(RuleId),
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
            Failure::IllFormed { rule, .. } => Fail::Ill(rule.clone()),
            Failure::EvalError { rule, .. } => Fail::Eval(rule.clone()),
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
            _ => Fail::Eval(missing),
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
        Fail::Ill(rule) => Outcome::Failed(Failure::IllFormed { rule, at }),
        Fail::Eval(rule) => Outcome::Failed(Failure::EvalError { rule, at }),
        Fail::Budget(budget) => Outcome::Failed(Failure::Budget { budget, at }),
        Fail::Unsupported(what) => Outcome::Failed(Failure::Unsupported { what }),
    }
}

/// Evaluation state of one (possibly nested) operation expression.
pub struct Ev<'a> {
    /// The machine state evaluated against.
    pub ctx: &'a dyn MachineState,
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
    pub gty: BaseType,
    /// For an evaluation in a calling (non-top) frame: how its registers
    /// are recovered from the frame it called (see `frame`).
    pub up: Option<&'a Up<'a>>,
    /// The interpreter loop, for nested evaluations ([`Ev::run`]).
    pub(super) run: RunNested,
}

/// Runs a nested program on the stack above the evaluation's base: the
/// interpreter loop (`exec`), handed down so that the operation families
/// below it can evaluate nested expressions without importing it.
pub(super) type RunNested = fn(&Ev<'_>, &Program, &mut Scratch) -> Result<(), Stop>;

/// How the registers of a frame other than the context's own are found.
pub enum Up<'a> {
    /// A calling frame given by the context (`Context::caller`): its CFI
    /// rules (from the row of the frame it called) and the evaluation state
    /// of that called frame, whose registers, CFA and memory the rules are
    /// applied to.
    Rules {
        /// The calling frame.
        rules: &'a CallerFrame,
        /// The called frame's evaluation state.
        callee: &'a Ev<'a>,
    },
    /// A frame reached by virtual unwinding (`crate::unwind`): its
    /// registers are already known as top-frame locations, and its own
    /// row's rules give its caller's registers (with cycle detection,
    /// rule `unwind.cyclic`).
    Known(&'a Known<'a>),
}

/// Frame k of a virtual unwinding, as its expressions see it (rules
/// `unwind.*`, `frame.registers-through-cfi`).
pub struct Known<'a> {
    /// Frame k's registers as top-frame locations (or the fault of their
    /// rule), sorted by DWARF register number; a register not listed has
    /// the default rule (undefined). `None` for the top frame (frame 0),
    /// whose registers are the context's.
    pub regs: Option<&'a [(u64, Result<Loc, Fail>)]>,
    /// Frame k's row rules (frame k+1's registers), sorted by register
    /// number, the ABI stack pointer rule included (`unwind.sp-is-cfa`);
    /// `DW_OP_LLVM_call_frame_entry_reg` in frame k reads through them.
    pub rules: &'a [(u64, RegisterRule)],
    /// Registers of frame k+1 whose computation is under way.
    pub in_progress: &'a std::cell::RefCell<Vec<u64>>,
    /// Whether frame k's CFA is being computed (then it is not known yet).
    pub cfa_in_progress: std::cell::Cell<bool>,
}

impl Known<'_> {
    /// The rule of frame k+1's register `regno` (default: undefined).
    pub(super) fn rule(&self, regno: u64) -> &RegisterRule {
        match self.rules.binary_search_by_key(&regno, |(r, _)| *r) {
            Ok(i) => &self.rules[i].1,
            Err(_) => &RegisterRule::Undefined,
        }
    }
}

impl<'a> Ev<'a> {
    /// A top-level evaluation state in `ctx`, nested evaluations running
    /// through `run`: the target, budgets and generic type are read here,
    /// once per evaluation.
    pub(super) fn new(ctx: &'a dyn MachineState, run: RunNested) -> Self {
        Ev {
            ctx,
            target: ctx.target(),
            budgets: ctx.budgets(),
            base: 0,
            depth: 0,
            at_override: None,
            gty: ctx.generic_type(),
            up: None,
            run,
        }
    }
}

impl Ev<'_> {
    /// Runs `prog` on the stack above `self.base` (a nested evaluation);
    /// leaves the entries there.
    pub(super) fn run(&self, prog: &Program, s: &mut Scratch) -> Result<(), Stop> {
        (self.run)(self, prog, s)
    }

    #[inline]
    pub(super) fn gbits(&self) -> u32 {
        self.gty.bits
    }

    #[inline]
    pub(super) fn generic(&self, v: u128) -> Val {
        Val { ty: self.gty, lo: mask(v, self.gty.bits), wide: NONE }
    }

    #[inline]
    pub(super) fn avail(&self, s: &Scratch) -> usize {
        s.stack.len() - self.base
    }

    /// Fails with `expr.stack.underflow` unless `n` entries are available.
    #[inline]
    pub(super) fn need(&self, s: &Scratch, n: usize) -> Res<()> {
        if self.avail(s) < n {
            return Err(Fail::Ill(R::EXPR_STACK_UNDERFLOW));
        }
        Ok(())
    }

    pub(super) fn is_incomplete(s: &Scratch, e: &Ent) -> bool {
        matches!(e, Ent::Loc(Loc::Comp { idx, .. }) if !s.comps[*idx as usize].complete)
    }

    /// The entry with index `i` (0 = top) touched by a stack operation
    /// (rule `op.stack.incomplete-composite`).
    pub(super) fn touch(&self, s: &Scratch, i: usize) -> Res<Ent> {
        let e = s.stack[s.stack.len() - 1 - i];
        if Self::is_incomplete(s, &e) {
            return Err(Fail::Ill(R::OP_STACK_INCOMPLETE_COMPOSITE));
        }
        Ok(e)
    }

    #[inline]
    pub(super) fn pop_raw(&self, s: &mut Scratch) -> Ent {
        s.stack.pop().unwrap_or(Ent::Loc(Loc::Undef))
    }

    /// Pops an entry required to be a value.
    pub(super) fn pop_val(&self, s: &mut Scratch) -> Res<Val> {
        self.need(s, 1)?;
        let e = self.pop_raw(s);
        self.to_val(s, e)
    }

    /// Entry `e` where a value is required (rules
    /// `loc.convert.memory-to-value`, `loc.convert.location-not-value`).
    pub(super) fn to_val(&self, s: &Scratch, e: Ent) -> Res<Val> {
        match e {
            Ent::Val(v) => Ok(v),
            Ent::Ipv(_) => Err(Fail::Eval(R::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            Ent::Loc(Loc::Comp { idx, .. }) if !s.comps[idx as usize].complete => {
                Err(Fail::Ill(R::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION))
            }
            Ent::Loc(Loc::Mem { aspace: 0, bit, .. }) if bit % 8 == 0 => Ok(self.generic(bit / 8)),
            Ent::Loc(_) => Err(Fail::Ill(R::LOC_CONVERT_LOCATION_NOT_VALUE)),
        }
    }

    pub(super) fn pop_integral(&self, s: &mut Scratch, rule: RuleId) -> Res<Val> {
        let v = self.pop_val(s)?;
        if !v.ty.is_integral() {
            return Err(Fail::Ill(rule));
        }
        Ok(v)
    }

    #[inline]
    pub(super) fn push(&self, s: &mut Scratch, e: Ent) {
        s.stack.push(e);
    }

    pub(super) fn top(&self, s: &Scratch) -> Option<Ent> {
        if s.stack.len() > self.base {
            s.stack.last().copied()
        } else {
            None
        }
    }

    /// The base type at unit offset `die`; 0 is the generic type (rule
    /// `op.typed.die-zero-generic`).
    pub(super) fn base_type(&self, die: u64) -> Res<BaseType> {
        if die == 0 {
            return Ok(self.gty);
        }
        let t = self.ctx.base_type(die).map_err(|e| match e {
            ContextError::Missing(Element::Unit) => Fail::Eval(R::CTX_CU_MISSING),
            _ => Fail::Ill(R::OP_TYPED_NOT_BASE_TYPE),
        })?;
        if t.vector_size == 0 {
            return Err(Fail::Ill(R::ATTR_LLVM_VECTOR_SIZE_NOT_POSITIVE));
        }
        Ok(t)
    }

    /// The DIE at `.debug_info` offset `off`; `missing` is the rule when
    /// the unit does not hold it (`op.call.die-missing`,
    /// `op.implicit-pointer.die-missing`).
    pub(super) fn die(&self, off: u64, missing: dwarfcheck_core::rules::RuleId) -> Res<Cow<'_, Die>> {
        if self.ctx.unit().is_none() {
            return Err(Fail::Eval(R::CTX_CU_MISSING));
        }
        self.ctx.die(off).ok_or(Fail::Ill(missing))
    }

    /// Checks the nesting budget for one more level (DESIGN §9).
    pub(super) fn deeper(&self) -> Res<u32> {
        if self.depth + 1 > self.budgets.depth {
            return Err(Fail::Budget(BudgetKind::Depth));
        }
        Ok(self.depth + 1)
    }

    /// The offset nested failures are reported at: the outermost operation.
    pub(super) fn at_of(&self, ins: &Insn) -> Option<u64> {
        Some(self.at_override.unwrap_or(u64::from(ins.off)))
    }

    /// `t` if a value of it fits the size budget (DESIGN §9; checked with
    /// the operation's operand checks, before the stack: ambiguities item 45).
    pub(super) fn within_size(&self, t: dwarfcheck_core::outcome::BaseType) -> Res<dwarfcheck_core::outcome::BaseType> {
        if u64::from(t.bits) > self.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        Ok(t)
    }

    /// The target's base type of register `regno`: the generic type for a
    /// register of the generic size, else an unsigned integer of the
    /// register's size, which must fit the size budget (rule
    /// `op.entry-value.register-type`).
    pub(super) fn register_type(&self, regno: u64) -> Res<dwarfcheck_core::outcome::BaseType> {
        let reg = self.target.register(regno).ok_or(Fail::Eval(R::REG_UNKNOWN_REGISTER_READ))?;
        let t = if reg.bits == self.gbits() {
            self.gty
        } else {
            dwarfcheck_core::outcome::BaseType::ate(
                dwarfcheck_core::encoding::ate::UNSIGNED,
                reg.bits,
                self.gty.big_endian,
            )
        };
        self.within_size(t)
    }
}
