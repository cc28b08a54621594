//! Reading a consumer's replies: the `hello` answer and `result` messages,
//! whose `outcome` is the serde form of [`Outcome`] (docs/protocol.md).
//!
//! The outcome is read through plain mirror structs rather than
//! `Outcome`'s own `Deserialize`: serde buffers internally tagged enums in
//! a form without 128-bit integers, so a memory location's `bit_addr`
//! would not parse. Locations are normalised on the way in, so a consumer
//! may send composites unmerged and places in any order.

use super::wire::VERSION;
use super::{OutcomeFormError, ProtocolError};
use crate::edition::Edition;
use dwarfcheck_core::encoding::hex::parse_hex_last_first;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{
    BaseType, BudgetKind, NormalLocation, Outcome, RawLocation, RawPiece, RawSingle, Source, Value,
};
use dwarfcheck_core::rules::RuleId;
use serde::{Deserialize, Serialize};

/// What a consumer says it implements (the `supports` object of its
/// `hello` reply). Unknown keys are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireSupport {
    /// Editions of input it implements: `dwarf5`, `dwarf5-gnu`,
    /// `hetero-2020`.
    pub editions: Vec<Edition>,
    /// Whether it evaluates expressions (`evaluate` requests).
    pub expr: bool,
    /// Whether it builds CFI row tables. Version 1 sends no CFI requests,
    /// so this is accepted and ignored.
    #[serde(default)]
    pub cfi: bool,
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

/// Parses and checks a `hello` reply line.
///
/// Errors: not JSON, a missing key, another protocol version, another
/// message type, an empty name (a message for the caller's error).
pub fn parse_hello(line: &str) -> Result<HelloReply, ProtocolError> {
    let r: HelloReply = serde_json::from_str(line)
        .map_err(|e| ProtocolError::BadHello { detail: e.to_string(), excerpt: excerpt(line) })?;
    if r.protocol != VERSION {
        return Err(ProtocolError::HelloVersion { found: r.protocol });
    }
    if r.kind != "hello" {
        return Err(ProtocolError::HelloType { found: r.kind });
    }
    if r.name.trim().is_empty() {
        return Err(ProtocolError::EmptyName);
    }
    Ok(r)
}

/// The reply to an `evaluate` request.
#[derive(Debug, Deserialize)]
struct ResultReply {
    protocol: String,
    #[serde(rename = "type")]
    kind: String,
    id: u64,
    outcome: WireOutcome,
}

/// Parses a reply line to the request with `id`.
///
/// Errors: not JSON or not a result message, another protocol version,
/// another id, an outcome that is not one of the documented forms (a
/// message for `ConsumerFault`).
pub fn parse_result(line: &str, id: u64) -> Result<Outcome, ProtocolError> {
    let r: ResultReply = serde_json::from_str(line)
        .map_err(|e| ProtocolError::BadReply { detail: e.to_string(), excerpt: excerpt(line) })?;
    if r.protocol != VERSION {
        return Err(ProtocolError::ReplyVersion { found: r.protocol });
    }
    if r.kind != "result" {
        return Err(ProtocolError::ReplyType { found: r.kind });
    }
    if r.id != id {
        return Err(ProtocolError::WrongId { got: r.id, asked: id });
    }
    Ok(r.outcome.into_outcome()?)
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
            r#"{"protocol":"dwarfcheck/2","type":"hello","name":"x","supports":{"editions":[],"expr":true}}"#
        )
        .is_err());
        let ok = parse_hello(
            r#"{"protocol":"dwarfcheck/1","type":"hello","name":"x","supports":{"editions":["dwarf5"],"expr":true}}"#,
        );
        assert_eq!(ok.unwrap().supports.editions, vec![Edition::Dwarf5]);
    }
}
