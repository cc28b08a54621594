//! `dwarfcheck elf`: every location expression, location-list entry and FDE
//! of real binaries.
//!
//! Input files are extracted and checked unit by unit, in parallel
//! ([`dwarfcheck::runner::files`]); an input that cannot be read costs only
//! itself: the others are checked and the unreadable ones are listed at the
//! end of the report.

use super::ReportArgs;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::producers;
use dwarfcheck::runner::files::{Checked, FileChecker};
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
    /// Exit 1 when extraction warned about corrupted input.
    pub strict: bool,
    /// Time budget of each input file, extraction and checking together.
    pub time_budget: std::time::Duration,
    /// List the producer findings (`--findings`).
    pub findings: bool,
    /// Confirm them with llvm-dwarfdump (`--confirm`).
    pub confirm: bool,
    /// Write them as SARIF to this file (`--sarif`).
    pub sarif: Option<PathBuf>,
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
    let run = dwarfcheck::runner::Options { producer_findings: a.findings, ..args.real_input_options() };
    let checker =
        FileChecker { extract, budget: a.time_budget, reference: &Reference, fast: &Fast, others: &others, run };
    let Checked { files_read: read, counts: totals, mut summary, warnings, .. } = checker.check(&files);
    for w in &warnings {
        eprintln!("{w}");
    }
    if read == 0 {
        return super::no_input_read(&summary.unreadable_inputs);
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
    let code = if a.findings {
        let mut found = producers::gather(&std::mem::take(&mut summary.producer_findings));
        if a.confirm {
            producers::confirm::confirm_all(&mut found);
        }
        if let Some(path) = &a.sarif {
            let log = producers::sarif::log(&found);
            let text = serde_json::to_string_pretty(&log).unwrap_or_default();
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("dwarfcheck: cannot write {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
        let junit = || dwarfcheck::runner::report::junit(&title, &summary);
        let extra = serde_json::to_value(&found).ok().map(|v| ("findings", v));
        let code = args.finish_with(&title, &summary, junit, extra);
        if !args.json {
            print!("{}", producers::render::text(&found, summary.producer_finding_count));
        }
        code
    } else {
        args.finish(&title, &summary)
    };
    if a.strict_inputs && !summary.unreadable_inputs.is_empty() {
        eprintln!("dwarfcheck: {} input(s) could not be read (--strict-inputs)", summary.unreadable_inputs.len());
        return ExitCode::from(2);
    }
    if a.strict && !warnings.is_empty() {
        eprintln!("dwarfcheck: {} warning(s) about corrupted input (--strict)", warnings.len());
        return ExitCode::from(1);
    }
    code
}
