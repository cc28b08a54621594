//! Third-party readers on IGC's DWARF: llvm-dwarfdump, readelf and GDB run
//! on an ELF written to a private temporary directory (under a time budget,
//! an output cap and an address-space limit, through
//! [`crate::consumer::external::process`]), and gimli in process; each
//! judged on what it decodes, its failures counted per class
//! ([`super::classes`], IT*).

use super::read::IgcDwarf;
use crate::consumer::external::process::{self, RunBudget, TempDir};
use dwarfcheck_core::context::Context;
use dwarfcheck_core::encoding::VendorProfile;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Address space a tool may map (`ulimit -v`, KiB).
const ADDRESS_SPACE_KIB: u64 = 8_000_000;

/// A third-party reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    /// `llvm-dwarfdump --debug-info --debug-loc`.
    LlvmDwarfdump,
    /// `readelf --debug-dump=info,loc,frames`.
    Readelf,
    /// `gdb -batch -ex "info scope SUBPROGRAM"` per subprogram.
    Gdb,
    /// gimli's `Operation::parse` on every expression.
    Gimli,
}

/// Every tool.
pub const TOOLS: [Tool; 4] = [Tool::LlvmDwarfdump, Tool::Readelf, Tool::Gdb, Tool::Gimli];

/// What one tool made of one ELF.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ToolReport {
    /// Failures per class ID.
    pub classes: BTreeMap<&'static str, usize>,
    /// Expressions (location entries) it decoded completely, of the total
    /// (gimli and llvm-dwarfdump).
    pub decoded: (usize, usize),
    /// Operations it decoded, against the `intel` profile's count (gimli).
    pub ops: (usize, usize),
    /// Locals and parameters it listed (GDB).
    pub locals: usize,
    /// Why it did not run (missing, killed), when it did not.
    pub error: Option<String>,
}

/// Runs `tool` over the ELF `bytes`, whose variables are `dwarf`.
pub fn run(tool: Tool, bytes: &[u8], dwarf: &IgcDwarf, budget: RunBudget) -> ToolReport {
    match tool {
        Tool::Gimli => gimli_ops(dwarf),
        _ => {
            external(tool, bytes, dwarf, budget).unwrap_or_else(|e| ToolReport { error: Some(e), ..Default::default() })
        }
    }
}

fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

fn external(tool: Tool, bytes: &[u8], dwarf: &IgcDwarf, budget: RunBudget) -> Result<ToolReport, String> {
    let name = match tool {
        Tool::LlvmDwarfdump => "llvm-dwarfdump",
        Tool::Readelf => "readelf",
        _ => "gdb",
    };
    let program = process::find_program(&[name]).ok_or_else(|| format!("{name} is not installed"))?;
    let dir = TempDir::new().map_err(|e| e.to_string())?;
    let elf = dir.path().join("igc.elf");
    std::fs::write(&elf, bytes).map_err(|e| e.to_string())?;
    let mut args: Vec<String> = Vec::new();
    match tool {
        Tool::LlvmDwarfdump => args.extend(["--debug-info", "--debug-loc"].map(String::from)),
        Tool::Readelf => args.push("--debug-dump=info,loc,frames".into()),
        _ => {
            args.extend(["-nx", "-batch"].map(String::from));
            let mut subs: Vec<&str> = dwarf.subprograms.iter().map(|s| s.0.as_str()).collect();
            subs.dedup();
            for s in subs.iter().filter(|s| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')) {
                args.extend(["-ex".to_string(), format!("info scope {s}")]);
            }
        }
    }
    args.push(elf.display().to_string());
    let script = format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\"");
    let mut argv: Vec<&std::ffi::OsStr> = vec!["-c".as_ref(), script.as_ref(), program.as_os_str()];
    argv.extend(args.iter().map(|a| a.as_ref() as &std::ffi::OsStr));
    let out = process::run(Path::new("/bin/sh"), &argv, dir.path(), budget).map_err(|e| e.to_string())?;
    let t = &out.text;
    let mut r = ToolReport::default();
    let mut add = |id: &'static str, n: usize| {
        if n > 0 {
            *r.classes.entry(id).or_insert(0) += n;
        }
    };
    let total: usize = dwarf.variables.iter().map(|v| v.entries.len()).sum();
    match tool {
        Tool::LlvmDwarfdump => {
            // Location lists print twice (inline under .debug_info and in
            // .debug_loc): count the .debug_info part only.
            let info = t.split(".debug_loc contents:").next().unwrap_or("");
            add("IT1", count(info, "<decoding error>"));
            add("IT2", count(t, "failed to compute relocation"));
            r.decoded = (total.saturating_sub(count(info, "<decoding error>")), total);
        }
        Tool::Readelf => {
            add("IT3", count(t, "User defined location op"));
            add("IT4", count(t, "unsupported reloc type") + count(t, "Missing knowledge of"));
            r.decoded = (total.saturating_sub(count(t, "User defined location op")), total);
        }
        _ => {
            add("IT6", count(t, "contains no locals or arguments") + count(t, "No symbol table is loaded"));
            add("IT7", count(t, "Unrecognized DWARF opcode"));
            add("IT8", count(t, "Corrupted DWARF2 expression"));
            r.locals = t.lines().filter(|l| l.starts_with("Symbol ") && !l.contains("is a function")).count();
        }
    }
    Ok(r)
}

/// gimli on every location expression of `dwarf`: operations parsed until
/// the first error, against the `intel` profile's decoding by the
/// reference evaluator.
fn gimli_ops(dwarf: &IgcDwarf) -> ToolReport {
    let mut r = ToolReport::default();
    let mut ctx = Context::new(Arc::new(dwarfcheck_core::target::presets::intel_gpu()));
    ctx.vendor = VendorProfile::intel();
    let enc = gimli::Encoding { format: gimli::Format::Dwarf32, version: 4, address_size: 8 };
    let (mut full, mut total, mut theirs, mut ours) = (0, 0, 0, 0);
    for v in &dwarf.variables {
        for e in &v.entries {
            total += 1;
            let want = dwarfcheck_reference::expr::decode::decode(&e.expr, &ctx).map(|o| o.len()).unwrap_or(0);
            let mut rd = gimli::EndianSlice::new(&e.expr[..], gimli::LittleEndian);
            let mut n = 0;
            let mut wrong = false;
            while !gimli::Reader::is_empty(&rd) {
                match gimli::Operation::parse(&mut rd, enc) {
                    // gimli's own reading of 0xed (DW_OP_WASM_location) is
                    // not IGC's, whatever it consumed.
                    Ok(gimli::Operation::WasmLocal { .. })
                    | Ok(gimli::Operation::WasmGlobal { .. })
                    | Ok(gimli::Operation::WasmStack { .. }) => {
                        wrong = true;
                        break;
                    }
                    Ok(_) => n += 1,
                    Err(_) => {
                        wrong = true;
                        break;
                    }
                }
            }
            theirs += n;
            ours += want;
            if wrong {
                *r.classes.entry("IT5").or_insert(0) += 1;
            } else {
                full += 1;
            }
        }
    }
    r.decoded = (full, total);
    r.ops = (theirs, ours);
    r
}
