//! Stack entries, values and location descriptions of the fast evaluator,
//! held by index in a reusable [`Scratch`] so evaluation does not allocate
//! per operation (hetero-2020 "DWARF Expression Value", "DWARF Location
//! Description").

use super::program::Program;
use dwarfcheck_core::context;
use dwarfcheck_core::outcome::{self, BaseType, NormalLocation, SingleLocation, Source};

/// Sentinel for "no arena index".
pub const NONE: u32 = u32::MAX;

/// A typed value. Values of at most 128 **bits** live in `lo`
/// (zero-extended, least significant bit first); wider ones live in
/// [`Scratch::bytes`] at `wide` (`ty.bytes()` bytes, least significant
/// byte first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value {
    /// Base type (generic or a `DW_ATE_*` type).
    pub ty: BaseType,
    /// The value when `ty.bits <= 128`.
    pub lo: u128,
    /// Arena start of the bytes when `ty.bits > 128`, else [`NONE`].
    pub wide: u32,
}

/// One single location description, or several (only from the context).
///
/// Bit offsets are in **bits** from the start of the storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// Undefined storage.
    Undefined,
    /// Memory storage of address space `aspace`; `bit` = byte address × 8 + bit.
    /// For a per-thread / per-lane address space, the storage of the thread
    /// and lane bound when the location was created (hetero-2020 "Memory
    /// Location Description Operations > DW_OP_LLVM_form_aspace_address").
    Memory {
        /// Address space.
        aspace: u64,
        /// Bit position.
        bit: u128,
        /// Thread of per-thread storage, else `None`.
        thread: Option<u64>,
        /// Lane of per-lane storage, else `None`.
        lane: Option<u32>,
    },
    /// Register storage.
    Register {
        /// DWARF register number.
        regno: u64,
        /// Bit offset.
        bit: u64,
    },
    /// Implicit storage: `len` bytes at `start` in [`Scratch::bytes`], in
    /// target memory order.
    Implicit {
        /// Arena start.
        start: u32,
        /// Length in **bytes**.
        len: u32,
        /// Bit offset.
        bit: u64,
    },
    /// Implicit pointer storage (`DW_OP_implicit_pointer`).
    ImplicitPointer {
        /// `.debug_info` offset of the DIE.
        die: u64,
        /// Byte displacement.
        disp: i64,
        /// Address space (`None`: default).
        aspace: Option<u64>,
        /// Bit offset.
        bit: u64,
    },
    /// Composite storage number `idx` in [`Scratch::composites`].
    Composite {
        /// Composite index.
        idx: u32,
        /// Bit offset.
        bit: u64,
    },
    /// Several single locations: `len` entries at `start` of [`Scratch::multi`].
    Multi {
        /// Arena start.
        start: u32,
        /// Count.
        len: u32,
    },
}

/// An implicit pointer value: what a `DW_OP_deref*` of a whole implicit
/// pointer storage pushes (hetero-2020 "Implicit Location Description
/// Operations > DW_OP_implicit_pointer"; rule `op.implicit-pointer.deref-whole`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImplicitPointer {
    /// `.debug_info` offset of the DIE.
    pub die: u64,
    /// Byte displacement.
    pub disp: i64,
    /// Address space (`None`: default).
    pub aspace: Option<u64>,
}

/// A stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A value.
    Value(Value),
    /// A location description.
    Location(Location),
    /// An implicit pointer value.
    ImplicitPointer(ImplicitPointer),
}

/// Composite location storage: a linked list of parts in [`Scratch::parts`].
#[derive(Debug, Clone, Copy)]
pub struct Composite {
    /// First part index ([`NONE`] when empty).
    pub first: u32,
    /// Last part index.
    pub last: u32,
    /// Sum of part sizes in **bits**.
    pub total_bits: u64,
    /// Whether the storage is complete (no more parts can be appended).
    pub complete: bool,
    /// Composite nesting depth: 1 + the deepest part location's.
    pub depth: u32,
    /// The size in **bits** every part has, when all parts have the same
    /// size and sit at consecutive indices of [`Scratch::parts`] (as
    /// `DW_OP_LLVM_extend` and `DW_OP_LLVM_select_bit_piece` make them);
    /// else 0. A read then finds its first part by division instead of
    /// walking the list.
    pub stride: u64,
}

/// One part of a composite.
#[derive(Debug, Clone, Copy)]
pub struct Part {
    /// Part size in **bits**.
    pub bits: u64,
    /// Part location description.
    pub location: Location,
    /// Next part index or [`NONE`].
    pub next: u32,
}

/// Reusable evaluation memory: the stack and the arenas entries point into.
/// Create one per thread and pass it to every [`Program::run`].
#[derive(Debug, Default)]
pub struct Scratch {
    /// The evaluation stack (nested evaluations push above a base index).
    pub stack: Vec<Entry>,
    /// Byte arena: wide values and implicit storage.
    pub bytes: Vec<u8>,
    /// Composite storages.
    pub composites: Vec<Composite>,
    /// Composite parts.
    pub parts: Vec<Part>,
    /// Single locations of multi-place locations.
    pub multi: Vec<Location>,
    /// Temporary buffer for reads.
    pub tmp: Vec<u8>,
    /// Operations executed so far (step budget, nested evaluations included).
    pub steps: u64,
    /// Storage created so far, in **bytes**, as the memory budget counts it
    /// (rule `expr.budget.memory`; nested evaluations included).
    pub created: u64,
    /// Composite parts visited so far, as the work budget counts them
    /// (rule `expr.budget.work`; nested evaluations included).
    pub work: u64,
    /// Index of the last operation executed by the innermost evaluation
    /// that ran (`DW_OP_entry_value` asks whether it was a `DW_OP_reg*`).
    pub last: u32,
    /// Decoded frame base programs, reused while `state.frame_base` is unchanged.
    pub(crate) frame_base: Option<Box<(Vec<u8>, Program)>>,
    /// Registers of calling frames found by unwinding whose location is
    /// being computed: (frame identity, register number) (`unwind.cyclic`).
    pub(crate) unwound_in_progress: Vec<(usize, u64)>,
}

impl Scratch {
    /// An empty scratch area.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets everything from a previous evaluation, keeping capacity.
    pub fn reset(&mut self) {
        self.stack.clear();
        self.bytes.clear();
        self.composites.clear();
        self.parts.clear();
        self.multi.clear();
        self.unwound_in_progress.clear();
        self.steps = 0;
        self.created = 0;
        self.work = 0;
    }

    /// Stores bytes in the arena; returns the start index.
    pub fn store(&mut self, b: &[u8]) -> u32 {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(b);
        start
    }

    /// A new empty incomplete composite; returns its index.
    pub fn new_composite(&mut self) -> u32 {
        self.composites.push(Composite {
            first: NONE,
            last: NONE,
            total_bits: 0,
            complete: false,
            depth: 1,
            stride: 0,
        });
        (self.composites.len() - 1) as u32
    }

    /// The bytes of a value, least significant first (`ty.bytes()` long).
    pub fn value_bytes(&self, v: &Value, out: &mut Vec<u8>) {
        out.clear();
        let n = v.ty.bytes();
        if v.wide == NONE {
            let le = v.lo.to_le_bytes();
            out.extend_from_slice(&le[..n.min(16)]);
            out.resize(n, 0);
        } else {
            out.extend_from_slice(&self.bytes[v.wide as usize..v.wide as usize + n]);
        }
    }

    /// The low 128 bits of a value of any width.
    pub fn low128(&self, v: &Value) -> u128 {
        if v.wide == NONE {
            return v.lo;
        }
        let mut b = [0u8; 16];
        b.copy_from_slice(&self.bytes[v.wide as usize..v.wide as usize + 16]);
        u128::from_le_bytes(b)
    }

    /// The value as an unsigned number if it fits in 64 bits.
    pub fn as_u64(&self, v: &Value) -> Option<u64> {
        if v.wide != NONE && self.bytes[v.wide as usize + 16..v.wide as usize + v.ty.bytes()].iter().any(|&b| b != 0) {
            return None;
        }
        u64::try_from(self.low128(v)).ok()
    }

    /// A value of type `ty` from its bytes, least significant first.
    /// `le` must be at least `ty.bytes()` long; bits above `ty.bits` are cleared.
    pub fn make_value(&mut self, ty: BaseType, le: &[u8]) -> Value {
        if ty.bits <= 128 {
            let mut b = [0u8; 16];
            let n = ty.bytes().min(16);
            b[..n].copy_from_slice(&le[..n]);
            Value { ty, lo: mask(u128::from_le_bytes(b), ty.bits), wide: NONE }
        } else {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(&le[..ty.bytes()]);
            dwarfcheck_core::outcome::value::mask_top(&mut self.bytes[start..], ty.bits);
            Value { ty, lo: 0, wide: start as u32 }
        }
    }

    /// Imports a context entry (initial stack, current object).
    pub fn import(&mut self, e: &context::Entry) -> Entry {
        match e {
            context::Entry::Value(v) => {
                let mut le = v.bytes.clone();
                le.resize(v.ty.bytes(), 0);
                Entry::Value(self.make_value(v.ty, &le))
            }
            context::Entry::Location(l) => Entry::Location(self.import_location(l)),
        }
    }

    pub(super) fn import_location(&mut self, l: &NormalLocation) -> Location {
        let singles: Vec<Location> = l.places.iter().map(|p| self.import_single(p)).collect();
        self.multi_of(&singles)
    }

    pub(super) fn multi_of(&mut self, singles: &[Location]) -> Location {
        match singles {
            [] => Location::Undefined,
            [one] => *one,
            many => {
                let start = self.multi.len() as u32;
                self.multi.extend_from_slice(many);
                Location::Multi { start, len: many.len() as u32 }
            }
        }
    }

    pub(super) fn import_single(&mut self, s: &SingleLocation) -> Location {
        match s {
            SingleLocation::Simple(src) => self.import_source(src),
            SingleLocation::Composite(pieces) => {
                let idx = self.new_composite();
                for p in pieces {
                    let locs: Vec<Location> = p.sources.iter().map(|s| self.import_source(s)).collect();
                    let location = self.multi_of(&locs);
                    self.link_part(idx, p.bits, location);
                }
                self.composites[idx as usize].complete = true;
                Location::Composite { idx, bit: 0 }
            }
        }
    }

    pub(super) fn import_source(&mut self, s: &Source) -> Location {
        match s {
            Source::Memory { aspace, bit_addr, thread, lane } => {
                Location::Memory { aspace: *aspace, bit: *bit_addr, thread: *thread, lane: *lane }
            }
            Source::Register { regno, bit_offset } => Location::Register { regno: *regno, bit: *bit_offset },
            Source::Implicit { bytes, bit_offset } => {
                let start = self.store(bytes);
                Location::Implicit { start, len: bytes.len() as u32, bit: *bit_offset }
            }
            Source::ImplicitPointer { die, aspace, byte_displacement, bit_offset } => {
                Location::ImplicitPointer { die: *die, disp: *byte_displacement, aspace: *aspace, bit: *bit_offset }
            }
            Source::Undefined => Location::Undefined,
        }
    }

    /// The outcome form of a value.
    pub fn export_value(&self, v: &Value) -> outcome::Value {
        let mut bytes = Vec::with_capacity(v.ty.bytes());
        self.value_bytes(v, &mut bytes);
        outcome::Value { ty: v.ty, bytes }
    }

    pub(super) fn source(&self, l: &Location) -> Source {
        match *l {
            Location::Undefined | Location::Composite { .. } | Location::Multi { .. } => Source::Undefined,
            Location::Memory { aspace, bit, thread, lane } => Source::Memory { aspace, bit_addr: bit, thread, lane },
            Location::Register { regno, bit } => Source::Register { regno, bit_offset: bit },
            Location::Implicit { start, len, bit } => Source::Implicit {
                bytes: self.bytes[start as usize..start as usize + len as usize].to_vec(),
                bit_offset: bit,
            },
            Location::ImplicitPointer { die, disp, aspace, bit } => {
                Source::ImplicitPointer { die, aspace, byte_displacement: disp, bit_offset: bit }
            }
        }
    }

    /// Appends a part of `bits` bits at `location` to composite `idx` as it
    /// is (no flattening: see `Scratch::append_part`).
    pub fn link_part(&mut self, idx: u32, bits: u64, location: Location) {
        let depth = self.nesting(&location) + 1;
        let c = &mut self.composites[idx as usize];
        c.depth = c.depth.max(depth);
        let p = self.parts.len() as u32;
        self.parts.push(Part { bits, location, next: NONE });
        let c = &mut self.composites[idx as usize];
        if c.first == NONE {
            c.first = p;
            c.stride = bits;
        } else {
            if c.stride != bits || c.last + 1 != p {
                c.stride = 0;
            }
            self.parts[c.last as usize].next = p;
        }
        let c = &mut self.composites[idx as usize];
        c.last = p;
        c.total_bits = c.total_bits.saturating_add(bits);
    }

    /// Gives back composite `idx` and its parts after the entry naming it
    /// was dropped, when nothing can still reach it: it is the newest
    /// composite, its parts are the newest parts and consecutive (as
    /// `DW_OP_LLVM_extend` and `DW_OP_LLVM_select_bit_piece` leave them, so
    /// no part of another composite was made after them and none can
    /// name it), and no stack entry names it. A loop that builds and drops
    /// composites then reuses the same memory. The memory budget is not
    /// refunded (rule `expr.budget.memory` counts what was created).
    pub fn release_newest(&mut self, idx: u32) {
        if idx as usize + 1 != self.composites.len() {
            return;
        }
        let c = self.composites[idx as usize];
        let consecutive = c.stride > 0 || c.first == c.last;
        if c.first == NONE || !consecutive || c.last as usize + 1 != self.parts.len() {
            return;
        }
        let names = |l: &Location| matches!(*l, Location::Composite { idx: j, .. } if j == idx);
        let named = self.stack.iter().any(|e| match e {
            Entry::Location(Location::Multi { start, len }) => {
                self.multi[*start as usize..(*start + *len) as usize].iter().any(names)
            }
            Entry::Location(l) => names(l),
            _ => false,
        });
        if !named {
            self.parts.truncate(c.first as usize);
            self.composites.pop();
        }
    }

    /// Composite nesting depth of a location (0: not a composite).
    pub(super) fn nesting(&self, l: &Location) -> u32 {
        match *l {
            Location::Composite { idx, .. } => self.composites[idx as usize].depth,
            Location::Multi { start, len } => {
                (start..start + len).map(|i| self.nesting(&self.multi[i as usize])).max().unwrap_or(0)
            }
            _ => 0,
        }
    }
}

/// `v` with bits at and above `bits` cleared.
#[inline]
pub fn mask(v: u128, bits: u32) -> u128 {
    if bits >= 128 {
        v
    } else {
        v & ((1u128 << bits) - 1)
    }
}

/// An incomplete composite left on top at the end of an evaluation becomes
/// complete (rule `expr.result.incomplete-composite-completed`).
pub fn complete_top(s: &mut Scratch, e: &Entry) {
    if let Entry::Location(Location::Composite { idx, .. }) = e {
        s.composites[*idx as usize].complete = true;
    }
}
