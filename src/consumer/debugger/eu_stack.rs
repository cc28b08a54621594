//! elfutils' `eu-stack` as an unwinder (`eu-stack`; issue 15;
//! docs/consumers.md "eu-stack"): `eu-stack --core CORE -e EXE -n N` over
//! the synthesised files of a CFI case's unwinding
//! ([`crate::synth::cfi`]), one contained process per case. It prints the
//! pc of each frame and nothing else, so that is what it is judged on:
//! per step the frame's pc and the caller pc (the next frame's), and how
//! the list ends (the base of the stack: exit 0; the frame limit; a fault:
//! an error line after the frames).

use crate::case::{Case, CfiCase, ExprCase, UnwindCase};
use crate::consumer::external::process::{self, RunBudget, TempDir};
use crate::consumer::{Consumer, ConsumerError, Support};
use crate::edition::Edition;
use crate::synth::cfi::{covered, fde_ranges, synthesise_unwind};
use dwarfcheck_core::outcome::unwind::{Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::{CfiOutcome, Failure, NormalLocation, Outcome, RawLocation, Source};
use dwarfcheck_core::rules::RuleId;
use std::path::PathBuf;

/// Most frames asked for when the case sets no limit.
const MAX_FRAMES: u32 = 64;

/// eu-stack (elfutils' libdwfl) on synthesised cores.
#[derive(Debug)]
pub struct EuStack {
    program: PathBuf,
    budget: RunBudget,
}

/// The CFA both sides give every frame: eu-stack prints none.
fn no_cfa() -> NormalLocation {
    RawLocation::simple(Source::memory(0, 0)).normalize()
}

fn fault(rule: String) -> UnwindEnd {
    UnwindEnd::Fault { outcome: Outcome::Failed(Failure::EvalError { rule: RuleId::new(rule), at: None }) }
}

impl EuStack {
    /// `eu-stack` found on `PATH`, each run within `budget`.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] without it.
    pub fn new(budget: RunBudget) -> Result<Self, ConsumerError> {
        let program = process::find_program(&["eu-stack"]).ok_or(ConsumerError::NotInstalled {
            consumer: "eu-stack",
            programs: &["eu-stack"],
            package: "elfutils",
        })?;
        Ok(EuStack { program, budget })
    }

    /// The frames eu-stack lists for `u`, as an unwinding.
    fn frames(&self, c: &CfiCase, u: &UnwindCase) -> Unwind {
        let outcome = |f: Failure| Unwind::fault(Outcome::Failed(f));
        let dir = match TempDir::new() {
            Ok(d) => d,
            Err(e) => return outcome(Failure::ConsumerFault { what: format!("temporary directory: {e}") }),
        };
        let exe = dir.path().join("case");
        let core = dir.path().join("case.core");
        let d = match synthesise_unwind(c, u, &exe.display().to_string()) {
            Ok(d) => d,
            Err(e) => return outcome(Failure::Unsupported { what: e.to_string() }),
        };
        if let Err(e) = std::fs::write(&exe, &d.executable).and_then(|_| std::fs::write(&core, &d.core)) {
            return outcome(Failure::ConsumerFault { what: format!("writing the debuggee: {e}") });
        }
        let limit = u.limit.unwrap_or(MAX_FRAMES).min(u.ctx.budgets.frames).min(MAX_FRAMES);
        if limit == 0 {
            return Unwind { steps: Vec::new(), end: UnwindEnd::Limit };
        }
        let args = [
            "-q".to_string(),
            "-n".into(),
            limit.to_string(),
            format!("--core={}", core.display()),
            "-e".into(),
            exe.display().to_string(),
        ];
        let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        match process::run(&self.program, &args, dir.path(), self.budget) {
            Ok(o) => parse(&o.text, o.code, limit, &fde_ranges(&c.section)),
            Err(f) => outcome(Failure::ConsumerFault { what: format!("eu-stack {f}") }),
        }
    }
}

/// eu-stack's output `text` (exit `code`, at most `limit` frames asked
/// for) as an unwinding, stopped where a frame's pc (its lookup address,
/// pc - 1, for a caller) lies in no FDE of `ranges`.
///
/// Frame lines are `#N  0xPC ...`; any other line that names an error
/// (`eu-stack: ...`) is the fault that ended the list.
pub fn parse(text: &str, code: i32, limit: u32, ranges: &[(u64, u64)]) -> Unwind {
    let pcs: Vec<u64> = text
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('#')?;
            let mut w = rest.split_whitespace();
            w.next()?.parse::<u32>().ok()?;
            u64::from_str_radix(w.next()?.strip_prefix("0x")?, 16).ok()
        })
        .collect();
    // At `-n N` frames eu-stack says so ("shown max number of frames")
    // and exits 1.
    let at_limit = text.lines().any(|l| l.contains("shown max number of frames"));
    let error =
        text.lines().find(|l| l.starts_with("eu-stack:") && !l.contains("shown max number of frames")).map(|l| {
            // "eu-stack: dwfl_thread_getframes tid N at 0xPC in MODULE: why"
            l.rsplit(": ").next().unwrap_or(l).trim().to_string()
        });
    let mut steps: Vec<Step> = Vec::new();
    for (i, &pc) in pcs.iter().enumerate() {
        let lookup = if i == 0 { pc } else { pc.wrapping_sub(1) };
        if !covered(ranges, lookup) && !covered(ranges, pc) {
            if let Some(last) = steps.last_mut() {
                last.caller_pc = Some(pc);
            }
            return Unwind { steps, end: fault("eu-stack:no-fde".into()) };
        }
        if let Some(last) = steps.last_mut() {
            last.caller_pc = Some(pc);
        }
        steps.push(Step {
            pc,
            lookup: 0,
            fde_offset: 0,
            cfa: no_cfa(),
            registers: Default::default(),
            caller_pc: None,
        });
    }
    let end = match error {
        Some(e) => fault(format!("eu-stack:{e}")),
        None if at_limit || (code == 0 && pcs.len() as u32 >= limit) => UnwindEnd::Limit,
        None if code != 0 => fault(format!("eu-stack:exit {code}")),
        None => UnwindEnd::Base,
    };
    if end == UnwindEnd::Limit {
        // The last frame listed is the limit's: its caller was not asked.
        steps.pop();
    }
    Unwind { steps, end }
}

impl Consumer for EuStack {
    fn name(&self) -> &str {
        "eu-stack"
    }

    fn version(&self) -> Option<String> {
        process::version_line(&self.program)
    }

    /// CFI cases with an unwinding part, DWARF 5 and GNU input.
    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu], expr: false, cfi: true }
    }

    fn evaluate(&self, _case: &ExprCase) -> Outcome {
        Outcome::Failed(Failure::Unsupported { what: "eu-stack is judged on unwinding only".into() })
    }

    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: "eu-stack is judged on unwinding only".into() })
    }

    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        Some(self.frames(case, u))
    }

    /// The frames' pcs: per step the pc and the caller pc, no CFA and no
    /// register. At the frame limit the last step is not compared (eu-stack
    /// lists the limit's frames, not the caller of the last). A last step
    /// a fault cut short (no caller pc) is the frame eu-stack lists before
    /// its error, and stays.
    fn unwind_view(&self, _case: &CfiCase, reference: &Unwind) -> Option<Unwind> {
        let mut steps = crate::consumer::unwinding::shown_steps(reference, |_| (no_cfa(), Default::default()));
        if reference.end == UnwindEnd::Limit {
            steps.pop();
        }
        Some(Unwind { steps, end: reference.end.clone() })
    }

    /// ES2 of docs/consumers.md ("eu-stack"): a case with
    /// `DW_CFA_AARCH64_negate_ra_state` whose caller pcs differ (no PAC
    /// stripping). ES1: the reference's unwinding ends in a fault and
    /// eu-stack's at the base of the stack, without an error.
    fn failure_class(
        &self,
        case: &Case,
        _reference: crate::consumer::Answer<'_>,
        _answer: crate::consumer::Answer<'_>,
    ) -> Option<crate::consumer::FailureClass> {
        let Case::Cfi(c) = case else { return None };
        let u = c.unwind.as_ref()?;
        let reference = dwarfcheck_reference::unwind::unwind(&c.section, &*u.ctx, u.limit);
        let got = self.frames(c, u);
        let signed = crate::consumer::unwinding::instructions_text(&c.section, c.fde_offset)
            .is_some_and(|t| t.contains("negate_ra_state"));
        let other_caller = reference.steps.iter().zip(&got.steps).any(|(r, g)| r.caller_pc != g.caller_pc);
        if signed && other_caller {
            return Some(crate::consumer::FailureClass {
                id: "ES2".into(),
                explanation: "does not strip the pointer authentication code from a signed return address \
                              (DW_CFA_AARCH64_negate_ra_state): the caller pc keeps its PAC bits"
                    .into(),
                docs: Some("docs/consumers.md#eu-stack---consumers-eu-stack".into()),
                report: None,
            });
        }
        let silent = matches!(reference.end, UnwindEnd::Fault { .. }) && got.end == UnwindEnd::Base;
        silent.then(|| crate::consumer::FailureClass {
            id: "ES1".into(),
            explanation: "ends the stack without an error where a step fails (an unreadable return address or CFA \
                          register): the same output as the base of the stack"
                .into(),
            docs: Some("docs/consumers.md#eu-stack---consumers-eu-stack".into()),
            report: None,
        })
    }
}
