//! Build script: embeds the rule catalogue `specs/rules/*.yaml` in the
//! harness binary (`catalogue::Catalogue`), one `include_str!` per file.
//! The rule ID constants and the checks of each rule's shape are
//! `dwarfcheck-core`'s build script.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("specs/rules");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut sources =
        String::from("/// Every catalogue file: (file name, YAML text).\npub static SOURCES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        writeln!(
            sources,
            "    ({:?}, include_str!({:?})),",
            f.file_name().unwrap().to_string_lossy(),
            f.display().to_string()
        )
        .unwrap();
    }
    sources.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("rule_sources.rs");
    std::fs::write(out, sources).unwrap();
}
