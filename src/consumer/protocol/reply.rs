//! Reading a consumer's replies: the `hello` answer and `result` messages,
//! whose `outcome` is the serde form of [`Outcome`], of a row table
//! ([`CfiOutcome`]) or of an unwinding ([`Unwind`]) (docs/protocol.md).
//!
//! The outcome is read through plain mirror structs rather than
//! `Outcome`'s own `Deserialize`: serde buffers internally tagged enums in
//! a form without 128-bit integers, so a memory location's `bit_addr`
//! would not parse. Locations are normalised on the way in, so a consumer
//! may send composites unmerged and places in any order.

use super::wire::Version;
use super::{OutcomeFormError, ProtocolError};
use crate::edition::Edition;
use dwarfcheck_core::encoding::hex::{parse_hex, parse_hex_last_first};
use dwarfcheck_core::outcome::unwind::{CallerRegister, Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{
    BaseType, BudgetKind, CfaRule, CfiOutcome, NormalLocation, Outcome, RawLocation, RawPiece, RawSingle, RegisterRule,
    Row, RowTable, Source, Value,
};
use dwarfcheck_core::rules::RuleId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a consumer says it implements (the `supports` object of its
/// `hello` reply). Unknown keys are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireSupport {
    /// Editions of input it implements: `dwarf5`, `dwarf5-gnu`,
    /// `hetero-2020`.
    pub editions: Vec<Edition>,
    /// Whether it evaluates expressions (`evaluate` requests).
    pub expr: bool,
    /// Version 1's placeholder for CFI: accepted and ignored (version 1
    /// sends no CFI requests; version 2 asks `rows` and `unwind`).
    #[serde(default)]
    pub cfi: bool,
    /// Version 2: whether it builds row tables (`rows` requests).
    #[serde(default)]
    pub rows: bool,
    /// Version 2: whether it unwinds (`unwind` requests).
    #[serde(default)]
    pub unwind: bool,
}

impl WireSupport {
    /// What it answers in `version`: `rows` and `unwind` only in version 2.
    pub fn in_version(mut self, version: Version) -> WireSupport {
        if version == Version::V1 {
            (self.rows, self.unwind) = (false, false);
        }
        self
    }
}

/// The consumer's answer to `hello`. Unknown keys are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HelloReply {
    /// The version it speaks: must be [`VERSION`].
    pub protocol: String,
    /// Must be `"hello"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its name in reports and `--gate`.
    pub name: String,
    /// What it implements.
    pub supports: WireSupport,
}

impl HelloReply {
    /// The version it picked (checked by [`parse_hello`]).
    pub fn version(&self) -> Version {
        Version::parse(&self.protocol).unwrap_or(Version::V1)
    }
}

/// Parses and checks a `hello` reply line.
///
/// Errors: not JSON, a missing key, a protocol version dwarfcheck does not
/// speak ([`Version::ALL`]), another message type, an empty name (a
/// message for the caller's error).
pub fn parse_hello(line: &str) -> Result<HelloReply, ProtocolError> {
    let mut r: HelloReply = serde_json::from_str(line)
        .map_err(|e| ProtocolError::BadHello { detail: e.to_string(), excerpt: excerpt(line) })?;
    let Some(version) = Version::parse(&r.protocol) else {
        return Err(ProtocolError::HelloVersion { found: r.protocol });
    };
    r.supports = r.supports.in_version(version);
    if r.kind != "hello" {
        return Err(ProtocolError::HelloType { found: r.kind });
    }
    if r.name.trim().is_empty() {
        return Err(ProtocolError::EmptyName);
    }
    Ok(r)
}

/// A reply to any request: the envelope, and the outcome in a form `T`.
#[derive(Debug, Deserialize)]
struct ResultReply<T> {
    protocol: String,
    #[serde(rename = "type")]
    kind: String,
    id: u64,
    outcome: T,
}

/// The outcome of a result line to request `id` in `version`, still in
/// its wire form.
///
/// Errors: not JSON or not a result message, another protocol version,
/// another id (a message for `ConsumerFault`).
fn envelope<T: serde::de::DeserializeOwned>(line: &str, id: u64, version: Version) -> Result<T, ProtocolError> {
    let r: ResultReply<T> = serde_json::from_str(line)
        .map_err(|e| ProtocolError::BadReply { detail: e.to_string(), excerpt: excerpt(line) })?;
    if r.protocol != version.as_str() {
        return Err(ProtocolError::ReplyVersion { found: r.protocol, expected: version });
    }
    if r.kind != "result" {
        return Err(ProtocolError::ReplyType { found: r.kind });
    }
    if r.id != id {
        return Err(ProtocolError::WrongId { got: r.id, asked: id });
    }
    Ok(r.outcome)
}

/// Parses a reply line to the `evaluate` request with `id`, in `version`.
///
/// Errors: not JSON or not a result message, another protocol version,
/// another id, an outcome that is not one of the documented forms (a
/// message for `ConsumerFault`).
pub fn parse_result(line: &str, id: u64, version: Version) -> Result<Outcome, ProtocolError> {
    Ok(envelope::<WireOutcome>(line, id, version)?.into_outcome()?)
}

/// Parses a reply line to the `rows` request with `id` (version 2): a
/// row table, normalised ([`RowTable::normalize`]: a consumer may send
/// empty rows and split equal ones), or a failure. A row with an
/// `architectural` register rule has no normal form: the answer is
/// `Unsupported`.
///
/// Errors: as [`parse_result`]; an outcome that is neither a table nor a
/// failure, or a rule or CFA of no documented form.
pub fn parse_rows(line: &str, id: u64) -> Result<CfiOutcome, ProtocolError> {
    let v: serde_json::Value = envelope(line, id, Version::V2)?;
    if v.get("kind").and_then(|k| k.as_str()) != Some("table") {
        return Ok(CfiOutcome::Failed(failure(v)?));
    }
    let t: WireTable = serde_json::from_value(v).map_err(|e| OutcomeFormError::Shape(e.to_string()))?;
    Ok(t.into_outcome()?)
}

/// Parses a reply line to the `unwind` request with `id` (version 2): the
/// steps and how unwinding ended, or a failure (an unwinding that could
/// not start: [`Unwind::fault`]). Registers are reported by value only:
/// their locations are `Unsupported` ("not shown").
///
/// Errors: as [`parse_rows`].
pub fn parse_unwind(line: &str, id: u64) -> Result<Unwind, ProtocolError> {
    let v: serde_json::Value = envelope(line, id, Version::V2)?;
    if v.get("kind").and_then(|k| k.as_str()) != Some("unwind") {
        return Ok(Unwind::fault(Outcome::Failed(failure(v)?)));
    }
    let u: WireUnwind = serde_json::from_value(v).map_err(|e| OutcomeFormError::Shape(e.to_string()))?;
    Ok(u.into_unwind()?)
}

/// A failure outcome in its wire form (kinds `ill-formed`, `eval-error`,
/// `budget`, `unsupported`, `consumer-fault`).
fn failure(v: serde_json::Value) -> Result<Failure, OutcomeFormError> {
    let o: WireOutcome = serde_json::from_value(v).map_err(|e| OutcomeFormError::Shape(e.to_string()))?;
    match o.into_outcome()? {
        Outcome::Failed(f) => Ok(f),
        other => Err(OutcomeFormError::UnknownKind(other.kind().to_string())),
    }
}

/// A row table: `{"kind": "table", "fde_offset": N, "rows": [...]}`.
#[derive(Debug, Deserialize)]
struct WireTable {
    fde_offset: u64,
    rows: Vec<WireRow>,
}

/// One row: `[start, end)`, the CFA rule, register rules by number.
#[derive(Debug, Deserialize)]
struct WireRow {
    start: u64,
    end: u64,
    cfa: WireRule,
    #[serde(default)]
    registers: BTreeMap<String, WireRule>,
}

/// Every key a CFA or register rule uses, `kind` deciding which apply.
#[derive(Debug, Deserialize)]
struct WireRule {
    kind: String,
    register: Option<u64>,
    offset: Option<i64>,
    aspace: Option<u64>,
    expr: Option<String>,
    signed: Option<bool>,
}

/// Why a rule has no place in the normal form.
enum NoRule {
    /// `architectural`: a rule the normal form has no place for.
    Architectural,
    /// Not one of the documented forms.
    Bad(OutcomeFormError),
}

impl From<OutcomeFormError> for NoRule {
    fn from(e: OutcomeFormError) -> Self {
        NoRule::Bad(e)
    }
}

impl WireRule {
    fn expr(&self, form: &str) -> Result<Vec<u8>, OutcomeFormError> {
        hex_last_first(need(self.expr.as_deref(), "expr", form)?)
    }

    fn into_cfa(self) -> Result<CfaRule, OutcomeFormError> {
        let k = self.kind.as_str();
        Ok(match k {
            "reg-offset" => CfaRule::RegOffset {
                register: need(self.register, "register", k)?,
                offset: need(self.offset, "offset", k)?,
                aspace: self.aspace.unwrap_or(0),
            },
            "expression" => CfaRule::Expression { expr: self.expr(k)? },
            other => return Err(OutcomeFormError::UnknownKind(other.to_string())),
        })
    }

    fn into_rule(self) -> Result<RegisterRule, NoRule> {
        let k = self.kind.as_str();
        Ok(match k {
            "undefined" => RegisterRule::Undefined,
            "same-value" => RegisterRule::SameValue,
            "offset" => RegisterRule::Offset { offset: need(self.offset, "offset", k)? },
            "val-offset" => RegisterRule::ValOffset { offset: need(self.offset, "offset", k)? },
            "register" => RegisterRule::Register { register: need(self.register, "register", k)? },
            "expression" => RegisterRule::Expression { expr: self.expr(k)? },
            "val-expression" => RegisterRule::ValExpression { expr: self.expr(k)? },
            "ra-signed" => RegisterRule::RaSigned { signed: need(self.signed, "signed", k)? },
            "architectural" => return Err(NoRule::Architectural),
            other => return Err(NoRule::Bad(OutcomeFormError::UnknownKind(other.to_string()))),
        })
    }
}

impl WireTable {
    fn into_outcome(self) -> Result<CfiOutcome, OutcomeFormError> {
        let mut rows = Vec::with_capacity(self.rows.len());
        for r in self.rows {
            let mut registers = BTreeMap::new();
            for (n, rule) in r.registers {
                let n: u64 = n.parse().map_err(|_| OutcomeFormError::Shape(format!("register number `{n}`")))?;
                match rule.into_rule() {
                    Ok(rule) => {
                        registers.insert(n, rule);
                    }
                    Err(NoRule::Architectural) => {
                        return Ok(CfiOutcome::Failed(Failure::Unsupported {
                            what: format!("an architectural rule for register {n} (no normal form)"),
                        }))
                    }
                    Err(NoRule::Bad(e)) => return Err(e),
                }
            }
            rows.push(Row { start: r.start, end: r.end, cfa: r.cfa.into_cfa()?, registers });
        }
        Ok(CfiOutcome::Table(RowTable { fde_offset: self.fde_offset, rows }.normalize()))
    }
}

/// An unwinding: `{"kind": "unwind", "steps": [...], "end": {...}}`.
#[derive(Debug, Deserialize)]
struct WireUnwind {
    steps: Vec<WireStep>,
    end: WireEnd,
}

/// One step: the frame's pc and CFA, the caller's pc and registers.
#[derive(Debug, Deserialize)]
struct WireStep {
    pc: u64,
    cfa: u64,
    #[serde(default)]
    cfa_aspace: u64,
    caller_pc: Option<u64>,
    /// Values by DWARF number, hex in target byte order; `null`: no value.
    #[serde(default)]
    registers: BTreeMap<String, Option<String>>,
}

/// How unwinding ended: `base`, `limit`, or `fault` with its outcome.
#[derive(Debug, Deserialize)]
struct WireEnd {
    kind: String,
    outcome: Option<serde_json::Value>,
}

/// A register's location as a consumer that reports values shows it: not
/// at all.
fn location_not_shown() -> Outcome {
    Outcome::Failed(Failure::Unsupported { what: "a protocol consumer reports register values, not locations".into() })
}

impl WireUnwind {
    fn into_unwind(self) -> Result<Unwind, OutcomeFormError> {
        let mut steps = Vec::with_capacity(self.steps.len());
        for s in self.steps {
            let mut registers = BTreeMap::new();
            for (n, v) in s.registers {
                let n: u64 = n.parse().map_err(|_| OutcomeFormError::Shape(format!("register number `{n}`")))?;
                let bytes = v.map(|h| parse_hex(&h).map_err(|_| OutcomeFormError::NotHex(excerpt(&h)))).transpose()?;
                registers.insert(n, CallerRegister { location: location_not_shown(), bytes });
            }
            let cfa = RawLocation::simple(Source::memory(s.cfa_aspace, u128::from(s.cfa) * 8)).normalize();
            steps.push(Step { pc: s.pc, lookup: 0, fde_offset: 0, cfa, registers, caller_pc: s.caller_pc });
        }
        let end = match self.end.kind.as_str() {
            "base" => UnwindEnd::Base,
            "limit" => UnwindEnd::Limit,
            "fault" => {
                UnwindEnd::Fault { outcome: Outcome::Failed(failure(need(self.end.outcome, "outcome", "fault")?)?) }
            }
            other => return Err(OutcomeFormError::UnknownKind(other.to_string())),
        };
        Ok(Unwind { steps, end })
    }
}

/// The first 200 characters of a line, for fault messages.
fn excerpt(line: &str) -> String {
    let mut s: String = line.chars().take(200).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

/// Every key any outcome form uses, `kind` deciding which apply.
#[derive(Debug, Deserialize)]
struct WireOutcome {
    kind: String,
    ty: Option<BaseType>,
    bytes: Option<String>,
    places: Option<Vec<WireSingle>>,
    rule: Option<String>,
    at: Option<u64>,
    budget: Option<BudgetKind>,
    what: Option<String>,
}

/// A single location: `{"simple": source}` or `{"composite": [piece]}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum WireSingle {
    Simple(WireSource),
    Composite(Vec<WirePiece>),
}

/// A composite part.
#[derive(Debug, Deserialize)]
struct WirePiece {
    bits: u64,
    sources: Vec<WireSource>,
}

/// Every key any source form uses, `storage` deciding which apply.
#[derive(Debug, Deserialize)]
struct WireSource {
    storage: String,
    aspace: Option<u64>,
    bit_addr: Option<u128>,
    thread: Option<u64>,
    lane: Option<u32>,
    regno: Option<u64>,
    bit_offset: Option<u64>,
    bytes: Option<String>,
    die: Option<u64>,
    byte_displacement: Option<i64>,
}

/// `Some` value of a key the form requires, else an error naming it.
fn need<T>(v: Option<T>, key: &'static str, form: &str) -> Result<T, OutcomeFormError> {
    v.ok_or_else(|| OutcomeFormError::MissingKey { form: form.to_string(), key })
}

/// Bytes from hex written last byte first (the outcome vocabulary's
/// `bytes`), returned first byte first.
fn hex_last_first(s: &str) -> Result<Vec<u8>, OutcomeFormError> {
    if s.chars().any(char::is_whitespace) {
        return Err(OutcomeFormError::NotHex(excerpt(s)));
    }
    parse_hex_last_first(s).map_err(|_| OutcomeFormError::NotHex(excerpt(s)))
}

impl WireOutcome {
    fn into_outcome(self) -> Result<Outcome, OutcomeFormError> {
        let k = self.kind.as_str();
        Ok(match k {
            "value" => {
                let ty = need(self.ty, "ty", k)?;
                let bytes = hex_last_first(&need(self.bytes, "bytes", k)?)?;
                if bytes.len() != ty.bytes() {
                    return Err(OutcomeFormError::ValueSize { bits: ty.bits, need: ty.bytes(), got: bytes.len() });
                }
                Outcome::Value(Value { ty, bytes })
            }
            "location" => Outcome::Location(location(need(self.places, "places", k)?)?),
            "ill-formed" => {
                Outcome::Failed(Failure::IllFormed { rule: RuleId::new(need(self.rule, "rule", k)?), at: self.at })
            }
            "eval-error" => {
                Outcome::Failed(Failure::EvalError { rule: RuleId::new(need(self.rule, "rule", k)?), at: self.at })
            }
            "budget" => Outcome::Failed(Failure::Budget { budget: need(self.budget, "budget", k)?, at: self.at }),
            "unsupported" => Outcome::Failed(Failure::Unsupported { what: self.what.unwrap_or_default() }),
            "consumer-fault" => Outcome::Failed(Failure::ConsumerFault { what: self.what.unwrap_or_default() }),
            other => return Err(OutcomeFormError::UnknownKind(other.to_string())),
        })
    }
}

/// A location from its places, normalised.
fn location(places: Vec<WireSingle>) -> Result<NormalLocation, OutcomeFormError> {
    if places.is_empty() {
        return Err(OutcomeFormError::NoPlace);
    }
    let mut singles = Vec::with_capacity(places.len());
    for p in places {
        singles.push(match p {
            WireSingle::Simple(s) => RawSingle::Simple(s.into_source()?),
            WireSingle::Composite(parts) => {
                let mut pieces = Vec::with_capacity(parts.len());
                for part in parts {
                    if part.sources.is_empty() {
                        return Err(OutcomeFormError::NoSource);
                    }
                    let singles = part
                        .sources
                        .into_iter()
                        .map(|s| s.into_source().map(RawSingle::Simple))
                        .collect::<Result<_, _>>()?;
                    pieces.push(RawPiece { bits: part.bits, location: RawLocation { singles } });
                }
                RawSingle::Composite { pieces, bit_offset: 0 }
            }
        });
    }
    Ok(RawLocation { singles }.normalize())
}

impl WireSource {
    fn into_source(self) -> Result<Source, OutcomeFormError> {
        let k = self.storage.as_str();
        Ok(match k {
            "memory" => Source::Memory {
                aspace: self.aspace.unwrap_or(0),
                bit_addr: need(self.bit_addr, "bit_addr", k)?,
                thread: self.thread,
                lane: self.lane,
            },
            "register" => {
                Source::Register { regno: need(self.regno, "regno", k)?, bit_offset: self.bit_offset.unwrap_or(0) }
            }
            "implicit" => Source::Implicit {
                bytes: hex_last_first(&need(self.bytes, "bytes", k)?)?,
                bit_offset: self.bit_offset.unwrap_or(0),
            },
            "implicit-pointer" => Source::ImplicitPointer {
                die: need(self.die, "die", k)?,
                aspace: self.aspace,
                byte_displacement: self.byte_displacement.unwrap_or(0),
                bit_offset: self.bit_offset.unwrap_or(0),
            },
            "undefined" => Source::Undefined,
            other => return Err(OutcomeFormError::UnknownStorage(other.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::outcome::{Piece, SingleLocation};

    /// Version 1's reading of a result line.
    fn parse_result(line: &str, id: u64) -> Result<Outcome, ProtocolError> {
        super::parse_result(line, id, Version::V1)
    }

    fn reply(outcome: &str) -> String {
        format!(r#"{{"protocol":"dwarfcheck/1","type":"result","id":7,"outcome":{outcome}}}"#)
    }

    #[test]
    fn every_outcome_form_reads_back() {
        // Each form as docs/protocol.md writes it, with the Outcome it
        // denotes worked out by hand.
        let v = parse_result(
            &reply(
                r#"{"kind":"value","ty":{"encoding":"generic","bits":64,"big_endian":false,"vector_size":1},"bytes":"0000000000001010"}"#,
            ),
            7,
        );
        assert_eq!(v.unwrap(), (Outcome::Value(Value::from_u128(BaseType::generic(64, false), 0x1010))));
        // bit_addr past u64: byte address 2^64 - 8 is bit 2^67 - 64.
        let big = (1u128 << 67) - 64;
        let m = parse_result(
            &reply(&format!(
                r#"{{"kind":"location","places":[{{"simple":{{"storage":"memory","aspace":0,"bit_addr":{big}}}}}]}}"#
            )),
            7,
        );
        assert_eq!(
            m.unwrap(),
            (Outcome::Location(NormalLocation { places: vec![SingleLocation::Simple(Source::memory(0, big))] }))
        );
        // Implicit bytes are written last byte first: "0003" is storage 03 00.
        let i = parse_result(
            &reply(r#"{"kind":"location","places":[{"simple":{"storage":"implicit","bytes":"0003","bit_offset":0}}]}"#),
            7,
        );
        let want = Source::Implicit { bytes: vec![3, 0], bit_offset: 0 };
        assert_eq!(i.unwrap(), (Outcome::Location(NormalLocation { places: vec![SingleLocation::Simple(want)] })));
        let e = parse_result(&reply(r#"{"kind":"eval-error","rule":"op.deref.memory-unreadable","at":3}"#), 7);
        assert_eq!(
            e.unwrap(),
            (Outcome::Failed(Failure::EvalError { rule: RuleId::new("op.deref.memory-unreadable"), at: Some(3) }))
        );
        let u = parse_result(&reply(r#"{"kind":"unsupported","what":"DW_OP_foo"}"#), 7);
        assert_eq!(u.unwrap(), (Outcome::Failed(Failure::Unsupported { what: "DW_OP_foo".into() })));
    }

    #[test]
    fn composites_are_normalised() {
        // reg0 bits 0..32 then reg0 bits 32..64 continue the same storage:
        // the normal form merges them into one 64-bit part.
        let r = parse_result(
            &reply(
                r#"{"kind":"location","places":[{"composite":[
            {"bits":32,"sources":[{"storage":"register","regno":0,"bit_offset":0}]},
            {"bits":32,"sources":[{"storage":"register","regno":0,"bit_offset":32}]}]}]}"#,
            ),
            7,
        );
        let part = Piece { bits: 64, sources: [Source::Register { regno: 0, bit_offset: 0 }].into() };
        assert_eq!(
            r.unwrap(),
            (Outcome::Location(NormalLocation { places: vec![SingleLocation::Composite(vec![part])] }))
        );
    }

    #[test]
    fn bad_replies_are_errors() {
        assert!(parse_result("not json", 7).is_err());
        assert!(parse_result(&reply(r#"{"kind":"unsupported","what":""}"#), 8)
            .unwrap_err()
            .to_string()
            .contains("request 7"));
        let wrong_version = r#"{"protocol":"dwarfcheck/0","type":"result","id":7,"outcome":{"kind":"unsupported"}}"#;
        assert!(parse_result(wrong_version, 7).unwrap_err().to_string().contains("dwarfcheck/0"));
        // A generic 64-bit value needs 8 bytes, not 2.
        let short = reply(
            r#"{"kind":"value","ty":{"encoding":"generic","bits":64,"big_endian":false,"vector_size":1},"bytes":"0010"}"#,
        );
        assert!(parse_result(&short, 7).is_err());
        assert!(parse_result(&reply(r#"{"kind":"guess"}"#), 7).is_err());
        assert!(parse_hello(
            r#"{"protocol":"dwarfcheck/3","type":"hello","name":"x","supports":{"editions":[],"expr":true}}"#
        )
        .is_err());
        let ok = parse_hello(
            r#"{"protocol":"dwarfcheck/1","type":"hello","name":"x","supports":{"editions":["dwarf5"],"expr":true}}"#,
        );
        assert_eq!(ok.unwrap().supports.editions, vec![Edition::Dwarf5]);
    }
}
