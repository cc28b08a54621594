//! `dwarfcheck elf`: every location expression, location-list entry and FDE
//! of real binaries.

use super::ReportArgs;
use dwarfcheck::case::Case;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::runner::{self, Options};
use std::path::PathBuf;
use std::process::ExitCode;

pub fn elf(files: Vec<PathBuf>, seed: u64, args: &ReportArgs) -> ExitCode {
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
    let mut totals = dwarfcheck::elf::Counts::default();
    for f in &files {
        match dwarfcheck::elf::extract(f, seed) {
            Ok(x) => {
                eprintln!("{}: {}", f.display(), x.counts);
                totals.add(&x.counts);
                cases.extend(x.cases);
            }
            Err(e) => return super::input_error(format!("{}: {e:#}", f.display())),
        }
    }
    let opts = Options { gates: args.gate.clone(), progress: true, keep_details: 1000 };
    let summary = runner::run(&cases, &Reference, &Fast, &others, &opts);
    let title = format!("dwarfcheck elf: {} file(s): {totals}", files.len());
    args.finish(&title, &summary)
}
