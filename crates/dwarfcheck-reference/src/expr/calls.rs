//! DIE-backed and frame-backed operations: `DW_OP_call2/call4/call_ref`,
//! `DW_OP_entry_value`, `DW_OP_LLVM_call_frame_entry_reg`, and the registers
//! of calling frames found through their CFI register rules (rules
//! `op.call.*`, `op.entry-value.*`, `op.call-frame-entry-reg.*`, `frame.*`).

use super::decode::Insn;
use super::entry::{Entry, Loc, Storage};
use super::machine::{Final, Machine, Stack};
use super::stop::Stop;
use dwarfcheck_core::context::{
    AttrForm, AttrValue, CallerFrame, Cfa, ContextError, Die, Element, MachineState, Overlay, ResultKind,
};
use dwarfcheck_core::encoding::{ate, Op};
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, Value};
use dwarfcheck_core::rules::id;
use std::sync::Arc;

/// The result of a nested evaluation and the register of its last
/// operation if that was `DW_OP_reg*`/`DW_OP_regx`.
pub(super) type Nested = (Final, Option<u64>);

impl Machine<'_> {
    /// Budget `depth` if one more nesting level would exceed it
    /// (`op.call.depth-budget`).
    pub(super) fn deeper(&self, depth: u32) -> Result<u32, Stop> {
        if depth + 1 > self.ctx.budgets().clamped().depth {
            return Err(Stop::Budget(BudgetKind::Depth));
        }
        Ok(depth + 1)
    }

    /// Runs `expr` as its own evaluation in `ctx` (an overlay over this
    /// machine's state or the top frame's) and in the frame `frames` names,
    /// sharing the steps budget, the unspecified-rule record and the cycle
    /// marks. Failures keep the offset inside `expr`.
    pub(super) fn run_in(
        &mut self,
        ctx: &dyn MachineState,
        frames: Vec<Arc<CallerFrame>>,
        expr: &[u8],
        kind: Option<ResultKind>,
        stack: Stack,
        depth: u32,
    ) -> Result<Nested, (Stop, Option<u64>)> {
        let mut m = Machine {
            ctx,
            top: self.top,
            frames,
            depth,
            last_reg: None,
            steps: self.steps,
            created: self.created,
            work: self.work,
            unspecified: std::mem::take(&mut self.unspecified),
            marks: std::mem::take(&mut self.marks),
        };
        let r = m.run(expr, kind, stack, depth, None);
        self.steps = m.steps;
        self.created = m.created;
        self.work = m.work;
        self.unspecified = m.unspecified;
        self.marks = m.marks;
        let last = m.last_reg;
        r.map(|f| (f, last))
    }

    /// The location description of register `regno` in the frame this
    /// machine evaluates in (`op.regx.pushes-register` in the top frame,
    /// `frame.registers-through-cfi` in a calling frame).
    pub(super) fn register_loc(&mut self, regno: u64) -> Result<Loc, Stop> {
        if self.frames.is_empty() {
            return Ok(Loc::one(Storage::Register { regno }, 0));
        }
        let frames = self.frames.clone();
        self.frame_register(&frames, regno)
    }

    /// The location of register `regno` of the frame `frames` names, from
    /// the CFI rule its last frame holds for it (`frame.rule.*`).
    pub(super) fn frame_register(&mut self, frames: &[Arc<CallerFrame>], regno: u64) -> Result<Loc, Stop> {
        self.frame_register_at(frames, regno).map_err(|(s, _)| s)
    }

    /// As [`Self::frame_register`], keeping the byte offset of the failing
    /// operation in the rule's own expression (expression / val_expression
    /// rules; register and same value rules pass on the at of the rule they
    /// lead to; other faults have none). When the frame came from virtual
    /// unwinding ([`CallerFrame::unwound`]), re-entering the computation of
    /// the same register of the same frame is `unwind.cyclic`.
    pub(super) fn frame_register_at(&mut self, frames: &[Arc<CallerFrame>], regno: u64) -> Result<Loc, At> {
        let Some((f, below)) = frames.split_last() else {
            return Ok(Loc::one(Storage::Register { regno }, 0));
        };
        let key = (frames.len(), regno);
        if f.unwound {
            // unwind.cyclic: the register of this frame is already being computed.
            if self.marks.regs.contains(&key) {
                return Err((Stop::Ill(id::UNWIND_CYCLIC), None));
            }
            self.marks.regs.push(key);
        }
        let r = self.apply_rule(f, below, regno);
        if f.unwound {
            if let Some(i) = self.marks.regs.iter().position(|k| *k == key) {
                self.marks.regs.remove(i);
            }
        }
        r
    }

    /// Register `regno` of the frame `f` describes, by `f`'s rule for it,
    /// `below` being the frames between the top and the called frame.
    fn apply_rule(&mut self, f: &CallerFrame, below: &[Arc<CallerFrame>], regno: u64) -> Result<Loc, At> {
        let none = |s: Stop| (s, None);
        let g = self.generic();
        let reg_bits = self.ctx.target().register(regno).map(|r| r.bits);
        // The called frame's CFA is in this address space (frame.rule.offset).
        let aspace = callee_aspace(self.top, below);
        match f.rule(regno).clone() {
            RegisterRule::Undefined => Ok(Loc::undefined()),
            RegisterRule::SameValue => self.frame_register_at(below, regno),
            RegisterRule::Offset { offset } => {
                let cfa = self.callee_cfa(below).map_err(none)?;
                let a = self.cfa_plus(cfa, offset, aspace).map_err(none)?;
                self.memory_loc(aspace, a).map_err(none)
            }
            RegisterRule::ValOffset { offset } => {
                // Order (frame.rule.val-offset): size check against the CFA
                // space's address size, the CFA, then the range.
                let abits = self.aspace_bits(aspace);
                if reg_bits.is_some_and(|b| b != abits) {
                    return Err(none(Stop::Ill(id::FRAME_VAL_OFFSET_SIZE_MISMATCH)));
                }
                let cfa = self.callee_cfa(below).map_err(none)?;
                let a = self.cfa_plus(cfa, offset, aspace).map_err(none)?;
                let ty = BaseType::ate(ate::UNSIGNED, reg_bits.unwrap_or(g.bits), g.big_endian);
                Ok(Loc::one(
                    Storage::Implicit { bytes: Arc::new(memory_image(Value::from_u128(ty, u128::from(a)))) },
                    0,
                ))
            }
            RegisterRule::Register { register } => {
                let other = self.ctx.target().register(register).map(|r| r.bits);
                if let (Some(a), Some(b)) = (reg_bits, other) {
                    if a != b {
                        return Err(none(Stop::Ill(id::FRAME_REGISTER_SIZE_MISMATCH)));
                    }
                }
                self.frame_register_at(below, register)
            }
            RegisterRule::Expression { expr } => match self.cfi_expression(below, &expr, ResultKind::Location)? {
                Final::Location(l) => Ok(l),
                Final::Value(_) => unreachable!("result kind location gives a location"),
            },
            RegisterRule::ValExpression { expr } => {
                let v = match self.cfi_expression(below, &expr, ResultKind::Value)? {
                    Final::Value(v) => v,
                    Final::Location(_) => unreachable!("result kind value gives a value"),
                };
                if reg_bits.is_some_and(|b| b != v.ty.bits) {
                    return Err(none(Stop::Ill(id::FRAME_VAL_EXPRESSION_SIZE_MISMATCH)));
                }
                Ok(Loc::one(Storage::Implicit { bytes: Arc::new(memory_image(v)) }, 0))
            }
            RegisterRule::RaSigned { .. } => {
                Err(none(Stop::Unsupported("the AArch64 return-address signing rule in a calling frame".into())))
            }
        }
    }

    /// The CFA of the frame `below` names (the top frame's for an empty
    /// slice) as a byte address; errors as [`Self::cfa_stop`] gives them.
    pub(super) fn callee_cfa(&self, below: &[Arc<CallerFrame>]) -> Result<u64, Stop> {
        let cfa = match below.last() {
            None => self.top.cfa().map(|c| c.address),
            Some(b) => b.cfa.ok_or(ContextError::Missing(Element::Cfa)),
        };
        cfa.map_err(|e| self.cfa_stop(e, below.len()))
    }

    /// Why the CFA of frame `frame` (0: the top frame) is not known, as the
    /// stop of the operation that needed it: `unwind.cyclic` when it is the
    /// CFA the unwinder is computing; the unwinding's own fault when the
    /// state was to find it by virtual unwinding (`unwind.context-from-cfi`);
    /// else `ctx.cfa-missing`.
    pub(super) fn cfa_stop(&self, e: ContextError, frame: usize) -> Stop {
        match e {
            _ if self.marks.cfa == Some(frame) => Stop::Ill(id::UNWIND_CYCLIC),
            ContextError::Unwinding(failure) => Stop::of_failure(failure),
            _ => Stop::Eval(id::CTX_CFA_MISSING),
        }
    }

    /// Size in **bits** of an address of `aspace` (the generic size for an
    /// address space the target does not define).
    pub(super) fn aspace_bits(&self, aspace: u64) -> u32 {
        self.ctx.target().address_space(aspace).map(|a| a.address_bits).unwrap_or(self.generic().bits)
    }

    /// Evaluates a CFI expression rule in the called frame `below`: no unit,
    /// no object, the called frame's CFA (in its address space) as the
    /// initial stack (`frame.rule.expression`, `frame.rule.val-expression`).
    fn cfi_expression(&mut self, below: &[Arc<CallerFrame>], expr: &[u8], kind: ResultKind) -> Result<Final, At> {
        let depth = self.deeper(self.depth).map_err(|s| (s, None))?;
        let cfa = self.callee_cfa(below).map_err(|s| (s, None))?;
        let aspace = callee_aspace(self.top, below);
        let top = self.top;
        let c = frame_context(top, below).without_unit().with_object(None).with_result_kind(Some(kind));
        let stack = vec![Entry::Location(self.memory_loc(aspace, cfa).map_err(|s| (s, None))?)];
        self.run_in(&c, below.to_vec(), expr, Some(kind), stack, depth).map(|(f, _)| f)
    }

    /// CFA + N as DW_OP_LLVM_offset N on the CFA's memory location would
    /// give it: inside `aspace`'s storage (`frame.offset.out-of-storage`).
    fn cfa_plus(&self, cfa: u64, n: i64, aspace: u64) -> Result<u64, Stop> {
        let a = i128::from(cfa) + i128::from(n);
        let bits = self.aspace_bits(aspace);
        if a < 0 || (bits < 64 && a >= 1i128 << bits) || a > i128::from(u64::MAX) {
            return Err(Stop::Eval(id::FRAME_OFFSET_OUT_OF_STORAGE));
        }
        Ok(a as u64)
    }

    /// The calling frame of the frame this machine evaluates in:
    /// `frame.caller-missing` without one, or, when the state was to find
    /// it by virtual unwinding, the fault that unwinding hit
    /// (`unwind.context-from-cfi`). Only the top frame's state can report
    /// such a fault: a calling frame's caller is given by the frame itself.
    fn caller(&self) -> Result<Arc<CallerFrame>, Stop> {
        match self.ctx.caller() {
            Ok(c) => Ok(c),
            Err(ContextError::Unwinding(failure)) => Err(Stop::of_failure(failure)),
            Err(_) => Err(Stop::Eval(id::FRAME_CALLER_MISSING)),
        }
    }

    /// `DW_OP_call2`, `DW_OP_call4`, `DW_OP_call_ref` (`op.call.*`).
    pub(super) fn call(&mut self, insn: &Insn, stack: &mut Stack, depth: u32) -> Result<(), Stop> {
        let unit = self.ctx.unit().ok_or(Stop::Eval(id::CTX_CU_MISSING))?;
        // op.call.operand: call2/call4 are unit-relative, call_ref is a
        // section offset.
        let off = match insn.op {
            Op::CallRef => Some(insn.u(0)),
            _ => unit.offset.checked_add(insn.u(0)),
        };
        let die: Die =
            off.and_then(|o| self.ctx.die(o)).map(|d| d.into_owned()).ok_or(Stop::Ill(id::OP_CALL_DIE_MISSING))?;
        match (&die.location, &die.const_value) {
            // op.call.exprloc-same-stack
            (Some(AttrForm::Exprloc(e)), _) => {
                let d = self.deeper(depth)?;
                self.exec(e, stack, d, None).map_err(|(s, _)| s)?;
            }
            // op.call.loclist-pushes-location
            (Some(form @ (AttrForm::LocList { .. } | AttrForm::LocListX { .. })), _) => {
                let d = self.deeper(depth)?;
                let l = self.die_loclist(form.as_value(), d)?;
                stack.push(Entry::Location(l));
            }
            (Some(AttrForm::Constant(_)), _) => {
                return Err(Stop::Unsupported("a DW_AT_location of class constant".into()));
            }
            // op.call.const-value-implicit
            (None, Some(v)) => stack.push(Entry::Location(self.implicit_value(v)?)),
            // op.call.no-attribute
            (None, None) => {}
        }
        Ok(())
    }

    /// Evaluates a DIE's location list in the current frame (result kind
    /// location, no object, empty initial stack) at depth `depth`.
    pub(super) fn die_loclist(&mut self, form: AttrValue<'_>, depth: u32) -> Result<Loc, Stop> {
        let ctx = self.ctx;
        self.eval_loclist(ctx, form, depth, false).map_err(|(s, _)| s)
    }

    /// One implicit location description holding `bytes`, after the size
    /// budget (as `DW_OP_implicit_value`).
    pub(super) fn implicit_value(&mut self, bytes: &[u8]) -> Result<Loc, Stop> {
        if bytes.len() as u64 > self.ctx.budgets().clamped().size_bytes {
            return Err(Stop::Budget(BudgetKind::Size));
        }
        self.charge_memory(bytes.len() as u128)?;
        Ok(Loc::one(Storage::Implicit { bytes: Arc::new(bytes.to_vec()) }, 0))
    }

    /// `DW_OP_entry_value` / `DW_OP_GNU_entry_value` with block `e`
    /// (`op.entry-value.*`).
    pub(super) fn entry_value(&mut self, e: &[u8], depth: u32) -> Result<Entry, Stop> {
        let caller = self.caller()?;
        let d = self.deeper(depth)?;
        let mut frames = self.frames.clone();
        frames.push(caller);
        let top = self.top;
        let mut c = frame_context(top, &frames).with_object(None).with_result_kind(None);
        // The unit stays the current one: none inside a CFI expression rule.
        if self.ctx.unit().is_none() {
            c = c.without_unit();
        }
        match self.run_in(&c, frames.clone(), e, None, Vec::new(), d).map_err(|(s, _)| s)? {
            // op.entry-value.value-result
            (Final::Value(v), _) => Ok(Entry::Value(v)),
            // op.entry-value.register-result: the location is already the
            // calling frame's register R (found through CFI); read it.
            (Final::Location(l), Some(r)) => {
                let reg = self.ctx.target().register(r).ok_or(Stop::Eval(id::REG_UNKNOWN_REGISTER_READ))?;
                let g = self.generic();
                let t = if reg.bits == g.bits {
                    g
                } else {
                    // The type is the target's choice (op.entry-value.register-type).
                    self.rely_on(Some(id::OP_ENTRY_VALUE_REGISTER_TYPE));
                    BaseType::ate(ate::UNSIGNED, reg.bits, g.big_endian)
                };
                self.type_budget(&t)?;
                self.deref(&l, u64::from(t.bits), t)
            }
            // A byte address in memory converts to its address, as
            // DW_OP_breg* results do in DWARF 5 (loc.convert.memory-to-value);
            // anything else is op.entry-value.result-not-value.
            (Final::Location(l), None) => match self.memory_address(&l) {
                Some(a) => Ok(Entry::Value(self.generic_value(a))),
                None => Err(Stop::Ill(id::OP_ENTRY_VALUE_RESULT_NOT_VALUE)),
            },
        }
    }

    /// `DW_OP_LLVM_call_frame_entry_reg R` (`op.call-frame-entry-reg.pushes`).
    pub(super) fn call_frame_entry_reg(&mut self, regno: u64) -> Result<Loc, Stop> {
        let caller = self.caller()?;
        let mut frames = self.frames.clone();
        frames.push(caller);
        self.frame_register(&frames, regno)
    }
}

/// A stop with the byte offset of the operation at fault, if known.
pub(super) type At = (Stop, Option<u64>);

/// The state of the frame `frames` names (`frames` lists the calling
/// frames from the top's caller down to it; empty: the top frame): an
/// overlay over the top frame's state `top` with that frame's program
/// location, CFA (in its address space), frame base and calling frame, and
/// an empty initial stack. Registers and memory stay the top frame's
/// storage: a calling frame's registers are found through the CFI rules of
/// the frames below it (`frame.registers-through-cfi`; hetero-2020 "Call
/// Frame Information").
pub(super) fn frame_context<'a>(top: &'a dyn MachineState, frames: &'a [Arc<CallerFrame>]) -> Overlay<'a> {
    let view = Overlay::new(top).with_initial_stack(&[]);
    let Some(f) = frames.last() else {
        return view;
    };
    let cfa = match f.cfa {
        Some(address) => Ok(Cfa { address, aspace: f.cfa_aspace }),
        None => Err(ContextError::Missing(Element::Cfa)),
    };
    let caller = f.caller.clone().ok_or(ContextError::Missing(Element::Caller));
    view.with_pc(f.pc).with_cfa(cfa).with_frame_base(f.frame_base.as_deref()).with_caller(caller)
}

/// The address space of the CFA of the frame `below` names (the top
/// frame's for an empty slice; 0 when the top frame's CFA is not known).
pub(super) fn callee_aspace(top: &dyn MachineState, below: &[Arc<CallerFrame>]) -> u64 {
    match below.last() {
        Some(b) => b.cfa_aspace,
        None => top.cfa().map(|c| c.aspace).unwrap_or(0),
    }
}

/// The bytes of `v` in memory order, as `DW_OP_stack_value` stores a value
/// (least significant byte first unless the type is big-endian).
fn memory_image(v: Value) -> Vec<u8> {
    let mut bytes = v.bytes;
    if v.ty.big_endian {
        bytes.reverse();
    }
    bytes
}
