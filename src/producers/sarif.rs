//! Producer findings as SARIF 2.1.0 (OASIS Static Analysis Results
//! Interchange Format), so that code-scanning tools show them: one result
//! per finding, its rule in the tool's rule list, the binary and the pc as
//! its physical location, the DIE's name as its logical location.

use super::Finding;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The rule ID of findings the reference cannot judge.
pub const UNSUPPORTED_RULE: &str = "dwarfcheck.unsupported";

/// The SARIF log of `findings`, one run of dwarfcheck.
///
/// Levels: `error` for ill-formed expressions (faults of the producer),
/// `note` for evaluation errors (they depend on the synthetic machine
/// state) and for what the reference cannot judge.
pub fn log(findings: &[Finding]) -> Value {
    let catalogue = crate::catalogue::Catalogue::get();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rules = Vec::new();
    for f in findings {
        let id = rule_id(f);
        if index.contains_key(id) {
            continue;
        }
        index.insert(id, rules.len());
        let (short, section) = match catalogue.rules.get(id) {
            Some(r) => (f.rule_text.clone(), r.section.clone()),
            None => ("The reference evaluator cannot judge this operation".to_string(), String::new()),
        };
        rules.push(json!({
            "id": id,
            "shortDescription": { "text": short },
            "properties": { "section": section, "kind": f.found.kind },
        }));
    }
    let results: Vec<Value> = findings.iter().map(|f| result(f, index[rule_id(f)])).collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "dwarfcheck",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

fn rule_id(f: &Finding) -> &str {
    if f.found.rule.is_empty() {
        UNSUPPORTED_RULE
    } else {
        &f.found.rule
    }
}

/// One finding as a SARIF result.
fn result(f: &Finding, rule_index: usize) -> Value {
    let level = if f.found.kind == "ill-formed" { "error" } else { "note" };
    let d = f.described.as_ref();
    let name = d.and_then(|d| d.name.clone());
    let func = d.and_then(|d| d.function.clone());
    let at = f.found.at.map_or(String::new(), |a| format!(" at byte {a}"));
    let text = format!(
        "{} of {} {}{}: {} ({}{at}): {}",
        f.attribute,
        d.map_or("DIE", |d| d.tag.as_str()),
        name.as_deref().map_or_else(|| format!("{:#x}", f.die.unwrap_or(0)), |n| format!("`{n}`")),
        func.as_deref().map_or(String::new(), |n| format!(" in `{n}`")),
        f.found.input,
        f.found.kind,
        if f.found.rule.is_empty() { &f.found.detail } else { &f.rule_text },
    );
    let mut physical = json!({ "artifactLocation": { "uri": f.file } });
    if let Some((b, e)) = first_range(&f.pc_range) {
        physical["address"] = json!({ "absoluteAddress": b, "length": e.saturating_sub(b) });
    }
    let mut location = json!({ "physicalLocation": physical });
    if let Some(n) = &name {
        let full = func.as_deref().map_or_else(|| n.clone(), |g| format!("{g}::{n}"));
        location["logicalLocations"] = json!([{ "name": n, "fullyQualifiedName": full, "kind": "variable" }]);
    }
    json!({
        "ruleId": rule_id(f),
        "ruleIndex": rule_index,
        "level": level,
        "message": { "text": text },
        "locations": [location],
        "partialFingerprints": {
            "dwarfcheck/die-attribute-entry/v1":
                format!("{}|{:#x}|{}|{}", f.file, f.die.unwrap_or(0), f.attribute, f.entry.map_or(-1, |e| e as i64)),
        },
        "properties": {
            "die": f.die.map(|d| format!("{d:#x}")),
            "attribute": f.attribute,
            "entry": f.entry,
            "pcRange": f.pc_range,
            "producer": d.and_then(|d| d.producer.clone()),
            "expression": f.found.input,
            "bytes": f.found.bytes,
            "at": f.found.at,
            "trace": f.found.trace,
            "confirmation": f.confirmation,
        },
    })
}

/// The first `[begin, end)` of a pc range text.
fn first_range(text: &str) -> Option<(u64, u64)> {
    let r = text.strip_prefix('[')?.split_once(')')?.0;
    let (b, e) = r.split_once(", ")?;
    Some((crate::text::number::parse_u64(b)?, crate::text::number::parse_u64(e)?))
}
