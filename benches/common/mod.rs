//! Real input files shared by the benchmark targets: where to find them
//! and how to turn them into cases (files that are missing give nothing).

use dwarfcheck::case::CfiCase;
use dwarfcheck::elf::{extract, Options};
use std::path::{Path, PathBuf};

/// Where llvm-19's shared library (installed by `.ci/setup`) may be; its
/// `.eh_frame` is the largest real frame section on the CI machine.
pub const LIBLLVM: &[&str] = &["/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1", "/usr/lib/llvm-19/lib/libLLVM.so.19.1"];

/// First existing file among `candidates`, `None` when none exists.
pub fn first_existing(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(Path::new).find(|p| p.exists()).map(Path::to_path_buf)
}

/// One case per FDE of `path`'s `.eh_frame` and `.debug_frame` (see
/// `dwarfcheck::elf::extract`), all sharing one section per frame section.
/// A file that cannot be read gives no case and a message on stderr.
pub fn fdes_of(path: &Path) -> Vec<CfiCase> {
    let opts = Options { expressions: false, ..Options::default() };
    match extract(path, &opts) {
        Ok(x) => {
            eprintln!("{}: {} FDEs", path.display(), x.counts.fdes());
            for w in &x.warnings {
                eprintln!("{w}");
            }
            x.cfi
        }
        Err(e) => {
            eprintln!("{}: {e:#}", path.display());
            Vec::new()
        }
    }
}
