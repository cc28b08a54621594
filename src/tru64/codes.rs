//! The numeric codes of the Tru64 optimization symbol table: PPODE tags,
//! semantic event codes (seed Table 12-1), split target type and scheme
//! codes (Tables 12-2, 12-3), the header size, and the symbol-table codes
//! (Tables 11-1, 11-2) the cases name.

/// Bytes of one Alpha instruction: every instruction count of the seed
/// (ranges, definition points, event counts) is a count of these.
pub const INSN_BYTES: u64 = 4;

/// Bytes of a PPODE header (`PPODHDR`): a 32-bit `ppode_tag`, a 32-bit
/// `ppode_len` and a 64-bit `ppode_val`, little-endian (docs/ambiguities.md,
/// "Tru64 optimization symbol table": the seed's §6.3.3 is not in it).
pub const HEADER_BYTES: usize = 16;

/// `PPODE_STAMP`: the first entry of a procedure's data; `ppode_val` is the
/// version.
pub const TAG_STAMP: u32 = 1;
/// `PPODE_END`: the last entry of a procedure's data.
pub const TAG_END: u32 = 2;
/// `PPODE_EXT_SRC`: extended source lines (layout not in the seed).
pub const TAG_EXT_SRC: u32 = 3;
/// `PPODE_SEM_EVENT`: semantic events (seed §12.3.1).
pub const TAG_SEM_EVENT: u32 = 4;
/// `PPODE_SPLIT`: split lifetime variables (seed §12.3.2).
pub const TAG_SPLIT: u32 = 5;
/// `PPODE_DISCONTIG_SCOPE`: discontiguous scopes (seed §12.3.3).
pub const TAG_DISCONTIG_SCOPE: u32 = 6;
/// `PPODE_INLINED_CALL`: inlined calls (layout not in the seed).
pub const TAG_INLINED_CALL: u32 = 7;

/// The version `PPODE_STAMP` carries in `ppode_val` (`PPOD_VERSION`).
pub const PPOD_VERSION: u64 = 1;

/// Semantic event codes (seed Table 12-1), by value.
pub const EVENTS: &[(u8, &str)] =
    &[(0, "none"), (1, "write"), (2, "control"), (3, "call"), (4, "label"), (5, "inst_only")];
/// `PPODSE_LABEL`: the first event of a procedure.
pub const EVENT_LABEL: u8 = 4;

/// Split target type `PPODE_SPLIT_TYPE_EXT` (Table 12-2): a name follows.
pub const TYPE_EXT: u8 = 1;
/// Split target type `PPODE_SPLIT_TYPE_LCL` (Table 12-2): an OPTRNDX follows.
pub const TYPE_LCL: u8 = 2;

/// Scheme `PPODE_SPLIT_SCHEME_DEF` (Table 12-3): normal.
pub const SCHEME_DEF: u8 = 1;
/// Scheme `PPODE_SPLIT_SCHEME_DEF_PROMOTED` (Table 12-3): no default location.
pub const SCHEME_PROMOTED: u8 = 2;
/// Scheme `PPODE_SPLIT_SCHEME_DUP` (Table 12-3): an OPTRNDX to the first
/// symbol of the set replaces the children.
pub const SCHEME_DUP: u8 = 3;

/// Symbol types (Table 11-1, which the seed cites but does not hold; the
/// values of the public `symconst.h` copies) the case files may name.
pub const SYMBOL_TYPES: &[(u64, &str)] =
    &[(0, "stNil"), (1, "stGlobal"), (2, "stStatic"), (3, "stParam"), (4, "stLocal"), (7, "stBlock")];

/// Storage classes (Table 11-2, as [`SYMBOL_TYPES`]) the case files may name.
pub const STORAGE_CLASSES: &[(u64, &str)] = &[
    (0, "scNil"),
    (1, "scText"),
    (2, "scData"),
    (3, "scBss"),
    (4, "scRegister"),
    (5, "scAbs"),
    (7, "scUnallocated"),
    (16, "scVar"),
    (19, "scVarRegister"),
];
/// `scUnallocated`: a normal-scheme target with this class has no default
/// location (seed §12.3.2.2).
pub const SC_UNALLOCATED: u64 = 7;

/// The name of `code` in `table`, if it has one.
pub fn name_of<T: PartialEq + Copy>(table: &[(T, &'static str)], code: T) -> Option<&'static str> {
    table.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}
