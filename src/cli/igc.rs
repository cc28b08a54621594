//! `dwarfcheck igc-dwarf DIRS`: per ocloc compile directory
//! (`NAME-DEVICE-OPT-FORMAT/{out,dump}`, or a directory of them), IGC's
//! DWARF against the lowering of the blob of the same compile, and the
//! third-party classes on it.

use dwarfcheck::consumer::external::RunBudget;
use dwarfcheck::visa::igc_dwarf::{compare, fixture, frame, read, tools};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `igc-dwarf`.
#[derive(clap::Args)]
pub struct IgcArgs {
    /// Compile directories (with `out/` and `dump/`), or directories of them
    /// (`target/fixtures/intel`).
    pub dirs: Vec<PathBuf>,
    /// Skip the third-party tools.
    #[arg(long)]
    pub no_tools: bool,
    /// Time budget in seconds of one tool run.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,
    /// Print every difference, not only the counts.
    #[arg(long)]
    pub verbose: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct ElfReport {
    compile: String,
    origin: String,
    error: Option<String>,
    comparison: Option<compare::Report>,
    frames: Option<frame::FrameReport>,
    tools: Vec<(tools::Tool, tools::ToolReport)>,
}

/// Runs `igc-dwarf`; exit 1 when a DWARF ELF or blob cannot be read.
pub fn igc_dwarf(a: &IgcArgs) -> ExitCode {
    let mut compiles = Vec::new();
    for d in &a.dirs {
        if d.join("dump").is_dir() {
            compiles.push(fixture::compile(d));
        } else {
            compiles.extend(fixture::compiles(d));
        }
    }
    if compiles.iter().all(|c| c.elfs.is_empty()) {
        eprintln!("igc-dwarf: no compile directory (out/ and dump/ with a DWARF ELF beside a vISA blob) found");
        return ExitCode::from(1);
    }
    let budget = RunBudget { time: std::time::Duration::from_secs(a.timeout), ..RunBudget::default() };
    let mut reports = Vec::new();
    for c in &compiles {
        for e in &c.elfs {
            let mut r = ElfReport {
                compile: c.name.clone(),
                origin: e.origin.clone(),
                error: None,
                comparison: None,
                frames: None,
                tools: vec![],
            };
            match read::read(&e.bytes).and_then(|d| fixture::blob(&e.blob).map(|b| (d, b))) {
                Ok((dwarf, blob)) => {
                    r.comparison = Some(compare::compare(&dwarf, &blob, c.platform));
                    r.frames = read::debug_frame(&e.bytes).map(|s| frame::compare_frames(&s, &blob, c.platform));
                    if !a.no_tools {
                        r.tools = tools::TOOLS.iter().map(|&t| (t, tools::run(t, &e.bytes, &dwarf, budget))).collect();
                    }
                }
                Err(m) => r.error = Some(m),
            }
            reports.push(r);
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&reports).unwrap_or_default());
    } else {
        for r in &reports {
            print_text(r, a.verbose);
        }
    }
    if reports.iter().any(|r| r.error.is_some()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_text(r: &ElfReport, verbose: bool) {
    println!("{} {}", r.compile, r.origin);
    if let Some(e) = &r.error {
        println!("  error: {e}");
    }
    if let Some(c) = &r.comparison {
        let counts = [("variables", c.variables), ("matched", c.matched), ("points", c.points), ("agree", c.agree)];
        print_summary("", &counts, &c.per_class());
        if verbose {
            print_differences(&c.differences);
        }
    }
    if let Some(f) = &r.frames {
        let counts = [("FDEs", f.fdes), ("rows", f.rows), ("points", f.points), ("agree", f.agree)];
        print_summary("frames: ", &counts, &f.per_class());
        if verbose {
            print_differences(&f.differences);
        }
    }
    for (t, tr) in &r.tools {
        match &tr.error {
            Some(e) => println!("  {t:?}: not run: {e}"),
            None => println!(
                "  {t:?}: classes {:?} decoded {}/{} ops {}/{} locals {}",
                tr.classes, tr.decoded.0, tr.decoded.1, tr.ops.0, tr.ops.1, tr.locals
            ),
        }
    }
}

/// One line per difference: class, who, pc, the expression bytes (when
/// there are any) and the detail.
fn print_differences(differences: &[compare::Difference]) {
    for d in differences {
        let pc = d.pc.map_or(String::new(), |p| format!(" at {p:#x}"));
        let bytes: Vec<String> = d.expr.iter().map(|b| format!("{b:02x}")).collect();
        let bytes = if bytes.is_empty() { String::new() } else { format!("[{}] ", bytes.join(" ")) };
        println!("    {} {}{pc}: {bytes}{}", d.class, d.variable, d.detail);
    }
}

/// `  LABEL name n name n ... differences {class: n}`.
fn print_summary(label: &str, counts: &[(&str, usize)], per_class: &std::collections::BTreeMap<&str, usize>) {
    let counts: Vec<String> = counts.iter().map(|(n, v)| format!("{n} {v}")).collect();
    println!("  {label}{} differences {per_class:?}", counts.join(" "));
}
