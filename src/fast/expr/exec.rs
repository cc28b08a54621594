//! The interpreter loop: executes a decoded [`Program`] on a [`Scratch`]
//! stack (hetero-2020 "DWARF Operation Expressions" and the operation
//! sections that follow it).

use super::arith;
use super::decode::{Insn, Kind, BAD_TARGET, END, OUT_OF_RANGE};
use super::machine::{mask, Ent, Ipv, Loc, Scratch, Val, NONE};
use super::Program;
use crate::context::{Context, ContextError, ResultKind};
use crate::encoding::ate;
use crate::outcome::{BaseType, BudgetKind, Outcome};
use crate::rules::id as R;
use crate::rules::RuleId;

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
        fail_outcome(self.fail, self.at)
    }
}

fn fail_outcome(fail: Fail, at: Option<u64>) -> Outcome {
    match fail {
        Fail::Ill(rule) => Outcome::IllFormed { rule, at },
        Fail::Eval(rule) => Outcome::EvalError { rule, at },
        Fail::Budget(budget) => Outcome::Budget { budget, at },
        Fail::Unsupported(what) => Outcome::Unsupported { what },
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

/// Tracks reads of implicit pointer storage during one `DW_OP_deref*`
/// (rules `op.implicit-pointer.deref-whole`, `op.implicit-pointer.partial-read`).
#[derive(Default)]
struct IpTrack {
    ip: Option<Ipv>,
    consistent: bool,
    other: bool,
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
    pub(super) fn generic(&self, v: u128) -> Val {
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
                Ok(Some(t)) => pc = if t == END { insns.len() } else { t as usize },
                Err(f) => return Err(stop(f)),
            }
            if s.stack.len() - self.base > self.ctx.budgets.stack {
                return Err(stop(Fail::Budget(BudgetKind::Stack)));
            }
        }
        Ok(())
    }

    // ----- stack access -------------------------------------------------

    #[inline]
    fn avail(&self, s: &Scratch) -> usize {
        s.stack.len() - self.base
    }

    /// Fails with `expr.stack.underflow` unless `n` entries are available.
    #[inline]
    fn need(&self, s: &Scratch, n: usize) -> Res<()> {
        if self.avail(s) < n {
            return Err(Fail::Ill(R::EXPR_STACK_UNDERFLOW));
        }
        Ok(())
    }

    fn is_incomplete(s: &Scratch, e: &Ent) -> bool {
        matches!(e, Ent::Loc(Loc::Comp { idx, .. }) if !s.comps[*idx as usize].complete)
    }

    /// The entry with index `i` (0 = top) touched by a stack operation
    /// (rule `op.stack.incomplete-composite`).
    fn touch(&self, s: &Scratch, i: usize) -> Res<Ent> {
        let e = s.stack[s.stack.len() - 1 - i];
        if Self::is_incomplete(s, &e) {
            return Err(Fail::Ill(R::OP_STACK_INCOMPLETE_COMPOSITE));
        }
        Ok(e)
    }

    #[inline]
    fn pop_raw(&self, s: &mut Scratch) -> Ent {
        s.stack.pop().unwrap_or(Ent::Loc(Loc::Undef))
    }

    /// Pops an entry required to be a value.
    fn pop_val(&self, s: &mut Scratch) -> Res<Val> {
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
            Ent::Loc(Loc::Mem { aspace: 0, bit }) if bit % 8 == 0 => Ok(self.generic(bit / 8)),
            Ent::Loc(_) => Err(Fail::Ill(R::LOC_CONVERT_LOCATION_NOT_VALUE)),
        }
    }

    fn pop_integral(&self, s: &mut Scratch, rule: RuleId) -> Res<Val> {
        let v = self.pop_val(s)?;
        if !v.ty.is_integral() {
            return Err(Fail::Ill(rule));
        }
        Ok(v)
    }

    /// Pops an entry required to be a location description.
    fn pop_loc(&self, s: &mut Scratch) -> Res<Loc> {
        self.need(s, 1)?;
        let e = self.pop_raw(s);
        self.to_loc(s, e)
    }

    /// Entry `e` where a location description is required (rules
    /// `loc.convert.generic-value-to-memory`, `loc.convert.value-not-generic`).
    pub(super) fn to_loc(&self, s: &Scratch, e: Ent) -> Res<Loc> {
        match e {
            Ent::Loc(Loc::Comp { idx, .. }) if !s.comps[idx as usize].complete => {
                Err(Fail::Ill(R::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION))
            }
            Ent::Loc(l) => Ok(l),
            Ent::Val(v) if v.ty == self.gty => Ok(Loc::Mem { aspace: 0, bit: v.lo * 8 }),
            Ent::Val(_) => Err(Fail::Ill(R::LOC_CONVERT_VALUE_NOT_GENERIC)),
            // Converting an implicit pointer value needs the location of its
            // DIE, which the evaluation context does not describe.
            Ent::Ipv(_) => Err(Fail::Unsupported("implicit pointer value used as a location".into())),
        }
    }

    #[inline]
    fn push(&self, s: &mut Scratch, e: Ent) {
        s.stack.push(e);
    }

    #[inline]
    fn push_mem(&self, s: &mut Scratch, addr: u128) {
        let a = mask(addr, self.gbits());
        s.stack.push(Ent::Loc(Loc::Mem { aspace: 0, bit: a * 8 }));
    }

    // ----- one operation ------------------------------------------------

    /// Executes one instruction; returns a branch target if control moves.
    fn step(&self, prog: &Program, ins: &Insn, s: &mut Scratch) -> Res<Option<u64>> {
        match ins.kind {
            Kind::Const => {
                let v = self.generic(u128::from(ins.a));
                self.push(s, Ent::Val(v));
            }
            Kind::Addr => self.push_mem(s, u128::from(ins.a)),
            Kind::Addrx | Kind::Constx => {
                let a = self.ctx.debug_addr(ins.a).map_err(|e| match e {
                    ContextError::Missing("compilation unit") => Fail::Eval(R::CTX_CU_MISSING),
                    _ => Fail::Eval(R::OP_DEBUG_ADDR_ENTRY_MISSING),
                })?;
                if ins.kind == Kind::Addrx {
                    self.push_mem(s, u128::from(a));
                } else {
                    let v = self.generic(u128::from(a));
                    self.push(s, Ent::Val(v));
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
                s.stack.pop();
            }
            Kind::Over => {
                self.need(s, 2)?;
                let e = self.touch(s, 1)?;
                self.push(s, e);
            }
            Kind::Pick => {
                let i = ins.a as usize;
                if i >= self.avail(s) {
                    return Err(Fail::Ill(R::OP_PICK_INDEX_OUT_OF_RANGE));
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
                let l = self.pop_loc(s)?;
                let e = self.deref(s, &l, self.gty)?;
                self.push(s, e);
            }
            Kind::DerefSize => {
                let l = self.pop_loc(s)?;
                let e = self.deref_size(s, &l, ins.a)?;
                self.push(s, e);
            }
            Kind::DerefType => {
                let t = self.base_type(ins.b)?;
                if t.bytes() as u64 != ins.a {
                    return Err(Fail::Ill(R::OP_DEREF_TYPE_SIZE_MISMATCH));
                }
                let l = self.pop_loc(s)?;
                let e = self.deref(s, &l, t)?;
                self.push(s, e);
            }
            Kind::Xderef | Kind::XderefSize | Kind::XderefType => {
                let t = if ins.kind == Kind::XderefType {
                    let t = self.base_type(ins.b)?;
                    if t.bytes() as u64 != ins.a {
                        return Err(Fail::Ill(R::OP_DEREF_TYPE_SIZE_MISMATCH));
                    }
                    t
                } else {
                    self.gty
                };
                self.need(s, 2)?;
                let a = self.pop_integral(s, R::OP_XDEREF_REQUIRES_INTEGRAL)?;
                let asp = self.pop_integral(s, R::OP_XDEREF_REQUIRES_INTEGRAL)?;
                let l = self.aspace_address(s, &asp, &a)?;
                let e =
                    if ins.kind == Kind::XderefSize { self.deref_size(s, &l, ins.a)? } else { self.deref(s, &l, t)? };
                self.push(s, e);
            }
            Kind::Abs | Kind::Neg | Kind::Not => {
                let v = self.pop_val(s)?;
                let r = arith::unary(s, ins.kind, v)?;
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
                self.need(s, 2)?;
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
            Kind::Skip => return self.branch(ins.a, R::OP_SKIP_TARGET_OUT_OF_RANGE, R::OP_SKIP_TARGET_NOT_OP_START),
            Kind::Bra => {
                let v = self.pop_val(s)?;
                if !arith::is_zero(s, &v) {
                    return self.branch(ins.a, R::OP_BRA_TARGET_OUT_OF_RANGE, R::OP_BRA_TARGET_NOT_OP_START);
                }
            }
            Kind::Reg => self.push(s, Ent::Loc(Loc::Reg { regno: ins.a, bit: 0 })),
            Kind::Breg => {
                let r = self.reg_address(s, ins.a)?;
                self.push_mem(s, r.wrapping_add(ins.b as i64 as i128 as u128));
            }
            Kind::Fbreg => {
                let l = self.fbreg(ins, s)?;
                self.push(s, Ent::Loc(l));
            }
            Kind::Piece => self.piece(s, ins.a.saturating_mul(8), None)?,
            Kind::BitPiece => self.piece(s, ins.a, Some(ins.b))?,
            Kind::Nop => {}
            Kind::PushObjectAddress => {
                let o = self.ctx.object.as_ref().ok_or(Fail::Eval(R::CTX_OBJECT_MISSING))?;
                let e = s.import(o);
                self.push(s, e);
            }
            Kind::FormTlsAddress => {
                let v = self.pop_integral(s, R::OP_FORM_TLS_ADDRESS_REQUIRES_INTEGRAL)?;
                let base = self.ctx.tls_base.ok_or(Fail::Eval(R::CTX_TLS_BASE_MISSING))?;
                let ta = s.low128(&v);
                self.push_mem(s, u128::from(base).wrapping_add(ta));
            }
            Kind::CallFrameCfa => {
                let cfa = self.ctx.cfa.ok_or(Fail::Eval(R::CTX_CFA_MISSING))?;
                self.push_mem(s, u128::from(cfa));
            }
            Kind::ImplicitValue => {
                let (st, len) = (ins.a as usize, ins.b as usize);
                if ins.b > self.ctx.budgets.size_bytes {
                    return Err(Fail::Budget(BudgetKind::Size));
                }
                let start = s.store(&prog.bytes[st..st + len]);
                self.push(s, Ent::Loc(Loc::Imp { start, len: len as u32, bit: 0 }));
            }
            Kind::StackValue => {
                self.need(s, 1)?;
                let e = self.pop_raw(s);
                if let Ent::Ipv(p) = e {
                    self.push(s, Ent::Loc(Loc::ImpPtr { die: p.die, disp: p.disp, aspace: p.aspace, bit: 0 }));
                    return Ok(None);
                }
                let v = self.to_val(s, e)?;
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
                    return Err(Fail::Ill(R::OP_CONST_TYPE_SIZE_MISMATCH));
                }
                let blk = &prog.bytes[ins.b as usize..ins.b as usize + ins.c as usize];
                let v = self.val_from_memory_order(s, t, blk);
                self.push(s, Ent::Val(v));
            }
            Kind::RegvalType => {
                let t = self.base_type(ins.b)?;
                let e = self.deref(s, &Loc::Reg { regno: ins.a, bit: 0 }, t)?;
                self.push(s, e);
            }
            Kind::Convert | Kind::Reinterpret => {
                let t = self.base_type(ins.a)?;
                self.need(s, 1)?;
                let v = self.pop_val(s)?;
                let r = if ins.kind == Kind::Convert {
                    arith::convert(s, v, t)?
                } else {
                    if t.bits != v.ty.bits {
                        return Err(Fail::Ill(R::OP_REINTERPRET_SIZE_MISMATCH));
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

    fn branch(&self, target: u64, out_of_range: RuleId, not_start: RuleId) -> Res<Option<u64>> {
        match target {
            OUT_OF_RANGE => Err(Fail::Ill(out_of_range)),
            BAD_TARGET => Err(Fail::Ill(not_start)),
            t => Ok(Some(t)),
        }
    }

    /// The base type at unit offset `die`; 0 is the generic type (rule
    /// `op.typed.die-zero-generic`).
    fn base_type(&self, die: u64) -> Res<BaseType> {
        if die == 0 {
            return Ok(self.gty);
        }
        self.ctx.base_type(die).map_err(|e| match e {
            ContextError::Missing("compilation unit") => Fail::Eval(R::CTX_CU_MISSING),
            _ => Fail::Ill(R::OP_TYPED_NOT_BASE_TYPE),
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

    /// The memory location an xderef operation reads (rules
    /// `op.xderef.address-space`, `op.xderef.unknown-address-space`).
    fn aspace_address(&self, s: &Scratch, asp: &Val, a: &Val) -> Res<Loc> {
        let asp_id = s.as_u64(asp).ok_or(Fail::Ill(R::OP_XDEREF_UNKNOWN_ADDRESS_SPACE))?;
        let space = self.ctx.target.address_space(asp_id).ok_or(Fail::Ill(R::OP_XDEREF_UNKNOWN_ADDRESS_SPACE))?;
        let addr = mask(s.low128(a), space.address_bits);
        Ok(Loc::Mem { aspace: asp_id, bit: addr * 8 })
    }

    /// `DW_OP_deref_size` (rules `op.deref-size.zero-extends`, `op.deref-size.zero`).
    fn deref_size(&self, s: &mut Scratch, l: &Loc, size: u64) -> Res<Ent> {
        if size == 0 {
            return Ok(Ent::Val(self.generic(0)));
        }
        let g = self.gbits();
        let ts = (size.saturating_mul(8)).min(u64::from(g)) as u32;
        let t = if ts < g { BaseType::ate(ate::UNSIGNED, ts, self.gty.big_endian) } else { self.gty };
        match self.deref(s, l, t)? {
            Ent::Val(v) => Ok(Ent::Val(self.generic(v.lo))),
            other => Ok(other),
        }
    }

    /// Retrieves `t.bits` bits from `l`: a value of type `t`, or an
    /// implicit pointer value (rule `op.deref-type.reads-location`).
    pub fn deref(&self, s: &mut Scratch, l: &Loc, t: BaseType) -> Res<Ent> {
        let n = t.bytes();
        if u64::from(t.bits) > self.ctx.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        if let Some(r) = self.deref_fast(l, t) {
            return r;
        }
        let mut buf = std::mem::take(&mut s.tmp);
        buf.clear();
        buf.resize(n, 0);
        let mut track = IpTrack::default();
        let r = self.read_bits(s, l, 0, u64::from(t.bits), &mut buf, 0, &mut track);
        let out = r.and_then(|()| match track.ip {
            None => Ok(Ent::Val(self.val_from_memory_order(s, t, &buf))),
            Some(ip) => {
                let whole = self.ip_bits(&ip);
                if track.consistent && !track.other && u64::from(t.bits) == whole {
                    Ok(Ent::Ipv(ip))
                } else {
                    Err(Fail::Eval(R::OP_IMPLICIT_POINTER_PARTIAL_READ))
                }
            }
        });
        s.tmp = buf;
        out
    }

    /// The common reads without the general bit machinery: whole bytes (at
    /// most 16) from a byte-aligned memory or register location. `None`
    /// when the general path must be taken. Same checks, same order.
    #[inline]
    fn deref_fast(&self, l: &Loc, t: BaseType) -> Option<Res<Ent>> {
        if t.bits == 0 || t.bits > 128 || !t.bits.is_multiple_of(8) {
            return None;
        }
        let n = (t.bits / 8) as usize;
        let mut b = [0u8; 16];
        let r = match *l {
            Loc::Mem { aspace, bit } if bit % 8 == 0 => {
                let size_bits = self.storage_bits_mem(aspace);
                if bit.checked_add(u128::from(t.bits)).is_none_or(|e| e > size_bits) {
                    return Some(Err(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END)));
                }
                self.ctx
                    .read_memory(aspace, (bit / 8) as u64, &mut b[..n])
                    .map_err(|_| Fail::Eval(R::OP_DEREF_MEMORY_UNREADABLE))
            }
            Loc::Reg { regno, bit } if bit % 8 == 0 => {
                let Some(reg) = self.ctx.target.register(regno) else {
                    return Some(Err(Fail::Eval(R::REG_UNKNOWN_REGISTER_READ)));
                };
                if bit.checked_add(u64::from(t.bits)).is_none_or(|e| e > u64::from(reg.bits)) {
                    return Some(Err(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END)));
                }
                self.ctx.read_register(regno, (bit / 8) as usize, &mut b[..n]).map_err(|e| match e {
                    ContextError::NoSuchRegister(_) => Fail::Eval(R::REG_UNKNOWN_REGISTER_READ),
                    _ => Fail::Eval(R::CTX_REGISTER_UNAVAILABLE),
                })
            }
            _ => return None,
        };
        Some(r.map(|()| {
            if t.big_endian {
                b[..n].reverse();
            }
            Ent::Val(Val { ty: t, lo: u128::from_le_bytes(b), wide: NONE })
        }))
    }

    /// Size in **bits** of the memory storage of address space `aspace`.
    #[inline]
    fn storage_bits_mem(&self, aspace: u64) -> u128 {
        let abits = if aspace == 0 {
            self.gbits()
        } else {
            self.ctx.target.address_space(aspace).map(|a| a.address_bits).unwrap_or(64)
        };
        1u128 << (abits + 3)
    }

    /// Size in **bits** of implicit pointer storage: the address size of its space.
    fn ip_bits(&self, ip: &Ipv) -> u64 {
        match ip.aspace {
            None => u64::from(self.gbits()),
            Some(a) => u64::from(self.ctx.target.address_space(a).map(|x| x.address_bits).unwrap_or(self.gbits())),
        }
    }

    /// Size in **bits** of the storage of a non-composite single location
    /// (`None`: unbounded/undefined).
    fn storage_bits(&self, s: &Scratch, l: &Loc) -> Option<u128> {
        match *l {
            Loc::Undef | Loc::Multi { .. } => None,
            Loc::Mem { aspace, .. } => Some(self.storage_bits_mem(aspace)),
            Loc::Reg { regno, .. } => self.ctx.target.register(regno).map(|r| u128::from(r.bits)),
            Loc::Imp { len, .. } => Some(u128::from(len) * 8),
            Loc::ImpPtr { die, disp, aspace, .. } => Some(u128::from(self.ip_bits(&Ipv { die, disp, aspace }))),
            Loc::Comp { idx, .. } => Some(u128::from(s.comps[idx as usize].total_bits)),
        }
    }

    /// Copies `n` bits starting `extra` bits after `l`'s position into
    /// `dst` at bit `dst_bit` (storage order: bit k of byte k/8).
    #[allow(clippy::too_many_arguments)]
    fn read_bits(
        &self,
        s: &mut Scratch,
        l: &Loc,
        extra: u64,
        n: u64,
        dst: &mut [u8],
        dst_bit: u64,
        track: &mut IpTrack,
    ) -> Res<()> {
        if n == 0 {
            return Ok(());
        }
        match *l {
            Loc::Undef => Err(Fail::Eval(R::OP_DEREF_UNDEFINED_STORAGE)),
            Loc::Mem { aspace, bit } => {
                track.other = true;
                let size_bits = self.storage_bits(s, l).unwrap_or(u128::MAX);
                let start = bit.checked_add(u128::from(extra)).ok_or(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END))?;
                if start.checked_add(u128::from(n)).is_none_or(|e| e > size_bits) {
                    return Err(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END));
                }
                let first = (start / 8) as u64;
                let sub = (start % 8) as u64;
                let count = (sub + n).div_ceil(8) as usize;
                with_buf(count, |buf| {
                    self.ctx.read_memory(aspace, first, buf).map_err(|_| Fail::Eval(R::OP_DEREF_MEMORY_UNREADABLE))?;
                    copy_bits(buf, sub, dst, dst_bit, n);
                    Ok(())
                })
            }
            Loc::Reg { regno, bit } => {
                track.other = true;
                let reg = self.ctx.target.register(regno).ok_or(Fail::Eval(R::REG_UNKNOWN_REGISTER_READ))?;
                let start = bit.checked_add(extra).ok_or(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END))?;
                if start.checked_add(n).is_none_or(|e| e > u64::from(reg.bits)) {
                    return Err(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END));
                }
                let first = (start / 8) as usize;
                let sub = start % 8;
                let count = (sub + n).div_ceil(8) as usize;
                with_buf(count, |buf| {
                    self.ctx.read_register(regno, first, buf).map_err(|e| match e {
                        ContextError::NoSuchRegister(_) => Fail::Eval(R::REG_UNKNOWN_REGISTER_READ),
                        _ => Fail::Eval(R::CTX_REGISTER_UNAVAILABLE),
                    })?;
                    copy_bits(buf, sub, dst, dst_bit, n);
                    Ok(())
                })
            }
            Loc::Imp { start, len, bit } => {
                track.other = true;
                let st = bit.checked_add(extra).ok_or(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END))?;
                if st.checked_add(n).is_none_or(|e| e > u64::from(len) * 8) {
                    return Err(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END));
                }
                let src = &s.bytes[start as usize..(start + len) as usize];
                copy_bits(src, st, dst, dst_bit, n);
                Ok(())
            }
            Loc::ImpPtr { die, disp, aspace, bit } => {
                let ip = Ipv { die, disp, aspace };
                // Reading past its end is also a read that is not the whole storage.
                let st = bit.checked_add(extra).ok_or(Fail::Eval(R::OP_IMPLICIT_POINTER_PARTIAL_READ))?;
                if st.checked_add(n).is_none_or(|e| e > self.ip_bits(&ip)) {
                    return Err(Fail::Eval(R::OP_IMPLICIT_POINTER_PARTIAL_READ));
                }
                match track.ip {
                    None => {
                        track.ip = Some(ip);
                        track.consistent = st == dst_bit;
                    }
                    Some(prev) => track.consistent &= prev == ip && st == dst_bit,
                }
                Ok(())
            }
            Loc::Multi { start, len } => self.read_multi(s, start, len, extra, n, dst, dst_bit, track),
            Loc::Comp { idx, bit } => {
                let c = s.comps[idx as usize];
                let st = bit.checked_add(extra).ok_or(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END))?;
                if st.checked_add(n).is_none_or(|e| e > c.total_bits) {
                    return Err(Fail::Eval(R::OP_DEREF_PAST_STORAGE_END));
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
                        self.read_bits(s, &part.loc, lo - pos, hi - lo, dst, dst_bit + (lo - st), track)?;
                    }
                    pos = pend;
                    p = part.next;
                }
                Ok(())
            }
        }
    }

    /// Reads every single location of a multi-place location; they must
    /// agree (rule `expr.loc.places-must-agree`).
    #[allow(clippy::too_many_arguments)]
    fn read_multi(
        &self,
        s: &mut Scratch,
        start: u32,
        len: u32,
        extra: u64,
        n: u64,
        dst: &mut [u8],
        dst_bit: u64,
        track: &mut IpTrack,
    ) -> Res<()> {
        let mut first: Option<Vec<u8>> = None;
        for i in start..start + len {
            let single = s.multi[i as usize];
            let mut tmp = dst.to_vec();
            self.read_bits(s, &single, extra, n, &mut tmp, dst_bit, track)?;
            match &first {
                None => first = Some(tmp),
                Some(f) => {
                    if (0..n).any(|k| get_bit(f, dst_bit + k) != get_bit(&tmp, dst_bit + k)) {
                        return Err(Fail::Ill(R::EXPR_LOC_PLACES_MUST_AGREE));
                    }
                }
            }
        }
        if let Some(f) = first {
            dst.copy_from_slice(&f);
        }
        Ok(())
    }

    /// Reads register `regno` as an unsigned generic-sized value (rule
    /// `op.breg.register-plus-offset`).
    fn reg_address(&self, s: &mut Scratch, regno: u64) -> Res<u128> {
        let t = BaseType::ate(ate::UNSIGNED, self.gbits(), self.gty.big_endian);
        match self.deref(s, &Loc::Reg { regno, bit: 0 }, t)? {
            Ent::Val(v) => Ok(v.lo),
            _ => Ok(0),
        }
    }

    /// `DW_OP_fbreg` (rules `op.fbreg.offset`, `op.fbreg.register-frame-base`).
    fn fbreg(&self, ins: &Insn, s: &mut Scratch) -> Res<Loc> {
        let fb = self.ctx.frame_base.as_ref().ok_or(Fail::Eval(R::CTX_FRAME_BASE_MISSING))?;
        if self.depth + 1 > self.ctx.budgets.depth {
            return Err(Fail::Budget(BudgetKind::Depth));
        }
        let fbp = match s.frame_base.take() {
            Some(b) if b.0 == *fb => b,
            _ => Box::new((fb.clone(), Program::compile(fb, self.ctx))),
        };
        let at = self.at_override.unwrap_or(u64::from(ins.off));
        let inner =
            Ev { ctx: self.ctx, base: s.stack.len(), depth: self.depth + 1, at_override: Some(at), gty: self.gty };
        let r = inner.nested(&fbp.1, s);
        s.frame_base = Some(fbp);
        let l = r?;
        let disp = ins.b as i64;
        let base = match l {
            // A register frame base holds the address (like DW_OP_bregx R 0).
            Loc::Reg { regno, bit: 0 } => Loc::Mem { aspace: 0, bit: self.reg_address(s, regno)? * 8 },
            other => other,
        };
        self.move_loc(s, base, i128::from(disp) * 8, R::OP_FBREG_OFFSET_OUT_OF_STORAGE)
    }

    /// `l` moved by `bits` bits (as `DW_OP_LLVM_bit_offset`): an evaluation
    /// error `rule` if the new offset is negative or at/after the end of the
    /// storage; undefined stays undefined (rule `loc.undefined.no-size`).
    fn move_loc(&self, s: &mut Scratch, l: Loc, bits: i128, rule: RuleId) -> Res<Loc> {
        if let Loc::Multi { start, len } = l {
            let first = s.multi.len() as u32;
            for i in start..start + len {
                let m = self.move_loc(s, s.multi[i as usize], bits, rule.clone())?;
                s.multi.push(m);
            }
            return Ok(Loc::Multi { start: first, len });
        }
        let size = self.storage_bits(s, &l);
        let cur: i128 = match l {
            Loc::Undef => return Ok(l),
            Loc::Mem { bit, .. } => bit as i128,
            Loc::Reg { bit, .. } | Loc::Imp { bit, .. } | Loc::ImpPtr { bit, .. } | Loc::Comp { bit, .. } => {
                i128::from(bit)
            }
            Loc::Multi { .. } => 0,
        };
        let nb = cur.checked_add(bits).ok_or(Fail::Eval(rule.clone()))?;
        if nb < 0 || size.is_some_and(|sz| nb as u128 >= sz) {
            return Err(Fail::Eval(rule));
        }
        Ok(match l {
            Loc::Mem { aspace, .. } => Loc::Mem { aspace, bit: nb as u128 },
            Loc::Reg { regno, .. } => Loc::Reg { regno, bit: nb as u64 },
            Loc::Imp { start, len, .. } => Loc::Imp { start, len, bit: nb as u64 },
            Loc::ImpPtr { die, disp, aspace, .. } => Loc::ImpPtr { die, disp, aspace, bit: nb as u64 },
            Loc::Comp { idx, .. } => Loc::Comp { idx, bit: nb as u64 },
            other => other,
        })
    }

    /// Evaluates a nested expression with result kind "location" on a
    /// fresh stack region; returns its location and pops the region.
    fn nested(&self, prog: &Program, s: &mut Scratch) -> Res<Loc> {
        if let Some(e) = &prog.error {
            return Err(Fail::Ill(e.rule.clone()));
        }
        let out = match self.exec(prog, s) {
            Err(stop) => Err(stop.fail),
            Ok(()) => match self.top(s) {
                None => Ok(Loc::Undef),
                Some(e) => {
                    complete_top(s, &e);
                    self.to_loc(s, e).map_err(|f| match f {
                        Fail::Ill(r) if r == R::LOC_CONVERT_VALUE_NOT_GENERIC => {
                            Fail::Ill(R::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE)
                        }
                        f => f,
                    })
                }
            },
        };
        s.stack.truncate(self.base);
        out
    }

    fn top(&self, s: &Scratch) -> Option<Ent> {
        if s.stack.len() > self.base {
            s.stack.last().copied()
        } else {
            None
        }
    }

    /// `DW_OP_piece` / `DW_OP_bit_piece` (hetero-2020 "Composite Location
    /// Description Operations"): `bits` part size, `offset` the bit
    /// displacement of `DW_OP_bit_piece` (`None` for `DW_OP_piece`).
    fn piece(&self, s: &mut Scratch, bits: u64, offset: Option<u64>) -> Res<()> {
        if bits > self.ctx.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        match self.top(s) {
            None => {
                let idx = s.new_comp();
                self.add_part(s, idx, bits, Loc::Undef)?;
                self.push(s, Ent::Loc(Loc::Comp { idx, bit: 0 }));
            }
            Some(Ent::Loc(Loc::Comp { idx, .. })) if !s.comps[idx as usize].complete => {
                self.add_part(s, idx, bits, Loc::Undef)?;
            }
            Some(e) => {
                let pl = match self.to_loc(s, e) {
                    Ok(l) => l,
                    Err(Fail::Ill(r)) if r == R::LOC_CONVERT_VALUE_NOT_GENERIC => {
                        return Err(Fail::Ill(R::OP_PIECE_NOT_LOCATION))
                    }
                    Err(f) => return Err(f),
                };
                let pl = match offset {
                    Some(b) => self.move_loc(s, pl, i128::from(b), R::OP_BIT_PIECE_OFFSET_PAST_STORAGE)?,
                    None => pl,
                };
                self.check_part_fits(s, &pl, bits)?;
                s.stack.pop();
                match self.top(s) {
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

    /// Every bit of a part must lie within each place's storage (rule
    /// `composite.part-exceeds-storage`).
    fn check_part_fits(&self, s: &Scratch, l: &Loc, bits: u64) -> Res<()> {
        let fits = match *l {
            Loc::Undef => true,
            Loc::Multi { start, len } => {
                for i in start..start + len {
                    self.check_part_fits(s, &s.multi[i as usize], bits)?;
                }
                true
            }
            Loc::Mem { aspace, bit } => bit + u128::from(bits) <= self.storage_bits_mem(aspace),
            // A register the target does not define has no known size.
            Loc::Reg { regno, bit } => {
                self.ctx.target.register(regno).is_none_or(|r| u128::from(bit) + u128::from(bits) <= u128::from(r.bits))
            }
            Loc::Imp { bit, .. } | Loc::ImpPtr { bit, .. } | Loc::Comp { bit, .. } => {
                self.storage_bits(s, l).is_none_or(|size| u128::from(bit) + u128::from(bits) <= size)
            }
        };
        if fits {
            Ok(())
        } else {
            Err(Fail::Ill(R::COMPOSITE_PART_EXCEEDS_STORAGE))
        }
    }

    /// Appends a part, checking the composite's total size against the
    /// largest address space (rule `composite.too-large`) and the size budget.
    fn add_part(&self, s: &mut Scratch, idx: u32, bits: u64, loc: Loc) -> Res<()> {
        let total = s.comps[idx as usize].total_bits.saturating_add(bits);
        let max_abits = self.ctx.target.address_spaces.iter().map(|a| a.address_bits).max().unwrap_or(64);
        if max_abits < 61 && u128::from(total) > 1u128 << (max_abits + 3) {
            return Err(Fail::Ill(R::COMPOSITE_TOO_LARGE));
        }
        if total > self.ctx.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        s.append_part(idx, bits, loc);
        Ok(())
    }

    /// Converts the final stack into the outcome (hetero-2020 "DWARF
    /// Operation Expressions", result of the evaluation; rules `expr.result.*`).
    pub fn finish(&self, s: &mut Scratch) -> Outcome {
        let top = self.top(s);
        if let Some(e) = &top {
            complete_top(s, e);
        }
        let r = match (self.ctx.result_kind, top) {
            (Some(ResultKind::Value), None) => Err(Fail::Ill(R::EXPR_RESULT_VALUE_EMPTY_STACK)),
            (_, None) => Ok(Ent::Loc(Loc::Undef)),
            (Some(ResultKind::Location), Some(e)) => self
                .to_loc(s, e)
                .map(Ent::Loc)
                .map_err(|f| remap(f, &R::LOC_CONVERT_VALUE_NOT_GENERIC, R::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE)),
            (Some(ResultKind::Value), Some(e)) => self
                .to_val(s, e)
                .map(Ent::Val)
                .map_err(|f| remap(f, &R::LOC_CONVERT_LOCATION_NOT_VALUE, R::EXPR_RESULT_VALUE_NOT_CONVERTIBLE)),
            (None, Some(Ent::Ipv(_))) => Err(Fail::Eval(R::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            (None, Some(e)) => Ok(e),
        };
        match r {
            Ok(Ent::Val(v)) => Outcome::Value(s.export_val(&v)),
            Ok(Ent::Loc(l)) => Outcome::Location(s.export_loc(&l)),
            Ok(Ent::Ipv(_)) => fail_outcome(Fail::Eval(R::OP_IMPLICIT_POINTER_VALUE_MISUSE), None),
            Err(f) => fail_outcome(f, None),
        }
    }
}

fn remap(f: Fail, from: &RuleId, to: RuleId) -> Fail {
    match f {
        Fail::Ill(r) if r == *from => Fail::Ill(to),
        f => f,
    }
}

/// Runs `f` on a zeroed buffer of `count` bytes (on the stack when small).
fn with_buf<T>(count: usize, f: impl FnOnce(&mut [u8]) -> T) -> T {
    if count <= 64 {
        let mut tmp = [0u8; 64];
        f(&mut tmp[..count])
    } else {
        let mut v = vec![0u8; count];
        f(&mut v)
    }
}

/// An incomplete composite left on top at the end of an evaluation becomes
/// complete (rule `expr.result.incomplete-composite-completed`).
fn complete_top(s: &mut Scratch, e: &Ent) {
    if let Ent::Loc(Loc::Comp { idx, .. }) = e {
        s.comps[*idx as usize].complete = true;
    }
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
