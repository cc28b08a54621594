//! `dwarfcheck spirv`: every `DebugDeclare` and `DebugValue` expression of
//! SPIR-V modules (OpenCL.DebugInfo.100), reference against fast and the
//! third parties, with the module rules of `specs/rules/spirv-module.yaml`
//! in the summary.

use super::ReportArgs;
use dwarfcheck::case::Case;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::runner::{self, InputNote};
use dwarfcheck::spirv::module::{self, cases, Module};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `spirv` does besides the report options.
pub struct SpirvArgs {
    /// The SPIR-V modules.
    pub files: Vec<PathBuf>,
    /// Seed of the synthetic machine state.
    pub seed: u64,
}

/// One line per module: what it holds.
fn module_line(file: &str, m: &Module) -> String {
    let declares = m.applications.iter().filter(|a| a.expression.is_some() && a.is_declare()).count();
    let values = m.applications.iter().filter(|a| a.expression.is_some() && !a.is_declare()).count();
    let shapes: BTreeSet<String> = m
        .applications
        .iter()
        .filter_map(|a| a.expression.as_ref())
        .map(|e| e.operations.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
        .collect();
    format!(
        "  {file}: {}-bit addressing; {} DebugDeclare, {} DebugValue ({} distinct operation lists), {} DebugExpression, {} DebugOperation; {} module-rule violation(s)",
        m.address_bytes.map(|b| u32::from(b) * 8).map_or("no".into(), |b| b.to_string()),
        declares,
        values,
        shapes.len(),
        m.expressions.len(),
        m.operations.len(),
        m.violations.len()
    )
}

pub fn spirv(a: SpirvArgs, args: &ReportArgs) -> ExitCode {
    if a.files.is_empty() {
        return super::input_error("no SPIR-V module given");
    }
    let others = match args.consumers() {
        Ok(o) => o,
        Err(e) => return super::input_error(e),
    };
    let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
    let read: Vec<Result<Module, module::ReadError>> = a.files.par_iter().map(|f| module::read_file(f)).collect();
    let mut all: Vec<Case> = Vec::new();
    let mut lines = Vec::new();
    let mut notes = Vec::new();
    let mut module_rules = std::collections::BTreeMap::<String, Vec<String>>::new();
    for (name, r) in names.iter().zip(read) {
        match r {
            Ok(m) => {
                lines.push(module_line(name, &m));
                for v in &m.violations {
                    module_rules
                        .entry(v.rule.to_string())
                        .or_default()
                        .push(format!("{name}: {}: {}", v.position, v.detail));
                }
                for w in &m.warnings {
                    eprintln!("{name}: warning: {w}");
                }
                all.extend(cases::cases(&m, name, a.seed).into_iter().map(Case::Expr));
            }
            Err(e) => notes.push(InputNote {
                input: name.clone(),
                reason: e.to_string(),
                expr_cases_not_checked: 0,
                cfi_cases_not_checked: 0,
                units_not_read: 0,
            }),
        }
    }
    if lines.is_empty() {
        return super::no_input_read(&notes);
    }
    let run = args.real_input_options();
    let mut summary = runner::run(&all, &Reference, &Fast, &others, &run);
    summary.unreadable_inputs = notes;
    summary.module_rules = module_rules;
    let title = format!("dwarfcheck spirv: {} of {} module(s)", lines.len(), a.files.len());
    if !args.json {
        println!("{title}:\n{}", lines.join("\n"));
    }
    args.finish(&title, &summary)
}
