//! Stack entries of the reference interpreter: values, implicit pointer
//! values and location descriptions, in the shape the hetero-2020 text uses.
//!
//! hetero-2020 "DWARF Location Description": a location description is one or
//! more single location descriptions; each names a location storage and a
//! bit offset into it. Composite storage is a list of parts (bit size +
//! part location description) and is either incomplete or complete
//! ("Composite Location Description Operations").

use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::location::RawSingle;
use dwarfcheck_core::outcome::{NormalLocation, RawLocation, RawPiece, SingleLocation, Source, Value};
use std::sync::Arc;

/// The deepest composite nesting kept as it is. A part location nesting
/// this deep is replaced by its normal form cut to the part's bits (same
/// meaning, nesting 1), so that the functions that walk a location
/// description recursively (reading, normalising) never go deeper than
/// this, whatever the input (docs/architecture.md §9).
pub const MAX_NESTING: u32 = 64;

/// One entry of the DWARF stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A value: a base type and a literal value.
    Value(Value),
    /// An implicit pointer value (IPV): what `DW_OP_deref*` yields when it
    /// reads the whole storage of a `DW_OP_implicit_pointer` location. It
    /// remembers that location so `DW_OP_stack_value` can give it back.
    /// Its type is the generic type (default address space only, here).
    ImplicitPointerValue(Loc),
    /// A location description.
    Location(Loc),
}

/// A location description: one or more single location descriptions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    /// The single location descriptions (never empty).
    pub singles: Vec<Single>,
}

/// A single location description: a storage and a bit offset into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Single {
    /// The location storage.
    pub storage: Storage,
    /// Position in **bits** from the start of the storage. Ignored for
    /// undefined storage (which has no bit offset).
    pub bit_offset: u128,
}

/// The five kinds of location storage, plus the implicit pointer storage
/// that `DW_OP_implicit_pointer` creates (an implicit storage that records a
/// DIE instead of bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// Memory of address space `aspace`; for a per-thread / per-lane
    /// address space, the storage of the thread / lane it was bound to when
    /// the location description was created (`loc.memory.bound-at-creation`).
    Memory {
        /// DWARF address space identifier (0 = default).
        aspace: u64,
        /// Thread of per-thread storage; `None` for storage not per thread.
        thread: Option<u64>,
        /// Lane of per-lane storage; `None` for storage not per lane.
        lane: Option<u32>,
    },
    /// Register `regno` of the top call frame.
    Register {
        /// DWARF register number.
        regno: u64,
    },
    /// Implicit storage holding these bytes (memory order).
    Implicit {
        /// The storage contents, shared by copies of the location
        /// description (never changed once created).
        bytes: Arc<Vec<u8>>,
    },
    /// Implicit storage of a pointer to DIE `die`, displaced by `disp` bytes,
    /// in address space `aspace`; its size in bits is that address space's
    /// address size (`op.implicit-pointer.creates`,
    /// `op.aspace-implicit-pointer.creates`).
    ImplicitPointer {
        /// `.debug_info` offset of the DIE.
        die: u64,
        /// Byte displacement (operand B).
        disp: i64,
        /// DWARF address space (0: the default one, `DW_OP_implicit_pointer`).
        aspace: u64,
    },
    /// Undefined storage: no size, cannot be read.
    Undefined,
    /// Composite storage.
    Composite {
        /// The parts in order, shared by the copies of a location
        /// description that names this storage (copying one, as
        /// `DW_OP_dup` does, copies no part; appending to an incomplete
        /// composite, which is never copied, changes it in place).
        parts: Arc<Vec<Part>>,
        /// False while `DW_OP_piece`/`DW_OP_bit_piece` may still append.
        complete: bool,
        /// The sum of the parts' sizes in **bits**, kept with the parts
        /// ([`Storage::composite`], [`Storage::append_part`]) so that a
        /// composite grown one part at a time is not summed again each time.
        bits: u128,
        /// Composite nesting: 1 + the deepest nesting of a part location
        /// (0 for a location without composite storage), kept with the
        /// parts like `bits`.
        nesting: u32,
    },
}

/// One part of a composite storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Part size in **bits**.
    pub bits: u64,
    /// The part location description PL.
    pub loc: Loc,
}

impl Loc {
    /// A location description with one single location description.
    pub fn one(storage: Storage, bit_offset: u128) -> Loc {
        Loc { singles: vec![Single { storage, bit_offset }] }
    }

    /// One memory location description of the shared (not per-thread, not
    /// per-lane) storage of `aspace` at byte address `addr`. Operations
    /// create memory locations through `Machine::memory_loc`, which binds
    /// per-thread / per-lane storage.
    pub fn memory(aspace: u64, addr: u64) -> Loc {
        Loc::one(Storage::Memory { aspace, thread: None, lane: None }, u128::from(addr) * 8)
    }

    /// One undefined location description.
    pub fn undefined() -> Loc {
        Loc::one(Storage::Undefined, 0)
    }

    /// True if this is a location description comprised of one incomplete
    /// composite location description.
    pub fn is_incomplete_composite(&self) -> bool {
        matches!(&self.singles[..], [Single { storage: Storage::Composite { complete: false, .. }, .. }])
    }

    /// A location description with the one single location description
    /// that the normal-form `src` describes.
    pub fn from_source(src: &Source) -> Loc {
        Loc { singles: vec![from_source(src)] }
    }

    /// How many composite storages deep this location description nests
    /// (0: no composite storage); see [`MAX_NESTING`].
    pub fn nesting(&self) -> u32 {
        self.singles
            .iter()
            .map(|s| match s.storage {
                Storage::Composite { nesting, .. } => nesting,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// Converts to the outcome's raw form.
    pub fn to_raw(&self) -> RawLocation {
        RawLocation { singles: self.singles.iter().map(Single::to_raw).collect() }
    }

    /// Converts to the canonical comparison form.
    pub fn normalize(&self) -> NormalLocation {
        self.to_raw().normalize()
    }

    /// Rebuilds a location description from the canonical form (initial
    /// stack and current object entries of the context). A normalised
    /// composite becomes a complete composite with bit offset 0.
    pub fn from_normal(n: &NormalLocation) -> Loc {
        let singles = n
            .places
            .iter()
            .map(|p| match p {
                SingleLocation::Simple(s) => from_source(s),
                SingleLocation::Composite(pieces) => Single {
                    storage: Storage::composite(
                        pieces
                            .iter()
                            .map(|pc| Part {
                                bits: pc.bits,
                                loc: Loc { singles: pc.sources.iter().map(from_source).collect() },
                            })
                            .collect(),
                        true,
                    ),
                    bit_offset: 0,
                },
            })
            .collect::<Vec<_>>();
        if singles.is_empty() {
            Loc::undefined()
        } else {
            Loc { singles }
        }
    }
}

fn from_source(s: &Source) -> Single {
    match s {
        Source::Memory { aspace, bit_addr, thread, lane } => {
            Single { storage: Storage::Memory { aspace: *aspace, thread: *thread, lane: *lane }, bit_offset: *bit_addr }
        }
        Source::Register { regno, bit_offset } => {
            Single { storage: Storage::Register { regno: *regno }, bit_offset: u128::from(*bit_offset) }
        }
        Source::Implicit { bytes, bit_offset } => Single {
            storage: Storage::Implicit { bytes: Arc::new(bytes.clone()) },
            bit_offset: u128::from(*bit_offset),
        },
        Source::ImplicitPointer { die, byte_displacement, bit_offset, aspace } => Single {
            storage: Storage::ImplicitPointer { die: *die, disp: *byte_displacement, aspace: aspace.unwrap_or(0) },
            bit_offset: u128::from(*bit_offset),
        },
        Source::Undefined => Single { storage: Storage::Undefined, bit_offset: 0 },
    }
}

impl Single {
    /// Converts to the outcome's raw form.
    pub(super) fn to_raw(&self) -> RawSingle {
        let off64 = self.bit_offset as u64;
        match &self.storage {
            Storage::Memory { aspace, thread, lane } => RawSingle::Simple(Source::Memory {
                aspace: *aspace,
                bit_addr: self.bit_offset,
                thread: *thread,
                lane: *lane,
            }),
            Storage::Register { regno } => RawSingle::Simple(Source::Register { regno: *regno, bit_offset: off64 }),
            Storage::Implicit { bytes } => {
                RawSingle::Simple(Source::Implicit { bytes: bytes.to_vec(), bit_offset: off64 })
            }
            Storage::ImplicitPointer { die, disp, aspace } => RawSingle::Simple(Source::ImplicitPointer {
                die: *die,
                // Address space 0 is written as absent in normal form.
                aspace: (*aspace != 0).then_some(*aspace),
                byte_displacement: *disp,
                bit_offset: off64,
            }),
            Storage::Undefined => RawSingle::Simple(Source::Undefined),
            Storage::Composite { parts, .. } => RawSingle::Composite {
                pieces: parts.iter().map(|p| RawPiece { bits: p.bits, location: p.loc.to_raw() }).collect(),
                bit_offset: off64,
            },
        }
    }
}

impl Storage {
    /// Composite storage of `parts`, complete or not.
    pub fn composite(parts: Vec<Part>, complete: bool) -> Storage {
        let bits = parts.iter().map(|p| u128::from(p.bits)).sum();
        let nesting = 1 + parts.iter().map(|p| p.loc.nesting()).max().unwrap_or(0);
        Storage::Composite { parts: Arc::new(parts), complete, bits, nesting }
    }

    /// Appends `part` to composite storage (nothing for other storage).
    /// An incomplete composite is never copied, so its parts are not
    /// shared and this changes them in place.
    pub fn append_part(&mut self, part: Part) {
        if let Storage::Composite { parts, bits, nesting, .. } = self {
            *bits += u128::from(part.bits);
            *nesting = (*nesting).max(1 + part.loc.nesting());
            Arc::make_mut(parts).push(part);
        }
    }

    /// Size of the storage in **bits**, or `None` when it has no size the
    /// evaluator can check (undefined storage; a register the target does
    /// not define).
    ///
    /// Memory: the address space's address range × 8 (an unknown address
    /// space counts as 64-bit). Register: the register's size. Implicit:
    /// its bytes × 8. Implicit pointer: the generic type's size. Composite:
    /// the sum of its parts.
    pub fn size_bits(&self, ctx: &dyn MachineState) -> Option<u128> {
        match self {
            Storage::Memory { aspace, .. } => {
                let bits = ctx.target().address_space(*aspace).map(|a| a.address_bits).unwrap_or(64);
                Some(memory_bits(bits))
            }
            Storage::Register { regno } => ctx.target().register(*regno).map(|r| u128::from(r.bits)),
            Storage::Implicit { bytes } => Some(bytes.len() as u128 * 8),
            Storage::ImplicitPointer { aspace, .. } => Some(u128::from(implicit_pointer_bits(ctx, *aspace))),
            Storage::Undefined => None,
            Storage::Composite { bits, .. } => Some(*bits),
        }
    }
}

/// Size in **bits** of the storage of an implicit pointer in `aspace`: the
/// generic type's size for address space 0, else the address space's
/// address size (the generic size for a space the target does not define).
pub fn implicit_pointer_bits(ctx: &dyn MachineState, aspace: u64) -> u32 {
    match aspace {
        0 => ctx.generic_type().bits,
        a => ctx.target().address_space(a).map(|s| s.address_bits).unwrap_or(ctx.generic_type().bits),
    }
}

/// Size in **bits** of the memory storage of an address space whose
/// addresses have `address_bits` bits (saturating for absurd sizes).
pub fn memory_bits(address_bits: u32) -> u128 {
    if address_bits >= 124 {
        u128::MAX
    } else {
        (1u128 << address_bits) * 8
    }
}
