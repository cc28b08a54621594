//! Expressions side by side: gimli's `Evaluation` driven by the smallest
//! resume loop that answers every request from the machine state (as a
//! debugger built on gimli would), fast's own API, and the reference, each
//! over the same cases. No side converts its result into a dwarfcheck
//! outcome except the evaluators whose native result that is.

use crate::case::ExprCase;
use dwarfcheck_core::context::{MachineState, MemoryStorage, ResultKind};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::target::Endian;
use dwarfcheck_fast::expr::machine::{Entry, Location as FastLocation};
use dwarfcheck_fast::expr::{Facts, Program, Scratch, Stop};
use gimli::{EndianSlice, Evaluation, EvaluationResult, Location, Piece, RunTimeEndian, Value};
use std::hint::black_box;

type Slice<'a> = EndianSlice<'a, RunTimeEndian>;

/// The deepest frame-base or entry-value nesting the gimli loop follows.
const MAX_NESTING: u32 = 4;

/// gimli's encoding parameters for an expression evaluated in `state`:
/// DWARF 5, the unit's format, the state's address size and byte order.
pub fn gimli_encoding(state: &dyn MachineState) -> (gimli::Encoding, RunTimeEndian) {
    let format = match state.unit().map(|u| u.format) {
        Some(Format::Dwarf64) => gimli::Format::Dwarf64,
        _ => gimli::Format::Dwarf32,
    };
    let endian = match state.target().endian {
        Endian::Big => RunTimeEndian::Big,
        Endian::Little => RunTimeEndian::Little,
    };
    (gimli::Encoding { format, version: 5, address_size: state.address_bytes() }, endian)
}

/// One gimli evaluation of `expr` in `state`: a number derived from its
/// pieces (their count and locations), or `u64::MAX` when gimli fails.
pub fn gimli_eval(expr: &[u8], state: &dyn MachineState) -> u64 {
    let (encoding, endian) = gimli_encoding(state);
    match run(expr, state, encoding, endian, 0) {
        Ok(pieces) => pieces.iter().fold(pieces.len() as u64, |h, p| h.wrapping_mul(31).wrapping_add(digest(p))),
        Err(_) => u64::MAX,
    }
}

/// A number that depends on a piece's location.
fn digest(p: &Piece<Slice<'_>>) -> u64 {
    match p.location {
        Location::Register { register } => u64::from(register.0),
        Location::Address { address } => address,
        Location::Value { value } => value.to_u64(!0).unwrap_or(1),
        Location::Empty => 2,
        _ => 3,
    }
}

fn run<'a>(
    expr: &'a [u8],
    state: &dyn MachineState,
    encoding: gimli::Encoding,
    endian: RunTimeEndian,
    depth: u32,
) -> gimli::Result<Vec<Piece<Slice<'a>>>> {
    let mut eval = Evaluation::new(EndianSlice::new(expr, endian), encoding);
    let mut r = eval.evaluate()?;
    loop {
        r = match r {
            EvaluationResult::Complete => return Ok(eval.result()),
            EvaluationResult::RequiresMemory { address, size, .. } => {
                let mut b = [0u8; 8];
                let n = usize::from(size).min(8);
                state.read_memory(MemoryStorage::shared(0), address, &mut b[..n]).map_err(|_| unsupported())?;
                eval.resume_with_memory(Value::Generic(u64::from_le_bytes(b)))?
            }
            EvaluationResult::RequiresRegister { register, .. } => {
                eval.resume_with_register(Value::Generic(register_value(state, u64::from(register.0))?))?
            }
            EvaluationResult::RequiresFrameBase => {
                let fb = state.frame_base().ok_or_else(unsupported)?;
                let v = frame_base(fb, state, encoding, endian, depth)?;
                eval.resume_with_frame_base(v)?
            }
            EvaluationResult::RequiresTls(offset) => {
                eval.resume_with_tls(state.tls_base().ok_or_else(unsupported)?.wrapping_add(offset))?
            }
            EvaluationResult::RequiresCallFrameCfa => {
                eval.resume_with_call_frame_cfa(state.cfa().map_err(|_| unsupported())?.address)?
            }
            EvaluationResult::RequiresEntryValue(e) => {
                eval.resume_with_entry_value(Value::Generic(entry_value(e.0.slice(), state, endian)?))?
            }
            EvaluationResult::RequiresRelocatedAddress(a) => eval.resume_with_relocated_address(a)?,
            EvaluationResult::RequiresIndexedAddress { index, .. } => {
                eval.resume_with_indexed_address(state.debug_addr(index.0 as u64).map_err(|_| unsupported())?)?
            }
            EvaluationResult::RequiresBaseType(_) => eval.resume_with_base_type(gimli::ValueType::Generic)?,
            _ => return Err(unsupported()),
        };
    }
}

fn unsupported() -> gimli::Error {
    gimli::Error::UnsupportedEvaluation
}

/// The low 64 bits of register `regno`, least significant byte first.
fn register_value(state: &dyn MachineState, regno: u64) -> gimli::Result<u64> {
    let bytes = state.target().register(regno).map_or(8, |r| (r.bits / 8).min(8) as usize);
    let mut b = [0u8; 8];
    state.read_register(regno, 0, &mut b[..bytes]).map_err(|_| unsupported())?;
    Ok(u64::from_le_bytes(b))
}

/// The frame base the frame-base expression `fb` gives: a register's
/// contents, or an address.
fn frame_base(
    fb: &[u8],
    state: &dyn MachineState,
    encoding: gimli::Encoding,
    endian: RunTimeEndian,
    depth: u32,
) -> gimli::Result<u64> {
    if depth >= MAX_NESTING {
        return Err(unsupported());
    }
    match run(fb, state, encoding, endian, depth + 1)?.first().map(|p| p.location) {
        Some(Location::Register { register }) => register_value(state, u64::from(register.0)),
        Some(Location::Address { address }) => Ok(address),
        _ => Err(unsupported()),
    }
}

/// The value at entry of the register a lone `DW_OP_reg*`/`DW_OP_regx`
/// names: the calling frame's, by its CFI register rule.
fn entry_value(block: &[u8], state: &dyn MachineState, endian: RunTimeEndian) -> gimli::Result<u64> {
    let regno = match block {
        [op @ 0x50..=0x6f] => u64::from(op - 0x50),
        [0x90, rest @ ..] => gimli::leb128::read::unsigned(&mut EndianSlice::new(rest, endian))?,
        _ => return Err(unsupported()),
    };
    let caller = state.caller().map_err(|_| unsupported())?;
    let rule = caller.rules.get(&regno).unwrap_or(&caller.default_rule);
    let cfa = || caller.cfa.ok_or_else(unsupported);
    match rule {
        RegisterRule::SameValue => register_value(state, regno),
        RegisterRule::Register { register } => register_value(state, *register),
        RegisterRule::ValOffset { offset } => Ok(cfa()?.wrapping_add(*offset as u64)),
        RegisterRule::Offset { offset } => {
            let mut b = [0u8; 8];
            let at = cfa()?.wrapping_add(*offset as u64);
            state.read_memory(MemoryStorage::shared(0), at, &mut b).map_err(|_| unsupported())?;
            Ok(u64::from_le_bytes(b))
        }
        _ => Err(unsupported()),
    }
}

/// The cases laid out as a debugger holds them, with what is the same for
/// a whole unit computed once, outside any timed pass, for both sides.
///
/// Every expression's bytes are copied, in case order (the order of the
/// DIEs), into one buffer: a debugger reads them where they lie in its
/// mapping of `.debug_info`/`.debug_loclists`, not each from its own heap
/// allocation as the harness keeps them. Both sides read the same buffer
/// and ask the same machine state (`ExprCase::ctx`).
pub struct Prepared<'a> {
    /// The cases.
    pub cases: &'a [ExprCase],
    bytes: Vec<u8>,
    /// Per case: its expression, (start, end) in `bytes`, the index of its
    /// unit's parameters in `units`, and whether it is a location
    /// description attribute (no initial stack, location result kind: what
    /// gimli's resume loop evaluates every case as).
    spans: Vec<(u32, u32, u32, bool)>,
    /// The distinct units' parameters, for each side: gimli's encoding and
    /// byte order, fast's facts.
    units: Vec<((gimli::Encoding, RunTimeEndian), Facts<'a>)>,
}

impl<'a> Prepared<'a> {
    /// Prepares `cases`.
    pub fn new(cases: &'a [ExprCase]) -> Self {
        let mut bytes = Vec::with_capacity(cases.iter().map(|c| c.expr.len()).sum());
        let mut units: Vec<((gimli::Encoding, RunTimeEndian), Facts<'a>)> = Vec::new();
        let spans = cases
            .iter()
            .map(|c| {
                let start = bytes.len() as u32;
                bytes.extend_from_slice(&c.expr);
                let unit = (gimli_encoding(&*c.ctx), Facts::of(&*c.ctx));
                let same = |u: &((gimli::Encoding, RunTimeEndian), Facts<'_>)| {
                    u.0 == unit.0
                        && u.1.encoding == unit.1.encoding
                        && std::ptr::eq(u.1.target, unit.1.target)
                        && u.1.budgets == unit.1.budgets
                        && u.1.generic_type == unit.1.generic_type
                };
                let k = units.iter().position(same).unwrap_or_else(|| {
                    units.push(unit);
                    units.len() - 1
                });
                let location = c.ctx.initial_stack.is_empty() && c.ctx.result_kind == Some(ResultKind::Location);
                (start, bytes.len() as u32, k as u32, location)
            })
            .collect();
        Prepared { cases, bytes, spans, units }
    }

    /// Case `i`'s expression bytes and its unit's parameters.
    #[inline]
    fn case(&self, i: usize) -> (&[u8], &((gimli::Encoding, RunTimeEndian), Facts<'a>)) {
        let (a, b, k, _) = self.spans[i];
        (&self.bytes[a as usize..b as usize], &self.units[k as usize])
    }

    /// fast's own evaluation of case `i` (compiled into `program`): as a
    /// location description attribute when it is one
    /// (`Program::run_location`: the caller knows the attribute it
    /// evaluates, as gimli's caller does), else asking the state
    /// (`Program::run_with`).
    #[inline]
    pub fn fast_run(&self, i: usize, program: &Program, scratch: &mut Scratch) -> Result<Entry, Stop> {
        let (_, _, k, location) = self.spans[i];
        let (facts, state) = (&self.units[k as usize].1, &*self.cases[i].ctx);
        if location {
            program.run_location(facts, state, scratch)
        } else {
            program.run_with(facts, state, scratch)
        }
    }
}

/// gimli over every case: a number summed from each result.
#[inline(never)]
pub fn gimli_pass(p: &Prepared<'_>) -> u64 {
    p.cases.iter().enumerate().fold(0u64, |h, (i, c)| {
        let (expr, &((encoding, endian), _)) = p.case(i);
        let d = match run(black_box(expr), &*c.ctx, encoding, endian, 0) {
            Ok(pieces) => pieces.iter().fold(pieces.len() as u64, |h, p| h.wrapping_mul(31).wrapping_add(digest(p))),
            Err(_) => u64::MAX,
        };
        h.wrapping_add(d)
    })
}

/// fast over every case through its own API at its best: one `Program`
/// and one `Scratch` reused, results left in fast's own form
/// (`Program::run_with`).
#[inline(never)]
pub fn fast_pass(p: &Prepared<'_>, program: &mut Program, scratch: &mut Scratch) -> u64 {
    (0..p.cases.len()).fold(0u64, |h, i| {
        let (expr, (_, facts)) = p.case(i);
        program.recompile_with(black_box(expr), &facts.encoding);
        let d = match p.fast_run(i, program, scratch) {
            Ok(e) => entry_digest(&e),
            Err(_) => 7,
        };
        h.wrapping_add(d)
    })
}

/// How many cases each side evaluates without failing: (fast, gimli).
/// Printed with the figures, so that a side that gives up early (and is
/// fast for it) shows.
pub fn completed(p: &Prepared<'_>) -> (usize, usize) {
    let (mut program, mut scratch) = (Program::new(), Scratch::new());
    let mut n = (0, 0);
    for (i, c) in p.cases.iter().enumerate() {
        let (expr, ((encoding, endian), facts)) = p.case(i);
        debug_assert!(std::ptr::eq(facts.target, c.ctx.target.as_ref()));
        program.recompile_with(expr, &facts.encoding);
        n.0 += usize::from(p.fast_run(i, &program, &mut scratch).is_ok());
        n.1 += usize::from(run(expr, &*c.ctx, *encoding, *endian, 0).is_ok());
    }
    n
}

/// fast's one-off form, `evaluate` (its outcome built), over every case.
pub fn fast_outcome_pass(cases: &[ExprCase]) -> u64 {
    cases.iter().fold(0u64, |h, c| h.wrapping_add(kind(&dwarfcheck_fast::expr::evaluate(black_box(&c.expr), &*c.ctx))))
}

/// A number that depends on a fast result.
fn entry_digest(e: &Entry) -> u64 {
    match *e {
        Entry::Value(v) => v.lo as u64,
        Entry::Location(FastLocation::Register { regno, bit }) => regno ^ bit,
        Entry::Location(FastLocation::Memory { bit, .. }) => (bit >> 3) as u64,
        Entry::Location(_) => 5,
        Entry::ImplicitPointer(_) => 6,
    }
}

/// The reference over every case.
pub fn reference_pass(cases: &[ExprCase]) -> u64 {
    cases.iter().fold(0u64, |h, c| {
        let o = crate::consumer::builtin::with_reference_state(&c.ctx, |state| {
            dwarfcheck_reference::expr::evaluate(black_box(&c.expr), state)
        });
        h.wrapping_add(kind(&o))
    })
}

/// A number for an outcome's kind.
fn kind(o: &Outcome) -> u64 {
    match o {
        Outcome::Value(_) => 1,
        Outcome::Location(l) => 2 + l.places.len() as u64,
        Outcome::Failed(_) => 7,
    }
}
