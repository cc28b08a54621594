//! The Tru64 optimization symbol table (issue 18; seed
//! `tru64-optimized-debugging-symbol-table.txt`, chapter 12): one
//! procedure's PPODE stream of semantic events, split lifetime variables
//! and discontiguous scopes, decoded, encoded, validated against
//! `specs/rules/tru64-ppod.yaml`, and read at a pc.
//!
//! Modules, bottom first: [`codes`] (tags and code tables), [`read`] (the
//! fault and the bounded LEB reader), [`model`] (records, as written and as
//! the YAML description gives them), [`decode`] (bytes to records with
//! offsets), [`encode`] (records to bytes, written apart from the
//! decoder), [`resolve`] (the seed's direct reading: `location_at`,
//! `scopes_at`), [`validate`] (the rules that are not framing), [`cases`]
//! (the case files of `specs/cases/tru64/`), [`lower`] (the lowering to
//! DWARF location lists, ranges and line rows, and its `gimli::write`
//! writer), [`check`] (both evaluators on the lowering against the direct
//! reading), [`standin`] (the lowering as an x86-64 executable and cores
//! for real debuggers, with what the direct reading says they must show),
//! [`debuggers`] (GDB and LLDB asked about the stand-in and judged).

pub mod cases;
pub mod check;
pub mod codes;
pub mod debuggers;
pub mod decode;
pub mod encode;
pub mod lower;
pub mod model;
pub mod read;
pub mod resolve;
pub mod standin;
pub mod validate;

pub use read::Fault;

/// Decodes and validates one procedure's data: every fault, ordered by
/// byte offset (decoding faults before validation faults at one offset).
pub fn check(bytes: &[u8], procedure: model::Procedure, symbols: &model::Symbols) -> (decode::Decoded, Vec<Fault>) {
    let d = decode::decode(bytes);
    let mut faults = d.faults.clone();
    faults.extend(validate::validate(&d.entries, procedure, symbols));
    faults.sort_by_key(|f| f.at);
    (d, faults)
}
