//! `dwarfcheck run`: the YAML conformance suite.

use super::{load_cases, ReportArgs};
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::runner::{self, Options};
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(paths: Vec<PathBuf>, args: &ReportArgs) -> ExitCode {
    let cases = match load_cases(paths) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let others = match args.consumers() {
        Ok(o) => o,
        Err(e) => return super::input_error(e),
    };
    let opts = Options { gates: args.gate.clone(), progress: true, keep_details: 0 };
    let summary = runner::run(&cases, &Reference, &Fast, &others, &opts);
    args.finish("dwarfcheck run", &summary)
}
