//! Running an external tool under a time budget and an output cap.

use crate::consumer::contain;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Limits of one tool run (docs/architecture.md §9, "per-case time budget for external
/// consumers").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunBudget {
    /// Wall-clock time one run may take.
    pub time: Duration,
    /// Bytes of combined stdout and stderr one run may produce.
    pub output_bytes: u64,
}

impl Default for RunBudget {
    /// 30 s and 256 MiB per run (llvm-dwarfdump prints about 40 MB for the
    /// 118,004 FDEs of libLLVM.so.19.1).
    fn default() -> Self {
        RunBudget { time: Duration::from_secs(30), output_bytes: 256 << 20 }
    }
}

/// How a run went wrong, before any of its output is parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunFault {
    /// The program could not be started (missing, not executable).
    Spawn(String),
    /// Killed after [`RunBudget::time`].
    Timeout(Duration),
    /// Killed after producing more than [`RunBudget::output_bytes`].
    OutputCap(u64),
    /// Ended by a signal (or an exit status the OS does not report as a code).
    Signal(String),
    /// A temporary file could not be written or read.
    Io(String),
}

impl std::fmt::Display for RunFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunFault::Spawn(e) => write!(f, "cannot start: {e}"),
            RunFault::Timeout(t) => write!(f, "killed after the time budget of {} ms", t.as_millis()),
            RunFault::OutputCap(n) => write!(f, "killed after more than {n} bytes of output"),
            RunFault::Signal(s) => write!(f, "ended abnormally: {s}"),
            RunFault::Io(e) => write!(f, "temporary file: {e}"),
        }
    }
}

/// What a finished run printed: stdout and stderr in one stream, in the
/// order written (both tools flush stdout before writing a diagnostic), and
/// the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutput {
    /// Combined output, decoded lossily as UTF-8.
    pub text: String,
    /// Exit code (0 = success).
    pub code: i32,
}

/// Runs `program args...` in directory `dir`, with stdout and stderr sent to
/// one file there,
/// polling until it exits; kills it when `budget` runs out.
///
/// Errors: see [`RunFault`]. A non-zero exit code is not an error here (the
/// tools exit 1 after printing a diagnostic and everything else); callers
/// decide what it means.
pub fn run(program: &Path, args: &[&std::ffi::OsStr], dir: &Path, budget: RunBudget) -> Result<RunOutput, RunFault> {
    run_watched(program, args, dir, budget, None)
}

/// A file a batch run appends one line to per finished item, and how long
/// the run may go without a new line before it counts as hung.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// The file watched.
    pub file: &'a Path,
    /// Longest time allowed between two new lines (and before the first).
    pub stall: Duration,
}

/// [`run`], and with `progress`, also killed with [`RunFault::Timeout`]
/// (of `progress.stall`) when `progress.file` stops growing for that long:
/// a batch that hangs on one item is stopped after that item's allowance,
/// not the whole batch's.
pub fn run_watched(
    program: &Path,
    args: &[&std::ffi::OsStr],
    dir: &Path,
    budget: RunBudget,
    progress: Option<Progress<'_>>,
) -> Result<RunOutput, RunFault> {
    let out_path = dir.join("output.txt");
    let file = std::fs::File::create(&out_path).map_err(|e| RunFault::Io(e.to_string()))?;
    let err = file.try_clone().map_err(|e| RunFault::Io(e.to_string()))?;
    // Contained (consumer::contain), so that a kill also ends whatever it
    // started, even in another session (a shell script's children would
    // otherwise go on writing), and whatever it leaves when it exits.
    // The program runs in `dir`, so that whatever it drops in its working
    // directory (a crashing debugger's `core` file) goes away with it.
    let mut child = contain::spawn(
        Command::new(program)
            .current_dir(dir)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(file))
            .stderr(Stdio::from(err))
            .env("LC_ALL", "C"),
    )
    .map_err(|e| RunFault::Spawn(format!("{}: {e}", program.display())))?;
    let start = Instant::now();
    let mut last_growth = (0u64, start);
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if child.exited().is_some() {
            match child.kill_all() {
                Some(s) => break s,
                None => return Err(RunFault::Io("the program's exit status was lost".into())),
            }
        }
        let written = std::fs::metadata(&out_path).map(|m| m.len()).unwrap_or(0);
        let fault = if written > budget.output_bytes {
            Some(RunFault::OutputCap(budget.output_bytes))
        } else if start.elapsed() > budget.time {
            Some(RunFault::Timeout(budget.time))
        } else if let Some(p) = progress {
            let len = std::fs::metadata(p.file).map(|m| m.len()).unwrap_or(0);
            if len != last_growth.0 {
                last_growth = (len, Instant::now());
            }
            (last_growth.1.elapsed() > p.stall).then_some(RunFault::Timeout(p.stall))
        } else {
            None
        };
        if let Some(f) = fault {
            child.kill_all();
            return Err(f);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let Some(code) = status.code() else { return Err(RunFault::Signal(status.to_string())) };
    let bytes = std::fs::read(&out_path).map_err(|e| RunFault::Io(e.to_string()))?;
    if bytes.len() as u64 > budget.output_bytes {
        return Err(RunFault::OutputCap(budget.output_bytes));
    }
    Ok(RunOutput { text: String::from_utf8_lossy(&bytes).into_owned(), code })
}

/// The first non-empty line `program --version` prints, run under the
/// default [`RunBudget`] in a temporary directory; `None` if it cannot be
/// run or prints nothing.
pub fn version_line(program: &Path) -> Option<String> {
    let dir = TempDir::new().ok()?;
    let out = run(program, &[std::ffi::OsStr::new("--version")], dir.path(), RunBudget::default()).ok()?;
    out.text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

/// A private temporary directory, removed (with its contents) on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `$TMPDIR/dwarfcheck-<pid>-<n>`.
    ///
    /// Errors: the directory cannot be created.
    pub fn new() -> std::io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("dwarfcheck-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p)?;
        Ok(TempDir(p))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The first of `names` found as an executable file on `PATH`.
pub fn find_program(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|n| {
        std::env::split_paths(&path).map(|d| d.join(n)).find(|p| {
            use std::os::unix::fs::PermissionsExt;
            p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Compiles the one-file C helper `source` (its text) as `name` with
/// `compiler`, linked against `libs` (`-ldw`, ...), into a new
/// [`TempDir`]; returns the directory (the helper lives as long as it
/// does) and the executable's path.
///
/// Errors: `None` when the directory cannot be made, or the compiler
/// cannot run, fails, or writes no executable (a missing library or
/// header: the helper's `-dev` package is not installed).
pub fn compile_c_helper(
    compiler: &Path,
    name: &str,
    source: &str,
    libs: &[&str],
    budget: RunBudget,
) -> Option<(TempDir, PathBuf)> {
    let dir = TempDir::new().ok()?;
    let src = dir.path().join(format!("{name}.c"));
    let exe = dir.path().join(name);
    std::fs::write(&src, source).ok()?;
    let mut args: Vec<&std::ffi::OsStr> = vec!["-O1".as_ref(), "-o".as_ref(), exe.as_os_str(), src.as_os_str()];
    args.extend(libs.iter().map(std::ffi::OsStr::new));
    let out = run(compiler, &args, dir.path(), budget).ok()?;
    (out.code == 0 && exe.exists()).then_some((dir, exe))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn sh(script: &str, budget: RunBudget) -> Result<RunOutput, RunFault> {
        let dir = TempDir::new().unwrap();
        run(Path::new("/bin/sh"), &[OsStr::new("-c"), OsStr::new(script)], dir.path(), budget)
    }

    #[test]
    fn output_and_exit_code_are_kept_in_order() {
        // The shell writes "a" to stdout, "b" to stderr, then exits 3: one
        // stream in write order, code 3.
        let o = sh("echo a; echo b >&2; exit 3", RunBudget::default()).unwrap();
        assert_eq!(o, RunOutput { text: "a\nb\n".into(), code: 3 });
    }

    #[test]
    fn hang_crash_flood_and_missing_program_are_faults() {
        let quick = RunBudget { time: Duration::from_millis(200), output_bytes: 1 << 20 };
        assert_eq!(sh("sleep 5", quick), Err(RunFault::Timeout(quick.time)));
        assert!(matches!(sh("kill -9 $$", quick), Err(RunFault::Signal(_))));
        // A bounded flood (50 MB), so that nothing can fill the disk.
        let small = RunBudget { time: Duration::from_secs(10), output_bytes: 1000 };
        assert_eq!(sh("head -c 50000000 /dev/zero; sleep 5", small), Err(RunFault::OutputCap(1000)));
        let dir = TempDir::new().unwrap();
        let r = run(Path::new("/nonexistent/tool"), &[], dir.path(), quick);
        assert!(matches!(r, Err(RunFault::Spawn(_))));
    }

    #[test]
    fn a_kill_ends_the_children_too() {
        // The shell starts a child that would outlive it and write a file
        // 1 s later; the timeout kill must take the whole group.
        let dir = TempDir::new().unwrap();
        let mark = dir.path().join("late");
        let script = format!("(sleep 1; touch {}) & wait", mark.display());
        let quick = RunBudget { time: Duration::from_millis(200), output_bytes: 1 << 20 };
        let r = run(Path::new("/bin/sh"), &[OsStr::new("-c"), OsStr::new(&script)], dir.path(), quick);
        assert_eq!(r, Err(RunFault::Timeout(quick.time)));
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!mark.exists());
    }

    #[test]
    fn temp_dirs_are_distinct_and_removed() {
        let a = TempDir::new().unwrap();
        let b = TempDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        let p = a.path().to_path_buf();
        drop(a);
        assert!(!p.exists());
    }
}
