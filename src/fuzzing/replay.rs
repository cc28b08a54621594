//! Replays `corpus/regressions/`: every minimised fuzz finding runs
//! through its target's oracles again (the test suite and `dwarfcheck run`
//! both do this).

use super::targets::{Input, Target};
use super::Violation;
use crate::case::{yaml::load_str, Case};
use std::path::{Path, PathBuf};

/// The bundled regression directory, next to the crate's manifest.
pub fn bundled_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/regressions")
}

/// Runs every regression under `dir`: `*.yaml` case files through the
/// `case_yaml` oracles plus gimli's known-class check on each expression
/// case and the `spirv_expr` oracles on each `spirv:` case; files in a folder named after a target (`cfi_bytes/`,
/// `case_yaml/`, ...) through that target. Returns each file with its
/// result, sorted by path.
///
/// Errors (per file): the [`Violation`], or why the file could not be read
/// ([`Violation::Unreadable`]).
pub fn replay(dir: &Path) -> Vec<(PathBuf, Result<(), Violation>)> {
    let mut files = Vec::new();
    collect(dir, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let r = replay_file(&f);
            (f, r)
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.file_name().and_then(|n| n.to_str()).is_some_and(|n| !n.starts_with('.') && n != "README.md") {
            out.push(p);
        }
    }
}

fn replay_file(f: &Path) -> Result<(), Violation> {
    let unreadable = |why: String| Violation::Unreadable { path: f.display().to_string(), why };
    let bytes = std::fs::read(f).map_err(|e| unreadable(e.to_string()))?;
    let parent = f.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()).unwrap_or("");
    if let Some(t) = Target::by_name(parent) {
        return t.check(&bytes);
    }
    let text = String::from_utf8(bytes).map_err(|e| unreadable(e.to_string()))?;
    let cases = load_str(&f.display().to_string(), &text)
        .map_err(|e| unreadable(e.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("; ")))?;
    Input::Yaml(text).check()?;
    for c in &cases {
        if let Case::Expr(e) = c {
            super::check_gimli(e)?;
            // A minimised `spirv_expr` finding: its lowering too.
            super::check_spirv_oracles(e)?;
        }
    }
    Ok(())
}
