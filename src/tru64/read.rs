//! The fault every Tru64 check reports (a rule ID and a byte offset) and
//! the bounded reader of one PPODE's data: LEB128/SLEB128 fields, bytes and
//! null-terminated names, each failing with the offset where it starts.

use dwarfcheck_core::rules::{id, RuleId};

/// A broken rule of `specs/rules/tru64-*.yaml`, at a byte offset of the
/// procedure's optimization data (the start of the field that breaks it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fault {
    /// The rule broken.
    pub rule: RuleId,
    /// Byte offset in the procedure's optimization data.
    pub at: usize,
    /// What was found, in words.
    pub detail: String,
}

impl Fault {
    /// A fault of `rule` at byte `at`.
    pub fn new(rule: RuleId, at: usize, detail: impl Into<String>) -> Fault {
        Fault { rule, at, detail: detail.into() }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {:#x}: {}", self.rule, self.at, self.detail)
    }
}

/// A cursor over one PPODE's data (`bytes`), whose first byte is at offset
/// `base` of the whole stream; offsets it reports are the stream's.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`, which start at stream offset `base`.
    pub fn new(bytes: &'a [u8], base: usize) -> Self {
        Reader { bytes, pos: 0, base }
    }

    /// The stream offset of the next byte.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Whether every byte has been read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// One byte. Errors: none left ([`id::TRU64_LEB_TRUNCATED`]: the data
    /// ends inside a field).
    pub fn byte(&mut self, what: &str) -> Result<u8, Fault> {
        let b = *self.bytes.get(self.pos).ok_or_else(|| {
            Fault::new(id::TRU64_LEB_TRUNCATED, self.offset(), format!("{what}: the PPODE's data ends here"))
        })?;
        self.pos += 1;
        Ok(b)
    }

    /// An unsigned LEB128 of at most 64 bits. Errors: the data ends before
    /// a byte without the continuation bit ([`id::TRU64_LEB_TRUNCATED`]), or
    /// the value needs more than 64 bits or ten bytes
    /// ([`id::TRU64_LEB_TOO_WIDE`]); both at the field's first byte.
    pub fn uleb(&mut self, what: &str) -> Result<u64, Fault> {
        let start = self.offset();
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let b = self.leb_byte(start, what)?;
            let low = u64::from(b & 0x7f);
            match shift {
                0..=62 => value |= low << shift,
                63 if low <= 1 && b & 0x80 == 0 => value |= low << 63,
                _ => return Err(Fault::new(id::TRU64_LEB_TOO_WIDE, start, format!("{what}: LEB128 over 64 bits"))),
            }
            shift += 7;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
    }

    /// A signed LEB128 of at most 64 bits; errors as [`Reader::uleb`].
    pub fn sleb(&mut self, what: &str) -> Result<i64, Fault> {
        let start = self.offset();
        let (mut value, mut shift) = (0i64, 0u32);
        loop {
            let b = self.leb_byte(start, what)?;
            let low = b & 0x7f;
            match shift {
                0..=62 => value |= i64::from(low) << shift,
                // The tenth byte holds bit 63 and the sign: all zero or all one.
                63 if (low == 0 || low == 0x7f) && b & 0x80 == 0 => value |= i64::from(low & 1) << 63,
                _ => return Err(Fault::new(id::TRU64_LEB_TOO_WIDE, start, format!("{what}: SLEB128 over 64 bits"))),
            }
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    value |= -1i64 << shift;
                }
                return Ok(value);
            }
        }
    }

    fn leb_byte(&mut self, start: usize, what: &str) -> Result<u8, Fault> {
        let b = *self.bytes.get(self.pos).ok_or_else(|| {
            Fault::new(id::TRU64_LEB_TRUNCATED, start, format!("{what}: LEB128 runs past the PPODE's data"))
        })?;
        self.pos += 1;
        Ok(b)
    }

    /// A null-terminated name (the terminator read, not returned). Errors:
    /// no zero byte before the data ends ([`id::TRU64_SPLIT_NAME`]), or the
    /// name is not UTF-8 (same rule); at the name's first byte.
    pub fn name(&mut self) -> Result<String, Fault> {
        let start = self.offset();
        let rest = &self.bytes[self.pos..];
        let Some(n) = rest.iter().position(|&b| b == 0) else {
            return Err(Fault::new(id::TRU64_SPLIT_NAME, start, "external target name has no terminating zero byte"));
        };
        let s = std::str::from_utf8(&rest[..n])
            .map_err(|_| Fault::new(id::TRU64_SPLIT_NAME, start, "external target name is not UTF-8"))?;
        self.pos += n + 1;
        Ok(s.to_string())
    }
}
