//! Seed corpora for the fuzz targets (`dwarfcheck export-corpus`):
//! expression bytes, frame sections and case files from the bundled cases
//! and from ELF files, vISA blobs from the `.visa` cases and the committed
//! fixture blobs, PPODE streams from the `.tru64` cases, and generator inputs chosen for the operations they
//! reach, one file per distinct input.

use super::targets::{Input, Target};
use crate::case::Case;
use dwarfcheck_core::cfi::FrameKind;
use std::collections::BTreeSet;
use std::path::Path;

/// Seeds gathered for each target, deduplicated: expressions, frame
/// sections and case files for the byte-level targets (`expr_bytes`,
/// `cfi_bytes`, `case_yaml`); for the structured targets (`expr_ops`,
/// `cfi_ops`, `spirv_expr`), whose bytes are generator choices that no real input maps
/// back to, generated inputs chosen for what they reach
/// ([`Seeds::add_generated`]).
#[derive(Debug, Default)]
pub struct Seeds {
    /// Expression bytes.
    pub expr_bytes: BTreeSet<Vec<u8>>,
    /// `cfi_bytes` inputs: a selector byte and a frame section.
    pub cfi_bytes: BTreeSet<Vec<u8>>,
    /// Case-file texts.
    pub case_yaml: BTreeSet<Vec<u8>>,
    /// `expr_ops` inputs.
    pub expr_ops: BTreeSet<Vec<u8>>,
    /// `cfi_ops` inputs.
    pub cfi_ops: BTreeSet<Vec<u8>>,
    /// `spirv_expr` inputs.
    pub spirv_expr: BTreeSet<Vec<u8>>,
    /// vISA debug info blobs (`visa_bytes`).
    pub visa_bytes: BTreeSet<Vec<u8>>,
    /// Tru64 PPODE streams (`tru64_bytes`).
    pub tru64_bytes: BTreeSet<Vec<u8>>,
}

/// `n` deterministic pseudo-random bytes from `seed` (splitmix64): the
/// generator inputs of [`Seeds::add_generated`] and of the tests.
pub fn pseudo_random(seed: u64, n: usize) -> Vec<u8> {
    let mut z = seed;
    (0..n)
        .map(|_| {
            z = dwarfcheck_core::context::synthetic::mix(z.wrapping_add(0x9e37_79b9_7f4a_7c15));
            z as u8
        })
        .collect()
}

/// Frame sections longer than this are cut at the first entry boundary
/// past it, so that seeds stay small (**bytes**).
pub const SECTION_SEED_BYTES: usize = 2048;

impl Seeds {
    /// Adds every case's expression or frame section (`cases` from one
    /// file), and the file's text when `text` is given.
    pub fn add_cases(&mut self, cases: &[Case], text: Option<&str>) {
        if let Some(t) = text {
            self.case_yaml.insert(t.as_bytes().to_vec());
        }
        let mut sections = BTreeSet::new();
        for c in cases {
            match c {
                Case::Expr(e) => {
                    self.expr_bytes.insert(e.expr.to_vec());
                    for d in e.ctx.cu.iter().flat_map(|u| u.dies.values()) {
                        if let Some(dwarfcheck_core::context::AttrForm::Exprloc(b)) = &d.location {
                            self.expr_bytes.insert(b.clone());
                        }
                    }
                }
                Case::Cfi(c) => {
                    let s = &c.section;
                    if sections.insert((s.kind == FrameKind::EhFrame, s.bytes.clone())) {
                        let input = Input::Cfi { kind: s.kind, bytes: cut(&s.bytes, s.kind), target: s.target.clone() };
                        if let Some((_, raw)) = input.raw() {
                            self.cfi_bytes.insert(raw);
                        }
                    }
                }
            }
        }
    }

    /// Adds the blobs of vISA case files (`*.visa` under `paths`) and
    /// raw blob files (`*.dbg` under `paths`), each at most
    /// `visa::check::FUZZ_MAX_BYTES`. Unreadable files and cases whose hex
    /// does not parse are skipped.
    pub fn add_visa(&mut self, paths: &[std::path::PathBuf]) {
        let max = crate::visa::check::FUZZ_MAX_BYTES;
        for f in crate::visa::cases::case_files(paths) {
            let Ok(file) = crate::visa::cases::load(&f) else { continue };
            for c in &file.cases {
                if let Ok(b) = crate::visa::cases::parse_hex(&c.hex) {
                    self.visa_bytes.extend((!b.is_empty() && b.len() <= max).then_some(b));
                }
            }
        }
        for f in crate::case::files::with_extension(paths, "dbg") {
            let small = std::fs::metadata(&f).is_ok_and(|m| m.len() <= max as u64);
            if let Some(b) = small.then(|| std::fs::read(&f).ok()).flatten() {
                self.visa_bytes.insert(b);
            }
        }
    }

    /// Adds the PPODE stream of every case of the `.tru64` case files under
    /// `paths` (its `hex`, or its `ppod` description encoded), each at most
    /// `tru64::check::FUZZ_MAX_BYTES`. Unreadable files and cases that
    /// give no bytes are skipped.
    pub fn add_tru64(&mut self, paths: &[std::path::PathBuf]) {
        for f in crate::tru64::cases::case_files(paths) {
            let Ok(file) = crate::tru64::cases::load(&f) else { continue };
            for c in &file.cases {
                if let Ok(b) = crate::tru64::cases::bytes_of(c) {
                    let fits = !b.is_empty() && b.len() <= crate::tru64::check::FUZZ_MAX_BYTES;
                    self.tru64_bytes.extend(fits.then_some(b));
                }
            }
        }
    }

    /// Seeds for the structured targets: of the generator inputs
    /// [`pseudo_random`]`(s, 512)` for `s` below `tries`, each one whose
    /// reference evaluation reaches an operation (`expr_ops`, per vendor
    /// profile) or call frame instruction (`cfi_ops`, per machine) that no
    /// input kept before it reaches (`fuzzing::stats::reach`); for
    /// `spirv_expr`, the DWARF operations of the lowering that the
    /// reference reaches.
    pub fn add_generated(&mut self, tries: u64) {
        for (t, set) in [
            (Target::ExprOps, &mut self.expr_ops),
            (Target::CfiOps, &mut self.cfi_ops),
            (Target::SpirvExpr, &mut self.spirv_expr),
        ] {
            let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
            for s in 0..tries {
                let data = pseudo_random(s, 512);
                let Some(r) = t.decode(&data).as_ref().and_then(super::stats::reach) else { continue };
                let before = seen.len();
                seen.extend(r.names.iter().map(|n| (r.group.name().to_string(), n.clone())));
                if seen.len() > before {
                    set.insert(data);
                }
            }
        }
    }

    /// Writes each seed as `<dir>/<target>/<digest>`; returns how many
    /// files each target got.
    ///
    /// Errors: a file cannot be written.
    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<(Target, usize)>> {
        let mut out = Vec::new();
        for (t, set) in [
            (Target::ExprBytes, &self.expr_bytes),
            (Target::ExprOps, &self.expr_ops),
            (Target::CfiBytes, &self.cfi_bytes),
            (Target::CfiOps, &self.cfi_ops),
            (Target::CaseYaml, &self.case_yaml),
            (Target::SpirvExpr, &self.spirv_expr),
            (Target::VisaBytes, &self.visa_bytes),
            (Target::Tru64Bytes, &self.tru64_bytes),
        ] {
            let d = dir.join(t.name());
            std::fs::create_dir_all(&d)?;
            for s in set {
                std::fs::write(d.join(super::minimize::digest(s)), s)?;
            }
            out.push((t, set.len()));
        }
        Ok(out)
    }
}

/// The section, or its entries up to the first boundary past
/// [`SECTION_SEED_BYTES`] (entries are length-prefixed: a 4-byte length,
/// or 0xffffffff and an 8-byte one).
fn cut(bytes: &[u8], _kind: FrameKind) -> Vec<u8> {
    let mut at = 0usize;
    while at < bytes.len() && at < SECTION_SEED_BYTES {
        let Some(len) = bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])) else { break };
        let next = if len == 0xffff_ffff {
            bytes.get(at + 4..at + 12).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize + 12)
        } else {
            Some(len as usize + 4)
        };
        match next {
            Some(n) if n > 0 && at + n <= bytes.len() => at += n,
            _ => return bytes.to_vec(),
        }
    }
    bytes[..at.max(1).min(bytes.len())].to_vec()
}
