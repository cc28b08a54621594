//! `dwarfcheck minimize` (a fuzz crash into a regression case),
//! `dwarfcheck export-corpus` (seed corpora for every target) and
//! `dwarfcheck fuzz-stats` (what a corpus reaches).

use clap::Args;
use dwarfcheck::fuzzing::{export::Seeds, minimize, stats::Stats, targets::Target};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `dwarfcheck minimize`.
#[derive(Args)]
pub struct MinimizeArgs {
    /// A fuzz input that fails (e.g. fuzz/artifacts/expr_ops/crash-...).
    input: PathBuf,
    /// The target it was found by (expr_bytes, expr_ops, cfi_bytes,
    /// cfi_ops, case_yaml, spirv_expr); default: the input's folder name.
    #[arg(long)]
    target: Option<String>,
    /// Where regressions go.
    #[arg(long, default_value = "corpus/regressions")]
    out: PathBuf,
    /// At most this many oracle runs.
    #[arg(long, default_value_t = 20_000)]
    budget: usize,
}

/// Minimises a failing input and writes it under `--out`.
pub fn minimize(a: &MinimizeArgs) -> ExitCode {
    let name = a
        .target
        .clone()
        .or_else(|| a.input.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()).map(str::to_string));
    let Some(target) = name.as_deref().and_then(Target::by_name) else {
        return super::input_error(format!(
            "which fuzz target found {}? give --target (expr_bytes, expr_ops, cfi_bytes, cfi_ops, case_yaml, spirv_expr)",
            a.input.display()
        ));
    };
    let data = match std::fs::read(&a.input) {
        Ok(d) => d,
        Err(e) => return super::input_error(format!("{}: {e}", a.input.display())),
    };
    let Some(input) = target.decode(&data) else {
        return super::input_error(format!("{} is not an input {} evaluates", a.input.display(), target.name()));
    };
    let m = match minimize::minimize(input, a.budget) {
        Ok(m) => m,
        Err(e) => return super::input_error(e),
    };
    match minimize::write(&m, target, &a.out) {
        Ok(p) => {
            println!(
                "{} ({} oracle runs): {}",
                m.failure.kind,
                m.tries,
                m.failure.message.lines().next().unwrap_or("")
            );
            println!("wrote {}", p.display());
            ExitCode::SUCCESS
        }
        Err(e) => super::input_error(format!("cannot write under {}: {e}", a.out.display())),
    }
}

/// Arguments of `dwarfcheck export-corpus`.
#[derive(Args)]
pub struct ExportArgs {
    /// ELF files whose location expressions and frame sections become seeds
    /// too (e.g. /usr/lib/debug/.build-id/*/*.debug, AMDGPU objects).
    elf: Vec<PathBuf>,
    /// Where `<target>/` folders go.
    #[arg(long, default_value = "corpus")]
    out: PathBuf,
    /// At most this many expressions from each ELF file.
    #[arg(long, default_value_t = 2000)]
    per_file: usize,
    /// Generator inputs tried for the seeds of expr_ops, cfi_ops and
    /// spirv_expr (each
    /// one kept that reaches an operation or instruction no earlier one
    /// reached).
    #[arg(long, default_value_t = 6000)]
    generated: u64,
}

/// Writes seeds from the bundled cases, the given ELF files and the
/// generators.
pub fn export(a: &ExportArgs) -> ExitCode {
    let mut seeds = Seeds::default();
    let files = match dwarfcheck::case::yaml::find_case_files(&[super::bundled_cases()]) {
        Ok(f) => f,
        Err(e) => return super::input_error(e),
    };
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        if let Ok(cases) = dwarfcheck::case::yaml::load_str(&f.display().to_string(), &text) {
            seeds.add_cases(&cases, Some(&text));
        }
    }
    let opts = dwarfcheck::elf::Options { unwind_samples: 0, ..Default::default() };
    for f in &a.elf {
        match dwarfcheck::elf::extract(f, &opts) {
            Ok(x) => {
                let step = (x.exprs.len() / a.per_file.max(1)).max(1);
                let mut cases: Vec<dwarfcheck::case::Case> =
                    x.exprs.into_iter().step_by(step).take(a.per_file).map(dwarfcheck::case::Case::Expr).collect();
                cases.extend(x.cfi.into_iter().take(1).map(dwarfcheck::case::Case::Cfi));
                seeds.add_cases(&cases, None);
            }
            Err(e) => eprintln!("dwarfcheck: {e:#} (skipped)"),
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    seeds.add_visa(&[root.join("specs/cases/visa"), root.join("specs/fixtures/intel")]);
    seeds.add_tru64(&[root.join("specs/cases/tru64")]);
    seeds.add_generated(a.generated);
    match seeds.write(&a.out) {
        Ok(counts) => {
            for (t, n) in counts {
                println!("{:<11} {n} seeds in {}", t.name(), a.out.join(t.name()).display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => super::input_error(format!("cannot write under {}: {e}", a.out.display())),
    }
}

/// Arguments of `dwarfcheck fuzz-stats`.
#[derive(Args)]
pub struct StatsArgs {
    /// The fuzz target whose inputs these are.
    target: String,
    /// Corpus directories (e.g. fuzz/corpus/expr_ops corpus/expr_ops).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Exit with status 1 when some operation (or instruction) of a
    /// vendor profile (or machine) the corpus evaluates under is never
    /// reached.
    #[arg(long)]
    fail_missing: bool,
}

/// Prints what a corpus reaches: results vs errors, and per vendor
/// profile (expressions) or machine (CFI) the operations or instructions
/// the reference reached and those it did not.
pub fn stats(a: &StatsArgs) -> ExitCode {
    let Some(target) = Target::by_name(&a.target) else {
        return super::input_error(format!("no fuzz target {}", a.target));
    };
    let mut s = Stats::default();
    for dir in &a.dirs {
        let rd = match std::fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) => return super::input_error(format!("{}: {e}", dir.display())),
        };
        for e in rd.flatten() {
            if let Ok(data) = std::fs::read(e.path()) {
                s.add(target, &data);
            }
        }
    }
    let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    println!("{}: {} inputs, {} decoded", target.name(), s.inputs, s.decoded);
    println!(
        "reference results (value/location, or a row table): {} of {} evaluated ({:.1}%)",
        s.results,
        s.evaluated,
        pct(s.results, s.evaluated)
    );
    let what = if matches!(target, Target::CfiBytes | Target::CfiOps) {
        "instructions reached per machine"
    } else {
        "operations reached per vendor profile"
    };
    println!("{what} (executed, or stopped at; numbered families counted once):");
    let mut missing_any = false;
    for (name, g) in &s.groups {
        let missing = g.missing();
        missing_any |= !missing.is_empty();
        let reached = g.known.len() - missing.len();
        print!("  {name:<16} {:>7} evaluated: {reached} of {} reached", g.evaluated, g.known.len());
        if missing.is_empty() {
            println!();
        } else {
            println!("; missing: {}", missing.join(" "));
        }
    }
    if a.fail_missing && missing_any {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
