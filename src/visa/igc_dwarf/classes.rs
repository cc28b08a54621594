//! The classes of difference between IGC's DWARF and the lowering of the
//! vISA blob of the same compile (IG*), and of third-party failures on
//! IGC's DWARF (IT*), each written up in docs/consumers.md ("IGC's own
//! DWARF").

/// The kind of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// IGC's DWARF says something its own blob contradicts.
    IgcInconsistency,
    /// Our reading is the one that differs.
    OurMisreading,
    /// A form neither side can be compared on.
    NotComparable,
    /// A third-party tool cannot read what IGC wrote.
    ToolFailure,
    /// IGC's ELF itself is malformed or mislabelled.
    IgcElf,
    /// Both sides are consistent but pick different conventions.
    Convention,
}

/// A class: `(id, kind, explanation, public report)`.
pub type Class = (&'static str, Kind, &'static str, Option<&'static str>);

/// Every class.
pub const CLASSES: &[Class] = &[
    (
        "IG1",
        Kind::IgcInconsistency,
        "same register, other sub-register: a blob variable is live in the GRF IGC names at that pc, but none at \
         IGC's lane-0 bit offset / 8",
        None,
    ),
    (
        "IG2",
        Kind::IgcInconsistency,
        "register not live at that pc: the blob has a variable in that register elsewhere in the object, not at \
         this Gen offset (IGC's range outlives the blob's interval)",
        None,
    ),
    (
        "IG3",
        Kind::IgcInconsistency,
        "register unknown to the blob: no variable of the object is ever in the register IGC names",
        None,
    ),
    (
        "IG4",
        Kind::NotComparable,
        "a constant (DW_OP_implicit_value, or constants then DW_OP_stack_value): the blob has no place for it",
        None,
    ),
    (
        "IG5",
        Kind::NotComparable,
        "an address computed from a constant (DW_OP_const8u A; lane; shl; plus; deref): neither BE_FP-relative nor \
         absolute scratch in the blob's terms",
        None,
    ),
    ("IG6", Kind::OurMisreading, "an expression outside the forms the structural reader knows", None),
    (
        "IG7",
        Kind::NotComparable,
        "the DWARF subprogram (or the ranges of its variables) falls in no object of the blob",
        None,
    ),
    (
        "IG8",
        Kind::NotComparable,
        "the location entry covers no Gen offset of the object's index map: no point to compare at",
        None,
    ),
    (
        "IG9",
        Kind::IgcInconsistency,
        "a DWARF register number past the platform's register files (GRF 16..16+count, a0 272, flags 288..): \
         IGC names r128 and up on a 128-GRF platform",
        None,
    ),
    (
        "IG10",
        Kind::IgcElf,
        "an IGC dump ELF beside a vISA blob says e_machine 62 (x86-64) for Intel GPU code: read as x86-64, \
         DW_OP_reg21 is XMM4; read here with IGC's numbering (docs/ambiguities.md)",
        None,
    ),
    (
        "IG11",
        Kind::Convention,
        "IGC's CFA is the caller's frame base (the caller's BE_FP loaded from its slot, times BE_FP's unit); the \
         lowering's is the frame base, where the caller's stack pointer was at the call (DWARF 5 section 6.4, with \
         IGC's scratch stack growing upward)",
        None,
    ),
    (
        "IG12",
        Kind::NotComparable,
        "IGC's row covers a Gen offset where the blob has no BE_FP interval (the prologue before BE_FP is set, the \
         epilogue after it is restored): the lowering has no FDE there",
        None,
    ),
    (
        "IG13",
        Kind::IgcInconsistency,
        "IGC's row puts the CFA, the return address or the caller's BE_FP somewhere other than the blob's \
         CallFrameInfo says (another scratch address, or memory on one side only)",
        None,
    ),
    (
        "IG14",
        Kind::OurMisreading,
        "an IGC CFI expression or rule outside the forms the frame reader evaluates, or an FDE the reference \
         cannot parse",
        None,
    ),
    (
        "IG15",
        Kind::IgcInconsistency,
        "the blob gives an object a BE_FP interval that no FDE of IGC's .debug_frame covers",
        None,
    ),
    (
        "IT1",
        Kind::ToolFailure,
        "llvm-dwarfdump stops decoding an expression at the first DW_OP_INTEL_* opcode and prints <decoding error> \
         with the remaining bytes",
        None,
    ),
    (
        "IT2",
        Kind::ToolFailure,
        "llvm-dwarfdump cannot apply the relocations of e_machine 205 (\"failed to compute relocation: Unknown\"): \
         every DW_AT_location offset of a zebin reads 0",
        None,
    ),
    (
        "IT3",
        Kind::ToolFailure,
        "readelf prints \"User defined location op 0xNN\" at the first DW_OP_INTEL_* opcode and decodes nothing \
         after it in that expression",
        None,
    ),
    (
        "IT4",
        Kind::ToolFailure,
        "readelf cannot apply the relocations of e_machine 205 (\"unable to apply unsupported reloc type\", \
         \"Missing knowledge of 32-bit reloc types\"): every DW_AT_location offset of a zebin reads 0",
        None,
    ),
    (
        "IT5",
        Kind::ToolFailure,
        "gimli does not decode the expression as IGC means it: 0xed parses as DW_OP_WASM_location, 0xeb and 0xec \
         are invalid opcodes",
        None,
    ),
    (
        "IT6",
        Kind::ToolFailure,
        "GDB reads no DWARF from the file: `info scope` says the kernel \"contains no locals or arguments\" \
         (and `info address`: \"compiled without debugging\"); a zebin (e_machine 205, relocatable) is not an object \
         GDB 13 takes debug information from",
        None,
    ),
    (
        "IT7",
        Kind::ToolFailure,
        "GDB finds the scope but stops at the first DW_OP_INTEL_* (\"Unrecognized DWARF opcode 0xNN\"): `info \
         scope` ends there, the locals after it are not listed",
        None,
    ),
    (
        "IT8",
        Kind::ToolFailure,
        "GDB names IGC's DW_OP_regx register \"$bad_register_number\" (it has no Intel GPU register map for the \
         file) and calls the expression \"Corrupted DWARF2 expression\" at the DW_OP_INTEL_* after it; `info scope` \
         ends there",
        None,
    ),
];

/// The class with `id`.
pub fn class(id: &str) -> Option<&'static Class> {
    CLASSES.iter().find(|c| c.0 == id)
}
