//! The evaluation loop and the meaning of each operation (hetero-2020
//! "DWARF Operation Expressions" and its subsections). See the parent
//! module for the order in which one operation checks its rules.

use super::decode::{decode, Insn};
use super::entry::{Entry, Loc, Single, Storage};
use super::read::{ctx_stop, read_bits, Read};
use super::stop::{Stop, TraceStep};
use super::window::describe;
use dwarfcheck_core::context::{self, CallerFrame, ContextError, MachineState, ResultKind};
use dwarfcheck_core::outcome::value::mask_top;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, Outcome, TypeEncoding, Value};
use dwarfcheck_core::rules::{id, RuleId};
use std::sync::Arc;

/// The result of one evaluation after the result kind was applied.
pub(super) enum Final {
    Value(Value),
    Location(Loc),
}

/// What happens after an operation.
pub(super) enum Flow {
    /// Continue with the next operation.
    Next,
    /// Continue with operation number `usize`.
    Jump(usize),
    /// The evaluation is complete (a branch to one past the last operation).
    Done,
}

pub(super) type Stack = Vec<Entry>;

/// Cycle marks of virtual unwinding (`unwind.cyclic`): what is being
/// computed right now, so that a computation that needs its own result is
/// caught instead of recursing. Only registers of calling frames found by
/// unwinding ([`CallerFrame::unwound`]) are marked; explicitly given frames
/// rely on the depth budget instead.
#[derive(Debug, Clone, Default)]
pub(super) struct Marks {
    /// Registers being computed, as (frame number from the top, DWARF
    /// register number).
    pub(super) regs: Vec<(usize, u64)>,
    /// The frame whose CFA is being computed by the unwinder's CFA rule
    /// (`unwind.cfa.*`), as its frame number from the top.
    pub(super) cfa: Option<usize>,
}

/// State shared by an evaluation and its nested evaluations.
pub(super) struct Machine<'c> {
    /// The machine state of the expression being run (for a nested
    /// evaluation in another frame or with another result kind, an
    /// [`Overlay`](dwarfcheck_core::context::Overlay) over the state it
    /// derives from).
    pub(super) ctx: &'c dyn MachineState,
    /// The state of the top-level evaluation: its registers and memory
    /// are the top frame's storage, its CFA the top frame's CFA
    /// (`frame.registers-through-cfi`).
    pub(super) top: &'c dyn MachineState,
    /// The calling frames between the top frame and the frame this machine
    /// evaluates in, nearest the top first (empty: the top frame). The last
    /// one's `rules` say how this frame's registers are found.
    pub(super) frames: Vec<Arc<CallerFrame>>,
    /// Nesting depth of the operation being executed (0: the case's own
    /// expression), for the depth budget.
    pub(super) depth: u32,
    /// The register of the last operation executed at the current level if
    /// it was `DW_OP_reg*`/`DW_OP_regx` (`op.entry-value.register-result`).
    pub(super) last_reg: Option<u64>,
    /// Operations executed so far, nested evaluations included.
    pub(super) steps: u64,
    /// Storage created so far in **bytes**, nested evaluations included
    /// (`expr.budget.memory`).
    pub(super) created: u64,
    /// Composite parts visited so far, nested evaluations included
    /// (`expr.budget.work`).
    pub(super) work: u64,
    /// `unspecified` rules the evaluation's answer rests on, in the order
    /// first relied on (see [`super::unspecified`]).
    pub(super) unspecified: Vec<RuleId>,
    /// Cycle marks of virtual unwinding (`unwind.cyclic`).
    pub(super) marks: Marks,
}

/// Runs `expr` at top level in `state` (its result kind and initial stack)
/// and turns the result into an [`Outcome`].
pub(super) fn evaluate(
    expr: &[u8],
    state: &dyn MachineState,
    trace: Option<&mut Vec<TraceStep>>,
) -> (Outcome, Vec<RuleId>) {
    let mut m = Machine::new(state);
    let initial = initial_stack(state.initial_stack());
    let r = m.run(expr, state.result_kind(), initial, 0, trace);
    let outcome = m.outcome(r);
    (outcome, m.unspecified)
}

/// The context's entries as stack entries, bottom first.
pub(super) fn initial_stack(entries: &[context::Entry]) -> Stack {
    entries
        .iter()
        .map(|e| match e {
            context::Entry::Value(v) => Entry::Value(v.clone()),
            context::Entry::Location(l) => Entry::Location(Loc::from_normal(l)),
        })
        .collect()
}

/// The outcome of a failed evaluation.
pub(super) fn failed(r: (Stop, Option<u64>)) -> Outcome {
    let (stop, at) = r;
    match stop {
        Stop::Ill(rule) => Outcome::Failed(Failure::IllFormed { rule, at }),
        Stop::Eval(rule) => Outcome::Failed(Failure::EvalError { rule, at }),
        Stop::Budget(budget) => Outcome::Failed(Failure::Budget { budget, at }),
        Stop::Unsupported(what) => Outcome::Failed(Failure::Unsupported { what }),
    }
}

pub(super) fn need(stack: &Stack, n: usize) -> Result<(), Stop> {
    if stack.len() < n {
        Err(Stop::Ill(id::EXPR_STACK_UNDERFLOW))
    } else {
        Ok(())
    }
}

/// Rule `op.stack.incomplete-composite` for the entry `index` below the top.
pub(super) fn not_incomplete(stack: &Stack, index: usize) -> Result<(), Stop> {
    match &stack[stack.len() - 1 - index] {
        Entry::Location(l) if l.is_incomplete_composite() => Err(Stop::Ill(id::OP_STACK_INCOMPLETE_COMPOSITE)),
        _ => Ok(()),
    }
}

impl<'c> Machine<'c> {
    /// The outcome of a top-level evaluation's result: a location result's
    /// normal form once its walk is charged (`expr.budget.work`; a budget
    /// stop there has no offset).
    pub(super) fn outcome(&mut self, r: Result<Final, (Stop, Option<u64>)>) -> Outcome {
        match r {
            Ok(Final::Value(v)) => Outcome::Value(v),
            Ok(Final::Location(l)) => match self.export(&l) {
                Ok(n) => Outcome::Location(n),
                Err(stop) => failed((stop, None)),
            },
            Err(e) => failed(e),
        }
    }

    /// A machine for a top-level evaluation in `ctx` (the top frame).
    pub(super) fn new(ctx: &'c dyn MachineState) -> Self {
        Machine {
            ctx,
            top: ctx,
            frames: Vec::new(),
            depth: 0,
            last_reg: None,
            steps: 0,
            created: 0,
            work: 0,
            unspecified: Vec::new(),
            marks: Default::default(),
        }
    }

    /// Records that the answer rests on `rule` (an `unspecified` rule).
    pub(super) fn rely_on(&mut self, rule: Option<RuleId>) {
        if let Some(r) = rule {
            if !self.unspecified.contains(&r) {
                self.unspecified.push(r);
            }
        }
    }

    pub(super) fn generic(&self) -> BaseType {
        self.ctx.generic_type()
    }

    pub(super) fn generic_value(&self, v: u128) -> Value {
        Value::from_u128(self.generic(), v)
    }

    /// Evaluates one operation expression with its own stack.
    pub(super) fn run(
        &mut self,
        expr: &[u8],
        kind: Option<ResultKind>,
        mut stack: Stack,
        depth: u32,
        trace: Option<&mut Vec<TraceStep>>,
    ) -> Result<Final, (Stop, Option<u64>)> {
        self.exec(expr, &mut stack, depth, trace)?;
        let saved = std::mem::replace(&mut self.depth, depth);
        let r = self.finish(stack, kind).map_err(|s| (s, None));
        self.depth = saved;
        r
    }

    /// Executes the operations of `expr` on `stack` at nesting `depth`,
    /// without the result-kind step (`DW_OP_call*` runs a DIE's expression
    /// this way, `op.call.exprloc-same-stack`).
    pub(super) fn exec(
        &mut self,
        expr: &[u8],
        stack: &mut Stack,
        depth: u32,
        trace: Option<&mut Vec<TraceStep>>,
    ) -> Result<(), (Stop, Option<u64>)> {
        let saved = std::mem::replace(&mut self.depth, depth);
        let r = self.exec_at_depth(expr, stack, depth, trace);
        self.depth = saved;
        r
    }

    fn exec_at_depth(
        &mut self,
        expr: &[u8],
        stack: &mut Stack,
        depth: u32,
        mut trace: Option<&mut Vec<TraceStep>>,
    ) -> Result<(), (Stop, Option<u64>)> {
        // expr.decode.static: nothing runs unless every operation decodes.
        let insns = decode(expr, self.ctx).map_err(|(rule, at)| (Stop::Ill(rule), Some(at as u64)))?;
        self.last_reg = None;
        let mut i = 0;
        while i < insns.len() {
            let insn = &insns[i];
            let at = Some(insn.at as u64);
            self.steps += 1;
            if self.steps > self.ctx.budgets().clamped().steps {
                return Err((Stop::Budget(BudgetKind::Steps), at));
            }
            let flow = self.step(insn, &insns, expr.len(), stack, depth).map_err(|s| (s, at))?;
            self.last_reg = match insn.op {
                dwarfcheck_core::encoding::Op::Reg(n) => Some(u64::from(n)),
                dwarfcheck_core::encoding::Op::Regx => Some(insn.u(0)),
                _ => None,
            };
            if stack.len() > self.ctx.budgets().clamped().stack {
                return Err((Stop::Budget(BudgetKind::Stack), at));
            }
            if let Some(t) = trace.as_deref_mut() {
                t.push(TraceStep {
                    at: insn.at as u64,
                    op: insn.text(self.ctx.target()),
                    stack: stack.iter().map(describe).collect(),
                });
            }
            match flow {
                Flow::Next => i += 1,
                Flow::Jump(j) => i = j,
                Flow::Done => break,
            }
        }
        Ok(())
    }

    /// The result of the evaluation from the final stack
    /// (rules `expr.result.*`).
    pub(super) fn finish(&mut self, mut stack: Stack, kind: Option<ResultKind>) -> Result<Final, Stop> {
        // expr.result.incomplete-composite-completed
        if let Some(Entry::Location(l)) = stack.last_mut() {
            if let [Single { storage: Storage::Composite { complete, .. }, .. }] = &mut l.singles[..] {
                *complete = true;
            }
        }
        let top = stack.pop();
        match kind {
            Some(ResultKind::Location) => match top {
                None => Ok(Final::Location(Loc::undefined())),
                Some(Entry::Location(l)) => Ok(Final::Location(l)),
                Some(Entry::Value(v)) if v.ty.encoding == TypeEncoding::Generic => {
                    Ok(Final::Location(self.memory_loc(0, v.to_u128() as u64)?))
                }
                Some(Entry::Value(_)) => Err(Stop::Ill(id::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE)),
                Some(Entry::ImplicitPointerValue(ip)) => Ok(Final::Location(self.ipv_to_location(&ip)?)),
            },
            Some(ResultKind::Value) => match top {
                None => Err(Stop::Ill(id::EXPR_RESULT_VALUE_EMPTY_STACK)),
                Some(Entry::Value(v)) => Ok(Final::Value(v)),
                Some(Entry::Location(l)) => match self.memory_address(&l) {
                    Some(a) => Ok(Final::Value(self.generic_value(a))),
                    None => Err(Stop::Ill(id::EXPR_RESULT_VALUE_NOT_CONVERTIBLE)),
                },
                Some(Entry::ImplicitPointerValue(_)) => Err(Stop::Eval(id::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            },
            None => match top {
                None => Ok(Final::Location(Loc::undefined())),
                Some(Entry::Value(v)) => Ok(Final::Value(v)),
                Some(Entry::Location(l)) => Ok(Final::Location(l)),
                Some(Entry::ImplicitPointerValue(_)) => Err(Stop::Eval(id::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            },
        }
    }

    /// The byte address of a location description that converts to a value
    /// (`loc.convert.memory-to-value`): one memory location description in
    /// the default address space at a whole byte.
    pub(super) fn memory_address(&self, l: &Loc) -> Option<u128> {
        match &l.singles[..] {
            [Single { storage: Storage::Memory { aspace: 0, .. }, bit_offset }] if bit_offset % 8 == 0 => {
                Some(bit_offset / 8)
            }
            _ => None,
        }
    }

    /// Pops the top entry where a value is required, converting a memory
    /// location description to its address.
    pub(super) fn pop_value(&self, stack: &mut Stack) -> Result<Value, Stop> {
        match stack.pop().ok_or(Stop::Ill(id::EXPR_STACK_UNDERFLOW))? {
            Entry::Value(v) => Ok(v),
            Entry::ImplicitPointerValue(_) => Err(Stop::Eval(id::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            Entry::Location(l) if l.is_incomplete_composite() => {
                Err(Stop::Ill(id::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION))
            }
            Entry::Location(l) => match self.memory_address(&l) {
                Some(a) => Ok(self.generic_value(a)),
                None => Err(Stop::Ill(id::LOC_CONVERT_LOCATION_NOT_VALUE)),
            },
        }
    }

    /// Pops the top entry where an integral value is required.
    pub(super) fn pop_integral(&self, stack: &mut Stack, rule: RuleId) -> Result<Value, Stop> {
        let v = self.pop_value(stack)?;
        if v.ty.is_integral() {
            Ok(v)
        } else {
            Err(Stop::Ill(rule))
        }
    }

    /// Pops the top entry where a location description is required,
    /// converting a generic value to a memory location description.
    pub(super) fn pop_location(&mut self, stack: &mut Stack) -> Result<Loc, Stop> {
        let e = stack.pop().ok_or(Stop::Ill(id::EXPR_STACK_UNDERFLOW))?;
        self.as_location(e, id::LOC_CONVERT_VALUE_NOT_GENERIC)
    }

    pub(super) fn as_location(&mut self, e: Entry, not_generic: RuleId) -> Result<Loc, Stop> {
        match e {
            Entry::Location(l) if l.is_incomplete_composite() => {
                Err(Stop::Ill(id::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION))
            }
            Entry::Location(l) => Ok(l),
            Entry::Value(v) if v.ty.encoding == TypeEncoding::Generic => self.memory_loc(0, v.to_u128() as u64),
            Entry::Value(_) => Err(Stop::Ill(not_generic)),
            Entry::ImplicitPointerValue(ip) => self.ipv_to_location(&ip),
        }
    }

    /// The base type DR refers to (`op.typed.base-type`; DR = 0 is the
    /// generic type, `op.typed.die-zero-generic`), after the size budget.
    pub(super) fn base_type(&self, dr: u64) -> Result<BaseType, Stop> {
        let t = if dr == 0 {
            self.generic()
        } else {
            self.ctx.base_type(dr).map_err(|e| match e {
                ContextError::Missing(dwarfcheck_core::context::Element::Unit) => Stop::Eval(id::CTX_CU_MISSING),
                _ => Stop::Ill(id::OP_TYPED_NOT_BASE_TYPE),
            })?
        };
        // attr.llvm-vector-size.not-positive
        if t.vector_size == 0 {
            return Err(Stop::Ill(id::ATTR_LLVM_VECTOR_SIZE_NOT_POSITIVE));
        }
        Ok(t)
    }

    /// [`Self::base_type`] for the typed operations other than convert and
    /// reinterpret, where DR = 0 rests on `op.typed.die-zero-generic`.
    pub(super) fn base_type_of_typed_op(&mut self, dr: u64) -> Result<BaseType, Stop> {
        if dr == 0 {
            self.rely_on(Some(id::OP_TYPED_DIE_ZERO_GENERIC));
        }
        self.base_type(dr)
    }

    /// The size budget for a value of type `t`, then its bytes charged to
    /// the memory budget (`expr.budget.memory`).
    /// Counts `bytes` of storage created against the memory budget
    /// (`expr.budget.memory`): `Budget(Memory)` once the evaluation's total
    /// would go over it.
    pub(super) fn charge_memory(&mut self, bytes: u128) -> Result<(), Stop> {
        let total = u128::from(self.created) + bytes;
        if total > u128::from(self.ctx.budgets().clamped().memory_bytes) {
            return Err(Stop::Budget(BudgetKind::Memory));
        }
        self.created = total as u64;
        Ok(())
    }

    pub(super) fn type_budget(&mut self, t: &BaseType) -> Result<(), Stop> {
        if t.bytes() as u64 > self.ctx.budgets().clamped().size_bytes {
            return Err(Stop::Budget(BudgetKind::Size));
        }
        self.charge_memory(t.bytes() as u128)?;
        Ok(())
    }

    /// Reads `ts` bits from `loc` and makes a value of type `t`, or an
    /// implicit pointer value (`op.implicit-pointer.deref-whole`).
    ///
    /// The walk of the bits read is charged first (`expr.budget.work`).
    pub(super) fn deref(&mut self, loc: &Loc, ts: u64, t: BaseType) -> Result<Entry, Stop> {
        match self.read(loc, ts)? {
            Read::Bits(mut bytes) => {
                if t.big_endian && ts.is_multiple_of(8) {
                    bytes.reverse();
                }
                mask_top(&mut bytes, t.bits);
                bytes.resize(t.bytes(), 0);
                Ok(Entry::Value(Value { ty: t, bytes }))
            }
            Read::ImplicitPointer(src) => Ok(Entry::ImplicitPointerValue(Loc::from_source(&src))),
        }
    }

    /// Reads `nbits` bits from `loc` ([`read_bits`]) once the walk over
    /// them is charged (`expr.budget.work`; nothing for a read of no bits).
    pub(super) fn read(&mut self, loc: &Loc, nbits: u64) -> Result<Read, Stop> {
        if nbits > 0 {
            self.charge_walk(loc, nbits)?;
        }
        read_bits(self.ctx, loc, nbits)
    }

    /// Reads register `regno` as an unsigned generic-sized value, as
    /// `DW_OP_regval_type R, DR` with such a type would
    /// (`op.breg.register-plus-offset`).
    pub(super) fn register_address(&mut self, regno: u64) -> Result<u128, Stop> {
        let g = self.generic();
        let l = self.register_loc(regno)?;
        match self.deref(&l, u64::from(g.bits), g)? {
            Entry::Value(v) => Ok(v.to_u128()),
            _ => Err(Stop::Eval(id::OP_IMPLICIT_POINTER_PARTIAL_READ)),
        }
    }

    pub(super) fn address_mask(&self) -> u128 {
        let bits = self.generic().bits;
        if bits >= 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        }
    }

    /// Moves every single location description of `loc` by `delta` bits
    /// (as `DW_OP_LLVM_bit_offset`): undefined storage is unchanged; an
    /// offset below 0 or at/after the storage's end is the evaluation
    /// error `rule`.
    pub(super) fn offset(&self, loc: &mut Loc, delta: i128, rule: RuleId) -> Result<(), Stop> {
        for s in &mut loc.singles {
            if s.storage == Storage::Undefined {
                continue;
            }
            let new = i128::try_from(s.bit_offset)
                .ok()
                .and_then(|o| o.checked_add(delta))
                .ok_or_else(|| Stop::Eval(rule.clone()))?;
            // A storage of unknown size (a register the target does not
            // define) still holds fewer than 2^64 bits (loc.offset.storage-size).
            let size = s.storage.size_bits(self.ctx).unwrap_or(1u128 << 64);
            if new < 0 || new as u128 >= size {
                return Err(Stop::Eval(rule));
            }
            s.bit_offset = new as u128;
        }
        Ok(())
    }

    /// Resolves a branch by `disp` bytes from the end of `insn`
    /// (`op.skip.*`, `op.bra.*`).
    pub(super) fn branch(&self, insn: &Insn, insns: &[Insn], len: usize, disp: i64, skip: bool) -> Result<Flow, Stop> {
        let target = insn.end as i64 + disp;
        if target == len as i64 {
            return Ok(Flow::Done);
        }
        if target < 0 || target > len as i64 {
            return Err(Stop::Ill(if skip { id::OP_SKIP_TARGET_OUT_OF_RANGE } else { id::OP_BRA_TARGET_OUT_OF_RANGE }));
        }
        match insns.iter().position(|x| x.at as i64 == target) {
            Some(j) => Ok(Flow::Jump(j)),
            None => Err(Stop::Ill(if skip { id::OP_SKIP_TARGET_NOT_OP_START } else { id::OP_BRA_TARGET_NOT_OP_START })),
        }
    }
}

/// Maps a `.debug_addr` failure to its rule (`ctx.cu-missing`,
/// `op.debug-addr.entry-missing`).
pub(super) fn debug_addr_stop(e: ContextError) -> Stop {
    match e {
        ContextError::Missing(dwarfcheck_core::context::Element::Unit) => Stop::Eval(id::CTX_CU_MISSING),
        ContextError::Missing(_) => Stop::Eval(id::OP_DEBUG_ADDR_ENTRY_MISSING),
        other => ctx_stop(other),
    }
}
