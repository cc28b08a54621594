//! Fast virtual unwinding (hetero-2020 "Call Frame Information >
//! Structure of Call Frame Information"; DWARF 5 §6.4.1, §6.4.4; rules
//! `unwind.*` in `specs/rules/unwind.yaml`).
//!
//! Written apart from `reference::unwind`, with the same outcomes. What a
//! debugger would embed: [`Unwinder::new`] indexes a section's FDEs once
//! (sorted address ranges, binary search), then [`Unwinder::start`] gives
//! the top frame of a machine state and [`Unwinder::step`] unwinds one
//! frame at a time, reusing the row builder, the evaluation scratch area
//! and the rule buffers: the only allocations per step are the [`Step`] it
//! returns (its register map, locations and value bytes) and a copy of the
//! bytes of each rule that is a DWARF expression. [`Unwinder::step_summary`]
//! is the lean step of a debugger that wants a frame's CFA and return
//! address only: natively, without allocating, on the common path. Each
//! FDE's whole row table is built the first time it is used (its faults
//! are the step's); later steps through it stop at the row holding the
//! address. [`unwind`] walks to the end. The machine state is only asked ([`MachineState`]): registers and
//! memory are never copied. Addresses are byte addresses, register values
//! bytes in target order.
//!
//! Every location a step reports is in terms of the top frame's storage
//! (`frame.registers-through-cfi`): frame k's registers are read through
//! the locations step k-1 gave, never re-derived.
//!
//! [`UnwoundFrames`] gives an expression evaluation the CFA and calling
//! frames that virtually unwinding its machine state finds
//! (`unwind.context-from-cfi`).

mod frames;
mod index;
mod lean;

pub use frames::UnwoundFrames;
pub use index::FdeIndex;
pub use lean::StepSummary;

use crate::cfi::{to_rule, Builder, Cfa, FdeSpan, RowSink, Rule};
use crate::expr::unwind_frame::{CfaSpec, FrameEvaluation};
use dwarfcheck_core::cfi::{CfiSection, AARCH64_RA_SIGN_STATE};
use dwarfcheck_core::context::{self, ContextError, Element, MachineState, Overlay, ResultKind};
use dwarfcheck_core::outcome::cfi::{CfiOutcome, RegisterRule};
use dwarfcheck_core::outcome::unwind::{Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BudgetKind, Outcome};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_core::target::{Arch, Endian};
use std::collections::BTreeMap;

/// Virtually unwinds through `section` from the machine state `state` (its
/// program location, registers and memory are the top frame's), making at
/// most `limit` steps (`None`: until the base of the stack, bounded by the
/// state's `frames` budget). Indexes the section once per call; to unwind
/// many times, keep an [`Unwinder`].
pub fn unwind(section: &CfiSection, state: &dyn MachineState, limit: Option<u32>) -> Unwind {
    Unwinder::new(section).unwind(state, limit)
}

/// A frame to unwind.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'s> {
    /// Its program location (byte address).
    pub pc: u64,
    /// The address whose row applies (`unwind.lookup-address`).
    pub lookup: u64,
    /// The step that unwound the frame it called (its caller registers are
    /// this frame's registers); `None` for the top frame.
    pub callee: Option<&'s Step>,
}

/// The result of one [`Unwinder::step`].
#[derive(Debug, Clone)]
pub struct Stepped {
    /// The step made.
    pub step: Step,
    /// Whether the FDE used has a CIE with augmentation `S` (the caller's
    /// row is then looked up at its pc itself).
    pub signal_frame: bool,
    /// The frame's CFA: byte address (the memory location `step.cfa`).
    pub cfa_address: u64,
    /// The address space of `cfa_address`.
    pub cfa_aspace: u64,
    /// `Some` when unwinding ends after this step (base of the stack, or a
    /// return address that cannot be read).
    pub end: Option<UnwindEnd>,
}

impl Stepped {
    /// The calling frame, when there is one (`end` is `None`).
    pub fn caller(&self) -> Option<Frame<'_>> {
        let pc = self.step.caller_pc.filter(|_| self.end.is_none())?;
        let lookup = if self.signal_frame { pc } else { pc.wrapping_sub(1) };
        Some(Frame { pc, lookup, callee: Some(&self.step) })
    }
}

/// A reusable unwinder over one frame section.
#[derive(Debug)]
pub struct Unwinder<'a> {
    sec: &'a CfiSection,
    index: FdeIndex,
    builder: Builder,
    row: RowAt,
    /// `hot[i]`: what a step through `index.fdes[i]` reads, in one place.
    hot: Vec<Hot>,
    pub(crate) frame: FrameEvaluation,
}

/// What a step reads of one indexed FDE (a compact copy, so that a step
/// touches one record rather than the whole header).
#[derive(Debug, Clone, Copy)]
struct Hot {
    /// Its address range and instructions.
    span: FdeSpan,
    /// Its section offset.
    fde_offset: u64,
    /// Index of its CIE in `FdeIndex::cies`.
    cie: u32,
    /// Whether its whole row table has been built without fault, so that a
    /// step through it may stop at its row.
    checked: bool,
}

/// Captures the row that holds one address.
#[derive(Debug, Default)]
struct RowAt {
    at: u64,
    found: bool,
    cfa: Option<Cfa>,
    regs: Vec<(u64, Rule)>,
}

impl RowSink for RowAt {
    #[inline]
    fn row(&mut self, start: u64, end: u64, cfa: &Cfa, regs: &[(u64, Rule)], _section: &[u8]) {
        if !self.found && start <= self.at && self.at < end {
            self.found = true;
            self.cfa = Some(*cfa);
            self.regs.clear();
            self.regs.extend_from_slice(regs);
        }
    }
}

fn eval_error(rule: dwarfcheck_core::rules::RuleId) -> Outcome {
    Outcome::Failed(Failure::EvalError { rule, at: None })
}

/// A row table's fault as an unwinding end (`unwind.table-fault`).
fn table_fault(o: CfiOutcome) -> Outcome {
    match o {
        CfiOutcome::Failed(Failure::IllFormed { rule, at }) => Outcome::Failed(Failure::IllFormed { rule, at }),
        CfiOutcome::Failed(Failure::EvalError { rule, at }) => Outcome::Failed(Failure::EvalError { rule, at }),
        CfiOutcome::Failed(Failure::Budget { budget, at }) => Outcome::Failed(Failure::Budget { budget, at }),
        CfiOutcome::Failed(Failure::Unsupported { what }) => Outcome::Failed(Failure::Unsupported { what }),
        CfiOutcome::Failed(Failure::ConsumerFault { what }) => Outcome::Failed(Failure::ConsumerFault { what }),
        CfiOutcome::Table(_) => Outcome::Failed(Failure::Unsupported { what: "row table as a fault".into() }),
    }
}

impl<'a> Unwinder<'a> {
    /// Indexes the FDEs of `sec` (one walk over the section; FDEs whose
    /// headers do not parse are left out, `unwind.no-fde`).
    pub fn new(sec: &'a CfiSection) -> Self {
        let index = FdeIndex::build(sec);
        let hot = index
            .fdes
            .iter()
            .map(|f| Hot { span: FdeSpan::of(&f.fde), fde_offset: f.fde.offset, cie: f.cie, checked: false })
            .collect();
        Unwinder { sec, index, builder: Builder::new(), row: RowAt::default(), hot, frame: FrameEvaluation::new() }
    }

    /// The FDE index.
    pub fn index(&self) -> &FdeIndex {
        &self.index
    }

    /// The top frame of the machine state `state`: its program location.
    /// Forgets the working state of an earlier walk. Errors:
    /// `ctx.pc-missing` when `state` has no program location.
    pub fn start(&mut self, state: &dyn MachineState) -> Result<Frame<'static>, Outcome> {
        let pc = state.pc().ok_or(eval_error(R::CTX_PC_MISSING))?;
        self.frame.begin(None);
        Ok(Frame { pc, lookup: pc, callee: None })
    }

    /// Unwinds `frame` one step (rule `unwind.step`): finds its FDE, the
    /// row at `frame.lookup`, its CFA and its caller's registers. `state`
    /// is the machine state the walk started from ([`Unwinder::start`]):
    /// its registers and memory are the top frame's, read through the
    /// locations the steps before gave; its target, thread, lane, TLS base
    /// and budgets hold for every frame. Errors: the fault that ends the
    /// unwinding without a step (`unwind.no-fde`, a table fault, a CFA
    /// fault).
    pub fn step(&mut self, state: &dyn MachineState, frame: &Frame<'_>) -> Result<Stepped, Outcome> {
        self.step_from(&walk_state(state), frame)
    }

    /// [`Unwinder::step`] in `walk`, the [`walk_state`] of the machine
    /// state the walk started from (built once per walk).
    pub(super) fn step_from(&mut self, walk: &dyn MachineState, frame: &Frame<'_>) -> Result<Stepped, Outcome> {
        let sec = self.sec;
        let (i, cfa_rule) = self.row_at(frame.lookup)?;
        let fde = &self.index.fdes[i];
        let cie = &self.index.cies[fde.cie as usize];

        // Frame k's row rules, sorted; RA_SIGN_STATE kept apart.
        let aarch64 = sec.target.arch == Arch::Aarch64;
        self.frame.begin(frame.callee.map(|s| &s.registers));
        let rules = self.frame.rules_mut();
        let mut ra_signed = false;
        for (r, rule) in &self.row.regs {
            match rule {
                Rule::RaSigned(s) if aarch64 && *r == AARCH64_RA_SIGN_STATE => ra_signed = *s,
                _ if aarch64 && *r == AARCH64_RA_SIGN_STATE => {}
                _ => rules.push((*r, to_rule(rule, &sec.bytes))),
            }
        }
        rules.sort_unstable_by_key(|(r, _)| *r);
        if let Some(sp) = sec.target.stack_pointer() {
            if let Err(i) = rules.binary_search_by_key(&sp, |(r, _)| *r) {
                rules.insert(i, (sp, RegisterRule::ValOffset { offset: 0 }));
            }
        }
        let ra = cie.return_address_register;
        let ra_listed = rules.binary_search_by_key(&ra, |(r, _)| *r).is_ok();

        // Frame k's state: the walk's, at frame k's pc.
        let frame_state = Overlay::new(walk).with_pc(Some(frame.pc));

        // Frame k's CFA (`unwind.cfa.*`).
        let spec = match cfa_rule {
            Cfa::Reg { reg, off, aspace } => CfaSpec::Reg { reg, off, aspace },
            Cfa::Expr(s, l) => CfaSpec::Expr(&sec.bytes[s as usize..(s + l) as usize]),
            Cfa::None => return Err(Outcome::Failed(Failure::Unsupported { what: "row without CFA rule".into() })),
        };
        let frame_state = frame_state.with_cfa(Err(ContextError::Missing(Element::Cfa)));
        let (cfa, cfa_location) = self.frame.cfa(&frame_state, spec)?;
        let frame_state = frame_state.with_cfa(Ok(context::Cfa { address: cfa.addr, aspace: cfa.aspace }));

        // The caller's registers (`unwind.step.registers`, `unwind.sp-is-cfa`).
        let mut registers = BTreeMap::new();
        let mut ra_undefined = false;
        self.frame.registers(&frame_state, (!ra_listed).then_some(ra), |r, c, undefined| {
            if r == ra {
                ra_undefined = undefined;
            }
            registers.insert(r, c);
        });

        // The caller pc (`unwind.return-address`, `unwind.base-of-stack`).
        let big = sec.target.endian == Endian::Big;
        let (caller_pc, end) = match registers.get(&ra) {
            None => (None, Some(UnwindEnd::Base)),
            Some(c) => match (&c.location, &c.bytes) {
                (Outcome::Location(_), _) if ra_undefined => (None, Some(UnwindEnd::Base)),
                (Outcome::Location(_), Some(b)) => {
                    let pc = unsigned(b, big);
                    (Some(if aarch64 && ra_signed { strip_pac(pc) } else { pc }), None)
                }
                (Outcome::Location(_), None) => {
                    (None, Some(UnwindEnd::Fault { outcome: eval_error(R::UNWIND_RETURN_ADDRESS_UNREADABLE) }))
                }
                (fault, _) => (None, Some(UnwindEnd::Fault { outcome: fault.clone() })),
            },
        };
        let step = Step {
            pc: frame.pc,
            lookup: frame.lookup,
            fde_offset: fde.fde.offset,
            cfa: cfa_location,
            registers,
            caller_pc,
        };
        Ok(Stepped { step, signal_frame: cie.signal_frame, cfa_address: cfa.addr, cfa_aspace: cfa.aspace, end })
    }

    /// The row of the FDE that covers `lookup` (`unwind.step`), left in
    /// `self.row`: the FDE's position in the index and the row's CFA rule.
    /// The first time an FDE is used its whole table is built (a fault
    /// anywhere in it is the step's, `unwind.table-fault`, as in the
    /// reference); once it has built without fault, later steps stop at
    /// the row. Errors: `unwind.no-fde`, the table fault.
    fn row_at(&mut self, lookup: u64) -> Result<(usize, Cfa), Outcome> {
        let i = self.index.position(lookup).ok_or(eval_error(R::UNWIND_NO_FDE))?;
        let hot = self.hot[i];
        let cie = &self.index.cies[hot.cie as usize];
        self.row.at = lookup;
        self.row.found = false;
        if hot.checked {
            self.builder.build_span_until(self.sec, hot.span, cie, lookup, &mut self.row).map_err(table_fault)?;
        } else {
            self.builder.build_fde(self.sec, &self.index.fdes[i].fde, cie, &mut self.row).map_err(table_fault)?;
            self.hot[i].checked = true;
        }
        match self.row.cfa {
            Some(c) if self.row.found => Ok((i, c)),
            _ => Err(Outcome::Failed(Failure::Unsupported { what: "no row at the lookup address".into() })),
        }
    }

    /// Unwinds from `state` to the end (rules `unwind.*`): at most `limit`
    /// steps (end `Limit`), at most the state's `frames` budget of steps
    /// (end `Budget { Frames }`, `unwind.frames-budget`).
    pub fn unwind(&mut self, state: &dyn MachineState, limit: Option<u32>) -> Unwind {
        let frames = state.budgets().clamped().frames;
        let walk = walk_state(state);
        let top = match self.start(state) {
            Ok(f) => f,
            Err(o) => return Unwind::fault(o),
        };
        let (mut pc, mut lookup) = (top.pc, top.lookup);
        let mut steps: Vec<Step> = Vec::new();
        let mut k = 0u32;
        let end = loop {
            if Some(k) == limit {
                break UnwindEnd::Limit;
            }
            if k == frames {
                break UnwindEnd::Fault {
                    outcome: Outcome::Failed(Failure::Budget { budget: BudgetKind::Frames, at: None }),
                };
            }
            let frame = Frame { pc, lookup, callee: steps.last() };
            match self.step_from(&walk, &frame) {
                Err(outcome) => break UnwindEnd::Fault { outcome },
                Ok(st) => {
                    if repeats(steps.iter(), &st.step) {
                        break UnwindEnd::Fault { outcome: eval_error(R::UNWIND_REPEATED_FRAME) };
                    }
                    let next = st.caller().map(|f| (f.pc, f.lookup));
                    steps.push(st.step);
                    if let Some(end) = st.end {
                        break end;
                    }
                    let Some(n) = next else { break UnwindEnd::Base };
                    (pc, lookup) = n;
                }
            }
            k += 1;
        };
        Unwind { steps, end }
    }
}

/// The state every frame of a walk from `state` is evaluated in, before
/// its program location and CFA: the top frame's registers and memory
/// (frame k's registers are read through the locations the steps before
/// gave), the target, thread, lane, TLS base and budgets of `state`; no
/// unit, object, initial stack, frame base, result kind other than a
/// location, or caller.
fn walk_state(state: &dyn MachineState) -> Overlay<'_> {
    Overlay::new(state)
        .without_unit()
        .with_object(None)
        .with_initial_stack(&[])
        .with_frame_base(None)
        .with_caller(Err(ContextError::Missing(Element::Caller)))
        .with_result_kind(Some(ResultKind::Location))
}

/// Whether `step`'s frame has the program location and CFA of one of
/// `before` (rule `unwind.repeated-frame`: unwinding ends there).
pub(super) fn repeats<'s>(mut before: impl Iterator<Item = &'s Step>, step: &Step) -> bool {
    before.any(|s| s.pc == step.pc && s.cfa == step.cfa)
}

/// Register bytes in target order as an unsigned integer (its low 64 bits).
fn unsigned(b: &[u8], big: bool) -> u64 {
    let mut v = [0u8; 8];
    if big {
        let n = b.len().min(8);
        v[8 - n..].copy_from_slice(&b[b.len() - n..]);
        u64::from_be_bytes(v)
    } else {
        let n = b.len().min(8);
        v[..n].copy_from_slice(&b[..n]);
        u64::from_le_bytes(v)
    }
}

/// Removes an AArch64 pointer authentication code from a return address
/// (48-bit virtual addresses): bits 63..48 become copies of bit 55
/// (`unwind.aarch64.ra-sign-state`).
fn strip_pac(pc: u64) -> u64 {
    const HIGH: u64 = 0xffff_0000_0000_0000;
    if pc & (1 << 55) != 0 {
        pc | HIGH
    } else {
        pc & !HIGH
    }
}
