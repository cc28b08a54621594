//! LEB128 variable-length integers (DWARF 5 §7.6).
//!
//! Both readers are total: they never panic, and they report a truncated
//! encoding or one whose value does not fit in 64 bits as an error.

/// Why a LEB128 number could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LebError {
    /// The input ended before a byte with the high bit clear.
    #[error("truncated LEB128 number")]
    Truncated,
    /// The value has significant bits beyond bit 63.
    #[error("LEB128 number does not fit in 64 bits")]
    Overflow,
}

/// Reads an unsigned LEB128 number from the start of `bytes`.
///
/// Returns the value and the number of bytes consumed. Redundant padding
/// bytes (`0x80 0x80 0x00`) are accepted, as DWARF 5 §7.6 allows them; set
/// bits beyond bit 63 are [`LebError::Overflow`].
pub fn read_uleb(bytes: &[u8]) -> Result<(u64, usize), LebError> {
    let mut value: u64 = 0;
    let mut shift: u32 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let low = u64::from(b & 0x7f);
        if shift < 64 {
            let shifted = low << shift;
            if shift > 57 && (shifted >> shift) != low {
                return Err(LebError::Overflow);
            }
            value |= shifted;
        } else if low != 0 {
            return Err(LebError::Overflow);
        }
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
        shift = shift.saturating_add(7);
    }
    Err(LebError::Truncated)
}

/// Reads a signed LEB128 number from the start of `bytes`.
///
/// Returns the value and the number of bytes consumed. Bytes beyond the
/// tenth must be pure sign extension, otherwise [`LebError::Overflow`].
pub fn read_sleb(bytes: &[u8]) -> Result<(i64, usize), LebError> {
    let mut value: i64 = 0;
    let mut shift: u32 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let low = i64::from(b & 0x7f);
        if shift < 63 {
            value |= low << shift;
        } else if shift == 63 {
            // Only bit 0 of this group lands in the value (bit 63); the rest
            // must agree with it as sign extension.
            if low != 0 && low != 0x7f {
                return Err(LebError::Overflow);
            }
            value |= low << 63;
        } else {
            let sign_fill = if value < 0 { 0x7f } else { 0 };
            if low != sign_fill {
                return Err(LebError::Overflow);
            }
        }
        shift = shift.saturating_add(7);
        if b & 0x80 == 0 {
            if shift < 64 && (b & 0x40) != 0 {
                value |= -1i64 << shift;
            }
            return Ok((value, i + 1));
        }
    }
    Err(LebError::Truncated)
}

/// Appends the shortest unsigned LEB128 encoding of `value` to `out`.
pub fn write_uleb(out: &mut Vec<u8>, mut value: u64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Appends the shortest signed LEB128 encoding of `value` to `out`.
pub fn write_sleb(out: &mut Vec<u8>, mut value: i64) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        let done = (value == 0 && byte & 0x40 == 0) || (value == -1 && byte & 0x40 != 0);
        if done {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Worked examples from DWARF 5 Tables 7.3 and 7.4, derived by hand.
    #[test]
    fn spec_examples_unsigned() {
        for (v, enc) in [
            (2u64, &[2u8][..]),
            (127, &[127]),
            (128, &[0x80, 1]),
            (129, &[0x81, 1]),
            (130, &[0x82, 1]),
            (12857, &[0xb9, 100]),
        ] {
            assert_eq!(read_uleb(enc), Ok((v, enc.len())));
            let mut out = Vec::new();
            write_uleb(&mut out, v);
            assert_eq!(out, enc);
        }
    }

    #[test]
    fn spec_examples_signed() {
        for (v, enc) in [
            (2i64, &[2u8][..]),
            (-2, &[0x7e]),
            (127, &[0xff, 0]),
            (-127, &[0x81, 0x7f]),
            (128, &[0x80, 1]),
            (-128, &[0x80, 0x7f]),
            (129, &[0x81, 1]),
            (-129, &[0xff, 0x7e]),
        ] {
            assert_eq!(read_sleb(enc), Ok((v, enc.len())));
            let mut out = Vec::new();
            write_sleb(&mut out, v);
            assert_eq!(out, enc);
        }
    }

    #[test]
    fn truncated_and_overflow() {
        assert_eq!(read_uleb(&[]), Err(LebError::Truncated));
        assert_eq!(read_uleb(&[0x80, 0x80]), Err(LebError::Truncated));
        assert_eq!(read_sleb(&[0xff]), Err(LebError::Truncated));
        // 2^64 needs 65 bits.
        let mut big = vec![0x80u8; 9];
        big.push(0x02);
        assert_eq!(read_uleb(&big), Err(LebError::Overflow));
        // u64::MAX is exactly representable.
        let mut max = vec![0xffu8; 9];
        max.push(0x01);
        assert_eq!(read_uleb(&max), Ok((u64::MAX, 10)));
        // Padding is allowed.
        assert_eq!(read_uleb(&[0x85, 0x80, 0x00]), Ok((5, 3)));
        assert_eq!(read_sleb(&[0xff, 0xff, 0x7f]), Ok((-1, 3)));
    }

    proptest! {
        #[test]
        fn uleb_round_trip(v: u64) {
            let mut out = Vec::new();
            write_uleb(&mut out, v);
            prop_assert_eq!(read_uleb(&out), Ok((v, out.len())));
        }
        #[test]
        fn sleb_round_trip(v: i64) {
            let mut out = Vec::new();
            write_sleb(&mut out, v);
            prop_assert_eq!(read_sleb(&out), Ok((v, out.len())));
        }
        #[test]
        fn never_panics(bytes: Vec<u8>) {
            let _ = read_uleb(&bytes);
            let _ = read_sleb(&bytes);
        }
    }
}
