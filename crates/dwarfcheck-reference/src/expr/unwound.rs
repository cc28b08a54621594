//! The reference machine's side of virtual unwinding: frame k's CFA and the
//! caller registers as the frame rules give them, cycle marks, and the
//! context wiring of `unwind.context-from-cfi`.

use super::calls::{frame_context, At};
use super::entry::{Entry, Loc, Single, Storage};
use super::machine::{outcome_of, Final, Machine};
use super::read::{read_bits, Read};
use super::Stop;
use dwarfcheck_core::context::{CallerFrame, Context, ResultKind};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::cfi::CfaRule;
use dwarfcheck_core::outcome::unwind::{CallerRegister, UnwindEnd};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, NormalLocation, Outcome};
use dwarfcheck_core::rules::id;
use std::sync::Arc;

/// What an evaluation tied to virtual unwinding must remember.
#[derive(Debug, Clone, Default)]
pub(crate) struct Marks {
    /// The frames come from virtual unwinding: track `regs`
    /// (`unwind.cyclic`). Off for caller frames the context gives.
    pub(crate) track: bool,
    /// Registers being computed, as (frame number from the top, DWARF
    /// register number).
    pub(crate) regs: Vec<(usize, u64)>,
    /// The frame whose CFA is being computed (`unwind.cyclic`).
    pub(crate) cfa: Option<usize>,
    /// For a context wired from CFI: why the top frame's CFA is unknown.
    pub(crate) cfa_fault: Option<Stop>,
    /// For a context wired from CFI: why the top frame's caller is unknown.
    pub(crate) caller_fault: Option<Stop>,
}

/// A machine in the top frame of `top` whose frames come from unwinding.
fn machine<'c>(ctx: &'c Context, top: &'c Context, frames: Vec<Arc<CallerFrame>>) -> Machine<'c> {
    let mut m = Machine::new(ctx);
    m.top = top;
    m.frames = frames;
    m.marks.track = true;
    m
}

/// The outcome of a failed step computation; `unwind.cyclic` has no `at`
/// (the cycle belongs to the frame, not to one operation).
fn fault(e: At) -> Outcome {
    match e {
        (Stop::Ill(r), _) if r == id::UNWIND_CYCLIC => Outcome::Failed(Failure::IllFormed { rule: r, at: None }),
        e => outcome_of(Err(e)),
    }
}

/// The fault of an `Outcome` as a [`Stop`] (its `at` dropped).
fn stop_of(o: &Outcome) -> Stop {
    match o {
        Outcome::Failed(Failure::IllFormed { rule, .. }) => Stop::Ill(rule.clone()),
        Outcome::Failed(Failure::EvalError { rule, .. }) => Stop::Eval(rule.clone()),
        Outcome::Failed(Failure::Budget { budget, .. }) => Stop::Budget(*budget),
        Outcome::Failed(Failure::Unsupported { what }) => Stop::Unsupported(what.clone()),
        other => Stop::Unsupported(format!("unexpected unwinding fault {other}")),
    }
}

/// The CFA of frame k = `below.len()` by its CFA rule (`unwind.cfa.*`):
/// `(address space, byte address, location)`.
///
/// `top` is frame 0's context (its `caller` the linked chain); `below` the
/// frames 1..=k, whose frame k's `caller` is the frame the row describes.
/// Errors: the fault as an outcome. A register rule's read faults have no
/// `at` (`unwind.cfa.register-offset`); an expression's faults the offset
/// in it (`unwind.cfa.expression`); `unwind.cfa.not-memory`;
/// `unwind.cyclic` when the CFA needs itself.
pub(crate) fn frame_cfa(
    top: &Context,
    below: &[Arc<CallerFrame>],
    rule: &CfaRule,
) -> Result<(u64, u64, NormalLocation), Outcome> {
    let k = below.len();
    let mut fctx = frame_context(top, below);
    fctx.cu = None;
    fctx.object = None;
    fctx.result_kind = Some(ResultKind::Location);
    let mut m = machine(&fctx, top, below.to_vec());
    m.marks.cfa = Some(k);
    let loc = match rule {
        // unwind.cfa.register-offset: as DW_OP_constu AS;
        // DW_OP_LLVM_aspace_bregx R, B in frame k, with R read through
        // the frames below (frame.registers-through-cfi).
        CfaRule::RegOffset { register, offset, aspace } => {
            let r = (|| -> Result<Loc, Stop> {
                let s = m.aspace_bits(*aspace);
                let t = BaseType::ate(ate::UNSIGNED, s, m.generic().big_endian);
                let l = m.register_loc(*register)?;
                let v = match m.deref(&l, u64::from(s), t)? {
                    Entry::Value(v) => v.to_u128(),
                    _ => return Err(Stop::Eval(id::OP_IMPLICIT_POINTER_PARTIAL_READ)),
                };
                let mask = if s >= 128 { u128::MAX } else { (1u128 << s) - 1 };
                let a = v.wrapping_add(*offset as i128 as u128) & mask;
                m.memory_loc(*aspace, a as u64)
            })();
            r.map_err(|s| fault((s, None)))?
        }
        // unwind.cfa.expression: result kind location, empty stack.
        CfaRule::Expression { expr } => match m.run(expr, Some(ResultKind::Location), Vec::new(), 0, None) {
            Ok(Final::Location(l)) => l,
            Ok(Final::Value(_)) => unreachable!("result kind location gives a location"),
            Err(e) => return Err(fault(e)),
        },
    };
    // unwind.cfa.not-memory: one memory location at a whole byte.
    match &loc.singles[..] {
        [Single { storage: Storage::Memory { aspace, .. }, bit_offset }]
            if bit_offset % 8 == 0 && bit_offset / 8 <= u128::from(u64::MAX) =>
        {
            Ok((*aspace, (bit_offset / 8) as u64, loc.normalize()))
        }
        _ => Err(Outcome::Failed(Failure::IllFormed { rule: id::UNWIND_CFA_NOT_MEMORY, at: None })),
    }
}

/// Register `regno` of frame `frames.len()` (the last frame's rules,
/// frame.rule.*) with its value (`unwind.step.value`): the register's size
/// in **bytes** (the generic size for registers the target does not
/// define) read through the location, in target byte order.
pub(crate) fn caller_register(top: &Context, frames: &[Arc<CallerFrame>], regno: u64) -> CallerRegister {
    let mut m = machine(top, top, Vec::new());
    match m.frame_register_at(frames, regno) {
        Err(e) => CallerRegister { location: fault(e), bytes: None },
        Ok(l) => {
            let bits = top.target.register(regno).map(|r| r.bits).unwrap_or(top.target.generic_bits());
            let bytes = match read_bits(top, &l, u64::from(bits)) {
                Ok(Read::Bits(mut b)) => {
                    b.truncate((bits / 8) as usize);
                    Some(b)
                }
                _ => None,
            };
            CallerRegister { location: Outcome::Location(l.normalize()), bytes }
        }
    }
}

/// Whether `o` is exactly the undefined location description
/// (`unwind.base-of-stack`).
pub(crate) fn is_undefined(o: &Outcome) -> bool {
    matches!(o, Outcome::Location(l) if *l == Loc::undefined().normalize())
}

/// `unwind.context-from-cfi`: for a context with CFI and no explicit CFA
/// or caller frame, the context with frame 0's CFA and the caller chain
/// found by the reference unwinder, and the marks that make the faults met
/// on the way the faults of the operations that need them. `None` (and
/// default marks) when there is nothing to wire.
pub(super) fn wire(ctx: &Context) -> (Option<Context>, Marks) {
    let Some(cfi) = ctx.cfi.as_ref() else {
        return (None, Marks::default());
    };
    if ctx.cfa.is_some() && ctx.caller.is_some() {
        return (None, Marks::default());
    }
    let w = crate::unwind::walk(cfi, ctx, None);
    let fault = match &w.unwind.end {
        UnwindEnd::Fault { outcome } => Some(stop_of(outcome)),
        _ => None,
    };
    let mut c = ctx.clone();
    let mut marks = Marks { track: true, ..Marks::default() };
    if c.cfa.is_none() {
        match w.cfa0 {
            Some((aspace, a)) => {
                c.cfa = Some(a);
                c.cfa_aspace = aspace;
            }
            None => marks.cfa_fault = fault.clone(),
        }
    }
    if c.caller.is_none() {
        match w.chain.first() {
            Some(f) => c.caller = Some(f.clone()),
            // Base of the stack: frame.caller-missing.
            None if w.unwind.end == UnwindEnd::Base => {}
            None => marks.caller_fault = fault,
        }
    } else {
        marks.track = false;
    }
    (Some(c), marks)
}
