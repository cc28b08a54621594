//! The operations that push one entry from their operands and the machine
//! state alone (`DW_OP_lit*`/`DW_OP_const*`, `DW_OP_addr`, `DW_OP_reg*`,
//! `DW_OP_breg*`, `DW_OP_fbreg`, `DW_OP_call_frame_cfa`,
//! `DW_OP_implicit_pointer`, `DW_OP_entry_value`), `DW_OP_stack_value`, and
//! the straight-line evaluation of the expressions compilers emit most: one
//! of those operations, alone or followed by `DW_OP_stack_value`.
//!
//! The interpreter loop executes these operations through the same
//! functions; the straight-line path only leaves out the loop's per
//! operation dispatch and budget checks, deciding them once up front, and
//! hands every other case (an initial stack, a value result kind, budgets
//! that could end it) to the loop.

use super::decode::{Insn, Kind};
use super::evaluation::{Evaluation, Fail, Result, Stop};
use super::machine::{Entry, Location, Scratch};
use super::program::Program;
use dwarfcheck_core::context::ResultKind;
use dwarfcheck_core::outcome::BudgetKind;

impl Evaluation<'_> {
    /// The entry a producing operation `ins` of `prog` pushes (kinds
    /// [`Kind::Const`], [`Kind::Addr`], [`Kind::Reg`], [`Kind::Breg`],
    /// [`Kind::Fbreg`], [`Kind::CallFrameCfa`], [`Kind::ImplicitPointer`],
    /// [`Kind::EntryValue`]; hetero-2020 "Literal Operations", "Memory
    /// Location Description Operations", "Register Location Description
    /// Operations", "Implicit Location Description Operations").
    #[inline(always)]
    pub(super) fn produce(&self, prog: &Program, ins: &Insn, s: &mut Scratch) -> Result<Entry> {
        Ok(match ins.kind {
            Kind::Const => Entry::Value(self.generic(u128::from(ins.a))),
            Kind::Addr => {
                Entry::Location(self.default_memory(super::machine::mask(u128::from(ins.a), self.generic_bits()))?)
            }
            Kind::Reg => Entry::Location(self.register_location(s, ins.a)?),
            Kind::Breg => {
                let r = self.register_address(s, ins.a)?;
                let a = super::machine::mask(r.wrapping_add(ins.b as i64 as i128 as u128), self.generic_bits());
                Entry::Location(self.default_memory(a)?)
            }
            Kind::Fbreg => Entry::Location(self.fbreg(ins, s)?),
            // In the CFA's own address space.
            Kind::CallFrameCfa => Entry::Location(self.cfa_location()?),
            Kind::ImplicitPointer => {
                Entry::Location(Location::ImplicitPointer { die: ins.a, disp: ins.b as i64, aspace: None, bit: 0 })
            }
            Kind::EntryValue => self.entry_value(prog, ins, s)?,
            // (Not a producing operation: the loop dispatches those.)
            _ => return Err(Fail::Unsupported(dwarfcheck_core::encoding::op::name_of(ins.op))),
        })
    }

    /// `DW_OP_stack_value` applied to the popped entry `e` (hetero-2020
    /// "Implicit Location Description Operations"): implicit storage
    /// holding the value, or the implicit pointer location of an implicit
    /// pointer value.
    pub(super) fn stack_value(&self, s: &mut Scratch, e: Entry) -> Result<Entry> {
        if let Entry::ImplicitPointer(p) = e {
            return Ok(Entry::Location(Location::ImplicitPointer {
                die: p.die,
                disp: p.disp,
                aspace: p.aspace,
                bit: 0,
            }));
        }
        let v = self.to_value(s, e)?;
        Ok(Entry::Location(self.implicit_of(s, &v)))
    }

    /// Runs `prog` without the interpreter loop when it is one producing
    /// operation alone or followed by `DW_OP_stack_value` and the stack
    /// budget allows one more entry: the entry it leaves (not pushed), or why it
    /// stops, exactly as the loop would report it. `None`: the loop must
    /// run it.
    #[inline(always)]
    pub(super) fn run_short(&self, prog: &Program, s: &mut Scratch) -> Option<std::result::Result<Entry, Stop>> {
        let first = match &prog.insns[..] {
            [a] | [a, Insn { kind: Kind::StackValue, .. }] => a,
            _ => return None,
        };
        if !first.kind.produces() || self.avail(s) + 1 > self.budgets.stack {
            return None;
        }
        // As the loop does: count the step and check the step budget, run
        // the operation, remember it as the last one run; one more entry
        // is within the stack budget.
        let mut e = Entry::Location(Location::Undefined);
        for (pc, ins) in prog.insns.iter().enumerate() {
            let at = Some(self.at_override.unwrap_or(u64::from(ins.off)));
            s.steps += 1;
            if s.steps > self.budgets.steps {
                return Some(Err(Stop { fail: Fail::Budget(BudgetKind::Steps), at }));
            }
            let r = if pc == 0 { self.produce(prog, ins, s) } else { self.stack_value(s, e) };
            s.last = pc as u32;
            e = match r {
                Ok(e) => e,
                Err(fail) => return Some(Err(Stop { fail, at })),
            };
        }
        Some(Ok(e))
    }

    /// The result of `prog` run at the top level on a reset `s` by
    /// [`Evaluation::run_short`], when the state (or the caller, for a
    /// location description attribute) gives no initial stack and no value
    /// result kind. `None`: the loop must run it.
    #[inline]
    pub(super) fn straight_line(&self, prog: &Program, s: &mut Scratch) -> Option<std::result::Result<Entry, Stop>> {
        if self.base != 0 || self.at_override.is_some() {
            return None;
        }
        let kind = self.result_kind();
        if kind == Some(ResultKind::Value) || !self.location_attribute && !self.state.initial_stack().is_empty() {
            return None;
        }
        Some(match self.run_short(prog, s)? {
            Ok(e) => self.result_of(s, Some(e), kind).map_err(|fail| Stop { fail, at: None }),
            Err(stop) => Err(stop),
        })
    }
}
