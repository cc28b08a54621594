//! GDB and LLDB as unwinders (`gdb-unwind`, `lldb-unwind`; issue 15;
//! docs/consumers.md): each CFI case with an unwinding part becomes an
//! executable and core file ([`crate::synth::cfi`]), the debugger lists the
//! frames of the core's thread, and what it shows is judged per step on
//! the frame's pc, its CFA, the caller pc, and every caller general
//! register the row has a rule for (x86-64: DWARF 0-16; AArch64: x0-x30
//! and sp, DWARF 0-31; [`Machine::general_registers`]). GDB runs as
//! `gdb-multiarch` where it is installed (it reads x86-64 and AArch64
//! cores alike), else as `gdb` for x86-64 cases only.
//!
//! Registers the row gives no rule are not compared: DWARF leaves their
//! default rule to the ABI (`cfi.table.default-rule`), and the debuggers
//! apply the psABI's (same value for callee-saved registers), not the
//! reference's undefined. Neither are vector registers (a core holds them,
//! but the debuggers read them as vectors), nor the CFA of the frame at
//! the base of the stack (GDB gives that frame no frame id, so `info
//! frame` shows no CFA for it), nor the caller registers of that frame
//! (there is no caller frame to read them in).
//!
//! Where unwinding leaves the code the case's CFI covers, the debuggers go
//! on with heuristics (prologue analysis, frame pointers); that is not
//! CFI, so the adapter stops there (`<consumer>:no-fde`), as the reference
//! does (`unwind.no-fde`).

use super::{Batches, Kind, Limits};
use crate::case::{Case, CfiCase, ExprCase, UnwindCase};
use crate::consumer::health::HealthReport;
use crate::consumer::unwinding::{memory, shown_steps};
use crate::consumer::{Answer, Consumer, ConsumerError, FailureClass, Support};
use crate::edition::Edition;
use crate::synth::cfi::{covered, fde_ranges, synthesise_unwind};
use crate::synth::machine::Machine;
use dwarfcheck_core::outcome::unwind::{CallerRegister, Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::{CfiOutcome, Failure, Outcome, SingleLocation, Source};
use dwarfcheck_core::rules::RuleId;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;

/// The GDB unwinding probe (GDB's Python API).
pub const PROBE_GDB: &str = concat!(include_str!("gdb_inferior.py"), include_str!("probe_gdb_unwind.py"));
/// The LLDB unwinding probe (LLDB's SB API).
pub const PROBE_LLDB: &str = concat!(include_str!("lldb_core.py"), include_str!("probe_lldb_unwind.py"));

/// Most frames a debugger lists when the case sets no limit.
const MAX_FRAMES: u32 = 64;

/// The CFA both sides give the frame at the base of the stack (not shown).
const BASE_CFA: u64 = 0;

/// GDB or LLDB as an unwinder.
pub struct DebuggerUnwind {
    runs: Batches,
    /// Answers of prepared cases, by origin and name; `None`: not run, the
    /// debugger was down.
    cache: Mutex<HashMap<String, Option<Unwind>>>,
}

impl std::fmt::Debug for DebuggerUnwind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, program) = self.runs.program();
        f.debug_struct("DebuggerUnwind").field("kind", &kind).field("program", &program).finish()
    }
}

/// Consumer name of the unwinding adapter of `kind`.
pub fn name(kind: Kind) -> &'static str {
    match kind {
        Kind::Gdb => "gdb-unwind",
        Kind::Lldb => "lldb-unwind",
        Kind::Delve => "delve-unwind",
    }
}

fn key(c: &CfiCase) -> String {
    Batches::case_key(&c.origin, &c.name)
}

/// A caller register as the debuggers show it: a value (or none), no
/// location.
fn shown(bytes: Option<Vec<u8>>) -> CallerRegister {
    let location = Outcome::Failed(Failure::Unsupported { what: "debuggers show register values".into() });
    CallerRegister { location, bytes }
}

fn unwind_fault(rule: String) -> UnwindEnd {
    UnwindEnd::Fault { outcome: Outcome::Failed(Failure::EvalError { rule: RuleId::new(rule), at: None }) }
}

impl DebuggerUnwind {
    /// The debugger `kind` found on `PATH`.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when none of
    /// [`Kind::programs`] is on `PATH`.
    pub fn new(kind: Kind, limits: Limits) -> Result<Self, ConsumerError> {
        if kind == Kind::Delve {
            return Err(ConsumerError::Unknown { name: name(kind).into() });
        }
        Ok(DebuggerUnwind { runs: Batches::find(kind, limits, name(kind))?, cache: Mutex::new(HashMap::new()) })
    }

    /// Declared down after `n` runs in a row without an answer (0: never).
    pub fn down_after(mut self, n: u32) -> Self {
        self.runs.set_down_after(n);
        self
    }

    fn kind(&self) -> Kind {
        self.runs.program().0
    }

    fn probe(&self) -> &'static str {
        match self.kind() {
            Kind::Gdb => PROBE_GDB,
            Kind::Lldb => PROBE_LLDB,
            // Refused by `new`: Delve is judged on expressions only.
            Kind::Delve => "",
        }
    }

    /// Unwinds `cases` in batches of [`Limits::batch`], in parallel.
    fn run_all(&self, cases: &[(&CfiCase, &UnwindCase)]) -> Vec<Option<Unwind>> {
        let chunks: Vec<&[(&CfiCase, &UnwindCase)]> = cases.chunks(self.runs.limits().batch.max(1)).collect();
        chunks.par_iter().flat_map_iter(|c| self.run_batch(c)).collect()
    }

    fn run_batch(&self, cases: &[(&CfiCase, &UnwindCase)]) -> Vec<Option<Unwind>> {
        self.runs.run(
            cases.len(),
            &|i| key(cases[i].0),
            &|i, dir| self.job(cases[i].0, cases[i].1, i, dir),
            self.probe(),
            &|v| {
                let i = v.get("id").and_then(|i| i.as_u64()).unwrap_or(0) as usize;
                let (c, u) = cases[i.min(cases.len() - 1)];
                self.answer(c, u, v)
            },
            &|why| Unwind::fault(Outcome::Failed(Failure::ConsumerFault { what: why })),
        )
    }

    /// Synthesises case number `i` into `dir` and describes it for the
    /// probe; `Err`: an unsupported unwinding when it is not
    /// representable.
    fn job(&self, c: &CfiCase, u: &UnwindCase, i: usize, dir: &Path) -> Result<serde_json::Value, Unwind> {
        let unsupported = |what: String| Unwind::fault(Outcome::Failed(Failure::Unsupported { what }));
        let machine = Machine::for_target(c.section.target.arch, &c.section.target.name)
            .map_err(|e| unsupported(e.to_string()))?;
        let (kind, program) = self.runs.program();
        if !kind.reads(program, c.section.target.arch) {
            return Err(unsupported(format!("{} does not read {machine:?} cores", program.display())));
        }
        let exe = dir.join(format!("case{i}"));
        let core = dir.join(format!("case{i}.core"));
        let d = synthesise_unwind(c, u, &exe.display().to_string()).map_err(|e| unsupported(e.to_string()))?;
        std::fs::write(&exe, &d.executable).and_then(|_| std::fs::write(&core, &d.core)).map_err(|e| {
            Unwind::fault(Outcome::Failed(Failure::ConsumerFault { what: format!("writing the debuggee: {e}") }))
        })?;
        let frames = u.limit.unwrap_or(MAX_FRAMES).min(u.ctx.budgets.frames).min(MAX_FRAMES);
        let regs = machine.general_registers();
        Ok(serde_json::json!({ "id": i, "executable": exe, "core": core, "frames": frames, "regs": regs }))
    }

    /// One probe result line as an unwinding.
    fn answer(&self, c: &CfiCase, _u: &UnwindCase, v: &serde_json::Value) -> Unwind {
        let who = name(self.kind());
        if let Some(msg) = v.get("error").and_then(|e| e.as_str()) {
            let line: String = msg.lines().next().unwrap_or("").chars().take(160).collect();
            return Unwind { steps: Vec::new(), end: unwind_fault(format!("{who}:{line}")) };
        }
        let ranges = fde_ranges(&c.section);
        let empty = Vec::new();
        let frames = v.get("frames").and_then(|f| f.as_array()).unwrap_or(&empty);
        let stop = v.get("stop").and_then(|s| s.as_str()).unwrap_or("");
        let mut steps = Vec::new();
        for (n, f) in frames.iter().enumerate() {
            let num = |k: &str| f.get(k).and_then(|x| x.as_u64());
            let pc = num("pc").unwrap_or(0);
            if n == 0 && !covered(&ranges, pc) {
                return Unwind { steps, end: unwind_fault(format!("{who}:no-fde")) };
            }
            let registers: BTreeMap<u64, CallerRegister> = f
                .get("regs")
                .and_then(|r| r.as_object())
                .map(|r| {
                    r.iter()
                        .filter_map(|(k, x)| {
                            let regno = k.parse::<u64>().ok()?;
                            Some((regno, shown(x.as_u64().map(|b| b.to_le_bytes().to_vec()))))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let caller = num("caller");
            let mut step = Step {
                pc,
                lookup: 0,
                fde_offset: 0,
                cfa: memory(num("cfa").unwrap_or(BASE_CFA)),
                registers,
                caller_pc: caller,
            };
            match caller {
                None => {
                    // The base of the stack (GDB: "outermost"; LLDB does
                    // not tell the base from a fault), or a fault: a step
                    // the fault cut short is not one.
                    if stop.contains("outermost") || stop == "end" {
                        step.cfa = memory(BASE_CFA);
                        step.registers.clear();
                        steps.push(step);
                        return Unwind { steps, end: UnwindEnd::Base };
                    }
                    return Unwind { steps, end: unwind_fault(format!("{who}:{stop}")) };
                }
                Some(ra) => {
                    steps.push(step);
                    if !covered(&ranges, ra.wrapping_sub(1)) && !covered(&ranges, ra) {
                        return Unwind { steps, end: unwind_fault(format!("{who}:no-fde")) };
                    }
                }
            }
        }
        if stop == "limit" {
            Unwind { steps, end: UnwindEnd::Limit }
        } else {
            Unwind { steps, end: unwind_fault(format!("{who}:{stop}")) }
        }
    }
}

impl DebuggerUnwind {
    /// The known class of a disagreement on `c` (docs/consumers.md): GU2
    /// (GDB's PAC stripping of a high-half return address); LU6 (LLDB shows
    /// a signed x30 stripped), LU7 (LLDB strips an unsigned return
    /// address), LU2 to LU5 by the instruction the case's FDE
    /// holds. (LU1, a stack ended at a CFA that is not a multiple of 8, was
    /// withdrawn: LLDB had stopped at a caller pc in no loaded module, which
    /// the view now excuses; docs/consumers.md.)
    fn classify(&self, c: &CfiCase) -> Option<FailureClass> {
        let u = c.unwind.as_ref()?;
        let class = |id: &str, explanation: &str, anchor: &str| FailureClass {
            id: id.into(),
            explanation: explanation.into(),
            docs: Some(format!("docs/consumers.md#{anchor}")),
            report: None,
        };
        let signed = crate::consumer::unwinding::instructions_text(&c.section, c.fde_offset)
            .is_some_and(|t| t.contains("negate_ra_state"));
        match self.kind() {
            Kind::Gdb => {
                let reference = dwarfcheck_reference::unwind::unwind(&c.section, &*u.ctx, u.limit);
                let got = self.unwind(c, u)?;
                // A signed return address whose bit 55 is set: the
                // reference sets bits 63..48, GDB only clears the mask's.
                let high_half = reference.steps.iter().zip(&got.steps).any(
                    |(r, g)| matches!((r.caller_pc, g.caller_pc), (Some(a), Some(b)) if a != b && (a >> 55) & 1 == 1),
                );
                (signed && high_half).then(|| {
                    class(
                        "GU2",
                        "strips a signed return address by clearing its PAC mask's bits whatever bit 55 says: a \
                         high-half address (bit 55 set) does not get bits 63..48 set, and bits the mask leaves \
                         out (the top byte with Linux's mask) stay",
                        "gdb-unwind---consumers-gdb-unwind",
                    )
                })
            }
            Kind::Lldb => {
                let reference = dwarfcheck_reference::unwind::unwind(&c.section, &*u.ctx, u.limit);
                let got = self.unwind(c, u)?;
                // LU6: a signed return address: LLDB shows the caller's
                // x30 stripped, where the CFI restores the signed value.
                let view = self.unwind_view(c, &reference)?;
                let lr = crate::synth::aarch64::LR;
                let x30_differs = view.steps.iter().zip(&got.steps).any(|(r, g)| {
                    r.registers.get(&lr).zip(g.registers.get(&lr)).is_some_and(|(a, b)| a.bytes != b.bytes)
                });
                if signed && x30_differs {
                    return Some(class(
                        "LU6",
                        "shows the caller's x30 with its pointer authentication code stripped, where the CFI \
                         restores the signed value saved on the stack (only the caller pc is stripped)",
                        "lldb-unwind---consumers-lldb-unwind",
                    ));
                }
                // LU7: an unsigned return address with bits in the PAC
                // mask: LLDB clears them all the same.
                let mask = crate::synth::aarch64::PAC_MASK;
                let stripped_unsigned =
                    reference.steps.iter().zip(&got.steps).any(
                        |(r, g)| matches!((r.caller_pc, g.caller_pc), (Some(a), Some(b)) if a != b && b == a & !mask),
                    );
                if !signed && stripped_unsigned {
                    return Some(class(
                        "LU7",
                        "strips the pointer authentication bits from every return address on an AArch64 core \
                         with pointer authentication, also where the CFI says it is not signed (RA_SIGN_STATE 0)",
                        "lldb-unwind---consumers-lldb-unwind",
                    ));
                }
                // LU2 to LU5: the FDE holds an instruction LLDB applies
                // otherwise (minimal cases in specs/cases/consumers/libunwind.yaml).
                let text = crate::consumer::unwinding::instructions_text(&c.section, c.fde_offset)?;
                let (id, explanation) = if text.contains("DW_CFA_undefined") {
                    (
                        "LU2",
                        "keeps the frame's own value for a register whose rule is undefined (DWARF 5 §6.4.1: it \
                             has no value in the caller)",
                    )
                } else if text.contains("DW_CFA_val_offset") {
                    (
                        "LU3",
                        "does not apply a DW_CFA_val_offset rule (the caller's value CFA+N); the register keeps \
                             its value",
                    )
                } else if text.contains("DW_CFA_offset: rsp") || text.contains("DW_CFA_offset: reg7 ") {
                    ("LU4", "ignores a rule for rsp: the caller's rsp is always the CFA (as libunwind's U3)")
                } else if text.contains("DW_CFA_register") {
                    (
                        "LU5",
                        "applies a DW_CFA_register rule with the caller's value of its source register, not \
                             the frame's (as libunwind's U7)",
                    )
                } else {
                    return None;
                };
                let mut found = class(id, explanation, "lldb-unwind---consumers-lldb-unwind");
                // LU3 was implemented upstream after LLVM 19.
                if id == "LU3" {
                    found.report = Some("https://github.com/llvm/llvm-project/pull/150732".into());
                }
                Some(found)
            }
            Kind::Delve => None,
        }
    }
}

/// Whether DWARF register `regno` is a general register of `machine`
/// that the debuggers' caller registers are compared on.
fn compared(machine: Machine, regno: u64) -> bool {
    machine.general_registers().iter().any(|(n, _)| *n == regno)
}

/// The bytes a debugger shows for a caller register whose reference value
/// is `r`: its value; else, when it is the top frame's general register
/// `n` that the case does not give, the synthesiser's fill of `n` (which
/// the core holds); else none.
fn shown_value(machine: Machine, u: &UnwindCase, r: &CallerRegister) -> Option<Vec<u8>> {
    if let Some(b) = &r.bytes {
        return Some(b.clone());
    }
    let Outcome::Location(loc) = &r.location else { return None };
    match loc.places.as_slice() {
        [SingleLocation::Simple(Source::Register { regno, bit_offset: 0 })]
            if compared(machine, *regno) && !u.ctx.registers.contains_key(regno) =>
        {
            Some(crate::synth::regnotes::unset_register(*regno, 8))
        }
        _ => None,
    }
}

impl Consumer for DebuggerUnwind {
    fn name(&self) -> &str {
        name(self.kind())
    }

    /// CFI cases with an unwinding part, DWARF 5 and GNU input.
    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu], expr: false, cfi: true }
    }

    fn evaluate(&self, _case: &ExprCase) -> Outcome {
        Outcome::Failed(Failure::Unsupported { what: format!("{} is judged on unwinding only", self.name()) })
    }

    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: format!("{} is judged on unwinding only", self.name()) })
    }

    fn prepare(&self, cases: &[Case]) {
        let support = self.supports();
        let todo: Vec<(&CfiCase, &UnwindCase)> = cases
            .iter()
            .filter_map(|c| match c {
                Case::Cfi(c) if support.editions.contains(&crate::edition::of_cfi_case(c)) => {
                    c.unwind.as_ref().map(|u| (c, u))
                }
                _ => None,
            })
            .collect();
        if todo.is_empty() {
            return;
        }
        let answers = self.run_all(&todo);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        for ((c, _), a) in todo.iter().zip(answers) {
            cache.insert(key(c), a);
        }
    }

    /// The prepared answer, or a run of its own; a case not run because
    /// the debugger is down gives a `ConsumerFault`.
    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        let cached = self.cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key(case)).cloned();
        let answer = match cached {
            Some(a) => a,
            None => self.run_batch(&[(case, u)]).pop().flatten(),
        };
        Some(answer.unwrap_or_else(|| {
            Unwind::fault(Outcome::Failed(Failure::ConsumerFault {
                what: format!("{}: not run, the debugger is down", self.name()),
            }))
        }))
    }

    /// Per step: pc, CFA, caller pc, and the caller's general registers
    /// ([`Machine::general_registers`]) that the row has a rule for, by
    /// value ([`shown_value`]).
    /// No lookup address or FDE offset. A fault ends it whatever its kind,
    /// and a last step the fault cut short (no caller pc) is not counted.
    /// At the base of the stack the last frame's CFA and caller registers
    /// are not compared. LLDB does not say why a stack ends: for it a
    /// fault that leaves the last frame without a caller pc is the end of
    /// the stack too.
    fn unwind_view(&self, case: &CfiCase, reference: &Unwind) -> Option<Unwind> {
        let u = case.unwind.as_ref()?;
        let machine = Machine::of(case.section.target.arch)?;
        let mut steps = shown_steps(reference, |s| {
            let registers = s
                .registers
                .iter()
                .filter(|(n, _)| compared(machine, **n))
                .map(|(n, r)| (*n, shown(shown_value(machine, u, r))))
                .collect();
            (s.cfa.clone(), registers)
        });
        let mut end = reference.end.clone();
        let cut_short = matches!(end, UnwindEnd::Fault { .. }) && steps.last().is_none_or(|s| s.caller_pc.is_none());
        // Where the CFI ends the adapter stops for either debugger.
        let no_fde = matches!(&end, UnwindEnd::Fault { outcome: Outcome::Failed(Failure::EvalError { rule, .. }) }
            if rule.as_str() == "unwind.no-fde");
        // LLDB lists no frame for a pc in no loaded module: where the
        // reference's last caller pc is outside the code the executable
        // maps (every FDE's range), LLDB's stack ends at that step, and
        // only what it lists is compared (docs/consumers.md, lldb-unwind).
        let code = fde_ranges(&case.section);
        let caller_unmapped = steps
            .last()
            .and_then(|s| s.caller_pc)
            .is_some_and(|ra| !covered(&code, ra) && !covered(&code, ra.wrapping_sub(1)));
        if self.kind() == Kind::Lldb && no_fde && caller_unmapped {
            if let Some(last) = steps.last_mut() {
                last.caller_pc = None;
            }
            end = UnwindEnd::Base;
        } else if cut_short && self.kind() == Kind::Lldb && !no_fde {
            // LLDB lists the frame it could not unwind as the last one,
            // with no caller: the same as the base of the stack.
            if steps.is_empty() {
                let Some(pc) = dwarfcheck_core::context::MachineState::pc(&*u.ctx) else {
                    return Some(Unwind { steps, end });
                };
                let cfa = memory(BASE_CFA);
                steps.push(Step { pc, lookup: 0, fde_offset: 0, cfa, registers: BTreeMap::new(), caller_pc: None });
            }
            end = UnwindEnd::Base;
        } else if cut_short {
            steps.pop();
        }
        if end == UnwindEnd::Base {
            if let Some(last) = steps.last_mut() {
                last.cfa = memory(BASE_CFA);
                last.registers.clear();
            }
        }
        Some(Unwind { steps, end })
    }

    fn health(&self) -> Option<HealthReport> {
        Some(self.runs.health())
    }

    fn version(&self) -> Option<String> {
        let (kind, program) = self.runs.program();
        Some(kind.version(program))
    }

    fn failure_class(&self, case: &Case, _reference: Answer<'_>, _answer: Answer<'_>) -> Option<FailureClass> {
        let Case::Cfi(c) = case else { return None };
        self.classify(c)
    }
}
