//! What a debugger can show of an expression's result, and the same view of
//! the reference's outcome (docs/debuggers.md, "What is compared").
//!
//! A debugger prints a variable, not a location description. So the
//! synthesised variable is shaped from the reference's outcome ([`plan`]),
//! and both sides are compared as an [`Observation`]: the bytes read
//! through the location, each known, optimized out (undefined storage), or
//! the whole variable a synthetic pointer (an implicit pointer).
//!
//! Observations travel as ordinary [`Outcome`]s so the runner's comparison
//! policy applies unchanged: bytes become a location whose parts are
//! implicit storage (known bytes) and undefined storage (optimized-out
//! bytes), a synthetic pointer becomes an implicit pointer location with
//! DIE 0 and displacement 0 (debuggers do not show the target).

use crate::case::ExprCase;
use crate::synth::VarShape;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::location::{Piece, SingleLocation, Source};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{NormalLocation, Outcome};
use dwarfcheck_core::rules::RuleId;
use std::collections::BTreeSet;

/// One byte of a variable as a debugger shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Byte {
    /// A byte read from storage.
    Known(u8),
    /// A byte of undefined storage (the debugger's `<optimized out>`).
    OptimizedOut,
}

/// A variable as a debugger shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// Its bytes, in target memory order.
    Bytes(Vec<Byte>),
    /// A pointer whose value the debugger does not have (`<synthetic
    /// pointer>`): the location is an implicit pointer.
    SyntheticPointer,
}

impl Observation {
    /// As an [`Outcome`] (see the module documentation).
    pub fn to_outcome(&self) -> Outcome {
        let pieces = match self {
            Observation::SyntheticPointer => {
                let s = Source::ImplicitPointer { die: 0, aspace: None, byte_displacement: 0, bit_offset: 0 };
                return Outcome::Location(NormalLocation { places: vec![SingleLocation::Simple(s)] });
            }
            Observation::Bytes(bytes) => runs(bytes),
        };
        Outcome::Location(NormalLocation { places: vec![SingleLocation::Composite(pieces)] })
    }
}

/// Runs of known bytes become one implicit part each, runs of
/// optimized-out bytes one undefined part each.
fn runs(bytes: &[Byte]) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut known: Vec<u8> = Vec::new();
    let mut undefined = 0u64;
    let flush = |pieces: &mut Vec<Piece>, known: &mut Vec<u8>, undefined: &mut u64| {
        if !known.is_empty() {
            let bits = 8 * known.len() as u64;
            let s = Source::Implicit { bytes: std::mem::take(known), bit_offset: 0 };
            pieces.push(Piece { bits, sources: BTreeSet::from([s]) });
        }
        if *undefined > 0 {
            pieces.push(Piece { bits: 8 * *undefined, sources: BTreeSet::from([Source::Undefined]) });
            *undefined = 0;
        }
    };
    for b in bytes {
        match b {
            Byte::Known(v) => {
                if undefined > 0 {
                    flush(&mut pieces, &mut known, &mut undefined);
                }
                known.push(*v);
            }
            Byte::OptimizedOut => {
                if !known.is_empty() {
                    flush(&mut pieces, &mut known, &mut undefined);
                }
                undefined += 1;
            }
        }
    }
    flush(&mut pieces, &mut known, &mut undefined);
    pieces
}

/// How the variable is shaped for `case` given the reference's `outcome`:
/// a value is the contents of `unsigned char[size of its type]` with
/// `DW_OP_stack_value` appended ([`VarShape::Bytes`]); an implicit pointer
/// result is a
/// pointer; any other location is read as `unsigned char[N]`, N the
/// composite's length (whole bytes) or the address size for a single
/// location; an error gives the address-size variable of the case's result
/// kind.
pub fn plan(case: &ExprCase, outcome: &Outcome) -> VarShape {
    let addr = u64::from(case.ctx.address_bytes());
    match outcome {
        Outcome::Value(v) => VarShape::Bytes { byte_size: v.bytes.len() as u64, stack_value: true },
        Outcome::Location(l) => match l.places.first() {
            Some(SingleLocation::Simple(Source::ImplicitPointer { .. })) => VarShape::Pointer,
            Some(SingleLocation::Composite(p)) => {
                VarShape::Bytes { byte_size: p.iter().map(|p| p.bits).sum::<u64>().div_ceil(8), stack_value: false }
            }
            Some(SingleLocation::Simple(s)) => VarShape::Bytes { byte_size: simple_size(case, s), stack_value: false },
            None => VarShape::Bytes { byte_size: addr, stack_value: false },
        },
        _ => VarShape::Bytes {
            byte_size: addr,
            stack_value: case.ctx.result_kind == Some(dwarfcheck_core::context::ResultKind::Value),
        },
    }
}

/// Bytes read through a single location: the rest of implicit storage,
/// the rest of a register (at most 16 bytes), else the address size (a
/// memory location, or undefined storage).
fn simple_size(case: &ExprCase, s: &Source) -> u64 {
    let addr = u64::from(case.ctx.address_bytes());
    let rest = match s {
        Source::Implicit { bytes, bit_offset } => (8 * bytes.len() as u64).saturating_sub(*bit_offset) / 8,
        Source::Register { regno, bit_offset } => {
            case.ctx.target.register(*regno).map_or(addr, |r| u64::from(r.bits).saturating_sub(*bit_offset) / 8).min(16)
        }
        _ => addr,
    };
    rest.max(1)
}

/// Reference errors about context elements every core file and frame
/// has: a debugger always finds a value for them, so the case cannot be
/// reproduced.
const ALWAYS_PRESENT: [&str; 4] =
    ["ctx.register-unavailable", "ctx.cfa-missing", "ctx.pc-missing", "loclist.no-program-location"];

/// A rule ID for what the view cannot judge or a debugger reported.
fn rule(s: &str) -> RuleId {
    RuleId::new(s)
}

/// The reference's `outcome` as a debugger would show it, for the variable
/// [`plan`] shapes:
/// - a value: its bytes, in the type's byte order;
/// - a location: the bytes read through it from the case's registers,
///   memory and implicit storage, undefined parts optimized out; memory
///   the case does not have gives an evaluation error
///   (`debugger:memory-unreadable`), as reading an unmapped address does in
///   a debugger;
/// - errors and budgets: unchanged (compared by kind).
///
/// `Unsupported` where a debugger cannot show the answer: a register, CFA
/// or pc the case leaves out (every process image has them, so the
/// reference's `ctx.register-unavailable`, `ctx.cfa-missing` and
/// `ctx.pc-missing`, and `loclist.no-program-location`, cannot be
/// reproduced), a
/// part that is an implicit pointer inside a composite, or a composite
/// that is not a whole number of bytes.
pub fn view(case: &ExprCase, outcome: &Outcome) -> Outcome {
    let unsupported = |what: &str| Outcome::Failed(Failure::Unsupported { what: what.to_string() });
    match outcome {
        Outcome::Failed(Failure::EvalError { rule: r, .. }) if ALWAYS_PRESENT.contains(&r.as_str()) => {
            unsupported("a context element the case leaves out but every process image has (register, CFA, pc)")
        }
        Outcome::Value(v) => {
            // Values are kept least significant byte first; the variable
            // holds them in the type's byte order (DW_OP_stack_value's
            // implicit storage).
            let mut bytes = v.bytes.clone();
            if v.ty.big_endian {
                bytes.reverse();
            }
            Observation::Bytes(bytes.into_iter().map(Byte::Known).collect()).to_outcome()
        }
        Outcome::Location(l) => match l.places.first() {
            Some(SingleLocation::Simple(Source::ImplicitPointer { .. })) => Observation::SyntheticPointer.to_outcome(),
            Some(SingleLocation::Composite(pieces)) => {
                let bits: u64 = pieces.iter().map(|p| p.bits).sum();
                if !bits.is_multiple_of(8) {
                    return unsupported("a composite that is not a whole number of bytes");
                }
                read_parts(case, pieces.iter().map(|p| (p.bits, p.sources.iter().next())))
            }
            Some(SingleLocation::Simple(s)) => read_parts(case, std::iter::once((8 * simple_size(case, s), Some(s)))),
            None => unsupported("an empty location"),
        },
        other => other.clone(),
    }
}

/// What the synthesised core holds for register `regno` when the case
/// gives it no value: the program counter for the machine's pc register
/// ([`synth::program_counter`]), else the synthesiser's fill
/// ([`synth::regnotes::unset_register`]) as long as the register (its
/// target size); `None` for a register the core has no slot for, or a
/// target that is not synthesised.
fn unset_fill(ctx: &dwarfcheck_core::context::Context, regno: u64) -> Option<Vec<u8>> {
    use crate::synth::{self, machine::Machine};
    let machine = Machine::of(ctx.target.arch)?;
    machine.slot(regno)?;
    let reg_bytes = ctx.target.register(regno).map_or(8, |r| r.bits as usize / 8);
    if regno == machine.pc_register() {
        let mut pc = synth::program_counter(machine, ctx).to_le_bytes().to_vec();
        pc.resize(reg_bytes, 0);
        return Some(pc);
    }
    Some(synth::regnotes::unset_register(regno, reg_bytes))
}

/// Reads `(bits, source)` parts in order, bit by bit, into bytes.
fn read_parts<'a>(case: &ExprCase, parts: impl Iterator<Item = (u64, Option<&'a Source>)>) -> Outcome {
    let ctx = &case.ctx;
    // Per bit: Some(bit) known, None undefined.
    let mut bits: Vec<Option<bool>> = Vec::new();
    for (n, src) in parts {
        let src = match src {
            Some(s) => s,
            None => return Outcome::Failed(Failure::Unsupported { what: "a part without a place".into() }),
        };
        let (first_bit, bytes): (u64, Result<Vec<u8>, Outcome>) = match src {
            Source::Undefined => {
                bits.extend(std::iter::repeat_n(None, n as usize));
                continue;
            }
            Source::ImplicitPointer { .. } => {
                return Outcome::Failed(Failure::Unsupported { what: "an implicit pointer inside a composite".into() })
            }
            Source::Implicit { bytes, bit_offset } => (*bit_offset, Ok(bytes.clone())),
            Source::Register { regno, bit_offset } => {
                let len = (bit_offset % 8 + n).div_ceil(8) as usize;
                let mut out = vec![0u8; len];
                let at = (bit_offset / 8) as usize;
                let r = match ctx.read_register(*regno, at, &mut out) {
                    Ok(()) => Ok(out),
                    // A register the case leaves out holds the synthesiser's
                    // fill in the core file; the reference's answer did not
                    // read it, so the debugger must show that fill.
                    Err(
                        dwarfcheck_core::context::ContextError::RegisterUnavailable(_)
                        | dwarfcheck_core::context::ContextError::Missing(_),
                    ) if unset_fill(ctx, *regno).is_some() => {
                        let fill = unset_fill(ctx, *regno).unwrap_or_default();
                        fill.get(at..at + len).map(<[u8]>::to_vec).ok_or(Outcome::Failed(Failure::EvalError {
                            rule: rule("debugger:past-storage-end"),
                            at: None,
                        }))
                    }
                    Err(_) => Err(Outcome::Failed(Failure::EvalError {
                        rule: rule("debugger:register-unreadable"),
                        at: None,
                    })),
                };
                (bit_offset % 8, r)
            }
            Source::Memory { aspace, bit_addr, .. } => {
                let len = ((bit_addr % 8) as u64 + n).div_ceil(8) as usize;
                let mut out = vec![0u8; len];
                let addr = u64::try_from(bit_addr / 8).unwrap_or(u64::MAX);
                let r = ctx
                    .read_memory(dwarfcheck_core::context::MemoryStorage::shared(*aspace), addr, &mut out)
                    .map(|_| out)
                    .map_err(|_| {
                        Outcome::Failed(Failure::EvalError { rule: rule("debugger:memory-unreadable"), at: None })
                    });
                ((bit_addr % 8) as u64, r)
            }
        };
        let bytes = match bytes {
            Ok(b) => b,
            Err(o) => return o,
        };
        for i in 0..n {
            let b = first_bit + i;
            match bytes.get((b / 8) as usize) {
                Some(byte) => bits.push(Some(byte >> (b % 8) & 1 == 1)),
                // Past the end of implicit storage.
                None => {
                    return Outcome::Failed(Failure::EvalError { rule: rule("debugger:past-storage-end"), at: None })
                }
            }
        }
    }
    let bytes = bits
        .chunks(8)
        .map(|c| {
            if c.iter().any(|b| b.is_none()) {
                Byte::OptimizedOut
            } else {
                Byte::Known(c.iter().enumerate().fold(0u8, |acc, (i, b)| acc | (u8::from(b == &Some(true)) << i)))
            }
        })
        .collect();
    Observation::Bytes(bytes).to_outcome()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_bytes_become_implicit_and_undefined_parts() {
        let o = Observation::Bytes(vec![Byte::Known(1), Byte::Known(2), Byte::OptimizedOut, Byte::Known(3)]);
        let Outcome::Location(l) = o.to_outcome() else { panic!("a location") };
        let SingleLocation::Composite(p) = &l.places[0] else { panic!("a composite") };
        // Hand-derived: 16 bits of implicit [01 02], 8 undefined, 8 of [03].
        assert_eq!(p.iter().map(|p| p.bits).collect::<Vec<_>>(), [16, 8, 8]);
        assert_eq!(p[0].sources.iter().next(), Some(&Source::Implicit { bytes: vec![1, 2], bit_offset: 0 }));
        assert_eq!(p[1].sources.iter().next(), Some(&Source::Undefined));
        assert_eq!(p[2].sources.iter().next(), Some(&Source::Implicit { bytes: vec![3], bit_offset: 0 }));
    }
}
