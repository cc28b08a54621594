//! LLDB's command line and probe (`probe_lldb.py`): `lldb --batch` with
//! no init files, the batch directory handed over as a Python global of
//! LLDB's embedded interpreter, then the probe run in that interpreter
//! (Debian's `lldb -P` path lacks `_lldb`, so the probe never imports LLDB
//! from a separate Python).

use std::path::Path;

/// The job loop every LLDB probe runs on (`lldb_core.py`): a target and
/// its core file per job, one result line each; put in front of a probe.
pub const CORE_LOOP: &str = include_str!("lldb_core.py");

/// The probe script (LLDB's SB API), after [`CORE_LOOP`].
pub const PROBE: &str = concat!(include_str!("lldb_core.py"), include_str!("probe_lldb.py"));

/// A Python string literal for `p` (JSON string syntax is valid Python).
pub fn py_str(p: &Path) -> String {
    serde_json::Value::String(p.display().to_string()).to_string()
}

/// Arguments for one batch in `dir` with the probe at `probe`.
pub fn args(dir: &Path, probe: &Path) -> Vec<String> {
    vec![
        "--no-lldbinit".into(),
        "--batch".into(),
        "-o".into(),
        format!("script DWARFCHECK_DIR = {}", py_str(dir)),
        "-o".into(),
        format!("script exec(open({}).read())", py_str(probe)),
    ]
}
