//! One removable entry of a fuzz case's context: what it sets in a core
//! `Context` (built directly, no text in between) and the line it is
//! written as in a case file (docs/case-format.md), which the case loader
//! reads back into the same context (a test checks that the two agree).

use crate::fuzzing::LoadError;
use dwarfcheck_core::context::{
    AttrForm, Budgets, CallerFrame, CompUnit, Context, Die, Entry as StackEntry, MemorySegment, ResultKind,
};
use dwarfcheck_core::encoding::{ate, hex::to_hex};
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::{BaseType, RawLocation, Source};
use dwarfcheck_core::target::{Endian, Target};
use std::sync::Arc;

/// Where an entry goes in the case's `context:` mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// A key of `context:` itself, e.g. `pc: 0x401010`.
    Key,
    /// A `registers:` entry, e.g. `rax: 0x10`.
    Register,
    /// A `memory:` segment, a flow mapping.
    Memory,
    /// A key of `cu:`, e.g. `addr_base: 8`.
    Unit,
    /// A `cu.base_types:` entry, e.g. `0x10: { encoding: DW_ATE_unsigned, bits: 32 }`.
    BaseType,
    /// A `cu.dies:` entry, e.g. `0x40: { location: "DW_OP_reg0" }`.
    Die,
}

/// An expression the context holds (a frame base, a DIE's location): its
/// text in llvm-dwarfdump spelling, written to case files, and the bytes
/// that text assembles to on every target and vendor profile the fuzz
/// cases use (DWARF 5 operations only), which the context gets. A test
/// assembles every such text and compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expr {
    /// The operations as text.
    pub text: &'static str,
    /// Their encoding.
    pub bytes: &'static [u8],
}

/// A calling frame's rule for one register, in the notation of the case
/// loader's `caller.rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// `same`: the register holds what it holds in the current frame.
    Same,
    /// `[CFA+N]`: saved in memory at the current frame's CFA plus N
    /// **bytes**.
    AtCfa(i64),
    /// `CFA+N`: the value is the CFA plus N **bytes**.
    CfaPlus(i64),
}

impl Rule {
    fn text(self) -> String {
        match self {
            Rule::Same => "same".into(),
            Rule::AtCfa(n) => format!("[CFA{n:+}]"),
            Rule::CfaPlus(n) => format!("CFA{n:+}"),
        }
    }

    fn rule(self) -> RegisterRule {
        match self {
            Rule::Same => RegisterRule::SameValue,
            Rule::AtCfa(offset) => RegisterRule::Offset { offset },
            Rule::CfaPlus(offset) => RegisterRule::ValOffset { offset },
        }
    }
}

/// The calling frame of a fuzz context: its pc and CFA (a byte address in
/// `cfa_aspace`), rules for some registers (by DWARF number) and
/// `same` for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The call site.
    pub pc: u64,
    /// The calling frame's CFA (byte address).
    pub cfa: u64,
    /// Its address space.
    pub cfa_aspace: u64,
    /// Rules by DWARF register number.
    pub rules: &'static [(u64, Rule)],
}

/// What a DIE of the unit gives the expressions that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DieShape {
    /// A `DW_AT_location` expression.
    Location(Expr),
    /// A `DW_AT_const_value` (bytes in target memory order) and the
    /// object's size in **bytes**.
    Const {
        /// The value's bytes.
        bytes: &'static [u8],
        /// `DW_AT_byte_size`.
        byte_size: u64,
    },
    /// Neither.
    Empty,
}

/// A register's value: an integer (truncated or zero-extended to the
/// register's size, in target byte order) or its exact bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegValue {
    /// An integer.
    Int(u64),
    /// Exactly the register's size in **bytes**, target order.
    Bytes(Vec<u8>),
}

/// One entry of a fuzz context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The current pc.
    Pc(u64),
    /// The current frame's CFA (byte address).
    Cfa(u64),
    /// The CFA's address space.
    CfaAspace(u64),
    /// The TLS block's base address.
    TlsBase(u64),
    /// The current thread.
    Thread(u64),
    /// The current lane.
    Lane(u32),
    /// The seed of synthetic registers and memory (what is not listed).
    Synthetic(u64),
    /// The required result kind.
    Result(ResultKind),
    /// The steps budget and the size budget (**bytes**); the other budgets
    /// keep their defaults.
    Budgets {
        /// Operations executed.
        steps: u64,
        /// One value or storage, in **bytes**.
        size_bytes: u64,
    },
    /// The frame base expression.
    FrameBase(Expr),
    /// The current object: a memory location at this byte address in
    /// address space 0.
    Object(u64),
    /// The calling frame.
    Caller(Caller),
    /// A register (DWARF number) and its value.
    Register(u64, RegValue),
    /// Known memory.
    Memory(MemorySegment),
    /// The unit's `DW_AT_addr_base` (**bytes**).
    AddrBase(u64),
    /// The unit's `.debug_addr` section.
    DebugAddr(&'static [u8]),
    /// A base type DIE at a unit offset: a `DW_ATE_*` encoding and a size
    /// in **bits**.
    BaseType {
        /// Unit offset of the DIE.
        die: u64,
        /// `DW_ATE_*` code.
        encoding: u8,
        /// Size in **bits**.
        bits: u32,
    },
    /// A DIE at a `.debug_info` offset.
    Die(u64, DieShape),
}

/// `bytes` as hex, a space after every 8 bytes (memory order).
fn grouped_hex(bytes: &[u8]) -> String {
    bytes.chunks(8).map(to_hex).collect::<Vec<_>>().join(" ")
}

/// The name of register `regno` on `target`, or its number.
fn register_name(target: &Target, regno: u64) -> String {
    target.register(regno).map_or_else(|| regno.to_string(), |r| r.name.clone())
}

impl Entry {
    /// Where the entry goes in the `context:` mapping.
    pub fn section(&self) -> Section {
        match self {
            Entry::Register(..) => Section::Register,
            Entry::Memory(_) => Section::Memory,
            Entry::AddrBase(_) | Entry::DebugAddr(_) => Section::Unit,
            Entry::BaseType { .. } => Section::BaseType,
            Entry::Die(..) => Section::Die,
            _ => Section::Key,
        }
    }

    /// The entry's line in its section of a case file (register names
    /// are `target`'s).
    pub fn yaml(&self, target: &Target) -> String {
        match self {
            Entry::Pc(a) => format!("pc: {a:#x}"),
            Entry::Cfa(a) => format!("cfa: {a:#x}"),
            Entry::CfaAspace(a) => format!("cfa_aspace: {a}"),
            Entry::TlsBase(a) => format!("tls_base: {a:#x}"),
            Entry::Thread(t) => format!("thread: {t}"),
            Entry::Lane(l) => format!("lane: {l}"),
            Entry::Synthetic(s) => format!("synthetic: {s:#x}"),
            Entry::Result(ResultKind::Value) => "result: value".into(),
            Entry::Result(ResultKind::Location) => "result: location".into(),
            Entry::Budgets { steps, size_bytes } => format!("budgets: {{ steps: {steps}, size_bytes: {size_bytes} }}"),
            Entry::FrameBase(e) => format!("frame_base: \"{}\"", e.text),
            Entry::Object(a) => format!("object: {{ memory: {a:#x} }}"),
            Entry::Caller(c) => {
                let mut s = format!("caller: {{ pc: {:#x}, cfa: {:#x}, ", c.pc, c.cfa);
                if c.cfa_aspace != 0 {
                    s.push_str(&format!("cfa_aspace: {}, ", c.cfa_aspace));
                }
                s.push_str("default_rule: same");
                if !c.rules.is_empty() {
                    let rules: Vec<String> = c
                        .rules
                        .iter()
                        .map(|(r, rule)| format!("{}: \"{}\"", register_name(target, *r), rule.text()))
                        .collect();
                    s.push_str(&format!(", rules: {{ {} }}", rules.join(", ")));
                }
                s.push_str(" }");
                s
            }
            Entry::Register(r, RegValue::Int(v)) => format!("{}: {v:#x}", register_name(target, *r)),
            Entry::Register(r, RegValue::Bytes(b)) => format!("{}: \"{}\"", register_name(target, *r), to_hex(b)),
            Entry::Memory(m) => {
                let mut s = String::from("{ ");
                if m.aspace != 0 {
                    s.push_str(&format!("aspace: {}, ", m.aspace));
                }
                s.push_str(&format!("at: {:#x}, ", m.address));
                if let Some(t) = m.thread {
                    s.push_str(&format!("thread: {t}, "));
                }
                if let Some(l) = m.lane {
                    s.push_str(&format!("lane: {l}, "));
                }
                s.push_str(&format!("bytes: \"{}\" }}", grouped_hex(&m.bytes)));
                s
            }
            Entry::AddrBase(b) => format!("addr_base: {b}"),
            Entry::DebugAddr(b) => format!("debug_addr: \"{}\"", grouped_hex(b)),
            Entry::BaseType { die, encoding, bits } => {
                format!("{die:#x}: {{ encoding: {}, bits: {bits} }}", ate::name(*encoding).unwrap_or("DW_ATE_unsigned"))
            }
            Entry::Die(off, DieShape::Location(e)) => format!("{off:#x}: {{ location: \"{}\" }}", e.text),
            Entry::Die(off, DieShape::Const { bytes, byte_size }) => {
                format!("{off:#x}: {{ const_value: \"{}\", byte_size: {byte_size} }}", to_hex(bytes))
            }
            Entry::Die(off, DieShape::Empty) => format!("{off:#x}: {{}}"),
        }
    }

    /// Sets what the entry gives in `ctx`, whose unit (`ctx.cu`) is
    /// already there.
    ///
    /// Errors: [`LoadError::NoSuchRegister`] for a register the target
    /// lacks, [`LoadError::RegisterSize`] for bytes that are not the
    /// register's size (what the case loader reports for the same lines).
    pub fn apply(&self, ctx: &mut Context) -> Result<(), LoadError> {
        match self {
            Entry::Pc(a) => ctx.pc = Some(*a),
            Entry::Cfa(a) => ctx.cfa = Some(*a),
            Entry::CfaAspace(a) => ctx.cfa_aspace = *a,
            Entry::TlsBase(a) => ctx.tls_base = Some(*a),
            Entry::Thread(t) => ctx.thread = Some(*t),
            Entry::Lane(l) => ctx.lane = Some(*l),
            Entry::Synthetic(s) => ctx.synthetic = Some(*s),
            Entry::Result(k) => ctx.result_kind = Some(*k),
            Entry::Budgets { steps, size_bytes } => {
                ctx.budgets = Budgets { steps: *steps, size_bytes: *size_bytes, ..Budgets::default() }
            }
            Entry::FrameBase(e) => ctx.frame_base = Some(e.bytes.to_vec()),
            Entry::Object(a) => {
                let src = Source::Memory { aspace: 0, bit_addr: u128::from(*a) * 8, thread: None, lane: None };
                ctx.object = Some(StackEntry::Location(RawLocation::simple(src).normalize()));
            }
            Entry::Caller(c) => {
                ctx.caller = Some(Arc::new(CallerFrame {
                    pc: Some(c.pc),
                    cfa: Some(c.cfa),
                    cfa_aspace: c.cfa_aspace,
                    rules: c.rules.iter().map(|(r, rule)| (*r, rule.rule())).collect(),
                    default_rule: RegisterRule::SameValue,
                    ..Default::default()
                }))
            }
            Entry::Register(r, v) => {
                let reg = ctx
                    .target
                    .register(*r)
                    .ok_or_else(|| LoadError::NoSuchRegister { regno: *r, target: ctx.target.name.clone() })?;
                let size = (reg.bits / 8) as usize;
                let bytes = match v {
                    RegValue::Int(n) => {
                        let mut b: Vec<u8> = (0..size).map(|i| n.to_le_bytes().get(i).copied().unwrap_or(0)).collect();
                        if ctx.target.endian == Endian::Big {
                            b.reverse();
                        }
                        b
                    }
                    RegValue::Bytes(b) if b.len() == size => b.clone(),
                    RegValue::Bytes(b) => {
                        return Err(LoadError::RegisterSize { name: reg.name.clone(), size, given: b.len() })
                    }
                };
                ctx.registers.insert(*r, bytes);
            }
            Entry::Memory(m) => ctx.memory.push(m.clone()),
            Entry::AddrBase(b) => unit(ctx).addr_base = *b,
            Entry::DebugAddr(b) => unit(ctx).debug_addr = Arc::from(*b),
            Entry::BaseType { die, encoding, bits } => {
                let big = ctx.target.endian == Endian::Big;
                unit(ctx).base_types.insert(*die, BaseType::ate(*encoding, *bits, big));
            }
            Entry::Die(off, shape) => {
                let die = match shape {
                    DieShape::Location(e) => {
                        Die { location: Some(AttrForm::Exprloc(e.bytes.to_vec())), ..Die::default() }
                    }
                    DieShape::Const { bytes, byte_size } => {
                        Die { const_value: Some(bytes.to_vec()), byte_size: Some(*byte_size), ..Die::default() }
                    }
                    DieShape::Empty => Die::default(),
                };
                unit(ctx).dies.insert(*off, die);
            }
        }
        Ok(())
    }
}

/// The context's unit (every fuzz context has one: version 5, the
/// target's address size).
fn unit(ctx: &mut Context) -> &mut CompUnit {
    let bytes = ctx.target.address_bytes();
    ctx.cu.get_or_insert_with(|| CompUnit { version: 5, address_size: bytes, ..CompUnit::default() })
}
