//! The reference machine's side of virtual unwinding: frame k's CFA and the
//! caller registers as the frame rules give them (hetero-2020 "Call Frame
//! Information"; rules `unwind.cfa.*`, `unwind.step.*`, `unwind.cyclic`).
//! The unwinder ([`crate::unwind`]) calls these; nothing here calls it.

use super::calls::{frame_context, At};
use super::entry::{Entry, Loc, Single, Storage};
use super::machine::{failed, Final, Machine};
use super::read::Read;
use super::stop::Stop;
use dwarfcheck_core::context::{CallerFrame, MachineState, ResultKind};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::cfi::CfaRule;
use dwarfcheck_core::outcome::unwind::CallerRegister;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, NormalLocation, Outcome};
use dwarfcheck_core::rules::id;
use std::sync::Arc;

/// A machine evaluating in `ctx`, the state of the frame `frames` names
/// (empty: the top frame), whose top frame's state is `top`. The frames
/// come from unwinding ([`CallerFrame::unwound`]), so their registers are
/// marked while computed (`unwind.cyclic`).
fn machine<'c>(ctx: &'c dyn MachineState, top: &'c dyn MachineState, frames: Vec<Arc<CallerFrame>>) -> Machine<'c> {
    let mut m = Machine::new(ctx);
    m.top = top;
    m.frames = frames;
    m
}

/// The outcome of a failed step computation; `unwind.cyclic` has no `at`
/// (the cycle belongs to the frame, not to one operation).
fn fault(e: At) -> Outcome {
    match e {
        (Stop::Ill(r), _) if r == id::UNWIND_CYCLIC => Outcome::Failed(Failure::IllFormed { rule: r, at: None }),
        e => failed(e),
    }
}

/// The CFA of frame k = `below.len()` by its CFA rule (`unwind.cfa.*`):
/// `(address space, byte address, location)`.
///
/// `top` is frame 0's state (its `caller` the linked chain, its CFA not
/// given while frame 0's own CFA is computed); `below` the frames 1..=k,
/// whose frame k's `caller` is the frame the row describes. The rule is
/// evaluated in frame k with no unit, no object and result kind location.
/// Errors: the fault as an outcome. A register rule's read faults have no
/// `at` (`unwind.cfa.register-offset`); an expression's faults the offset
/// in it (`unwind.cfa.expression`); `unwind.cfa.not-memory`;
/// `unwind.cyclic` when the CFA needs itself.
pub(crate) fn frame_cfa(
    top: &dyn MachineState,
    below: &[Arc<CallerFrame>],
    rule: &CfaRule,
) -> Result<(u64, u64, NormalLocation), Outcome> {
    let k = below.len();
    let fctx = frame_context(top, below).without_unit().with_object(None).with_result_kind(Some(ResultKind::Location));
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
pub(crate) fn caller_register(top: &dyn MachineState, frames: &[Arc<CallerFrame>], regno: u64) -> CallerRegister {
    let mut m = machine(top, top, Vec::new());
    match m.frame_register_at(frames, regno) {
        Err(e) => CallerRegister { location: fault(e), bytes: None },
        Ok(l) => {
            let bits = top.target().register(regno).map(|r| r.bits).unwrap_or(top.target().generic_bits());
            // The read and the normal form are charged to the work budget
            // of the machine that found the rule (expr.budget.work).
            let bytes = match m.read(&l, u64::from(bits)) {
                Ok(Read::Bits(mut b)) => {
                    b.truncate((bits / 8) as usize);
                    Some(b)
                }
                _ => None,
            };
            let location = match m.export(&l) {
                Ok(n) => Outcome::Location(n),
                Err(stop) => failed((stop, None)),
            };
            CallerRegister { location, bytes }
        }
    }
}

/// Whether `o` is exactly the undefined location description
/// (`unwind.base-of-stack`).
pub(crate) fn is_undefined(o: &Outcome) -> bool {
    matches!(o, Outcome::Location(l) if *l == Loc::undefined().normalize())
}
