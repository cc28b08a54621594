//! `dwarfcheck elf`: every location expression, location-list entry and FDE
//! of real binaries.
//!
//! Each input file is extracted and checked in turn, so that an input that
//! cannot be read costs only itself: the others are checked and the
//! unreadable ones are listed at the end of the report.

use super::ReportArgs;
use dwarfcheck::case::Case;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::Consumer;
use dwarfcheck::elf::Counts;
use dwarfcheck::runner::{self, InputNote, Options, Summary};
use std::path::PathBuf;
use std::process::ExitCode;

/// What `elf` does besides the report options.
pub struct ElfArgs {
    /// The ELF files (default: this executable).
    pub files: Vec<PathBuf>,
    /// Seed of the synthetic machine state.
    pub seed: u64,
    /// Vendor profile name forced on every expression and CFI program.
    pub vendor: Option<String>,
    /// FDEs per frame section that are also unwound.
    pub unwind_samples: usize,
    /// Exit 2 when any input cannot be read (not only when none can).
    pub strict_inputs: bool,
    /// Time budget of each input file, extraction and checking together.
    pub time_budget: std::time::Duration,
}

pub fn elf(a: ElfArgs, args: &ReportArgs) -> ExitCode {
    let files = if a.files.is_empty() {
        match std::env::current_exe() {
            Ok(p) => vec![p],
            Err(e) => return super::input_error(format!("cannot find this executable: {e}")),
        }
    } else {
        a.files
    };
    let others = match args.consumers() {
        Ok(o) => o,
        Err(e) => return super::input_error(e),
    };
    let vendor = match a.vendor.as_deref().map(|n| (n, dwarfcheck_core::encoding::VendorProfile::by_name(n))) {
        None => None,
        Some((_, Some(v))) => Some(v),
        Some((n, None)) => {
            return super::input_error(format!(
                "unknown vendor profile `{n}`; expected one of {}",
                dwarfcheck_core::encoding::VendorProfile::NAMES.join(", ")
            ))
        }
    };
    let extract =
        dwarfcheck::elf::Options { seed: a.seed, vendor, unwind_samples: a.unwind_samples, ..Default::default() };
    let keep_details = if args.json { 0 } else { 1000 };
    let run = Options { gates: args.gate.clone(), progress: !args.json, keep_details };
    let mut summary = Summary::default();
    let mut totals = Counts::default();
    let mut read = 0usize;
    for f in &files {
        match check_file(f, &extract, a.time_budget, &run, &others) {
            Ok((counts, s)) => {
                read += 1;
                totals += counts;
                summary.absorb(s, keep_details);
            }
            Err(note) => summary.unreadable_inputs.push(note),
        }
    }
    if read == 0 {
        for n in &summary.unreadable_inputs {
            eprintln!("dwarfcheck: {}: {}", n.input, n.reason);
        }
        return super::input_error("no input could be read");
    }
    let split = if totals.split_units + totals.skeletons_without_split > 0 {
        format!(
            " ({} split; skeleton units whose .dwo was not found: {})",
            totals.split_units, totals.skeletons_without_split
        )
    } else {
        String::new()
    };
    let title = format!(
        "dwarfcheck elf: {read} of {} file(s), {} units{split}: {} location expressions, {} location-list entries, {} FDEs (.eh_frame {}, .debug_frame {}; {} also unwound)",
        files.len(),
        totals.units,
        totals.expressions,
        totals.loclist_entries,
        totals.fdes(),
        totals.eh_frame_fdes,
        totals.debug_frame_fdes,
        totals.unwind_fdes
    );
    let code = args.finish(&title, &summary);
    if a.strict_inputs && !summary.unreadable_inputs.is_empty() {
        eprintln!("dwarfcheck: {} input(s) could not be read (--strict-inputs)", summary.unreadable_inputs.len());
        return ExitCode::from(2);
    }
    code
}

/// Extracts and checks one file within `budget`: its counts and summary
/// (with a note in [`Summary::unfinished_inputs`] when the budget ran out),
/// or why it could not be read. Warnings go to stderr.
fn check_file(
    f: &std::path::Path,
    extract: &dwarfcheck::elf::Options,
    budget: std::time::Duration,
    run: &Options,
    others: &[Box<dyn Consumer>],
) -> Result<(Counts, Summary), InputNote> {
    let deadline = std::time::Instant::now() + budget;
    let extract = dwarfcheck::elf::Options { deadline: Some(deadline), ..extract.clone() };
    let x = dwarfcheck::elf::extract(f, &extract).map_err(|e| InputNote {
        input: f.display().to_string(),
        reason: e.reason(),
        expr_cases_not_checked: 0,
        cfi_cases_not_checked: 0,
        units_not_read: 0,
    })?;
    for w in &x.warnings {
        eprintln!("{}: warning: {w}", f.display());
    }
    let mut cases: Vec<Case> = Vec::with_capacity(x.exprs.len() + x.cfi.len());
    cases.extend(x.exprs.into_iter().map(Case::Expr));
    cases.extend(x.cfi.into_iter().map(Case::Cfi));
    let mut s = runner::run_until(&cases, &Reference, &Fast, others, run, deadline);
    if x.counts.skeletons_without_split > 0 {
        s.unfinished_inputs.push(InputNote {
            input: f.display().to_string(),
            reason: format!(
                "{} skeleton unit(s) whose .dwo was not found (in a .dwo file or a .dwp beside): their locations are not checked",
                x.counts.skeletons_without_split
            ),
            expr_cases_not_checked: 0,
            cfi_cases_not_checked: 0,
            units_not_read: x.counts.skeletons_without_split,
        });
    }
    let left = x.unfinished.unwrap_or_default();
    if s.expr_cases_not_checked + s.cfi_cases_not_checked + left.units_not_read + left.frame_sections_not_read > 0 {
        let mut reason = format!("time budget of {} s ran out", budget.as_secs_f64());
        if left.frame_sections_not_read > 0 {
            reason.push_str(&format!("; {} frame section(s) not read", left.frame_sections_not_read));
        }
        s.unfinished_inputs.push(InputNote {
            input: f.display().to_string(),
            reason,
            expr_cases_not_checked: s.expr_cases_not_checked,
            cfi_cases_not_checked: s.cfi_cases_not_checked,
            units_not_read: left.units_not_read,
        });
    }
    Ok((x.counts, s))
}
