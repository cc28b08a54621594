//! GDB's command line and probe (`probe_gdb.py`): `gdb -nx -batch`, the
//! batch directory handed over as a Python global, then the probe script.

use std::path::Path;

/// The probe script (GDB's Python API), after the helper that gives each
/// job a fresh inferior (`gdb_inferior.py`).
pub const PROBE: &str = concat!(include_str!("gdb_inferior.py"), include_str!("probe_gdb.py"));

/// The helper alone (`gdb_inferior.py`), for probes kept elsewhere: it
/// defines `dwarfcheck_next_inferior()`.
pub const INFERIOR: &str = include_str!("gdb_inferior.py");

/// Arguments for one batch in `dir` with the probe at `probe`: no init
/// files (`-nx`), batch mode, `DWARFCHECK_DIR` set, then the probe.
pub fn args(dir: &Path, probe: &Path) -> Vec<String> {
    vec![
        "-nx".into(),
        "-batch".into(),
        // An internal error must not write a core file of GDB itself.
        "-ex".into(),
        "maint set internal-error corefile no".into(),
        "-ex".into(),
        format!("python DWARFCHECK_DIR = {}", super::lldb::py_str(dir)),
        "-x".into(),
        probe.display().to_string(),
    ]
}
