//! Debuggers as expression consumers: GDB, LLDB and Delve, judged through
//! a synthesised executable and core file per case (issues 6 and 15;
//! docs/debuggers.md).
//!
//! For each case the reference's outcome shapes the variable
//! ([`observe::plan`]), [`crate::synth`] writes the two files, and a
//! debugger in batch mode runs a Python probe over many cases at once
//! ([`gdb`], [`lldb`]): it loads each pair, prints the variable and writes one
//! JSON line per case. Batches run in parallel on rayon's pool (one debugger
//! process per worker thread). A batch that crashes or overruns its time is
//! re-run case by case, so one bad case costs only itself
//! ([`Outcome::ConsumerFault`]). A debugger that gives no answer in time
//! (or does not start) for [`Health`]'s number of runs in a row is declared
//! down, and its remaining cases are not run; a crash on one case's input
//! does not count towards it (the debugger runs, and the crash is the
//! finding). The reference's outcome is compared as the
//! debugger can show it ([`observe::view`], through
//! [`Consumer::expr_view`]).

pub mod classes;
pub mod delve;
pub mod eu_stack;
pub mod gdb;
pub mod lldb;
pub mod observe;
pub mod rows;
pub mod unwind;

use crate::case::{Case, CfiCase, ExprCase};
use crate::consumer::external::process::{self, RunBudget, RunFault, TempDir};
use crate::consumer::health::{Health, HealthReport, DEFAULT_DOWN_AFTER};
use crate::consumer::stderr::{StderrLog, DEFAULT_CAP};
use crate::consumer::{Answer, Consumer, ConsumerError, FailureClass, Support};
use crate::edition::Edition;
use crate::synth::{self, VarShape};
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Arch;
use observe::{Byte, Observation};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Which debugger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// GNU GDB with its Python API (`gdb -batch -x`).
    Gdb,
    /// LLDB with its embedded Python (`lldb --batch -o "script ..."`).
    Lldb,
    /// Delve (`dlv core`), one process per case, driven by a Python probe.
    Delve,
}

impl Kind {
    /// Consumer name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Gdb => "gdb",
            Kind::Lldb => "lldb",
            Kind::Delve => "delve",
        }
    }

    /// Executables tried on `PATH`, in order. GDB: `gdb-multiarch` first
    /// (Debian's `gdb` is built for the host's architecture only and does
    /// not read AArch64 cores; the two are the same GDB otherwise), then
    /// `gdb`.
    pub fn programs(self) -> &'static [&'static str] {
        match self {
            Kind::Gdb => &["gdb-multiarch", "gdb"],
            Kind::Lldb => &["lldb-19", "lldb"],
            Kind::Delve => &["dlv"],
        }
    }

    /// The Debian package that has it.
    fn package(self) -> &'static str {
        match self {
            Kind::Gdb => "gdb-multiarch (or gdb, x86-64 only)",
            Kind::Lldb => "lldb-19 python3-lldb-19",
            Kind::Delve => "delve and python3",
        }
    }

    /// Whether the debugger at `program` reads executables and cores of
    /// `arch`: the one place that decides it. GDB reads AArch64 only when
    /// built for every architecture (`gdb-multiarch`, or a GDB whose name
    /// says so); LLDB 19 and Delve 1.20 read both. Other architectures are
    /// never synthesised.
    pub fn reads(self, program: &Path, arch: Arch) -> bool {
        match (self, arch) {
            (_, Arch::X86_64) => true,
            (Kind::Gdb, Arch::Aarch64) => {
                program.file_name().is_some_and(|n| n.to_string_lossy().contains("multiarch"))
            }
            (Kind::Lldb | Kind::Delve, Arch::Aarch64) => true,
            _ => false,
        }
    }

    fn probe(self) -> &'static str {
        match self {
            Kind::Gdb => gdb::PROBE,
            Kind::Lldb => lldb::PROBE,
            Kind::Delve => delve::PROBE,
        }
    }

    /// The program one batch in `dir` runs, with its arguments: the
    /// debugger at `program` running the probe, or for Delve `python3`
    /// running the probe, which starts `program` per case. `None`: Delve's
    /// probe has no `python3`.
    fn command(self, program: &Path, dir: &Path, probe: &Path) -> Option<(PathBuf, Vec<String>)> {
        match self {
            Kind::Gdb => Some((program.to_path_buf(), gdb::args(dir, probe))),
            Kind::Lldb => Some((program.to_path_buf(), lldb::args(dir, probe))),
            Kind::Delve => Some((delve::launcher()?, delve::args(dir, probe, program))),
        }
    }

    /// The first line of `program --version` (Delve: `dlv version`).
    pub fn version(self, program: &Path) -> String {
        let line = match self {
            Kind::Delve => {
                let dir = TempDir::new().ok();
                dir.and_then(|d| {
                    let out = process::run(program, &["version".as_ref()], d.path(), RunBudget::default()).ok()?;
                    out.text.lines().map(str::trim).find(|l| l.starts_with("Version")).map(|l| format!("Delve {l}"))
                })
            }
            _ => process::version_line(program),
        };
        line.unwrap_or_else(|| "unknown version".into())
    }
}

/// Limits of the debugger runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time one case may take, in a batch or alone.
    pub per_case: Duration,
    /// Cases per debugger process.
    pub batch: usize,
    /// Time a debugger may take to start, on top of its first case's.
    pub start: Duration,
}

impl Default for Limits {
    /// 10 s per case, 64 cases per process, 5 s to start.
    fn default() -> Self {
        Limits { per_case: Duration::from_secs(10), batch: 64, start: Duration::from_secs(5) }
    }
}

/// Bytes of a faulting debugger run's output kept in its log.
const FAULT_OUTPUT: usize = 4096;

/// Debugger processes over batches of jobs: the program, its limits,
/// its health and the log of the runs that faulted. Shared by the
/// expression adapter ([`Debugger`]) and the unwinding one
/// ([`unwind::DebuggerUnwind`]).
pub struct Batches {
    kind: Kind,
    program: PathBuf,
    limits: Limits,
    health: Health,
    /// The output of the runs that faulted (their ends).
    log: StderrLog,
}

/// GDB or LLDB as a consumer.
pub struct Debugger {
    runs: Batches,
    /// Answers of prepared cases, by [`key`]; `None`: not run, the
    /// debugger was down.
    cache: Mutex<HashMap<String, Option<Outcome>>>,
}

impl std::fmt::Debug for Debugger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Debugger").field("kind", &self.runs.kind).field("program", &self.runs.program).finish()
    }
}

/// A case's cache key: its origin and name.
fn key(case: &ExprCase) -> String {
    Batches::case_key(&case.origin, &case.name)
}

impl Debugger {
    /// The debugger found on `PATH`.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when none of
    /// [`Kind::programs`] is on `PATH`.
    pub fn new(kind: Kind, limits: Limits) -> Result<Self, ConsumerError> {
        let program = process::find_program(kind.programs()).ok_or(ConsumerError::NotInstalled {
            consumer: kind.name(),
            programs: kind.programs(),
            package: kind.package(),
        })?;
        Ok(Debugger::with_program(kind, program, limits))
    }

    /// The debugger at `program`, declared down after
    /// [`DEFAULT_DOWN_AFTER`] runs in a row without an answer.
    pub fn with_program(kind: Kind, program: PathBuf, limits: Limits) -> Self {
        Debugger { runs: Batches::new(kind, program, limits), cache: Mutex::new(HashMap::new()) }
    }

    /// The same debugger, declared down after `n` runs in a row without an
    /// answer (0: never).
    pub fn down_after(mut self, n: u32) -> Self {
        self.runs.health = Health::new(n);
        self
    }

    /// The executable used.
    pub fn program(&self) -> &Path {
        &self.runs.program
    }

    /// Evaluates `cases` in batches of [`Limits::batch`], in parallel.
    fn run_all(&self, cases: &[&ExprCase]) -> Vec<Option<Outcome>> {
        let chunks: Vec<&[&ExprCase]> = cases.chunks(self.runs.limits.batch.max(1)).collect();
        chunks.par_iter().flat_map_iter(|c| self.run_batch(c)).collect()
    }

    /// [`Batches::run`] over `cases` with the expression probe.
    fn run_batch(&self, cases: &[&ExprCase]) -> Vec<Option<Outcome>> {
        self.runs.run(
            cases.len(),
            &|i| format!("{}#{}", cases[i].origin, cases[i].name),
            &|i, dir| self.job(cases[i], i, dir),
            self.runs.kind.probe(),
            &|v| self.answer(v),
            &fault,
        )
    }
}

impl Batches {
    /// Batches of the first of [`Kind::programs`] of `kind` found on
    /// `PATH`, for the consumer named `consumer`.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when none is on `PATH`.
    pub fn find(kind: Kind, limits: Limits, consumer: &'static str) -> Result<Self, ConsumerError> {
        let program = process::find_program(kind.programs()).ok_or(ConsumerError::NotInstalled {
            consumer,
            programs: kind.programs(),
            package: kind.package(),
        })?;
        Ok(Batches::new(kind, program, limits))
    }

    /// The key a prepared case's answer is cached under: its origin and
    /// name.
    pub fn case_key(origin: &str, name: &str) -> String {
        format!("{origin}#{name}")
    }

    /// The debugger `kind` at `program`, declared down after
    /// [`DEFAULT_DOWN_AFTER`] runs in a row without an answer.
    pub fn new(kind: Kind, program: PathBuf, limits: Limits) -> Self {
        Batches { kind, program, limits, health: Health::new(DEFAULT_DOWN_AFTER), log: StderrLog::new(DEFAULT_CAP) }
    }

    /// Declared down after `n` runs in a row without an answer (0: never).
    pub fn set_down_after(&mut self, n: u32) {
        self.health = Health::new(n);
    }

    /// The debugger and its executable.
    pub fn program(&self) -> (Kind, &Path) {
        (self.kind, &self.program)
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Faults, whether and why it went down, and the ends of the output of
    /// the runs that faulted.
    pub fn health(&self) -> HealthReport {
        self.health.report(self.log.excerpt())
    }

    /// Debugger processes running `probe` (Python) over `n` jobs, as few
    /// as possible. `prepare(i, dir)` writes job `i`'s files into the
    /// batch directory `dir` and gives its JSON description (with `"id":
    /// i`), or `Err` with its answer when there is nothing to run; `label`
    /// names job `i` in the log. The probe writes one JSON line per job to
    /// `results.jsonl`, turned into an answer by `answer`. A process that
    /// hangs (no answer for [`Limits::per_case`]) or crashes is blamed on
    /// the first job without an answer, which gets `fault(why)`, and a new
    /// process takes the rest. Once the debugger is down, the jobs left are
    /// not run (`None`).
    pub fn run<T: Clone>(
        &self,
        n: usize,
        label: &dyn Fn(usize) -> String,
        prepare: &dyn Fn(usize, &Path) -> Result<serde_json::Value, T>,
        probe_text: &str,
        answer: &dyn Fn(&serde_json::Value) -> T,
        fault: &dyn Fn(String) -> T,
    ) -> Vec<Option<T>> {
        let dir = match TempDir::new() {
            Ok(d) => d,
            Err(e) => return vec![Some(fault(format!("temporary directory: {e}"))); n],
        };
        let mut answers: Vec<Option<T>> = vec![None; n];
        let mut jobs = Vec::new();
        for (i, a) in answers.iter_mut().enumerate() {
            match prepare(i, dir.path()) {
                Ok(j) => jobs.push((i, j)),
                Err(o) => *a = Some(o),
            }
        }
        let probe = dir.path().join("probe.py");
        if let Err(e) = std::fs::write(&probe, probe_text) {
            return vec![Some(fault(format!("writing the probe: {e}"))); n];
        }
        let results = dir.path().join("results.jsonl");
        while !jobs.is_empty() {
            if self.health.is_down() {
                self.health.not_asked(jobs.len() as u64);
                break;
            }
            let list = serde_json::Value::Array(jobs.iter().map(|(_, j)| j.clone()).collect());
            let _ = std::fs::remove_file(&results);
            if let Err(e) = std::fs::write(dir.path().join("jobs.json"), list.to_string()) {
                return vec![Some(fault(format!("writing the jobs: {e}"))); n];
            }
            let Some((launcher, args)) = self.kind.command(&self.program, dir.path(), &probe) else {
                return vec![Some(fault(format!("{}: python3 is not on PATH", self.kind.name()))); n];
            };
            let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
            let budget = RunBudget {
                time: self.limits.per_case * jobs.len() as u32 + Duration::from_secs(30),
                output_bytes: 64 << 20,
            };
            // The first answer also waits for the debugger to start.
            let stall = self.limits.per_case + self.limits.start;
            let watch = process::Progress { file: &results, stall };
            let run = process::run_watched(&launcher, &args, dir.path(), budget, Some(watch));
            for line in std::fs::read_to_string(&results).unwrap_or_default().lines() {
                let v: serde_json::Value = match serde_json::from_str(line) {
                    Ok(v) => v,
                    Err(_) => continue,
                };
                if let Some(i) = v.get("id").and_then(|i| i.as_u64()).map(|i| i as usize) {
                    if i < answers.len() && answers[i].is_none() {
                        answers[i] = Some(answer(&v));
                        self.health.answered();
                    }
                }
            }
            jobs.retain(|(i, _)| answers[*i].is_none());
            if let Some((first, _)) = jobs.first() {
                let why = match &run {
                    Err(f) => format!("{} {f}", self.kind.name()),
                    Ok(o) => format!("{} gave no answer (exit {}): {}", self.kind.name(), o.code, last_line(&o.text)),
                };
                self.keep_output(&label(*first), &why, &dir.path().join("output.txt"));
                // No answer in time, or no start at all, says the debugger
                // may be down; a crash on this case's input does not.
                match &run {
                    Err(RunFault::Timeout(_) | RunFault::Spawn(_)) => {
                        self.health.faulted(&why);
                    }
                    _ => self.health.faulted_on_case(),
                }
                answers[*first] = Some(fault(why));
                jobs.remove(0);
            }
        }
        // Only the jobs left when the debugger went down have no answer.
        answers
    }

    /// Keeps the end of a faulting run's output (`file`) in the log, under
    /// a line naming the job (`label`) and the fault.
    fn keep_output(&self, label: &str, why: &str, file: &Path) {
        let text = std::fs::read(file).unwrap_or_default();
        let tail = &text[text.len().saturating_sub(FAULT_OUTPUT)..];
        self.log.push(format!("== {label}: {why}\n").as_bytes());
        self.log.push(tail);
        if !tail.ends_with(b"\n") {
            self.log.push(b"\n");
        }
    }
}

impl Debugger {
    /// Synthesises case number `i` into `dir` and describes it for the
    /// probe; `Err` is the case's outcome when there is nothing to run.
    fn job(&self, case: &ExprCase, i: usize, dir: &Path) -> Result<serde_json::Value, Outcome> {
        let arch = case.ctx.target.arch;
        if !self.runs.kind.reads(&self.runs.program, arch) {
            let what = format!("{} does not read {} cores", self.runs.program.display(), case.ctx.target.name);
            return Err(Outcome::Failed(Failure::Unsupported { what }));
        }
        let reference = crate::consumer::builtin::reference_outcome(case).0;
        let shape = observe::plan(case, &reference);
        let d = synth::synthesise(case, shape)
            .map_err(|e| Outcome::Failed(Failure::Unsupported { what: e.to_string() }))?;
        let exe = dir.join(format!("case{i}"));
        let core = dir.join(format!("case{i}.core"));
        std::fs::write(&exe, &d.executable)
            .and_then(|_| std::fs::write(&core, &d.core))
            .map_err(|e| fault(format!("writing the debuggee: {e}")))?;
        let (shape_name, size) = match shape {
            VarShape::Bytes { byte_size, .. } => ("bytes", byte_size),
            VarShape::Pointer => ("pointer", u64::from(case.ctx.address_bytes())),
        };
        Ok(serde_json::json!({ "id": i, "executable": exe, "core": core, "shape": shape_name, "size": size }))
    }

    /// One probe result line as an outcome.
    fn answer(&self, v: &serde_json::Value) -> Outcome {
        if v.get("synthetic").and_then(|s| s.as_bool()) == Some(true) {
            return Observation::SyntheticPointer.to_outcome();
        }
        if let Some(bytes) = v.get("bytes").and_then(|b| b.as_array()) {
            let obs = bytes
                .iter()
                .map(|b| match b.as_u64() {
                    Some(n) => Byte::Known(n as u8),
                    None => Byte::OptimizedOut,
                })
                .collect();
            return Observation::Bytes(obs).to_outcome();
        }
        let msg = v.get("error").and_then(|e| e.as_str()).unwrap_or("no answer");
        // LLDB's ways of saying the whole variable is optimized out: an
        // empty location, or a location list with no entry for the pc.
        if OPTIMIZED_OUT.iter().any(|m| msg.contains(m)) {
            let size = v.get("size").and_then(|s| s.as_u64()).unwrap_or(0) as usize;
            return Observation::Bytes(vec![Byte::OptimizedOut; size]).to_outcome();
        }
        error_outcome(self.runs.kind, msg)
    }
}

/// A debugger's error message as an evaluation error with rule
/// `<debugger>:<message>` (first line, addresses and numbers kept).
///
/// Messages that say the debugger does not implement an operation become
/// [`Outcome::Unsupported`] (counted, not failed; docs/architecture.md §8).
fn error_outcome(kind: Kind, msg: &str) -> Outcome {
    let line = msg.lines().next().unwrap_or("").trim();
    let line: String = line.chars().take(160).collect();
    if UNIMPLEMENTED.iter().any(|m| line.contains(m)) {
        return Outcome::Failed(Failure::Unsupported { what: format!("{}: {line}", kind.name()) });
    }
    Outcome::Failed(Failure::EvalError { rule: RuleId::new(format!("{}:{line}", kind.name())), at: None })
}

/// LLDB's messages for a variable with no location at the pc (DWARF 5
/// §2.6.1.1.1 empty location, §2.6.2 no matching list entry).
const OPTIMIZED_OUT: [&str; 2] = ["value may have been optimized out", "variable not available"];

/// Message fragments of "not implemented" (GDB's `dwarf2/expr.c`, LLDB's
/// `DWARFExpression.cpp` and Delve's `pkg/dwarf/op` wordings).
const UNIMPLEMENTED: [&str; 7] = [
    "Unhandled DWARF expression opcode",
    "Unhandled opcode",
    "unimplemented opcode",
    "Could not evaluate DW_OP_",
    "not available on integers of more than",
    "unsupported encoding in DW_OP_convert",
    "invalid instruction",
];

fn fault(what: String) -> Outcome {
    Outcome::Failed(Failure::ConsumerFault { what })
}

/// The line that says why a debugger stopped: its internal-error line if
/// it printed one, else its last non-empty line.
fn last_line(text: &str) -> String {
    let internal = text.lines().find(|l| l.contains("internal-error:"));
    let line = internal.or_else(|| text.lines().rev().find(|l| !l.trim().is_empty())).unwrap_or("");
    line.chars().take(240).collect()
}

impl Consumer for Debugger {
    fn name(&self) -> &str {
        self.runs.kind.name()
    }

    /// DWARF 5 and its GNU extensions, expressions only.
    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu], expr: true, cfi: false }
    }

    fn prepare(&self, cases: &[Case]) {
        let support = self.supports();
        let todo: Vec<&ExprCase> = cases
            .iter()
            .filter_map(|c| match c {
                Case::Expr(e) if support.editions.contains(&crate::edition::of_expr_case(e)) => Some(e),
                _ => None,
            })
            .collect();
        let answers = self.run_all(&todo);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        for (c, a) in todo.iter().zip(answers) {
            cache.insert(key(c), a);
        }
    }

    /// [`Consumer::try_evaluate`]; a case not run because the debugger is
    /// down gives `ConsumerFault`.
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        self.try_evaluate(case)
            .unwrap_or_else(|| fault(format!("{}: not run, the debugger is down", self.runs.kind.name())))
    }

    /// The prepared answer, or a run of its own; `None` when it was not
    /// run because the debugger is down.
    fn try_evaluate(&self, case: &ExprCase) -> Option<Outcome> {
        if let Some(a) = self.cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key(case)) {
            return a.clone();
        }
        self.run_batch(&[case]).pop().flatten()
    }

    /// Faults, whether and why it went down, and the ends of the output of
    /// the runs that faulted.
    fn health(&self) -> Option<HealthReport> {
        Some(self.runs.health())
    }

    fn expr_view(&self, case: &ExprCase, reference: &Outcome) -> Option<Outcome> {
        Some(observe::view(case, reference))
    }

    fn failure_class(&self, case: &Case, reference: Answer<'_>, answer: Answer<'_>) -> Option<FailureClass> {
        let (Case::Expr(c), Answer::Expr(r), Answer::Expr(a)) = (case, reference, answer) else { return None };
        let id = classes::known_class(self.runs.kind, c, r, a)?;
        let (explanation, report) = classes::describe(id)?;
        Some(FailureClass {
            id: id.to_string(),
            explanation: explanation.to_string(),
            docs: Some("docs/debuggers.md#classes-of-failure".to_string()),
            report: report.map(str::to_string),
        })
    }

    /// The first line of the debugger's `--version`.
    fn version(&self) -> Option<String> {
        Some(self.runs.kind.version(&self.runs.program))
    }

    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported {
            what: format!("{} is judged on expressions only", self.runs.kind.name()),
        })
    }
}
