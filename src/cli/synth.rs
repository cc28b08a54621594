//! `dwarfcheck synth`: writes the executable and core file the debugger
//! adapters use for one case, or for a `spirv:` case the SPIR-V module the
//! SPIR-V tools are given, to look at or load by hand.

use super::load_cases;
use dwarfcheck::case::Case;
use dwarfcheck::consumer::debugger::observe;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `dwarfcheck synth`.
#[derive(clap::Args)]
pub struct SynthArgs {
    /// Case file.
    file: PathBuf,
    /// Name of the expression case, or of the CFI case with an unwinding
    /// part, in it.
    #[arg(long)]
    case: String,
    /// Directory for `<case>` (the executable) and `<case>.core`.
    #[arg(long, default_value = ".")]
    out: PathBuf,
}

pub fn synth(args: &SynthArgs) -> ExitCode {
    let cases = match load_cases(vec![args.file.clone()]) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Some((c, u)) = cases.iter().find_map(|c| match c {
        Case::Cfi(c) if c.name == args.case => c.unwind.as_ref().map(|u| (c, u)),
        _ => None,
    }) {
        return synth_unwind(args, c, u);
    }
    let Some(case) = cases.iter().find_map(|c| match c {
        Case::Expr(e) if e.name == args.case => Some(e),
        _ => None,
    }) else {
        let missing = dwarfcheck::case::select::not_found(&args.case, cases.iter().map(|c| c.name()));
        return super::input_error(format!("{}: {missing}", args.file.display()));
    };
    if let Some(e) = case.spirv.as_deref() {
        return synth_spirv(args, &case.name, e);
    }
    let reference = dwarfcheck::consumer::builtin::reference_outcome(case).0;
    let shape = observe::plan(case, &reference);
    let d = match dwarfcheck::synth::synthesise(case, shape) {
        Ok(d) => d,
        Err(e) => return super::input_error(e),
    };
    let exe = args.out.join(&case.name);
    let core = args.out.join(format!("{}.core", case.name));
    if let Err(e) = std::fs::write(&exe, &d.executable).and_then(|_| std::fs::write(&core, &d.core)) {
        return super::input_error(format!("cannot write into {}: {e}", args.out.display()));
    }
    println!("wrote {} (executable) and {} (core file)", exe.display(), core.display());
    println!("  variable v:       {shape}");
    println!("  stopped at pc:    {:#x}", d.pc);
    println!("  reference:        {reference}");
    println!("  a debugger shows: {}", observe::view(case, &reference));
    println!("look at it with:");
    println!("  gdb-multiarch -nx -batch -ex 'core-file {}' -ex 'print v' {}", core.display(), exe.display());
    println!("  lldb-19 --batch -c {} -o 'frame variable v' {}", core.display(), exe.display());
    ExitCode::SUCCESS
}

/// The module text of a `spirv:` case: `<case>.spvasm` (every word as is,
/// as spirv-dis, spirv-val and llvm-spirv are given it) and
/// `<case>.names.spvasm` (operation names, as spirv-as is given it), with
/// the commands that run the tools on it.
fn synth_spirv(args: &SynthArgs, name: &str, e: &dwarfcheck_core::encoding::spirv::SpirvExpression) -> ExitCode {
    use dwarfcheck::spirv::module::build::{module_text_as, Spelling};
    let words = args.out.join(format!("{name}.spvasm"));
    let names = args.out.join(format!("{name}.names.spvasm"));
    let written = std::fs::write(&words, module_text_as(e, Spelling::Words))
        .and_then(|_| std::fs::write(&names, module_text_as(e, Spelling::Names)));
    if let Err(err) = written {
        return super::input_error(format!("cannot write into {}: {err}", args.out.display()));
    }
    let spv = args.out.join(format!("{name}.spv"));
    println!("expression: {e}");
    println!("spirv-as --target-env spv1.4 {} -o {}", words.display(), spv.display());
    println!("spirv-dis --raw-id {0}; spirv-val {0}", spv.display());
    println!("llvm-spirv-15 -r {} -o - | llvm-dis-15", spv.display());
    ExitCode::SUCCESS
}

/// The executable and core file of a CFI case's unwinding
/// (`dwarfcheck::synth::cfi`).
fn synth_unwind(args: &SynthArgs, c: &dwarfcheck::case::CfiCase, u: &dwarfcheck::case::UnwindCase) -> ExitCode {
    let exe = args.out.join(&c.name);
    let core = args.out.join(format!("{}.core", c.name));
    let path = std::path::absolute(&exe).unwrap_or_else(|_| exe.clone());
    let d = match dwarfcheck::synth::cfi::synthesise_unwind(c, u, &path.display().to_string()) {
        Ok(d) => d,
        Err(e) => return super::input_error(e),
    };
    if let Err(e) = std::fs::write(&exe, &d.executable).and_then(|_| std::fs::write(&core, &d.core)) {
        return super::input_error(format!("cannot write into {}: {e}", args.out.display()));
    }
    println!("wrote {} (executable) and {} (core file)", exe.display(), core.display());
    println!("  stopped at pc:    {:#x}", d.pc);
    let ranges: Vec<String> = d.functions.iter().map(|r| format!("[{:#x}, {:#x})", r.0, r.1)).collect();
    println!("  FDE ranges:       {}", ranges.join(" "));
    println!("look at it with:");
    println!("  gdb -nx -batch -ex 'core-file {}' -ex 'bt' {}", core.display(), exe.display());
    println!("  lldb-19 --batch -c {} -o 'bt' {}", core.display(), exe.display());
    println!("  eu-stack --core {} -e {}", core.display(), exe.display());
    ExitCode::SUCCESS
}
