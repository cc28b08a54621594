//! The `dwarfcheck` command line: `run`, `elf`, `eval`, `coverage`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
