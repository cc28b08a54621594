//! `dwarfcheck visa`: decodes (layout detected or forced), validates,
//! summarises and lowers vISA debug info blobs (`visa::check`: location
//! lists and CFI evaluated by both evaluators within `--max-points`),
//! lists what INTC containers and zebin ELFs carry, and with `--genx`
//! compares each blob with IGC's decoder.

use dwarfcheck::consumer::external::RunBudget;
use dwarfcheck::visa::container::{self, Contents};
use dwarfcheck::visa::model::Counts;
use dwarfcheck::visa::{check, detect, genx, validate, Fault, Layout, Platform};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `visa`.
#[derive(clap::Args)]
pub struct VisaArgs {
    /// Raw blobs (magic 0xdeadd010), INTC .dbg containers or zebin ELFs.
    pub files: Vec<PathBuf>,
    /// Decode under this layout (seed, igc-2022, igc-current) instead of
    /// detecting it.
    #[arg(long)]
    pub layout: Option<String>,
    /// Platform the registers are checked against (skl, tgllp, dg2, pvc).
    #[arg(long, default_value = "tgllp")]
    pub platform: String,
    /// Also run `GenX_IR -decodedbg` on every blob and compare field by field.
    #[arg(long)]
    pub genx: bool,
    /// Time budget in seconds of one GenX_IR run.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub genx_timeout: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Most points (location points plus unwinding points) evaluated per
    /// blob by the lowering check.
    #[arg(long, value_name = "N", default_value_t = check::Budget::default().points)]
    pub max_points: usize,
}

/// The largest file read (bytes).
const MAX_FILE_BYTES: u64 = 1 << 28;

/// What one file gave.
#[derive(serde::Serialize)]
struct FileReport {
    file: String,
    contents: Option<Contents>,
    layout: Option<Layout>,
    counts: Option<Counts>,
    faults: Vec<Fault>,
    genx: Option<GenxReport>,
    lowering: Option<check::Report>,
    error: Option<String>,
}

#[derive(serde::Serialize)]
struct GenxReport {
    error: Option<String>,
    disagreements: Vec<genx::Disagreement>,
}

fn one(path: &PathBuf, a: &VisaArgs, layout: Option<Layout>, platform: Platform) -> FileReport {
    let mut r = FileReport {
        file: path.display().to_string(),
        contents: None,
        layout: None,
        counts: None,
        faults: Vec::new(),
        genx: None,
        lowering: None,
        error: None,
    };
    let bytes = match std::fs::metadata(path) {
        Ok(m) if m.len() > MAX_FILE_BYTES => {
            r.error = Some(format!("larger than {MAX_FILE_BYTES} bytes"));
            return r;
        }
        Ok(_) => match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                r.error = Some(e.to_string());
                return r;
            }
        },
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    match container::identify(&bytes) {
        Ok(Contents::Blob) => {}
        Ok(Contents::Unknown) => {
            r.error = Some("neither a vISA debug info blob, an INTC container nor an ELF".into());
            return r;
        }
        Ok(c) => {
            r.contents = Some(c);
            return r;
        }
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    }
    r.contents = Some(Contents::Blob);
    match detect::decode_with(&bytes, layout) {
        Ok(b) => {
            r.layout = Some(b.layout);
            r.counts = Some(b.counts());
            r.faults = validate::validate(&b, platform);
            r.lowering = Some(check::check(&b, platform, check::Budget { points: a.max_points }));
            if a.genx {
                let budget = RunBudget { time: std::time::Duration::from_secs(a.genx_timeout), ..RunBudget::default() };
                r.genx = Some(match genx::run(path, platform, budget) {
                    Ok(d) => GenxReport { error: None, disagreements: genx::compare(&genx::render(&b, platform), &d) },
                    Err(e) => GenxReport { error: Some(e.to_string()), disagreements: Vec::new() },
                });
            }
        }
        Err(f) => {
            if a.genx {
                let budget = RunBudget { time: std::time::Duration::from_secs(a.genx_timeout), ..RunBudget::default() };
                r.genx = Some(match genx::run(path, platform, budget) {
                    Ok(d) => GenxReport {
                        error: Some(format!(
                            "not compared (our decoding stopped); GenX_IR's behaviour: {}",
                            genx::classify(&f, &d).unwrap_or("unclassified")
                        )),
                        disagreements: Vec::new(),
                    },
                    Err(e) => GenxReport { error: Some(e.to_string()), disagreements: Vec::new() },
                });
            }
            r.faults.push(f)
        }
    }
    r
}

fn contents_line(c: &Contents) -> String {
    let elf = |e: &container::ElfInfo| {
        let names: Vec<String> = e.debug_sections.iter().map(|(n, s)| format!("{n} ({s} B)")).collect();
        format!(
            "e_machine {}, {}",
            e.machine,
            if names.is_empty() { "no debug sections".into() } else { names.join(", ") }
        )
    };
    match c {
        Contents::Blob => "vISA debug info blob".into(),
        Contents::Unknown => "unknown".into(),
        Contents::Elf(e) => format!("ELF, {}", elf(e)),
        Contents::Intc { device, kernels } => {
            let ks: Vec<String> = kernels
                .iter()
                .map(|k| match &k.elf {
                    Some(e) => format!("{}: ELF at {:#x}, {}", k.name, k.visa_debug.0, elf(e)),
                    None => {
                        format!("{}: {} byte(s) of vISA debug data at {:#x}", k.name, k.visa_debug.1, k.visa_debug.0)
                    }
                })
                .collect();
            format!("INTC container (device {device}), {} kernel(s): {}", kernels.len(), ks.join("; "))
        }
    }
}

pub fn visa(a: &VisaArgs) -> ExitCode {
    if a.files.is_empty() {
        return super::input_error("no file given");
    }
    let layout = match a.layout.as_deref().map(|l| (l, Layout::parse(l))) {
        None => None,
        Some((_, Some(l))) => Some(l),
        Some((l, None)) => return super::input_error(format!("--layout {l}: not seed, igc-2022 or igc-current")),
    };
    let Some(platform) = Platform::parse(&a.platform) else {
        return super::input_error(format!("--platform {}: not skl, tgllp, dg2 or pvc", a.platform));
    };
    let reports: Vec<FileReport> = a.files.iter().map(|f| one(f, a, layout, platform)).collect();
    let failed = reports.iter().any(|r| {
        !r.faults.is_empty()
            || r.lowering.as_ref().is_some_and(|l| l.disagreement_count > 0)
            || r.genx.as_ref().is_some_and(|g| g.error.is_some() || !g.disagreements.is_empty())
    });
    if a.json {
        println!("{}", serde_json::to_string_pretty(&reports).unwrap_or_default());
    } else {
        for r in &reports {
            print_text(r);
        }
    }
    if reports.iter().all(|r| r.error.is_some()) {
        ExitCode::from(2)
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_text(r: &FileReport) {
    if let Some(e) = &r.error {
        println!("{}: error: {e}", r.file);
        return;
    }
    match (&r.contents, &r.counts, r.layout) {
        (Some(Contents::Blob), Some(c), Some(l)) => println!(
            "{}: layout {l}; {} object(s), {} variable(s), {} interval(s), {} subroutine(s), {} CFI entr(ies); {} rule fault(s)",
            r.file,
            c.objects,
            c.variables,
            c.intervals,
            c.subroutines,
            c.cfi_entries,
            r.faults.len()
        ),
        (Some(Contents::Blob), _, _) => println!("{}: not decoded", r.file),
        (Some(c), _, _) => println!("{}: {}", r.file, contents_line(c)),
        _ => {}
    }
    for f in r.faults.iter().take(20) {
        println!("  {f}");
    }
    if r.faults.len() > 20 {
        println!("  ... {} more fault(s)", r.faults.len() - 20);
    }
    if let Some(l) = &r.lowering {
        println!(
            "  lowering: {} object(s), {} variable(s), {} interval(s) ({} not lowered), {} range(s), {} point(s); {} FDE(s), {} row(s), {} unwind point(s), {} save entr(ies) skipped; {} reference/fast disagreement(s){}",
            l.objects,
            l.variables,
            l.intervals,
            l.not_lowered,
            l.ranges,
            l.points,
            l.fdes,
            l.rows,
            l.unwinds,
            l.skipped_saves,
            l.disagreement_count,
            if l.truncated { " (point budget reached)" } else { "" }
        );
        for d in l.disagreements.iter().take(10) {
            println!("    {} {} @ {:#x}: reference {}, fast {}", d.what, d.name, d.pc, d.reference, d.other);
        }
    }
    if let Some(g) = &r.genx {
        match &g.error {
            Some(e) => println!("  GenX_IR: {e}"),
            None => println!("  GenX_IR: {} field disagreement(s)", g.disagreements.len()),
        }
        for d in g.disagreements.iter().take(10) {
            println!("    {}: ours {}, GenX_IR {}", d.field, d.ours, d.genx);
        }
    }
}
