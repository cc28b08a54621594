//! The fault every Tru64 check reports (a rule ID and a byte offset) and
//! the bounded reader of one PPODE's data: LEB128/SLEB128 fields, bytes and
//! null-terminated names, each failing with the offset where it starts.

use dwarfcheck_core::encoding::leb128::{self, LebError};
use dwarfcheck_core::rules::id;

pub use crate::case::blob::Fault;

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

    /// An unsigned LEB128 of at most 64 bits (core's reader). Errors: the
    /// data ends before a byte without the continuation bit
    /// ([`id::TRU64_LEB_TRUNCATED`]), or the value needs more than 64 bits
    /// ([`id::TRU64_LEB_TOO_WIDE`]); both at the field's first byte.
    pub fn uleb(&mut self, what: &str) -> Result<u64, Fault> {
        let r = leb128::read_uleb(&self.bytes[self.pos..]);
        self.leb(r, what)
    }

    /// A signed LEB128 of at most 64 bits; errors as [`Reader::uleb`].
    pub fn sleb(&mut self, what: &str) -> Result<i64, Fault> {
        let r = leb128::read_sleb(&self.bytes[self.pos..]);
        self.leb(r, what)
    }

    fn leb<T>(&mut self, r: Result<(T, usize), LebError>, what: &str) -> Result<T, Fault> {
        match r {
            Ok((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            Err(LebError::Truncated) => Err(Fault::new(
                id::TRU64_LEB_TRUNCATED,
                self.offset(),
                format!("{what}: LEB128 runs past the PPODE's data"),
            )),
            Err(LebError::Overflow) => {
                Err(Fault::new(id::TRU64_LEB_TOO_WIDE, self.offset(), format!("{what}: LEB128 over 64 bits")))
            }
        }
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
