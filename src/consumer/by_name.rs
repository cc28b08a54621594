//! Consumers by name, as the command line names them: the one place that
//! knows every third-party consumer and what it needs to start.

use super::debugger::unwind::DebuggerUnwind;
use super::debugger::{Debugger, Kind, Limits};
use super::external::{External, RunBudget, Tool};
use super::gimli::Gimli;
use super::{Consumer, ConsumerError};

/// Every third-party consumer name, in report order.
pub const KNOWN: [&str; 19] = [
    "gimli",
    "llvm-dwarfdump",
    "readelf",
    "pyelftools",
    "libdw",
    "libdw-loclist",
    "framehop",
    "libunwind",
    "gdb",
    "lldb",
    "delve",
    "gdb-unwind",
    "lldb-unwind",
    "lldb-rows",
    "eu-stack",
    "spirv-as",
    "spirv-dis",
    "spirv-val",
    "llvm-spirv",
];

/// Limits handed to the consumers that run other programs.
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    /// One run of llvm-dwarfdump or readelf on one frame section.
    pub tool: RunBudget,
    /// gdb and lldb (time per case, cases per process).
    pub debugger: Limits,
    /// One request to a process-protocol consumer.
    pub protocol: RunBudget,
    /// Faults in a row after which a protocol consumer or a debugger is
    /// declared down and asked nothing more (0: never).
    pub down_after: u32,
}

impl Default for Budgets {
    /// Each consumer's own defaults.
    fn default() -> Self {
        Budgets {
            tool: RunBudget::default(),
            debugger: Limits::default(),
            protocol: super::protocol::default_budget(),
            down_after: super::health::DEFAULT_DOWN_AFTER,
        }
    }
}

/// The consumer called `name` (one of [`KNOWN`]).
///
/// Errors: [`ConsumerError::Unknown`], or [`ConsumerError::NotInstalled`]
/// for a consumer whose program is not on `PATH`.
pub fn consumer(name: &str, budgets: &Budgets) -> Result<Box<dyn Consumer>, ConsumerError> {
    Ok(match name {
        "gimli" => Box::new(Gimli),
        "framehop" => Box::new(super::framehop::Framehop),
        "llvm-dwarfdump" => Box::new(External::new(Tool::LlvmDwarfdump, budgets.tool)?),
        "readelf" => Box::new(External::new(Tool::Readelf, budgets.tool)?),
        "pyelftools" => Box::new(External::new(Tool::Pyelftools, budgets.tool)?),
        "libdw" => Box::new(External::new(Tool::Libdw, budgets.tool)?),
        "libdw-loclist" => Box::new(super::external::libdw_loclist::LibdwLoclist::new(budgets.tool)?),
        "libunwind" => Box::new(super::libunwind::Libunwind::new(budgets.tool)?),
        "gdb" => Box::new(Debugger::new(Kind::Gdb, budgets.debugger)?.down_after(budgets.down_after)),
        "lldb" => Box::new(Debugger::new(Kind::Lldb, budgets.debugger)?.down_after(budgets.down_after)),
        "delve" => Box::new(Debugger::new(Kind::Delve, budgets.debugger)?.down_after(budgets.down_after)),
        "gdb-unwind" => Box::new(DebuggerUnwind::new(Kind::Gdb, budgets.debugger)?.down_after(budgets.down_after)),
        "lldb-unwind" => Box::new(DebuggerUnwind::new(Kind::Lldb, budgets.debugger)?.down_after(budgets.down_after)),
        "lldb-rows" => Box::new(super::debugger::rows::LldbRows::new(budgets.debugger)?.down_after(budgets.down_after)),
        "eu-stack" => Box::new(super::debugger::eu_stack::EuStack::new(budgets.tool)?),
        name @ ("spirv-as" | "spirv-dis" | "spirv-val" | "llvm-spirv") => {
            let tool = super::spirv::Tool::by_name(name).expect("a SPIR-V tool name");
            Box::new(super::spirv::SpirvTool::new(tool)?)
        }
        other => return Err(ConsumerError::Unknown { name: other.to_string() }),
    })
}

/// The process-protocol consumer of `spec` (`cmd:COMMAND`,
/// docs/protocol.md), refused if a consumer of the same name is already in
/// `others`.
///
/// Errors: [`ConsumerError::Protocol`] for a bad spec or a failed
/// handshake, [`ConsumerError::Duplicate`].
pub fn protocol(
    spec: &str,
    budgets: &Budgets,
    others: &[Box<dyn Consumer>],
) -> Result<Box<dyn Consumer>, ConsumerError> {
    let p = super::protocol::Protocol::from_spec(spec, budgets.protocol)?.down_after(budgets.down_after);
    if others.iter().any(|c| c.name() == p.name()) {
        return Err(ConsumerError::Duplicate { spec: spec.to_string(), name: p.name().to_string() });
    }
    Ok(Box::new(p))
}
