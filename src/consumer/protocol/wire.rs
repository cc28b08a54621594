//! The JSON messages of protocols `dwarfcheck/1` and `dwarfcheck/2` and the
//! mapping of a case and its [`Context`] onto them (docs/protocol.md).
//!
//! Key names follow the case file's `context:` mapping
//! (docs/case-format.md) wherever one exists, and the shapes they share are
//! one serde model: memory segments and DIEs are the case file's own
//! [`MemorySpec`] and [`DieSpec`], budgets the core's [`Budgets`]. Byte strings are lowercase
//! hex, two digits per byte, no separators, **in memory order** (first
//! byte first), except inside the outcome vocabulary (entries, base types,
//! the reply's outcome), which keeps the serde form of
//! [`dwarfcheck_core::outcome`]: there a value's or implicit storage's `bytes` are
//! written **last byte first**.

use crate::case::yaml::{DieSpec, MemorySpec};
use crate::case::{CfiCase, ExprCase, UnwindCase};
use crate::edition::Edition;
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::context::{
    AttrForm, Attribute, Budgets, CallerFrame, CompUnit, Context, Entry, MemorySegment, ResultKind,
};
use dwarfcheck_core::encoding::hex::to_hex as hex;
use dwarfcheck_core::encoding::{Format, VendorProfile};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, Outcome, RegisterRule};
use dwarfcheck_core::target::{AddressSpace, Arch, Endian, Register, Target};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A protocol version, sent as `"protocol"` in every message. The
/// handshake is always version 1's; the consumer's hello reply picks the
/// version every later message of that child carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Version {
    /// `dwarfcheck/1`: `evaluate` requests only.
    #[serde(rename = "dwarfcheck/1")]
    V1,
    /// `dwarfcheck/2`: `evaluate`, `rows` and `unwind` requests.
    #[serde(rename = "dwarfcheck/2")]
    V2,
}

impl Version {
    /// Every version dwarfcheck speaks, oldest first (the hello's
    /// `versions`).
    pub const ALL: [Version; 2] = [Version::V1, Version::V2];

    /// The wire name (`dwarfcheck/1`).
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "dwarfcheck/1",
            Version::V2 => "dwarfcheck/2",
        }
    }

    /// The version with wire name `s`, if dwarfcheck speaks it.
    pub fn parse(s: &str) -> Option<Version> {
        Version::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The version of the handshake line dwarfcheck sends first (every
/// consumer, of any version, reads it).
pub const VERSION: &str = "dwarfcheck/1";

/// The deepest caller chain a request carries: a context whose chain of
/// calling frames is longer is answered `Unsupported` without asking.
pub const MAX_CALLER_FRAMES: usize = 64;

/// The first message, dwarfcheck to consumer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hello {
    /// Always [`VERSION`].
    pub protocol: &'static str,
    /// Always `"hello"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The versions dwarfcheck speaks ([`Version::ALL`]); the consumer
    /// answers in the one it picks.
    pub versions: [Version; 2],
}

/// The `hello` line dwarfcheck sends first.
pub fn hello_line() -> String {
    serde_json::to_string(&Hello { protocol: VERSION, kind: "hello", versions: Version::ALL })
        .expect("plain struct serialises")
}

/// An `evaluate` request: one expression case.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluate<'a> {
    /// The version the consumer picked in its handshake.
    pub protocol: Version,
    /// Always `"evaluate"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Request number, unique per consumer during a run; the reply echoes it.
    pub id: u64,
    /// The case's name (unique within its case file, not across files).
    pub case: &'a str,
    /// The smallest edition the case fits in (`crate::edition`).
    pub edition: Edition,
    /// Vendor profile for opcodes 0xe0-0xff (`dwarf5`, `gnu`,
    /// `hetero-2020`, `hetero-2020-uleb`, `llvm-user`).
    pub vendor: &'a str,
    /// The target machine.
    pub target: WireTarget,
    /// The attribute whose evaluation context applies (case file
    /// `attribute:`); absent: evaluate the expression with the context as
    /// given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribute: Option<Attribute>,
    /// The expression bytes (the attribute's exprloc value); absent when
    /// the value is a location list or a constant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expr_bytes: Option<String>,
    /// `DW_FORM_sec_offset` of a location list: byte offset into
    /// `cu.debug_loclists` (unit version 5) or `cu.debug_loc`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loclist: Option<u64>,
    /// `DW_FORM_loclistx`: index into the offsets table at
    /// `cu.loclists_base`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loclistx: Option<u64>,
    /// A constant value (`data_member_location`: a byte offset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constant: Option<u64>,
    /// The evaluation context.
    pub context: WireContext<'a>,
}

/// The target description of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireTarget {
    /// Preset or inline name.
    pub name: String,
    /// `x86_64`, `aarch64`, `amdgpu` or `other`.
    pub arch: Arch,
    /// `little` or `big`: the byte order of memory and registers.
    pub endian: Endian,
    /// Size of an address of address space 0 in **bytes**; also the size
    /// of the generic type.
    pub address_size: u8,
    /// Lanes per thread.
    pub lanes: u32,
    /// Registers: `number`, `name`, `bits` (size in **bits**).
    pub registers: Vec<Register>,
    /// Address spaces: `number`, `name`, `address_bits` (**bits**),
    /// `per_thread`, `per_lane`.
    pub address_spaces: Vec<AddressSpace>,
    /// DWARF number of the return address column.
    pub return_address_register: u64,
}

impl WireTarget {
    /// The wire form of `t`.
    pub fn of(t: &Target) -> WireTarget {
        WireTarget {
            name: t.name.clone(),
            arch: t.arch,
            endian: t.endian,
            address_size: t.address_bytes(),
            lanes: t.lanes,
            registers: t.registers.clone(),
            address_spaces: t.address_spaces.clone(),
            return_address_register: t.return_address_register,
        }
    }
}

/// The `context` of a request. Absent keys are "not specified".
#[derive(Debug, Clone, Serialize)]
pub struct WireContext<'a> {
    /// `location` or `value`; absent: unspecified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultKind>,
    /// Register contents by DWARF number (decimal string), hex in target
    /// byte order, exactly the register's size.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub registers: BTreeMap<String, String>,
    /// Known memory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemorySpec>,
    /// The frame: pc, CFA, frame base (same keys as a caller's).
    #[serde(flatten)]
    pub frame: WireFrame,
    /// The current object (an entry in the outcome vocabulary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<&'a Entry>,
    /// Entries pushed before evaluation, bottom first.
    #[serde(skip_serializing_if = "<[Entry]>::is_empty")]
    pub initial_stack: &'a [Entry],
    /// Base byte address of the current thread's TLS block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_base: Option<u64>,
    /// Current thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<u64>,
    /// Current lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane: Option<u32>,
    /// Seed of the synthetic machine state (`dwarfcheck_core::context::synthetic`):
    /// registers and memory not listed read as a function of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<u64>,
    /// The current compilation unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cu: Option<WireCu>,
    /// The calling frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<Box<WireCaller>>,
    /// The program's call frame information, when the CFA and calling
    /// frames are to be found by virtual unwinding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cfi_section: Option<WireCfiSection>,
    /// Evaluation budgets.
    pub budgets: Budgets,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The compilation unit.
#[derive(Debug, Clone, Serialize)]
pub struct WireCu {
    /// Unit header version.
    pub version: u16,
    /// `dwarf32` or `dwarf64`.
    pub format: Format,
    /// Unit address size in **bytes**.
    pub address_size: u8,
    /// `.debug_info` offset of the unit header (`DW_OP_call2`/`call4`
    /// operands are relative to it).
    pub offset: u64,
    /// `DW_AT_addr_base`: byte offset into `debug_addr`.
    pub addr_base: u64,
    /// Whole `.debug_addr` section, hex.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub debug_addr: String,
    /// Base type DIEs by unit offset (decimal string), in the outcome
    /// vocabulary: `encoding`, `bits`, `big_endian`, `vector_size`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub base_types: BTreeMap<String, BaseType>,
    /// DIEs by `.debug_info` offset (decimal string).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub dies: BTreeMap<String, DieSpec>,
    /// Whole `.debug_loclists` section, hex.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub debug_loclists: String,
    /// `DW_AT_loclists_base`: byte offset of the offsets table.
    pub loclists_base: u64,
    /// Whole `.debug_loc` section, hex.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub debug_loc: String,
    /// The unit's base address (`DW_AT_low_pc`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_address: Option<u64>,
}

/// What the current frame and each calling frame share.
#[derive(Debug, Clone, Serialize)]
pub struct WireFrame {
    /// Program location (the call site for a calling frame; byte address).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pc: Option<u64>,
    /// The frame's CFA: a byte address in address space `cfa_aspace`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cfa: Option<u64>,
    /// Address space of `cfa` (absent: 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub cfa_aspace: u64,
    /// `DW_AT_frame_base` of the frame's subprogram: expression bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_base_bytes: Option<String>,
}

impl WireFrame {
    fn new(pc: Option<u64>, cfa: Option<u64>, cfa_aspace: u64, frame_base: Option<&[u8]>) -> Self {
        WireFrame { pc, cfa, cfa_aspace, frame_base_bytes: frame_base.map(hex) }
    }
}

/// A calling frame.
#[derive(Debug, Clone, Serialize)]
pub struct WireCaller {
    /// The calling frame: call site, its CFA, its frame base.
    #[serde(flatten)]
    pub frame: WireFrame,
    /// The called frame's CFI row by DWARF register number (decimal
    /// string), in the serde form of `dwarfcheck_core::outcome::RegisterRule`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub rules: BTreeMap<String, RegisterRule>,
    /// Rule of registers not in `rules`.
    pub default_rule: RegisterRule,
    /// The frame that called this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<Box<WireCaller>>,
}

/// A frame section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireCfiSection {
    /// `debug-frame` or `eh-frame`.
    pub kind: FrameKind,
    /// Virtual byte address of the section.
    pub address: u64,
    /// Base for `DW_EH_PE_textrel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_base: Option<u64>,
    /// Base for `DW_EH_PE_datarel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_base: Option<u64>,
    /// Section contents, hex.
    pub bytes: String,
}

impl WireCfiSection {
    /// The wire form of `s`.
    pub fn of(s: &CfiSection) -> WireCfiSection {
        WireCfiSection {
            kind: s.kind,
            address: s.address,
            text_base: s.text_base,
            data_base: s.data_base,
            bytes: hex(&s.bytes),
        }
    }

    /// The section this describes, for `target`.
    ///
    /// Errors: `bytes` is not hex (a message).
    pub fn to_section(&self, target: Arc<Target>) -> Result<CfiSection, String> {
        let bytes = dwarfcheck_core::encoding::hex::parse_hex(&self.bytes).map_err(|e| format!("bytes: {e}"))?;
        let mut s = CfiSection::new(self.kind, bytes, self.address, target);
        (s.text_base, s.data_base) = (self.text_base, self.data_base);
        Ok(s)
    }
}

/// The `evaluate` request line for `case` with request number `id`, in
/// `version`.
///
/// Errors: an `Unsupported` outcome when the case cannot be expressed in
/// the protocol (a caller chain deeper than [`MAX_CALLER_FRAMES`]).
pub fn evaluate_line(id: u64, case: &ExprCase, version: Version) -> Result<String, Outcome> {
    let ctx = &case.ctx;
    let t = &ctx.target;
    let (mut expr_bytes, mut loclist, mut loclistx, mut constant) = (None, None, None, None);
    match &case.form {
        None => expr_bytes = Some(hex(&case.expr)),
        Some(AttrForm::Exprloc(b)) => expr_bytes = Some(hex(b)),
        Some(AttrForm::LocList { offset }) => loclist = Some(*offset),
        Some(AttrForm::LocListX { index }) => loclistx = Some(*index),
        Some(AttrForm::Constant(k)) => constant = Some(*k),
    }
    let req = Evaluate {
        protocol: version,
        kind: "evaluate",
        id,
        case: &case.name,
        edition: crate::edition::of_expr_case(case),
        vendor: &ctx.vendor.name,
        target: WireTarget::of(t),
        attribute: case.attribute,
        expr_bytes,
        loclist,
        loclistx,
        constant,
        context: context(ctx)?,
    };
    Ok(serde_json::to_string(&req).expect("request types serialise"))
}

/// The wire form of a context.
fn context(ctx: &Context) -> Result<WireContext<'_>, Outcome> {
    Ok(WireContext {
        result: ctx.result_kind,
        registers: ctx.registers.iter().map(|(n, v)| (n.to_string(), hex(v))).collect(),
        memory: memory_specs(&ctx.memory),
        frame: WireFrame::new(ctx.pc, ctx.cfa, ctx.cfa_aspace, ctx.frame_base.as_deref()),
        object: ctx.object.as_ref(),
        initial_stack: &ctx.initial_stack,
        tls_base: ctx.tls_base,
        thread: ctx.thread,
        lane: ctx.lane,
        synthetic: ctx.synthetic,
        cu: ctx.cu.as_ref().map(cu),
        caller: match &ctx.caller {
            Some(f) => Some(Box::new(caller(f, MAX_CALLER_FRAMES)?)),
            None => None,
        },
        cfi_section: ctx.cfi.as_deref().map(WireCfiSection::of),
        budgets: ctx.budgets,
    })
}

/// The wire form of a unit.
fn cu(c: &CompUnit) -> WireCu {
    WireCu {
        version: c.version,
        format: c.format,
        address_size: c.address_size,
        offset: c.offset,
        addr_base: c.addr_base,
        debug_addr: hex(&c.debug_addr),
        base_types: c.base_types.iter().map(|(o, t)| (o.to_string(), *t)).collect(),
        dies: c
            .dies
            .iter()
            .map(|(o, d)| {
                let mut w = DieSpec {
                    const_value: d.const_value.as_deref().map(hex),
                    byte_size: d.byte_size,
                    ..DieSpec::default()
                };
                match &d.location {
                    None => {}
                    Some(AttrForm::Exprloc(b)) => w.location_bytes = Some(hex(b)),
                    Some(AttrForm::LocList { offset }) => w.loclist = Some(*offset),
                    Some(AttrForm::LocListX { index }) => w.loclistx = Some(*index),
                    Some(AttrForm::Constant(k)) => w.constant = Some(*k),
                }
                (o.to_string(), w)
            })
            .collect(),
        debug_loclists: hex(&c.debug_loclists),
        loclists_base: c.loclists_base,
        debug_loc: hex(&c.debug_loc),
        base_address: c.base_address,
    }
}

/// The wire form of a calling frame and at most `room - 1` frames above it.
fn caller(f: &CallerFrame, room: usize) -> Result<WireCaller, Outcome> {
    if room == 0 {
        return Err(Outcome::Failed(Failure::Unsupported {
            what: format!("protocol {VERSION} carries at most {MAX_CALLER_FRAMES} calling frames"),
        }));
    }
    Ok(WireCaller {
        frame: WireFrame::new(f.pc, f.cfa, f.cfa_aspace, f.frame_base.as_deref()),
        rules: f.rules.iter().map(|(n, r)| (n.to_string(), r.clone())).collect(),
        default_rule: f.default_rule.clone(),
        caller: match &f.caller {
            Some(c) => Some(Box::new(caller(c, room - 1)?)),
            None => None,
        },
    })
}

/// The wire form of memory segments.
fn memory_specs(memory: &[MemorySegment]) -> Vec<MemorySpec> {
    memory
        .iter()
        .map(|m| MemorySpec { aspace: m.aspace, at: m.address, bytes: hex(&m.bytes), thread: m.thread, lane: m.lane })
        .collect()
}

/// The target of a `rows` or `unwind` request: one of the target presets
/// (`dwarfcheck_core::target::presets`: `x86_64`, `aarch64`,
/// `amdgpu-gfx90a`, ...), whose register sizes are the preset's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CfiTarget {
    /// The preset's name.
    pub name: String,
    /// `x86_64`, `aarch64`, `amdgpu` or `other`.
    pub arch: Arch,
    /// `little` or `big`.
    pub endian: Endian,
    /// Size of an address of address space 0 in **bytes**.
    pub address_size: u8,
}

impl CfiTarget {
    /// The wire form of `t`, or `None` when `t` is not the preset of its
    /// name (an inline target: version 2 carries presets only for CFI).
    pub fn of(t: &Target) -> Option<CfiTarget> {
        let p = dwarfcheck_core::target::presets::by_name(&t.name)?;
        let same = p.arch == t.arch
            && p.endian == t.endian
            && p.registers == t.registers
            && p.address_spaces == t.address_spaces
            && p.lanes == t.lanes
            && p.return_address_register == t.return_address_register;
        same.then(|| CfiTarget {
            name: t.name.clone(),
            arch: t.arch,
            endian: t.endian,
            address_size: t.address_bytes(),
        })
    }

    /// The preset this names, with the vendor profile named `vendor`.
    ///
    /// Errors: not a preset, an unknown vendor, or an `arch`, `endian` or
    /// `address_size` other than the preset's (a message).
    pub fn to_target(&self, vendor: &str) -> Result<Target, String> {
        let mut t = dwarfcheck_core::target::presets::by_name(&self.name)
            .ok_or_else(|| format!("`{}` is not a target preset", self.name))?;
        if (t.arch, t.endian, t.address_bytes()) != (self.arch, self.endian, self.address_size) {
            return Err(format!("arch, endian or address_size differ from the preset `{}`'s", self.name));
        }
        t.vendor = VendorProfile::by_name(vendor).ok_or_else(|| format!("unknown vendor profile `{vendor}`"))?;
        Ok(t)
    }
}

/// The `Unsupported` outcome of a CFI case whose target is not a preset.
fn not_a_preset(t: &Target) -> Failure {
    Failure::Unsupported {
        what: format!("protocol dwarfcheck/2 carries preset targets only in CFI requests, not `{}`", t.name),
    }
}

/// A `rows` request (version 2): the row table of one FDE of a frame
/// section, or the row covering one address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowsRequest {
    /// Always [`Version::V2`].
    pub protocol: Version,
    /// Always `"rows"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Request number; the reply echoes it.
    pub id: u64,
    /// The case's name.
    pub case: String,
    /// The smallest edition the case fits in.
    pub edition: Edition,
    /// Vendor profile of the expressions in the rules.
    pub vendor: String,
    /// The target machine (a preset).
    pub target: CfiTarget,
    /// The frame section holding the FDE and its CIE.
    pub section: WireCfiSection,
    /// Section offset of the FDE whose whole row table is asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fde_offset: Option<u64>,
    /// Or: the address whose row is asked for (the first FDE in section
    /// order covering it, `unwind.no-fde`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
}

/// The machine state of an `unwind` request: the context keys of an
/// `evaluate` request that describe the top frame's machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireState {
    /// The top frame's program location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pc: Option<u64>,
    /// Register contents by DWARF number (decimal string), hex in target
    /// byte order, exactly the register's size.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub registers: BTreeMap<String, String>,
    /// Known memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<MemorySpec>,
    /// Current thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<u64>,
    /// Current lane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<u32>,
    /// Seed of the synthetic machine state: registers and memory not
    /// listed read as a function of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<u64>,
    /// dwarfcheck's limits (`frames`: most unwinding steps).
    #[serde(default)]
    pub budgets: Budgets,
}

impl WireState {
    /// The wire form of the machine state of `ctx`.
    pub fn of(ctx: &Context) -> WireState {
        WireState {
            pc: ctx.pc,
            registers: ctx.registers.iter().map(|(n, v)| (n.to_string(), hex(v))).collect(),
            memory: memory_specs(&ctx.memory),
            thread: ctx.thread,
            lane: ctx.lane,
            synthetic: ctx.synthetic,
            budgets: ctx.budgets,
        }
    }

    /// The context this state describes, on `target`.
    ///
    /// Errors: a register number that is not decimal, or hex that is not
    /// hex (a message).
    pub fn to_context(&self, target: Arc<Target>) -> Result<Context, String> {
        let parse =
            |what: &str, h: &str| dwarfcheck_core::encoding::hex::parse_hex(h).map_err(|e| format!("{what}: {e}"));
        let mut ctx = Context::new(target);
        ctx.pc = self.pc;
        for (n, v) in &self.registers {
            let n: u64 = n.parse().map_err(|_| format!("register number `{n}`"))?;
            ctx.registers.insert(n, parse("register", v)?);
        }
        for m in &self.memory {
            ctx.memory.push(MemorySegment {
                aspace: m.aspace,
                address: m.at,
                bytes: parse("memory", &m.bytes)?,
                thread: m.thread,
                lane: m.lane,
            });
        }
        (ctx.thread, ctx.lane, ctx.synthetic, ctx.budgets) = (self.thread, self.lane, self.synthetic, self.budgets);
        Ok(ctx)
    }
}

/// An `unwind` request (version 2): virtual unwinding through a frame
/// section from a machine state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnwindRequest {
    /// Always [`Version::V2`].
    pub protocol: Version,
    /// Always `"unwind"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Request number; the reply echoes it.
    pub id: u64,
    /// The case's name.
    pub case: String,
    /// The smallest edition the case fits in.
    pub edition: Edition,
    /// Vendor profile of the expressions in the rules.
    pub vendor: String,
    /// The target machine (a preset).
    pub target: CfiTarget,
    /// The program's frame section.
    pub section: WireCfiSection,
    /// The top frame's machine state.
    pub state: WireState,
    /// Most steps to make; absent: until the base of the stack (within
    /// `state.budgets.frames`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<u32>,
}

/// The `rows` request line for the whole row table of `case`'s FDE, with
/// request number `id`.
///
/// Errors: `Unsupported` when the case's target is not a preset.
pub fn rows_line(id: u64, case: &CfiCase) -> Result<String, Failure> {
    let s = &case.section;
    let target = CfiTarget::of(&s.target).ok_or_else(|| not_a_preset(&s.target))?;
    let req = RowsRequest {
        protocol: Version::V2,
        kind: "rows".into(),
        id,
        case: case.name.clone(),
        edition: crate::edition::of_cfi_case(case),
        vendor: s.target.vendor.name.clone(),
        target,
        section: WireCfiSection::of(s),
        fde_offset: Some(case.fde_offset),
        address: None,
    };
    Ok(serde_json::to_string(&req).expect("request types serialise"))
}

/// The `unwind` request line for unwinding `u` through `case`'s section,
/// with request number `id`.
///
/// Errors: `Unsupported` when the case's target is not a preset.
pub fn unwind_line(id: u64, case: &CfiCase, u: &UnwindCase) -> Result<String, Failure> {
    let s = &case.section;
    let target = CfiTarget::of(&s.target).ok_or_else(|| not_a_preset(&s.target))?;
    let req = UnwindRequest {
        protocol: Version::V2,
        kind: "unwind".into(),
        id,
        case: case.name.clone(),
        edition: crate::edition::of_cfi_case(case),
        vendor: s.target.vendor.name.clone(),
        target,
        section: WireCfiSection::of(s),
        state: WireState::of(&u.ctx),
        frames: u.limit,
    };
    Ok(serde_json::to_string(&req).expect("request types serialise"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Case;
    use serde_json::{json, Value as Json};

    const RICH: &str = r#"
target: x86_64
cases:
  - name: rich
    rules: [op.lit.pushes-generic]
    context:
      result: value
      registers: { rsp: 0x1122, 17: "00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f" }
      memory: [ { aspace: 0, at: 0x1000, bytes: "de ad" } ]
      pc: 0x401000
      cfa: 0x7ffc0100
      frame_base: "DW_OP_call_frame_cfa"
      object: { memory: 0x2000 }
      initial_stack: [ { value: 5 } ]
      tls_base: 0x7f0000000000
      thread: 1
      lane: 0
      cu:
        version: 5
        format: dwarf64
        address_size: 8
        addr_base: 8
        debug_addr: "00 11"
        base_types: { 0x2a: { encoding: DW_ATE_signed, bits: 32 } }
        dies: { 0x40: { location: "DW_OP_reg0" }, 0x48: { const_value: "2a 00 00 00", byte_size: 4 } }
      caller:
        pc: 0x401234
        cfa: 0x7ffc0200
        rules: { rbx: "[CFA-16]", rbp: "same" }
        default_rule: undefined
    expr: "DW_OP_lit1"
"#;

    fn request(yaml: &str) -> Json {
        let Ok(cases) = crate::case::yaml::load_str("t.yaml", yaml) else { panic!("case file") };
        let Some(Case::Expr(c)) = cases.into_iter().next() else { panic!("one expression case") };
        serde_json::from_str(&evaluate_line(9, &c, Version::V1).expect("expressible")).expect("JSON")
    }

    #[test]
    fn the_context_maps_onto_the_documented_keys() {
        let r = request(RICH);
        let c = &r["context"];
        // Worked out by hand from the case above and docs/protocol.md:
        assert_eq!(r["id"], 9);
        assert_eq!(r["expr_bytes"], "31"); // DW_OP_lit1
        assert_eq!(r["target"]["address_size"], 8); // bytes
        assert_eq!(c["result"], "value");
        // rsp (7) = 0x1122 as 8 little-endian bytes; xmm0 (17) as given.
        assert_eq!(c["registers"], json!({"7": "2211000000000000", "17": "000102030405060708090a0b0c0d0e0f"}));
        assert_eq!(c["memory"], json!([{"aspace": 0, "at": 4096, "bytes": "dead"}]));
        assert_eq!((c["pc"].clone(), c["cfa"].clone()), (json!(0x401000), json!(0x7ffc0100u64)));
        assert!(c.get("cfa_aspace").is_none() && c.get("synthetic").is_none() && c.get("cfi_section").is_none());
        assert_eq!(c["frame_base_bytes"], "9c"); // DW_OP_call_frame_cfa
                                                 // Entries in the outcome vocabulary: memory 0x2000 is bit 0x10000.
        let mem = json!({"storage": "memory", "aspace": 0, "bit_addr": 0x10000});
        assert_eq!(c["object"], json!({"location": {"places": [{"simple": mem}]}}));
        let generic = json!({"encoding": "generic", "bits": 64, "big_endian": false, "vector_size": 1});
        assert_eq!(c["initial_stack"], json!([{"value": {"ty": generic, "bytes": "0000000000000005"}}]));
        assert_eq!(
            (c["tls_base"].clone(), c["thread"].clone(), c["lane"].clone()),
            (json!(0x7f0000000000u64), json!(1), json!(0))
        );
        let cu = &c["cu"];
        assert_eq!(
            (cu["version"].clone(), cu["format"].clone(), cu["address_size"].clone()),
            (json!(5), json!("dwarf64"), json!(8))
        );
        assert_eq!((cu["addr_base"].clone(), cu["debug_addr"].clone()), (json!(8), json!("0011")));
        // DIE offsets as decimal strings: 0x2a = 42, 0x40 = 64, 0x48 = 72.
        assert_eq!(
            cu["base_types"]["42"],
            json!({"encoding": {"ate": 5}, "bits": 32, "big_endian": false, "vector_size": 1})
        );
        assert_eq!(
            cu["dies"],
            json!({"64": {"location_bytes": "50"}, "72": {"const_value": "2a000000", "byte_size": 4}})
        );
        assert!(cu.get("debug_loclists").is_none() && cu.get("debug_loc").is_none());
        let f = &c["caller"];
        assert_eq!((f["pc"].clone(), f["cfa"].clone()), (json!(0x401234), json!(0x7ffc0200u64)));
        // rbx (3) saved at CFA-16; rbp (6) unchanged.
        assert_eq!(f["rules"], json!({"3": {"kind": "offset", "offset": -16}, "6": {"kind": "same-value"}}));
        assert_eq!(f["default_rule"], json!({"kind": "undefined"}));
        assert!(f.get("caller").is_none());
    }

    #[test]
    fn caller_chains_past_the_limit_are_unsupported() {
        let ctx = {
            let Ok(cases) = crate::case::yaml::load_str("t.yaml", RICH) else { panic!() };
            let Some(Case::Expr(c)) = cases.into_iter().next() else { panic!() };
            c
        };
        // MAX_CALLER_FRAMES frames are sent; one more is not.
        let chain = |n: usize| {
            let mut f: Option<std::sync::Arc<CallerFrame>> = None;
            for _ in 0..n {
                f = Some(std::sync::Arc::new(CallerFrame { caller: f, ..CallerFrame::default() }));
            }
            let mut c = ctx.clone();
            let mut x = (*c.ctx).clone();
            x.caller = f;
            c.ctx = std::sync::Arc::new(x);
            evaluate_line(1, &c, Version::V2)
        };
        assert!(chain(MAX_CALLER_FRAMES).is_ok());
        assert!(matches!(chain(MAX_CALLER_FRAMES + 1), Err(Outcome::Failed(Failure::Unsupported { .. }))));
    }
}
