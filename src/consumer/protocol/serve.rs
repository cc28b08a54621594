//! The reference's own answers to version 2 `rows` and `unwind` requests,
//! in the wire form a consumer sends (docs/protocol.md): what the worked
//! examples of the document are checked against, and what a consumer's
//! author can compare a reply with.
//!
//! The wire form of a reply is the inverse of [`super::reply`]'s reading:
//! a row table is the serde form of [`CfiOutcome`]; an unwinding is
//! `{"kind": "unwind", "steps": [...], "end": {...}}` with each step's CFA
//! as a byte address and each caller register by value.

use super::wire::{RowsRequest, UnwindRequest, Version};
use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::encoding::hex::to_hex as hex;
use dwarfcheck_core::outcome::unwind::{Unwind, UnwindEnd};
use dwarfcheck_core::outcome::{CfiOutcome, Failure, Outcome, SingleLocation, Source};
use dwarfcheck_core::rules::id;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The frame section of a request, on its target.
///
/// Errors: an unknown vendor, a target that does not validate, bytes that
/// are not hex (a message).
fn section(
    target: &super::wire::CfiTarget,
    vendor: &str,
    s: &super::wire::WireCfiSection,
) -> Result<CfiSection, String> {
    s.to_section(Arc::new(target.to_target(vendor)?))
}

/// The reference's answer to a `rows` request: the row table of the FDE at
/// `fde_offset`, or the row covering `address` in the table of the first
/// FDE, in section order, whose range covers it (`unwind.no-fde`, an
/// evaluation error, when none does).
///
/// Errors: a request with both or neither of `fde_offset` and `address`,
/// or whose section cannot be built (a message).
pub fn rows(req: &RowsRequest) -> Result<CfiOutcome, String> {
    let sec = section(&req.target, &req.vendor, &req.section)?;
    match (req.fde_offset, req.address) {
        (Some(off), None) => Ok(dwarfcheck_reference::cfi::frame_table(&sec, off)),
        (None, Some(a)) => {
            let covering = sec.fde_offsets().filter_map(Result::ok).find(|&o| {
                sec.parse_fde(o).is_ok_and(|(f, _)| {
                    u128::from(f.pc_begin) <= u128::from(a)
                        && u128::from(a) < u128::from(f.pc_begin) + u128::from(f.pc_range)
                })
            });
            let Some(off) = covering else {
                return Ok(CfiOutcome::Failed(Failure::EvalError { rule: id::UNWIND_NO_FDE, at: None }));
            };
            Ok(match dwarfcheck_reference::cfi::frame_table(&sec, off) {
                CfiOutcome::Table(mut t) => {
                    t.rows.retain(|r| r.start <= a && a < r.end);
                    CfiOutcome::Table(t)
                }
                failed => failed,
            })
        }
        _ => Err("a rows request gives exactly one of fde_offset and address".into()),
    }
}

/// The reference's answer to an `unwind` request.
///
/// Errors: the section or the state cannot be built (a message).
pub fn unwind(req: &UnwindRequest) -> Result<Unwind, String> {
    let sec = section(&req.target, &req.vendor, &req.section)?;
    let ctx = req.state.to_context(sec.target.clone())?;
    Ok(dwarfcheck_reference::unwind::unwind(&sec, &ctx, req.frames))
}

/// The envelope of a reply.
#[derive(Serialize)]
struct Reply<T> {
    protocol: Version,
    #[serde(rename = "type")]
    kind: &'static str,
    id: u64,
    outcome: T,
}

/// The wire form of an unwinding (the `outcome` of an `unwind` reply).
#[derive(Debug, Serialize)]
pub struct WireUnwind {
    /// Always `"unwind"`.
    pub kind: &'static str,
    /// The steps, top frame first.
    pub steps: Vec<WireStep>,
    /// How it ended.
    pub end: WireEnd,
}

/// One step of [`WireUnwind`].
#[derive(Debug, Serialize)]
pub struct WireStep {
    /// The frame's program location.
    pub pc: u64,
    /// The frame's CFA: a byte address (`null` if it is not a memory
    /// location, which the reference never answers).
    pub cfa: Option<u64>,
    /// Address space of `cfa`, when not 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub cfa_aspace: u64,
    /// The caller's pc; `null` at the base of the stack.
    pub caller_pc: Option<u64>,
    /// Caller registers by DWARF number: the value as hex in target byte
    /// order, or `null` (no value).
    pub registers: BTreeMap<u64, Option<String>>,
}

/// How a [`WireUnwind`] ended.
#[derive(Debug, Serialize)]
pub struct WireEnd {
    /// `base`, `limit` or `fault`.
    pub kind: &'static str,
    /// For `fault`: the failure (an outcome of a failure kind).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The wire form of an unwinding: every caller register the reference
/// lists, by value.
pub fn unwind_wire(u: &Unwind) -> WireUnwind {
    let steps = u
        .steps
        .iter()
        .map(|s| {
            let (cfa_aspace, cfa) = match s.cfa.places.as_slice() {
                [SingleLocation::Simple(Source::Memory { aspace, bit_addr, .. })] => {
                    (*aspace, u64::try_from(bit_addr / 8).ok())
                }
                _ => (0, None),
            };
            let registers = s.registers.iter().map(|(n, r)| (*n, r.bytes.as_deref().map(hex))).collect();
            WireStep { pc: s.pc, cfa, cfa_aspace, caller_pc: s.caller_pc, registers }
        })
        .collect();
    let end = match &u.end {
        UnwindEnd::Base => WireEnd { kind: "base", outcome: None },
        UnwindEnd::Limit => WireEnd { kind: "limit", outcome: None },
        UnwindEnd::Fault { outcome } => WireEnd { kind: "fault", outcome: Some(outcome.clone()) },
    };
    WireUnwind { kind: "unwind", steps, end }
}

/// The reference's reply line to a version 2 `rows` or `unwind` request
/// line: `{"protocol": "dwarfcheck/2", "type": "result", "id": ..,
/// "outcome": ..}`.
///
/// Errors: a line that is not such a request, or whose section or state
/// cannot be built (a message).
pub fn answer(line: &str) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let text = match v.get("type").and_then(serde_json::Value::as_str) {
        Some("rows") => {
            let r: RowsRequest = serde_json::from_value(v).map_err(|e| format!("rows request: {e}"))?;
            serde_json::to_string(&Reply { protocol: Version::V2, kind: "result", id: r.id, outcome: rows(&r)? })
        }
        Some("unwind") => {
            let r: UnwindRequest = serde_json::from_value(v).map_err(|e| format!("unwind request: {e}"))?;
            let u = unwind_wire(&unwind(&r)?);
            serde_json::to_string(&Reply { protocol: Version::V2, kind: "result", id: r.id, outcome: u })
        }
        other => return Err(format!("not a rows or unwind request: type {other:?}")),
    };
    Ok(text.expect("replies serialise"))
}
