//! Numbers as the command line takes them: decimal or `0x` hex.

/// Parses `s` as a decimal number (a negative one as its 64-bit two's
/// complement) or as `0x`-prefixed hex. `None` when it is neither or does
/// not fit in 64 bits.
pub fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse::<i64>().map(|v| v as u64).ok().or_else(|| s.parse().ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_u64;

    #[test]
    fn decimal_hex_and_negative() {
        assert_eq!(parse_u64("42"), Some(42));
        assert_eq!(parse_u64("0x2a"), Some(42));
        assert_eq!(parse_u64("-1"), Some(u64::MAX));
        assert_eq!(parse_u64("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64("0xg"), None);
        assert_eq!(parse_u64("18446744073709551616"), None);
    }
}
