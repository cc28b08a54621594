//! DIE-backed and frame-backed operations: `DW_OP_call2/call4/call_ref`,
//! `DW_OP_entry_value`, `DW_OP_LLVM_call_frame_entry_reg`, and the registers
//! of calling frames found through their CFI register rules (rules
//! `op.call.*`, `op.entry-value.*`, `op.call-frame-entry-reg.*`, `frame.*`).

use super::decode::Insn;
use super::entry::{Entry, Loc, Storage};
use super::machine::{Final, Machine, Stack};
use super::Stop;
use dwarfcheck_core::context::{AttrForm, AttrValue, CallerFrame, Context, Die, ResultKind};
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
        if depth + 1 > self.ctx.budgets.depth {
            return Err(Stop::Budget(BudgetKind::Depth));
        }
        Ok(depth + 1)
    }

    /// Runs `expr` as its own evaluation in `ctx` (a derived context) and in
    /// the frame `frames` names, sharing the steps budget and the
    /// unspecified-rule record. Failures keep the offset inside `expr`.
    pub(super) fn run_in(
        &mut self,
        ctx: &Context,
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
            unspecified: std::mem::take(&mut self.unspecified),
            marks: std::mem::take(&mut self.marks),
        };
        let r = m.run(expr, kind, stack, depth, None);
        self.steps = m.steps;
        self.unspecified = m.unspecified;
        self.marks = m.marks;
        let last = m.last_reg;
        r.map(|f| (f, last))
    }

    /// The context of the frame `frames` names (see [`frame_context`]).
    fn frame_context(&self, frames: &[Arc<CallerFrame>]) -> Context {
        frame_context(self.top, frames)
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
    /// lead to; other faults have none). When the frames came from virtual
    /// unwinding, re-entering the computation of the same register of the
    /// same frame is `unwind.cyclic`.
    pub(super) fn frame_register_at(&mut self, frames: &[Arc<CallerFrame>], regno: u64) -> Result<Loc, At> {
        let Some((f, below)) = frames.split_last() else {
            return Ok(Loc::one(Storage::Register { regno }, 0));
        };
        let key = (frames.len(), regno);
        if self.marks.track {
            // unwind.cyclic: the register of this frame is already being computed.
            if self.marks.regs.contains(&key) {
                return Err((Stop::Ill(id::UNWIND_CYCLIC), None));
            }
            self.marks.regs.push(key);
        }
        let r = self.apply_rule(f, below, regno);
        if let Some(i) = self.marks.regs.iter().position(|k| *k == key) {
            self.marks.regs.remove(i);
        }
        r
    }

    /// Register `regno` of the frame `f` describes, by `f`'s rule for it,
    /// `below` being the frames between the top and the called frame.
    fn apply_rule(&mut self, f: &CallerFrame, below: &[Arc<CallerFrame>], regno: u64) -> Result<Loc, At> {
        let none = |s: Stop| (s, None);
        let g = self.generic();
        let reg_bits = self.ctx.target.register(regno).map(|r| r.bits);
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
                Ok(Loc::one(Storage::Implicit { bytes: memory_image(Value::from_u128(ty, u128::from(a))) }, 0))
            }
            RegisterRule::Register { register } => {
                let other = self.ctx.target.register(register).map(|r| r.bits);
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
                Ok(Loc::one(Storage::Implicit { bytes: memory_image(v) }, 0))
            }
            RegisterRule::RaSigned { .. } => {
                Err(none(Stop::Unsupported("the AArch64 return-address signing rule in a calling frame".into())))
            }
        }
    }

    /// The CFA of the frame `below` names (the top frame's for an empty
    /// slice): `ctx.cfa-missing` when unknown, `unwind.cyclic` when it is
    /// the CFA being computed by virtual unwinding.
    pub(super) fn callee_cfa(&self, below: &[Arc<CallerFrame>]) -> Result<u64, Stop> {
        let cfa = match below.last() {
            None => self.top.cfa,
            Some(b) => b.cfa,
        };
        match cfa {
            Some(c) => Ok(c),
            None if self.marks.cfa == Some(below.len()) => Err(Stop::Ill(id::UNWIND_CYCLIC)),
            None if below.is_empty() => Err(self.marks.cfa_fault.clone().unwrap_or(Stop::Eval(id::CTX_CFA_MISSING))),
            None => Err(Stop::Eval(id::CTX_CFA_MISSING)),
        }
    }

    /// Size in **bits** of an address of `aspace` (the generic size for an
    /// address space the target does not define).
    pub(super) fn aspace_bits(&self, aspace: u64) -> u32 {
        self.ctx.target.address_space(aspace).map(|a| a.address_bits).unwrap_or(self.generic().bits)
    }

    /// Evaluates a CFI expression rule in the called frame `below`: no unit,
    /// no object, the called frame's CFA (in its address space) as the
    /// initial stack (`frame.rule.expression`, `frame.rule.val-expression`).
    fn cfi_expression(&mut self, below: &[Arc<CallerFrame>], expr: &[u8], kind: ResultKind) -> Result<Final, At> {
        let depth = self.deeper(self.depth).map_err(|s| (s, None))?;
        let cfa = self.callee_cfa(below).map_err(|s| (s, None))?;
        let aspace = callee_aspace(self.top, below);
        let mut c = self.frame_context(below);
        c.cu = None;
        c.object = None;
        c.result_kind = Some(kind);
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
    /// `frame.caller-missing` without one, or, for the top frame of a
    /// context whose caller comes from virtual unwinding, the fault that
    /// unwinding hit (`unwind.context-from-cfi`).
    fn caller(&self) -> Result<Arc<CallerFrame>, Stop> {
        if let Some(c) = self.ctx.caller.clone() {
            return Ok(c);
        }
        match (&self.marks.caller_fault, self.frames.is_empty()) {
            (Some(s), true) => Err(s.clone()),
            _ => Err(Stop::Eval(id::FRAME_CALLER_MISSING)),
        }
    }

    /// `DW_OP_call2`, `DW_OP_call4`, `DW_OP_call_ref` (`op.call.*`).
    pub(super) fn call(&mut self, insn: &Insn, stack: &mut Stack, depth: u32) -> Result<(), Stop> {
        let cu = self.ctx.cu.as_ref().ok_or(Stop::Eval(id::CTX_CU_MISSING))?;
        // op.call.operand: call2/call4 are unit-relative, call_ref is a
        // section offset.
        let off = match insn.op {
            Op::CallRef => Some(insn.u(0)),
            _ => cu.offset.checked_add(insn.u(0)),
        };
        let die: Die = off.and_then(|o| cu.dies.get(&o)).cloned().ok_or(Stop::Ill(id::OP_CALL_DIE_MISSING))?;
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
    pub(super) fn implicit_value(&self, bytes: &[u8]) -> Result<Loc, Stop> {
        if bytes.len() as u64 > self.ctx.budgets.size_bytes {
            return Err(Stop::Budget(BudgetKind::Size));
        }
        Ok(Loc::one(Storage::Implicit { bytes: bytes.to_vec() }, 0))
    }

    /// `DW_OP_entry_value` / `DW_OP_GNU_entry_value` with block `e`
    /// (`op.entry-value.*`).
    pub(super) fn entry_value(&mut self, e: &[u8], depth: u32) -> Result<Entry, Stop> {
        let caller = self.caller()?;
        let d = self.deeper(depth)?;
        let mut frames = self.frames.clone();
        frames.push(caller);
        let mut c = self.frame_context(&frames);
        c.cu = self.ctx.cu.clone();
        c.object = None;
        c.result_kind = None;
        match self.run_in(&c, frames, e, None, Vec::new(), d).map_err(|(s, _)| s)? {
            // op.entry-value.value-result
            (Final::Value(v), _) => Ok(Entry::Value(v)),
            // op.entry-value.register-result: the location is already the
            // calling frame's register R (found through CFI); read it.
            (Final::Location(l), Some(r)) => {
                let reg = self.ctx.target.register(r).ok_or(Stop::Eval(id::REG_UNKNOWN_REGISTER_READ))?;
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

/// The context of the frame `frames` names: the top context with that
/// frame's program location, CFA (and its address space), frame base and
/// calling frame. Registers and memory stay the top frame's storage
/// (`frame.registers-through-cfi`).
pub(super) fn frame_context(top: &Context, frames: &[Arc<CallerFrame>]) -> Context {
    let mut c = top.clone();
    if let Some(f) = frames.last() {
        c.pc = f.pc;
        c.cfa = f.cfa;
        c.cfa_aspace = f.cfa_aspace;
        c.frame_base = f.frame_base.clone();
        c.caller = f.caller.clone();
    }
    c.initial_stack = Vec::new();
    c
}

/// The address space of the CFA of the frame `below` names (the top
/// frame's for an empty slice).
pub(super) fn callee_aspace(top: &Context, below: &[Arc<CallerFrame>]) -> u64 {
    below.last().map(|b| b.cfa_aspace).unwrap_or(top.cfa_aspace)
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
