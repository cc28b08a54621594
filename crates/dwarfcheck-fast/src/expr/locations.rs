//! Where a location description is required: a stack entry converted to
//! one (a generic value to memory, an implicit pointer value to its DIE's
//! location), and the nested evaluations whose result is one: a nested
//! expression, an implicit pointer's DIE, a location list (hetero-2020
//! "DWARF Location Description", "Implicit Location Description
//! Operations", "DWARF Location List Expressions").

use super::evaluation::{Evaluation, Fail, Result, Stop};
use super::loclist::{for_each_entry, ListEntry};
use super::machine::{complete_top, Entry, ImplicitPointer, Location, Scratch, Value};
use super::program::{compiled, Program};
use dwarfcheck_core::context::{AttrForm, AttrValue, Overlay};
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::{id as R, RuleId};

impl Evaluation<'_> {
    /// Pops an entry required to be a location description.
    pub(super) fn pop_location(&self, s: &mut Scratch) -> Result<Location> {
        self.need(s, 1)?;
        let e = self.pop_raw(s);
        self.to_location(s, e)
    }

    /// Entry `e` where a location description is required (rules
    /// `loc.convert.generic-value-to-memory`, `loc.convert.value-not-generic`).
    pub(super) fn to_location(&self, s: &mut Scratch, e: Entry) -> Result<Location> {
        match e {
            Entry::Location(Location::Composite { idx, .. }) if !s.composites[idx as usize].complete => {
                Err(Fail::IllFormed(R::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION))
            }
            Entry::Location(l) => Ok(l),
            Entry::Value(v) if v.ty == self.generic_type => self.default_memory(v.lo),
            Entry::Value(_) => Err(Fail::IllFormed(R::LOC_CONVERT_VALUE_NOT_GENERIC)),
            Entry::ImplicitPointer(p) => self.implicit_pointer_location(s, p),
        }
    }

    /// Entry `e` where a location description is required, a value that is
    /// not generic being the ill-formed `rule` (the operation's own reading
    /// of `loc.convert.value-not-generic`); an implicit pointer value's own
    /// evaluation keeps its failures as they are.
    pub(super) fn to_location_as(&self, s: &mut Scratch, e: Entry, rule: RuleId) -> Result<Location> {
        match e {
            Entry::ImplicitPointer(p) => self.implicit_pointer_location(s, p),
            e => self.to_location(s, e).map_err(|f| match f {
                Fail::IllFormed(r) if r == R::LOC_CONVERT_VALUE_NOT_GENERIC => Fail::IllFormed(rule),
                f => f,
            }),
        }
    }

    /// The location an implicit pointer value designates (rule
    /// `op.implicit-pointer.to-location`): the DIE's `DW_AT_location`
    /// evaluated one level deeper as a location with an empty stack and no
    /// object, or its `DW_AT_const_value` as implicit storage; then moved by
    /// the displacement as `DW_OP_LLVM_offset` would.
    pub(super) fn implicit_pointer_location(&self, s: &mut Scratch, p: ImplicitPointer) -> Result<Location> {
        if p.aspace.is_some_and(|a| a != 0) {
            return Err(Fail::EvalError(R::OP_ASPACE_IMPLICIT_POINTER_NOT_DEFAULT_CONVERSION));
        }
        self.implicit_pointer_target(s, p)
    }

    /// The DIE location an implicit pointer value designates, whatever its
    /// address space (for `DW_OP_LLVM_form_aspace_address` with the
    /// value's own address space;
    /// [`Evaluation::implicit_pointer_location`] for every other use).
    pub(super) fn implicit_pointer_target(&self, s: &mut Scratch, p: ImplicitPointer) -> Result<Location> {
        let die = self.die(p.die, R::OP_IMPLICIT_POINTER_DIE_MISSING)?;
        let l = match (&die.location, &die.const_value) {
            (Some(form), _) => {
                let depth = self.deeper()?;
                let no_object = Overlay::new(self.state).with_object(None);
                let inner = Evaluation { state: &no_object, depth, base: s.stack.len(), ..*self };
                match form {
                    AttrForm::Exprloc(e) => inner.nested(&compiled(e, &no_object), s)?,
                    AttrForm::LocList { .. } | AttrForm::LocListX { .. } => {
                        inner.location_list(form.as_value(), s, false).map_err(|stop| stop.fail)?
                    }
                    AttrForm::Constant(_) => return Err(Fail::IllFormed(R::ATTR_FORM_NOT_ALLOWED)),
                }
            }
            (None, Some(bytes)) => {
                if bytes.len() as u64 > self.budgets.size_bytes {
                    return Err(Fail::Budget(BudgetKind::Size));
                }
                self.charge_memory(s, bytes.len() as u128)?;
                let start = s.store(bytes);
                Location::Implicit { start, len: bytes.len() as u32, bit: 0 }
            }
            (None, None) => return Err(Fail::EvalError(R::OP_IMPLICIT_POINTER_DIE_NO_LOCATION)),
        };
        self.move_location(s, l, i128::from(p.disp) * 8, R::OP_IMPLICIT_POINTER_DISPLACEMENT_OUT_OF_STORAGE)
    }

    /// Evaluates a nested expression with result kind "location" on a
    /// fresh stack region; returns its location and pops the region.
    pub(super) fn nested(&self, prog: &Program, s: &mut Scratch) -> Result<Location> {
        if let Some(e) = &prog.error {
            return Err(Fail::IllFormed(e.rule.clone()));
        }
        if let Some(r) = self.single_location(prog, s) {
            return r;
        }
        match self.run(prog, s) {
            Err(stop) => {
                s.stack.truncate(self.base);
                Err(stop.fail)
            }
            Ok(()) => self.result_location(s),
        }
    }

    /// [`Evaluation::nested`] of a program that is one operation pushing a
    /// location or a generic value from its operands and the machine state
    /// alone (`DW_OP_call_frame_cfa`, `DW_OP_breg*`, `DW_OP_reg*`,
    /// `DW_OP_addr`, a literal: what frame bases are), without the loop:
    /// its step counted and checked, the operation run and remembered as
    /// the last one, its entry taken as the location result, exactly as
    /// the loop and [`Evaluation::result_location`] would. `None`: the
    /// loop must run it (other shapes, or no room for one more entry).
    #[inline]
    fn single_location(&self, prog: &Program, s: &mut Scratch) -> Option<Result<Location>> {
        use super::decode::Kind;
        let [ins] = &prog.insns[..] else { return None };
        if !matches!(ins.kind, Kind::CallFrameCfa | Kind::Breg | Kind::Reg | Kind::Addr | Kind::Const)
            || self.avail(s) + 1 > self.budgets.stack
        {
            return None;
        }
        s.steps += 1;
        if s.steps > self.budgets.steps {
            return Some(Err(Fail::Budget(BudgetKind::Steps)));
        }
        let e = self.produce(prog, ins, s);
        s.last = 0;
        // (None of these kinds leaves a composite or an implicit pointer.)
        Some(e.and_then(|e| self.to_location_as(s, e, R::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE)))
    }

    /// The location result of a nested evaluation that has run (result
    /// kind location); pops its stack region.
    pub(super) fn result_location(&self, s: &mut Scratch) -> Result<Location> {
        let out = match self.top(s) {
            None => Ok(Location::Undefined),
            Some(e) => {
                complete_top(s, &e);
                self.to_location_as(s, e, R::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE)
            }
        };
        s.stack.truncate(self.base);
        out
    }

    /// The value result of a nested evaluation that has run (result kind
    /// value); pops its stack region.
    pub(super) fn value_result(&self, s: &mut Scratch) -> Result<Value> {
        let out = match self.top(s) {
            None => Err(Fail::IllFormed(R::EXPR_RESULT_VALUE_EMPTY_STACK)),
            Some(e) => {
                complete_top(s, &e);
                self.to_value(s, e).map_err(|f| match f {
                    Fail::IllFormed(r) if r == R::LOC_CONVERT_LOCATION_NOT_VALUE => {
                        Fail::IllFormed(R::EXPR_RESULT_VALUE_NOT_CONVERTIBLE)
                    }
                    f => f,
                })
            }
        };
        s.stack.truncate(self.base);
        out
    }

    /// Evaluates the location list `form` of the current unit (hetero-2020
    /// "DWARF Location List Expressions", rules `loclist.*`): the whole list
    /// is read first, then each matching entry's expression runs as a
    /// location with an empty stack and no object at this depth; the result
    /// is the union of their single locations, undefined when none matches.
    ///
    /// `frame_base`: each matching entry is first checked for `DW_OP_fbreg`
    /// (rule `attr.frame-base.fbreg`).
    /// Failures of the list itself carry no offset; failures inside an
    /// entry's expression carry that expression's offset (or
    /// `self.at_override` in a nested evaluation).
    pub(super) fn location_list(
        &self,
        form: AttrValue<'_>,
        s: &mut Scratch,
        frame_base: bool,
    ) -> Result<Location, Stop> {
        let bare = |fail| Stop { fail, at: self.at_override };
        let pc = self.state.pc().ok_or(Fail::EvalError(R::LOCLIST_NO_PROGRAM_LOCATION)).map_err(bare)?;
        let unit = self.state.unit().ok_or(Fail::EvalError(R::CTX_CU_MISSING)).map_err(bare)?;
        let hit = |start: u64, end: u64| start <= pc && pc < end;
        let mut any_bounded = false;
        for_each_entry(self.state, &unit, form, |e| {
            if let ListEntry::Bounded { start, end, .. } = e {
                any_bounded |= hit(start, end);
            }
            Ok(())
        })
        .map_err(bare)?;
        let no_object = Overlay::new(self.state).with_object(None);
        let mut places: Vec<Location> = Vec::new();
        let mut failed: Option<Stop> = None;
        let _ = for_each_entry(self.state, &unit, form, |e| {
            let expr = match e {
                ListEntry::Bounded { start, end, expr } if hit(start, end) => expr,
                ListEntry::Default { expr } if !any_bounded => expr,
                _ => return Ok(()),
            };
            let inner = Evaluation { state: &no_object, base: s.stack.len(), ..*self };
            match inner.entry_location(&compiled(expr, &no_object), s, frame_base) {
                Ok(Location::Multi { start, len }) => {
                    places.extend_from_slice(&s.multi[start as usize..(start + len) as usize]);
                    Ok(())
                }
                Ok(one) => {
                    places.push(one);
                    Ok(())
                }
                Err(stop) => {
                    failed = Some(stop);
                    Err(Fail::Unsupported(String::new()))
                }
            }
        });
        if let Some(stop) = failed {
            return Err(stop);
        }
        // The union is a set (rule `loclist.union`): its places are kept in
        // the normal form's order, a place given twice once, so reads visit
        // them as for any other location with several places.
        if places.len() > 1 {
            // (Each place's normal form is charged to the work budget, rule
            // expr.budget.work.)
            let mut keyed = Vec::with_capacity(places.len());
            for l in &places {
                let n = self.export(s, l).map_err(bare)?;
                keyed.push((n.places, *l));
            }
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            keyed.dedup_by(|a, b| a.0 == b.0);
            places = keyed.into_iter().map(|(_, l)| l).collect();
        }
        Ok(match places.as_slice() {
            [] => Location::Undefined,
            [one] => *one,
            many => {
                let start = s.multi.len() as u32;
                s.multi.extend_from_slice(many);
                Location::Multi { start, len: many.len() as u32 }
            }
        })
    }

    /// Runs one location list entry's expression as a location on a fresh
    /// stack region, keeping the offset of a failure inside it.
    fn entry_location(&self, prog: &Program, s: &mut Scratch, frame_base: bool) -> Result<Location, Stop> {
        if let Some(e) = &prog.error {
            return Err(Stop { fail: Fail::IllFormed(e.rule.clone()), at: Some(self.at_override.unwrap_or(e.at)) });
        }
        if frame_base {
            if let Some(off) = prog.fbreg_at() {
                return Err(Stop {
                    fail: Fail::IllFormed(R::ATTR_FRAME_BASE_FBREG),
                    at: Some(self.at_override.unwrap_or(off)),
                });
            }
        }
        if let Err(stop) = self.run(prog, s) {
            s.stack.truncate(self.base);
            return Err(stop);
        }
        let r = self.result_location(s);
        r.map_err(|fail| Stop { fail, at: self.at_override })
    }
}
