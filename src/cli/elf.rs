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

/// What `elf` does besides the report options (its command-line options).
#[derive(clap::Args)]
pub struct ElfArgs {
    /// ELF files (executables, shared objects, separate .debug files).
    pub files: Vec<PathBuf>,
    /// Seed of the synthetic machine state.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Vendor profile for every expression and CFI program (dwarf5, gnu,
    /// hetero-2020, hetero-2020-uleb, llvm-user); default: the target's,
    /// or a unit's DW_AT_LLVM_augmentation.
    #[arg(long)]
    pub vendor: Option<String>,
    /// Per frame section, how many FDEs (evenly spaced) are also
    /// virtually unwound from a synthetic machine state in the middle
    /// of their range (0: none).
    #[arg(long, default_value_t = dwarfcheck::elf::DEFAULT_UNWIND_SAMPLES)]
    pub unwind_samples: usize,
    /// Exit 2 when any input cannot be read. Without it, unreadable
    /// inputs are listed at the end of the report and the run goes on
    /// with the others (exit 2 only when none can be read).
    #[arg(long)]
    pub strict_inputs: bool,
    /// Exit 1 when the input is corrupted: any extraction warning (a
    /// unit, location list or frame section that could not be read to
    /// its end and was skipped). Without it the warnings go to stderr
    /// and do not change the exit status.
    #[arg(long)]
    pub strict: bool,
    /// Time budget in seconds of each input file, extraction and
    /// checking together: when it runs out, the file's remaining work
    /// is left and the report says how many cases were not checked.
    #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = super::parse_seconds)]
    pub time_budget: f64,
    /// List every expression the reference finds ill-formed, fails with
    /// an evaluation error or cannot judge: the file, the unit and its
    /// DW_AT_producer, the DIE and its name, the attribute, the pc
    /// range, the expression, the rule and the reference's trace, with
    /// counts by producer and rule (in JSON: a `findings` array)
    #[arg(long)]
    pub findings: bool,
    /// With --findings: read each ill-formed finding's DIE again with
    /// llvm-dwarfdump and check its operations and rule (one run per
    /// DIE, at most 400)
    #[arg(long)]
    pub confirm: bool,
    /// Write the findings as SARIF 2.1.0 to FILE (for code-scanning
    /// tools); implies --findings
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

pub fn elf(a: ElfArgs, args: &ReportArgs) -> ExitCode {
    let findings = a.findings || a.sarif.is_some();
    let time_budget = std::time::Duration::from_secs_f64(a.time_budget);
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
    let run = dwarfcheck::runner::Options { producer_findings: findings, ..args.real_input_options() };
    let checker =
        FileChecker { extract, budget: time_budget, reference: &Reference, fast: &Fast, others: &others, run };
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
    let code = if findings {
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
