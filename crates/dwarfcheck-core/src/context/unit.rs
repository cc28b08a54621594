//! The current compilation unit as the evaluators see it (hetero-2020
//! "DWARF Expression Evaluation Context", "A current compilation unit"):
//! its header facts, its DIEs as far as expressions need them, and the
//! forms of attribute values (DWARF 5 §7.5.5).

use crate::encoding::Format;
use crate::outcome::BaseType;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The facts of the current unit's header and unit DIE that decoding and
/// location lists need, by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UnitInfo {
    /// DWARF version of the unit header.
    pub version: u16,
    /// 32- or 64-bit DWARF: the size of section-offset operands
    /// (`DW_OP_call_ref`, `DW_OP_implicit_pointer`).
    pub format: Format,
    /// `address_size` of the unit header, in **bytes** (0: the target's).
    pub address_size: u8,
    /// `.debug_info` offset of the unit header: `DW_OP_call2`/`call4`
    /// operands are relative to it.
    pub offset: u64,
    /// `DW_AT_addr_base`: byte offset of this unit's entries in
    /// `.debug_addr`.
    pub addr_base: u64,
    /// `DW_AT_loclists_base`: byte offset of this unit's offsets table in
    /// `.debug_loclists` (for `DW_FORM_loclistx` and `DW_LLE_*x` forms).
    pub loclists_base: u64,
    /// The unit's base address (`DW_AT_low_pc` of the unit DIE), the
    /// initial base of location list entries; `None` if it has none.
    pub base_address: Option<u64>,
}

/// A section whose bytes the evaluators read themselves (each with its own
/// reader): location lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DebugSection {
    /// `.debug_loclists` (unit version 5).
    DebugLoclists,
    /// `.debug_loc` (unit version 4 and earlier).
    DebugLoc,
}

/// The current compilation unit (hetero-2020 "A current compilation unit").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompUnit {
    /// DWARF version of the unit header.
    pub version: u16,
    /// 32- or 64-bit DWARF.
    pub format: Format,
    /// `address_size` of the unit header, in **bytes**.
    pub address_size: u8,
    /// Contents of `.debug_addr` (whole section).
    pub debug_addr: Arc<[u8]>,
    /// `DW_AT_addr_base`: byte offset of this unit's entries in `.debug_addr`.
    pub addr_base: u64,
    /// Base type DIEs, by offset relative to the unit (the operand of
    /// `DW_OP_const_type`, `DW_OP_regval_type`, `DW_OP_deref_type`,
    /// `DW_OP_convert`, `DW_OP_reinterpret`).
    pub base_types: BTreeMap<u64, BaseType>,
    /// `.debug_info` offset of the unit header: `DW_OP_call2`/`call4`
    /// operands are relative to it.
    pub offset: u64,
    /// DIEs by `.debug_info` offset (`DW_OP_call_ref` and implicit pointer
    /// operands; a `call2`/`call4` operand plus [`CompUnit::offset`]).
    pub dies: BTreeMap<u64, Die>,
    /// Contents of `.debug_loclists` (whole section; unit version 5).
    pub debug_loclists: Arc<[u8]>,
    /// `DW_AT_loclists_base`: byte offset of this unit's offsets table in
    /// `.debug_loclists` (for `DW_FORM_loclistx` and `DW_LLE_*x` forms).
    pub loclists_base: u64,
    /// Contents of `.debug_loc` (whole section; unit version 4 and earlier).
    pub debug_loc: Arc<[u8]>,
    /// The unit's base address (`DW_AT_low_pc` of the unit DIE), the
    /// initial base of location list entries; `None` if it has none.
    pub base_address: Option<u64>,
}

impl CompUnit {
    /// The unit's header facts.
    pub fn info(&self) -> UnitInfo {
        UnitInfo {
            version: self.version,
            format: self.format,
            address_size: self.address_size,
            offset: self.offset,
            addr_base: self.addr_base,
            loclists_base: self.loclists_base,
            base_address: self.base_address,
        }
    }
}

/// How an attribute gives its DWARF expression (DWARF 5 §7.5.5 classes
/// `exprloc` and `loclist`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrForm {
    /// `DW_FORM_exprloc` (or a DWARF 2/3 block): one operation expression.
    Exprloc(Vec<u8>),
    /// `DW_FORM_sec_offset` of class loclist: a byte offset into
    /// `.debug_loclists` (unit version 5) or `.debug_loc` (version 4 and
    /// earlier).
    LocList {
        /// Byte offset of the list in its section.
        offset: u64,
    },
    /// `DW_FORM_loclistx` (DWARF 5 §7.29): an index into the offsets
    /// table that starts at the unit's `DW_AT_loclists_base`.
    LocListX {
        /// Index into the offsets table.
        index: u64,
    },
    /// A constant of class `constant` (only `DW_AT_data_member_location`
    /// takes one: a byte offset from the start of the containing object).
    Constant(u64),
}

impl AttrForm {
    /// The value borrowed, as the evaluators take it.
    pub fn as_value(&self) -> AttrValue<'_> {
        match self {
            AttrForm::Exprloc(e) => AttrValue::Exprloc(e),
            AttrForm::LocList { offset } => AttrValue::LocList { offset: *offset },
            AttrForm::LocListX { index } => AttrValue::LocListX { index: *index },
            AttrForm::Constant(c) => AttrValue::Constant(*c),
        }
    }
}

/// An attribute's value as the evaluators take it: [`AttrForm`] with the
/// expression borrowed (DWARF 5 §7.5.5 classes `exprloc`, `loclist`,
/// `constant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrValue<'a> {
    /// `DW_FORM_exprloc` (or a DWARF 2/3 block): one operation expression.
    Exprloc(&'a [u8]),
    /// `DW_FORM_sec_offset` of class loclist: a byte offset into
    /// `.debug_loclists` (unit version 5) or `.debug_loc` (version 4 and
    /// earlier).
    LocList {
        /// Byte offset of the list in its section.
        offset: u64,
    },
    /// `DW_FORM_loclistx`: an index into the unit's offsets table.
    LocListX {
        /// Index into the offsets table.
        index: u64,
    },
    /// A constant of class `constant`.
    Constant(u64),
    /// Not a DWARF form: a SPIR-V OpenCL.DebugInfo.100 `DebugExpression`
    /// with the instruction that applies it, which both evaluators
    /// interpret directly (`specs/rules/spirv-expressions.yaml`).
    Spirv(&'a crate::encoding::spirv::SpirvExpression),
}

/// A debugging information entry as far as expressions need it: the
/// targets of `DW_OP_call2`/`call4`/`call_ref`, `DW_OP_implicit_pointer`
/// and `DW_OP_LLVM_aspace_implicit_pointer`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Die {
    /// `DW_AT_location`, if present.
    pub location: Option<AttrForm>,
    /// `DW_AT_const_value` as bytes in target memory order, if present.
    pub const_value: Option<Vec<u8>>,
    /// Size of the object in **bytes** (`DW_AT_byte_size` of its type), if
    /// known: the size of the implicit storage an implicit pointer refers to
    /// when it comes from `const_value`.
    pub byte_size: Option<u64>,
}
