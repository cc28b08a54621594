//! The interpreter loop: executes a decoded [`Program`] on a [`Scratch`]
//! stack, one operation at a time through the dispatch to the operation
//! families, and turns the final stack into the outcome (hetero-2020 "DWARF
//! Operation Expressions" and the operation sections that follow it).

use super::arith;
use super::decode::{Insn, Kind, BAD_TARGET, END, OUT_OF_RANGE};
use super::evaluation::{Evaluation, Facts, Fail, Result, Stop};
use super::machine::{Entry, Location, Scratch, Value};
use super::program::Program;
use dwarfcheck_core::context::{ContextError, Element, MachineState};
use dwarfcheck_core::outcome::{BudgetKind, Outcome};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_core::rules::RuleId;

impl Program {
    /// Evaluates the program in `state`, using `scratch` for all working
    /// memory. Returns the same [`Outcome`] as `reference::expr::evaluate`.
    pub fn run(&self, state: &dyn MachineState, scratch: &mut Scratch) -> Outcome {
        let evaluation = top_level(state);
        match self.run_in(&evaluation, scratch) {
            Ok(e) => evaluation.outcome_of(scratch, e),
            Err(stop) => stop.outcome(),
        }
    }

    /// Evaluates the program in `state` and leaves the result in fast's own
    /// form: a value, or a location description whose composites and wide
    /// values live in `scratch` until its next use. Nothing is allocated
    /// once `scratch` has grown to the evaluation's size, and no normal
    /// form is built (so the walk of a location result is not charged to
    /// the work budget, rule `expr.budget.work`: see
    /// [`Scratch::export_location`] to build it). Errors: the failure and
    /// the byte offset the outcome would report.
    pub fn run_native(&self, state: &dyn MachineState, scratch: &mut Scratch) -> std::result::Result<Entry, Stop> {
        self.run_in(&top_level(state), scratch)
    }

    /// [`Program::run_native`] with the facts of `state` given, for a
    /// caller that evaluates many expressions of one unit: `facts` must be
    /// [`Facts::of`] a state of the same unit, target and budgets as
    /// `state` (else the evaluation mixes the two; it never panics).
    pub fn run_with<'a>(
        &self,
        facts: &Facts<'a>,
        state: &'a dyn MachineState,
        scratch: &mut Scratch,
    ) -> std::result::Result<Entry, Stop> {
        self.run_in(&Evaluation::new(state, facts, run_nested), scratch)
    }

    /// [`Program::run_with`] for a location description attribute
    /// (`DW_AT_location`, DWARF 5 §2.6; hetero-2020 "DWARF Location
    /// Description"): the caller says the initial stack is empty and the
    /// result kind is location, so neither is asked of `state`. The same
    /// as [`Program::run_with`] in a state that gives those two.
    pub fn run_location<'a>(
        &self,
        facts: &Facts<'a>,
        state: &'a dyn MachineState,
        scratch: &mut Scratch,
    ) -> std::result::Result<Entry, Stop> {
        self.run_in(&Evaluation { location_attribute: true, ..Evaluation::new(state, facts, run_nested) }, scratch)
    }

    fn run_in(&self, evaluation: &Evaluation<'_>, scratch: &mut Scratch) -> std::result::Result<Entry, Stop> {
        if let Some(e) = &self.error {
            return Err(Stop { fail: Fail::IllFormed(e.rule.clone()), at: Some(e.at) });
        }
        scratch.reset();
        if let Some(r) = evaluation.straight_line(self, scratch) {
            return r;
        }
        let initial = if evaluation.location_attribute { &[][..] } else { evaluation.state.initial_stack() };
        for e in initial {
            let entry: Entry = scratch.import(e);
            scratch.stack.push(entry);
        }
        evaluation.exec(self, scratch)?;
        evaluation.result(scratch).map_err(|fail| Stop { fail, at: None })
    }
}

/// Evaluates the operation expression `expr` in `state` (one-off form of
/// [`Program::compile`] + [`Program::run`]).
pub fn evaluate(expr: &[u8], state: &dyn MachineState) -> Outcome {
    thread_local! {
        static CACHE: std::cell::RefCell<(Program, Scratch)> =
            std::cell::RefCell::new((Program::new(), Scratch::new()));
    }
    CACHE.with(|c| match c.try_borrow_mut() {
        Ok(mut guard) => {
            let (p, s) = &mut *guard;
            p.recompile(expr, state);
            p.run(state, s)
        }
        Err(_) => Program::compile(expr, state).run(state, &mut Scratch::new()),
    })
}

/// A top-level evaluation state in `state` whose nested evaluations run
/// in this loop.
pub(super) fn top_level(state: &dyn MachineState) -> Evaluation<'_> {
    Evaluation::new(state, &Facts::of(state), run_nested)
}

/// The loop as the operation families below it run a nested program
/// ([`Evaluation::run`]).
fn run_nested(evaluation: &Evaluation<'_>, prog: &Program, s: &mut Scratch) -> Result<(), Stop> {
    // (One producing operation, as a frame base mostly is, runs without
    // the loop.)
    match evaluation.run_short(prog, s) {
        Some(Ok(e)) => {
            evaluation.push(s, e);
            Ok(())
        }
        Some(Err(stop)) => Err(stop),
        None => evaluation.exec(prog, s),
    }
}

impl Evaluation<'_> {
    /// Runs `prog` on the stack above `self.base`; leaves the entries there.
    pub fn exec(&self, prog: &Program, s: &mut Scratch) -> Result<(), Stop> {
        let insns = &prog.insns[..];
        let mut pc = 0usize;
        while pc < insns.len() {
            let ins = &insns[pc];
            let stop = |fail| Stop { fail, at: Some(self.at_override.unwrap_or(u64::from(ins.off))) };
            s.steps += 1;
            if s.steps > self.budgets.steps {
                return Err(stop(Fail::Budget(BudgetKind::Steps)));
            }
            let r = self.step(prog, ins, s);
            s.last = pc as u32;
            match r {
                Ok(None) => pc += 1,
                Ok(Some(t)) => pc = if t == END { insns.len() } else { t as usize },
                Err(f) => return Err(stop(f)),
            }
            if s.stack.len() - self.base > self.budgets.stack {
                return Err(stop(Fail::Budget(BudgetKind::Stack)));
            }
        }
        Ok(())
    }

    // ----- one operation ------------------------------------------------

    /// Executes one instruction; returns a branch target if control moves.
    pub(super) fn step(&self, prog: &Program, ins: &Insn, s: &mut Scratch) -> Result<Option<u64>> {
        match ins.kind {
            Kind::Addrx | Kind::Constx => {
                let a = self.state.debug_addr(ins.a).map_err(|e| match e {
                    ContextError::Missing(Element::Unit) => Fail::EvalError(R::CTX_CU_MISSING),
                    _ => Fail::EvalError(R::OP_DEBUG_ADDR_ENTRY_MISSING),
                })?;
                if ins.kind == Kind::Addrx {
                    self.push_memory(s, u128::from(a))?;
                } else {
                    let v = self.generic(u128::from(a));
                    self.push(s, Entry::Value(v));
                }
            }
            Kind::Dup => {
                self.need(s, 1)?;
                let e = self.touch(s, 0)?;
                self.push(s, e);
            }
            Kind::Drop => {
                self.need(s, 1)?;
                self.touch(s, 0)?;
                if let Some(Entry::Location(Location::Composite { idx, .. })) = s.stack.pop() {
                    s.release_newest(idx);
                }
            }
            Kind::Over => {
                self.need(s, 2)?;
                let e = self.touch(s, 1)?;
                self.push(s, e);
            }
            Kind::Pick => {
                let i = ins.a as usize;
                if i >= self.avail(s) {
                    return Err(Fail::IllFormed(R::OP_PICK_INDEX_OUT_OF_RANGE));
                }
                let e = self.touch(s, i)?;
                self.push(s, e);
            }
            Kind::Swap => {
                self.need(s, 2)?;
                self.touch(s, 0)?;
                self.touch(s, 1)?;
                let n = s.stack.len();
                s.stack.swap(n - 1, n - 2);
            }
            Kind::Rot => {
                self.need(s, 3)?;
                self.touch(s, 0)?;
                self.touch(s, 1)?;
                self.touch(s, 2)?;
                let n = s.stack.len();
                // Top becomes third; second becomes top; third becomes second.
                let top = s.stack[n - 1];
                s.stack[n - 1] = s.stack[n - 2];
                s.stack[n - 2] = s.stack[n - 3];
                s.stack[n - 3] = top;
            }
            Kind::Deref => {
                let l = self.pop_location(s)?;
                let e = self.deref(s, &l, self.generic_type)?;
                self.push(s, e);
            }
            Kind::DerefSize => {
                let l = self.pop_location(s)?;
                let e = self.deref_size(s, &l, ins.a)?;
                self.push(s, e);
            }
            Kind::DerefType => {
                let t = self.base_type(ins.b)?;
                if t.bytes() as u64 != ins.a {
                    return Err(Fail::IllFormed(R::OP_DEREF_TYPE_SIZE_MISMATCH));
                }
                self.within_size(s, t)?;
                let l = self.pop_location(s)?;
                let e = self.deref(s, &l, t)?;
                self.push(s, e);
            }
            Kind::Xderef | Kind::XderefSize | Kind::XderefType => {
                let t = if ins.kind == Kind::XderefType {
                    let t = self.base_type(ins.b)?;
                    if t.bytes() as u64 != ins.a {
                        return Err(Fail::IllFormed(R::OP_DEREF_TYPE_SIZE_MISMATCH));
                    }
                    t
                } else {
                    self.generic_type
                };
                self.need(s, 2)?;
                let a = self.pop_integral(s, R::OP_XDEREF_REQUIRES_INTEGRAL)?;
                let asp = self.pop_integral(s, R::OP_XDEREF_REQUIRES_INTEGRAL)?;
                let l = self.aspace_address(s, &asp, &a, R::OP_XDEREF_UNKNOWN_ADDRESS_SPACE)?;
                let e =
                    if ins.kind == Kind::XderefSize { self.deref_size(s, &l, ins.a)? } else { self.deref(s, &l, t)? };
                self.push(s, e);
            }
            Kind::Abs | Kind::Neg | Kind::Not => {
                let v = self.pop_value(s)?;
                let r = arith::unary(ins.kind, v)?;
                self.push(s, Entry::Value(r));
            }
            Kind::And
            | Kind::Div
            | Kind::Minus
            | Kind::Mod
            | Kind::Mul
            | Kind::Or
            | Kind::Plus
            | Kind::Shl
            | Kind::Shr
            | Kind::Shra
            | Kind::Xor
            | Kind::Eq
            | Kind::Ge
            | Kind::Gt
            | Kind::Le
            | Kind::Lt
            | Kind::Ne => {
                self.need(s, 2)?;
                let b = self.pop_value(s)?;
                let a = self.pop_value(s)?;
                let r = arith::binary(self, ins.kind, a, b)?;
                self.push(s, Entry::Value(r));
            }
            Kind::PlusUconst => {
                let v = self.pop_value(s)?;
                let r = arith::plus_uconst(self, v, ins.a)?;
                self.push(s, Entry::Value(r));
            }
            Kind::Skip => return self.branch(ins.a, R::OP_SKIP_TARGET_OUT_OF_RANGE, R::OP_SKIP_TARGET_NOT_OP_START),
            Kind::Bra => {
                let v = self.pop_value(s)?;
                if !arith::is_zero(s, &v) {
                    return self.branch(ins.a, R::OP_BRA_TARGET_OUT_OF_RANGE, R::OP_BRA_TARGET_NOT_OP_START);
                }
            }
            Kind::Piece => self.piece(s, ins.a.saturating_mul(8), None)?,
            Kind::BitPiece => self.piece(s, ins.a, Some(ins.b))?,
            Kind::Nop => {}
            Kind::FormAspaceAddress
            | Kind::PushLane
            | Kind::Offset
            | Kind::OffsetUconst
            | Kind::BitOffset
            | Kind::Undefined
            | Kind::AspaceBregx
            | Kind::PieceEnd
            | Kind::Extend
            | Kind::SelectBitPiece => self.ext(ins, s)?,
            Kind::PushObjectAddress => {
                let o = self.state.object().ok_or(Fail::EvalError(R::CTX_OBJECT_MISSING))?;
                let e = s.import(o);
                self.push(s, e);
            }
            Kind::FormTlsAddress => {
                let v = self.pop_integral(s, R::OP_FORM_TLS_ADDRESS_REQUIRES_INTEGRAL)?;
                let base = self.state.tls_base().ok_or(Fail::EvalError(R::CTX_TLS_BASE_MISSING))?;
                let ta = s.low128(&v);
                self.push_memory(s, u128::from(base).wrapping_add(ta))?;
            }
            Kind::ImplicitValue => {
                let (st, len) = (ins.a as usize, ins.b as usize);
                if ins.b > self.budgets.size_bytes {
                    return Err(Fail::Budget(BudgetKind::Size));
                }
                self.charge_memory(s, u128::from(ins.b))?;
                let start = s.store(&prog.bytes[st..st + len]);
                self.push(s, Entry::Location(Location::Implicit { start, len: len as u32, bit: 0 }));
            }
            Kind::StackValue => {
                self.need(s, 1)?;
                let e = self.pop_raw(s);
                let r = self.stack_value(s, e)?;
                self.push(s, r);
            }
            Kind::ConstType => {
                let t = self.base_type(ins.a)?;
                if t.bytes() as u64 != u64::from(ins.c) {
                    return Err(Fail::IllFormed(R::OP_CONST_TYPE_SIZE_MISMATCH));
                }
                self.within_size(s, t)?;
                let blk = &prog.bytes[ins.b as usize..ins.b as usize + ins.c as usize];
                let v = self.value_from_memory_order(s, t, blk);
                self.push(s, Entry::Value(v));
            }
            Kind::RegvalType => {
                let t = self.within_size(s, self.base_type(ins.b)?)?;
                let l = self.register_location(s, ins.a)?;
                let e = self.deref(s, &l, t)?;
                self.push(s, e);
            }
            Kind::Convert | Kind::Reinterpret => {
                let t = self.within_size(s, self.base_type(ins.a)?)?;
                self.need(s, 1)?;
                let v = self.pop_value(s)?;
                let r = if ins.kind == Kind::Convert {
                    arith::convert(v, t)?
                } else {
                    if t.bits != v.ty.bits {
                        return Err(Fail::IllFormed(R::OP_REINTERPRET_SIZE_MISMATCH));
                    }
                    Value { ty: t, ..v }
                };
                self.push(s, Entry::Value(r));
            }
            Kind::Call => self.call(ins, s)?,
            Kind::CallFrameEntryReg => {
                let l = self.call_frame_entry_reg(s, ins.a, ins.off)?;
                self.push(s, Entry::Location(l));
            }
            Kind::AspaceImplicitPointer => self.aspace_implicit_pointer(ins, s)?,
            Kind::Unsupported => {
                return Err(Fail::Unsupported(dwarfcheck_core::encoding::op::name_of(ins.op)));
            }
            // The producing operations (`Kind::produces`).
            _ => {
                let e = self.produce(prog, ins, s)?;
                self.push(s, e);
            }
        }
        Ok(None)
    }

    // ----- helpers ------------------------------------------------------

    pub(super) fn branch(&self, target: u64, out_of_range: RuleId, not_start: RuleId) -> Result<Option<u64>> {
        match target {
            OUT_OF_RANGE => Err(Fail::IllFormed(out_of_range)),
            BAD_TARGET => Err(Fail::IllFormed(not_start)),
            t => Ok(Some(t)),
        }
    }
}
