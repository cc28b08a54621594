//! Base type encodings `DW_ATE_*` (DWARF 5 §7.8, Table 7.11).

/// `DW_ATE_address`.
pub const ADDRESS: u8 = 0x01;
/// `DW_ATE_boolean`.
pub const BOOLEAN: u8 = 0x02;
/// `DW_ATE_complex_float`.
pub const COMPLEX_FLOAT: u8 = 0x03;
/// `DW_ATE_float`.
pub const FLOAT: u8 = 0x04;
/// `DW_ATE_signed`.
pub const SIGNED: u8 = 0x05;
/// `DW_ATE_signed_char`.
pub const SIGNED_CHAR: u8 = 0x06;
/// `DW_ATE_unsigned`.
pub const UNSIGNED: u8 = 0x07;
/// `DW_ATE_unsigned_char`.
pub const UNSIGNED_CHAR: u8 = 0x08;
/// `DW_ATE_imaginary_float`.
pub const IMAGINARY_FLOAT: u8 = 0x09;
/// `DW_ATE_packed_decimal`.
pub const PACKED_DECIMAL: u8 = 0x0a;
/// `DW_ATE_numeric_string`.
pub const NUMERIC_STRING: u8 = 0x0b;
/// `DW_ATE_edited`.
pub const EDITED: u8 = 0x0c;
/// `DW_ATE_signed_fixed`.
pub const SIGNED_FIXED: u8 = 0x0d;
/// `DW_ATE_unsigned_fixed`.
pub const UNSIGNED_FIXED: u8 = 0x0e;
/// `DW_ATE_decimal_float`.
pub const DECIMAL_FLOAT: u8 = 0x0f;
/// `DW_ATE_UTF`.
pub const UTF: u8 = 0x10;
/// `DW_ATE_UCS`.
pub const UCS: u8 = 0x11;
/// `DW_ATE_ASCII`.
pub const ASCII: u8 = 0x12;
/// `DW_ATE_lo_user`.
pub const LO_USER: u8 = 0x80;
/// `DW_ATE_hi_user`.
pub const HI_USER: u8 = 0xff;

/// True for the integral encodings of hetero-2020 "DWARF Expression Value":
/// signed, signed_char, unsigned, unsigned_char, boolean, and the whole
/// user range. `DW_ATE_address` is not integral (the seed leaves it open;
/// see docs/ambiguities.md).
pub fn is_integral(encoding: u8) -> bool {
    matches!(encoding, SIGNED | SIGNED_CHAR | UNSIGNED | UNSIGNED_CHAR | BOOLEAN) || encoding >= LO_USER
}

/// True for encodings whose values are two's-complement signed.
pub fn is_signed(encoding: u8) -> bool {
    matches!(encoding, SIGNED | SIGNED_CHAR | SIGNED_FIXED)
}

/// The `DW_ATE_*` name of an encoding, or `None` when it has none.
pub fn name(encoding: u8) -> Option<&'static str> {
    Some(match encoding {
        ADDRESS => "DW_ATE_address",
        BOOLEAN => "DW_ATE_boolean",
        COMPLEX_FLOAT => "DW_ATE_complex_float",
        FLOAT => "DW_ATE_float",
        SIGNED => "DW_ATE_signed",
        SIGNED_CHAR => "DW_ATE_signed_char",
        UNSIGNED => "DW_ATE_unsigned",
        UNSIGNED_CHAR => "DW_ATE_unsigned_char",
        IMAGINARY_FLOAT => "DW_ATE_imaginary_float",
        PACKED_DECIMAL => "DW_ATE_packed_decimal",
        NUMERIC_STRING => "DW_ATE_numeric_string",
        EDITED => "DW_ATE_edited",
        SIGNED_FIXED => "DW_ATE_signed_fixed",
        UNSIGNED_FIXED => "DW_ATE_unsigned_fixed",
        DECIMAL_FLOAT => "DW_ATE_decimal_float",
        UTF => "DW_ATE_UTF",
        UCS => "DW_ATE_UCS",
        ASCII => "DW_ATE_ASCII",
        _ => return None,
    })
}

/// Parses a `DW_ATE_*` name (as [`name`] prints it).
pub fn from_name(s: &str) -> Option<u8> {
    (0u8..=0x12).find(|&e| name(e) == Some(s))
}
