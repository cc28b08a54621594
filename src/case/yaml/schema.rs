//! The serde shape of a case file, before any meaning is given to it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use yaml_serde::Value as Yaml;

/// A whole case file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// Preset name or inline target mapping.
    pub target: crate::case::yaml::target::TargetRef,
    /// Vendor profile for every case of the file.
    #[serde(default)]
    pub vendor: Option<String>,
    /// Free text (documentation only).
    #[serde(default)]
    #[allow(dead_code)]
    pub description: Option<String>,
    /// The cases.
    pub cases: Vec<CaseSpec>,
}

/// One case.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    pub name: String,
    #[serde(default)]
    pub rules: Vec<String>,
    #[serde(default)]
    #[allow(dead_code)]
    pub description: Option<String>,
    #[serde(default)]
    pub vendor: Option<String>,
    #[serde(default)]
    pub context: ContextSpec,
    #[serde(default)]
    pub expr: Option<String>,
    #[serde(default)]
    pub expr_bytes: Option<String>,
    #[serde(default)]
    pub cfi: Option<Yaml>,
    /// The attribute whose evaluation context applies (`context::Attribute`).
    #[serde(default)]
    pub attribute: Option<dwarfcheck_core::context::Attribute>,
    /// The attribute's value as a location list offset (instead of `expr`).
    #[serde(default)]
    pub loclist: Option<u64>,
    /// The attribute's value as a `DW_FORM_loclistx` index.
    #[serde(default)]
    pub loclistx: Option<u64>,
    /// The attribute's value as a constant (`data_member_location`).
    #[serde(default)]
    pub constant: Option<u64>,
    #[serde(default)]
    pub expect: Option<Yaml>,
    /// With `cfi:`: virtual unwinding through the section.
    #[serde(default)]
    pub unwind: Option<UnwindSpec>,
    /// A SPIR-V OpenCL.DebugInfo.100 expression instead of a DWARF one.
    #[serde(default)]
    pub spirv: Option<SpirvSpec>,
}

/// The `spirv:` mapping of a case (docs/case-format.md, "SPIR-V cases"):
/// exactly one of `declare:` or `value:` with the operations in spirv-dis
/// spelling (`crate::spirv::text`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpirvSpec {
    /// The operations of a `DebugDeclare`'s expression.
    #[serde(default)]
    pub declare: Option<String>,
    /// The operations of a `DebugValue`'s expression.
    #[serde(default)]
    pub value: Option<String>,
    /// The variable's size in bits (what a `Fragment` is placed in).
    #[serde(default)]
    pub variable_bits: Option<u64>,
    /// The initial stack entry, a value (generic type unless typed), as
    /// `context.initial_stack` would give it: the variable's address for
    /// `declare`, its value for `value`.
    #[serde(default)]
    pub entry: Option<Yaml>,
}

/// The `context:` mapping.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSpec {
    #[serde(default)]
    pub result: Option<dwarfcheck_core::context::ResultKind>,
    #[serde(default)]
    pub registers: yaml_serde::Mapping,
    #[serde(default)]
    pub memory: Vec<MemorySpec>,
    #[serde(default)]
    pub pc: Option<u64>,
    #[serde(default)]
    pub cfa: Option<u64>,
    #[serde(default)]
    pub cfa_aspace: u64,
    #[serde(default)]
    pub frame_base: Option<String>,
    #[serde(default)]
    pub frame_base_bytes: Option<String>,
    #[serde(default)]
    pub object: Option<Yaml>,
    #[serde(default)]
    pub initial_stack: Vec<Yaml>,
    #[serde(default)]
    pub tls_base: Option<u64>,
    #[serde(default)]
    pub thread: Option<u64>,
    #[serde(default)]
    pub lane: Option<u32>,
    #[serde(default)]
    pub synthetic: Option<u64>,
    #[serde(default)]
    pub cu: Option<CuSpec>,
    #[serde(default)]
    pub budgets: Option<dwarfcheck_core::context::Budgets>,
    #[serde(default)]
    pub caller: Option<CallerSpec>,
    /// The program's CFI (a `cfi::spec::CfiSpec`): calling frames and the
    /// CFA come from virtual unwinding (`Context::cfi`).
    #[serde(default)]
    pub cfi: Option<Yaml>,
}

/// The `unwind:` mapping of a CFI case: virtual unwinding from a machine
/// state through the case's section.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnwindSpec {
    /// The top frame's machine state (same keys as an expression case's
    /// `context:`; `pc` is required).
    pub context: ContextSpec,
    /// Stop after this many steps (end `limit`) if the base of the stack
    /// is not reached first.
    #[serde(default)]
    pub frames: Option<u32>,
    /// Expected steps and end (`steps:` list and `end:`).
    #[serde(default)]
    pub expect: Option<UnwindExpectSpec>,
}

/// The expected result of an `unwind:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnwindExpectSpec {
    #[serde(default)]
    pub steps: Vec<StepSpec>,
    /// `base`, `limit`, or a mapping `{ ill_formed | eval_error | budget: .., at: N }`.
    pub end: Yaml,
}

/// One expected step.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    pub pc: u64,
    /// Default: `pc` for the first step, `pc - 1` for later ones.
    #[serde(default)]
    pub lookup: Option<u64>,
    /// Which FDE applied: 0 = the `cfi.fde`, i >= 1 = `cfi.fdes[i-1]`.
    #[serde(default)]
    pub fde: usize,
    /// The CFA location (location syntax).
    pub cfa: Yaml,
    /// Register name or number -> `{ location: <location> | ill_formed |
    /// eval_error | budget: .., at, bytes: "hex" | value: N }`.
    #[serde(default)]
    pub registers: yaml_serde::Mapping,
    /// The caller pc, or `none` (the base of the stack).
    pub caller_pc: Yaml,
}

/// The `caller:` mapping: the calling frame (`context::CallerFrame`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallerSpec {
    #[serde(default)]
    pub pc: Option<u64>,
    #[serde(default)]
    pub cfa: Option<u64>,
    #[serde(default)]
    pub cfa_aspace: u64,
    #[serde(default)]
    pub frame_base: Option<String>,
    /// Register name or number -> rule text in the CFI case notation
    /// (`undefined`, `same`, `[CFA-8]`, `CFA+8`, a register, `[{hex}]`, `{hex}`).
    #[serde(default)]
    pub rules: yaml_serde::Mapping,
    #[serde(default)]
    pub default_rule: Option<String>,
    #[serde(default)]
    pub caller: Option<Box<CallerSpec>>,
}

/// One `memory:` segment: the same keys in a case file's `context:` and in
/// a protocol request's (docs/case-format.md, docs/protocol.md).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    /// DWARF address space identifier (default 0).
    #[serde(default)]
    pub aspace: u64,
    /// Byte address of the first byte.
    pub at: u64,
    /// Contents, hex in memory order (spaces allowed in case files).
    pub bytes: String,
    /// For a per-thread address space: the thread whose storage this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<u64>,
    /// For a per-lane address space: the lane whose storage this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<u32>,
}

/// The `cu:` mapping.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CuSpec {
    #[serde(default = "default_version")]
    pub version: u16,
    #[serde(default)]
    pub format: dwarfcheck_core::encoding::Format,
    #[serde(default)]
    pub address_size: Option<u8>,
    #[serde(default)]
    pub addr_base: u64,
    #[serde(default)]
    pub debug_addr: Option<String>,
    #[serde(default)]
    pub base_types: BTreeMap<u64, BaseTypeSpec>,
    #[serde(default)]
    pub offset: u64,
    #[serde(default)]
    pub dies: BTreeMap<u64, DieSpec>,
    #[serde(default)]
    pub debug_loclists: Option<String>,
    #[serde(default)]
    pub loclists_base: u64,
    /// Structured location lists, assembled into `.debug_loclists` (with a
    /// header and an offsets table) or `.debug_loc` (version < 5).
    #[serde(default)]
    pub loclists: Option<Vec<Vec<LleSpec>>>,
    #[serde(default)]
    pub debug_loc: Option<String>,
    #[serde(default)]
    pub base_address: Option<u64>,
}

/// One DIE of `cu.dies` (`context::Die`), keyed by `.debug_info` offset:
/// the same keys in a case file and in a protocol request (which never
/// sends `location` text).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DieSpec {
    /// `DW_AT_location` as expression text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// `DW_AT_location` as expression bytes (hex, memory order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location_bytes: Option<String>,
    /// `DW_AT_location` as a location list offset (`DW_FORM_sec_offset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loclist: Option<u64>,
    /// `DW_AT_location` as a `DW_FORM_loclistx` index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loclistx: Option<u64>,
    /// `DW_AT_location` as a constant (a form no location takes: the
    /// evaluators report `attr.form-not-allowed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<u64>,
    /// `DW_AT_const_value` bytes (hex, memory order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub const_value: Option<String>,
    /// Object size in **bytes**.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte_size: Option<u64>,
}

fn default_version() -> u16 {
    5
}

/// One base type DIE.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaseTypeSpec {
    pub encoding: String,
    pub bits: u32,
    #[serde(default)]
    pub endian: Option<dwarfcheck_core::target::Endian>,
    #[serde(default)]
    pub vector_size: Option<u32>,
}

/// One entry of a structured location list (`cu.loclists`): exactly one
/// kind key, plus `expr:` (expression text) for bounded and default entries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LleSpec {
    #[serde(default)]
    pub base_addressx: Option<u64>,
    #[serde(default)]
    pub startx_endx: Option<[u64; 2]>,
    #[serde(default)]
    pub startx_length: Option<[u64; 2]>,
    #[serde(default)]
    pub offset_pair: Option<[u64; 2]>,
    #[serde(default)]
    pub default_location: Option<bool>,
    #[serde(default)]
    pub base_address: Option<u64>,
    #[serde(default)]
    pub start_end: Option<[u64; 2]>,
    #[serde(default)]
    pub start_length: Option<[u64; 2]>,
    #[serde(default)]
    pub end_of_list: Option<bool>,
    #[serde(default)]
    pub expr: Option<String>,
}
