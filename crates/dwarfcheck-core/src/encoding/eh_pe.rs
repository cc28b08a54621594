//! `.eh_frame` pointer encodings `DW_EH_PE_*` (LSB "Exception Frames", DWARF
//! Exception Header Encoding).
//!
//! The low nibble gives the value format, bits 4–6 the application (what the
//! value is relative to), bit 7 marks an indirect pointer.

/// The value is an absolute pointer of the target's address size.
pub const ABSPTR: u8 = 0x00;
/// Unsigned LEB128.
pub const ULEB128: u8 = 0x01;
/// Unsigned 2-byte value.
pub const UDATA2: u8 = 0x02;
/// Unsigned 4-byte value.
pub const UDATA4: u8 = 0x03;
/// Unsigned 8-byte value.
pub const UDATA8: u8 = 0x04;
/// Signed LEB128.
pub const SLEB128: u8 = 0x09;
/// Signed 2-byte value.
pub const SDATA2: u8 = 0x0a;
/// Signed 4-byte value.
pub const SDATA4: u8 = 0x0b;
/// Signed 8-byte value.
pub const SDATA8: u8 = 0x0c;
/// Relative to the address of the encoded value itself.
pub const PCREL: u8 = 0x10;
/// Relative to the start of the text section.
pub const TEXTREL: u8 = 0x20;
/// Relative to the start of the data section (on x86-64, the GOT).
pub const DATAREL: u8 = 0x30;
/// Relative to the start of the function.
pub const FUNCREL: u8 = 0x40;
/// Aligned to the address size.
pub const ALIGNED: u8 = 0x50;
/// The computed address holds the real pointer (one more load).
pub const INDIRECT: u8 = 0x80;
/// No value is present.
pub const OMIT: u8 = 0xff;

/// Mask for the value format (low nibble).
pub const FORMAT_MASK: u8 = 0x0f;
/// Mask for the application (bits 4–6).
pub const APPLICATION_MASK: u8 = 0x70;
