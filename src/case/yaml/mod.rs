//! YAML case format v1 (docs/architecture.md §6): loading case files into [`Case`]s.
//!
//! Syntax and type errors carry yaml_serde's `line:column`; errors found
//! while converting a case (an unknown register name, an expression that
//! does not assemble) are located at the offending text inside that case's
//! own lines. Every error reads `file:line:column: message`.

pub mod cfi;
mod context;
mod convert;
pub mod emit;
pub mod limits;
mod locate;
mod loclists;
mod messages;
mod schema;
mod spirv;

pub use schema::{DieSpec, MemorySpec};
pub mod target;
mod unwind;

use super::Case;
use std::path::{Path, PathBuf};

/// A problem with a case file, located as `file:line:column`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct CaseFileError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What was wrong and what was expected.
    pub message: String,
}

/// Loads every case of one YAML file.
///
/// Errors: unreadable file, YAML syntax, unknown keys, wrong types, unknown
/// target or vendor profile, bad register names, expressions that do not
/// assemble, malformed expectations, duplicate case names. All are reported,
/// not just the first.
pub fn load_file(path: &Path) -> Result<Vec<Case>, Vec<CaseFileError>> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![CaseFileError { file: file.clone(), line: 1, column: 1, message: format!("cannot read: {e}") }]
    })?;
    load_str(&file, &text)
}

/// Loads every case of YAML `text`, naming it `file` in errors and origins.
///
/// Before parsing, the text is held to the loader's limits
/// ([`limits`]): collections nested at most [`limits::MAX_NESTING`] deep,
/// and aliases that expand to at most about one node per byte of text.
pub fn load_str(file: &str, text: &str) -> Result<Vec<Case>, Vec<CaseFileError>> {
    let located = |l: limits::LimitError| {
        vec![CaseFileError { file: file.to_string(), line: l.line, column: l.column, message: l.message }]
    };
    limits::flow_nesting(text).map_err(located)?;
    limits::alias_expansion(text).map_err(located)?;
    let spec: schema::FileSpec = yaml_serde::from_str(text).map_err(|e| {
        let (line, column) = e.location().map(|l| (l.line(), l.column())).unwrap_or((1, 1));
        let mut message = serde_message(&e);
        if message.ends_with("recursion limit exceeded") {
            message =
                format!("collections nested more than {} deep (the loader's limit on nesting)", limits::MAX_NESTING);
        }
        vec![CaseFileError { file: file.to_string(), line, column, message }]
    })?;
    convert::convert_file(file, text, spec)
}

/// Every `.yaml` file under `paths` (files are taken as they are,
/// directories are walked recursively), sorted.
pub fn find_case_files(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        walk(p, &mut out)?;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(p: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if p.is_dir() {
        for e in std::fs::read_dir(p)? {
            walk(&e?.path(), out)?;
        }
    } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") || !p.exists() {
        // A missing path is reported by the caller's read.
        out.push(p.to_path_buf());
    }
    Ok(())
}

/// A yaml_serde error's message without its location, in the case
/// format's terms (no Rust type names: [`messages::humanize`]).
fn serde_message(e: &yaml_serde::Error) -> String {
    messages::humanize(&strip_location(&e.to_string()))
}

/// yaml_serde appends " at line L column C"; we print the location first.
fn strip_location(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

#[cfg(test)]
mod tests;
