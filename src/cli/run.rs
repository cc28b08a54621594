//! `dwarfcheck run`: the YAML conformance suite.

use super::{load_cases_showing, ReportArgs};
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::runner::junit::{self, CaseLabel};
use dwarfcheck::runner::{self, Options};
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs the cases under `paths` (default: the bundled suite), only those
/// named in `names` when it is not empty.
pub fn run(paths: Vec<PathBuf>, names: &[String], args: &ReportArgs) -> ExitCode {
    // With the default paths and no case chosen, the raw fuzz regressions
    // (frame sections, case-file texts) are replayed too; the YAML ones
    // load as cases.
    if paths.is_empty() && names.is_empty() && !replay_regressions() {
        return ExitCode::from(1);
    }
    let cases = match load_cases_showing(paths, !args.json) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let cases = match dwarfcheck::case::select::by_name(cases, names) {
        Ok(c) => c,
        Err(missing) => {
            missing.iter().for_each(|m| eprintln!("dwarfcheck: {m}"));
            return ExitCode::from(2);
        }
    };
    let others = match args.consumers() {
        Ok(o) => o,
        Err(e) => return super::input_error(e),
    };
    let opts = Options { gates: args.gate.clone(), progress: !args.json, keep_details: 0, ..Default::default() };
    let title = "dwarfcheck run";
    if args.junit.is_none() {
        return args.finish(title, &runner::run(&cases, &Reference, &Fast, &others, &opts));
    }
    // JUnit has a test case per case and consumer: keep the per-case records.
    let (summary, records) = runner::run_recorded(&cases, &Reference, &Fast, &others, &opts);
    let labels: Vec<CaseLabel> =
        cases.iter().map(|c| CaseLabel { origin: c.origin().to_string(), name: c.name().to_string() }).collect();
    let names: Vec<String> =
        std::iter::once("fast".to_string()).chain(others.iter().map(|o| o.name().to_string())).collect();
    args.finish_with_junit(title, &summary, || junit::junit(title, &labels, &records, &names, &summary))
}

/// Replays `corpus/regressions/` through the fuzz oracles; prints each
/// failure and a count. Returns whether all passed.
fn replay_regressions() -> bool {
    let results = dwarfcheck::fuzzing::replay::replay(&dwarfcheck::fuzzing::replay::bundled_dir());
    let failed: Vec<_> = results.iter().filter(|r| r.1.is_err()).collect();
    for (f, r) in &failed {
        eprintln!(
            "regression {} fails again: {}",
            f.display(),
            r.as_ref().err().map(|v| v.to_string()).unwrap_or_default()
        );
    }
    super::note(&format!("corpus/regressions: {} replayed, {} failed", results.len(), failed.len()));
    failed.is_empty()
}
