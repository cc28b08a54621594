//! The process a core file shows: the core (threads, memory), the loaded
//! ELF files and the executable's DWARF, on the x86-64 target.

use crate::core_file::Core;
use crate::die::Info;
use crate::module::{load_all, Module};
use crate::scope::Program;
use dwarfcheck_fast::target::{presets, Target};
use std::path::Path;
use std::sync::Arc;

/// A core file opened with its executable.
#[derive(Debug)]
pub struct Process {
    /// The core.
    pub core: Core,
    /// The loaded files, the executable first.
    pub modules: Vec<Module>,
    /// The executable's DWARF (empty when it has none, or when it is not
    /// loaded at its link-time addresses: see the crate docs on PIE).
    pub program: Program,
    /// The x86-64 target (DWARF register numbers and sizes).
    pub target: Arc<Target>,
    /// What could not be used, for the reader.
    pub notes: Vec<String>,
}

impl Process {
    /// Opens `core`, the core file of a run of the executable `exe`.
    ///
    /// Errors: either file cannot be read as what it should be.
    pub fn open(exe: &Path, core: &Path) -> Result<Process, String> {
        let target = Arc::new(presets::x86_64());
        let mut core = Core::open(core).map_err(|e| e.to_string())?;
        let (modules, sections, mut notes) = load_all(&mut core, exe, &target)?;
        let program = if modules[0].bias != 0 {
            notes.push(format!(
                "{} is loaded {:#x} bytes away from its link-time addresses (PIE): its DWARF is not used",
                exe.display(),
                modules[0].bias
            ));
            Program::default()
        } else {
            let (info, problem) = Info::read(sections);
            notes.extend(problem);
            Program::new(info)
        };
        Ok(Process { core, modules, program, target, notes })
    }

    /// The module holding run-time address `pc`.
    pub fn module_at(&self, pc: u64) -> Option<&Module> {
        self.modules.iter().find(|m| m.contains(pc))
    }

    /// The name of the function holding `pc` (the lookup address): the
    /// DWARF subprogram's `DW_AT_name`, else the ELF symbol.
    pub fn function_name(&self, pc: u64) -> Option<String> {
        if let Some(name) = self.program.function_at(pc).and_then(|s| self.program.info.name(s)) {
            return Some(name);
        }
        self.module_at(pc).and_then(|m| m.symbol(pc)).map(str::to_string)
    }
}
