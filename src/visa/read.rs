//! A bounded little-endian byte reader over a blob, and the fault it (and
//! every vISA check) reports: a rule ID and a byte offset.

use dwarfcheck_core::rules::id;

pub use crate::case::blob::Fault;

/// A cursor over a byte slice; every read is bounds-checked and fails with
/// [`id::VISA_TRUNCATED`] at the offset of the field that does not fit.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at offset 0.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    /// The current offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left after the current offset.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The next `n` bytes; `what` names the field in the fault.
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], Fault> {
        if n > self.remaining() {
            return Err(Fault::new(
                id::VISA_TRUNCATED,
                self.pos,
                format!("{what}: {n} byte(s) needed, {} left", self.remaining()),
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// An unsigned byte.
    pub fn u8(&mut self, what: &str) -> Result<u8, Fault> {
        Ok(self.bytes(1, what)?[0])
    }

    /// A little-endian 16-bit word.
    pub fn u16(&mut self, what: &str) -> Result<u16, Fault> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// A little-endian 32-bit word.
    pub fn u32(&mut self, what: &str) -> Result<u32, Fault> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An unsigned field of `width` bytes (1, 2 or 4).
    pub fn uint(&mut self, width: usize, what: &str) -> Result<u32, Fault> {
        match width {
            1 => self.u8(what).map(u32::from),
            2 => self.u16(what).map(u32::from),
            _ => self.u32(what),
        }
    }

    /// Checks that `count` elements of at least `min_bytes` each can fit in
    /// the bytes left; `at` is the offset of the count field.
    pub fn fits(&self, count: u64, min_bytes: usize, at: usize, what: &str) -> Result<(), Fault> {
        if count.saturating_mul(min_bytes as u64) > self.remaining() as u64 {
            return Err(Fault::new(
                id::VISA_TRUNCATED,
                at,
                format!("{count} {what} of at least {min_bytes} byte(s) each, {} byte(s) left", self.remaining()),
            ));
        }
        Ok(())
    }
}
