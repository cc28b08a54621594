//! Byte strings as hexadecimal text, the notation of case files, reports
//! and the process protocol: two digits per byte, lowercase when written.
//! "Memory order" lists the byte at the lowest address first; values are
//! written "last byte first" so that a little-endian `0x1234` reads as
//! `1234`.

use std::fmt::Write as _;

/// Why text is not a byte string in hex.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HexError {
    /// An odd number of hex digits: the last byte is incomplete.
    #[error("`{0}` has an odd number of hex digits; expected whole bytes like \"de ad\"")]
    OddLength(String),
    /// A character that is not a hex digit (outside whitespace and `0x`
    /// prefixes).
    #[error("`{0}` is not hex bytes like \"de ad\"")]
    NotHex(String),
}

/// `bytes` as lowercase hex in the order given (memory order), no
/// separators: `[0xde, 0xad]` gives `dead`.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `bytes` as lowercase hex, last byte first: the notation of values
/// (`[0x34, 0x12]` gives `1234`).
pub fn to_hex_last_first(bytes: &[u8]) -> String {
    bytes.iter().rev().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `bytes` as lowercase hex in memory order, one space between bytes:
/// `[0x77, 0x08]` gives `77 08` (the notation of expression bytes in case
/// files and row tables).
pub fn to_hex_spaced(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}

/// Bytes in memory order from hex text: `"de ad be ef"`, `"deadbeef"`,
/// `"0xdead"` or `"0xde 0xad"` (whitespace between bytes and a `0x` prefix
/// on each word are allowed).
///
/// Errors: [`HexError::OddLength`], [`HexError::NotHex`] (each carrying the
/// text).
pub fn parse_hex(s: &str) -> Result<Vec<u8>, HexError> {
    let digits: String = s.split_whitespace().map(|w| w.strip_prefix("0x").unwrap_or(w)).collect();
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(HexError::NotHex(s.to_string()));
    }
    if !digits.len().is_multiple_of(2) {
        return Err(HexError::OddLength(s.to_string()));
    }
    Ok((0..digits.len()).step_by(2).map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap_or(0)).collect())
}

/// Bytes from hex written last byte first ([`to_hex_last_first`]),
/// returned in memory order. Same text forms and errors as [`parse_hex`].
pub fn parse_hex_last_first(s: &str) -> Result<Vec<u8>, HexError> {
    let mut b = parse_hex(s)?;
    b.reverse();
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_both_orders() {
        assert_eq!(to_hex(&[0xde, 0xad, 0x01]), "dead01");
        assert_eq!(to_hex_last_first(&[0x34, 0x12]), "1234");
        assert_eq!(to_hex_spaced(&[0x77, 0x08]), "77 08");
        assert_eq!(parse_hex("de ad 01").unwrap(), vec![0xde, 0xad, 0x01]);
        assert_eq!(parse_hex("0xdead").unwrap(), vec![0xde, 0xad]);
        assert_eq!(parse_hex("0xde 0xad").unwrap(), vec![0xde, 0xad]);
        assert_eq!(parse_hex("").unwrap(), Vec::<u8>::new());
        assert_eq!(parse_hex_last_first("1234").unwrap(), vec![0x34, 0x12]);
    }

    #[test]
    fn rejects_half_bytes_and_other_characters() {
        assert_eq!(parse_hex("abc"), Err(HexError::OddLength("abc".into())));
        assert_eq!(parse_hex("zz"), Err(HexError::NotHex("zz".into())));
        assert_eq!(parse_hex("+1"), Err(HexError::NotHex("+1".into())));
    }
}
