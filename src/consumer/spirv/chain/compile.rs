//! The chain's processes, contained (`tools::run`): `llvm-spirv-15 -r` and
//! `llvm-dis-15` ([`tools::reverse_translate`]), the retargeting rewrite,
//! `llvm-as-15`, `llc-15 -O0 -filetype=obj`; the object's bytes.

use super::retarget::{retarget, Arch};
use crate::consumer::spirv::tools::{self, Failure};
use std::path::Path;

/// The stage of the chain that gave no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// `spirv-as` on a module's text.
    Assemble,
    /// `llvm-spirv-15 -r` (its crash or its verifier's rejection) or
    /// `llvm-dis-15`.
    Reverse,
    /// `llvm-as-15` on the retargeted IR text.
    LlvmAs,
    /// `llc-15`.
    Llc,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Assemble => "spirv-as",
            Stage::Reverse => "llvm-spirv-15 -r",
            Stage::LlvmAs => "llvm-as-15",
            Stage::Llc => "llc-15",
        })
    }
}

/// A stage's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageFailure {
    /// Which stage.
    pub stage: Stage,
    /// Why.
    pub failure: Failure,
}

impl std::fmt::Display for StageFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.stage, self.failure)
    }
}

/// The options `llc-15` runs with besides the processor: `-O0`, an ELF
/// object, DWARF 4 with names inline (`DW_FORM_string`), so that reading a
/// variable's name needs no relocation of `.debug_str_offsets` or
/// `.debug_str` (`DW_AT_location`s and location lists are the same as with
/// the module's DWARF 5; `elf` relocates what it reads).
pub const LLC_OPTIONS: [&str; 4] = ["-O0", "-filetype=obj", "-dwarf-version=4", "-dwarf-inlined-strings=Enable"];

/// The LLVM IR text of `dir/name.spv` (`llvm-spirv-15 -r`, `llvm-dis-15`).
///
/// Errors: a [`StageFailure`] at [`Stage::Reverse`].
pub fn reverse(dir: &Path, name: &str) -> Result<String, StageFailure> {
    tools::reverse_translate(dir, name).map_err(|failure| StageFailure { stage: Stage::Reverse, failure })
}

/// `ir` (from [`reverse`]) retargeted to `arch`, assembled by `llvm-as-15`
/// and compiled by `llc-15` ([`LLC_OPTIONS`], [`Arch::mcpu`]): the bytes of
/// the ELF object. Files `dir/name.ARCH.{ll,bc,o}` are left behind.
///
/// Errors: a [`StageFailure`] at [`Stage::LlvmAs`] or [`Stage::Llc`] (a
/// refusal, a crash, a budget).
pub fn object(dir: &Path, name: &str, ir: &str, arch: Arch) -> Result<Vec<u8>, StageFailure> {
    let base = format!("{name}.{}", arch.name());
    let (ll, bc, o) = (format!("{base}.ll"), format!("{base}.bc"), format!("{base}.o"));
    let io = |stage, e: std::io::Error| StageFailure {
        stage,
        failure: Failure::Fault(crate::consumer::external::process::RunFault::Io(e.to_string())),
    };
    std::fs::write(dir.join(&ll), retarget(ir, arch)).map_err(|e| io(Stage::LlvmAs, e))?;
    step(dir, Stage::LlvmAs, "llvm-as-15", &[&ll, "-o", &bc])?;
    let mut args: Vec<&str> = LLC_OPTIONS.to_vec();
    args.extend(arch.mcpu());
    args.extend([bc.as_str(), "-o", o.as_str()]);
    step(dir, Stage::Llc, "llc-15", &args)?;
    std::fs::read(dir.join(&o)).map_err(|e| io(Stage::Llc, e))
}

/// One contained run that must exit 0.
fn step(dir: &Path, stage: Stage, program: &str, args: &[&str]) -> Result<(), StageFailure> {
    let out = tools::run(dir, program, args).map_err(|f| StageFailure { stage, failure: Failure::Fault(f) })?;
    if out.code != 0 {
        return Err(StageFailure { stage, failure: Failure::Refused(out.code, out.text) });
    }
    Ok(())
}

/// Whether every program of the chain runs.
pub fn installed() -> bool {
    tools::installed(&["spirv-as", "llvm-spirv-15", "llvm-dis-15", "llvm-as-15", "llc-15"])
}
