//! `dwarfcheck elf`: every location expression, location-list entry and FDE
//! of real binaries.

use super::ReportArgs;
use dwarfcheck::case::Case;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::elf::Counts;
use dwarfcheck::runner::{self, Options};
use std::path::PathBuf;
use std::process::ExitCode;

pub fn elf(
    files: Vec<PathBuf>,
    seed: u64,
    vendor: Option<String>,
    unwind_samples: usize,
    args: &ReportArgs,
) -> ExitCode {
    let files = if files.is_empty() {
        match std::env::current_exe() {
            Ok(p) => vec![p],
            Err(e) => return super::input_error(format!("cannot find this executable: {e}")),
        }
    } else {
        files
    };
    let others = match args.consumers() {
        Ok(o) => o,
        Err(e) => return super::input_error(e),
    };
    let mut cases: Vec<Case> = Vec::new();
    let mut totals = Counts::default();
    let vendor = match vendor.as_deref().map(|n| (n, dwarfcheck_core::encoding::VendorProfile::by_name(n))) {
        None => None,
        Some((_, Some(v))) => Some(v),
        Some((n, None)) => {
            return super::input_error(format!(
                "unknown vendor profile `{n}`; expected one of {}",
                dwarfcheck_core::encoding::VendorProfile::NAMES.join(", ")
            ))
        }
    };
    let opts = dwarfcheck::elf::Options { seed, vendor, unwind_samples, ..Default::default() };
    for f in &files {
        match dwarfcheck::elf::extract(f, &opts) {
            Ok(x) => {
                for w in &x.warnings {
                    eprintln!("{}: warning: {w}", f.display());
                }
                totals += x.counts;
                cases.extend(x.exprs.into_iter().map(Case::Expr));
                cases.extend(x.cfi.into_iter().map(Case::Cfi));
            }
            Err(e) => return super::input_error(format!("{}: {e:#}", f.display())),
        }
    }
    let opts =
        Options { gates: args.gate.clone(), progress: !args.json, keep_details: if args.json { 0 } else { 1000 } };
    let summary = runner::run(&cases, &Reference, &Fast, &others, &opts);
    let title = format!(
        "dwarfcheck elf: {} file(s), {} units: {} location expressions, {} location-list entries, {} FDEs (.eh_frame {}, .debug_frame {}; {} also unwound)",
        files.len(),
        totals.units,
        totals.expressions,
        totals.loclist_entries,
        totals.fdes(),
        totals.eh_frame_fdes,
        totals.debug_frame_fdes,
        totals.unwind_fdes
    );
    args.finish(&title, &summary)
}
