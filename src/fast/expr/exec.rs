//! The interpreter loop: executes a decoded [`Program`] on a [`Scratch`]
//! stack (hetero-2020 "DWARF Operation Expressions" and the operation
//! sections that follow it).

use super::arith;
use super::decode::{Insn, Kind, BAD_TARGET, END};
use super::machine::{mask, Ent, Loc, Scratch, Val, NONE};
use super::pending as R;
use super::Program;
use crate::context::{Context, ContextError, ResultKind};
use crate::outcome::{BaseType, BudgetKind, Outcome};
use crate::rules::RuleId;
use crate::target::Endian;

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
        let at = self.at;
        match self.fail {
            Fail::Ill(rule) => Outcome::IllFormed { rule, at },
            Fail::Eval(rule) => Outcome::EvalError { rule, at },
            Fail::Budget(budget) => Outcome::Budget { budget, at },
            Fail::Unsupported(what) => Outcome::Unsupported { what },
        }
    }
}

type Res<T> = Result<T, Fail>;

/// Evaluation state of one (possibly nested) operation expression.
pub struct Ev<'a> {
    /// The context.
    pub ctx: &'a Context,
    /// Stack entries below this index belong to an outer evaluation.
    pub base: usize,
    /// Nesting depth (0 = the expression being evaluated).
    pub depth: u32,
    /// Offset every failure is reported at (nested evaluations).
    pub at_override: Option<u64>,
    /// The generic type.
    pub gty: BaseType,
}

impl<'a> Ev<'a> {
    /// A top-level evaluation state.
    pub fn new(ctx: &'a Context) -> Self {
        Ev { ctx, base: 0, depth: 0, at_override: None, gty: ctx.generic_type() }
    }

    #[inline]
    fn gbits(&self) -> u32 {
        self.gty.bits
    }

    #[inline]
    fn generic(&self, v: u128) -> Val {
        Val { ty: self.gty, lo: mask(v, self.gty.bits), wide: NONE }
    }

    /// Runs `prog` on the stack above `self.base`; leaves the entries there.
    pub fn exec(&self, prog: &Program, s: &mut Scratch) -> Result<(), Stop> {
        let insns = &prog.insns[..];
        let mut pc = 0usize;
        while pc < insns.len() {
            let ins = &insns[pc];
            let stop = |fail| Stop { fail, at: Some(self.at_override.unwrap_or(u64::from(ins.off))) };
            s.steps += 1;
            if s.steps > self.ctx.budgets.steps {
                return Err(stop(Fail::Budget(BudgetKind::Steps)));
            }
            match self.step(prog, ins, s) {
                Ok(None) => pc += 1,
                Ok(Some(t)) => {
                    if t == END {
                        pc = insns.len();
                    } else {
                        pc = t as usize;
                    }
                }
                Err(f) => return Err(stop(f)),
            }
            if s.stack.len() - self.base > self.ctx.budgets.stack {
                return Err(stop(Fail::Budget(BudgetKind::Stack)));
            }
        }
        Ok(())
    }

    // ----- stack access -------------------------------------------------

    fn depth_avail(&self, s: &Scratch) -> usize {
        s.stack.len() - self.base
    }

    fn check_complete(&self, s: &Scratch, e: &Ent) -> Res<()> {
        if let Ent::Loc(Loc::Comp { idx, .. }) = e {
            if !s.comps[*idx as usize].complete {
                return Err(Fail::Ill(R::STACK_INCOMPLETE));
            }
        }
        Ok(())
    }

    /// The entry with index `i` (0 = top) for a stack operation.
    fn peek(&self, s: &Scratch, i: usize) -> Res<Ent> {
        if i >= self.depth_avail(s) {
            return Err(Fail::Ill(R::STACK_UNDERFLOW));
        }
        let e = s.stack[s.stack.len() - 1 - i];
        self.check_complete(s, &e)?;
        Ok(e)
    }

    fn pop(&self, s: &mut Scratch) -> Res<Ent> {
        if self.depth_avail(s) == 0 {
            return Err(Fail::Ill(R::STACK_UNDERFLOW));
        }
        Ok(s.stack.pop().unwrap_or(Ent::Loc(Loc::Undef)))
    }

    /// Pops an entry required to be a value (implicit conversion of a
    /// memory location in the default address space at a byte address).
    fn pop_val(&self, s: &mut Scratch) -> Res<Val> {
        let e = self.pop(s)?;
        self.to_val(s, e).ok_or(Fail::Ill(R::NEED_VALUE))
    }

    fn to_val(&self, s: &Scratch, e: Ent) -> Option<Val> {
        match e {
            Ent::Val(v) => Some(v),
            Ent::Loc(Loc::Mem { aspace: 0, bit }) if bit % 8 == 0 => Some(self.generic(bit / 8)),
            Ent::Loc(Loc::Comp { idx, .. }) if !s.comps[idx as usize].complete => None,
            Ent::Loc(_) => None,
        }
    }

    fn pop_integral(&self, s: &mut Scratch) -> Res<Val> {
        let v = self.pop_val(s)?;
        if !v.ty.is_integral() {
            return Err(Fail::Ill(R::NEED_INTEGRAL));
        }
        Ok(v)
    }

    /// Pops an entry required to be a location description (implicit
    /// conversion of a generic value to a default-space memory location).
    fn pop_loc(&self, s: &mut Scratch) -> Res<Loc> {
        let e = self.pop(s)?;
        self.to_loc(s, e).ok_or(Fail::Ill(R::NEED_LOC))
    }

    fn to_loc(&self, s: &Scratch, e: Ent) -> Option<Loc> {
        match e {
            Ent::Loc(Loc::Comp { idx, .. }) if !s.comps[idx as usize].complete => None,
            Ent::Loc(l) => Some(l),
            Ent::Val(v) if v.ty == self.gty => Some(Loc::Mem { aspace: 0, bit: v.lo * 8 }),
            Ent::Val(_) => None,
        }
    }

    #[inline]
    fn push(&self, s: &mut Scratch, e: Ent) {
        s.stack.push(e);
    }

    // ----- one operation ------------------------------------------------

    /// Executes one instruction; returns a branch target if control moves.
    fn step(&self, prog: &Program, ins: &Insn, s: &mut Scratch) -> Res<Option<u64>> {
        match ins.kind {
            Kind::Const => {
                let v = self.generic(u128::from(ins.a));
                self.push(s, Ent::Val(v));
            }
            Kind::Addr => {
                let a = mask(u128::from(ins.a), self.gbits());
                self.push(s, Ent::Loc(Loc::Mem { aspace: 0, bit: a * 8 }));
            }
            Kind::Addrx | Kind::Constx => {
                let a = self.ctx.debug_addr(ins.a).map_err(|e| match e {
                    ContextError::Missing("compilation unit") => Fail::Eval(R::NO_CU),
                    _ => Fail::Eval(R::NO_DEBUG_ADDR),
                })?;
                let a = mask(u128::from(a), self.gbits());
                let e = if ins.kind == Kind::Addrx {
                    Ent::Loc(Loc::Mem { aspace: 0, bit: a * 8 })
                } else {
                    Ent::Val(self.generic(a))
                };
                self.push(s, e);
            }
            Kind::Dup => {
                let e = self.peek(s, 0)?;
                self.push(s, e);
            }
            Kind::Drop => {
                self.peek(s, 0)?;
                s.stack.pop();
            }
            Kind::Over => {
                let e = self.peek(s, 1)?;
                self.push(s, e);
            }
            Kind::Pick => {
                let i = ins.a as usize;
                if i >= self.depth_avail(s) {
                    return Err(Fail::Ill(R::PICK_RANGE));
                }
                let e = self.peek(s, i)?;
                self.push(s, e);
            }
            Kind::Swap => {
                self.peek(s, 0)?;
                self.peek(s, 1)?;
                let n = s.stack.len();
                s.stack.swap(n - 1, n - 2);
            }
            Kind::Rot => {
                self.peek(s, 0)?;
                self.peek(s, 1)?;
                self.peek(s, 2)?;
                let n = s.stack.len();
                // Top becomes third; second becomes top; third becomes second.
                let top = s.stack[n - 1];
                s.stack[n - 1] = s.stack[n - 2];
                s.stack[n - 2] = s.stack[n - 3];
                s.stack[n - 3] = top;
            }
            Kind::Deref => {
                let l = self.pop_loc(s)?;
                let v = self.deref(s, &l, self.gty)?;
                self.push(s, Ent::Val(v));
            }
            Kind::DerefSize => {
                let l = self.pop_loc(s)?;
                let v = self.deref_size(s, &l, ins.a)?;
                self.push(s, Ent::Val(v));
            }
            Kind::DerefType => {
                let t = self.base_type(ins.b)?;
                if t.bytes() as u64 != ins.a {
                    return Err(Fail::Ill(R::DEREF_TYPE_SIZE));
                }
                let l = self.pop_loc(s)?;
                let v = self.deref(s, &l, t)?;
                self.push(s, Ent::Val(v));
            }
            Kind::Xderef | Kind::XderefSize | Kind::XderefType => {
                let t = if ins.kind == Kind::XderefType {
                    let t = self.base_type(ins.b)?;
                    if t.bytes() as u64 != ins.a {
                        return Err(Fail::Ill(R::DEREF_TYPE_SIZE));
                    }
                    Some(t)
                } else {
                    None
                };
                let a = self.pop_integral(s)?;
                let asp = self.pop_integral(s)?;
                let l = self.aspace_address(s, &asp, &a)?;
                let v = match (ins.kind, t) {
                    (Kind::XderefSize, _) => self.deref_size(s, &l, ins.a)?,
                    (_, Some(t)) => self.deref(s, &l, t)?,
                    _ => self.deref(s, &l, self.gty)?,
                };
                self.push(s, Ent::Val(v));
            }
            Kind::Abs | Kind::Neg | Kind::Not => {
                let v = self.pop_val(s)?;
                let r = arith::unary(self, s, ins.kind, v)?;
                self.push(s, Ent::Val(r));
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
                let b = self.pop_val(s)?;
                let a = self.pop_val(s)?;
                let r = arith::binary(self, s, ins.kind, a, b)?;
                self.push(s, Ent::Val(r));
            }
            Kind::PlusUconst => {
                let v = self.pop_val(s)?;
                let r = arith::plus_uconst(self, s, v, ins.a)?;
                self.push(s, Ent::Val(r));
            }
            Kind::Skip => {
                if ins.a == BAD_TARGET {
                    return Err(Fail::Ill(R::SKIP_TARGET));
                }
                return Ok(Some(ins.a));
            }
            Kind::Bra => {
                let v = self.pop_val(s)?;
                if !arith::is_zero(s, &v) {
                    if ins.a == BAD_TARGET {
                        return Err(Fail::Ill(R::BRANCH_TARGET));
                    }
                    return Ok(Some(ins.a));
                }
            }
            Kind::Reg => {
                self.push(s, Ent::Loc(Loc::Reg { regno: ins.a, bit: 0 }));
            }
            Kind::Breg => {
                let l = self.breg(s, ins.a, ins.b as i64)?;
                self.push(s, Ent::Loc(l));
            }
            Kind::Fbreg => {
                let l = self.fbreg(prog, ins, s)?;
                self.push(s, Ent::Loc(l));
            }
            Kind::Piece => self.piece(s, ins.a.saturating_mul(8), 0, true)?,
            Kind::BitPiece => self.piece(s, ins.a, ins.b, false)?,
            Kind::Nop => {}
            Kind::PushObjectAddress => {
                let o = self.ctx.object.as_ref().ok_or(Fail::Eval(R::NO_OBJECT))?;
                let e = s.import(o);
                self.push(s, e);
            }
            Kind::FormTlsAddress => {
                let v = self.pop_integral(s)?;
                let base = self.ctx.tls_base.ok_or(Fail::Eval(R::NO_TLS))?;
                let a = mask(u128::from(base).wrapping_add(v.lo), self.gbits());
                self.push(s, Ent::Loc(Loc::Mem { aspace: 0, bit: a * 8 }));
            }
            Kind::CallFrameCfa => {
                let cfa = self.ctx.cfa.ok_or(Fail::Eval(R::NO_CFA))?;
                let a = mask(u128::from(cfa), self.gbits());
                self.push(s, Ent::Loc(Loc::Mem { aspace: 0, bit: a * 8 }));
            }
            Kind::ImplicitValue => {
                let (st, len) = (ins.a as usize, ins.b as usize);
                let start = s.store(&prog.bytes[st..st + len]);
                self.push(s, Ent::Loc(Loc::Imp { start, len: len as u32, bit: 0 }));
            }
            Kind::StackValue => {
                let v = self.pop_val(s)?;
                let mut tmp = std::mem::take(&mut s.tmp);
                s.value_bytes(&v, &mut tmp);
                if v.ty.big_endian {
                    tmp.reverse();
                }
                let start = s.store(&tmp);
                s.tmp = tmp;
                self.push(s, Ent::Loc(Loc::Imp { start, len: v.ty.bytes() as u32, bit: 0 }));
            }
            Kind::ImplicitPointer => {
                self.push(s, Ent::Loc(Loc::ImpPtr { die: ins.a, disp: ins.b as i64, aspace: None, bit: 0 }));
            }
            Kind::ConstType => {
                let t = self.base_type(ins.a)?;
                if t.bytes() as u64 != u64::from(ins.c) {
                    return Err(Fail::Ill(R::TYPE_SIZE));
                }
                let blk = &prog.bytes[ins.b as usize..ins.b as usize + ins.c as usize];
                let v = self.val_from_memory_order(s, t, blk);
                self.push(s, Ent::Val(v));
            }
            Kind::RegvalType => {
                let t = self.base_type(ins.b)?;
                let v = self.deref(s, &Loc::Reg { regno: ins.a, bit: 0 }, t)?;
                self.push(s, Ent::Val(v));
            }
            Kind::Convert | Kind::Reinterpret => {
                let t = if ins.a == 0 { self.gty } else { self.base_type(ins.a)? };
                let v = self.pop_val(s)?;
                let r = if ins.kind == Kind::Convert {
                    arith::convert(self, s, v, t)?
                } else {
                    if t.bits != v.ty.bits {
                        return Err(Fail::Ill(R::REINTERPRET_SIZE));
                    }
                    Val { ty: t, ..v }
                };
                self.push(s, Ent::Val(r));
            }
            Kind::Unsupported => {
                return Err(Fail::Unsupported(crate::encoding::op::name_of(ins.op)));
            }
        }
        Ok(None)
    }

    // ----- helpers ------------------------------------------------------

    fn base_type(&self, die: u64) -> Res<BaseType> {
        self.ctx.base_type(die).map_err(|e| match e {
            ContextError::Missing("compilation unit") => Fail::Eval(R::NO_CU),
            _ => Fail::Ill(R::NO_BASE_TYPE),
        })
    }

    /// A value of `t` from bytes in the type's memory byte order.
    fn val_from_memory_order(&self, s: &mut Scratch, t: BaseType, b: &[u8]) -> Val {
        let n = t.bytes();
        if n <= 16 {
            let mut le = [0u8; 16];
            le[..n].copy_from_slice(&b[..n]);
            if t.big_endian {
                le[..n].reverse();
            }
            s.make_val(t, &le)
        } else {
            let mut le = b[..n].to_vec();
            if t.big_endian {
                le.reverse();
            }
            s.make_val(t, &le)
        }
    }

    /// `DW_OP_LLVM_form_aspace_address` as used by `DW_OP_xderef*`.
    fn aspace_address(&self, _s: &Scratch, asp: &Val, a: &Val) -> Res<Loc> {
        let asp_id = u64::try_from(asp.lo).map_err(|_| Fail::Ill(R::BAD_ASPACE))?;
        let space = self.ctx.target.address_space(asp_id).ok_or(Fail::Ill(R::BAD_ASPACE))?;
        let addr = mask(a.lo, space.address_bits);
        Ok(Loc::Mem { aspace: asp_id, bit: addr * 8 })
    }

    fn deref_size(&self, s: &mut Scratch, l: &Loc, size: u64) -> Res<Val> {
        let g = self.gbits();
        let ts = (size.saturating_mul(8)).min(u64::from(g)) as u32;
        let t = if ts < g { BaseType::ate(crate::encoding::ate::UNSIGNED, ts, self.gty.big_endian) } else { self.gty };
        let v = self.deref(s, l, t)?;
        Ok(self.generic(v.lo))
    }

    /// Retrieves `t.bits` bits from `l` and makes a value of type `t`.
    pub fn deref(&self, s: &mut Scratch, l: &Loc, t: BaseType) -> Res<Val> {
        let n = t.bytes();
        if u64::from(t.bits) > self.ctx.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        let mut buf = std::mem::take(&mut s.tmp);
        buf.clear();
        buf.resize(n, 0);
        let r = self.read_bits(s, l, 0, u64::from(t.bits), &mut buf, 0);
        let out = r.map(|()| self.val_from_memory_order(s, t, &buf));
        s.tmp = buf;
        out
    }

    /// Copies `n` bits starting `extra` bits after `l`'s position into
    /// `dst` at bit `dst_bit` (storage order: bit k of byte k/8).
    fn read_bits(&self, s: &mut Scratch, l: &Loc, extra: u64, n: u64, dst: &mut [u8], dst_bit: u64) -> Res<()> {
        if n == 0 {
            return Ok(());
        }
        match *l {
            Loc::Undef => Err(Fail::Eval(R::DEREF_UNDEFINED)),
            Loc::Mem { aspace, bit } => {
                let abits = self.ctx.target.address_space(aspace).map(|a| a.address_bits).unwrap_or(64);
                let size_bits: u128 = 1u128 << (abits + 3);
                let start = bit.checked_add(u128::from(extra)).ok_or(Fail::Eval(R::DEREF_RANGE))?;
                if start.checked_add(u128::from(n)).is_none_or(|e| e > size_bits) {
                    return Err(Fail::Eval(R::DEREF_RANGE));
                }
                let first = (start / 8) as u64;
                let sub = (start % 8) as u64;
                let count = (sub + n).div_ceil(8) as usize;
                let mut tmp = [0u8; 64];
                let mut big;
                let buf: &mut [u8] = if count <= 64 {
                    &mut tmp[..count]
                } else {
                    big = vec![0u8; count];
                    &mut big[..]
                };
                self.ctx.read_memory(aspace, first, buf).map_err(|_| Fail::Eval(R::DEREF_MEMORY))?;
                copy_bits(buf, sub, dst, dst_bit, n);
                Ok(())
            }
            Loc::Reg { regno, bit } => {
                let reg = self.ctx.target.register(regno).ok_or(Fail::Eval(R::NO_REGISTER))?;
                let start = bit.checked_add(extra).ok_or(Fail::Eval(R::DEREF_RANGE))?;
                if start.checked_add(n).is_none_or(|e| e > u64::from(reg.bits)) {
                    return Err(Fail::Eval(R::DEREF_RANGE));
                }
                let first = (start / 8) as usize;
                let sub = start % 8;
                let count = (sub + n).div_ceil(8) as usize;
                let mut tmp = [0u8; 64];
                let mut big;
                let buf: &mut [u8] = if count <= 64 {
                    &mut tmp[..count]
                } else {
                    big = vec![0u8; count];
                    &mut big[..]
                };
                self.ctx.read_register(regno, first, buf).map_err(|_| Fail::Eval(R::REGISTER_UNAVAILABLE))?;
                copy_bits(buf, sub, dst, dst_bit, n);
                Ok(())
            }
            Loc::Imp { start, len, bit } => {
                let st = bit.checked_add(extra).ok_or(Fail::Eval(R::DEREF_RANGE))?;
                if st.checked_add(n).is_none_or(|e| e > u64::from(len) * 8) {
                    return Err(Fail::Eval(R::DEREF_RANGE));
                }
                let src = &s.bytes[start as usize..(start + len) as usize];
                copy_bits(src, st, dst, dst_bit, n);
                Ok(())
            }
            Loc::ImpPtr { .. } => Err(Fail::Eval(R::IMPLICIT_POINTER_ACCESS)),
            Loc::Multi { start, .. } => {
                let first = s.multi[start as usize];
                self.read_bits(s, &first, extra, n, dst, dst_bit)
            }
            Loc::Comp { idx, bit } => {
                let c = s.comps[idx as usize];
                let st = bit.checked_add(extra).ok_or(Fail::Eval(R::DEREF_RANGE))?;
                if st.checked_add(n).is_none_or(|e| e > c.total_bits) {
                    return Err(Fail::Eval(R::DEREF_RANGE));
                }
                let end = st + n;
                let mut pos = 0u64;
                let mut p = c.first;
                while p != NONE && pos < end {
                    let part = s.parts[p as usize];
                    let pend = pos + part.bits;
                    let lo = pos.max(st);
                    let hi = pend.min(end);
                    if lo < hi {
                        self.read_bits(s, &part.loc, lo - pos, hi - lo, dst, dst_bit + (lo - st))?;
                    }
                    pos = pend;
                    p = part.next;
                }
                Ok(())
            }
        }
    }

    /// Reads register `regno` as an unsigned address-sized value
    /// (`DW_OP_regval_type R, <unsigned S-bit type>` of `DW_OP_breg*`).
    fn reg_address(&self, s: &mut Scratch, regno: u64) -> Res<u128> {
        let t = BaseType::ate(crate::encoding::ate::UNSIGNED, self.gbits(), self.gty.big_endian);
        let v = self.deref(s, &Loc::Reg { regno, bit: 0 }, t)?;
        Ok(v.lo)
    }

    fn breg(&self, s: &mut Scratch, regno: u64, disp: i64) -> Res<Loc> {
        let r = self.reg_address(s, regno)?;
        let a = mask(r.wrapping_add(disp as i128 as u128), self.gbits());
        Ok(Loc::Mem { aspace: 0, bit: a * 8 })
    }

    fn fbreg(&self, prog: &Program, ins: &Insn, s: &mut Scratch) -> Res<Loc> {
        let _ = prog;
        let fb = self.ctx.frame_base.as_ref().ok_or(Fail::Eval(R::NO_FRAME_BASE))?;
        if self.depth + 1 > self.ctx.budgets.depth {
            return Err(Fail::Budget(BudgetKind::Depth));
        }
        // Decode (or reuse) the frame base program.
        let fbp = match s.frame_base.take() {
            Some(b) if b.0 == *fb => b,
            _ => Box::new((fb.clone(), Program::compile(fb, self.ctx))),
        };
        let at = self.at_override.unwrap_or(u64::from(ins.off));
        let inner = Ev {
            ctx: self.ctx,
            base: s.stack.len(),
            depth: self.depth + 1,
            at_override: Some(at),
            gty: self.gty,
        };
        let r = inner.nested(&fbp.1, s);
        s.frame_base = Some(fbp);
        let l = r?;
        let disp = ins.b as i64;
        let base = match l {
            Loc::Mem { aspace, bit } => Loc::Mem { aspace, bit },
            Loc::Reg { regno, bit: 0 } => {
                let a = self.reg_address(s, regno)?;
                Loc::Mem { aspace: 0, bit: a * 8 }
            }
            _ => return Err(Fail::Eval(R::FRAME_BASE_KIND)),
        };
        match base {
            Loc::Mem { aspace, bit } => {
                let nb = (bit as i128).wrapping_add(i128::from(disp) * 8);
                if nb < 0 {
                    return Err(Fail::Eval(R::DEREF_RANGE));
                }
                Ok(Loc::Mem { aspace, bit: nb as u128 })
            }
            other => Ok(other),
        }
    }

    /// Evaluates a nested expression with result kind "location" on a
    /// fresh stack region; returns its location and pops the region.
    fn nested(&self, prog: &Program, s: &mut Scratch) -> Res<Loc> {
        if let Some(e) = &prog.error {
            return Err(Fail::Ill(e.rule.clone()));
        }
        let r = self.exec(prog, s);
        let out = match r {
            Err(stop) => Err(stop.fail),
            Ok(()) => {
                let top = if s.stack.len() > self.base { s.stack.last().copied() } else { None };
                match top {
                    None => Ok(Loc::Undef),
                    Some(e) => {
                        complete_top(s, &e);
                        self.to_loc(s, e).ok_or(Fail::Ill(R::RESULT_NOT_LOC))
                    }
                }
            }
        };
        s.stack.truncate(self.base);
        out
    }

    /// `DW_OP_piece` / `DW_OP_bit_piece` (hetero-2020 "Composite Location
    /// Description Operations"): `bits` part size, `offset` bit displacement.
    fn piece(&self, s: &mut Scratch, bits: u64, offset: u64, _bytes: bool) -> Res<()> {
        if bits > self.ctx.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        let undef_part = Loc::Undef;
        let top = if self.depth_avail(s) > 0 { s.stack.last().copied() } else { None };
        match top {
            None => {
                let idx = s.new_comp();
                self.add_part(s, idx, bits, undef_part)?;
                self.push(s, Ent::Loc(Loc::Comp { idx, bit: 0 }));
            }
            Some(Ent::Loc(Loc::Comp { idx, .. })) if !s.comps[idx as usize].complete => {
                self.add_part(s, idx, bits, undef_part)?;
            }
            Some(e) => {
                let pl = self.to_loc(s, e).ok_or(Fail::Ill(R::PIECE_NOT_LOC))?;
                s.stack.pop();
                let pl = offset_loc(pl, offset)?;
                let next = if self.depth_avail(s) > 0 { s.stack.last().copied() } else { None };
                match next {
                    Some(Ent::Loc(Loc::Comp { idx, .. })) if !s.comps[idx as usize].complete => {
                        self.add_part(s, idx, bits, pl)?;
                    }
                    _ => {
                        let idx = s.new_comp();
                        self.add_part(s, idx, bits, pl)?;
                        self.push(s, Ent::Loc(Loc::Comp { idx, bit: 0 }));
                    }
                }
            }
        }
        Ok(())
    }

    fn add_part(&self, s: &mut Scratch, idx: u32, bits: u64, loc: Loc) -> Res<()> {
        let total = s.comps[idx as usize].total_bits.saturating_add(bits);
        if total > self.ctx.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        s.append_part(idx, bits, loc);
        Ok(())
    }

    /// Converts the final stack into the outcome (hetero-2020 "DWARF
    /// Operation Expressions", result of the evaluation).
    pub fn finish(&self, s: &mut Scratch) -> Outcome {
        let top = if s.stack.len() > self.base { s.stack.last().copied() } else { None };
        if let Some(e) = &top {
            complete_top(s, e);
        }
        match (self.ctx.result_kind, top) {
            (Some(ResultKind::Value), None) => Outcome::IllFormed { rule: R::RESULT_NOT_VALUE, at: None },
            (_, None) => Outcome::Location(s.export_loc(&Loc::Undef)),
            (Some(ResultKind::Location), Some(e)) => match self.to_loc(s, e) {
                Some(l) => Outcome::Location(s.export_loc(&l)),
                None => Outcome::IllFormed { rule: R::RESULT_NOT_LOC, at: None },
            },
            (Some(ResultKind::Value), Some(e)) => match self.to_val(s, e) {
                Some(v) => Outcome::Value(s.export_val(&v)),
                None => Outcome::IllFormed { rule: R::RESULT_NOT_VALUE, at: None },
            },
            (None, Some(Ent::Val(v))) => Outcome::Value(s.export_val(&v)),
            (None, Some(Ent::Loc(l))) => Outcome::Location(s.export_loc(&l)),
        }
    }
}

/// An incomplete composite left on top at the end of an evaluation becomes
/// complete (hetero-2020 "Composite Location Description Operations").
fn complete_top(s: &mut Scratch, e: &Ent) {
    if let Ent::Loc(Loc::Comp { idx, .. }) = e {
        s.comps[*idx as usize].complete = true;
    }
}

/// `l` moved `bits` bits further (as `DW_OP_constu B; DW_OP_LLVM_bit_offset`).
fn offset_loc(l: Loc, bits: u64) -> Res<Loc> {
    if bits == 0 {
        return Ok(l);
    }
    Ok(match l {
        Loc::Undef => Loc::Undef,
        Loc::Mem { aspace, bit } => Loc::Mem { aspace, bit: bit.wrapping_add(u128::from(bits)) },
        Loc::Reg { regno, bit } => Loc::Reg { regno, bit: bit.wrapping_add(bits) },
        Loc::Imp { start, len, bit } => Loc::Imp { start, len, bit: bit.wrapping_add(bits) },
        Loc::ImpPtr { die, disp, aspace, bit } => Loc::ImpPtr { die, disp, aspace, bit: bit.wrapping_add(bits) },
        Loc::Comp { idx, bit } => Loc::Comp { idx, bit: bit.wrapping_add(bits) },
        Loc::Multi { .. } => l,
    })
}

/// Copies `n` bits from `src` at bit `sb` to `dst` at bit `db`
/// (bit k of a buffer is bit k % 8 of byte k / 8).
pub fn copy_bits(src: &[u8], sb: u64, dst: &mut [u8], db: u64, n: u64) {
    if sb.is_multiple_of(8) && db.is_multiple_of(8) {
        let whole = (n / 8) as usize;
        let (s0, d0) = ((sb / 8) as usize, (db / 8) as usize);
        dst[d0..d0 + whole].copy_from_slice(&src[s0..s0 + whole]);
        for k in (whole as u64 * 8)..n {
            set_bit(dst, db + k, get_bit(src, sb + k));
        }
        return;
    }
    for k in 0..n {
        set_bit(dst, db + k, get_bit(src, sb + k));
    }
}

#[inline]
fn get_bit(b: &[u8], k: u64) -> bool {
    b[(k / 8) as usize] >> (k % 8) & 1 == 1
}

#[inline]
fn set_bit(b: &mut [u8], k: u64, v: bool) {
    let m = 1u8 << (k % 8);
    let byte = &mut b[(k / 8) as usize];
    if v {
        *byte |= m;
    } else {
        *byte &= !m;
    }
}

#[allow(dead_code)]
fn is_big(ctx: &Context) -> bool {
    ctx.target.endian == Endian::Big
}
