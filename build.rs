//! Build script: embeds the rule catalogue `specs/rules/*.yaml`
//! (`catalogue::Catalogue`) and the bundled case suite
//! `specs/cases/**/*.yaml` (`conformance::suite`) in the library, one
//! `include_str!` per file, so that neither needs the repository checkout
//! at run time (a dependent crate's tests from crates.io). The rule ID
//! constants and the checks of each rule's shape are `dwarfcheck-core`'s
//! build script.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    embed(
        &root.join("specs/rules"),
        false,
        "Every catalogue file: (file name, YAML text).",
        &out.join("rule_sources.rs"),
    );
    embed(
        &root.join("specs/cases"),
        true,
        "Every bundled case file: (path under `specs/cases/`, YAML text).",
        &out.join("case_sources.rs"),
    );
}

/// Writes `out`: `pub static SOURCES: &[(&str, &str)]`, one
/// `(path relative to dir, include_str!(file))` per `.yaml` file of `dir`
/// (and of its subdirectories when `recursive`), sorted by path.
fn embed(dir: &Path, recursive: bool, doc: &str, out: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    yaml_files(dir, recursive, &mut files);
    files.sort();
    let mut sources = format!("/// {doc}\npub static SOURCES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
        writeln!(sources, "    ({rel:?}, include_str!({:?})),", f.display().to_string()).unwrap();
    }
    sources.push_str("];\n");
    std::fs::write(out, sources).unwrap();
}

/// The `.yaml` files of `dir` (recursively when `recursive`); a directory
/// is listed in `rerun-if-changed` so that a new file is seen.
fn yaml_files(dir: &Path, recursive: bool, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for p in entries.map(|e| e.unwrap().path()) {
        if p.is_dir() && recursive {
            println!("cargo:rerun-if-changed={}", p.display());
            yaml_files(&p, recursive, files);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            files.push(p);
        }
    }
}
