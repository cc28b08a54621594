//! The vISA case files of `specs/cases/visa/` (`*.visa`, YAML; format in
//! docs/case-format.md, "vISA debug info cases"): a blob in hex, the layout
//! and platform to read it with, and what decoding and validation must
//! give. Run by `tests/visa_cases.rs`, counted by `dwarfcheck coverage`.

use super::detect::decode_with;
use super::layout::Layout;
use super::model::{Blob, Counts};
use super::platform::Platform;
use super::read::Fault;
use super::validate::validate;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A case file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    /// Platform of every case without its own (default tgllp).
    #[serde(default)]
    pub platform: Option<String>,
    /// The cases.
    pub cases: Vec<VisaCase>,
}

/// One case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisaCase {
    /// Unique in its file.
    pub name: String,
    /// Rule IDs the case exercises.
    pub rules: Vec<String>,
    /// `seed`, `igc-2022`, `igc-current`, or `auto` (the default):
    /// detection.
    #[serde(default)]
    pub layout: Option<String>,
    /// `skl`, `tgllp`, `dg2`, `pvc` (default: the file's).
    #[serde(default)]
    pub platform: Option<String>,
    /// The blob: hex byte pairs, whitespace anywhere, `#` starts a comment
    /// to the end of the line.
    pub hex: String,
    /// What must come out.
    pub expect: Expect,
}

/// A case's expectation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The faults, in order: the decoding fault alone when decoding fails,
    /// else every validation fault (empty: a clean blob).
    pub faults: Vec<ExpectFault>,
    /// The layout the blob decodes under (checks detection).
    #[serde(default)]
    pub layout: Option<String>,
    /// The decoded counts.
    #[serde(default)]
    pub counts: Option<Counts>,
}

pub use crate::case::blob::ExpectFault;

/// Every `*.visa` file under `paths` (directories recursively, at most
/// 100,000 entries visited), sorted.
pub fn case_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    crate::case::files::with_extension(paths, "visa")
}

/// Reads one case file.
///
/// Errors: the file cannot be read or is not a case file (with serde's
/// message).
pub fn load(path: &Path) -> Result<CaseFile, String> {
    crate::case::blob::load_yaml(path)
}

/// Parses a case's hex text ([`crate::case::blob::parse_hex`]).
///
/// Errors: a character that is not a hex digit, or an odd digit count.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    crate::case::blob::parse_hex(text)
}

/// What dwarfcheck's decoder makes of one case's blob.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// The blob's bytes.
    pub bytes: Vec<u8>,
    /// The layout the case names (`None`: detection).
    pub layout: Option<Layout>,
    /// The platform it is validated for.
    pub platform: Platform,
    /// The decoding, when the blob decodes.
    pub blob: Option<Blob>,
    /// The decoding fault alone when it does not decode, else every
    /// validation fault (empty: a clean blob).
    pub faults: Vec<Fault>,
}

/// Decodes and validates one case's blob; `default_platform` is its
/// file's.
///
/// Errors: the case itself is malformed (hex, layout or platform name).
pub fn decode_case(c: &VisaCase, default_platform: Option<&str>) -> Result<CaseOutcome, String> {
    let bytes = parse_hex(&c.hex)?;
    let layout = match c.layout.as_deref() {
        None | Some("auto") => None,
        Some(l) => Some(Layout::parse(l).ok_or_else(|| format!("unknown layout `{l}`"))?),
    };
    let pname = c.platform.as_deref().or(default_platform).unwrap_or("tgllp");
    let platform = Platform::parse(pname).ok_or_else(|| format!("unknown platform `{pname}`"))?;
    let (faults, blob) = match decode_with(&bytes, layout) {
        Ok(b) => (validate(&b, platform), Some(b)),
        Err(f) => (vec![f], None),
    };
    Ok(CaseOutcome { bytes, layout, platform, blob, faults })
}

/// Runs one case; `default_platform` is its file's.
///
/// Errors: what differs from the expectation, in words.
pub fn run(c: &VisaCase, default_platform: Option<&str>) -> Result<(), String> {
    let CaseOutcome { blob, faults: got, .. } = decode_case(c, default_platform)?;
    crate::case::blob::compare_faults(&got, &c.expect.faults)?;
    if let Some(want) = &c.expect.layout {
        let have = blob.as_ref().map_or("none", |b| b.layout.name());
        if have != want {
            return Err(format!("layout {have}, expected {want}"));
        }
    }
    if let Some(want) = &c.expect.counts {
        let have = blob.as_ref().map(|b| b.counts());
        if have.as_ref() != Some(want) {
            return Err(format!("counts {have:?}, expected {want:?}"));
        }
    }
    Ok(())
}

crate::impl_rule_case!(VisaCase);
