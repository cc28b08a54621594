//! The pieces of one ocloc compile (`.ci/fixtures-intel`'s
//! `NAME-DEVICE-OPT-FORMAT/{out,dump}`): IGC's DWARF ELFs and the raw vISA
//! blobs, each DWARF ELF paired with the blob of the same compile.

use super::read::relocated;
use crate::visa::container::{self, Contents};
use crate::visa::model::Blob;
use crate::visa::{detect, Platform};
use std::path::{Path, PathBuf};

/// The largest file read (bytes).
const MAX_FILE_BYTES: u64 = 1 << 26;

/// One IGC DWARF ELF of a compile.
#[derive(Debug, Clone)]
pub struct DwarfElf {
    /// Where it is: the file, with `#kernel` for one embedded in an INTC
    /// container.
    pub origin: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The dump blob it is paired with.
    pub blob: PathBuf,
}

/// One compile.
#[derive(Debug, Clone)]
pub struct Compile {
    /// The directory's name.
    pub name: String,
    /// Its platform (from the name: dg2 or tgllp).
    pub platform: Platform,
    /// Its DWARF ELFs.
    pub elfs: Vec<DwarfElf>,
}

fn read_bounded(p: &Path) -> Option<Vec<u8>> {
    (std::fs::metadata(p).ok()?.len() <= MAX_FILE_BYTES).then(|| std::fs::read(p).ok()).flatten()
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// `.debug_info` and `.debug_loc` of an ELF, relocated: what pairs an
/// `out/` ELF with the dump ELF of the same compile.
fn debug_key(bytes: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let f = object::File::parse(bytes).ok()?;
    let m = super::read::e_machine(bytes)?;
    Some((relocated(&f, m, ".debug_info")?, relocated(&f, m, ".debug_loc").unwrap_or_default()))
}

/// Reads compile directory `dir`. The dump ELF `X.elf` pairs with `X.dbg`;
/// an `out/` ELF (INTC-embedded or zebin) with the dump whose ELF has the
/// same relocated `.debug_info` and `.debug_loc`, else the last dump.
pub fn compile(dir: &Path) -> Compile {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let platform = if name.contains("dg2") { Platform::Dg2 } else { Platform::Tgllp };
    let dump = dir.join("dump");
    let mut elfs = Vec::new();
    let mut keys = Vec::new();
    for e in files(&dump, "elf") {
        let blob = e.with_extension("dbg");
        let Some(bytes) = read_bounded(&e) else { continue };
        if blob.exists() {
            keys.push((debug_key(&bytes), blob.clone()));
            elfs.push(DwarfElf { origin: e.display().to_string(), bytes, blob });
        }
    }
    let pair = |bytes: &[u8]| -> Option<PathBuf> {
        let k = debug_key(bytes);
        keys.iter().find(|(kk, _)| k.is_some() && *kk == k).or(keys.last()).map(|(_, b)| b.clone())
    };
    for f in files(&dir.join("out"), "dbg").into_iter().chain(files(&dir.join("out"), "bin")) {
        let Some(bytes) = read_bounded(&f) else { continue };
        match container::identify(&bytes) {
            Ok(Contents::Intc { kernels, .. }) => {
                for k in kernels {
                    let (at, n) = k.visa_debug;
                    let Some(elf) = bytes.get(at..at + n).filter(|_| k.elf.is_some()) else { continue };
                    if let Some(blob) = pair(elf) {
                        elfs.push(DwarfElf {
                            origin: format!("{}#{}", f.display(), k.name),
                            bytes: elf.to_vec(),
                            blob,
                        });
                    }
                }
            }
            Ok(Contents::Elf(info)) if info.debug_sections.iter().any(|(s, _)| s == ".debug_info") => {
                if let Some(blob) = pair(&bytes) {
                    elfs.push(DwarfElf { origin: f.display().to_string(), bytes, blob });
                }
            }
            _ => {}
        }
    }
    Compile { name, platform, elfs }
}

/// Every compile directory under `root` (`target/fixtures/intel`), in name
/// order.
pub fn compiles(root: &Path) -> Vec<Compile> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(root).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs.iter().map(|d| compile(d)).collect()
}

/// Decodes the blob at `path` (layout detected).
///
/// Errors: unreadable, or no single layout decodes it.
pub fn blob(path: &Path) -> Result<Blob, String> {
    let bytes = read_bounded(path).ok_or_else(|| format!("{}: unreadable", path.display()))?;
    detect::decode_with(&bytes, None).map_err(|f| format!("{}: {f:?}", path.display()))
}
