//! Running the SPIR-V tools (spirv-tools' `spirv-as`, `spirv-dis`,
//! `spirv-val`; `llvm-spirv-15 -r` and `llvm-dis-15`) on one module,
//! contained: a time and output budget per run ([`process::run`]) and an
//! address-space limit (`ulimit -v`), since llvm-spirv crashes and may
//! allocate without bound on odd input.

use crate::consumer::external::process::{self, RunBudget, RunFault, RunOutput};
use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

/// The limits of one tool run: 60 s, 16 MiB of output.
pub const BUDGET: RunBudget = RunBudget { time: Duration::from_secs(60), output_bytes: 16 << 20 };

/// The address-space limit of one tool run, in KiB (`ulimit -v`): 4 GiB.
pub const MEMORY_KIB: u64 = 4_000_000;

/// `program args...` in `dir`, under [`BUDGET`] and [`MEMORY_KIB`].
///
/// Errors: [`RunFault`] (cannot start, time or output budget, a signal).
pub fn run(dir: &Path, program: &str, args: &[&str]) -> Result<RunOutput, RunFault> {
    let script = format!("ulimit -v {MEMORY_KIB}; exec \"$0\" \"$@\"");
    let mut all: Vec<&OsStr> = vec![OsStr::new("-c"), OsStr::new(&script), OsStr::new(program)];
    all.extend(args.iter().map(OsStr::new));
    process::run(Path::new("/bin/bash"), &all, dir, BUDGET)
}

/// The SPIR-V version `spirv-as` targets: llvm-spirv 15 reads SPIR-V 1.4
/// at most.
pub const TARGET_ENV: &str = "spv1.4";

/// Assembles `text` (spirv-as syntax) into `dir/name.spv`, writing the
/// text to `dir/name.spvasm` first.
///
/// Errors: a [`Failure`] when spirv-as refuses the text or cannot run.
pub fn assemble(dir: &Path, name: &str, text: &str) -> Result<std::path::PathBuf, Failure> {
    let src = format!("{name}.spvasm");
    let out = format!("{name}.spv");
    std::fs::write(dir.join(&src), text).map_err(|e| Failure::Fault(RunFault::Io(e.to_string())))?;
    let o = run(dir, "spirv-as", &["--target-env", TARGET_ENV, &src, "-o", &out]).map_err(Failure::Fault)?;
    if o.code != 0 {
        return Err(Failure::Refused(o.code, o.text));
    }
    Ok(dir.join(out))
}

/// Why a tool gave no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// It ran and exited with this non-zero code and output (a diagnostic).
    Refused(i32, String),
    /// It did not finish normally: a signal, a budget, or it could not start.
    Fault(RunFault),
}

impl std::fmt::Display for Failure {
    /// One line: `rc N: <the line that says why>`, or the fault.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Refused(rc, text) => write!(f, "rc {rc}: {}", reason_line(text)),
            Failure::Fault(fault) => write!(f, "{fault}"),
        }
    }
}

/// The line of a diagnostic that says why: LLVM's verifier line when
/// there is one, else the first non-blank line.
pub fn reason_line(text: &str) -> String {
    text.lines()
        .find(|l| l.contains("Fails to verify"))
        .or_else(|| text.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// `llvm-spirv-15 -r` of `dir/name.spv`, then `llvm-dis-15`: the LLVM IR
/// text of the module.
///
/// Errors: [`Failure::Refused`] when either exits non-zero (llvm-spirv's
/// verifier rejects the translated module with rc 255), [`Failure::Fault`]
/// on a crash (llvm-spirv 15 dies with SIGSEGV on some `BitPiece`s) or a
/// budget.
pub fn reverse_translate(dir: &Path, name: &str) -> Result<String, Failure> {
    let spv = format!("{name}.spv");
    let bc = format!("{name}.bc");
    let o = run(dir, "llvm-spirv-15", &["-r", &spv, "-o", &bc]).map_err(Failure::Fault)?;
    if o.code != 0 {
        return Err(Failure::Refused(o.code, o.text));
    }
    let dis = run(dir, "llvm-dis-15", &[&bc, "-o", "-"]).map_err(Failure::Fault)?;
    if dis.code != 0 {
        return Err(Failure::Refused(dis.code, dis.text));
    }
    Ok(dis.text)
}

/// The `!DIExpression(...)` of the first `llvm.dbg.declare`/`llvm.dbg.value`
/// call in `ir` (LLVM IR text), as written there, or `None`.
pub fn first_dbg_expression(ir: &str) -> Option<&str> {
    let line = ir.lines().find(|l| l.contains("call void @llvm.dbg."))?;
    let start = line.find("!DIExpression(")?;
    let end = start + line[start..].find(')')?;
    Some(&line[start..=end])
}

/// Whether every program of `programs` runs (`--version` succeeds).
pub fn installed(programs: &[&str]) -> bool {
    programs.iter().all(|p| {
        std::process::Command::new(p)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}
