//! The nongnu libunwind (1.6.2, Debian `libunwind-dev`) as a consumer judged
//! on virtual unwinding (docs/consumers.md, "libunwind"): x86-64 CFI
//! through its remote API, in a C helper built at first use and run
//! contained.
//!
//! The helper (`unwind_remote.c`) builds a remote address space whose
//! memory is the case's memory (and its synthetic state), and for
//! `.eh_frame` the section at its address and an `.eh_frame_hdr` search
//! table written here ([`section_record`]); whose registers are the top
//! frame's; and whose `find_proc_info` is libunwind's own table search
//! (`.eh_frame`: the remote table; `.debug_frame`: the section and table
//! in the helper's memory, as libunwind reads a `.debug_frame` it loads). It
//! then calls `unw_step` until the base of the stack, an error or the frame
//! limit, and prints per step the frame's pc, its CFA, the caller pc and
//! the caller's registers 0-16 ([`parse`]).
//!
//! All unwinding cases of a run go to one helper process
//! ([`Consumer::prepare`]); a case the batch did not answer (the helper
//! crashed or hung on an earlier one) is asked again on its own.

use super::external::process::{self, Progress, RunBudget, TempDir};
use super::unwinding::{by_value, memory, register, values_view};
use super::{Answer, Consumer, ConsumerError, FailureClass, Support};
use crate::case::{Case, CfiCase, ExprCase, UnwindCase};
use crate::edition::Edition;
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::context::{Context, MachineState};
use dwarfcheck_core::encoding::hex::to_hex;
use dwarfcheck_core::outcome::unwind::{Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::{CfiOutcome, Failure, Outcome};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Arch;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod classes;

/// The helper's source.
const SOURCE: &str = include_str!("unwind_remote.c");

/// Registers libunwind keeps on x86-64: DWARF numbers 0 (rax) to 16 (rip,
/// the return address column), which are also its own numbers.
pub const REGISTERS: u64 = 17;

/// rip, the return address column: compared as the caller pc (libunwind
/// reads it as the caller pc, 0 at the base of the stack).
const RIP: u64 = 16;

/// Most steps libunwind is asked for when the case sets no limit (the
/// reference's own frames budget applies to it as well).
const MAX_STEPS: u32 = 64;

/// Cases one batch run is allowed [`RunBudget::time`] for (longer batches
/// get more).
const CASES_PER_BUDGET: usize = 256;

/// Libraries tried, in order, to link the helper: Debian's libunwind-dev
/// installs the remote x86-64 library under both names.
const LINK: [&str; 2] = ["-lunwind-generic", "-lunwind-x86_64"];

/// What identifies an unwinding across `prepare` and `unwind`: the
/// section's and the state's addresses, and the limit.
type Key = (usize, usize, Option<u32>);

/// One answer from a batch, with the `Arc`s that keep its key's addresses
/// from being reused while it is cached.
struct Cached {
    _section: Arc<CfiSection>,
    _ctx: Arc<Context>,
    unwind: Unwind,
}

/// libunwind 1.6.2 through the compiled helper.
pub struct Libunwind {
    program: PathBuf,
    /// Where the helper was built; removed on drop.
    _helper: TempDir,
    budget: RunBudget,
    answers: Mutex<HashMap<Key, Cached>>,
}

impl std::fmt::Debug for Libunwind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Libunwind").field("program", &self.program).finish()
    }
}

impl Libunwind {
    /// The helper compiled with the system's C compiler (`cc`, else `gcc`)
    /// against libunwind-dev, with `budget` per run of the helper.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when there is no compiler,
    /// the helper does not compile or link (no libunwind-dev), or it does
    /// not run.
    pub fn new(budget: RunBudget) -> Result<Self, ConsumerError> {
        let missing = || ConsumerError::NotInstalled {
            consumer: "libunwind",
            programs: &["cc ... -lunwind-generic"],
            package: "libunwind-dev and a C compiler (gcc)",
        };
        let compiler = process::find_program(&["cc", "gcc"]).ok_or_else(missing)?;
        let (dir, exe) = LINK
            .iter()
            .find_map(|lib| process::compile_c_helper(&compiler, "unwind_remote", SOURCE, &[lib], budget))
            .ok_or_else(missing)?;
        let l = Libunwind { program: exe, _helper: dir, budget, answers: Mutex::new(HashMap::new()) };
        l.version().ok_or_else(missing)?;
        Ok(l)
    }

    /// The helper's path.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Runs the helper once on `items` (each an unwinding, given its
    /// section and state) and returns the answers it completed, by index
    /// into `items`; the others are missing.
    ///
    /// Errors: the helper could not be run, or it crashed, hung or flooded
    /// its output (the fault, as text).
    fn run(&self, items: &[(&Arc<CfiSection>, &UnwindCase)]) -> Result<HashMap<usize, Unwind>, String> {
        let mut input = String::new();
        let mut last: Option<*const CfiSection> = None;
        for (i, (sec, u)) in items.iter().enumerate() {
            if last != Some(Arc::as_ptr(sec)) {
                input += &section_record(sec).map_err(|e| format!("internal: {e}"))?;
                last = Some(Arc::as_ptr(sec));
            }
            input += &case_record(i, u).map_err(|e| format!("internal: {e}"))?;
        }
        let dir = TempDir::new().map_err(|e| format!("temporary directory: {e}"))?;
        let path = dir.path().join("input.txt");
        std::fs::write(&path, input).map_err(|e| format!("cannot write the input: {e}"))?;
        let output = dir.path().join("output.txt");
        let rounds = items.len().div_ceil(CASES_PER_BUDGET).max(1) as u32;
        let budget = RunBudget { time: self.budget.time.saturating_mul(rounds), ..self.budget };
        let progress = Progress { file: &output, stall: self.budget.time };
        let out = process::run_watched(&self.program, &[path.as_os_str()], dir.path(), budget, Some(progress))
            .map_err(|e| e.to_string())?;
        if out.code != 0 {
            return Err(format!("exited with status {}", out.code));
        }
        Ok(parse(&out.text))
    }

    /// The unwinding of `u` through `case.section`: from the batch made by
    /// `prepare`, else from a run of its own.
    fn answer(&self, case: &CfiCase, u: &UnwindCase) -> Unwind {
        if let Err(what) = section_record(&case.section) {
            return Unwind::fault(Outcome::Failed(Failure::Unsupported { what }));
        }
        if let Err(what) = case_record(0, u) {
            return Unwind::fault(Outcome::Failed(Failure::Unsupported { what }));
        }
        let key = key(&case.section, u);
        if let Some(c) = self.answers.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return c.unwind.clone();
        }
        let fault = |what: String| {
            Unwind::fault(Outcome::Failed(Failure::ConsumerFault { what: format!("libunwind helper: {what}") }))
        };
        match self.run(&[(&case.section, u)]) {
            Ok(mut m) => m.remove(&0).unwrap_or_else(|| fault("no answer".into())),
            Err(e) => fault(e),
        }
    }
}

/// The cache key of an unwinding.
fn key(section: &Arc<CfiSection>, u: &UnwindCase) -> Key {
    (Arc::as_ptr(section) as usize, Arc::as_ptr(&u.ctx) as usize, u.limit)
}

/// The helper's section record for `sec` (see `unwind_remote.c`): the
/// section's bytes and a search table of (initial location, FDE) pairs
/// sorted by initial location, as 32-bit offsets.
///
/// - `.eh_frame`: offsets from the segment base, the lowest initial
///   location; the table is an `.eh_frame_hdr` table, served with the
///   section in the address space just past it.
/// - `.debug_frame`: initial locations from 0 (libunwind adds the segment
///   base to a `.debug_frame` FDE's range), FDEs by section offset.
///
/// Errors (why libunwind is not asked): not x86-64, or an offset that
/// does not fit the table's 32 bits.
pub fn section_record(sec: &CfiSection) -> Result<String, String> {
    if sec.target.arch != Arch::X86_64 {
        return Err("libunwind is judged on x86-64 only".into());
    }
    let eh = sec.kind == FrameKind::EhFrame;
    let mut fdes: Vec<(u64, u64)> = sec
        .fde_offsets()
        .filter_map(Result::ok)
        .filter_map(|o| sec.parse_fde(o).ok().map(|(f, _)| (f.pc_begin, o)))
        .collect();
    fdes.sort_unstable();
    let segbase = if eh { fdes.first().map_or(sec.address, |f| f.0) } else { 0 };
    let far = || "an FDE lies beyond the reach of a 32-bit search table".to_string();
    let len = sec.bytes.len() as u64;
    let table = sec.address.checked_add(len).and_then(|e| e.checked_add(15)).map(|e| e & !7).ok_or_else(far)?;
    let kind = if eh { 'e' } else { 'd' };
    let mut out =
        format!("S {kind} {:x} {len:x} {segbase:x} {table:x} {:x}\n{}\n", sec.address, fdes.len(), to_hex(&sec.bytes));
    for (begin, offset) in &fdes {
        let start = begin.checked_sub(segbase).filter(|s| *s <= i32::MAX as u64).ok_or_else(far)?;
        let fde = if eh { sec.address.wrapping_add(*offset).wrapping_sub(segbase) as i64 } else { *offset as i64 };
        let fde = i32::try_from(fde).map_err(|_| far())?;
        let _ = writeln!(out, "{start:x} {:x}", fde as u32);
    }
    Ok(out)
}

/// The helper's case record for unwinding `u` (see `unwind_remote.c`):
/// the frame limit, the pc, registers 0-16 as the state gives them (its
/// synthetic ones too), the state's shared memory of address space 0, and
/// the synthetic seed if any.
///
/// Errors: the state gives no pc.
pub fn case_record(id: usize, u: &UnwindCase) -> Result<String, String> {
    let state: &dyn MachineState = &*u.ctx;
    let pc = state.pc().ok_or("the state gives no pc")?;
    let steps = u.limit.unwrap_or(MAX_STEPS).min(u.ctx.budgets.frames).min(MAX_STEPS);
    let regs: Vec<(u64, u64)> = (0..REGISTERS).filter_map(|n| register(state, n).map(|v| (n, v))).collect();
    let mem: Vec<_> = u.ctx.memory.iter().filter(|m| m.aspace == 0 && m.thread.is_none() && m.lane.is_none()).collect();
    let seed = u.ctx.synthetic.map_or("-".to_string(), |s| format!("{s:x}"));
    let mut out = format!("C {id:x} {steps:x} {pc:x} {seed} {:x} {:x}\n", regs.len(), mem.len());
    for (n, v) in regs {
        let _ = writeln!(out, "{n:x} {v:x}");
    }
    for m in mem {
        let _ = writeln!(out, "{:x} {:x} {}", m.address, m.bytes.len(), to_hex(&m.bytes));
    }
    Ok(out)
}

/// libunwind's name for the error code `-code` (`UNW_E...`).
fn error_name(code: i64) -> String {
    let name = match -code {
        1 => "UNW_EUNSPEC",
        2 => "UNW_ENOMEM",
        3 => "UNW_EBADREG",
        4 => "UNW_EREADONLYREG",
        5 => "UNW_ESTOPUNWIND",
        6 => "UNW_EINVALIDIP",
        7 => "UNW_EBADFRAME",
        8 => "UNW_EINVAL",
        9 => "UNW_EBADVERSION",
        10 => "UNW_ENOINFO",
        _ => return format!("libunwind:{code}"),
    };
    format!("libunwind:{name}")
}

/// The unwindings the helper's output `text` completes (a `CASE` line, its
/// `STEP` lines and an `END` line), by case id. A case cut short (the
/// helper died in it) or malformed is left out.
pub fn parse(text: &str) -> HashMap<usize, Unwind> {
    let hex = |s: &str| u64::from_str_radix(s, 16).ok();
    let mut done = HashMap::new();
    let mut current: Option<(usize, Vec<Step>)> = None;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["CASE", id] => current = hex(id).map(|id| (id as usize, Vec::new())),
            ["STEP", ret, pc, cfa, ip, regs @ ..] if regs.len() == REGISTERS as usize => {
                let (Some((_, steps)), Ok(ret), Some(pc), Some(cfa), Some(ip)) =
                    (current.as_mut(), ret.parse::<i64>(), hex(pc), hex(cfa), hex(ip))
                else {
                    current = None;
                    continue;
                };
                let registers = regs
                    .iter()
                    .take(RIP as usize)
                    .enumerate()
                    .map(|(n, v)| (n as u64, by_value("libunwind", hex(v).map(|v| v.to_le_bytes().to_vec()))))
                    .collect();
                let caller_pc = (ret > 0).then_some(ip);
                steps.push(Step { pc, lookup: 0, fde_offset: 0, cfa: memory(cfa), registers, caller_pc });
            }
            ["END", kind, code] => {
                let (Some((id, steps)), Ok(code)) = (current.take(), code.parse::<i64>()) else { continue };
                let fault = |rule: String| UnwindEnd::Fault {
                    outcome: Outcome::Failed(Failure::EvalError { rule: RuleId::new(rule), at: None }),
                };
                let end = match *kind {
                    "base" => UnwindEnd::Base,
                    "limit" => UnwindEnd::Limit,
                    // libunwind found no FDE and would go on with its
                    // frame-chain heuristics, which are not CFI: the
                    // reference stops there too (unwind.no-fde).
                    "noinfo" => fault("libunwind:no-fde".into()),
                    "init" => fault(format!("libunwind:init:{}", error_name(code))),
                    _ => fault(error_name(code)),
                };
                done.insert(id, Unwind { steps, end });
            }
            _ => {}
        }
    }
    done
}

impl Consumer for Libunwind {
    fn name(&self) -> &str {
        "libunwind"
    }

    /// The helper's `--version` line (the libunwind-dev it was built
    /// against).
    fn version(&self) -> Option<String> {
        process::version_line(&self.program)
    }

    /// CFI cases (judged on their unwinding only: libunwind builds no row
    /// tables), DWARF 5 and GNU input.
    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu], expr: false, cfi: true }
    }

    fn evaluate(&self, _case: &ExprCase) -> Outcome {
        Outcome::Failed(Failure::Unsupported { what: "libunwind does not evaluate expressions".into() })
    }

    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: "libunwind builds no row tables; it unwinds".into() })
    }

    /// Every unwinding case libunwind can be asked (x86-64)
    /// in one run of the helper; the answers are cached for `unwind`.
    fn prepare(&self, cases: &[Case]) {
        let items: Vec<(&Arc<CfiSection>, &UnwindCase)> = cases
            .iter()
            .filter_map(|c| match c {
                Case::Cfi(c) => c.unwind.as_ref().map(|u| (&c.section, u)),
                Case::Expr(_) => None,
            })
            .filter(|(s, u)| section_record(s).is_ok() && case_record(0, u).is_ok())
            .collect();
        if items.is_empty() {
            return;
        }
        // A failed batch is not an answer: each case is then asked alone.
        let Ok(answers) = self.run(&items) else { return };
        let mut cache = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        for (i, unwind) in answers {
            let Some((s, u)) = items.get(i) else { continue };
            cache.insert(key(s, u), Cached { _section: Arc::clone(s), _ctx: Arc::clone(&u.ctx), unwind });
        }
    }

    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        Some(self.answer(case, u))
    }

    /// Per step: pc, CFA, caller pc, and the value of every caller
    /// register 0-15 the reference's step lists (its explicit rules, and
    /// rsp, which is the CFA unless a rule says otherwise); registers the
    /// row gives no rule, and registers above 16 (libunwind keeps none),
    /// are not compared, and rip (16) is compared as the caller pc; no
    /// lookup address or FDE offset. A last step cut
    /// short by the reference's fault is not counted
    /// ([`values_view`]).
    fn unwind_view(&self, _case: &CfiCase, reference: &Unwind) -> Option<Unwind> {
        Some(values_view(reference, "libunwind", |n, _| n < RIP))
    }

    /// U1 to U… of docs/consumers.md ("libunwind"), [`classes::known`].
    fn failure_class(&self, case: &Case, _reference: Answer<'_>, _answer: Answer<'_>) -> Option<FailureClass> {
        let Case::Cfi(c) = case else { return None };
        let u = c.unwind.as_ref()?;
        let answer = self.answer(c, u);
        let (id, explanation) = classes::known(c, u, &answer)?;
        Some(FailureClass {
            id: id.into(),
            explanation: explanation.into(),
            docs: Some("docs/consumers.md#libunwind---consumers-libunwind".into()),
            report: classes::report(id).map(str::to_string),
        })
    }
}
