//! Producer findings on real input (`dwarfcheck elf --findings`,
//! `dwarfcheck producers`): each expression the reference finds
//! ill-formed, fails with an evaluation error or cannot judge, with the
//! file, the unit and its `DW_AT_producer`, the DIE and its name, the
//! attribute, the pc range, the expression, the rule and the reference's
//! trace; counts by producer and rule; and each one read again by
//! llvm-dwarfdump ([`confirm`]).
//!
//! The runner keeps the findings case by case
//! ([`crate::runner::producer`]); this module adds what only the file
//! knows ([`crate::elf::describe`]).

pub mod confirm;
pub mod doc;
pub mod render;
pub mod sarif;

use crate::elf::describe::{describe, DieDescription};
use crate::elf::dwarf::Place;
use crate::runner::producer::ProducerFinding;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One producer finding with everything known about it.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The input file.
    pub file: String,
    /// The DIE's section offset (`None`: the origin names no DIE).
    pub die: Option<u64>,
    /// `DW_AT_location` or `DW_AT_frame_base`.
    pub attribute: String,
    /// For a location-list entry, its index in the list.
    pub entry: Option<usize>,
    /// The pc range the expression applies to: the location-list entry's,
    /// or else the DIE's scope's ranges, `[begin, end)` each, as text.
    pub pc_range: String,
    /// What the file says about the DIE (`None`: a DIE of a split unit,
    /// or the file could not be read again).
    pub described: Option<DieDescription>,
    /// The producer as grouped in summaries ([`producer_label`]).
    pub producer: String,
    /// The rule's statement, in one line (the catalogue's `says`).
    pub rule_text: String,
    /// What the reference found.
    pub found: ProducerFinding,
    /// llvm-dwarfdump's reading of the same DIE and operands, when asked
    /// for ([`confirm::confirm_all`]).
    pub confirmation: Option<confirm::Confirmation>,
}

/// The producer of a unit, shortened for grouping: `DW_AT_producer` up to
/// its first command-line option (GCC records its options: `GNU C17
/// 12.2.0 -mtune=generic -O2` groups as `GNU C17 12.2.0`); `unknown
/// producer` without one.
pub fn producer_label(producer: Option<&str>) -> String {
    let Some(p) = producer else { return "unknown producer".to_string() };
    let kept: Vec<&str> = p.split_whitespace().take_while(|w| !w.starts_with('-')).collect();
    if kept.is_empty() {
        p.trim().to_string()
    } else {
        kept.join(" ")
    }
}

/// The findings of `found` with their DIEs described: each input file is
/// read again once, for the DIEs of its findings. A file that cannot be
/// read again leaves its findings undescribed.
pub fn gather(found: &[ProducerFinding]) -> Vec<Finding> {
    let places: Vec<Option<Place>> = found.iter().map(|f| Place::parse(&f.origin)).collect();
    let mut wanted: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for p in places.iter().flatten().filter(|p| !p.split) {
        wanted.entry(p.path().to_string()).or_default().insert(p.die);
    }
    let described: BTreeMap<String, BTreeMap<u64, DieDescription>> = wanted
        .into_iter()
        .map(|(path, dies)| {
            let d = describe(Path::new(&path), &dies).unwrap_or_default();
            (path, d)
        })
        .collect();
    let catalogue = crate::catalogue::Catalogue::get();
    found
        .iter()
        .zip(places)
        .map(|(f, place)| {
            let d = place.as_ref().filter(|p| !p.split).and_then(|p| described.get(p.path())?.get(&p.die).cloned());
            let pc_range = match (&place, &d) {
                (Some(Place { entry: Some((_, r)), .. }), _) => r.clone(),
                (_, Some(d)) => ranges_text(&d.scope_ranges),
                _ => String::new(),
            };
            let rule_text = catalogue.rules.get(&f.rule).map(|r| one_line(&r.says)).unwrap_or_else(|| f.detail.clone());
            Finding {
                file: place.as_ref().map_or_else(|| f.origin.clone(), |p| p.path().to_string()),
                die: place.as_ref().map(|p| p.die),
                attribute: place.as_ref().map(|p| p.attribute.clone()).unwrap_or_default(),
                entry: place.as_ref().and_then(|p| p.entry.as_ref().map(|e| e.0)),
                pc_range,
                producer: producer_label(d.as_ref().and_then(|d| d.producer.as_deref())),
                described: d,
                rule_text,
                found: f.clone(),
                confirmation: None,
            }
        })
        .collect()
}

/// Pc ranges as text: `[0x10, 0x20) [0x30, 0x38)`; `(none)` for none.
pub fn ranges_text(ranges: &[(u64, u64)]) -> String {
    if ranges.is_empty() {
        return "(none)".to_string();
    }
    ranges.iter().map(|(b, e)| format!("[{b:#x}, {e:#x})")).collect::<Vec<_>>().join(" ")
}

/// A catalogue statement folded into one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Counts by producer, then by rule (`unsupported`: by what the reference
/// lacks), of `findings` of kind `kind`.
pub fn counts(findings: &[Finding], kind: &str) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut out: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for f in findings.iter().filter(|f| f.found.kind == kind) {
        let key = if f.found.rule.is_empty() { f.found.detail.clone() } else { f.found.rule.clone() };
        *out.entry(f.producer.clone()).or_default().entry(key).or_default() += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GCC's options are cut; other producers keep their whole string.
    #[test]
    fn producer_labels() {
        assert_eq!(producer_label(Some("GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2")), "GNU C17 12.2.0");
        assert_eq!(
            producer_label(Some("Debian clang version 19.1.7 (3~deb12u1)")),
            "Debian clang version 19.1.7 (3~deb12u1)"
        );
        assert_eq!(producer_label(None), "unknown producer");
        assert_eq!(producer_label(Some("-O2")), "-O2");
    }
}
