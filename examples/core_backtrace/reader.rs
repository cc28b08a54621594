//! A bounds-checked little-endian byte cursor for the DWARF sections: fixed
//! sizes, LEB128 (DWARF 5 §7.6), NUL-terminated strings and 32/64-bit
//! section offsets (§7.4). Every read past the end is an error, never a
//! panic.

use dwarfcheck_fast::encoding::leb128::{read_sleb, read_uleb};

/// Reading past the end of a section (or a value that does not fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated;

/// A position in one section's bytes.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    /// The whole section.
    pub data: &'a [u8],
    /// Byte offset of the next read.
    pub pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `data` at byte offset `pos`.
    pub fn at(data: &'a [u8], pos: usize) -> Self {
        Reader { data, pos }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: u64) -> Result<&'a [u8], Truncated> {
        let n = usize::try_from(n).map_err(|_| Truncated)?;
        let end = self.pos.checked_add(n).ok_or(Truncated)?;
        let b = self.data.get(self.pos..end).ok_or(Truncated)?;
        self.pos = end;
        Ok(b)
    }

    /// An unsigned little-endian integer of `n` (at most 8) bytes.
    pub fn uint(&mut self, n: u8) -> Result<u64, Truncated> {
        if n > 8 {
            return Err(Truncated);
        }
        let b = self.bytes(u64::from(n))?;
        Ok(b.iter().rev().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, Truncated> {
        Ok(self.bytes(1)?[0])
    }

    /// A 2-byte unsigned integer.
    pub fn u16(&mut self) -> Result<u16, Truncated> {
        Ok(self.uint(2)? as u16)
    }

    /// A 4-byte unsigned integer.
    pub fn u32(&mut self) -> Result<u32, Truncated> {
        Ok(self.uint(4)? as u32)
    }

    /// An unsigned LEB128 number (the fast crate's reader; a number that
    /// does not fit 64 bits is an error).
    pub fn uleb(&mut self) -> Result<u64, Truncated> {
        let (v, n) = read_uleb(self.data.get(self.pos..).ok_or(Truncated)?).map_err(|_| Truncated)?;
        self.pos += n;
        Ok(v)
    }

    /// A signed LEB128 number (the fast crate's reader).
    pub fn sleb(&mut self) -> Result<i64, Truncated> {
        let (v, n) = read_sleb(self.data.get(self.pos..).ok_or(Truncated)?).map_err(|_| Truncated)?;
        self.pos += n;
        Ok(v)
    }

    /// A NUL-terminated string (without the NUL), decoded lossily.
    pub fn cstr(&mut self) -> Result<String, Truncated> {
        let rest = self.data.get(self.pos..).ok_or(Truncated)?;
        let n = rest.iter().position(|&b| b == 0).ok_or(Truncated)?;
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }

    /// A section offset of the unit's format: 4 bytes in 32-bit DWARF, 8 in
    /// 64-bit DWARF (DWARF 5 §7.4).
    pub fn offset(&mut self, dwarf64: bool) -> Result<u64, Truncated> {
        self.uint(if dwarf64 { 8 } else { 4 })
    }

    /// An initial length (DWARF 5 §7.2.2): the length in bytes of what
    /// follows, and whether the unit is 64-bit DWARF.
    pub fn initial_length(&mut self) -> Result<(u64, bool), Truncated> {
        match self.u32()? {
            0xffff_ffff => Ok((self.uint(8)?, true)),
            n if n >= 0xffff_fff0 => Err(Truncated),
            n => Ok((u64::from(n), false)),
        }
    }
}

/// The NUL-terminated string at byte offset `at` of `section`.
pub fn str_at(section: &[u8], at: u64) -> Option<String> {
    Reader::at(section, usize::try_from(at).ok()?).cstr().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leb128_by_hand() {
        // DWARF 5 §7.6 examples: 624485 = e5 8e 26; -123456 = c0 bb 78.
        assert_eq!(Reader::at(&[0xe5, 0x8e, 0x26], 0).uleb(), Ok(624_485));
        assert_eq!(Reader::at(&[0xc0, 0xbb, 0x78], 0).sleb(), Ok(-123_456));
        assert_eq!(Reader::at(&[0x7f], 0).sleb(), Ok(-1));
        assert_eq!(Reader::at(&[0x80], 0).uleb(), Err(Truncated));
        // 2^64 does not fit.
        let big = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02];
        assert_eq!(Reader::at(&big, 0).uleb(), Err(Truncated));
    }

    #[test]
    fn sizes_and_strings() {
        let mut r = Reader::at(b"\x01\x02\x03\x04ab\0", 0);
        assert_eq!(r.u16(), Ok(0x0201));
        assert_eq!(r.u16(), Ok(0x0403));
        assert_eq!(r.cstr().as_deref(), Ok("ab"));
        assert!(r.is_empty());
        assert_eq!(r.u8(), Err(Truncated));
        assert_eq!(Reader::at(&[0xff; 4], 0).initial_length(), Err(Truncated));
    }
}
