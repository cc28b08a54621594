//! The Tru64 case files of `specs/cases/tru64/` (`*.tru64`, YAML; format in
//! docs/case-format.md, "Tru64 optimization data cases"): one procedure's
//! data, described (`ppod:`, encoded) or given as bytes (`hex:`), and what
//! decoding, validation and the direct reading must give. Run by
//! `tests/tru64_cases.rs`, counted by `dwarfcheck coverage`.

use super::decode::Decoded;
use super::encode::encode;
use super::model::{hex, Optrndx, Procedure, Record, Symbols, Target};
use super::read::Fault;
use super::resolve::{View, Where};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A case file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    /// The cases.
    pub cases: Vec<Tru64Case>,
}

/// One case: one procedure's optimization data.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tru64Case {
    /// Unique in its file.
    pub name: String,
    /// Rule IDs the case exercises.
    pub rules: Vec<String>,
    /// The procedure (base address, size in instructions).
    pub procedure: Procedure,
    /// The symbols the data names.
    #[serde(default)]
    pub symbols: Symbols,
    /// The data, described; encoded when `hex` is absent, else it must
    /// encode to exactly `hex`.
    #[serde(default)]
    pub ppod: Option<Vec<Record>>,
    /// The data as bytes: hex pairs, whitespace anywhere, `#` comments.
    #[serde(default)]
    pub hex: Option<String>,
    /// What must come out.
    pub expect: Expect,
}

/// A case's expectation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Every fault, ordered by offset (empty: clean data).
    pub faults: Vec<ExpectFault>,
    /// The reading at chosen pcs.
    #[serde(default)]
    pub at: Vec<ExpectAt>,
}

pub use crate::case::blob::ExpectFault;

/// The reading at one pc: where a variable is, and/or which
/// discontiguous scopes hold the pc.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectAt {
    /// The address (bytes).
    pub pc: u64,
    /// The variable (with `where`).
    #[serde(default)]
    pub target: Option<Target>,
    /// Where it is.
    #[serde(default, rename = "where")]
    pub location: Option<Where>,
    /// The scopes holding the pc, in stream order.
    #[serde(default)]
    pub scopes: Option<Vec<Optrndx>>,
}

/// Every `*.tru64` file under `paths` (directories recursively, at most
/// 100,000 entries visited), sorted.
pub fn case_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    crate::case::files::with_extension(paths, "tru64")
}

/// Reads one case file. Errors: unreadable, or not a case file (serde's
/// message).
pub fn load(path: &Path) -> Result<CaseFile, String> {
    crate::case::blob::load_yaml(path)
}

/// A case's bytes: `hex`, else `ppod` encoded. Errors: neither given, bad
/// hex, a description the encoder refuses, or both given and different.
pub fn bytes_of(c: &Tru64Case) -> Result<Vec<u8>, String> {
    let encoded = c.ppod.as_ref().map(|p| encode(p).map_err(|e| e.to_string())).transpose()?;
    match (&c.hex, encoded) {
        (Some(h), e) => {
            let b = hex::parse(h)?;
            match e {
                Some(e) if e != b => Err(format!("ppod encodes to {}, hex is {}", hex::to_text(&e), hex::to_text(&b))),
                _ => Ok(b),
            }
        }
        (None, Some(e)) => Ok(e),
        (None, None) => Err("neither ppod nor hex".into()),
    }
}

/// What one case gives: its bytes, their decoding and every fault.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The decoding.
    pub decoded: Decoded,
    /// Decoding and validation faults, by offset.
    pub faults: Vec<Fault>,
}

/// Decodes and validates one case. Errors: as [`bytes_of`].
pub fn outcome(c: &Tru64Case) -> Result<CaseOutcome, String> {
    let bytes = bytes_of(c)?;
    let (decoded, faults) = super::check(&bytes, c.procedure, &c.symbols);
    Ok(CaseOutcome { bytes, decoded, faults })
}

/// Runs one case. Errors: what differs from the expectation, in words.
pub fn run(c: &Tru64Case) -> Result<(), String> {
    let CaseOutcome { decoded, faults, .. } = outcome(c)?;
    crate::case::blob::compare_faults(&faults, &c.expect.faults)?;
    let records = decoded.records();
    if let Some(p) = &c.ppod {
        if faults.is_empty() && &records != p {
            return Err(format!("decodes to {records:?}, described as {p:?}"));
        }
    }
    let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
    for a in &c.expect.at {
        if let (Some(t), Some(want)) = (&a.target, &a.location) {
            let have = view.location_at(t, a.pc);
            if &have != want {
                return Err(format!("{t} at {:#x}: {have:?}, expected {want:?}", a.pc));
            }
        }
        if let Some(want) = &a.scopes {
            let have = view.scopes_at(a.pc);
            if &have != want {
                return Err(format!("scopes at {:#x}: {have:?}, expected {want:?}", a.pc));
            }
        }
    }
    Ok(())
}

crate::impl_rule_case!(Tru64Case);
