//! `dwarfcheck producers`: the producer report (docs/producers.md,
//! [`dwarfcheck::producers::doc`]).

use clap::Args;
use dwarfcheck::producers::doc::{self, Class, Producer};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `dwarfcheck producers`.
#[derive(Args)]
pub struct ProducersArgs {
    /// The producers: a YAML list of `label`, `built_by` and `files`
    /// (paths or glob patterns, relative to the repository root; `@self`
    /// is this executable).
    #[arg(long, value_name = "FILE", default_value = "specs/producers/producers.yaml")]
    manifest: PathBuf,
    /// The write-up of each class: a YAML list of `rule`, `case`
    /// (`FILE#CASE`), `reading` and an optional `report` URL.
    #[arg(long, value_name = "FILE", default_value = "specs/producers/classes.yaml")]
    classes: PathBuf,
    /// Where to write the report (default: `producers.md` in the current
    /// directory). The repository's own docs/producers.md is written only
    /// when named here.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write every finding as SARIF 2.1.0 to FILE.
    #[arg(long, value_name = "FILE")]
    sarif: Option<PathBuf>,
}

/// The repository root: manifest paths are relative to it.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_yaml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let full = if path.is_absolute() || path.exists() { path.to_path_buf() } else { root().join(path) };
    let text = std::fs::read_to_string(&full).map_err(|e| format!("cannot read {}: {e}", full.display()))?;
    yaml_serde::from_str(&text).map_err(|e| format!("{}: {e}", full.display()))
}

pub fn producers(a: &ProducersArgs) -> ExitCode {
    let (producers, classes): (Vec<Producer>, Vec<Class>) = match (read_yaml(&a.manifest), read_yaml(&a.classes)) {
        (Ok(p), Ok(c)) => (p, c),
        (Err(e), _) | (_, Err(e)) => return super::input_error(e),
    };
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from("producers.md"));
    let runs = doc::run(&producers, &root(), true);
    let mut command = "dwarfcheck producers".to_string();
    if let Some(o) = &a.out {
        command.push_str(&format!(" --out {}", o.display()));
    }
    let (text, errors) = doc::markdown(&runs, &classes, &root(), &command);
    if let Err(e) = std::fs::write(&out, text) {
        eprintln!("dwarfcheck: cannot write {}: {e}", out.display());
        return ExitCode::from(2);
    }
    if let Some(path) = &a.sarif {
        let all: Vec<_> = runs.iter().flat_map(|r| r.findings.iter().cloned()).collect();
        let log = dwarfcheck::producers::sarif::log(&all);
        if let Err(e) = std::fs::write(path, serde_json::to_string_pretty(&log).unwrap_or_default()) {
            eprintln!("dwarfcheck: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    for r in &runs {
        let ill = r.findings.iter().filter(|f| f.found.kind == "ill-formed").count();
        println!(
            "{}: {} file(s), {} expressions, {} findings ({} ill-formed)",
            r.producer.label,
            r.files.len(),
            r.counts.expr_cases(),
            r.finding_count,
            ill
        );
    }
    super::note(&format!("wrote {}", out.display()));
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        for e in &errors {
            eprintln!("dwarfcheck producers: {e}");
        }
        ExitCode::from(1)
    }
}
