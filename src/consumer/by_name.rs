//! Consumers by name, as the command line names them: the one place that
//! knows every third-party consumer and what it needs to start.

use super::debugger::{Debugger, Kind, Limits};
use super::external::{External, RunBudget, Tool};
use super::gimli::Gimli;
use super::Consumer;

/// Every third-party consumer name, in report order.
pub const KNOWN: [&str; 5] = ["gimli", "llvm-dwarfdump", "readelf", "gdb", "lldb"];

/// Limits handed to the consumers that run other programs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budgets {
    /// One run of llvm-dwarfdump or readelf on one frame section.
    pub tool: RunBudget,
    /// gdb and lldb (time per case, cases per process).
    pub debugger: Limits,
}

/// The consumer called `name` (one of [`KNOWN`]).
///
/// Errors: an unknown name, or a consumer whose program is not on `PATH`
/// (the message names the package that has it).
pub fn consumer(name: &str, budgets: &Budgets) -> Result<Box<dyn Consumer>, String> {
    Ok(match name {
        "gimli" => Box::new(Gimli),
        "llvm-dwarfdump" => Box::new(External::new(Tool::LlvmDwarfdump, budgets.tool)?),
        "readelf" => Box::new(External::new(Tool::Readelf, budgets.tool)?),
        "gdb" => Box::new(Debugger::new(Kind::Gdb, budgets.debugger)?),
        "lldb" => Box::new(Debugger::new(Kind::Lldb, budgets.debugger)?),
        other => return Err(format!("unknown consumer `{other}`; expected one of {} or none", KNOWN.join(", "))),
    })
}
