//! The rules of `specs/rules/tru64-ppod.yaml` that are not about framing:
//! the first event, events and ranges inside the procedure, one
//! description per target, definition points, duplicate references. Each
//! fault at the byte offset of the item that breaks the rule.

use super::codes;
use super::decode::Entry;
use super::model::{Procedure, Record, Scheme, Symbols, Target};
use super::read::Fault;
use super::resolve::{resolve_children, resolve_scope, View};
use dwarfcheck_core::rules::id;

/// The faults of decoded `entries` for `procedure` (whose symbols are
/// `symbols`), in stream order.
pub fn validate(entries: &[Entry], procedure: Procedure, symbols: &Symbols) -> Vec<Fault> {
    let records: Vec<Record> = entries.iter().map(|e| e.record.clone()).collect();
    let view = View { procedure, symbols, records: &records };
    let mut faults = Vec::new();
    let inside = |i: i128| i >= 0 && procedure.insns.is_none_or(|n| i < i128::from(n));
    for e in entries {
        match &e.record {
            Record::SemEvent { events, .. } => {
                match events.first() {
                    Some(f) if f.count == 0 && f.event == codes::EVENT_LABEL => {}
                    Some(f) => faults.push(Fault::new(
                        id::TRU64_EVENT_FIRST_LABEL,
                        e.marks[0].at,
                        format!("first event is code {} with count {}, not label with count 0", f.event, f.count),
                    )),
                    None => faults.push(Fault::new(id::TRU64_EVENT_FIRST_LABEL, e.at, "no event at all")),
                }
                let mut at: i128 = 0;
                for (ev, m) in events.iter().zip(&e.marks) {
                    at += i128::from(ev.count);
                    if !inside(at) {
                        faults.push(Fault::new(
                            id::TRU64_EVENT_INSIDE,
                            m.at,
                            format!("event at instruction {at}, past the procedure's end"),
                        ));
                        break;
                    }
                }
            }
            Record::Split { descs, .. } => {
                for (k, (d, m)) in descs.iter().zip(&e.marks).enumerate() {
                    if descs[..k].iter().any(|p| p.target == d.target) {
                        faults.push(Fault::new(
                            id::TRU64_SPLIT_TARGET_ONCE,
                            m.at,
                            format!("a second description of {}", d.target),
                        ));
                    }
                    if d.scheme == Scheme::Duplicate {
                        if let Some(o) = d.duplicate_of {
                            let ok = view.referred(o).is_some() && d.target != Target::Local(o);
                            if !ok {
                                faults.push(Fault::new(
                                    id::TRU64_SPLIT_DUPLICATE_TARGET,
                                    m.duplicate_of.unwrap_or(m.at),
                                    format!("{} duplicates {o}, which has no normal or promoted description", d.target),
                                ));
                            }
                        }
                        continue;
                    }
                    for (c, (rc, (rat, dats))) in
                        resolve_children(&d.children).iter().zip(m.ranges.iter().zip(&m.defs)).enumerate()
                    {
                        if !rc.span.inside(procedure.insns) {
                            faults.push(Fault::new(
                                id::TRU64_SPLIT_RANGE_INSIDE,
                                *rat,
                                format!(
                                    "child {c} of {}: instructions {}..+{} outside the procedure",
                                    d.target, rc.span.first, rc.span.len
                                ),
                            ));
                        }
                        for (p, dat) in rc.defs.iter().zip(dats) {
                            if !inside(*p) {
                                faults.push(Fault::new(
                                    id::TRU64_SPLIT_DEF_POINT,
                                    *dat,
                                    format!("child {c} of {}: definition point at instruction {p}", d.target),
                                ));
                            }
                        }
                    }
                }
            }
            Record::DiscontigScope { scopes, .. } => {
                for (s, m) in scopes.iter().zip(&e.marks) {
                    for (sp, at) in resolve_scope(view.scope_begin(s.scope), &s.ranges).iter().zip(&m.ranges) {
                        if !sp.inside(procedure.insns) {
                            faults.push(Fault::new(
                                id::TRU64_SCOPE_RANGE_INSIDE,
                                *at,
                                format!(
                                    "scope {}: instructions {}..+{} outside the procedure",
                                    s.scope, sp.first, sp.len
                                ),
                            ));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    faults
}
