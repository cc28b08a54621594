//! Bytes to records: one procedure's PPODE stream (seed §12, headers per
//! the public `PPODHDR`), each record with its byte offset and the offsets
//! of its items, and the framing and field faults met on the way. Bounded:
//! no count from the input sizes an allocation, and every loop consumes
//! input.

use super::codes;
use super::model::{Child, Location, Optrndx, RawRange, Record, Scheme, ScopeDesc, SemEvent, SplitDesc, Target};
use super::read::{Fault, Reader};
use dwarfcheck_core::rules::id;

/// Byte offsets of one item of a record (an event, a split description, a
/// scope description), for the faults the validator reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Mark {
    /// The item's first byte.
    pub at: usize,
    /// Each child's (split) or range's (scope) range field.
    pub ranges: Vec<usize>,
    /// Each child's definition points.
    pub defs: Vec<Vec<usize>>,
    /// The duplicate scheme's OPTRNDX.
    pub duplicate_of: Option<usize>,
}

/// One decoded PPODE.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// Offset of its header in the stream.
    pub at: usize,
    /// `ppode_len`: bytes of data after the 16-byte header.
    pub len: u32,
    /// What it holds (as far as it decoded).
    pub record: Record,
    /// One mark per event, split description or scope description.
    pub marks: Vec<Mark>,
}

/// A decoded stream: the records in order and the faults of decoding.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Decoded {
    /// The records, up to `PPODE_END` or the first framing fault.
    pub entries: Vec<Entry>,
    /// Framing and field faults, in the order met.
    pub faults: Vec<Fault>,
}

impl Decoded {
    /// The records alone.
    pub fn records(&self) -> Vec<Record> {
        self.entries.iter().map(|e| e.record.clone()).collect()
    }
}

/// Decodes one procedure's optimization data (`bytes`: all of it, from its
/// `PPODE_STAMP`). Framing faults stop it: a header or data that does not
/// fit (`tru64.stream.end`, `tru64.ppode-len`); a field fault stops only
/// its record's data.
pub fn decode(bytes: &[u8]) -> Decoded {
    let mut out = Decoded::default();
    let mut pos = 0usize;
    let mut seen: Vec<u32> = Vec::new();
    loop {
        let left = bytes.len() - pos;
        if left < codes::HEADER_BYTES {
            if out.entries.is_empty() {
                out.faults.push(Fault::new(id::TRU64_STREAM_STAMP_FIRST, pos, "no PPODE_STAMP: the data is empty"));
            }
            let what =
                if left == 0 { "the data ends".to_string() } else { format!("{left} byte(s) left, a header is 16") };
            out.faults.push(Fault::new(id::TRU64_STREAM_END, pos, format!("no PPODE_END: {what}")));
            break;
        }
        let word =
            |o: usize, n: usize| bytes[pos + o..pos + o + n].iter().rev().fold(0u64, |a, &b| a << 8 | u64::from(b));
        let tag = word(0, 4) as u32;
        let len = word(4, 4) as u32;
        let val = word(8, 8);
        let data_at = pos + codes::HEADER_BYTES;
        if len as usize > bytes.len() - data_at {
            out.faults.push(Fault::new(
                id::TRU64_PPODE_LEN,
                pos + 4,
                format!("ppode_len {len}: {} byte(s) of the procedure's data are left", bytes.len() - data_at),
            ));
            break;
        }
        if out.entries.is_empty() && tag != codes::TAG_STAMP {
            out.faults.push(Fault::new(
                id::TRU64_STREAM_STAMP_FIRST,
                pos,
                format!("the first PPODE is {}, not stamp", Record::tag_name(tag)),
            ));
        }
        let once = [codes::TAG_SEM_EVENT, codes::TAG_SPLIT, codes::TAG_DISCONTIG_SCOPE];
        if once.contains(&tag) && seen.contains(&tag) {
            out.faults.push(Fault::new(
                id::TRU64_RECORD_ONCE,
                pos,
                format!("a second {} PPODE in the procedure", Record::tag_name(tag)),
            ));
        }
        seen.push(tag);
        let data = &bytes[data_at..data_at + len as usize];
        let (record, marks) = body(tag, val, data, data_at, &mut out.faults);
        out.entries.push(Entry { at: pos, len, record, marks });
        pos = data_at + len as usize;
        if tag == codes::TAG_END {
            if pos < bytes.len() {
                out.faults.push(Fault::new(
                    id::TRU64_STREAM_END,
                    pos,
                    format!("{} byte(s) after PPODE_END", bytes.len() - pos),
                ));
            }
            break;
        }
    }
    out
}

/// One record's data (`data`, at stream offset `at`).
fn body(tag: u32, val: u64, data: &[u8], at: usize, faults: &mut Vec<Fault>) -> (Record, Vec<Mark>) {
    let mut r = Reader::new(data, at);
    let mut marks = Vec::new();
    let record = match tag {
        codes::TAG_STAMP => Record::Stamp { version: val, data: data.to_vec() },
        codes::TAG_END => Record::End { val, data: data.to_vec() },
        codes::TAG_SEM_EVENT => {
            let mut events = Vec::with_capacity(data.len().min(1 << 16));
            for (i, &b) in data.iter().enumerate() {
                let (count, event) = (b & 0x0f, b >> 4);
                if codes::name_of(codes::EVENTS, event).is_none() {
                    faults.push(Fault::new(
                        id::TRU64_EVENT_CODE,
                        at + i,
                        format!("event code {event} (Table 12-1: 0..5)"),
                    ));
                }
                events.push(SemEvent { count, event });
                marks.push(Mark { at: at + i, ..Mark::default() });
            }
            Record::SemEvent { val, events }
        }
        codes::TAG_SPLIT => {
            let mut descs = Vec::new();
            while !r.at_end() {
                match split_desc(&mut r) {
                    Ok((d, m)) => {
                        descs.push(d);
                        marks.push(m);
                    }
                    Err(f) => {
                        faults.push(f);
                        break;
                    }
                }
            }
            Record::Split { val, descs }
        }
        codes::TAG_DISCONTIG_SCOPE => {
            let mut scopes = Vec::new();
            while !r.at_end() {
                match scope_desc(&mut r) {
                    Ok((d, m)) => {
                        scopes.push(d);
                        marks.push(m);
                    }
                    Err(f) => {
                        faults.push(f);
                        break;
                    }
                }
            }
            Record::DiscontigScope { val, scopes }
        }
        _ => Record::Opaque { tag, val, data: data.to_vec() },
    };
    (record, marks)
}

fn optrndx(r: &mut Reader<'_>) -> Result<Optrndx, Fault> {
    Ok(Optrndx { rfd: r.uleb("OPTRNDX rfd")?, index: r.uleb("OPTRNDX index")? })
}

fn raw_range(r: &mut Reader<'_>) -> Result<RawRange, Fault> {
    Ok(RawRange { start: r.sleb("range start")?, len: r.uleb("range length")? })
}

/// One split lifetime description (seed §12.3.2.1-3).
fn split_desc(r: &mut Reader<'_>) -> Result<(SplitDesc, Mark), Fault> {
    let mut mark = Mark { at: r.offset(), ..Mark::default() };
    let b = r.byte("target identifier")?;
    let (ty, scheme) = (b & 0x0f, b >> 4);
    let scheme = match scheme {
        codes::SCHEME_DEF => Scheme::Normal,
        codes::SCHEME_PROMOTED => Scheme::Promoted,
        codes::SCHEME_DUP => Scheme::Duplicate,
        s => return Err(Fault::new(id::TRU64_SPLIT_SCHEME, mark.at, format!("scheme code {s} (Table 12-3: 1..3)"))),
    };
    let target = match ty {
        codes::TYPE_EXT => Target::External(r.name()?),
        codes::TYPE_LCL => Target::Local(optrndx(r)?),
        t => return Err(Fault::new(id::TRU64_SPLIT_TYPE, mark.at, format!("target type code {t} (Table 12-2: 1, 2)"))),
    };
    let mut desc = SplitDesc { target, scheme, children: Vec::new(), duplicate_of: None };
    if scheme == Scheme::Duplicate {
        mark.duplicate_of = Some(r.offset());
        desc.duplicate_of = Some(optrndx(r)?);
        return Ok((desc, mark));
    }
    let count = r.uleb("child count")?;
    for _ in 0..count {
        let location = Location {
            st: r.uleb("child symbol type")?,
            sc: r.uleb("child storage class")?,
            value: r.sleb("child value")?,
        };
        mark.ranges.push(r.offset());
        let range = raw_range(r)?;
        let n = r.uleb("definition point count")?;
        let (mut defs, mut at) = (Vec::new(), Vec::new());
        for _ in 0..n {
            at.push(r.offset());
            defs.push(r.sleb("definition point")?);
        }
        mark.defs.push(at);
        desc.children.push(Child { location, range, defs });
    }
    Ok((desc, mark))
}

/// One discontiguous scope description (seed §12.3.3).
fn scope_desc(r: &mut Reader<'_>) -> Result<(ScopeDesc, Mark), Fault> {
    let mut mark = Mark { at: r.offset(), ..Mark::default() };
    let scope = optrndx(r)?;
    let count = r.uleb("range count")?;
    let mut ranges = Vec::new();
    for _ in 0..count {
        mark.ranges.push(r.offset());
        ranges.push(raw_range(r)?);
    }
    Ok((ScopeDesc { scope, ranges }, mark))
}
