//! DIE-backed operations: `DW_OP_call2`/`call4`/`call_ref`, implicit
//! pointer creation (`DW_OP_LLVM_aspace_implicit_pointer`) and turning an
//! implicit pointer value back into its DIE's location (hetero-2020
//! "Control Flow Operations", "Implicit Location Description Operations").

use super::decode::Insn;
use super::exec::{Ev, Fail};
use super::machine::{Ent, Ipv, Loc, Scratch, Val};
use super::Program;
use dwarfcheck_core::context::{AttrForm, Die, MachineState, Overlay};
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::id as R;
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

type Res<T> = Result<T, Fail>;

/// Most distinct DIE expressions kept compiled per thread.
const CACHE_LEN: usize = 64;

/// Encoding parameters a compiled program depends on.
type EncKey = (bool, bool, bool, bool, u8, u8, bool);

/// One cached program: its encoding, its bytes, the program.
type Cached = (EncKey, Box<[u8]>, Rc<Program>);

fn enc_key(state: &dyn MachineState) -> EncKey {
    let v = state.vendor();
    (
        v.gnu,
        v.hetero_2020,
        v.llvm_user,
        v.aspace_bregx_signed,
        state.address_bytes(),
        state.unit().map_or(4, |u| u.format.offset_bytes()) as u8,
        state.target().endian == dwarfcheck_core::target::Endian::Big,
    )
}

thread_local! {
    /// Compiled DIE expressions (called expressions, implicit pointer
    /// targets, location list entries), most recently used last.
    static PROGRAMS: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

/// `expr` compiled for `state`, from the per-thread cache when it was
/// compiled before (bounded: at most [`CACHE_LEN`] programs are kept).
pub(super) fn compiled(expr: &[u8], state: &dyn MachineState) -> Rc<Program> {
    let key = enc_key(state);
    PROGRAMS.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(i) = c.iter().rposition(|(k, b, _)| *k == key && **b == *expr) {
            return c[i].2.clone();
        }
        let p = Rc::new(Program::compile(expr, state));
        if c.len() >= CACHE_LEN {
            c.remove(0);
        }
        c.push((key, expr.into(), p.clone()));
        p
    })
}

impl Ev<'_> {
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
    fn at_of(&self, ins: &Insn) -> Option<u64> {
        Some(self.at_override.unwrap_or(u64::from(ins.off)))
    }

    /// `DW_OP_call2`, `DW_OP_call4`, `DW_OP_call_ref` (hetero-2020 "Control
    /// Flow Operations"): an exprloc `DW_AT_location` runs on this stack; a
    /// location list pushes its location; `DW_AT_const_value` pushes an
    /// implicit location; otherwise nothing happens.
    pub(super) fn call(&self, ins: &Insn, s: &mut Scratch) -> Res<()> {
        let unit = self.ctx.unit().ok_or(Fail::Eval(R::CTX_CU_MISSING))?;
        let off = if ins.b == 1 { ins.a } else { unit.offset.wrapping_add(ins.a) };
        let die = self.die(off, R::OP_CALL_DIE_MISSING)?;
        let at = self.at_of(ins);
        match (&die.location, &die.const_value) {
            (Some(AttrForm::Exprloc(e)), _) => {
                let depth = self.deeper()?;
                let prog = compiled(e, self.ctx);
                if let Some(err) = &prog.error {
                    return Err(Fail::Ill(err.rule.clone()));
                }
                let inner = Ev { depth, at_override: at, ..*self };
                inner.exec(&prog, s).map_err(|stop| stop.fail)
            }
            (Some(form @ (AttrForm::LocList { .. } | AttrForm::LocListX { .. })), _) => {
                let depth = self.deeper()?;
                let inner = Ev { depth, at_override: at, base: s.stack.len(), ..*self };
                let l = inner.location_list(form.as_value(), s, false).map_err(|stop| stop.fail)?;
                self.push(s, Ent::Loc(l));
                Ok(())
            }
            (Some(AttrForm::Constant(_)), _) => Err(Fail::Ill(R::ATTR_FORM_NOT_ALLOWED)),
            (None, Some(bytes)) => {
                if bytes.len() as u64 > self.budgets.size_bytes {
                    return Err(Fail::Budget(BudgetKind::Size));
                }
                let start = s.store(bytes);
                self.push(s, Ent::Loc(Loc::Imp { start, len: bytes.len() as u32, bit: 0 }));
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }

    /// `DW_OP_LLVM_aspace_implicit_pointer` (hetero-2020 "Implicit Location
    /// Description Operations"): pops an integral address space identifier
    /// that the target must define (rule `op.aspace-implicit-pointer.*`).
    pub(super) fn aspace_implicit_pointer(&self, ins: &Insn, s: &mut Scratch) -> Res<()> {
        let v = self.pop_integral(s, R::OP_ASPACE_IMPLICIT_POINTER_REQUIRES_INTEGRAL)?;
        let asp = s
            .as_u64(&v)
            .filter(|a| self.target.address_space(*a).is_some())
            .ok_or(Fail::Ill(R::OP_ASPACE_IMPLICIT_POINTER_UNKNOWN_ADDRESS_SPACE))?;
        let aspace = if asp == 0 { None } else { Some(asp) };
        self.push(s, Ent::Loc(Loc::ImpPtr { die: ins.a, disp: ins.b as i64, aspace, bit: 0 }));
        Ok(())
    }

    /// The location an implicit pointer value designates (rule
    /// `op.implicit-pointer.to-location`): the DIE's `DW_AT_location`
    /// evaluated one level deeper as a location with an empty stack and no
    /// object, or its `DW_AT_const_value` as implicit storage; then moved by
    /// the displacement as `DW_OP_LLVM_offset` would.
    pub(super) fn ipv_location(&self, s: &mut Scratch, p: Ipv) -> Res<Loc> {
        if p.aspace.is_some_and(|a| a != 0) {
            return Err(Fail::Eval(R::OP_ASPACE_IMPLICIT_POINTER_NOT_DEFAULT_CONVERSION));
        }
        self.ipv_target(s, p)
    }

    /// The DIE location an implicit pointer value designates, whatever its
    /// address space (for `DW_OP_LLVM_form_aspace_address` with the IPV's
    /// own address space; [`Ev::ipv_location`] for every other use).
    pub(super) fn ipv_target(&self, s: &mut Scratch, p: Ipv) -> Res<Loc> {
        let die = self.die(p.die, R::OP_IMPLICIT_POINTER_DIE_MISSING)?;
        let l = match (&die.location, &die.const_value) {
            (Some(form), _) => {
                let depth = self.deeper()?;
                let no_object = Overlay::new(self.ctx).with_object(None);
                let inner = Ev { ctx: &no_object, depth, base: s.stack.len(), ..*self };
                match form {
                    AttrForm::Exprloc(e) => inner.nested(&compiled(e, &no_object), s)?,
                    AttrForm::LocList { .. } | AttrForm::LocListX { .. } => {
                        inner.location_list(form.as_value(), s, false).map_err(|stop| stop.fail)?
                    }
                    AttrForm::Constant(_) => return Err(Fail::Ill(R::ATTR_FORM_NOT_ALLOWED)),
                }
            }
            (None, Some(bytes)) => {
                if bytes.len() as u64 > self.budgets.size_bytes {
                    return Err(Fail::Budget(BudgetKind::Size));
                }
                let start = s.store(bytes);
                Loc::Imp { start, len: bytes.len() as u32, bit: 0 }
            }
            (None, None) => return Err(Fail::Eval(R::OP_IMPLICIT_POINTER_DIE_NO_LOCATION)),
        };
        self.move_loc(s, l, i128::from(p.disp) * 8, R::OP_IMPLICIT_POINTER_DISPLACEMENT_OUT_OF_STORAGE)
    }

    /// Entry `e` where a location description is required, a value that is
    /// not generic being the ill-formed `rule` (the operation's own reading
    /// of `loc.convert.value-not-generic`); an implicit pointer value's own
    /// evaluation keeps its failures as they are.
    pub(super) fn to_loc_as(&self, s: &mut Scratch, e: Ent, rule: dwarfcheck_core::rules::RuleId) -> Res<Loc> {
        match e {
            Ent::Ipv(p) => self.ipv_location(s, p),
            e => self.to_loc(s, e).map_err(|f| match f {
                Fail::Ill(r) if r == R::LOC_CONVERT_VALUE_NOT_GENERIC => Fail::Ill(rule),
                f => f,
            }),
        }
    }

    /// The value result of a nested evaluation that has run (result kind
    /// value); pops its stack region.
    pub(super) fn value_result(&self, s: &mut Scratch) -> Res<Val> {
        let out = match self.top(s) {
            None => Err(Fail::Ill(R::EXPR_RESULT_VALUE_EMPTY_STACK)),
            Some(e) => {
                super::place::complete_top(s, &e);
                self.to_val(s, e).map_err(|f| match f {
                    Fail::Ill(r) if r == R::LOC_CONVERT_LOCATION_NOT_VALUE => {
                        Fail::Ill(R::EXPR_RESULT_VALUE_NOT_CONVERTIBLE)
                    }
                    f => f,
                })
            }
        };
        s.stack.truncate(self.base);
        out
    }

    /// Implicit storage holding `v` in target memory order (as
    /// `DW_OP_stack_value` makes it).
    pub(super) fn implicit_of(&self, s: &mut Scratch, v: &Val) -> Loc {
        let mut tmp = std::mem::take(&mut s.tmp);
        s.value_bytes(v, &mut tmp);
        if v.ty.big_endian {
            tmp.reverse();
        }
        let start = s.store(&tmp);
        s.tmp = tmp;
        Loc::Imp { start, len: v.ty.bytes() as u32, bit: 0 }
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
