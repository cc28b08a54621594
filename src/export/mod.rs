//! `dwarfcheck export-suite`: the conformance suite as language-neutral
//! JSON with expected outcomes (docs/suite-format.md, schemas in
//! `specs/suite-schema/`), for consumers that do not run the harness.
//!
//! Sits above `consumer` (the reference supplies the expectation of a case
//! without `expect`) and `edition`, beside `runner`.

pub mod case;
pub mod context;

use crate::case::yaml::{find_case_files, load_file, CaseFileError};
use crate::case::Case;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Name of the export format (`format` of `index.json`).
pub const FORMAT: &str = "dwarfcheck-suite";
/// Name of the case-file format (`format` of each case file).
pub const CASE_FILE_FORMAT: &str = "dwarfcheck-suite-cases";
/// Version of both formats (docs/suite-format.md "Versioning").
pub const VERSION: u64 = 1;
/// Extensions of suite inputs version 1 leaves out, with the reason
/// (docs/suite-format.md "What version 1 leaves out").
pub const LEFT_OUT: [(&str, &str); 4] = [
    ("visa", "Intel vISA assembly: checked by `dwarfcheck visa`, not a case file"),
    ("tru64", "Tru64 optimization symbol table: checked by `dwarfcheck tru64`, not a case file"),
    ("spvasm", "SPIR-V module: checked by `dwarfcheck spirv`, not a case file"),
    ("ll", "LLVM IR producer input: checked through a producer chain, not a case file"),
];

/// What an export wrote.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Case files written (one per source case file).
    pub files: usize,
    /// Expression cases (`kind` `expr`).
    pub expr: usize,
    /// SPIR-V expression cases (`kind` `spirv-expr`).
    pub spirv_expr: usize,
    /// CFI cases (`kind` `cfi`).
    pub cfi: usize,
    /// Of the CFI cases, those that also unwind.
    pub unwind: usize,
    /// Input files left out ([`LEFT_OUT`]).
    pub left_out: usize,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Case files that do not load (each error located).
    #[error("{} case file error(s), first: {}", .0.len(), .0.first().map(|e| e.to_string()).unwrap_or_default())]
    Cases(Vec<CaseFileError>),
    /// Reading inputs or writing the export.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// One source case file and the name it has in the export.
struct Source {
    path: PathBuf,
    /// `/`-separated, relative: the input directory's own name, then the
    /// path below it (a file given directly: its file name).
    name: String,
}

/// The sources under `inputs`, named, in order.
fn sources(inputs: &[PathBuf]) -> std::io::Result<Vec<Source>> {
    let mut out = Vec::new();
    for input in inputs {
        let root =
            if input.is_dir() { input.parent().unwrap_or(input) } else { input.parent().unwrap_or(Path::new("")) };
        for path in find_case_files(std::slice::from_ref(input))? {
            out.push(Source { name: relative_name(&path, root), path });
        }
    }
    Ok(out)
}

/// `path` below `root` as a `/`-separated name.
fn relative_name(path: &Path, root: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// Input files of the kinds version 1 leaves out, named as case files are.
fn left_out(inputs: &[PathBuf]) -> Vec<Value> {
    let mut out = Vec::new();
    for input in inputs {
        let root = input.parent().unwrap_or(Path::new(""));
        for (ext, reason) in LEFT_OUT {
            for f in crate::case::files::with_extension(std::slice::from_ref(input), ext) {
                out.push(json!({ "file": relative_name(&f, root), "reason": reason }));
            }
        }
    }
    out.sort_by(|a, b| a["file"].as_str().cmp(&b["file"].as_str()));
    out
}

/// The export path of a source: `cases/NAME` with `.yaml`/`.yml`
/// replaced by `.json`.
fn export_path(name: &str) -> String {
    let stem = name.strip_suffix(".yaml").or_else(|| name.strip_suffix(".yml")).unwrap_or(name);
    format!("cases/{stem}.json")
}

/// Exports every case file under `inputs` (files or directories) into
/// `out`: `out/index.json` and one `out/cases/....json` per case file.
/// Deterministic: the same inputs give the same bytes. Returns the counts.
///
/// Errors: any case file that does not load (nothing is written then),
/// or I/O.
pub fn export_suite(inputs: &[PathBuf], out: &Path) -> Result<Counts, ExportError> {
    let sources = sources(inputs)?;
    let loaded: Vec<Result<Vec<Case>, Vec<CaseFileError>>> = sources.par_iter().map(|s| load_file(&s.path)).collect();
    let errors: Vec<CaseFileError> = loaded.iter().filter_map(|r| r.as_ref().err()).flatten().cloned().collect();
    if !errors.is_empty() {
        return Err(ExportError::Cases(errors));
    }
    let files: Vec<(String, Value, Vec<Value>)> = sources
        .par_iter()
        .zip(loaded.into_par_iter())
        .map(|(s, cases)| {
            let path = export_path(&s.name);
            let (file, entries) = case_file(&s.name, &path, &cases.unwrap_or_default());
            (path, file, entries)
        })
        .collect();
    let mut counts = Counts { files: files.len(), ..Default::default() };
    let mut entries = Vec::new();
    for (path, file, file_entries) in &files {
        let target = out.join(path);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&target, write_json(file))?;
        for e in file_entries {
            match e["kind"].as_str() {
                Some("expr") => counts.expr += 1,
                Some("spirv-expr") => counts.spirv_expr += 1,
                _ => counts.cfi += 1,
            }
            counts.unwind += usize::from(e["unwind"].as_bool() == Some(true));
        }
        entries.extend(file_entries.iter().cloned());
    }
    let left = left_out(inputs);
    counts.left_out = left.len();
    let index = json!({
        "format": FORMAT,
        "version": VERSION,
        "harness": { "name": "dwarfcheck", "version": env!("CARGO_PKG_VERSION") },
        "counts": {
            "files": counts.files,
            "cases": counts.expr + counts.spirv_expr + counts.cfi,
            "expr": counts.expr,
            "spirv_expr": counts.spirv_expr,
            "cfi": counts.cfi,
            "unwind": counts.unwind,
        },
        "left_out": left,
        "cases": entries,
    });
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("index.json"), write_json(&index))?;
    Ok(counts)
}

/// One source file's cases: the case file's JSON and its index entries.
fn case_file(name: &str, path: &str, cases: &[Case]) -> (Value, Vec<Value>) {
    let mut targets = context::Targets::default();
    let mut out = Vec::with_capacity(cases.len());
    let mut entries = Vec::with_capacity(cases.len());
    for c in cases {
        let id = format!("{name}#{}", c.name());
        let v = match c {
            Case::Expr(e) => case::expr_case(e, &id, &mut targets),
            Case::Cfi(f) => case::cfi_case(f, &id, &mut targets),
        };
        // `file:line` with the file as the export names it, not as this
        // machine's path: the export is the same wherever it is made.
        let mut v = v;
        if let Some((_, line)) = c.origin().rsplit_once(':') {
            v["origin"] = json!(format!("{name}:{line}"));
        }
        entries.push(json!({
            "id": id,
            "file": name,
            "name": c.name(),
            "kind": v["kind"],
            "rules": c.rules(),
            "edition": v["edition"],
            "expected_from": v["expected_from"],
            "unwind": !v["unwind"].is_null(),
            "path": path,
        }));
        out.push(v);
    }
    let file = json!({
        "format": CASE_FILE_FORMAT,
        "version": VERSION,
        "source": name,
        "targets": targets.into_json(),
        "cases": out,
    });
    (file, entries)
}

/// `v` as indented JSON with a final newline, each raw-text string of
/// [`context::to_json`] replaced by the JSON text it holds.
pub fn write_json(v: &Value) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    let mark = serde_json::to_string(context::RAW_MARK).unwrap_or_default();
    // The mark's literal without its closing quote: `"\u0000raw:`.
    let open = &mark[..mark.len() - 1];
    let mut out = String::with_capacity(text.len() + 1);
    let mut rest = text.as_str();
    while let Some(i) = rest.find(open) {
        out.push_str(&rest[..i]);
        let lit = &rest[i..];
        // The string literal ends at the first quote not escaped.
        let mut end = None;
        let mut escaped = false;
        for (j, ch) in lit.char_indices().skip(1) {
            match (escaped, ch) {
                (false, '\\') => escaped = true,
                (false, '"') => {
                    end = Some(j + 1);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else {
            out.push_str(lit);
            rest = "";
            break;
        };
        match serde_json::from_str::<String>(&lit[..end]) {
            Ok(s) => out.push_str(s.strip_prefix(context::RAW_MARK).unwrap_or(&s)),
            Err(_) => out.push_str(&lit[..end]),
        }
        rest = &lit[end..];
    }
    out.push_str(rest);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::outcome::location::{RawLocation, Source};
    use dwarfcheck_core::outcome::Outcome;

    #[test]
    fn bit_addresses_past_64_bits_are_written_exactly() {
        // Byte address 2^64 - 4 is bit address 2^67 - 32.
        let big = (1u128 << 67) - 32;
        let o = Outcome::Location(RawLocation::simple(Source::memory(0, big)).normalize());
        let v = json!({ "expected": context::to_json(&o), "n": 1, "s": "a\"b" });
        let text = write_json(&v);
        assert!(text.contains(&format!("\"bit_addr\":{big}")), "{text}");
        assert!(!text.contains("raw:"));
        // Everything else as serde_json writes it.
        assert!(text.contains("\"s\": \"a\\\"b\"") && text.contains("\"n\": 1") && text.ends_with("}\n"), "{text}");
    }

    #[test]
    fn export_paths_replace_the_extension() {
        assert_eq!(export_path("cases/expr/a.yaml"), "cases/cases/expr/a.json");
        assert_eq!(export_path("r/b.yml"), "cases/r/b.json");
    }
}
