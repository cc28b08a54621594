//! Lowers one procedure's Tru64 optimization data to DWARF 5 as data (issue 18 item 4): location lists, scope ranges, line rows; [`write_dwarf`] writes them with `gimli::write`.
//!
//! - A split lifetime variable ([`View::splits`], the first description
//!   of each target, as [`View::location_at`] reads it) becomes one
//!   location list: one entry per child whose range meets the procedure
//!   (overlapping children give overlapping entries, both places active),
//!   and, under the normal scheme, one entry with the target's own
//!   location per maximal gap no child covers. A duplicate lowers the
//!   description it refers to; the promoted scheme has no gap entries.
//! - A discontiguous scope becomes a `DW_AT_ranges` list of its resolved
//!   ranges.
//! - Semantic events become line rows, `is_stmt` per [`is_stmt`].
//! - Inlined calls are not lowered: the seed gives no layout for
//!   `PPODE_INLINED_CALL` (docs/ambiguities.md 120); they are counted.
//!
//! Every address is in the procedure's range `[base, base + 4 × insns)`
//! ([`extent`]). Locations lower per [`place_of`] and [`expression`];
//! registers go through a [`LowerTarget`] (the Alpha numbering,
//! [`ALPHA`]).

use super::codes;
use super::model::{Location, Optrndx, Record, Scheme, SplitDesc, Target};
use super::resolve::{resolve_children, resolve_scope, Span, View};
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use std::collections::{BTreeMap, BTreeSet};

/// The most instructions a procedure of unknown size is taken to have
/// (its extent is then read from the data, [`extent`]).
pub const MAX_DERIVED_INSNS: u64 = 1 << 20;

/// The register numbering and frame register a lowering targets.
#[derive(Debug, Clone, Copy)]
pub struct LowerTarget {
    /// A name for reports.
    pub name: &'static str,
    /// The DWARF register number of an Alpha register as a symbol's value
    /// names it (0..=31 integer, 32..=63 floating point), or `None`.
    pub dwarf_register: fn(u64) -> Option<u64>,
    /// The Alpha register (as [`LowerTarget::dwarf_register`] takes it)
    /// that frame offsets (`scAbs` locals and parameters) count from.
    pub frame_register: u64,
    /// The core target description evaluators run on.
    pub core: fn() -> dwarfcheck_core::target::Target,
}

/// The Alpha DWARF numbering: `$0`..`$31` are 0..31 and `$f0`..`$f31`
/// are 32..63, the numbering GCC's Alpha port emits (its
/// `DBX_REGISTER_NUMBER` is the identity over hard registers 0..63) and
/// GDB's `alpha-tdep.c` reads. Symbol values use the same numbers (ECOFF
/// numbers floating-point registers from 32, docs/ambiguities.md 121).
/// Frame offsets count from `$sp` (`$30`, ambiguity 121).
pub const ALPHA: LowerTarget =
    LowerTarget { name: "alpha", dwarf_register: alpha_register, frame_register: 30, core: alpha_target };

fn alpha_register(r: u64) -> Option<u64> {
    (r < 64).then_some(r)
}

/// The core target for [`ALPHA`]: 64 registers of 64 bits named `r0`..
/// `r31`, `f0`..`f31`, flat 64-bit little-endian memory, return address
/// in `r26` (`$ra`).
pub fn alpha_target() -> dwarfcheck_core::target::Target {
    use dwarfcheck_core::target::{AddressSpace, Arch, Endian, Register};
    let reg =
        |n: u64| Register { number: n, name: if n < 32 { format!("r{n}") } else { format!("f{}", n - 32) }, bits: 64 };
    dwarfcheck_core::target::Target {
        name: "alpha".into(),
        arch: Arch::Other,
        endian: Endian::Little,
        registers: (0..64).map(reg).collect(),
        address_spaces: vec![AddressSpace {
            number: 0,
            name: "memory".into(),
            address_bits: 64,
            per_thread: false,
            per_lane: false,
        }],
        lanes: 1,
        vendor: dwarfcheck_core::encoding::VendorProfile::gnu(),
        return_address_register: 26,
    }
}

/// What a symbol-table location means, in Alpha terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Place {
    /// In a register (`scRegister`): the Alpha register number.
    Register(u64),
    /// In memory at the address a register holds (`scVarRegister`).
    AtRegister(u64),
    /// In memory at a signed byte offset from the frame register
    /// (`scAbs` of an `stLocal` or `stParam`).
    FrameOffset(i64),
    /// In memory at a fixed address (`scData`, `scBss`, or `scAbs` of an
    /// `stGlobal` or `stStatic`), bytes.
    Address(u64),
}

/// The place `l` names, or `None` for a class with no DWARF form here
/// (`scNil`, `scText`, `scUnallocated`, `scVar`, unknown classes, a
/// register number above 63): docs/ambiguities.md 121.
pub fn place_of(l: &Location) -> Option<Place> {
    let reg = u64::try_from(l.value).ok().filter(|r| *r < 64);
    match (l.st, l.sc) {
        (_, 4) => reg.map(Place::Register),
        (_, 19) => reg.map(Place::AtRegister),
        (3 | 4, 5) => Some(Place::FrameOffset(l.value)),
        (1 | 2, 5) | (_, 2 | 3) => Some(Place::Address(l.value as u64)),
        _ => None,
    }
}

/// The DWARF expression for `p` on `t`: `DW_OP_reg<n>`/`DW_OP_regx`,
/// `DW_OP_breg<n>`/`DW_OP_bregx` (offset 0, or the frame offset from the
/// frame register), or `DW_OP_addr` with an 8-byte address. `None` when
/// `t` has no DWARF number for the register.
pub fn expression(p: Place, t: &LowerTarget) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let breg = |out: &mut Vec<u8>, n: u64, off: i64| {
        if n < 32 {
            out.push(0x70 + n as u8);
        } else {
            out.push(0x92);
            write_uleb(out, n);
        }
        write_sleb(out, off);
    };
    match p {
        Place::Register(r) => {
            let n = (t.dwarf_register)(r)?;
            if n < 32 {
                out.push(0x50 + n as u8);
            } else {
                out.push(0x90);
                write_uleb(&mut out, n);
            }
        }
        Place::AtRegister(r) => breg(&mut out, (t.dwarf_register)(r)?, 0),
        Place::FrameOffset(o) => breg(&mut out, (t.dwarf_register)(t.frame_register)?, o),
        Place::Address(a) => {
            out.push(0x03);
            out.extend(a.to_le_bytes());
        }
    }
    Some(out)
}

/// Where a location list entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum EntryFrom {
    /// The child of this index in the lowered description.
    Child(usize),
    /// The target's own location, where no child applies.
    Default,
}

/// One location list entry: `[begin, end)` in bytes, the expression.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LocEntry {
    /// First address (bytes).
    pub begin: u64,
    /// Address after the last (bytes).
    pub end: u64,
    /// The DWARF expression.
    pub expr: Vec<u8>,
    /// What it lowers.
    pub from: EntryFrom,
}

/// One variable's location list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VariableList {
    /// The variable.
    pub target: Target,
    /// Entries by begin address (an entry per child, then gaps).
    pub entries: Vec<LocEntry>,
    /// Children or default locations with no DWARF form ([`place_of`]):
    /// no entry was written for them.
    pub unlowered: usize,
}

/// One discontiguous scope's ranges, `[begin, end)` in bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ScopeRanges {
    /// The scope.
    pub scope: Optrndx,
    /// Its non-empty ranges inside the procedure, in stream order.
    pub ranges: Vec<(u64, u64)>,
}

/// One line-table row from the semantic events at one instruction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LineRow {
    /// The instruction's address (bytes).
    pub address: u64,
    /// The event codes there, in stream order (no `PPODSE_NONE`).
    pub events: Vec<u8>,
    /// `is_stmt`: any event there that [`is_stmt`] marks.
    pub is_stmt: bool,
    /// `basic_block`: a label event is there.
    pub basic_block: bool,
}

/// Whether a row for semantic event `code` (Table 12-1) is a statement
/// boundary: write, control, call and label events are (each is a
/// point where a user-visible action happens or starts); an
/// instruction-only event gives a row that is not; `PPODSE_NONE` (a
/// count filler) and unknown codes give no row (`None`).
/// docs/ambiguities.md 122.
pub fn is_stmt(code: u8) -> Option<bool> {
    match code {
        1..=4 => Some(true),
        5 => Some(false),
        _ => None,
    }
}

/// One procedure lowered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Lowered {
    /// The procedure's first address (bytes).
    pub low: u64,
    /// Instructions lowered ([`extent`]); the range ends at
    /// `low + 4 × insns`.
    pub insns: u64,
    /// One list per described variable, in stream order.
    pub lists: Vec<VariableList>,
    /// One per discontiguous scope, in stream order.
    pub scopes: Vec<ScopeRanges>,
    /// Line rows by address.
    pub lines: Vec<LineRow>,
    /// Semantic events outside the procedure (no row).
    pub events_outside: usize,
    /// `PPODE_INLINED_CALL` records (not lowered).
    pub inlined_calls: usize,
}

impl Lowered {
    /// The address after the procedure (bytes).
    pub fn high(&self) -> u64 {
        self.low + self.insns * codes::INSN_BYTES
    }
}

/// Instructions of the procedure as lowered: `insns` when given, else one
/// past the highest instruction any child, scope range or event reaches
/// (at most [`MAX_DERIVED_INSNS`]; docs/ambiguities.md 123); either way
/// cut so that every address fits in 64 bits.
pub fn extent(view: &View<'_>) -> u64 {
    let fits = (u64::MAX - view.procedure.base) / codes::INSN_BYTES;
    let n = view.procedure.insns.unwrap_or_else(|| {
        let ends = view
            .splits()
            .flat_map(|d| resolve_children(&d.children).into_iter().map(|c| c.span))
            .chain(scope_spans(view).into_iter().flat_map(|(_, s)| s))
            .map(|s| s.first + i128::from(s.len))
            .chain(event_insns(view).into_iter().map(|(i, _)| i + 1));
        let top = ends.max().unwrap_or(0).clamp(0, i128::from(MAX_DERIVED_INSNS));
        top as u64
    });
    n.min(fits)
}

/// `s` cut to instructions `0..n`, as `(first, end)` indices, if any is left.
fn clip(s: &Span, n: u64) -> Option<(u64, u64)> {
    let first = s.first.max(0);
    let end = (s.first + i128::from(s.len)).min(i128::from(n));
    (first < end).then_some((first as u64, end as u64))
}

/// Each discontiguous scope with its resolved spans, in stream order.
fn scope_spans(view: &View<'_>) -> Vec<(Optrndx, Vec<Span>)> {
    view.records
        .iter()
        .flat_map(|r| match r {
            Record::DiscontigScope { scopes, .. } => scopes.as_slice(),
            _ => &[],
        })
        .map(|s| (s.scope, resolve_scope(view.scope_begin(s.scope), &s.ranges)))
        .collect()
}

/// Each semantic event's instruction (the sum of the counts up to it,
/// ambiguity 119) and code, in stream order.
fn event_insns(view: &View<'_>) -> Vec<(i128, u8)> {
    let mut at: i128 = 0;
    let mut out = Vec::new();
    for r in view.records {
        if let Record::SemEvent { events, .. } = r {
            for e in events {
                at += i128::from(e.count);
                out.push((at, e.event));
            }
        }
    }
    out
}

/// Lowers the variable of `first`, its first description, over `n`
/// instructions; `referred` gives the description a duplicate refers to.
fn lower_variable<'a>(
    view: &View<'a>,
    first: &'a SplitDesc,
    referred: &BTreeMap<Optrndx, &'a SplitDesc>,
    n: u64,
    lt: &LowerTarget,
) -> VariableList {
    let mut l = VariableList { target: first.target.clone(), entries: Vec::new(), unlowered: 0 };
    let mut desc = first;
    if desc.scheme == Scheme::Duplicate {
        match desc.duplicate_of.and_then(|o| referred.get(&o).copied()) {
            Some(d) => desc = d,
            None => return l,
        }
    }
    let addr = |i: u64| view.procedure.base + i * codes::INSN_BYTES;
    let mut covered: Vec<(u64, u64)> = Vec::new();
    for (k, c) in resolve_children(&desc.children).iter().enumerate() {
        let Some((a, b)) = clip(&c.span, n) else { continue };
        covered.push((a, b));
        match place_of(&c.location).and_then(|p| expression(p, lt)) {
            Some(expr) => l.entries.push(LocEntry { begin: addr(a), end: addr(b), expr, from: EntryFrom::Child(k) }),
            None => l.unlowered += 1,
        }
    }
    if desc.scheme == Scheme::Normal {
        let own = view.symbols.find(&desc.target).and_then(|s| s.location).filter(|l| l.sc != codes::SC_UNALLOCATED);
        if let Some(own) = own {
            match place_of(&own).and_then(|p| expression(p, lt)) {
                Some(expr) => {
                    for (a, b) in gaps(covered, n) {
                        l.entries.push(LocEntry {
                            begin: addr(a),
                            end: addr(b),
                            expr: expr.clone(),
                            from: EntryFrom::Default,
                        });
                    }
                }
                None => l.unlowered += 1,
            }
        }
    }
    l.entries.sort_by_key(|e| (e.begin, e.end));
    l
}

/// The maximal runs of `0..n` that no span of `covered` holds.
fn gaps(mut covered: Vec<(u64, u64)>, n: u64) -> Vec<(u64, u64)> {
    covered.sort_unstable();
    let mut out = Vec::new();
    let mut at = 0;
    for (a, b) in covered {
        if a > at {
            out.push((at, a));
        }
        at = at.max(b);
    }
    if at < n {
        out.push((at, n));
    }
    out
}

/// Lowers the procedure `view` describes for `lt`. Work is the records'
/// size times a logarithm (maps of targets and rows, a sort per list).
pub fn lower(view: &View<'_>, lt: &LowerTarget) -> Lowered {
    let n = extent(view);
    let low = view.procedure.base;
    let addr = |i: u64| low + i * codes::INSN_BYTES;
    // The first description of each target ([`View::split_of`]) and of
    // each local target not a duplicate ([`View::referred`]), found once.
    let mut seen = BTreeSet::new();
    let mut referred: BTreeMap<Optrndx, &SplitDesc> = BTreeMap::new();
    for d in view.splits() {
        if let (Target::Local(o), false) = (&d.target, d.scheme == Scheme::Duplicate) {
            referred.entry(*o).or_insert(d);
        }
    }
    let lists =
        view.splits().filter(|d| seen.insert(&d.target)).map(|d| lower_variable(view, d, &referred, n, lt)).collect();
    let scopes = scope_spans(view)
        .into_iter()
        .map(|(scope, spans)| ScopeRanges {
            scope,
            ranges: spans.iter().filter_map(|s| clip(s, n)).map(|(a, b)| (addr(a), addr(b))).collect(),
        })
        .collect();
    let mut rows: BTreeMap<u64, LineRow> = BTreeMap::new();
    let mut events_outside = 0;
    for (i, code) in event_insns(view) {
        let Some(stmt) = is_stmt(code) else { continue };
        if i < 0 || i >= i128::from(n) {
            events_outside += 1;
            continue;
        }
        let address = addr(i as u64);
        let r = rows.entry(address).or_insert_with(|| LineRow {
            address,
            events: Vec::new(),
            is_stmt: false,
            basic_block: false,
        });
        r.events.push(code);
        r.is_stmt |= stmt;
        r.basic_block |= code == codes::EVENT_LABEL;
    }
    let lines: Vec<LineRow> = rows.into_values().collect();
    let inlined_calls = view.records.iter().filter(|r| r.tag() == codes::TAG_INLINED_CALL).count();
    Lowered { low, insns: n, lists, scopes, lines, events_outside, inlined_calls }
}

/// What [`write_dwarf`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The sections by name (`.debug_abbrev`, `.debug_info`,
    /// `.debug_line`, `.debug_loclists`, `.debug_rnglists`, ...).
    pub sections: Vec<(&'static str, Vec<u8>)>,
    /// Each list's offset in `.debug_loclists`, in [`Lowered::lists`] order.
    pub list_offsets: Vec<u64>,
    /// Each scope's offset in `.debug_rnglists`, in [`Lowered::scopes`] order.
    pub range_offsets: Vec<u64>,
}

impl Written {
    /// The bytes of section `name` (empty when not written).
    pub fn section(&self, name: &str) -> &[u8] {
        self.sections.iter().find(|(n, _)| *n == name).map_or(&[], |(_, b)| b.as_slice())
    }
}

/// Writes `l` as one DWARF 5 unit (8-byte addresses) with gimli's writer:
/// a compile unit and a subprogram ([`PROCEDURE`]) over the procedure, one
/// `DW_TAG_variable` per list ([`variable_name`], an 8-byte unsigned
/// base type, `DW_AT_location`: a `.debug_loclists` list of
/// `DW_LLE_start_end`-style entries as gimli writes them), one
/// `DW_TAG_lexical_block` per scope (`DW_AT_ranges`; it holds one
/// constant, `tru64_scope_<k>`, because GDB drops blocks without
/// symbols), and a line program
/// with one sequence over the procedure holding the rows (line 0: the
/// events carry no line). The offsets are read back with gimli's reader.
///
/// Errors: gimli's writer or reader refuses, in words.
pub fn write_dwarf(l: &Lowered) -> Result<Written, String> {
    use gimli::write::{
        Address, AttributeValue, DwarfUnit, Expression, LineProgram, LineString, Location, LocationList, Range,
        RangeList,
    };
    use gimli::{constants as dw, Encoding, LineEncoding};
    let encoding = Encoding { format: gimli::Format::Dwarf32, version: 5, address_size: 8 };
    let mut du = DwarfUnit::new(encoding);
    let mut lines = LineProgram::new(
        encoding,
        LineEncoding::default(),
        LineString::String(b"/".to_vec()),
        None,
        LineString::String(b"tru64-procedure".to_vec()),
        None,
    );
    if !l.lines.is_empty() {
        let dir = lines.default_directory();
        let file = lines.add_file(LineString::String(b"tru64-procedure".to_vec()), dir, None);
        lines.begin_sequence(Some(Address::Constant(l.low)));
        for r in &l.lines {
            let row = lines.row();
            row.address_offset = r.address - l.low;
            row.file = file;
            row.line = 0;
            row.is_statement = r.is_stmt;
            row.basic_block = r.basic_block;
            lines.generate_row();
        }
        lines.end_sequence(l.high() - l.low);
    }
    du.unit.line_program = lines;
    let unit = &mut du.unit;
    let root = unit.root();
    unit.get_mut(root).set(dw::DW_AT_name, AttributeValue::String(b"tru64-procedure".to_vec()));
    unit.get_mut(root).set(dw::DW_AT_low_pc, AttributeValue::Address(Address::Constant(l.low)));
    unit.get_mut(root).set(dw::DW_AT_high_pc, AttributeValue::Udata(l.high() - l.low));
    // Every variable is typed as a 64-bit unsigned integer, the width of
    // an Alpha register, so that a debugger can show its value.
    let ty = unit.add(root, dw::DW_TAG_base_type);
    unit.get_mut(ty).set(dw::DW_AT_name, AttributeValue::String(b"unsigned long".to_vec()));
    unit.get_mut(ty).set(dw::DW_AT_byte_size, AttributeValue::Udata(8));
    unit.get_mut(ty).set(dw::DW_AT_encoding, AttributeValue::Encoding(dw::DW_ATE_unsigned));
    let sub = unit.add(root, dw::DW_TAG_subprogram);
    unit.get_mut(sub).set(dw::DW_AT_name, AttributeValue::String(PROCEDURE.as_bytes().to_vec()));
    unit.get_mut(sub).set(dw::DW_AT_external, AttributeValue::Flag(true));
    unit.get_mut(sub).set(dw::DW_AT_low_pc, AttributeValue::Address(Address::Constant(l.low)));
    unit.get_mut(sub).set(dw::DW_AT_high_pc, AttributeValue::Udata(l.high() - l.low));
    for (i, v) in l.lists.iter().enumerate() {
        let list = LocationList(
            v.entries
                .iter()
                .map(|e| Location::StartEnd {
                    begin: Address::Constant(e.begin),
                    end: Address::Constant(e.end),
                    data: Expression::raw(e.expr.clone()),
                })
                .collect(),
        );
        let id = unit.locations.add(list);
        let var = unit.add(sub, dw::DW_TAG_variable);
        unit.get_mut(var).set(dw::DW_AT_name, AttributeValue::String(variable_name(i).into_bytes()));
        unit.get_mut(var).set(dw::DW_AT_type, AttributeValue::UnitRef(ty));
        unit.get_mut(var).set(dw::DW_AT_location, AttributeValue::LocationListRef(id));
    }
    for (k, s) in l.scopes.iter().enumerate() {
        let ranges =
            s.ranges.iter().map(|&(a, b)| Range::StartEnd { begin: Address::Constant(a), end: Address::Constant(b) });
        let id = unit.ranges.add(RangeList(ranges.collect()));
        let block = unit.add(sub, dw::DW_TAG_lexical_block);
        unit.get_mut(block).set(dw::DW_AT_ranges, AttributeValue::RangeListRef(id));
        // A block holding no symbol is dropped by GDB's reader: each holds
        // one constant naming it.
        let marker = unit.add(block, dw::DW_TAG_variable);
        unit.get_mut(marker).set(dw::DW_AT_name, AttributeValue::String(format!("tru64_scope_{k}").into_bytes()));
        unit.get_mut(marker).set(dw::DW_AT_type, AttributeValue::UnitRef(ty));
        unit.get_mut(marker).set(dw::DW_AT_const_value, AttributeValue::Udata(k as u64));
    }
    let out = crate::synth::dwarf::write_unit(&mut du).map_err(|e| e.to_string())?;
    let mut w = Written { sections: out, list_offsets: Vec::new(), range_offsets: Vec::new() };
    read_offsets(&mut w)?;
    if w.list_offsets.len() != l.lists.len() || w.range_offsets.len() != l.scopes.len() {
        return Err("reading the unit back: lists or ranges missing".into());
    }
    Ok(w)
}

/// The name of the subprogram (and of its ELF symbol in
/// [`super::standin`]'s executable).
pub const PROCEDURE: &str = "tru64_procedure";

/// The name [`write_dwarf`] gives the variable of list `i` of
/// [`Lowered::lists`].
pub fn variable_name(i: usize) -> String {
    format!("tru64_var_{i}")
}

/// Fills `w`'s list and range offsets from its `.debug_info`, in DIE order.
fn read_offsets(w: &mut Written) -> Result<(), String> {
    use gimli::{constants as dw, LittleEndian};
    let info = gimli::DebugInfo::new(w.section(".debug_info"), LittleEndian);
    let abbrev = gimli::DebugAbbrev::new(w.section(".debug_abbrev"), LittleEndian);
    let bad = |e: gimli::Error| format!("reading the unit back: {e}");
    let header = info.units().next().map_err(bad)?.ok_or("reading the unit back: no unit")?;
    let abbrevs = header.abbreviations(&abbrev).map_err(bad)?;
    let mut entries = header.entries(&abbrevs);
    let (mut lists, mut ranges) = (Vec::new(), Vec::new());
    while let Some(e) = entries.next_dfs().map_err(bad)? {
        let offset = |at: dw::DwAt| match e.attr_value(at) {
            Some(gimli::AttributeValue::LocationListsRef(o)) => Some(o.0 as u64),
            Some(gimli::AttributeValue::RangeListsRef(o)) => Some(o.0 as u64),
            Some(gimli::AttributeValue::SecOffset(o)) => Some(o as u64),
            _ => None,
        };
        // The blocks' marker constants have no location.
        if e.tag() == dw::DW_TAG_variable && e.attr_value(dw::DW_AT_const_value).is_none() {
            lists.push(offset(dw::DW_AT_location).ok_or("reading the unit back: a variable without a list")?);
        } else if e.tag() == dw::DW_TAG_lexical_block {
            ranges.push(offset(dw::DW_AT_ranges).ok_or("reading the unit back: a block without ranges")?);
        }
    }
    w.list_offsets = lists;
    w.range_offsets = ranges;
    Ok(())
}
