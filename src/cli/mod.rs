//! Argument parsing and dispatch. Exit status: 0 when everything agrees,
//! 1 when reference and fast disagree, an expectation is unmet or a gated
//! consumer disagrees, 2 for usage or input errors.

mod bench;
mod coverage;
mod elf;
mod eval;
mod export;
mod fuzz;
mod igc;
mod matrix;
mod producers;
mod run;
mod spirv;
mod synth;
mod tru64;
mod visa;

use clap::{Args, Parser, Subcommand};
use dwarfcheck::consumer::debugger::Limits;
use dwarfcheck::consumer::external::RunBudget;
use dwarfcheck::consumer::{by_name, Consumer};
use dwarfcheck::runner::{report, Summary};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "dwarfcheck", version, about = "Differential conformance harness for DWARF expressions and CFI")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print only results, warnings and errors: no progress bars and no
    /// notes on stderr.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// Colours in the text summary (findings red, "no disagreements"
    /// green): `auto` when stdout is a terminal and NO_COLOR is not set.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
}

/// `--color`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Set by `--quiet`: [`note`] prints nothing.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An informational line on stderr (what was written, how long it took),
/// left out under `--quiet`.
fn note(line: &str) {
    if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("{line}");
    }
}

#[derive(Subcommand)]
enum Command {
    /// Check YAML case files (default: the bundled specs/cases).
    Run {
        /// Case files or directories.
        paths: Vec<PathBuf>,
        /// Run only the case of this name (in every file loaded that has
        /// one); repeatable. A name no case has is an error that lists the
        /// names there are, or the nearest when there are many.
        #[arg(long = "case", value_name = "NAME")]
        cases: Vec<String>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Check every location expression, location list entry and FDE of ELF
    /// files (default: this executable).
    Elf {
        #[command(flatten)]
        args: elf::ElfArgs,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Check every DebugDeclare and DebugValue expression of SPIR-V
    /// modules (OpenCL.DebugInfo.100) and the module rules
    /// (specs/rules/spirv-module.yaml).
    Spirv {
        /// SPIR-V modules (.spv).
        files: Vec<PathBuf>,
        /// Seed of the synthetic machine state.
        #[arg(long, default_value_t = 0x5eed)]
        seed: u64,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Decode, validate and summarise Intel vISA debug info blobs (layout
    /// detected or --layout), lower them to location lists and CFI and
    /// evaluate both with the reference and fast evaluators (exit 1 on a
    /// disagreement), list what INTC containers and zebin ELFs carry, and
    /// with --genx compare each blob with GenX_IR -decodedbg.
    Visa(visa::VisaArgs),
    /// Judge IGC's own DWARF: compare it with the lowering of the vISA blob
    /// of the same compile, per ocloc compile directory, and run
    /// llvm-dwarfdump, readelf, GDB and gimli over it.
    IgcDwarf(igc::IgcArgs),
    /// Decode and validate Tru64 optimization data (raw PPODE streams or
    /// .tru64 descriptions): each procedure's records with their offsets,
    /// the rules broken, and with --at PC where each split variable is and
    /// which discontiguous scopes hold the pc.
    Tru64(tru64::Tru64Args),
    /// Evaluate one expression (text or hex) in a context given by options
    /// or a case file's `context:`, and judge every consumer against the
    /// reference; `--trace` shows the stack after each operation,
    /// `--emit-case` writes the evaluation as a case.
    Eval(eval::EvalArgs),
    /// Shrink a failing fuzz input (delta debugging over operations and
    /// context entries) into a regression under corpus/regressions/.
    Minimize(fuzz::MinimizeArgs),
    /// Write seed corpora (corpus/<target>/) from the bundled cases and ELF
    /// files.
    ExportCorpus(fuzz::ExportArgs),
    /// Report what a fuzz corpus reaches: the share of inputs the reference
    /// turns into a result, and which operations/instructions they hold.
    FuzzStats(fuzz::StatsArgs),
    /// Write the executable and core file the gdb and lldb adapters load
    /// for one expression case (docs/debuggers.md), or the SPIR-V module
    /// the SPIR-V tools are given for a `spirv:` case (docs/consumers.md).
    Synth(synth::SynthArgs),
    /// Run the suite against every available consumer and write the
    /// rule x consumer conformance matrix (docs/conformance.md).
    Matrix(matrix::MatrixArgs),
    /// Check the output of each producer of a manifest (GCC, clang, rustc,
    /// Go, ...; specs/producers/producers.yaml), confirm each ill-formed
    /// expression with llvm-dwarfdump, and write the producer report
    /// (docs/producers.md) with each class's reading and minimal case.
    Producers(producers::ProducersArgs),
    /// Time the fast evaluator against gimli (and the reference) on real
    /// input, each through its own API, in interleaved rounds.
    Bench(bench::BenchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish,
    /// powershell) on stdout, e.g. `dwarfcheck completions bash >
    /// ~/.local/share/bash-completion/completions/dwarfcheck`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// List each rule of the catalogue with the cases that exercise it.
    Coverage {
        /// Case files or directories (default: the bundled specs/cases).
        paths: Vec<PathBuf>,
        /// Exit 1 if a rule has no case, or an ill-formed / evaluation-error
        /// / unspecified rule has no negative case.
        #[arg(long)]
        fail_uncovered: bool,
    },
    /// Write the suite as language-neutral JSON with expected outcomes
    /// (docs/suite-format.md).
    ExportSuite(export::ExportArgs),
}

/// Options shared by the comparing commands.
#[derive(Args)]
struct ReportArgs {
    /// Print the summary as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Fail (exit 1) when this third-party consumer disagrees; repeatable.
    #[arg(long, value_name = "NAME")]
    gate: Vec<String>,
    /// Third-party consumers to run, comma-separated: gimli,
    /// llvm-dwarfdump, readelf, pyelftools, libdw, libdw-loclist, framehop,
    /// libunwind, gdb, lldb, delve, gdb-unwind, lldb-unwind, lldb-rows,
    /// eu-stack, spirv-as, spirv-dis, spirv-val, llvm-spirv (default:
    /// gimli). `none` runs only reference and fast.
    /// llvm-dwarfdump, readelf, pyelftools and libdw build CFI row tables
    /// only; libdw-loclist selects location-list entries (location-list
    /// cases only); framehop and libunwind unwind only (cases with an
    /// unwinding part; libunwind through a C helper built at first use);
    /// gdb, lldb and delve evaluate expressions only, through a synthesised
    /// executable and core file per case (docs/debuggers.md); gdb-unwind,
    /// lldb-unwind and eu-stack unwind only, through a synthesised
    /// executable and core file per unwinding case; lldb-rows builds
    /// x86-64 CFI row tables only (LLDB's `image show-unwind`, through a
    /// synthesised executable and core file per case); spirv-as,
    /// spirv-dis, spirv-val and llvm-spirv (llvm-spirv-15 -r) take `spirv:`
    /// cases only, through a minimal SPIR-V module per case
    /// (docs/consumers.md "SPIR-V tools as consumers").
    #[arg(long, value_delimiter = ',', default_value = "gimli")]
    consumers: Vec<String>,
    /// A consumer speaking the process protocol (docs/protocol.md):
    /// `cmd:COMMAND`, run with `sh -c`; its name is the one it gives in
    /// its handshake. Repeatable; each value is one whole spec.
    #[arg(long = "consumer", value_name = "SPEC")]
    consumer: Vec<String>,
    /// Time budget in seconds of one protocol request (`--consumer`).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    protocol_timeout: u64,
    #[command(flatten)]
    down: DownArgs,
    /// How many findings to print in full.
    #[arg(long, default_value_t = 10)]
    show: usize,
    /// Time budget in seconds of one run of an external tool
    /// (llvm-dwarfdump, readelf) on one frame section.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    tool_timeout: u64,
    /// Time budget in seconds of a debugger (gdb, lldb) on one case: a
    /// debugger that gives no answer for this long is killed and the case
    /// is a consumer fault.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    debugger_timeout: u64,
    /// Output budget in MiB of one run of an external tool.
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    tool_output: u64,
}

/// When a consumer that runs other programs is given up on.
#[derive(Args)]
pub(crate) struct DownArgs {
    /// Declare a protocol consumer (`--consumer`) or a debugger (gdb, lldb)
    /// down after N consecutive faults (no reply in time, a crash, a broken
    /// protocol; for a debugger, no answer in time or no start): its
    /// remaining cases are `consumer-down`, not asked. 0: never.
    #[arg(long, value_name = "N", default_value_t = dwarfcheck::consumer::health::DEFAULT_DOWN_AFTER)]
    pub(crate) consumer_down_after: u32,
}

impl ReportArgs {
    /// The limits of external tools and debuggers the options set.
    fn budgets(&self) -> by_name::Budgets {
        by_name::Budgets {
            tool: RunBudget {
                time: std::time::Duration::from_secs(self.tool_timeout),
                output_bytes: self.tool_output.saturating_mul(1 << 20),
            },
            debugger: Limits { per_case: std::time::Duration::from_secs(self.debugger_timeout), ..Limits::default() },
            protocol: RunBudget {
                time: std::time::Duration::from_secs(self.protocol_timeout),
                ..dwarfcheck::consumer::protocol::default_budget()
            },
            down_after: self.down.consumer_down_after,
        }
    }

    fn consumers(&self) -> Result<Vec<Box<dyn Consumer>>, String> {
        let mut out: Vec<Box<dyn Consumer>> = Vec::new();
        let budgets = self.budgets();
        for c in self.consumers.iter().filter(|c| c.as_str() != "none") {
            out.push(by_name::consumer(c, &budgets).map_err(|e| e.to_string())?);
        }
        for spec in &self.consumer {
            let p = by_name::protocol(spec, &budgets, &out).map_err(|e| e.to_string())?;
            out.push(p);
        }
        for g in &self.gate {
            if !out.iter().any(|c| c.name() == g) {
                return Err(format!("--gate {g}: no such consumer in this run"));
            }
        }
        Ok(out)
    }

    /// How `elf` and `spirv` run their real inputs' cases: the gates, a
    /// progress bar unless the report is JSON, and 1,000 findings in full
    /// (all of them in JSON).
    fn real_input_options(&self) -> dwarfcheck::runner::Options {
        let keep_details = if self.json { 0 } else { 1000 };
        dwarfcheck::runner::Options {
            gates: self.gate.clone(),
            progress: !self.json,
            keep_details,
            ..Default::default()
        }
    }

    /// Prints the report and returns the exit status; `--junit` gets the
    /// per-consumer JUnit of [`report::junit`] (real inputs: one test case
    /// per finding and per consumer's agreements).
    fn finish(&self, title: &str, s: &Summary) -> ExitCode {
        self.finish_with_junit(title, s, || report::junit(title, s))
    }

    /// [`ReportArgs::finish`] with the JUnit text made by `junit` (`run`'s
    /// has one test case per case and consumer), only under `--junit`.
    fn finish_with_junit(&self, title: &str, s: &Summary, junit: impl FnOnce() -> String) -> ExitCode {
        self.finish_with(title, s, junit, None)
    }

    /// [`ReportArgs::finish_with_junit`]; under `--json`, `extra` (a key
    /// and its value) is added to the JSON object beside the summary.
    fn finish_with(
        &self,
        title: &str,
        s: &Summary,
        junit: impl FnOnce() -> String,
        extra: Option<(&str, serde_json::Value)>,
    ) -> ExitCode {
        if self.json {
            match extra {
                None => println!("{}", report::json(title, s)),
                Some((key, value)) => {
                    let v = serde_json::json!({ "job": title, "summary": s, key: value });
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
                    );
                }
            }
        } else {
            print!("{}", report::text(title, s, self.show));
        }
        if let Some(path) = &self.junit {
            if let Err(e) = std::fs::write(path, junit()) {
                eprintln!("dwarfcheck: cannot write {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
        if s.failed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// What `run` and `coverage` load by default: the bundled cases and the
/// YAML regressions of `corpus/regressions/` (fuzz findings).
fn default_case_paths() -> Vec<PathBuf> {
    let mut v = vec![bundled_cases()];
    let r = dwarfcheck::fuzzing::replay::bundled_dir();
    if r.is_dir() {
        v.push(r);
    }
    v
}

/// The bundled case directory: next to the crate's manifest.
fn bundled_cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases")
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.quiet {
        QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
        dwarfcheck::runner::progress::hide_all();
    }
    report::use_color(match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            use std::io::IsTerminal;
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    });
    match cli.command {
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "dwarfcheck", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Command::Run { paths, cases, report } => run::run(paths, &cases, &report),
        Command::Elf { args, report } => elf::elf(args, &report),
        Command::Spirv { files, seed, report } => spirv::spirv(spirv::SpirvArgs { files, seed }, &report),
        Command::Visa(args) => visa::visa(&args),
        Command::IgcDwarf(args) => igc::igc_dwarf(&args),
        Command::Tru64(args) => tru64::tru64(&args),
        Command::Eval(args) => eval::eval(&args),
        Command::Minimize(args) => fuzz::minimize(&args),
        Command::ExportCorpus(args) => fuzz::export(&args),
        Command::FuzzStats(args) => fuzz::stats(&args),
        Command::Synth(args) => synth::synth(&args),
        Command::Coverage { paths, fail_uncovered } => coverage::coverage(paths, fail_uncovered),
        Command::Matrix(args) => matrix::matrix(&args),
        Command::Producers(args) => producers::producers(&args),
        Command::Bench(args) => bench::bench(&args),
        Command::ExportSuite(args) => export::export_suite(args),
    }
}

/// A number of seconds: finite, not negative, at most a year.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=365.0 * 86400.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds between 0 and one year")),
    }
}

/// When no input of `elf` or `spirv` could be read: prints why for each
/// and returns exit status 2.
fn no_input_read(unreadable: &[dwarfcheck::runner::InputNote]) -> ExitCode {
    for n in unreadable {
        eprintln!("dwarfcheck: {}: {}", n.input, n.reason);
    }
    input_error("no input could be read")
}

/// Prints an input/usage error and returns exit status 2.
fn input_error(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("dwarfcheck: {msg}");
    ExitCode::from(2)
}

/// Loads every case under `paths` (default: the bundled suite), printing
/// every file error; `Err` carries the exit status. Shows a progress bar
/// for large inputs on a terminal ([`load_cases_showing`]).
fn load_cases(paths: Vec<PathBuf>) -> Result<Vec<dwarfcheck::case::Case>, ExitCode> {
    load_cases_showing(paths, true)
}

/// Case files holding more than this many bytes (about 2,000 small cases)
/// get a loading progress bar.
const PROGRESS_MIN_BYTES: u64 = 256 << 10;

/// [`load_cases`]; with `progress`, a bar on stderr (only when it is a
/// terminal) counts the bytes of the files loaded so far when there are
/// more than [`PROGRESS_MIN_BYTES`].
fn load_cases_showing(paths: Vec<PathBuf>, progress: bool) -> Result<Vec<dwarfcheck::case::Case>, ExitCode> {
    let paths = if paths.is_empty() { default_case_paths() } else { paths };
    let files = dwarfcheck::case::yaml::find_case_files(&paths).map_err(input_error)?;
    if files.is_empty() {
        return Err(input_error("no case files found"));
    }
    let sizes: Vec<u64> = files.iter().map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)).collect();
    let total: u64 = sizes.iter().sum();
    let bar = dwarfcheck::runner::progress::on_terminal(
        total,
        "{spinner} loading case files {bytes}/{total_bytes} [{bar:40}] {wide_msg}",
        progress && total > PROGRESS_MIN_BYTES,
    );
    let mut cases = Vec::new();
    let mut bad = false;
    for (f, size) in files.iter().zip(sizes) {
        if let Some(b) = &bar {
            b.set_message(f.display().to_string());
        }
        match dwarfcheck::case::yaml::load_file(f) {
            Ok(c) => cases.extend(c),
            Err(errs) => {
                bad = true;
                if let Some(b) = &bar {
                    b.suspend(|| errs.iter().for_each(|e| eprintln!("{e}")));
                } else {
                    errs.iter().for_each(|e| eprintln!("{e}"));
                }
            }
        }
        if let Some(b) = &bar {
            b.inc(size);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if bad {
        return Err(ExitCode::from(2));
    }
    Ok(cases)
}
