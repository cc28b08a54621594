//! One virtual unwinding step's evaluations in frame k on the fast
//! machinery: frame k's CFA and the location and value of each of its
//! caller's registers (rules `unwind.cfa.*`, `unwind.step.registers`,
//! `unwind.step.value`, `unwind.cyclic`, `frame.rule.*`).

use super::evaluation::{Evaluation, Fail, FrameRegisters, Stop, UnwindingFrame};
use super::exec::top_level;
use super::machine::{mask, Entry, Location, Scratch};
use super::program::compiled;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::unwind::CallerRegister;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, NormalLocation, Outcome};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_core::target::Endian;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

/// How frame k's CFA is computed (a row's CFA rule).
#[derive(Debug, Clone, Copy)]
pub enum CfaSpec<'a> {
    /// Register `reg` plus `off` **bytes**, in address space `aspace`
    /// (`unwind.cfa.register-offset`).
    Reg {
        /// DWARF register number (of frame k).
        reg: u64,
        /// Byte offset.
        off: i64,
        /// Address space identifier.
        aspace: u64,
    },
    /// A DWARF expression (`unwind.cfa.expression`).
    Expr(&'a [u8]),
}

/// Frame k's CFA once computed: a byte address in an address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cfa {
    /// Byte address.
    pub addr: u64,
    /// Address space identifier.
    pub aspace: u64,
}

/// Reusable working state for the evaluations of one frame: the scratch
/// area, frame k's registers (imported from the step before) and frame
/// k's row rules. Allocates only when a buffer grows.
#[derive(Debug, Default)]
pub struct FrameEvaluation {
    scratch: Scratch,
    regs: Vec<(u64, Result<Location, Fail>)>,
    /// Frame k's row rules, sorted by register number (set by the caller
    /// through [`FrameEvaluation::rules_mut`]).
    rules: Vec<(u64, RegisterRule)>,
    top: bool,
    /// Registers of frame k+1 under way (`unwind.cyclic`), reused.
    progress: RefCell<Vec<u64>>,
    /// The byte offsets of frame k's failed registers whose fault has one
    /// (ill-formed, evaluation error or budget):
    /// a `register` or `same_value` rule that leads to such a register
    /// passes the offset on (as the reference does).
    fault_at: Vec<(u64, u64)>,
}

/// The fault an outcome stands for, its offset dropped (a register of
/// frame k whose rule failed fails every read of it, at the reader's
/// offset).
pub(crate) fn fail_of(o: &Outcome) -> Fail {
    match o {
        Outcome::Failed(Failure::IllFormed { rule, .. }) => Fail::IllFormed(rule.clone()),
        Outcome::Failed(Failure::EvalError { rule, .. }) => Fail::EvalError(rule.clone()),
        Outcome::Failed(Failure::Budget { budget, .. }) => Fail::Budget(*budget),
        Outcome::Failed(Failure::Unsupported { what }) => Fail::Unsupported(what.clone()),
        other => Fail::Unsupported(format!("register location {other}")),
    }
}

/// The outcome of a stop; `unwind.cyclic` is reported without offset.
fn outcome_of(stop: Stop) -> Outcome {
    match stop.fail {
        Fail::IllFormed(r) if r == R::UNWIND_CYCLIC => Outcome::Failed(Failure::IllFormed { rule: r, at: None }),
        f => Stop { fail: f, at: stop.at }.outcome(),
    }
}

fn plain(fail: Fail) -> Stop {
    Stop { fail, at: None }
}

impl FrameEvaluation {
    /// A fresh working state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts frame k: its registers are the machine state's (`callee: None`,
    /// frame 0) or the caller registers of step k-1. Clears the rules.
    pub fn begin(&mut self, callee: Option<&BTreeMap<u64, CallerRegister>>) {
        self.scratch.reset();
        self.regs.clear();
        self.rules.clear();
        self.top = callee.is_none();
        self.fault_at.clear();
        for (&r, c) in callee.into_iter().flatten() {
            if let Outcome::Failed(Failure::IllFormed { at: Some(a), .. })
            | Outcome::Failed(Failure::EvalError { at: Some(a), .. })
            | Outcome::Failed(Failure::Budget { at: Some(a), .. }) = &c.location
            {
                self.fault_at.push((r, *a));
            }
            let l = match &c.location {
                Outcome::Location(nl) => Ok(import(&mut self.scratch, nl)),
                other => Err(fail_of(other)),
            };
            self.regs.push((r, l));
        }
    }

    /// Frame k's row rules (frame k+1's registers), to be filled sorted by
    /// register number after [`FrameEvaluation::begin`].
    pub fn rules_mut(&mut self) -> &mut Vec<(u64, RegisterRule)> {
        &mut self.rules
    }

    /// Frame k's row rules as last set (after a step: the rules that gave
    /// its caller's registers, the ABI stack pointer rule included).
    pub fn rules(&self) -> &[(u64, RegisterRule)] {
        &self.rules
    }

    /// Computes frame k's CFA in `state` (frame k's state: its CFA is not
    /// asked for). Errors: the fault that ends the unwinding (rules
    /// `unwind.cfa.*`, `unwind.cyclic`; register-offset faults without
    /// offset, expression faults at their offset in the expression).
    pub fn cfa(&mut self, state: &dyn MachineState, spec: CfaSpec<'_>) -> Result<(Cfa, NormalLocation), Outcome> {
        let FrameEvaluation { scratch: s, regs, rules, top, progress, fault_at: _ } = self;
        progress.borrow_mut().clear();
        let known = known(*top, regs, rules, progress, true);
        let frame = FrameRegisters::Unwinding(&known);
        let evaluation = Evaluation { frame: Some(&frame), ..top_level(state) };
        s.steps = 0;
        let base = s.stack.len();
        let location = match spec {
            CfaSpec::Reg { reg, off, aspace } => {
                register_offset(&evaluation, s, reg, off, aspace).map_err(|f| outcome_of(plain(f)))
            }
            CfaSpec::Expr(e) => {
                let prog = compiled(e, state);
                match &prog.error {
                    Some(d) => Err(Outcome::Failed(Failure::IllFormed { rule: d.rule.clone(), at: Some(d.at) })),
                    None => match evaluation.exec(&prog, s) {
                        Err(stop) => Err(outcome_of(stop)),
                        Ok(()) => evaluation.result_location(s).map_err(|f| outcome_of(plain(f))),
                    },
                }
            }
        };
        s.stack.truncate(base);
        let location = location?;
        match location {
            Location::Memory { aspace, bit, .. } if bit % 8 == 0 && bit / 8 <= u128::from(u64::MAX) => {
                Ok((Cfa { addr: (bit / 8) as u64, aspace }, s.export_location(&location)))
            }
            _ => Err(Outcome::Failed(Failure::IllFormed { rule: R::UNWIND_CFA_NOT_MEMORY, at: None })),
        }
    }

    /// The caller registers by frame k's row rules, evaluated in `state`
    /// (frame k's state with its CFA set): the register of each rule in
    /// register number order, then `extra` if given, each handed to `each`
    /// with its location and its value bytes (rules
    /// `unwind.step.registers`, `unwind.step.value`) and whether the
    /// location is exactly the undefined location description
    /// (`unwind.base-of-stack`). The evaluation state is set up once for
    /// all of them.
    pub fn registers(
        &mut self,
        state: &dyn MachineState,
        extra: Option<u64>,
        mut each: impl FnMut(u64, CallerRegister, bool),
    ) {
        let FrameEvaluation { scratch: s, regs, rules, top, progress, fault_at } = self;
        let known = known(*top, regs, rules, progress, false);
        let frame = FrameRegisters::Unwinding(&known);
        let evaluation = Evaluation { frame: Some(&frame), ..top_level(state) };
        for regno in rules.iter().map(|(r, _)| *r).chain(extra) {
            {
                let mut p = progress.borrow_mut();
                p.clear();
                p.push(regno);
            }
            let (register, undefined) = caller_register(&evaluation, s, rules, regs, fault_at, regno);
            each(regno, register, undefined);
        }
    }
}

/// The caller register `regno` by frame k's row rule `rules[regno]`, in
/// `evaluation` (see [`FrameEvaluation::registers`]).
fn caller_register(
    evaluation: &Evaluation<'_>,
    s: &mut Scratch,
    rules: &[(u64, RegisterRule)],
    regs: &[(u64, Result<Location, Fail>)],
    fault_at: &[(u64, u64)],
    regno: u64,
) -> (CallerRegister, bool) {
    s.steps = 0;
    let base = s.stack.len();
    let rule = known_rule(rules, regno);
    let reg_bits = evaluation.target.register(regno).map(|r| r.bits);
    let r = match rule {
        RegisterRule::Expression { expr } => evaluation.expr_rule(s, expr, None, None, 0),
        RegisterRule::ValExpression { expr } => evaluation.expr_rule(s, expr, Some(reg_bits), None, 0),
        rule => evaluation.rule_location(s, rule, regno, None, 0).map_err(|f| {
            // A register / same value rule whose register of frame k
            // failed: that fault, with its offset.
            // Not when the rule failed its own size check
            // (frame.register.size-mismatch comes before the read).
            let led_to = match rule {
                RegisterRule::SameValue => Some(regno),
                RegisterRule::Register { register } => {
                    let other = evaluation.target.register(*register).map(|r| r.bits);
                    let own_fault = reg_bits.is_some() && other.is_some() && reg_bits != other;
                    (!own_fault).then_some(*register)
                }
                _ => None,
            };
            let carried = led_to.and_then(|r| {
                let i = regs.binary_search_by_key(&r, |(x, _)| *x).ok()?;
                let same = regs[i].1.as_ref().err() == Some(&f);
                same.then(|| fault_at.iter().find(|(x, _)| *x == r).map(|(_, a)| *a)).flatten()
            });
            Stop { fail: f, at: carried }
        }),
    };
    s.stack.truncate(base);
    match r {
        Err(stop) => (CallerRegister { location: outcome_of(stop), bytes: None }, false),
        Ok(l) => {
            let bytes = read_bytes(evaluation, s, &l, reg_bits.unwrap_or(evaluation.generic_type.bits));
            s.stack.truncate(base);
            // (The read and the normal form are charged to the work budget,
            // rule expr.budget.work.)
            let location = match evaluation.export(s, &l) {
                Ok(n) => Outcome::Location(n),
                Err(fail) => outcome_of(Stop { fail, at: None }),
            };
            (CallerRegister { location, bytes }, matches!(l, Location::Undefined))
        }
    }
}

/// Frame k as its expressions see it.
fn known<'a>(
    top: bool,
    regs: &'a [(u64, Result<Location, Fail>)],
    rules: &'a [(u64, RegisterRule)],
    in_progress: &'a RefCell<Vec<u64>>,
    cfa_in_progress: bool,
) -> UnwindingFrame<'a> {
    UnwindingFrame { regs: (!top).then_some(regs), rules, in_progress, cfa_in_progress: Cell::new(cfa_in_progress) }
}

/// Frame k's rule for register `regno` (default: undefined).
fn known_rule(rules: &[(u64, RegisterRule)], regno: u64) -> &RegisterRule {
    match rules.binary_search_by_key(&regno, |(r, _)| *r) {
        Ok(i) => &rules[i].1,
        Err(_) => &RegisterRule::Undefined,
    }
}

/// A normalised location imported into the scratch area.
fn import(s: &mut Scratch, nl: &NormalLocation) -> Location {
    match &nl.places[..] {
        [one] => s.import_single(one),
        many => {
            let singles: Vec<Location> = many.iter().map(|p| s.import_single(p)).collect();
            s.multi_of(&singles)
        }
    }
}

/// `DW_OP_constu AS; DW_OP_LLVM_aspace_bregx R, B` in frame k
/// (`unwind.cfa.register-offset`): R read as an unsigned integer of AS's
/// address size, plus B, modulo that size.
fn register_offset(
    evaluation: &Evaluation<'_>,
    s: &mut Scratch,
    reg: u64,
    off: i64,
    aspace: u64,
) -> Result<Location, Fail> {
    let space =
        evaluation.target.address_space(aspace).ok_or(Fail::IllFormed(R::OP_ASPACE_BREGX_UNKNOWN_ADDRESS_SPACE))?;
    let bits = space.address_bits;
    let t = BaseType::ate(ate::UNSIGNED, bits, evaluation.generic_type.big_endian);
    let l = evaluation.register_location(s, reg)?;
    let r = match evaluation.deref(s, &l, t)? {
        Entry::Value(v) => v.lo,
        _ => 0,
    };
    let addr = mask(r.wrapping_add(off as i128 as u128), bits);
    evaluation.bound_memory(aspace, addr)
}

/// `bits` bits read through `l` as target-order bytes, or `None` when
/// any of them cannot be read (`unwind.step.value`).
fn read_bytes(evaluation: &Evaluation<'_>, s: &mut Scratch, l: &Location, bits: u32) -> Option<Vec<u8>> {
    let t = BaseType::ate(ate::UNSIGNED, bits, evaluation.generic_type.big_endian);
    match evaluation.deref(s, l, t) {
        Ok(Entry::Value(v)) => {
            let mut out = Vec::with_capacity(t.bytes());
            s.value_bytes(&v, &mut out);
            if evaluation.target.endian == Endian::Big {
                out.reverse();
            }
            Some(out)
        }
        _ => None,
    }
}
