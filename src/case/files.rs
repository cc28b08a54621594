//! Finding case files: every file with one of some extensions under some
//! paths, walked without recursion and with a cap on visits, so that a
//! deep or looping tree (symbolic links) cannot exhaust the stack or run
//! forever.

use std::path::PathBuf;

/// At most this many paths are visited by one [`with_extension`] walk.
pub const MAX_VISITS: usize = 100_000;

/// Every file under `paths` (each a file or a directory, walked
/// recursively) whose extension is `ext` (without the dot), sorted. A
/// directory that cannot be read is left out; the walk stops after
/// [`MAX_VISITS`] paths.
pub fn with_extension(paths: &[PathBuf], ext: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = paths.to_vec();
    let mut visited = 0usize;
    while let Some(p) = stack.pop() {
        visited += 1;
        if visited > MAX_VISITS {
            break;
        }
        if p.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.flatten().map(|e| e.path()));
            }
        } else if p.extension().is_some_and(|x| x == ext) {
            files.push(p);
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_files_of_one_extension_in_nested_directories() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases");
        let found = with_extension(std::slice::from_ref(&root), "spvasm");
        assert!(!found.is_empty());
        assert!(found.iter().all(|p| p.extension().is_some_and(|x| x == "spvasm") && p.starts_with(&root)));
        let mut sorted = found.clone();
        sorted.sort();
        assert_eq!(found, sorted);
        assert_eq!(with_extension(&[root.join("no-such-dir")], "yaml"), Vec::<PathBuf>::new());
    }
}
