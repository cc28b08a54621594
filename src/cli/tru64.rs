//! `dwarfcheck tru64`: decodes and validates Tru64 optimization data (raw
//! PPODE streams of one procedure, or `.tru64` YAML descriptions), prints
//! each procedure's records with their offsets and the rules broken, and
//! with `--at PC` where each split variable is and which scopes hold it;
//! each procedure's lowering to DWARF is evaluated by both evaluators at
//! every instruction (`tru64::check`, within `--max-points`) and printed
//! as a `lowering:` line.

use dwarfcheck::tru64::decode::Entry;
use dwarfcheck::tru64::model::{Procedure, Record, Symbols, Target};
use dwarfcheck::tru64::resolve::{resolve_children, resolve_scope, View, Where};
use dwarfcheck::tru64::{cases, check, lower, Fault};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `tru64`.
#[derive(clap::Args)]
pub struct Tru64Args {
    /// Raw PPODE streams (one procedure each, from its PPODE_STAMP) or
    /// `.tru64` case files (YAML; every case is a procedure).
    pub files: Vec<PathBuf>,
    /// Base address of a raw stream's procedure.
    #[arg(long, default_value = "0", value_parser = number)]
    pub base: u64,
    /// Size of a raw stream's procedure in instructions (default: unknown,
    /// no upper bound checked).
    #[arg(long, value_parser = number)]
    pub insns: Option<u64>,
    /// Also print where each split variable is and which discontiguous
    /// scopes hold this address.
    #[arg(long, value_name = "PC", value_parser = number)]
    pub at: Option<u64>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Most points (one location list at one pc) evaluated per procedure
    /// by the lowering check.
    #[arg(long, value_name = "N", default_value_t = check::Budget::default().points)]
    pub max_points: usize,
}

fn number(s: &str) -> Result<u64, String> {
    dwarfcheck::text::number::parse_u64(s).ok_or_else(|| format!("`{s}` is not a number"))
}

/// The largest file read (bytes).
const MAX_FILE_BYTES: u64 = 1 << 28;

/// What one procedure gave.
#[derive(serde::Serialize)]
struct ProcReport {
    file: String,
    name: Option<String>,
    procedure: Procedure,
    symbols: Symbols,
    entries: Vec<Entry>,
    faults: Vec<Fault>,
    at: Option<AtReport>,
    lowering: Option<check::Report>,
    error: Option<String>,
}

#[derive(serde::Serialize)]
struct AtReport {
    pc: u64,
    variables: Vec<(Target, Where)>,
    scopes: Vec<dwarfcheck::tru64::model::Optrndx>,
}

fn report(file: &str, name: Option<String>, bytes: &[u8], p: Procedure, s: &Symbols, a: &Tru64Args) -> ProcReport {
    let at = a.at;
    let (d, faults) = dwarfcheck::tru64::check(bytes, p, s);
    let records = d.records();
    let view = View { procedure: p, symbols: s, records: &records };
    let at = at.map(|pc| AtReport {
        pc,
        variables: view.splits().map(|sd| (sd.target.clone(), view.location_at(&sd.target, pc))).collect(),
        scopes: view.scopes_at(pc),
    });
    let lowering = Some(check::check(&view, &lower::ALPHA, check::Budget { points: a.max_points }));
    ProcReport {
        file: file.into(),
        name,
        procedure: p,
        symbols: s.clone(),
        entries: d.entries,
        faults,
        at,
        lowering,
        error: None,
    }
}

fn one(path: &PathBuf, a: &Tru64Args) -> Vec<ProcReport> {
    let file = path.display().to_string();
    let fail = |e: String| {
        let p = Procedure { base: a.base, insns: a.insns };
        vec![ProcReport {
            file: file.clone(),
            name: None,
            procedure: p,
            symbols: Symbols::default(),
            entries: vec![],
            faults: vec![],
            at: None,
            lowering: None,
            error: Some(e),
        }]
    };
    let bytes = match std::fs::metadata(path) {
        Ok(m) if m.len() > MAX_FILE_BYTES => return fail(format!("larger than {MAX_FILE_BYTES} bytes")),
        Ok(_) => match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => return fail(e.to_string()),
        },
        Err(e) => return fail(e.to_string()),
    };
    if path.extension().is_some_and(|x| x == "tru64") {
        let f = match cases::load(path) {
            Ok(f) => f,
            Err(e) => return fail(e),
        };
        return f
            .cases
            .iter()
            .map(|c| match cases::bytes_of(c) {
                Ok(b) => report(&file, Some(c.name.clone()), &b, c.procedure, &c.symbols, a),
                Err(e) => {
                    let mut r = fail(e).remove(0);
                    r.name = Some(c.name.clone());
                    r
                }
            })
            .collect();
    }
    vec![report(&file, None, &bytes, Procedure { base: a.base, insns: a.insns }, &Symbols::default(), a)]
}

pub fn tru64(a: &Tru64Args) -> ExitCode {
    if a.files.is_empty() {
        return super::input_error("no file given");
    }
    let reports: Vec<ProcReport> = a.files.iter().flat_map(|f| one(f, a)).collect();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&reports).unwrap_or_default());
    } else {
        reports.iter().for_each(print_text);
    }
    if reports.iter().all(|r| r.error.is_some()) {
        ExitCode::from(2)
    } else if reports
        .iter()
        .any(|r| !r.faults.is_empty() || r.error.is_some() || r.lowering.as_ref().is_some_and(check::Report::failed))
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_text(r: &ProcReport) {
    let head = match &r.name {
        Some(n) => format!("{} [{n}]", r.file),
        None => r.file.clone(),
    };
    if let Some(e) = &r.error {
        println!("{head}: error: {e}");
        return;
    }
    let size = r.procedure.insns.map_or("size unknown".to_string(), |n| format!("{n} instruction(s)"));
    println!(
        "{head}: procedure at {:#x}, {size}; {} record(s), {} rule fault(s)",
        r.procedure.base,
        r.entries.len(),
        r.faults.len()
    );
    let view = View { procedure: r.procedure, symbols: &r.symbols, records: &[] };
    let pc = |i: i128| view.pc_of(i).map_or_else(|| format!("insn {i}"), |p| format!("{p:#x}"));
    for e in &r.entries {
        let tag = Record::tag_name(e.record.tag());
        match &e.record {
            Record::Stamp { version, .. } => println!("  {:#06x} stamp, version {version}", e.at),
            Record::End { .. } => println!("  {:#06x} end", e.at),
            Record::Opaque { val, data, .. } => {
                println!("  {:#06x} {tag}, val {val}, {} data byte(s) (layout not in the seed)", e.at, data.len())
            }
            Record::SemEvent { events, .. } => {
                println!("  {:#06x} sem_event, {} entr(ies)", e.at, events.len());
                let mut i: i128 = 0;
                for (ev, m) in events.iter().zip(&e.marks) {
                    i += i128::from(ev.count);
                    let name = dwarfcheck::tru64::codes::name_of(dwarfcheck::tru64::codes::EVENTS, ev.event);
                    println!("    {:#06x} +{:<2} {} at {}", m.at, ev.count, name.unwrap_or("?"), pc(i));
                }
            }
            Record::Split { descs, .. } => {
                println!("  {:#06x} split, {} description(s)", e.at, descs.len());
                for (d, m) in descs.iter().zip(&e.marks) {
                    match d.duplicate_of {
                        Some(o) => println!("    {:#06x} {}: duplicate of local {o}", m.at, d.target),
                        None => println!(
                            "    {:#06x} {}: {:?} scheme, {} child(ren)",
                            m.at,
                            d.target,
                            d.scheme,
                            d.children.len()
                        ),
                    }
                    for (c, ra) in resolve_children(&d.children).iter().zip(&m.ranges) {
                        let defs: Vec<String> = c.defs.iter().map(|i| pc(*i)).collect();
                        println!(
                            "      {ra:#06x} {} for {} instruction(s) from {}; defined at [{}]",
                            c.location,
                            c.span.len,
                            pc(c.span.first),
                            defs.join(", ")
                        );
                    }
                }
            }
            Record::DiscontigScope { scopes, .. } => {
                println!("  {:#06x} discontig_scope, {} scope(s)", e.at, scopes.len());
                for (s, m) in scopes.iter().zip(&e.marks) {
                    let spans: Vec<String> = resolve_scope(view.scope_begin(s.scope), &s.ranges)
                        .iter()
                        .map(|sp| format!("{} for {}", pc(sp.first), sp.len))
                        .collect();
                    println!("    {:#06x} scope {}: instructions {}", m.at, s.scope, spans.join(", "));
                }
            }
        }
    }
    for f in r.faults.iter().take(20) {
        println!("  {f}");
    }
    if r.faults.len() > 20 {
        println!("  ... {} more fault(s)", r.faults.len() - 20);
    }
    if let Some(l) = &r.lowering {
        println!("  lowering: {}", l.line());
    }
    if let Some(at) = &r.at {
        println!("  at {:#x}:", at.pc);
        for (t, w) in &at.variables {
            let s = match w {
                Where::Children(ls) => ls.iter().map(ToString::to_string).collect::<Vec<_>>().join(" and "),
                Where::Default(l) => format!("{l} (default location)"),
                Where::Nowhere => "no location".into(),
            };
            println!("    {t}: {s}");
        }
        let scopes: Vec<String> = at.scopes.iter().map(ToString::to_string).collect();
        println!(
            "    discontiguous scopes holding it: {}",
            if scopes.is_empty() { "none".into() } else { scopes.join(", ") }
        );
    }
}
