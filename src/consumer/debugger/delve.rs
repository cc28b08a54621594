//! Delve's command line and probe (`probe_delve.py`): Delve takes one
//! executable and core file per process, so the probe runs under
//! `python3` and starts `dlv core EXE CORE` for each job of the batch, with
//! an init file that prints the variable, and parses what Delve prints.

use std::path::{Path, PathBuf};

/// The probe script (Python, driving `dlv`).
pub const PROBE: &str = include_str!("probe_delve.py");

/// The interpreter that runs the probe.
pub fn launcher() -> Option<PathBuf> {
    crate::consumer::external::process::find_program(&["python3"])
}

/// Arguments for one batch in `dir` with the probe at `probe`, Delve being
/// `dlv`: the probe, the batch directory, then `dlv`.
pub fn args(dir: &Path, probe: &Path, dlv: &Path) -> Vec<String> {
    vec![probe.display().to_string(), dir.display().to_string(), dlv.display().to_string()]
}
