//! The evaluation loop and the meaning of each operation (hetero-2020
//! "DWARF Operation Expressions" and its subsections). See the parent
//! module for the order in which one operation checks its rules.

use super::arith;
use super::decode::{decode, Insn};
use super::entry::{describe, Entry, Loc, Part, Single, Storage};
use super::read::{ctx_stop, read_bits, Read};
use super::{Stop, TraceStep};
use crate::context::{self, Context, ContextError, ResultKind};
use crate::encoding::Op;
use crate::outcome::value::mask_top;
use crate::outcome::{BaseType, BudgetKind, Outcome, TypeEncoding, Value};
use crate::rules::{id, RuleId};

/// The result of one evaluation after the result kind was applied.
enum Final {
    Value(Value),
    Location(Loc),
}

/// What happens after an operation.
enum Flow {
    /// Continue with the next operation.
    Next,
    /// Continue with operation number `usize`.
    Jump(usize),
    /// The evaluation is complete (a branch to one past the last operation).
    Done,
}

type Stack = Vec<Entry>;

/// State shared by an evaluation and its nested evaluations.
struct Machine<'c> {
    ctx: &'c Context,
    /// Operations executed so far, nested evaluations included.
    steps: u64,
}

/// Runs `expr` at top level and turns the result into an [`Outcome`].
pub(super) fn evaluate(expr: &[u8], ctx: &Context, trace: Option<&mut Vec<TraceStep>>) -> Outcome {
    let mut m = Machine { ctx, steps: 0 };
    let initial: Stack = ctx
        .initial_stack
        .iter()
        .map(|e| match e {
            context::Entry::Value(v) => Entry::Value(v.clone()),
            context::Entry::Location(l) => Entry::Location(Loc::from_normal(l)),
        })
        .collect();
    match m.run(expr, ctx.result_kind, initial, 0, trace) {
        Ok(Final::Value(v)) => Outcome::Value(v),
        Ok(Final::Location(l)) => Outcome::Location(l.normalize()),
        Err((stop, at)) => match stop {
            Stop::Ill(rule) => Outcome::IllFormed { rule, at },
            Stop::Eval(rule) => Outcome::EvalError { rule, at },
            Stop::Budget(budget) => Outcome::Budget { budget, at },
            Stop::Unsupported(what) => Outcome::Unsupported { what },
        },
    }
}

fn need(stack: &Stack, n: usize) -> Result<(), Stop> {
    if stack.len() < n {
        Err(Stop::Ill(id::EXPR_STACK_UNDERFLOW))
    } else {
        Ok(())
    }
}

/// Rule `op.stack.incomplete-composite` for the entry `index` below the top.
fn not_incomplete(stack: &Stack, index: usize) -> Result<(), Stop> {
    match &stack[stack.len() - 1 - index] {
        Entry::Location(l) if l.is_incomplete_composite() => Err(Stop::Ill(id::OP_STACK_INCOMPLETE_COMPOSITE)),
        _ => Ok(()),
    }
}

impl<'c> Machine<'c> {
    fn generic(&self) -> BaseType {
        self.ctx.generic_type()
    }

    fn generic_value(&self, v: u128) -> Value {
        Value::from_u128(self.generic(), v)
    }

    /// Evaluates one operation expression with its own stack.
    fn run(
        &mut self,
        expr: &[u8],
        kind: Option<ResultKind>,
        mut stack: Stack,
        depth: u32,
        mut trace: Option<&mut Vec<TraceStep>>,
    ) -> Result<Final, (Stop, Option<u64>)> {
        // expr.decode.static: nothing runs unless every operation decodes.
        let insns = decode(expr, self.ctx).map_err(|(rule, at)| (Stop::Ill(rule), Some(at as u64)))?;
        let mut i = 0;
        while i < insns.len() {
            let insn = &insns[i];
            let at = Some(insn.at as u64);
            self.steps += 1;
            if self.steps > self.ctx.budgets.steps {
                return Err((Stop::Budget(BudgetKind::Steps), at));
            }
            let flow = self.step(insn, &insns, expr.len(), &mut stack, depth).map_err(|s| (s, at))?;
            if stack.len() > self.ctx.budgets.stack {
                return Err((Stop::Budget(BudgetKind::Stack), at));
            }
            if let Some(t) = trace.as_deref_mut() {
                t.push(TraceStep { at: insn.at as u64, op: insn.text(), stack: stack.iter().map(describe).collect() });
            }
            match flow {
                Flow::Next => i += 1,
                Flow::Jump(j) => i = j,
                Flow::Done => break,
            }
        }
        self.finish(stack, kind).map_err(|s| (s, None))
    }

    /// The result of the evaluation from the final stack
    /// (rules `expr.result.*`).
    fn finish(&self, mut stack: Stack, kind: Option<ResultKind>) -> Result<Final, Stop> {
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
                    Ok(Final::Location(Loc::memory(0, v.to_u128() as u64)))
                }
                Some(Entry::Value(_)) => Err(Stop::Ill(id::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE)),
                Some(Entry::ImplicitPointerValue(_)) => Err(ipv_to_location()),
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
    fn memory_address(&self, l: &Loc) -> Option<u128> {
        match &l.singles[..] {
            [Single { storage: Storage::Memory { aspace: 0 }, bit_offset }] if bit_offset % 8 == 0 => {
                Some(bit_offset / 8)
            }
            _ => None,
        }
    }

    /// Pops the top entry where a value is required, converting a memory
    /// location description to its address.
    fn pop_value(&self, stack: &mut Stack) -> Result<Value, Stop> {
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
    fn pop_integral(&self, stack: &mut Stack, rule: RuleId) -> Result<Value, Stop> {
        let v = self.pop_value(stack)?;
        if v.ty.is_integral() {
            Ok(v)
        } else {
            Err(Stop::Ill(rule))
        }
    }

    /// Pops the top entry where a location description is required,
    /// converting a generic value to a memory location description.
    fn pop_location(&self, stack: &mut Stack) -> Result<Loc, Stop> {
        let e = stack.pop().ok_or(Stop::Ill(id::EXPR_STACK_UNDERFLOW))?;
        self.as_location(e, id::LOC_CONVERT_VALUE_NOT_GENERIC)
    }

    fn as_location(&self, e: Entry, not_generic: RuleId) -> Result<Loc, Stop> {
        match e {
            Entry::Location(l) if l.is_incomplete_composite() => {
                Err(Stop::Ill(id::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION))
            }
            Entry::Location(l) => Ok(l),
            Entry::Value(v) if v.ty.encoding == TypeEncoding::Generic => Ok(Loc::memory(0, v.to_u128() as u64)),
            Entry::Value(_) => Err(Stop::Ill(not_generic)),
            Entry::ImplicitPointerValue(_) => Err(ipv_to_location()),
        }
    }

    /// The base type DR refers to (`op.typed.base-type`; DR = 0 is the
    /// generic type, `op.typed.die-zero-generic`), after the size budget.
    fn base_type(&self, dr: u64) -> Result<BaseType, Stop> {
        let t = if dr == 0 {
            self.generic()
        } else {
            self.ctx.base_type(dr).map_err(|e| match e {
                ContextError::Missing("compilation unit") => Stop::Eval(id::CTX_CU_MISSING),
                _ => Stop::Ill(id::OP_TYPED_NOT_BASE_TYPE),
            })?
        };
        Ok(t)
    }

    fn type_budget(&self, t: &BaseType) -> Result<(), Stop> {
        if t.bytes() as u64 > self.ctx.budgets.size_bytes {
            return Err(Stop::Budget(BudgetKind::Size));
        }
        Ok(())
    }

    /// Reads `ts` bits from `loc` and makes a value of type `t`, or an
    /// implicit pointer value (`op.implicit-pointer.deref-whole`).
    fn deref(&self, loc: &Loc, ts: u64, t: BaseType) -> Result<Entry, Stop> {
        match read_bits(self.ctx, loc, ts)? {
            Read::Bits(mut bytes) => {
                if t.big_endian && ts.is_multiple_of(8) {
                    bytes.reverse();
                }
                mask_top(&mut bytes, t.bits);
                bytes.resize(t.bytes(), 0);
                Ok(Entry::Value(Value { ty: t, bytes }))
            }
            Read::ImplicitPointer(_) => Ok(Entry::ImplicitPointerValue(loc.clone())),
        }
    }

    /// Reads register `regno` as an unsigned generic-sized value, as
    /// `DW_OP_regval_type R, DR` with such a type would
    /// (`op.breg.register-plus-offset`).
    fn register_address(&self, regno: u64) -> Result<u128, Stop> {
        let g = self.generic();
        match self.deref(&Loc::one(Storage::Register { regno }, 0), u64::from(g.bits), g)? {
            Entry::Value(v) => Ok(v.to_u128()),
            _ => Err(Stop::Eval(id::OP_IMPLICIT_POINTER_PARTIAL_READ)),
        }
    }

    fn address_mask(&self) -> u128 {
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
    fn offset(&self, loc: &mut Loc, delta: i128, rule: RuleId) -> Result<(), Stop> {
        for s in &mut loc.singles {
            if s.storage == Storage::Undefined {
                continue;
            }
            let new = i128::try_from(s.bit_offset)
                .ok()
                .and_then(|o| o.checked_add(delta))
                .ok_or_else(|| Stop::Eval(rule.clone()))?;
            let size = s.storage.size_bits(self.ctx);
            if new < 0 || size.is_some_and(|z| new as u128 >= z) {
                return Err(Stop::Eval(rule));
            }
            s.bit_offset = new as u128;
        }
        Ok(())
    }

    /// Resolves a branch by `disp` bytes from the end of `insn`
    /// (`op.skip.*`, `op.bra.*`).
    fn branch(&self, insn: &Insn, insns: &[Insn], len: usize, disp: i64, skip: bool) -> Result<Flow, Stop> {
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

    /// Executes one operation.
    fn step(&mut self, insn: &Insn, insns: &[Insn], len: usize, stack: &mut Stack, depth: u32) -> Result<Flow, Stop> {
        let ctx = self.ctx;
        let g = self.generic();
        match insn.op {
            // ---- Literal Operations ------------------------------------
            // op.lit.pushes-generic, op.const.pushes-generic,
            // op.const.truncated-to-generic
            Op::Lit(n) => stack.push(Entry::Value(self.generic_value(u128::from(n)))),
            Op::Const1u | Op::Const2u | Op::Const4u | Op::Const8u | Op::Constu => {
                stack.push(Entry::Value(self.generic_value(u128::from(insn.u(0)))))
            }
            Op::Const1s | Op::Const2s | Op::Const4s | Op::Const8s | Op::Consts => {
                stack.push(Entry::Value(self.generic_value(insn.s(0) as i128 as u128)))
            }
            // op.constx.pushes-generic
            Op::Constx | Op::GnuConstIndex => {
                let v = ctx.debug_addr(insn.u(0)).map_err(debug_addr_stop)?;
                stack.push(Entry::Value(self.generic_value(u128::from(v))));
            }
            // op.typed.base-type, op.const-type.pushes
            Op::ConstType | Op::GnuConstType => {
                let t = self.base_type(insn.u(0))?;
                let block = insn.block(1);
                if t.bytes() != block.len() {
                    return Err(Stop::Ill(id::OP_CONST_TYPE_SIZE_MISMATCH));
                }
                self.type_budget(&t)?;
                let mut bytes = block.to_vec();
                if t.big_endian {
                    bytes.reverse();
                }
                mask_top(&mut bytes, t.bits);
                stack.push(Entry::Value(Value { ty: t, bytes }));
            }

            // ---- Memory Location Description Operations ----------------
            // op.addr.pushes-memory
            Op::Addr => {
                stack.push(Entry::Location(Loc::memory(0, (u128::from(insn.u(0)) & self.address_mask()) as u64)))
            }
            // op.addrx.pushes-memory
            Op::Addrx | Op::GnuAddrIndex => {
                let a = ctx.debug_addr(insn.u(0)).map_err(debug_addr_stop)?;
                stack.push(Entry::Location(Loc::memory(0, (u128::from(a) & self.address_mask()) as u64)));
            }
            // op.form-tls-address.memory
            Op::FormTlsAddress | Op::GnuPushTlsAddress => {
                need(stack, 1)?;
                let ta = self.pop_integral(stack, id::OP_FORM_TLS_ADDRESS_REQUIRES_INTEGRAL)?;
                let base = ctx.tls_base.ok_or(Stop::Eval(id::CTX_TLS_BASE_MISSING))?;
                let a = u128::from(base).wrapping_add(ta.to_u128()) & self.address_mask();
                stack.push(Entry::Location(Loc::memory(0, a as u64)));
            }
            // op.call-frame-cfa.memory
            Op::CallFrameCfa => {
                let cfa = ctx.cfa.ok_or(Stop::Eval(id::CTX_CFA_MISSING))?;
                stack.push(Entry::Location(Loc::memory(0, cfa)));
            }
            // op.fbreg.offset, op.fbreg.register-frame-base
            Op::Fbreg => {
                let fb = ctx.frame_base.as_ref().ok_or(Stop::Eval(id::CTX_FRAME_BASE_MISSING))?;
                if depth + 1 > ctx.budgets.depth {
                    return Err(Stop::Budget(BudgetKind::Depth));
                }
                let mut l = match self.run(fb, Some(ResultKind::Location), Vec::new(), depth + 1, None) {
                    Ok(Final::Location(l)) => l,
                    Ok(Final::Value(_)) => unreachable!("result kind location gives a location"),
                    Err((stop, _)) => return Err(stop),
                };
                if let [Single { storage: Storage::Register { regno }, bit_offset: 0 }] = l.singles[..] {
                    let a = self.register_address(regno)?;
                    l = Loc::memory(0, a as u64);
                }
                self.offset(&mut l, i128::from(insn.s(0)) * 8, id::OP_FBREG_OFFSET_OUT_OF_STORAGE)?;
                stack.push(Entry::Location(l));
            }
            // op.breg.register-plus-offset
            Op::Breg(_) | Op::Bregx => {
                let (regno, b) = match insn.op {
                    Op::Breg(n) => (u64::from(n), insn.s(0)),
                    _ => (insn.u(0), insn.s(1)),
                };
                let r = self.register_address(regno)?;
                let a = r.wrapping_add(b as i128 as u128) & self.address_mask();
                stack.push(Entry::Location(Loc::memory(0, a as u64)));
            }

            // ---- Register Location Description Operations --------------
            // op.reg.same-as-regx, op.regx.pushes-register
            Op::Reg(n) => stack.push(Entry::Location(Loc::one(Storage::Register { regno: u64::from(n) }, 0))),
            Op::Regx => stack.push(Entry::Location(Loc::one(Storage::Register { regno: insn.u(0) }, 0))),
            // op.regval-type.reads-register
            Op::RegvalType | Op::GnuRegvalType => {
                let t = self.base_type(insn.u(1))?;
                self.type_budget(&t)?;
                let v = self.deref(&Loc::one(Storage::Register { regno: insn.u(0) }, 0), u64::from(t.bits), t)?;
                stack.push(v);
            }

            // ---- Special Value Operations (dereferencing) --------------
            // op.deref.generic
            Op::Deref => {
                need(stack, 1)?;
                let l = self.pop_location(stack)?;
                let v = self.deref(&l, u64::from(g.bits), g)?;
                stack.push(v);
            }
            // op.deref-size.zero-extends, op.deref-size.zero
            Op::DerefSize => {
                need(stack, 1)?;
                let l = self.pop_location(stack)?;
                let v = self.deref_size(&l, insn.u(0))?;
                stack.push(v);
            }
            // op.deref-type.reads-location
            Op::DerefType | Op::GnuDerefType => {
                let t = self.base_type(insn.u(1))?;
                if t.bytes() as u64 != insn.u(0) {
                    return Err(Stop::Ill(id::OP_DEREF_TYPE_SIZE_MISMATCH));
                }
                self.type_budget(&t)?;
                need(stack, 1)?;
                let l = self.pop_location(stack)?;
                let v = self.deref(&l, u64::from(t.bits), t)?;
                stack.push(v);
            }
            // op.xderef.address-space
            Op::Xderef | Op::XderefSize | Op::XderefType => {
                let t = if insn.op == Op::XderefType {
                    let t = self.base_type(insn.u(1))?;
                    if t.bytes() as u64 != insn.u(0) {
                        return Err(Stop::Ill(id::OP_DEREF_TYPE_SIZE_MISMATCH));
                    }
                    self.type_budget(&t)?;
                    t
                } else {
                    g
                };
                need(stack, 2)?;
                let a = self.pop_integral(stack, id::OP_XDEREF_REQUIRES_INTEGRAL)?;
                let asp = self.pop_integral(stack, id::OP_XDEREF_REQUIRES_INTEGRAL)?;
                let aspace = asp.to_u128();
                let space = u64::try_from(aspace)
                    .ok()
                    .and_then(|n| ctx.target.address_space(n))
                    .ok_or(Stop::Ill(id::OP_XDEREF_UNKNOWN_ADDRESS_SPACE))?;
                let amask = if space.address_bits >= 64 { u64::MAX } else { (1u64 << space.address_bits) - 1 };
                let l = Loc::memory(space.number, (a.to_u128() as u64) & amask);
                let v = match insn.op {
                    Op::Xderef => self.deref(&l, u64::from(g.bits), g)?,
                    Op::XderefSize => self.deref_size(&l, insn.u(0))?,
                    _ => self.deref(&l, u64::from(t.bits), t)?,
                };
                stack.push(v);
            }

            // ---- Stack Operations --------------------------------------
            // op.dup.copies-top
            Op::Dup => {
                need(stack, 1)?;
                not_incomplete(stack, 0)?;
                let e = stack[stack.len() - 1].clone();
                stack.push(e);
            }
            // op.drop.pops-top
            Op::Drop => {
                need(stack, 1)?;
                not_incomplete(stack, 0)?;
                stack.pop();
            }
            // op.pick.copies-index
            Op::Pick => {
                let i = insn.u(0) as usize;
                if stack.len() <= i {
                    return Err(Stop::Ill(id::OP_PICK_INDEX_OUT_OF_RANGE));
                }
                not_incomplete(stack, i)?;
                let e = stack[stack.len() - 1 - i].clone();
                stack.push(e);
            }
            // op.over.copies-second
            Op::Over => {
                need(stack, 2)?;
                not_incomplete(stack, 1)?;
                let e = stack[stack.len() - 2].clone();
                stack.push(e);
            }
            // op.swap.exchanges
            Op::Swap => {
                need(stack, 2)?;
                not_incomplete(stack, 0)?;
                not_incomplete(stack, 1)?;
                let n = stack.len();
                stack.swap(n - 1, n - 2);
            }
            // op.rot.rotates: [.., third, second, top] -> [.., top, third, second]
            Op::Rot => {
                need(stack, 3)?;
                for k in 0..3 {
                    not_incomplete(stack, k)?;
                }
                let top = stack.pop().expect("checked");
                let n = stack.len();
                stack.insert(n - 2, top);
            }

            // ---- Arithmetic and Logical Operations ---------------------
            Op::Abs | Op::Neg | Op::Not => {
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                stack.push(Entry::Value(arith::unary(insn.op, &v)?));
            }
            Op::And
            | Op::Div
            | Op::Minus
            | Op::Mod
            | Op::Mul
            | Op::Or
            | Op::Plus
            | Op::Shl
            | Op::Shr
            | Op::Shra
            | Op::Xor => {
                need(stack, 2)?;
                let top = self.pop_value(stack)?;
                let second = self.pop_value(stack)?;
                stack.push(Entry::Value(arith::binary(insn.op, &second, &top)?));
            }
            // op.plus-uconst.adds
            Op::PlusUconst => {
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                stack.push(Entry::Value(arith::plus_uconst(&v, insn.u(0))?));
            }

            // ---- Control Flow Operations -------------------------------
            // op.nop.no-effect, op.gnu-uninit.no-effect
            Op::Nop | Op::GnuUninit => {}
            // op.relational.compares
            Op::Eq | Op::Ge | Op::Gt | Op::Le | Op::Lt | Op::Ne => {
                need(stack, 2)?;
                let top = self.pop_value(stack)?;
                let second = self.pop_value(stack)?;
                stack.push(Entry::Value(arith::compare(insn.op, &second, &top, g)?));
            }
            // op.skip.branches
            Op::Skip => return self.branch(insn, insns, len, insn.s(0), true),
            // op.bra.pops-condition, op.bra.condition-nonzero
            Op::Bra => {
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                if v.bytes.iter().any(|b| *b != 0) {
                    return self.branch(insn, insns, len, insn.s(0), false);
                }
            }

            // ---- Type Conversion Operations ----------------------------
            // op.convert.converts
            Op::Convert | Op::GnuConvert => {
                let t = self.base_type(insn.u(0))?;
                self.type_budget(&t)?;
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                stack.push(Entry::Value(arith::convert(&v, t)?));
            }
            // op.reinterpret.same-bits
            Op::Reinterpret | Op::GnuReinterpret => {
                let t = self.base_type(insn.u(0))?;
                self.type_budget(&t)?;
                need(stack, 1)?;
                let v = self.pop_value(stack)?;
                if v.ty.bits != t.bits {
                    return Err(Stop::Ill(id::OP_REINTERPRET_SIZE_MISMATCH));
                }
                stack.push(Entry::Value(Value { ty: t, bytes: v.bytes }));
            }

            // ---- General Location Description Operations ---------------
            // op.push-object-address.pushes
            Op::PushObjectAddress => {
                let o = ctx.object.as_ref().ok_or(Stop::Eval(id::CTX_OBJECT_MISSING))?;
                stack.push(match o {
                    context::Entry::Value(v) => Entry::Value(v.clone()),
                    context::Entry::Location(l) => Entry::Location(Loc::from_normal(l)),
                });
            }

            // ---- Implicit Location Description Operations --------------
            // op.implicit-value.creates-storage
            Op::ImplicitValue => {
                let b = insn.block(0);
                if b.len() as u64 > ctx.budgets.size_bytes {
                    return Err(Stop::Budget(BudgetKind::Size));
                }
                stack.push(Entry::Location(Loc::one(Storage::Implicit { bytes: b.to_vec() }, 0)));
            }
            // op.stack-value.creates-storage, op.implicit-pointer.stack-value
            Op::StackValue => {
                need(stack, 1)?;
                if let Some(Entry::ImplicitPointerValue(l)) = stack.last() {
                    let l = l.clone();
                    stack.pop();
                    stack.push(Entry::Location(l));
                } else {
                    let v = self.pop_value(stack)?;
                    let mut bytes = v.bytes;
                    if v.ty.big_endian {
                        bytes.reverse();
                    }
                    stack.push(Entry::Location(Loc::one(Storage::Implicit { bytes }, 0)));
                }
            }
            // op.implicit-pointer.creates
            Op::ImplicitPointer | Op::GnuImplicitPointer => {
                stack.push(Entry::Location(Loc::one(Storage::ImplicitPointer { die: insn.u(0), disp: insn.s(1) }, 0)))
            }

            // ---- Composite Location Description Operations -------------
            Op::Piece => self.piece(stack, u128::from(insn.u(0)) * 8, None)?,
            Op::BitPiece => self.piece(stack, u128::from(insn.u(0)), Some(insn.u(1)))?,

            // ---- Not in scope yet --------------------------------------
            Op::Call2
            | Op::Call4
            | Op::CallRef
            | Op::EntryValue
            | Op::GnuEntryValue
            | Op::GnuParameterRef
            | Op::GnuVariableValue
            | Op::LlvmFormAspaceAddress
            | Op::LlvmPushLane
            | Op::LlvmOffset
            | Op::LlvmOffsetUconst
            | Op::LlvmBitOffset
            | Op::LlvmCallFrameEntryReg
            | Op::LlvmUndefined
            | Op::LlvmAspaceBregx
            | Op::LlvmAspaceImplicitPointer
            | Op::LlvmPieceEnd
            | Op::LlvmExtend
            | Op::LlvmSelectBitPiece => {
                return Err(Stop::Unsupported(format!("{} is not implemented by the reference yet", insn.name)))
            }
        }
        Ok(Flow::Next)
    }

    /// `DW_OP_deref_size S` on an already popped location.
    fn deref_size(&self, l: &Loc, s: u64) -> Result<Entry, Stop> {
        let g = self.generic();
        if s == 0 {
            return Ok(Entry::Value(self.generic_value(0)));
        }
        let ts = u128::from(s) * 8;
        if ts >= u128::from(g.bits) {
            return self.deref(l, u64::from(g.bits), g);
        }
        let t = BaseType::ate(crate::encoding::ate::UNSIGNED, ts as u32, g.big_endian);
        match self.deref(l, ts as u64, t)? {
            Entry::Value(v) => Ok(Entry::Value(self.generic_value(v.to_u128()))),
            other => Ok(other),
        }
    }

    /// `DW_OP_piece` (`bits` = S*8) and `DW_OP_bit_piece` (`bits` = S,
    /// `bit_disp` = B), rules `op.piece.*`, `op.bit-piece.*`,
    /// `composite.*`.
    fn piece(&self, stack: &mut Stack, bits: u128, bit_disp: Option<u64>) -> Result<(), Stop> {
        let ctx = self.ctx;
        if bits > u128::from(ctx.budgets.size_bytes) * 8 {
            return Err(Stop::Budget(BudgetKind::Size));
        }
        let bits = bits as u64;
        let undefined_part = Part { bits, loc: Loc::undefined() };
        match stack.last_mut() {
            // op.piece.empty-stack-undefined-part
            None => stack.push(Entry::Location(Loc::one(
                Storage::Composite { parts: vec![undefined_part], complete: false },
                0,
            ))),
            // op.piece.top-incomplete-appends
            Some(Entry::Location(l)) if l.is_incomplete_composite() => {
                if let Storage::Composite { parts, .. } = &mut l.singles[0].storage {
                    parts.push(undefined_part);
                }
            }
            Some(_) => {
                let e = stack.pop().expect("not empty");
                let mut pl = self.as_location(e, id::OP_PIECE_NOT_LOCATION)?;
                if let Some(b) = bit_disp {
                    self.offset(&mut pl, i128::from(b), id::OP_BIT_PIECE_OFFSET_PAST_STORAGE)?;
                }
                // composite.part-exceeds-storage
                for s in &pl.singles {
                    if let Some(size) = s.storage.size_bits(ctx) {
                        if s.storage != Storage::Undefined && s.bit_offset.saturating_add(u128::from(bits)) > size {
                            return Err(Stop::Ill(id::COMPOSITE_PART_EXCEEDS_STORAGE));
                        }
                    }
                }
                let part = Part { bits, loc: pl };
                match stack.last_mut() {
                    // op.piece.pops-part-appends
                    Some(Entry::Location(l)) if l.is_incomplete_composite() => {
                        if let Storage::Composite { parts, .. } = &mut l.singles[0].storage {
                            parts.push(part);
                        }
                    }
                    // op.piece.pops-part-creates
                    _ => stack
                        .push(Entry::Location(Loc::one(Storage::Composite { parts: vec![part], complete: false }, 0))),
                }
            }
        }
        // composite.too-large, then the size budget, on the composite just
        // created or extended (now on top).
        if let Some(Entry::Location(l)) = stack.last() {
            if let Some(total) = l.singles[0].storage.size_bits(ctx) {
                let largest = ctx
                    .target
                    .address_spaces
                    .iter()
                    .map(|a| super::entry::memory_bits(a.address_bits))
                    .max()
                    .unwrap_or(u128::MAX);
                if total > largest {
                    return Err(Stop::Ill(id::COMPOSITE_TOO_LARGE));
                }
                if total > u128::from(ctx.budgets.size_bytes) * 8 {
                    return Err(Stop::Budget(BudgetKind::Size));
                }
            }
        }
        Ok(())
    }
}

/// Turning an implicit pointer value into a location needs the DIE's
/// `DW_AT_location` or `DW_AT_const_value`, which the context does not
/// carry yet.
fn ipv_to_location() -> Stop {
    Stop::Unsupported("converting an implicit pointer value to a location description (needs DIE lookup)".into())
}

/// Maps a `.debug_addr` failure to its rule (`ctx.cu-missing`,
/// `op.debug-addr.entry-missing`).
fn debug_addr_stop(e: ContextError) -> Stop {
    match e {
        ContextError::Missing("compilation unit") => Stop::Eval(id::CTX_CU_MISSING),
        ContextError::Missing(_) => Stop::Eval(id::OP_DEBUG_ADDR_ENTRY_MISSING),
        other => ctx_stop(other),
    }
}
