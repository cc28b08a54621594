//! The backtrace of every thread of a core: frames unwound one at a time
//! with the fast unwinder and the CFI of the file each pc lies in, each
//! frame's function, and the values of its variables and parameters
//! evaluated by the fast evaluator against that frame's [`FrameState`].
//!
//! Conventions, as GDB's:
//! - frame k > 0 is looked up at its pc - 1 (inside the call instruction);
//! - a register the unwinding step does not list keeps its value from the
//!   frame below (the CFI has no rule for it: callee-saved registers the
//!   callee never touched, and registers gcc's interprocedural register
//!   allocation knows the callee leaves alone); a register the step lists
//!   without a value (undefined rule, unreadable slot) is unknown;
//! - `DW_OP_entry_value` reads the calling frame through a
//!   [`CallerFrame`] whose rules give the calling frame's callee-saved
//!   registers, stack pointer and return address, and the argument
//!   registers that the call site's `DW_TAG_call_site_parameter`s give
//!   (their `DW_AT_call_value` evaluated in the calling frame; DWARF 5
//!   §3.4.2); every other register of the calling frame is undefined there.

use crate::fast::{self, Unwinders};
use crate::process::Process;
use crate::scope::Where;
use crate::state::{frame0_registers, FrameState, Registers};
use crate::types::{self, Missing, Token};
use dwarfcheck_fast::context::{AttrValue, Attribute, CallerFrame};
use dwarfcheck_fast::encoding::leb128::write_uleb;
use dwarfcheck_fast::outcome::cfi::RegisterRule;
use dwarfcheck_fast::outcome::{NormalLocation, Outcome, SingleLocation, Source};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Most frames unwound per thread.
pub const MAX_FRAMES: usize = 256;

/// DWARF registers whose value in a calling frame is known at a call:
/// rbx, rbp, rsp, r12-r15 (callee-saved in the x86-64 psABI) and the
/// return address column.
const PRESERVED: [u64; 8] = [3, 6, 7, 12, 13, 14, 15, 16];

/// One variable or parameter of a frame, shown.
#[derive(Debug, Clone)]
pub struct Shown {
    /// Its name.
    pub name: String,
    /// Whether it is a formal parameter.
    pub parameter: bool,
    /// Its type's name.
    pub type_name: String,
    /// Its value laid out by type.
    pub value: Vec<Token>,
    /// Where the value came from: the evaluator's outcome (location,
    /// value or failure), a constant, or no location.
    pub source: String,
}

/// One frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Its pc: the thread's rip for frame 0, the return address for the
    /// others.
    pub pc: u64,
    /// Its CFA (byte address), if its unwinding step was made.
    pub cfa: Option<u64>,
    /// The function's name (DWARF, else ELF symbol).
    pub function: Option<String>,
    /// Its variables and parameters in scope, parameters first as the
    /// DWARF orders them.
    pub variables: Vec<Shown>,
}

/// The frames of one thread.
#[derive(Debug, Clone)]
pub struct ThreadTrace {
    /// The thread's LWP id.
    pub lwp: u32,
    /// The signal it stopped with (0: none).
    pub signal: u16,
    /// Frames, innermost first.
    pub frames: Vec<Frame>,
    /// Why unwinding stopped after the last frame.
    pub end: String,
}

/// One unwound frame before its variables are read.
struct Raw {
    pc: u64,
    lookup: u64,
    registers: Arc<Registers>,
    cfa: Option<u64>,
    subprogram: Option<usize>,
}

/// The backtraces of every thread of `process`, threads in note order.
pub fn backtrace(process: &Process) -> Vec<ThreadTrace> {
    let mut unwinders = Unwinders::new(process);
    process
        .core
        .threads
        .iter()
        .map(|t| {
            let (raw, end) =
                unwind_thread(process, &mut unwinders, frame0_registers(t, &process.target), u64::from(t.lwp));
            let states = frame_states(process, &raw, u64::from(t.lwp));
            let frames = raw
                .iter()
                .zip(&states)
                .map(|(r, s)| Frame {
                    pc: r.pc,
                    cfa: r.cfa,
                    function: process.function_name(r.lookup),
                    variables: variables(process, s),
                })
                .collect();
            ThreadTrace { lwp: t.lwp, signal: t.signal, frames, end }
        })
        .collect()
}

/// The CFA byte address a step's CFA location names.
fn cfa_address(loc: &NormalLocation) -> Option<u64> {
    match loc.places.first()? {
        SingleLocation::Simple(Source::Memory { aspace: 0, bit_addr, .. }) if bit_addr % 8 == 0 => {
            u64::try_from(bit_addr / 8).ok()
        }
        _ => None,
    }
}

/// Unwinds one thread from its frame-0 registers: the frames and why
/// unwinding stopped.
fn unwind_thread(process: &Process, unwinders: &mut Unwinders<'_>, regs0: Registers, lwp: u64) -> (Vec<Raw>, String) {
    let mut frames: Vec<Raw> = Vec::new();
    let pc0 = regs0.get(&16).and_then(|b| b.as_deref()?.get(..8)?.try_into().ok()).map(u64::from_le_bytes);
    let Some(pc0) = pc0 else {
        return (frames, "no pc".into());
    };
    let mut regs = Arc::new(regs0);
    let mut pc = pc0;
    let end = loop {
        let k = frames.len();
        if k == MAX_FRAMES {
            break format!("stopped after {MAX_FRAMES} frames");
        }
        let lookup = if k == 0 { pc } else { pc.wrapping_sub(1) };
        let subprogram = process.program.function_at(lookup);
        let state = FrameState {
            process,
            registers: regs.clone(),
            lookup_pc: lookup,
            cfa: None,
            subprogram,
            caller: None,
            thread: lwp,
        };
        let step = unwinders.step(&state);
        let mut raw = Raw { pc, lookup, registers: regs.clone(), cfa: None, subprogram };
        let step = match step {
            Ok(s) => s,
            Err(why) => {
                frames.push(raw);
                break format!("cannot unwind further: {why}");
            }
        };
        raw.cfa = cfa_address(&step.cfa);
        // A step that goes nowhere would repeat forever.
        let stuck = frames.last().is_some_and(|f| f.cfa == raw.cfa && f.pc == pc);
        frames.push(raw);
        if stuck {
            break "unwinding makes no progress".into();
        }
        let Some(caller_pc) = step.caller_pc else {
            break "base of the stack (return address undefined)".into();
        };
        let mut next = (*regs).clone();
        for (r, c) in step.registers {
            next.insert(r, c.bytes);
        }
        regs = Arc::new(next);
        pc = caller_pc;
    };
    (frames, end)
}

/// An expression rule giving a register the fixed `bytes`: the location
/// is implicit storage holding them (`DW_OP_implicit_value`).
fn fixed(bytes: &[u8]) -> RegisterRule {
    let mut expr = vec![0x9e];
    write_uleb(&mut expr, bytes.len() as u64);
    expr.extend_from_slice(bytes);
    RegisterRule::Expression { expr }
}

/// The frame states of a thread's frames, each with its calling frame
/// built from the outermost frame inwards (see the module docs).
fn frame_states<'p>(process: &'p Process, raw: &[Raw], lwp: u64) -> Vec<FrameState<'p>> {
    let mut states: Vec<FrameState<'p>> = raw
        .iter()
        .map(|r| FrameState {
            process,
            registers: r.registers.clone(),
            lookup_pc: r.lookup,
            cfa: r.cfa,
            subprogram: r.subprogram,
            caller: None,
            thread: lwp,
        })
        .collect();
    for k in (0..states.len().saturating_sub(1)).rev() {
        let outer = &states[k + 1];
        let mut rules = BTreeMap::new();
        for r in PRESERVED {
            if let Some(b) = outer.register(r) {
                rules.insert(r, fixed(b));
            }
        }
        let site = outer.subprogram.and_then(|s| process.program.call_site(s, raw[k + 1].pc));
        for (reg, value) in site.map(|s| process.program.call_site_parameters(s)).unwrap_or_default() {
            let out = fast::evaluate(Attribute::CallValue, AttrValue::Exprloc(value), outer);
            let (Outcome::Value(v), Some(r)) = (out, process.target.register(reg)) else { continue };
            let mut b = v.bytes;
            b.resize((r.bits / 8) as usize, 0);
            rules.insert(reg, fixed(&b));
        }
        let frame = CallerFrame {
            pc: Some(outer.lookup_pc),
            cfa: outer.cfa,
            cfa_aspace: 0,
            frame_base: outer.subprogram.and_then(|s| process.program.frame_base(s)).map(<[u8]>::to_vec),
            rules,
            default_rule: RegisterRule::Undefined,
            caller: outer.caller.clone(),
            unwound: false,
        };
        states[k].caller = Some(Arc::new(frame));
    }
    states
}

/// The variables and parameters in scope in the frame `state` describes.
fn variables(process: &Process, state: &FrameState<'_>) -> Vec<Shown> {
    let Some(sub) = state.subprogram else { return Vec::new() };
    let info = &process.program.info;
    let address_size = info.units[info.dies[sub].unit].address_size;
    process
        .program
        .variables(sub, state.lookup_pc)
        .into_iter()
        .map(|v| {
            let size =
                v.ty.and_then(|t| types::size_of(info, t, address_size)).unwrap_or(0).min(types::MAX_OBJECT_BYTES)
                    as usize;
            let (bytes, source) = object_bytes(state, &v.location, size);
            let value = match v.ty {
                Some(t) => types::lay_out(info, t, &bytes, address_size),
                None => vec![Token::Leaf(None, types::Scalar::Missing(Missing::Failed("no type".into())))],
            };
            Shown { name: v.name, parameter: v.parameter, type_name: types::name(info, v.ty), value, source }
        })
        .collect()
}

/// The `size` bytes of an object whose value is `location`, evaluated
/// in `state`, and a description of where they came from.
fn object_bytes(state: &FrameState<'_>, location: &Where<'_>, size: usize) -> (Vec<Result<u8, Missing>>, String) {
    let value = match location {
        Where::Expr(e) => AttrValue::Exprloc(e),
        Where::List(o) => AttrValue::LocList { offset: *o },
        Where::ListX(i) => AttrValue::LocListX { index: *i },
        Where::Const(b) => {
            let bytes = (0..size).map(|i| b.get(i).copied().ok_or(Missing::OptimizedOut)).collect();
            return (bytes, "constant".into());
        }
        Where::Nowhere => return (vec![Err(Missing::OptimizedOut); size], "no location".into()),
    };
    let outcome = fast::evaluate(Attribute::Location, value, state);
    let source = outcome.to_string();
    let bytes = match outcome {
        Outcome::Value(v) => (0..size).map(|i| v.bytes.get(i).copied().ok_or(Missing::OptimizedOut)).collect(),
        Outcome::Location(loc) => read_location(state, &loc, size),
        Outcome::Failed(f) => vec![Err(Missing::Failed(f.to_string())); size],
    };
    (bytes, source)
}

/// Reads `size` bytes through a location description: the first of its
/// single locations (they all hold the value), a composite part by part.
fn read_location(state: &FrameState<'_>, loc: &NormalLocation, size: usize) -> Vec<Result<u8, Missing>> {
    let mut out = Vec::with_capacity(size);
    match loc.places.first() {
        Some(SingleLocation::Simple(src)) => read_source(state, src, size, &mut out),
        Some(SingleLocation::Composite(pieces)) => {
            for p in pieces {
                if out.len() >= size {
                    break;
                }
                if p.bits % 8 != 0 {
                    let n = size - out.len();
                    out.extend(std::iter::repeat_n(Err(Missing::Failed("a part that is not whole bytes".into())), n));
                    break;
                }
                let want = usize::try_from(p.bits / 8).unwrap_or(usize::MAX).min(size - out.len());
                match p.sources.first() {
                    Some(src) => read_source(state, src, want, &mut out),
                    None => out.extend(std::iter::repeat_n(Err(Missing::OptimizedOut), want)),
                }
            }
        }
        None => {}
    }
    out.resize(size, Err(Missing::OptimizedOut));
    out
}

/// Appends `n` bytes read from one place of non-composite storage.
fn read_source(state: &FrameState<'_>, src: &Source, n: usize, out: &mut Vec<Result<u8, Missing>>) {
    let not_whole = || Err(Missing::Failed("a location that is not at a whole byte".into()));
    match src {
        Source::Memory { aspace: 0, bit_addr, .. } if bit_addr % 8 == 0 => {
            let Ok(addr) = u64::try_from(bit_addr / 8) else {
                out.extend(std::iter::repeat_n(Err(Missing::Unreadable(u64::MAX)), n));
                return;
            };
            let mut buf = vec![0u8; n];
            if state.process.core.read_memory(addr, &mut buf).is_ok() {
                out.extend(buf.into_iter().map(Ok));
            } else {
                for i in 0..n as u64 {
                    let mut b = [0u8];
                    let a = addr.wrapping_add(i);
                    out.push(state.process.core.read_memory(a, &mut b).map(|()| b[0]).map_err(Missing::Unreadable));
                }
            }
        }
        Source::Register { regno, bit_offset } if bit_offset % 8 == 0 => {
            let start = usize::try_from(bit_offset / 8).unwrap_or(usize::MAX);
            let reg = state.register(*regno);
            for i in 0..n {
                out.push(match reg {
                    None => Err(Missing::Register(*regno)),
                    Some(b) => start.checked_add(i).and_then(|j| b.get(j).copied()).ok_or(Missing::OptimizedOut),
                });
            }
        }
        Source::Implicit { bytes, bit_offset } if bit_offset % 8 == 0 => {
            let start = usize::try_from(bit_offset / 8).unwrap_or(usize::MAX);
            for i in 0..n {
                out.push(start.checked_add(i).and_then(|j| bytes.get(j).copied()).ok_or(Missing::OptimizedOut));
            }
        }
        Source::ImplicitPointer { .. } => out.extend(std::iter::repeat_n(Err(Missing::ImplicitPointer), n)),
        Source::Undefined => out.extend(std::iter::repeat_n(Err(Missing::OptimizedOut), n)),
        _ => out.extend(std::iter::repeat_n(not_whole(), n)),
    }
}

/// The backtraces as text: per thread its LWP id and signal, per frame its
/// number, pc, function and CFA, then its parameters and variables with
/// their types, values and where the values came from.
pub fn render(threads: &[ThreadTrace]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for t in threads {
        let _ = writeln!(out, "thread {} (signal {}):", t.lwp, t.signal);
        for (i, f) in t.frames.iter().enumerate() {
            let name = f.function.as_deref().unwrap_or("??");
            let cfa = f.cfa.map(|c| format!("  [CFA {c:#x}]")).unwrap_or_default();
            let _ = writeln!(out, "  #{i:<2} {:#018x} in {name}{cfa}", f.pc);
            for v in &f.variables {
                let kind = if v.parameter { "param" } else { "local" };
                let _ = writeln!(
                    out,
                    "        {kind} {} {} = {}    ({})",
                    v.type_name,
                    v.name,
                    types::render(&v.value),
                    v.source
                );
            }
        }
        let _ = writeln!(out, "  end: {}", t.end);
    }
    out
}
