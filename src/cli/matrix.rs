//! `dwarfcheck matrix`: runs the suite against every available consumer and
//! writes the conformance matrix (docs/conformance.md, [`dwarfcheck::matrix`]).

use super::{input_error, load_cases};
use clap::Args;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::debugger::{Kind, Limits};
use dwarfcheck::consumer::{by_name, Consumer};
use dwarfcheck::matrix::{self, render::RenderOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `dwarfcheck matrix`.
#[derive(Args)]
pub struct MatrixArgs {
    /// Case files or directories (default: specs/cases and
    /// corpus/regressions, as `run` loads them).
    paths: Vec<PathBuf>,
    /// Third-party consumers, comma-separated (gimli, llvm-dwarfdump,
    /// readelf, gdb, lldb, ...; `genx-ir` for IGC's vISA decoder on the
    /// `.visa` cases; `none` for reference and fast only). Default: every one
    /// available; a tool whose program is missing is skipped and the
    /// document says so. Named explicitly, a missing tool is an error.
    #[arg(long, value_delimiter = ',')]
    consumers: Option<Vec<String>>,
    /// A consumer speaking the process protocol (docs/protocol.md),
    /// `cmd:COMMAND`; repeatable, each value one whole spec.
    #[arg(long = "consumer", value_name = "SPEC")]
    consumer: Vec<String>,
    /// Where to write the matrix (default: `conformance.md` in the
    /// current directory). The repository's own docs/conformance.md is
    /// written only when named here.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write nothing; exit 1 if FILE differs from what would be written.
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    down: super::DownArgs,
}

/// Consumers left out, with why: `(name, reason)`.
type Skipped = Vec<(String, String)>;

/// The third parties to run and those skipped. `Err`: an unknown name, or
/// a tool named explicitly that is missing.
fn consumers(
    wanted: Option<&[String]>,
    budgets: &by_name::Budgets,
) -> Result<(Vec<Box<dyn Consumer>>, Skipped), String> {
    let explicit = wanted.is_some();
    let names: Vec<String> = match wanted {
        Some(w) => w.iter().filter(|n| !matches!(n.as_str(), "none" | GENX)).cloned().collect(),
        None => by_name::KNOWN.iter().map(|s| s.to_string()).collect(),
    };
    let mut out: Vec<Box<dyn Consumer>> = Vec::new();
    let mut skipped: Skipped = Vec::new();
    for n in names {
        if !by_name::KNOWN.contains(&n.as_str()) {
            return Err(format!("unknown consumer `{n}`; expected {} or none", by_name::KNOWN.join(", ")));
        }
        match by_name::consumer(&n, budgets) {
            Ok(c) => out.push(c),
            Err(e) if explicit => return Err(e.to_string()),
            Err(e) => skipped.push((n, e.to_string())),
        }
    }
    Ok((out, skipped))
}

/// The name that asks for IGC's vISA decoder in `--consumers`.
const GENX: &str = "genx-ir";

/// Whether to run GenX_IR on the `.visa` cases: by default when it is
/// installed; named explicitly, it must be.
///
/// Errors: `genx-ir` named but GenX_IR is not on `PATH`.
fn genx_wanted(wanted: Option<&[String]>) -> Result<bool, String> {
    match wanted {
        None => Ok(true),
        Some(w) if w.iter().any(|n| n == GENX) => {
            if dwarfcheck::consumer::external::process::find_program(&["GenX_IR"]).is_none() {
                return Err(dwarfcheck::visa::genx::GenxError::Missing.to_string());
            }
            Ok(true)
        }
        Some(_) => Ok(false),
    }
}

/// The default output: `conformance.md` in the current directory.
fn default_out() -> PathBuf {
    PathBuf::from("conformance.md")
}

/// `path` shown from the crate root when it is inside it.
fn shown(path: &Path) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    match abs.strip_prefix(&root) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

pub fn matrix(args: &MatrixArgs) -> ExitCode {
    let start = std::time::Instant::now();
    let budgets = by_name::Budgets { down_after: args.down.consumer_down_after, ..by_name::Budgets::default() };
    let (mut others, skipped) = match consumers(args.consumers.as_deref(), &budgets) {
        Ok(c) => c,
        Err(e) => return input_error(e),
    };
    for spec in &args.consumer {
        match by_name::protocol(spec, &budgets, &others) {
            Ok(p) => others.push(p),
            Err(e) => return input_error(e.to_string()),
        }
    }
    let genx = match genx_wanted(args.consumers.as_deref()) {
        Ok(g) => g,
        Err(e) => return input_error(e),
    };
    let sources: Vec<String> = if args.paths.is_empty() {
        super::default_case_paths().iter().map(|p| shown(p)).collect()
    } else {
        args.paths.iter().map(|p| shown(p)).collect()
    };
    // Paths holding only `.visa` or `.tru64` cases give those sections alone.
    let blob_only = !args.paths.is_empty()
        && dwarfcheck::case::yaml::find_case_files(&args.paths).is_ok_and(|f| f.is_empty())
        && (!dwarfcheck::visa::cases::case_files(&args.paths).is_empty()
            || !dwarfcheck::tru64::cases::case_files(&args.paths).is_empty());
    let cases = match if blob_only { Ok(Vec::new()) } else { load_cases(args.paths.clone()) } {
        Ok(c) => c,
        Err(code) => return code,
    };
    super::note(&format!(
        "dwarfcheck matrix: {} case(s) against {} consumer(s); this takes a while (about 2 min for the bundled suite)",
        cases.len(),
        others.len() + 2
    ));
    let m = matrix::build_showing(&cases, &Reference, &Fast, &others, skipped, matrix::reports::KNOWN_REPORTS, true);
    let out = args.out.clone().unwrap_or_else(default_out);
    let mut command = String::from("dwarfcheck matrix");
    for p in &args.paths {
        command.push_str(&format!(" {}", shown(p)));
    }
    if let Some(c) = &args.consumers {
        command.push_str(&format!(" --consumers {}", c.join(",")));
    }
    for spec in &args.consumer {
        command.push_str(&format!(" --consumer '{spec}'"));
    }
    if let Some(o) = &args.out {
        command.push_str(&format!(" --out {}", shown(o)));
    }
    if args.down.consumer_down_after != dwarfcheck::consumer::health::DEFAULT_DOWN_AFTER {
        command.push_str(&format!(" --consumer-down-after {}", args.down.consumer_down_after));
    }
    let link_dir = out.parent().map(|p| if p.as_os_str().is_empty() { PathBuf::from(".") } else { p.to_path_buf() });
    let visa_paths = if args.paths.is_empty() { super::default_case_paths() } else { args.paths.clone() };
    let budget = dwarfcheck::consumer::external::process::RunBudget {
        time: std::time::Duration::from_secs(60),
        output_bytes: 16 << 20,
    };
    let visa = matrix::visa::build(&visa_paths, genx, budget);
    // The debuggers among this run's consumers also read the Tru64 lowerings.
    let asked: Vec<Kind> =
        [Kind::Gdb, Kind::Lldb].into_iter().filter(|k| others.iter().any(|c| c.name() == k.name())).collect();
    let tru64 = matrix::tru64::build(&visa_paths, &asked, Limits::default());
    let link = |origin: &str| {
        let (file, name) = origin.split_once('#').unwrap_or((origin, ""));
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let target = match &link_dir {
            Some(d) => matrix::render::relative(&canon(d), &canon(Path::new(file))),
            None => file.to_string(),
        };
        format!("[{name}]({target})")
    };
    let mut text = matrix::render::markdown(&m, &RenderOptions { command, sources, link_dir: link_dir.clone() });
    if !visa.rows.is_empty() || !visa.unreadable.is_empty() {
        text.push_str(&matrix::visa::markdown(&visa, &link));
    }
    if !tru64.rows.is_empty() || !tru64.unreadable.is_empty() {
        text.push_str(&matrix::tru64::markdown(&tru64, &link));
    }
    let fails = m.failures.iter().filter(|f| f.column >= 2).count();
    super::note(&format!(
        "dwarfcheck matrix: {} cases, {} rules, {} consumers, {} third-party failures; {:.2} s",
        m.cases.len(),
        m.rules.len(),
        m.columns.len(),
        fails,
        start.elapsed().as_secs_f64()
    ));
    let mut code = ExitCode::SUCCESS;
    if m.harness_failed() || visa.harness_failed() {
        report_harness(&m, &visa);
        code = ExitCode::from(1);
    }
    if args.check {
        let on_disk = std::fs::read_to_string(&out).unwrap_or_default();
        if on_disk != text {
            eprintln!(
                "dwarfcheck matrix: {} is not up to date; run `dwarfcheck matrix` to regenerate it",
                out.display()
            );
            return ExitCode::from(1);
        }
        eprintln!("dwarfcheck matrix: {} is up to date", out.display());
        return code;
    }
    if let Err(e) = std::fs::write(&out, text) {
        return input_error(format!("cannot write {}: {e}", out.display()));
    }
    super::note(&format!("dwarfcheck matrix: wrote {}", out.display()));
    code
}

/// Says on stderr why the reference or fast failed: a case's `expect`
/// the reference does not meet (the case's, or the reference's, fault),
/// apart from fast differing where the reference passes (a harness bug),
/// and a `.visa` case dwarfcheck's decoder misses.
fn report_harness(m: &matrix::Matrix, visa: &matrix::visa::VisaSection) {
    let named = |i: usize| format!("{} ({})", m.cases[i].origin, m.cases[i].name);
    let expect: Vec<usize> = m.failures.iter().filter(|f| f.column == 0).map(|f| f.case).collect();
    let fast: Vec<usize> =
        m.failures.iter().filter(|f| f.column == 1 && !expect.contains(&f.case)).map(|f| f.case).collect();
    let first = |v: &[usize]| v.iter().take(3).map(|&i| named(i)).collect::<Vec<_>>().join(", ");
    if !expect.is_empty() {
        eprintln!(
            "dwarfcheck matrix: {} case(s) whose `expect` is not what the reference gives: check the expectation \
             (for a bundled case, the reference is wrong): {}",
            expect.len(),
            first(&expect)
        );
    }
    if !fast.is_empty() {
        eprintln!(
            "dwarfcheck matrix: fast does not give the reference's answer on {} case(s) (a harness bug): {}",
            fast.len(),
            first(&fast)
        );
    }
    if visa.harness_failed() {
        eprintln!("dwarfcheck matrix: dwarfcheck's vISA decoder misses a .visa case's expectation (a harness bug)");
    }
}
