//! Fair benchmarks of the fast evaluator against gimli (issue 14), shared
//! by `dwarfcheck bench` and `benches/vs_gimli.rs`: each peer through its
//! own API at its best, on the same input, in one process, in interleaved
//! rounds, reported as minimum and median per item.
//!
//! Families:
//! - `expr` ([`expr`]): every location expression and location-list entry
//!   of the debug files given (libc6-dbg's by default): gimli's
//!   `Evaluation` with a resume loop answering from the machine state,
//!   fast's `Program::run_native` with one program and scratch area
//!   reused (and its one-off `evaluate`, outcome built), the reference;
//! - `rows` ([`rows`]): every row of every FDE of each frame section;
//! - `unwind` ([`unwind`]): one virtual unwinding step from the start of
//!   every `stride`-th FDE of an `.eh_frame`: fast's lean step (CFA and
//!   return address) against gimli's, and fast's general step
//!   (`fast-step`: every caller register, as outcomes) for reference.

pub mod expr;
pub mod rounds;
pub mod rows;
pub mod unwind;

use crate::case::ExprCase;
pub use crate::elf::debug_files;
use crate::elf::{extract, Options};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_fast::expr::{Program, Scratch};
use rounds::{interleave, Contender, Timing};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Rounds per family (each contender runs once per round).
    pub rounds: usize,
    /// ELF files whose location expressions are evaluated.
    pub debug_files: Vec<PathBuf>,
    /// ELF files whose `.eh_frame`/`.debug_frame` rows are built and whose
    /// `.eh_frame` is unwound from.
    pub frame_files: Vec<PathBuf>,
    /// One unwinding sample every this many FDEs.
    pub unwind_stride: usize,
    /// Time the reference on the expressions too (slow).
    pub reference: bool,
    /// Run only the contenders of this name (for profiling one side).
    pub only: Option<String>,
}

impl Config {
    /// Drops the contenders `only` does not name.
    fn keep(&self, cs: &mut Vec<Contender<'_>>) {
        if let Some(name) = &self.only {
            cs.retain(|c| c.name == name);
        }
    }
}

/// Where llvm-19's shared library may be (`.ci/setup` installs it).
pub const LIBLLVM: &[&str] = &["/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1", "/usr/lib/llvm-19/lib/libLLVM.so.19.1"];

/// libc's shared object on this machine.
pub const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

/// The default frame files: libLLVM (when installed) and libc.
pub fn frame_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        LIBLLVM.iter().map(Path::new).find(|p| p.exists()).map(Path::to_path_buf).into_iter().collect();
    if Path::new(LIBC).exists() {
        out.push(PathBuf::from(LIBC));
    }
    out
}

/// The expression cases of `files` (files that cannot be read are named
/// in the returned warnings and skipped).
pub fn expr_cases(files: &[PathBuf]) -> (Vec<ExprCase>, Vec<String>) {
    let opts = Options { frames: false, ..Options::default() };
    let mut cases = Vec::new();
    let mut warnings = Vec::new();
    for f in files {
        match extract(f, &opts) {
            Ok(x) => cases.extend(x.exprs),
            Err(e) => warnings.push(format!("{}: {e}", f.display())),
        }
    }
    (cases, warnings)
}

/// The frame sections of `file` (`.eh_frame` first), with their FDE count.
pub fn frame_sections(file: &Path) -> Vec<(Arc<CfiSection>, usize)> {
    let opts = Options { expressions: false, ..Options::default() };
    let Ok(x) = extract(file, &opts) else { return Vec::new() };
    let mut out: Vec<(Arc<CfiSection>, usize)> = Vec::new();
    for c in &x.cfi {
        match out.iter_mut().find(|(s, _)| Arc::ptr_eq(s, &c.section)) {
            Some((_, n)) => *n += 1,
            None => out.push((c.section.clone(), 1)),
        }
    }
    out.sort_by_key(|(s, _)| s.kind != FrameKind::EhFrame);
    out
}

/// A short description of this machine: CPU model and logical cores.
pub fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} logical cores")
}

/// Runs every family of `cfg` and returns the report (a Markdown table per
/// family, with the machine, the rounds and the input counts).
pub fn run(cfg: &Config) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "machine: {}", machine());
    let _ = writeln!(out, "rounds: {} per family, interleaved (one pass of every contender per round)\n", cfg.rounds);

    let (cases, warnings) = expr_cases(&cfg.debug_files);
    for w in warnings {
        let _ = writeln!(out, "skipped: {w}");
    }
    if !cases.is_empty() {
        let prepared = expr::Prepared::new(&cases);
        let (mut program, mut scratch) = (Program::new(), Scratch::new());
        let mut cs = vec![
            Contender::new("fast", || expr::fast_pass(&prepared, &mut program, &mut scratch)),
            Contender::new("gimli", || expr::gimli_pass(&prepared)),
            Contender::new("fast-outcome", || expr::fast_outcome_pass(&cases)),
        ];
        if cfg.reference {
            cs.push(Contender::new("reference", || expr::reference_pass(&cases)));
        }
        cfg.keep(&mut cs);
        let t = interleave(&mut cs, cfg.rounds);
        let (fast_ok, gimli_ok) = expr::completed(&prepared);
        let what = format!(
            "expressions: {} location expressions and location-list entries of {} files \
             (evaluated without failure: fast {fast_ok}, gimli {gimli_ok})",
            cases.len(),
            cfg.debug_files.len()
        );
        table(&mut out, &what, "expression", cases.len(), &t);
    }

    for file in &cfg.frame_files {
        for (sec, fdes) in frame_sections(file) {
            let mut builder = dwarfcheck_fast::cfi::Builder::new();
            let mut g = rows::GimliRows::default();
            let mut cs = vec![
                Contender::new("fast", || rows::fast_pass(&mut builder, &sec)),
                Contender::new("gimli", || g.pass(&sec)),
            ];
            cfg.keep(&mut cs);
            let t = interleave(&mut cs, cfg.rounds);
            drop(cs);
            let mut count = dwarfcheck_fast::cfi::CountingSink::default();
            dwarfcheck_fast::cfi::Builder::new().run_section(&sec, &mut count);
            let what =
                format!("rows: {} of {} ({fdes} FDEs, {} rows)", kind_name(sec.kind), file.display(), count.rows);
            table(&mut out, &what, "row", count.rows as usize, &t);

            if sec.kind == FrameKind::EhFrame {
                let samples = unwind::Samples::new(&sec, cfg.unwind_stride);
                let Some(mut gu) = unwind::GimliUnwinder::new(&sec) else { continue };
                let mut fu = dwarfcheck_fast::unwind::Unwinder::new(&sec);
                let mut ff = dwarfcheck_fast::unwind::Unwinder::new(&sec);
                let mut cs = vec![
                    Contender::new("fast", || unwind::fast_pass(&mut fu, &samples)),
                    Contender::new("gimli", || gu.pass(&samples)),
                    Contender::new("fast-step", || unwind::fast_full_pass(&mut ff, &samples)),
                ];
                cfg.keep(&mut cs);
                let t = interleave(&mut cs, cfg.rounds);
                let what = format!(
                    "one-step unwinds: {} pcs of {} (every {}th FDE start, synthetic registers and memory)",
                    samples.pcs.len(),
                    file.display(),
                    cfg.unwind_stride
                );
                table(&mut out, &what, "step", samples.pcs.len(), &t);
            }
        }
    }
    out
}

fn kind_name(k: FrameKind) -> &'static str {
    match k {
        FrameKind::EhFrame => ".eh_frame",
        FrameKind::DebugFrame => ".debug_frame",
    }
}

/// One family's table: per contender, ns per item (min, median) and how
/// many times fast's median the contender's median is.
fn table(out: &mut String, what: &str, item: &str, items: usize, t: &[Timing]) {
    let _ = writeln!(out, "{what}");
    let _ = writeln!(out, "| contender | min ns/{item} | median ns/{item} | median ÷ fast's |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    let fast = t.iter().find(|x| x.name == "fast").map(|x| x.median_ns_per(items)).unwrap_or(f64::NAN);
    for x in t {
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.1} | {:.2} |",
            x.name,
            x.min_ns_per(items),
            x.median_ns_per(items),
            x.median_ns_per(items) / fast
        );
    }
    let _ = writeln!(out);
}

#[cfg(test)]
mod tests;
