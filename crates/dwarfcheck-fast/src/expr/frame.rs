//! Calling frames: registers of non-top frames through CFI register rules,
//! `DW_OP_LLVM_call_frame_entry_reg` and `DW_OP_entry_value` (hetero-2020
//! "Call Frame Information > Structure of Call Frame Information",
//! "General Location Description Operations", "Special Value Operations";
//! rules `frame.*`, `op.entry-value.*`, `op.call-frame-entry-reg.*`).
//!
//! Every `Location::Register` on a stack names a register of the TOP frame: a
//! register operation evaluated in a calling frame pushes (or reads) the
//! location its CFI rule gives, resolved down to the top frame
//! (`frame.registers-through-cfi`).

use super::decode::{Insn, Kind};
use super::evaluation::{Evaluation, Fail, FrameRegisters, Result, Stop};
use super::machine::{mask, Entry, Location, Scratch, Value, NONE};
use super::program::{compiled, Program};
use dwarfcheck_core::context::{CallerFrame, Cfa, ContextError, Element, MachineState, Overlay};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::{BaseType, BudgetKind};
use dwarfcheck_core::rules::id as R;

impl Evaluation<'_> {
    /// Reads register `regno` as an unsigned generic-sized value (rule
    /// `op.breg.register-plus-offset`).
    pub(super) fn register_address(&self, s: &mut Scratch, regno: u64) -> Result<u128> {
        let t = BaseType::ate(ate::UNSIGNED, self.generic_bits(), self.generic_type.big_endian);
        let l = self.register_location(s, regno)?;
        match self.deref(s, &l, t)? {
            Entry::Value(v) => Ok(v.lo),
            _ => Ok(0),
        }
    }

    /// The location of register `regno` of the frame this evaluation runs
    /// in: a register location in the top frame, else what the CFI rule
    /// gives, resolved down to the top frame (`frame.registers-through-cfi`).
    #[inline]
    pub(super) fn register_location(&self, s: &mut Scratch, regno: u64) -> Result<Location> {
        match self.frame {
            None => Ok(Location::Register { regno, bit: 0 }),
            Some(_) => self.register_location_for(s, regno, self.depth),
        }
    }

    /// [`Evaluation::register_location`] on behalf of an evaluation at
    /// nesting `depth` (CFI expression rules run one level deeper than the
    /// evaluation that asks, whatever frame they are in: ambiguities item
    /// 58).
    fn register_location_for(&self, s: &mut Scratch, regno: u64, depth: u32) -> Result<Location> {
        match self.frame {
            None => Ok(Location::Register { regno, bit: 0 }),
            Some(FrameRegisters::Rules { caller, callee }) => tracked(s, caller, regno, |s| {
                callee.rule_location(s, caller.rule(regno), regno, self.at_override, depth)
            }),
            Some(FrameRegisters::Unwinding(k)) => match k.regs {
                None => Ok(Location::Register { regno, bit: 0 }),
                Some(regs) => match regs.binary_search_by_key(&regno, |(r, _)| *r) {
                    Ok(i) => regs[i].1.clone(),
                    Err(_) => Ok(Location::Undefined),
                },
            },
        }
    }

    /// The CFA of the frame this evaluation runs in, as a memory location
    /// in its own address space (rules `frame.rule.offset`,
    /// `frame.rule.expression`). Missing: `ctx.cfa-missing`, the fault of
    /// the virtual unwinding it was to come from, or `unwind.cyclic` while
    /// an unwinding is computing that very CFA.
    pub(super) fn cfa_location(&self) -> Result<Location> {
        self.cfa_location_of(self.state.cfa())
    }

    /// [`Evaluation::cfa_location`] of the answer `cfa` the state gave.
    fn cfa_location_of(&self, cfa: std::result::Result<Cfa, ContextError>) -> Result<Location> {
        match cfa {
            Ok(Cfa { address, aspace }) => {
                self.bound_memory(aspace, mask(u128::from(address), self.aspace_bits(aspace)))
            }
            Err(e) => match self.frame {
                Some(FrameRegisters::Unwinding(k)) if k.cfa_in_progress.get() => Err(Fail::IllFormed(R::UNWIND_CYCLIC)),
                _ => Err(Fail::from_context(&e, R::CTX_CFA_MISSING)),
            },
        }
    }

    /// The calling frame of the frame this evaluation runs in. Missing:
    /// `frame.caller-missing`, or the fault of the virtual unwinding it was
    /// to come from (the operation reports it at its own offset).
    fn caller(&self) -> Result<std::sync::Arc<CallerFrame>> {
        self.state.caller().map_err(|e| Fail::from_context(&e, R::FRAME_CALLER_MISSING))
    }

    /// The location, in terms of the top frame, of the previous value of
    /// register `regno` in the frame that called this one, by its CFI
    /// `rule` applied to this frame's state (rules `frame.rule.*`). `at` is
    /// the offset nested failures are reported at, `depth` the nesting of
    /// the evaluation that asks.
    pub(super) fn rule_location(
        &self,
        s: &mut Scratch,
        rule: &RegisterRule,
        regno: u64,
        at: Option<u64>,
        depth: u32,
    ) -> Result<Location> {
        let reg_bits = self.target.register(regno).map(|r| r.bits);
        match rule {
            RegisterRule::Undefined => Ok(Location::Undefined),
            RegisterRule::SameValue => self.register_location_for(s, regno, depth),
            RegisterRule::Offset { offset } => self.cfa_plus(s, self.state.cfa(), *offset),
            RegisterRule::ValOffset { offset } => {
                // (The CFA's address space; 0 when the CFA is missing,
                // which `cfa_plus` then reports.)
                let cfa = self.state.cfa();
                let abits = self.aspace_bits(cfa.as_ref().map_or(0, |c| c.aspace));
                if reg_bits.is_some_and(|b| b != abits) {
                    return Err(Fail::IllFormed(R::FRAME_VAL_OFFSET_SIZE_MISMATCH));
                }
                let Location::Memory { bit, .. } = self.cfa_plus(s, cfa, *offset)? else {
                    return Ok(Location::Undefined);
                };
                // The register's size; the generic type's for a register the
                // target does not define (frame.rule.val-offset).
                let vbits = reg_bits.unwrap_or(self.generic_bits());
                let t = BaseType::ate(ate::UNSIGNED, vbits, self.generic_type.big_endian);
                let v = Value { ty: t, lo: mask(mask(bit / 8, abits), vbits), wide: NONE };
                Ok(self.implicit_of(s, &v))
            }
            RegisterRule::Register { register } => {
                let other = self.target.register(*register).map(|r| r.bits);
                if reg_bits.is_some() && other.is_some() && reg_bits != other {
                    return Err(Fail::IllFormed(R::FRAME_REGISTER_SIZE_MISMATCH));
                }
                self.register_location_for(s, *register, depth)
            }
            RegisterRule::Expression { expr } => self.expr_rule(s, expr, None, at, depth).map_err(|e| e.fail),
            RegisterRule::ValExpression { expr } => {
                self.expr_rule(s, expr, Some(reg_bits), at, depth).map_err(|e| e.fail)
            }
            RegisterRule::RaSigned { .. } => Err(Fail::Unsupported("RA signing state as a register rule".into())),
        }
    }

    /// An `expression(E)` rule (`val_expression`: `None`) or a
    /// `val_expression(E)` rule (`val_expression`: `Some(bits of the
    /// register, if the target defines it)`) of the frame this evaluation
    /// runs in (rules
    /// `frame.rule.expression`, `frame.rule.val-expression`): E runs one
    /// level deeper with the CFA location pushed, no unit and no object.
    /// Failures inside E keep E's offsets unless `at` overrides them.
    pub(super) fn expr_rule(
        &self,
        s: &mut Scratch,
        expr: &[u8],
        val_expression: Option<Option<u32>>,
        at: Option<u64>,
        depth: u32,
    ) -> Result<Location, Stop> {
        let plain = |fail| Stop { fail, at: None };
        if depth + 1 > self.budgets.depth {
            return Err(plain(Fail::Budget(BudgetKind::Depth)));
        }
        let depth = depth + 1;
        let cfa = self.cfa_location().map_err(plain)?;
        // No unit, no object (rule `frame.rule.expression`).
        let cfi_state = Overlay::new(self.state).without_unit().with_object(None);
        let prog = compiled(expr, &cfi_state);
        let inner = Evaluation { state: &cfi_state, base: s.stack.len(), depth, at_override: at, ..*self };
        if let Some(e) = &prog.error {
            return Err(Stop { fail: Fail::IllFormed(e.rule.clone()), at: at.or(Some(e.at)) });
        }
        s.stack.push(Entry::Location(cfa));
        if let Err(stop) = inner.run(&prog, s) {
            s.stack.truncate(inner.base);
            return Err(stop);
        }
        let Some(reg_bits) = val_expression else {
            return inner.result_location(s).map_err(plain);
        };
        let v = inner.value_result(s).map_err(plain)?;
        if reg_bits.is_some_and(|b| b != v.ty.bits) {
            return Err(plain(Fail::IllFormed(R::FRAME_VAL_EXPRESSION_SIZE_MISMATCH)));
        }
        Ok(self.implicit_of(s, &v))
    }

    /// Memory at byte address `CFA + offset` of the CFA's address space
    /// (`cfa`: the state's answer), with the `DW_OP_LLVM_offset` range
    /// check (`frame.offset.out-of-storage`).
    fn cfa_plus(&self, s: &mut Scratch, cfa: std::result::Result<Cfa, ContextError>, offset: i64) -> Result<Location> {
        let l = self.cfa_location_of(cfa)?;
        self.move_location(s, l, i128::from(offset) * 8, R::FRAME_OFFSET_OUT_OF_STORAGE)
    }

    /// The contents of (top-frame) register location `l` as an unsigned
    /// generic-sized address (as `DW_OP_bregx` reads a register).
    pub(super) fn location_address(&self, s: &mut Scratch, l: &Location) -> Result<u128> {
        let t = BaseType::ate(ate::UNSIGNED, self.generic_bits(), self.generic_type.big_endian);
        match self.deref(s, l, t)? {
            Entry::Value(v) => Ok(v.lo),
            _ => Ok(0),
        }
    }

    /// The memory location at byte address `addr` of the default address
    /// space (as a generic value converts to one).
    pub(super) fn memory_at(&self, s: &mut Scratch, addr: u64) -> Result<Location> {
        let v = self.generic(u128::from(addr));
        self.to_location(s, Entry::Value(v))
    }

    /// `DW_OP_LLVM_call_frame_entry_reg R`: the location of R in the calling
    /// frame (rule `op.call-frame-entry-reg.pushes`).
    pub(super) fn call_frame_entry_reg(&self, s: &mut Scratch, regno: u64, off: u32) -> Result<Location> {
        let at = Some(self.at_override.unwrap_or(u64::from(off)));
        if let Some(FrameRegisters::Unwinding(k)) = self.frame {
            // Frame k+1's register through frame k's own row: re-entering a
            // computation under way is a cycle (rule `unwind.cyclic`).
            if k.in_progress.borrow().contains(&regno) {
                return Err(Fail::IllFormed(R::UNWIND_CYCLIC));
            }
            k.in_progress.borrow_mut().push(regno);
            let r = self.rule_location(s, k.rule(regno), regno, at, self.depth);
            k.in_progress.borrow_mut().pop();
            return r;
        }
        let caller = self.caller()?;
        tracked(s, &caller, regno, |s| self.rule_location(s, caller.rule(regno), regno, at, self.depth))
    }

    /// `DW_OP_entry_value` / `DW_OP_GNU_entry_value` (rules
    /// `op.entry-value.*`): evaluates the block in the calling frame with an
    /// empty stack and an unspecified result kind and object; a value
    /// result is returned, the location left by a final `DW_OP_reg*` is read
    /// with the register's type, a default-space memory byte address gives
    /// its address as a generic value, anything else is ill-formed.
    pub(super) fn entry_value(&self, prog: &Program, ins: &Insn, s: &mut Scratch) -> Result<Entry> {
        let caller = self.caller()?;
        let depth = self.deeper()?;
        let (st, len) = (ins.a as usize, ins.b as usize);
        // The block's program, compiled with `prog` or else now.
        let now;
        let e = match ins.c.checked_sub(1) {
            Some(k) => &prog.blocks[k as usize],
            None => {
                now = compiled(&prog.bytes[st..st + len], self.state);
                &*now
            }
        };
        if let Some(err) = &e.error {
            return Err(Fail::IllFormed(err.rule.clone()));
        }
        let calling = caller_state(self.state, &caller);
        let frame = FrameRegisters::Rules { caller: &caller, callee: self };
        let at = Some(self.at_override.unwrap_or(u64::from(ins.off)));
        let inner =
            Evaluation { state: &calling, base: s.stack.len(), depth, at_override: at, frame: Some(&frame), ..*self };
        let r = inner.run(e, s).map_err(|stop| stop.fail).and_then(|()| match inner.top(s) {
            Some(Entry::Value(v)) => Ok(Entry::Value(v)),
            Some(Entry::ImplicitPointer(_)) => Err(Fail::EvalError(R::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            Some(Entry::Location(l)) => match e.insns.get(s.last as usize) {
                Some(last) if last.kind == Kind::Reg => {
                    let t = inner.register_type(s, last.a)?;
                    inner.deref(s, &l, t)
                }
                // A memory byte address in the default space converts to
                // its address (DWARF 5's DW_OP_entry_value(DW_OP_breg* N)).
                _ => match inner.to_value(s, Entry::Location(l)) {
                    Ok(v) => Ok(Entry::Value(v)),
                    Err(_) => Err(Fail::IllFormed(R::OP_ENTRY_VALUE_RESULT_NOT_VALUE)),
                },
            },
            None => Err(Fail::IllFormed(R::OP_ENTRY_VALUE_RESULT_NOT_VALUE)),
        });
        s.stack.truncate(inner.base);
        r
    }
}

/// Computes register `regno` of the calling frame `frame` with `f`; for a
/// frame found by unwinding (`CallerFrame::unwound`), re-entering the same
/// computation is `unwind.cyclic`.
fn tracked(
    s: &mut Scratch,
    frame: &CallerFrame,
    regno: u64,
    f: impl FnOnce(&mut Scratch) -> Result<Location>,
) -> Result<Location> {
    if !frame.unwound {
        return f(s);
    }
    let key = (frame as *const CallerFrame as usize, regno);
    if s.unwound_in_progress.contains(&key) {
        return Err(Fail::IllFormed(R::UNWIND_CYCLIC));
    }
    s.unwound_in_progress.push(key);
    let r = f(s);
    s.unwound_in_progress.pop();
    r
}

/// The machine state of the calling frame: its program location (the
/// call site), CFA, frame base and caller; no object, no initial stack, no
/// result kind. Register contents stay the top frame's: every register
/// location names a top-frame register. The calling frames are given,
/// never unwound from this frame.
fn caller_state<'a>(state: &'a dyn MachineState, caller: &'a CallerFrame) -> Overlay<'a> {
    let cfa = match caller.cfa {
        Some(address) => Ok(Cfa { address, aspace: caller.cfa_aspace }),
        None => Err(ContextError::Missing(Element::Cfa)),
    };
    Overlay::new(state)
        .with_result_kind(None)
        .with_pc(caller.pc)
        .with_cfa(cfa)
        .with_frame_base(caller.frame_base.as_deref())
        .with_object(None)
        .with_initial_stack(&[])
        .with_caller(caller.caller.clone().ok_or(ContextError::Missing(Element::Caller)))
}
