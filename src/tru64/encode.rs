//! Records to bytes: the encoder of a procedure's PPODE stream from its
//! structured description (the `ppod:` of a case), written apart from the
//! decoder (it shares only the tag and code constants), so that each
//! checks the other in the round trips of `tests/tru64_roundtrip.rs`.

use super::codes;
use super::model::{Optrndx, RawRange, Record, Scheme, SplitDesc};
use dwarfcheck_core::encoding::leb128::{write_sleb as put_sleb, write_uleb as put_uleb};

/// A description the byte format cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot encode: {0}")]
pub struct EncodeError(pub String);

/// The bytes of a stream holding `records` in order: each a 16-byte
/// little-endian header (`ppode_tag`, `ppode_len`, `ppode_val`) and its
/// data. Nothing is added: a description without STAMP or END gives a
/// stream without them.
///
/// Errors: an event count or code over 15, an external name holding a zero
/// byte, a split description whose scheme and body disagree, data over
/// 2^32 - 1 bytes.
pub fn encode(records: &[Record]) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    for rec in records {
        let (tag, val, data) = match rec {
            Record::Stamp { version, data } => (codes::TAG_STAMP, *version, data.clone()),
            Record::End { val, data } => (codes::TAG_END, *val, data.clone()),
            Record::Opaque { tag, val, data } => (*tag, *val, data.clone()),
            Record::SemEvent { val, events } => {
                let mut d = Vec::with_capacity(events.len());
                for e in events {
                    if e.count > 15 || e.event > 15 {
                        return Err(EncodeError(format!("event ({}, {}) does not fit two nibbles", e.count, e.event)));
                    }
                    d.push(e.event << 4 | e.count);
                }
                (codes::TAG_SEM_EVENT, *val, d)
            }
            Record::Split { val, descs } => {
                let mut d = Vec::new();
                for s in descs {
                    split(&mut d, s)?;
                }
                (codes::TAG_SPLIT, *val, d)
            }
            Record::DiscontigScope { val, scopes } => {
                let mut d = Vec::new();
                for s in scopes {
                    optrndx(&mut d, s.scope);
                    put_uleb(&mut d, s.ranges.len() as u64);
                    s.ranges.iter().for_each(|r| range(&mut d, *r));
                }
                (codes::TAG_DISCONTIG_SCOPE, *val, d)
            }
        };
        let len = u32::try_from(data.len()).map_err(|_| EncodeError(format!("{} data bytes", data.len())))?;
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&val.to_le_bytes());
        out.extend_from_slice(&data);
    }
    Ok(out)
}

fn optrndx(out: &mut Vec<u8>, o: Optrndx) {
    put_uleb(out, o.rfd);
    put_uleb(out, o.index);
}

fn range(out: &mut Vec<u8>, r: RawRange) {
    put_sleb(out, r.start);
    put_uleb(out, r.len);
}

fn split(out: &mut Vec<u8>, s: &SplitDesc) -> Result<(), EncodeError> {
    let ty = match &s.target {
        super::model::Target::External(_) => codes::TYPE_EXT,
        super::model::Target::Local(_) => codes::TYPE_LCL,
    };
    out.push(s.scheme.code() << 4 | ty);
    match &s.target {
        super::model::Target::External(name) => {
            if name.bytes().any(|b| b == 0) {
                return Err(EncodeError(format!("external name {name:?} holds a zero byte")));
            }
            out.extend_from_slice(name.as_bytes());
            out.push(0);
        }
        super::model::Target::Local(o) => optrndx(out, *o),
    }
    match (s.scheme, s.duplicate_of) {
        (Scheme::Duplicate, Some(o)) if s.children.is_empty() => {
            optrndx(out, o);
            Ok(())
        }
        (Scheme::Normal | Scheme::Promoted, None) => {
            put_uleb(out, s.children.len() as u64);
            for c in &s.children {
                put_uleb(out, c.location.st);
                put_uleb(out, c.location.sc);
                put_sleb(out, c.location.value);
                range(out, c.range);
                put_uleb(out, c.defs.len() as u64);
                c.defs.iter().for_each(|d| put_sleb(out, *d));
            }
            Ok(())
        }
        _ => Err(EncodeError(format!(
            "split description of {}: scheme {:?} needs {}",
            s.target,
            s.scheme,
            if s.scheme == Scheme::Duplicate { "duplicate_of and no children" } else { "children and no duplicate_of" }
        ))),
    }
}
