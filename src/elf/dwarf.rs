//! Location expressions of `.debug_info`: every `DW_AT_location` and
//! `DW_AT_frame_base`, as exprloc or as location list, becomes an
//! [`ExprCase`] with a deterministic synthetic [`Context`].

use super::split::R;
use super::{Extracted, Options};
use crate::case::ExprCase;
use dwarfcheck_core::context::{CompUnit, Context, ResultKind};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::outcome::BaseType;
use dwarfcheck_core::target::{Endian, Target};
use foldhash::HashMap;
use foldhash::HashMapExt as _;
use gimli::{AttributeValue, EndianSlice, Operation, RunTimeEndian};
use std::sync::Arc;

/// The CFA every extracted context gives (a plausible x86-64/AArch64 stack
/// address, 16-byte aligned), in bytes.
pub const SYNTHETIC_CFA: u64 = 0x7ffd_f000_1000;
/// The TLS block base every extracted context gives.
pub const SYNTHETIC_TLS_BASE: u64 = 0x7f00_0000_0000;
/// The current thread and lane every extracted context gives, so that
/// memory of per-thread and per-lane address spaces (AMDGPU private) can be
/// bound (rule `loc.memory.bound-at-creation`); lane 0 exists on every
/// target.
pub const SYNTHETIC_THREAD_LANE: (u64, u32) = (0, 0);
/// The calling frame's CFA every extracted context gives (one page above
/// [`SYNTHETIC_CFA`]).
pub const SYNTHETIC_CALLER_CFA: u64 = SYNTHETIC_CFA + 0x1000;

/// The calling frame every extracted context gives, so that
/// `DW_OP_entry_value` and `DW_OP_LLVM_call_frame_entry_reg` evaluate
/// deeply: every register keeps its value (rule `same value`), the CFA is
/// [`SYNTHETIC_CALLER_CFA`], the call site is unknown. Like the rest of the
/// synthetic machine state it is arbitrary but fixed; real unwinding from
/// the file's CFI belongs to the CFI work (issue 4).
pub fn synthetic_caller() -> dwarfcheck_core::context::CallerFrame {
    dwarfcheck_core::context::CallerFrame {
        cfa: Some(SYNTHETIC_CALLER_CFA),
        default_rule: dwarfcheck_core::outcome::cfi::RegisterRule::SameValue,
        ..Default::default()
    }
}

/// File-wide state while walking the units of one file (and the split
/// units its skeletons lead to).
pub(super) struct Extractor<'o> {
    /// Names the file (and the `.dwo` or package of a split unit) in case
    /// origins and warnings.
    pub(super) origin: String,
    target: &'o Arc<Target>,
    seed: u64,
    /// `Options::vendor` was given: units' augmentations do not apply.
    vendor_forced: bool,
    /// The calling frame of every context ([`synthetic_caller`]).
    caller: Arc<dwarfcheck_core::context::CallerFrame>,
    /// `.debug_addr` of the file that holds the addresses: this one, or
    /// for a split unit its skeleton's file.
    pub(super) debug_addr: Arc<[u8]>,
    /// The units walked are split units without their skeleton: addresses
    /// given by index cannot be resolved, so location lists are read raw
    /// and their cases have no pc.
    pub(super) lone: bool,
    /// Where the cases and counts go.
    pub(super) out: &'o mut Extracted,
}

impl<'o> Extractor<'o> {
    /// An extractor for the file `origin` whose addresses are in
    /// `debug_addr`.
    pub(super) fn new(
        origin: &str,
        target: &'o Arc<Target>,
        opts: &Options,
        debug_addr: Arc<[u8]>,
        out: &'o mut Extracted,
    ) -> Self {
        Extractor {
            origin: origin.to_string(),
            target,
            seed: opts.seed,
            vendor_forced: opts.vendor.is_some(),
            caller: Arc::new(synthetic_caller()),
            debug_addr,
            lone: false,
            out,
        }
    }
}

/// Per-unit state: the unit's facts and a cache of shared contexts.
struct UnitState {
    encoding: gimli::Encoding,
    template: CompUnit,
    base_types: HashMap<u64, BaseType>,
    /// Contexts already built, by (pc, frame base, referenced base types).
    cache: HashMap<CtxKey, Arc<Context>>,
    /// The vendor profile the unit's `DW_AT_LLVM_augmentation` selects, if
    /// any; otherwise the target's.
    vendor: Option<dwarfcheck_core::encoding::VendorProfile>,
    /// Cases whose expressions name base types: their index in
    /// `Extracted::exprs` and their context's key before the unit's base
    /// types are known.
    typed: Vec<(usize, CtxKey)>,
    /// The expressions of the unit's cases, each distinct one stored once.
    expressions: foldhash::HashSet<Arc<[u8]>>,
}

impl UnitState {
    /// `bytes` as the unit's cases share them.
    fn shared(&mut self, bytes: &[u8]) -> Arc<[u8]> {
        if let Some(b) = self.expressions.get(bytes) {
            return b.clone();
        }
        let b: Arc<[u8]> = Arc::from(bytes);
        self.expressions.insert(b.clone());
        b
    }
}

/// `DW_AT_LLVM_augmentation` (newest heterogeneous-debugging extensions,
/// attribute encodings table): a string attribute of the compilation unit.
pub const DW_AT_LLVM_AUGMENTATION: gimli::DwAt = gimli::DwAt(0x3e09);

/// What distinguishes two extracted contexts of one unit: pc, frame base
/// expression, unit offsets of the base types the expression names.
type CtxKey = (Option<u64>, Option<Arc<[u8]>>, Vec<u64>);

/// An enclosing subprogram: DIE depth, frame base exprloc, low_pc.
type Enclosing = (isize, Option<Arc<[u8]>>, Option<u64>);

/// The DIE attribute an expression came from.
#[derive(Clone, Copy)]
enum Attr {
    Location,
    FrameBase,
}

impl Attr {
    fn name(self) -> &'static str {
        match self {
            Attr::Location => "DW_AT_location",
            Attr::FrameBase => "DW_AT_frame_base",
        }
    }
    fn short(self) -> &'static str {
        match self {
            Attr::Location => "loc",
            Attr::FrameBase => "fb",
        }
    }
}

impl Extractor<'_> {
    /// Walks one unit: every location, and its base types. A case whose
    /// expressions name base types gets its context once the walk has
    /// seen them all (a type may follow its user); when the walk stops at
    /// a bad DIE, the cases before it keep the types seen so far.
    pub(super) fn unit(
        &mut self,
        dwarf: &gimli::Dwarf<R<'_>>,
        unit: &gimli::Unit<R<'_>>,
        unit_off: u64,
    ) -> gimli::Result<()> {
        let encoding = unit.encoding();
        let mut st = UnitState {
            encoding,
            template: CompUnit {
                version: encoding.version,
                format: if encoding.format == gimli::Format::Dwarf64 { Format::Dwarf64 } else { Format::Dwarf32 },
                address_size: encoding.address_size,
                debug_addr: self.debug_addr.clone(),
                addr_base: unit.addr_base.0 as u64,
                offset: unit_off,
                ..Default::default()
            },
            base_types: HashMap::new(),
            cache: HashMap::new(),
            vendor: None,
            typed: Vec::new(),
            expressions: foldhash::HashSet::default(),
        };
        let walked = self.walk(dwarf, unit, unit_off, &mut st);
        for (index, key) in std::mem::take(&mut st.typed) {
            let (pc, fb, mut types) = key;
            types.retain(|t| st.base_types.contains_key(t));
            self.out.exprs[index].ctx = self.context(&mut st, (pc, fb, types));
        }
        walked
    }

    /// The DIEs of one unit in order: base types into `st`, locations
    /// into cases.
    fn walk(
        &mut self,
        dwarf: &gimli::Dwarf<R<'_>>,
        unit: &gimli::Unit<R<'_>>,
        unit_off: u64,
        st: &mut UnitState,
    ) -> gimli::Result<()> {
        // The unit DIE may name the vendor extension encoding it uses:
        // `[llvm:v0.0]` for the direct hetero-2020 opcodes, later versions
        // for `DW_OP_LLVM_user` (`VendorProfile::from_augmentation`).
        if let Some(root) = unit.entries().next_dfs()?.filter(|_| !self.vendor_forced) {
            if let Some(v) = root.attr_value(DW_AT_LLVM_AUGMENTATION) {
                if let Ok(text) = dwarf.attr_string(unit, v) {
                    st.vendor = dwarfcheck_core::encoding::VendorProfile::from_augmentation(&text.to_string_lossy());
                }
            }
        }
        let target_big = self.target.endian == Endian::Big;
        let mut subprograms: Vec<Enclosing> = Vec::new();
        let mut cursor = unit.entries();
        while let Some(die) = cursor.next_dfs()? {
            if die.tag() == gimli::DW_TAG_base_type {
                if let Some(t) = base_type(die, target_big) {
                    st.base_types.insert(die.offset().0 as u64, t);
                }
            }
            let depth = die.depth();
            while subprograms.last().is_some_and(|s| s.0 >= depth) {
                subprograms.pop();
            }
            let die_off = unit_off + die.offset().0 as u64;
            // The first value of each attribute, as `attr_value` gives it,
            // in one pass over the DIE's attributes.
            let (mut low_pc, mut frame_base, mut location) = (None, None, None);
            for a in die.attrs() {
                let slot = match a.name() {
                    gimli::DW_AT_low_pc => &mut low_pc,
                    gimli::DW_AT_frame_base => &mut frame_base,
                    gimli::DW_AT_location => &mut location,
                    _ => continue,
                };
                slot.get_or_insert(a.value());
            }
            let low_pc = match low_pc {
                Some(AttributeValue::Addr(a)) => Some(a),
                Some(AttributeValue::DebugAddrIndex(i)) => dwarf.address(unit, i).ok(),
                _ => None,
            };
            let outer_pc = subprograms.last().and_then(|s| s.2);
            let mut own_fb = None;
            if let Some(v) = frame_base {
                own_fb = self.attr(dwarf, unit, st, v, Attr::FrameBase, die_off, None, low_pc.or(outer_pc))?;
            }
            if die.tag() == gimli::DW_TAG_subprogram {
                subprograms.push((depth, own_fb, low_pc.or(outer_pc)));
            }
            if let Some(v) = location {
                // The innermost subprogram: this DIE if it is one.
                let (fb, pc) = subprograms.last().map(|s| (s.1.clone(), s.2)).unwrap_or((None, None));
                self.attr(dwarf, unit, st, v, Attr::Location, die_off, fb, pc)?;
            }
        }
        Ok(())
    }

    /// Turns one `DW_AT_location` / `DW_AT_frame_base` value into cases.
    /// Returns the expression bytes when the value is an exprloc (the
    /// frame base children use).
    #[allow(clippy::too_many_arguments)]
    fn attr(
        &mut self,
        dwarf: &gimli::Dwarf<R<'_>>,
        unit: &gimli::Unit<R<'_>>,
        st: &mut UnitState,
        value: AttributeValue<R<'_>>,
        attr: Attr,
        die_off: u64,
        frame_base: Option<Arc<[u8]>>,
        pc: Option<u64>,
    ) -> gimli::Result<Option<Arc<[u8]>>> {
        let frame_base = if matches!(attr, Attr::FrameBase) { None } else { frame_base };
        let exprloc = match &value {
            AttributeValue::Exprloc(gimli::Expression(b)) | AttributeValue::Block(b) => Some(*b),
            _ => None,
        };
        if let Some(bytes) = exprloc {
            let bytes = st.shared(bytes.slice());
            self.out.counts.expressions += 1;
            if matches!(attr, Attr::FrameBase) {
                self.out.counts.frame_bases += 1;
            }
            let (name, origin) = self.labels(attr, die_off, None);
            self.push(st, name, origin, bytes.clone(), pc, frame_base);
            return Ok(Some(bytes));
        }
        if self.lone {
            return self.raw_list(dwarf, unit, st, value, attr, die_off, frame_base);
        }
        let Some(mut list) = dwarf.attr_locations(unit, value)? else { return Ok(None) };
        let mut i = 0usize;
        while let Some(entry) = list.next()? {
            let (b, e) = (entry.range.begin, entry.range.end);
            self.list_entry(st, attr, die_off, (i, Range::Pc(b, e)), entry.data.0.slice(), Some(b), frame_base.clone());
            i += 1;
        }
        Ok(None)
    }

    /// The entries of a location list of a split unit read without its
    /// skeleton: addresses by index cannot be resolved, so every entry
    /// with an expression is a case without a pc (its range shown as
    /// written).
    #[allow(clippy::too_many_arguments)]
    fn raw_list(
        &mut self,
        dwarf: &gimli::Dwarf<R<'_>>,
        unit: &gimli::Unit<R<'_>>,
        st: &mut UnitState,
        value: AttributeValue<R<'_>>,
        attr: Attr,
        die_off: u64,
        frame_base: Option<Arc<[u8]>>,
    ) -> gimli::Result<Option<Arc<[u8]>>> {
        use gimli::RawLocListEntry as E;
        let Some(offset) = dwarf.attr_locations_offset(unit, value)? else { return Ok(None) };
        let mut list = dwarf.raw_locations(unit, offset)?;
        let mut i = 0usize;
        while let Some(entry) = list.next()? {
            let (range, data) = match entry {
                E::StartxLength { begin, length, data } => {
                    (format!("address index {:#x}, length {length:#x}", begin.0), data)
                }
                E::StartxEndx { begin, end, data } => (format!("address indices {:#x} to {:#x}", begin.0, end.0), data),
                E::AddressOrOffsetPair { begin, end, data }
                | E::OffsetPair { begin, end, data }
                | E::StartEnd { begin, end, data } => (format!("[{begin:#x}, {end:#x}) as written"), data),
                E::StartLength { begin, length, data } => (format!("{begin:#x} length {length:#x} as written"), data),
                E::DefaultLocation { data } => ("default location".to_string(), data),
                E::BaseAddress { .. } | E::BaseAddressx { .. } => continue,
            };
            self.list_entry(st, attr, die_off, (i, Range::Text(&range)), data.0.slice(), None, frame_base.clone());
            i += 1;
        }
        Ok(None)
    }

    /// Adds `entry` (its index and range) of a location list as a case.
    #[allow(clippy::too_many_arguments)]
    fn list_entry(
        &mut self,
        st: &mut UnitState,
        attr: Attr,
        die_off: u64,
        entry: (usize, Range<'_>),
        expr: &[u8],
        pc: Option<u64>,
        frame_base: Option<Arc<[u8]>>,
    ) {
        self.out.counts.loclist_entries += 1;
        if matches!(attr, Attr::FrameBase) {
            self.out.counts.frame_bases += 1;
        }
        let (name, origin) = self.labels(attr, die_off, Some(entry));
        let expr = st.shared(expr);
        self.push(st, name, origin, expr, pc, frame_base);
    }

    /// A case's name and origin: `die0x2a.loc` and `FILE: DIE 0x2a
    /// DW_AT_location` for an exprloc, `die0x2a.loc.3` and `FILE: DIE 0x2a
    /// DW_AT_location entry 3 [0x1000, 0x1010)` for a location-list entry.
    /// Written by hand rather than with `format!`: this runs once per
    /// extracted expression.
    fn labels(&self, attr: Attr, die_off: u64, entry: Option<(usize, Range<'_>)>) -> (String, String) {
        let mut name = String::with_capacity(24);
        name.push_str("die");
        push_hex(&mut name, die_off);
        name.push('.');
        name.push_str(attr.short());
        let mut origin = String::with_capacity(self.origin.len() + TEXT_ROOM);
        origin.push_str(&self.origin);
        origin.push_str(": DIE ");
        push_hex(&mut origin, die_off);
        origin.push(' ');
        origin.push_str(attr.name());
        if let Some((i, range)) = entry {
            name.push('.');
            push_decimal(&mut name, i as u64);
            origin.push_str(" entry ");
            push_decimal(&mut origin, i as u64);
            origin.push(' ');
            match range {
                Range::Pc(b, e) => {
                    origin.push('[');
                    push_hex(&mut origin, b);
                    origin.push_str(", ");
                    push_hex(&mut origin, e);
                    origin.push(')');
                }
                Range::Text(t) => origin.push_str(t),
            }
        }
        (name, origin)
    }

    /// Adds one case, sharing its context with earlier cases of the unit
    /// that have the same pc, frame base and referenced base types. A case
    /// whose expressions name types is noted in `st.typed` and gets its
    /// context after the walk ([`Extractor::unit`]).
    fn push(
        &mut self,
        st: &mut UnitState,
        name: String,
        origin: String,
        expr: Arc<[u8]>,
        pc: Option<u64>,
        frame_base: Option<Arc<[u8]>>,
    ) {
        let mut types = Vec::new();
        referenced_types(&expr, st.encoding, self.target.endian, &mut types);
        if let Some(fb) = &frame_base {
            referenced_types(fb, st.encoding, self.target.endian, &mut types);
        }
        types.sort_unstable();
        types.dedup();
        let ctx = if types.is_empty() {
            self.context(st, (pc, frame_base, types))
        } else {
            st.typed.push((self.out.exprs.len(), (pc, frame_base.clone(), types)));
            self.context(st, (pc, frame_base, Vec::new()))
        };
        self.out.exprs.push(ExprCase { expr, ..ExprCase::plain(name, origin, &[], ctx) });
    }

    /// The unit's context for `key` (pc, frame base, base types known to
    /// the unit), built on first use.
    fn context(&self, st: &mut UnitState, key: CtxKey) -> Arc<Context> {
        match st.cache.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.get().clone(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let key = e.key();
                let mut cu = st.template.clone();
                cu.base_types = key.2.iter().map(|t| (*t, st.base_types[t])).collect();
                let mut c = Context::new(self.target.clone());
                if let Some(v) = &st.vendor {
                    c.vendor = v.clone();
                }
                c.result_kind = Some(ResultKind::Location);
                c.pc = key.0;
                c.cfa = Some(SYNTHETIC_CFA);
                c.tls_base = Some(SYNTHETIC_TLS_BASE);
                (c.thread, c.lane) = (Some(SYNTHETIC_THREAD_LANE.0), Some(SYNTHETIC_THREAD_LANE.1));
                c.frame_base = key.1.as_deref().map(<[u8]>::to_vec);
                c.synthetic = Some(self.seed);
                c.cu = Some(cu);
                c.caller = Some(self.caller.clone());
                e.insert(Arc::new(c)).clone()
            }
        }
    }
}

/// A `DW_TAG_base_type` DIE as a [`BaseType`]: its encoding, its size
/// (`DW_AT_bit_size`, else `DW_AT_byte_size` × 8, in **bits**, fitting
/// 32 bits) and its byte order (`DW_AT_endianity`, else the target's);
/// `None` without an encoding or a size. The first value of each attribute
/// counts, as `attr_value` gives it.
fn base_type(die: &gimli::DebuggingInformationEntry<R<'_>>, target_big: bool) -> Option<BaseType> {
    let Some(AttributeValue::Encoding(enc)) = die.attr_value(gimli::DW_AT_encoding) else { return None };
    let bits = match (die.attr_value(gimli::DW_AT_byte_size), die.attr_value(gimli::DW_AT_bit_size)) {
        (_, Some(b)) => b.udata_value(),
        (Some(b), None) => b.udata_value().and_then(|v| v.checked_mul(8)),
        (None, None) => None,
    };
    let bits = u32::try_from(bits?).ok()?;
    let big = match die.attr_value(gimli::DW_AT_endianity) {
        Some(AttributeValue::Endianity(gimli::DW_END_big)) => true,
        Some(AttributeValue::Endianity(gimli::DW_END_little)) => false,
        _ => target_big,
    };
    Some(BaseType::ate(enc.0, bits, big))
}

/// A location-list entry's range as a case's origin shows it.
#[derive(Clone, Copy)]
enum Range<'a> {
    /// `[begin, end)`, program addresses.
    Pc(u64, u64),
    /// As the raw entry wrote it (addresses not resolved).
    Text(&'a str),
}

/// Appends `v` as `0x` and lowercase hexadecimal digits (as `{:#x}`).
fn push_hex(out: &mut String, v: u64) {
    out.push_str("0x");
    let digits = (64 - (v | 1).leading_zeros()).div_ceil(4);
    for k in (0..digits).rev() {
        out.push(char::from(b"0123456789abcdef"[((v >> (4 * k)) & 0xf) as usize]));
    }
}

/// Appends `v` in decimal (as `{}`).
fn push_decimal(out: &mut String, v: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut v = v;
    loop {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&buf[at..]).expect("ASCII digits"));
}

/// Room for the formatted part of a case's origin, so that formatting
/// seldom grows the string (`format!` starts small).
const TEXT_ROOM: usize = 80;

/// Appends the unit offsets of the base type DIEs that `expr`'s operations
/// name (`DW_OP_const_type`, `DW_OP_regval_type`, `DW_OP_deref_type`,
/// `DW_OP_convert`, `DW_OP_reinterpret` and their GNU forms), including
/// those inside `DW_OP_entry_value`/`DW_OP_GNU_entry_value` blocks (GCC
/// writes `DW_OP_entry_value(DW_OP_regval_type R T)`). Stops reading a
/// block at its first operation that does not decode. Blocks are read
/// from a work list, not by recursion, and at most [`MAX_TYPE_BLOCKS`] of
/// them per expression.
/// Appends to `out` the unit offsets of the base types `expr`'s typed
/// operations name (`DW_OP_const_type`, `DW_OP_regval_type`,
/// `DW_OP_deref_type`, `DW_OP_convert`, `DW_OP_reinterpret`, also inside
/// `DW_OP_entry_value` blocks), decoded with gimli; offset 0 (the generic
/// type) is left out.
pub fn referenced_types(expr: &[u8], encoding: gimli::Encoding, endian: Endian, out: &mut Vec<u64>) {
    let e = if endian == Endian::Big { RunTimeEndian::Big } else { RunTimeEndian::Little };
    let mut blocks = vec![EndianSlice::new(expr, e)];
    let mut read = 0;
    while let Some(block) = blocks.pop() {
        read += 1;
        let mut ops = gimli::Expression(block).operations(encoding);
        while let Ok(Some(op)) = ops.next() {
            let t = match op {
                Operation::TypedLiteral { base_type, .. }
                | Operation::RegisterOffset { base_type, .. }
                | Operation::Deref { base_type, .. }
                | Operation::Convert { base_type }
                | Operation::Reinterpret { base_type } => base_type.0,
                Operation::EntryValue { expression } => {
                    if read + blocks.len() < MAX_TYPE_BLOCKS {
                        blocks.push(expression);
                    }
                    continue;
                }
                _ => continue,
            };
            if t != 0 {
                out.push(t as u64);
            }
        }
    }
}

/// Most operation blocks (the expression and the entry value blocks
/// nested in it) [`referenced_types`] reads for one expression.
const MAX_TYPE_BLOCKS: usize = 16;

/// A case origin written by `Extractor::labels`, read back: the place an
/// extracted expression came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The input file, as named in the origin (with ` (...)` after it for
    /// a split unit: the `.dwo` file, or the package row).
    pub file: String,
    /// Whether the DIE is in a split unit (its offset is then in the
    /// `.dwo`'s or package's `.debug_info.dwo`).
    pub split: bool,
    /// The DIE's section offset.
    pub die: u64,
    /// `DW_AT_location` or `DW_AT_frame_base`.
    pub attribute: String,
    /// For a location-list entry: its index and its range as the origin
    /// shows it (`[0x1000, 0x1010)`, or a text for indexed addresses).
    pub entry: Option<(usize, String)>,
}

impl Place {
    /// Reads an origin `FILE: DIE 0x2a DW_AT_location` or `FILE: DIE 0x2a
    /// DW_AT_location entry 3 [0x1000, 0x1010)`; `None` for any other text
    /// (a case of a case file).
    pub fn parse(origin: &str) -> Option<Place> {
        let (file, rest) = origin.rsplit_once(": DIE ")?;
        let (die, rest) = rest.split_once(' ')?;
        let die = u64::from_str_radix(die.strip_prefix("0x")?, 16).ok()?;
        let (attribute, entry) = match rest.split_once(" entry ") {
            None => (rest, None),
            Some((a, e)) => {
                let (i, range) = e.split_once(' ')?;
                (a, Some((i.parse().ok()?, range.to_string())))
            }
        };
        if ![Attr::Location, Attr::FrameBase].iter().any(|a| a.name() == attribute) {
            return None;
        }
        let split = file.ends_with(')') && file.contains(" (");
        Some(Place { file: file.to_string(), split, die, attribute: attribute.to_string(), entry })
    }

    /// The input file's path: [`Place::file`] without a split unit's
    /// ` (...)`.
    pub fn path(&self) -> &str {
        if self.split {
            self.file.rsplit_once(" (").map_or(&self.file, |(p, _)| p)
        } else {
            &self.file
        }
    }
}

#[cfg(test)]
mod tests {
    /// Origins written by `labels` read back into their parts.
    #[test]
    fn places_read_back() {
        let p = super::Place::parse("a/b.o: DIE 0x2a DW_AT_location entry 3 [0x1000, 0x1010)").unwrap();
        assert_eq!((p.file.as_str(), p.split, p.die, p.attribute.as_str()), ("a/b.o", false, 0x2a, "DW_AT_location"));
        assert_eq!(p.entry, Some((3, "[0x1000, 0x1010)".to_string())));
        let p = super::Place::parse("x.debug (y.dwo, dwo_id 0x5): DIE 0x10 DW_AT_frame_base").unwrap();
        assert_eq!((p.split, p.path(), p.entry.clone()), (true, "x.debug", None));
        assert_eq!(super::Place::parse("specs/cases/expr/a.yaml"), None);
        assert_eq!(super::Place::parse("f: DIE 0x1 DW_AT_name"), None);
    }

    use super::{push_decimal, push_hex, referenced_types};
    use dwarfcheck_core::target::Endian;

    fn types_of(expr: &[u8]) -> Vec<u64> {
        let enc = gimli::Encoding { format: gimli::Format::Dwarf32, version: 5, address_size: 8 };
        let mut out = Vec::new();
        referenced_types(expr, enc, Endian::Little, &mut out);
        out
    }

    /// Base types named inside entry value blocks are found: GCC's
    /// `DW_OP_entry_value(DW_OP_regval_type XMM0 0x2e) DW_OP_stack_value`
    /// (libc6-dbg DIE 0x51111), the GNU form, one block inside another,
    /// and a type named outside any block. Bytes hand-assembled.
    #[test]
    fn types_inside_entry_value_blocks() {
        // a3 03 {a5 11 2e} 9f
        assert_eq!(types_of(&[0xa3, 0x03, 0xa5, 0x11, 0x2e, 0x9f]), vec![0x2e]);
        // f3 03 {f5 11 2e} 9f (DW_OP_GNU_entry_value, DW_OP_GNU_regval_type)
        assert_eq!(types_of(&[0xf3, 0x03, 0xf5, 0x11, 0x2e, 0x9f]), vec![0x2e]);
        // a3 05 {a3 03 {a5 11 2e}} a8 31 (DW_OP_convert 0x31)
        let mut t = types_of(&[0xa3, 0x05, 0xa3, 0x03, 0xa5, 0x11, 0x2e, 0xa8, 0x31]);
        t.sort_unstable();
        assert_eq!(t, vec![0x2e, 0x31]);
        // No typed operation: none.
        assert!(types_of(&[0xa3, 0x01, 0x55, 0x9f]).is_empty());
    }

    /// The hand-written digits agree with `format!` (the oracle) at the
    /// edges of every digit count.
    #[test]
    fn hand_written_digits_match_format() {
        let mut values = vec![0u64, 1, 9, 10, 15, 16, 99, 100, u64::MAX, u64::MAX - 1];
        for k in 1..64 {
            values.extend([(1u64 << k) - 1, 1u64 << k, (1u64 << k) + 1]);
        }
        for k in 1..20 {
            values.extend([10u64.pow(k) - 1, 10u64.pow(k)]);
        }
        for v in values {
            let (mut h, mut d) = (String::new(), String::new());
            push_hex(&mut h, v);
            push_decimal(&mut d, v);
            assert_eq!(h, format!("{v:#x}"));
            assert_eq!(d, format!("{v}"));
        }
    }
}
