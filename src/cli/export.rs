//! `dwarfcheck export-suite`: the suite as JSON (docs/suite-format.md).

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `export-suite`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// Directory to write `index.json` and `cases/` into (created if
    /// missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Case files or directories (default: the bundled suite, as `run`).
    paths: Vec<PathBuf>,
}

/// Writes the export; exit 2 on a case file that does not load or an I/O
/// error.
pub fn export_suite(args: ExportArgs) -> ExitCode {
    let paths = if args.paths.is_empty() { super::default_case_paths() } else { args.paths };
    match dwarfcheck::export::export_suite(&paths, &args.out) {
        Ok(c) => {
            super::note(&format!(
                "export-suite: {} case file(s), {} expression, {} SPIR-V expression and {} CFI case(s) ({} unwinding) in {}; {} input(s) left out",
                c.files,
                c.expr,
                c.spirv_expr,
                c.cfi,
                c.unwind,
                args.out.display(),
                c.left_out
            ));
            ExitCode::SUCCESS
        }
        Err(dwarfcheck::export::ExportError::Cases(errs)) => {
            errs.iter().for_each(|e| eprintln!("{e}"));
            ExitCode::from(2)
        }
        Err(e) => super::input_error(e),
    }
}
