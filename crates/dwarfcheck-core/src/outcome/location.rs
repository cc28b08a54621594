//! Canonical form of location descriptions (docs/architecture.md §4), and the one
//! normaliser both evaluators feed.
//!
//! Hetero-2020 "DWARF Location Description": a location description is one
//! or more single location descriptions; each names a location storage and a
//! bit offset into it. Composite storage is a sequence of parts, each part a
//! bit length and a location description. Two evaluators that build
//! different trees for the same places must compare equal here, so:
//! - the single locations form a sorted, deduplicated set;
//! - nested composites are flattened, sliced to the part size and spliced;
//! - a composite's own bit offset is applied by slicing its parts;
//! - adjacent parts that continue the same storage are merged;
//! - zero-length parts are dropped;
//! - piece lengths are `u64` bits, so a normalised composite covers at
//!   most 2^64 - 1 bits: parts past that are cut off (only input no size
//!   budget guards, such as gimli's pieces, gets there).

use std::collections::BTreeSet;

/// One place in non-composite location storage, with its bit position.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "storage"))]
pub enum Source {
    /// Memory location storage of an address space. `bit_addr` is the byte
    /// address × 8 plus the bit offset.
    Memory {
        /// DWARF address space identifier (0 is the default).
        aspace: u64,
        /// Position in **bits** from address 0 of the space.
        bit_addr: u128,
        /// For an address space with storage per thread
        /// (`AddressSpace::per_thread`): the thread whose storage this is,
        /// bound when the location description was created (hetero-2020
        /// `DW_OP_LLVM_form_aspace_address`). `None` for shared storage.
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        thread: Option<u64>,
        /// For an address space with storage per lane
        /// (`AddressSpace::per_lane`): the lane whose storage this is, bound
        /// at creation like `thread`. `None` for storage not per lane.
        #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
        lane: Option<u32>,
    },
    /// Register location storage.
    Register {
        /// DWARF register number.
        regno: u64,
        /// Position in **bits** from bit 0 of the register.
        bit_offset: u64,
    },
    /// Implicit location storage holding fixed bytes (`DW_OP_implicit_value`,
    /// `DW_OP_stack_value`).
    Implicit {
        /// The whole storage, in target memory byte order.
        #[cfg_attr(feature = "serde", serde(with = "super::value::hex_bytes"))]
        bytes: Vec<u8>,
        /// Position in **bits** from the start of the storage.
        bit_offset: u64,
    },
    /// Implicit location storage of a pointer created by
    /// `DW_OP_implicit_pointer` / `DW_OP_LLVM_aspace_implicit_pointer`.
    ImplicitPointer {
        /// `.debug_info` offset of the DIE pointed to.
        die: u64,
        /// Address space of the pointer (`None`: the default one).
        aspace: Option<u64>,
        /// The operation's byte displacement (SLEB128 operand), in **bytes**.
        byte_displacement: i64,
        /// Position in **bits** within the pointer's storage.
        bit_offset: u64,
    },
    /// Undefined location storage: nothing can be read or written.
    Undefined,
}

impl Source {
    /// Memory of address space `aspace` shared by all threads and lanes, at
    /// `bit_addr` **bits** from address 0.
    pub fn memory(aspace: u64, bit_addr: u128) -> Source {
        Source::Memory { aspace, bit_addr, thread: None, lane: None }
    }

    /// The same storage, `bits` further on. Undefined stays undefined.
    pub fn advanced(&self, bits: u64) -> Source {
        let mut s = self.clone();
        match &mut s {
            Source::Memory { bit_addr, .. } => *bit_addr = bit_addr.wrapping_add(u128::from(bits)),
            Source::Register { bit_offset, .. }
            | Source::Implicit { bit_offset, .. }
            | Source::ImplicitPointer { bit_offset, .. } => *bit_offset = bit_offset.wrapping_add(bits),
            Source::Undefined => {}
        }
        s
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bits = |b: u64| if b.is_multiple_of(8) { format!("+{}", b / 8) } else { format!("+{}b", b) };
        match self {
            Source::Memory { aspace, bit_addr, thread, lane } => {
                write!(f, "mem")?;
                if *aspace != 0 || thread.is_some() || lane.is_some() {
                    write!(f, "(as{aspace}")?;
                    if let Some(t) = thread {
                        write!(f, ",thread{t}")?;
                    }
                    if let Some(l) = lane {
                        write!(f, ",lane{l}")?;
                    }
                    write!(f, ")")?;
                }
                write!(f, "[{:#x}", bit_addr / 8)?;
                if bit_addr % 8 != 0 {
                    write!(f, ".{}b", bit_addr % 8)?;
                }
                write!(f, "]")
            }
            Source::Register { regno, bit_offset } => {
                write!(f, "reg{regno}")?;
                if *bit_offset != 0 {
                    write!(f, "{}", bits(*bit_offset))?;
                }
                Ok(())
            }
            Source::Implicit { bytes, bit_offset } => {
                write!(f, "implicit[")?;
                for b in bytes {
                    write!(f, "{b:02x}")?;
                }
                write!(f, "]")?;
                if *bit_offset != 0 {
                    write!(f, "{}", bits(*bit_offset))?;
                }
                Ok(())
            }
            Source::ImplicitPointer { die, aspace, byte_displacement, bit_offset } => {
                write!(f, "implicit-pointer(die {die:#x}{byte_displacement:+}")?;
                if let Some(a) = aspace {
                    write!(f, ", as{a}")?;
                }
                write!(f, ")")?;
                if *bit_offset != 0 {
                    write!(f, "{}", bits(*bit_offset))?;
                }
                Ok(())
            }
            Source::Undefined => write!(f, "undefined"),
        }
    }
}

/// One part of a normalised composite: `bits` bits read from any of the
/// `sources` (a location description with several single locations).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Piece {
    /// Length of the part in **bits** (never zero).
    pub bits: u64,
    /// The places the part lives in, sorted and deduplicated (at least one).
    pub sources: BTreeSet<Source>,
}

impl Piece {
    /// Whether a piece whose places are `next` continues this one: every
    /// place of this piece, advanced by its length, is a place of `next`
    /// and nothing else is (so the two merge in normal form).
    pub fn continued_by(&self, next: &BTreeSet<Source>) -> bool {
        match (self.sources.len(), next.len()) {
            // (One place each, the common case: no set to build.)
            (1, 1) => self.sources.first().map(|s| s.advanced(self.bits)).as_ref() == next.first(),
            (a, b) if a == b => {
                self.sources.iter().map(|s| s.advanced(self.bits)).collect::<BTreeSet<Source>>() == *next
            }
            _ => false,
        }
    }
}

/// One normalised single location description.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum SingleLocation {
    /// A place in one non-composite storage.
    Simple(Source),
    /// Composite storage, flattened, starting at the location's bit offset.
    Composite(Vec<Piece>),
}

/// A normalised location description: a set of single locations.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NormalLocation {
    /// The single locations, sorted and deduplicated (at least one).
    pub places: Vec<SingleLocation>,
}

/// An evaluator's location description before normalisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLocation {
    /// Its single location descriptions (empty means undefined).
    pub singles: Vec<RawSingle>,
}

/// An evaluator's single location description before normalisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawSingle {
    /// A place in non-composite storage.
    Simple(Source),
    /// Composite storage and a bit offset into it.
    Composite {
        /// The parts in order.
        pieces: Vec<RawPiece>,
        /// Offset in **bits** into the composite storage.
        bit_offset: u64,
    },
}

/// One part of a raw composite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawPiece {
    /// Part length in **bits**.
    pub bits: u64,
    /// Where the part lives.
    pub location: RawLocation,
}

impl RawLocation {
    /// A location with one single location in `source`.
    pub fn simple(source: Source) -> Self {
        RawLocation { singles: vec![RawSingle::Simple(source)] }
    }

    /// Normalises into the canonical comparison form (docs/architecture.md §4).
    ///
    /// Never panics: a composite whose parts add up to more than
    /// `u64::MAX` **bits** is cut off at `u64::MAX` bits.
    pub fn normalize(&self) -> NormalLocation {
        let mut places: Vec<SingleLocation> = self
            .singles
            .iter()
            .map(|s| match s {
                RawSingle::Simple(src) => SingleLocation::Simple(src.clone()),
                RawSingle::Composite { pieces, bit_offset } => {
                    let segs = flatten_composite(pieces);
                    // Saturating: parts may add up past u64::MAX bits.
                    let total = segs.iter().fold(0u64, |t, s| t.saturating_add(s.0));
                    let sliced = slice(segs, *bit_offset, total.saturating_sub(*bit_offset));
                    SingleLocation::Composite(merge(sliced))
                }
            })
            .collect();
        if places.is_empty() {
            places.push(SingleLocation::Simple(Source::Undefined));
        }
        places.sort();
        places.dedup();
        NormalLocation { places }
    }
}

/// Rebuilds a raw tree that describes the same places as a normal form, so
/// that normalising it gives `n` back (docs/architecture.md §4; the normaliser is
/// idempotent through this conversion).
///
/// Each single location is kept: `Simple(s)` stays a simple single
/// location; a normalised composite becomes one composite with bit offset 0
/// whose parts have the pieces' lengths in **bits**, each part's location
/// holding one simple single location per source of the piece. An empty
/// `places` (not a normal form; normalising never builds it) becomes an
/// empty raw location, which normalises to undefined storage.
impl From<&NormalLocation> for RawLocation {
    fn from(n: &NormalLocation) -> Self {
        let simple = |s: &Source| RawSingle::Simple(s.clone());
        let singles = n
            .places
            .iter()
            .map(|p| match p {
                SingleLocation::Simple(s) => simple(s),
                SingleLocation::Composite(pieces) => RawSingle::Composite {
                    pieces: pieces
                        .iter()
                        .map(|pc| RawPiece {
                            bits: pc.bits,
                            location: RawLocation { singles: pc.sources.iter().map(simple).collect() },
                        })
                        .collect(),
                    bit_offset: 0,
                },
            })
            .collect();
        RawLocation { singles }
    }
}

type Seg = (u64, BTreeSet<Source>);

fn flatten_composite(pieces: &[RawPiece]) -> Vec<Seg> {
    let mut out = Vec::new();
    for p in pieces {
        flatten_part(p.bits, &p.location, &mut out);
    }
    out
}

/// Appends the segments of one part of `bits` bits whose storage is `loc`.
fn flatten_part(bits: u64, loc: &RawLocation, out: &mut Vec<Seg>) {
    if bits == 0 {
        return;
    }
    match loc.singles.as_slice() {
        [] => out.push((bits, BTreeSet::from([Source::Undefined]))),
        [RawSingle::Simple(src)] => out.push((bits, BTreeSet::from([src.clone()]))),
        [RawSingle::Composite { pieces, bit_offset }] => {
            out.extend(slice(flatten_composite(pieces), *bit_offset, bits))
        }
        singles => {
            let alternatives: Vec<Vec<Seg>> = singles
                .iter()
                .map(|s| match s {
                    RawSingle::Simple(src) => vec![(bits, BTreeSet::from([src.clone()]))],
                    RawSingle::Composite { pieces, bit_offset } => slice(flatten_composite(pieces), *bit_offset, bits),
                })
                .collect();
            out.extend(union_alternatives(bits, &alternatives));
        }
    }
}

/// Cuts `[start, start+len)` out of a segment sequence; missing bits past
/// the end read as undefined.
fn slice(segs: Vec<Seg>, start: u64, len: u64) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut pos = 0u64;
    let end = start.saturating_add(len);
    for (bits, set) in segs {
        let seg_end = pos.saturating_add(bits);
        let lo = pos.max(start);
        let hi = seg_end.min(end);
        if lo < hi {
            let skip = lo - pos;
            // (A segment taken from its start keeps its places as they are.)
            let set = if skip == 0 { set } else { set.iter().map(|s| s.advanced(skip)).collect() };
            out.push((hi - lo, set));
        }
        pos = seg_end;
        if pos >= end {
            break;
        }
    }
    let covered: u64 = out.iter().map(|s: &Seg| s.0).sum();
    if covered < len {
        out.push((len - covered, BTreeSet::from([Source::Undefined])));
    }
    out
}

/// Merges alternative segmentations of the same `bits` bits: cut at every
/// boundary of any alternative, and union the places.
fn union_alternatives(bits: u64, alts: &[Vec<Seg>]) -> Vec<Seg> {
    if alts.len() == 1 {
        return alts[0].clone();
    }
    let mut cuts = BTreeSet::from([0u64, bits]);
    for a in alts {
        let mut pos = 0;
        for (b, _) in a {
            pos += b;
            cuts.insert(pos.min(bits));
        }
    }
    let cuts: Vec<u64> = cuts.into_iter().collect();
    cuts.windows(2)
        .map(|w| {
            let (lo, hi) = (w[0], w[1]);
            // The places of every alternative over [lo, hi): no boundary
            // of any alternative falls inside, so each covers it with the
            // places of one segment (advanced to lo), or not at all
            // (undefined, as a slice past the end reads).
            let mut set = BTreeSet::new();
            for a in alts {
                let mut pos = 0u64;
                let mut covered = false;
                for (b, places) in a {
                    let seg_end = pos.saturating_add(*b);
                    if pos <= lo && lo < seg_end {
                        set.extend(places.iter().map(|x| x.advanced(lo - pos)));
                        covered = true;
                        break;
                    }
                    pos = seg_end;
                }
                if !covered {
                    set.insert(Source::Undefined);
                }
            }
            (hi - lo, set)
        })
        .collect()
}

/// Merges adjacent segments whose places continue one another, and drops
/// empty ones.
fn merge(segs: Vec<Seg>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for (bits, sources) in segs {
        if bits == 0 {
            continue;
        }
        if let Some(last) = out.last_mut() {
            let continued = last.continued_by(&sources);
            if continued {
                last.bits += bits;
                continue;
            }
        }
        out.push(Piece { bits, sources });
    }
    out
}

impl std::fmt::Display for NormalLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let multi = self.places.len() > 1;
        if multi {
            write!(f, "{{")?;
        }
        for (i, p) in self.places.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            match p {
                SingleLocation::Simple(s) => write!(f, "{s}")?,
                SingleLocation::Composite(pieces) => {
                    write!(f, "composite[")?;
                    for (j, piece) in pieces.iter().enumerate() {
                        if j > 0 {
                            write!(f, " | ")?;
                        }
                        write!(f, "{}b:", piece.bits)?;
                        let srcs: Vec<String> = piece.sources.iter().map(|s| s.to_string()).collect();
                        write!(f, "{}", srcs.join("/"))?;
                    }
                    write!(f, "]")?;
                }
            }
        }
        if multi {
            write!(f, "}}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg(regno: u64, bit_offset: u64) -> Source {
        Source::Register { regno, bit_offset }
    }
    fn piece(bits: u64, s: Source) -> RawPiece {
        RawPiece { bits, location: RawLocation::simple(s) }
    }
    fn norm_piece(bits: u64, s: Source) -> Piece {
        Piece { bits, sources: BTreeSet::from([s]) }
    }

    #[test]
    fn adjacent_parts_of_one_register_merge() {
        let raw = RawLocation {
            singles: vec![RawSingle::Composite {
                pieces: vec![piece(16, reg(0, 0)), piece(16, reg(0, 16))],
                bit_offset: 0,
            }],
        };
        assert_eq!(raw.normalize().places, vec![SingleLocation::Composite(vec![norm_piece(32, reg(0, 0))])]);
    }

    #[test]
    fn nested_composite_is_flattened_and_sliced() {
        // Inner: [8 bits reg1, 8 bits reg2]; outer takes 12 bits of it from
        // inner offset 4, then 4 bits undefined. Hand-derived: reg1+4 for 4
        // bits, reg2+0 for 8 bits, then undefined 4 bits.
        let inner = RawLocation {
            singles: vec![RawSingle::Composite {
                pieces: vec![piece(8, reg(1, 0)), piece(8, reg(2, 0))],
                bit_offset: 4,
            }],
        };
        let raw = RawLocation {
            singles: vec![RawSingle::Composite {
                pieces: vec![RawPiece { bits: 12, location: inner }, piece(4, Source::Undefined)],
                bit_offset: 0,
            }],
        };
        assert_eq!(
            raw.normalize().places,
            vec![SingleLocation::Composite(vec![
                norm_piece(4, reg(1, 4)),
                norm_piece(8, reg(2, 0)),
                norm_piece(4, Source::Undefined)
            ])]
        );
    }

    #[test]
    fn composite_bit_offset_slices() {
        let raw = RawLocation {
            singles: vec![RawSingle::Composite {
                pieces: vec![piece(8, reg(1, 0)), piece(8, reg(2, 0))],
                bit_offset: 10,
            }],
        };
        assert_eq!(raw.normalize().places, vec![SingleLocation::Composite(vec![norm_piece(6, reg(2, 2))])]);
    }

    #[test]
    fn singles_are_a_set() {
        let raw = RawLocation {
            singles: vec![RawSingle::Simple(reg(3, 0)), RawSingle::Simple(reg(1, 0)), RawSingle::Simple(reg(3, 0))],
        };
        assert_eq!(raw.normalize().places, vec![SingleLocation::Simple(reg(1, 0)), SingleLocation::Simple(reg(3, 0))]);
        assert_eq!(RawLocation { singles: vec![] }.normalize().places, vec![SingleLocation::Simple(Source::Undefined)]);
    }

    #[test]
    fn parts_past_u64_bits_are_cut_off() {
        // [2^64-1 bits: reg0 | 8 bits: reg1] at bit offset 0 (what gimli
        // gives for DW_OP_reg0 DW_OP_bit_piece 0xffff_ffff_ffff_ffff 0
        // DW_OP_reg1 DW_OP_bit_piece 8 0). Its 2^64 + 7 bits do not fit a
        // u64 length: the first part fills all 2^64 - 1 bits a normal form
        // can hold and the reg1 part is cut off. This used to overflow the
        // sum of the part lengths (a panic in debug builds).
        let raw = RawLocation {
            singles: vec![RawSingle::Composite {
                pieces: vec![piece(u64::MAX, reg(0, 0)), piece(8, reg(1, 0))],
                bit_offset: 0,
            }],
        };
        assert_eq!(raw.normalize().places, vec![SingleLocation::Composite(vec![norm_piece(u64::MAX, reg(0, 0))])]);
        // From bit offset 2^64 - 9 on, 8 bits of reg0 remain: reg0+(2^64-9).
        let raw = RawLocation {
            singles: vec![RawSingle::Composite {
                pieces: vec![piece(u64::MAX, reg(0, 0)), piece(8, reg(1, 0))],
                bit_offset: u64::MAX - 8,
            }],
        };
        assert_eq!(raw.normalize().places, vec![SingleLocation::Composite(vec![norm_piece(8, reg(0, u64::MAX - 8))])]);
    }

    #[test]
    fn part_with_two_places_unions_at_common_cuts() {
        // A 16-bit part whose location is {reg1, composite[8:reg2 | 8:reg3]}.
        let alt = RawLocation {
            singles: vec![
                RawSingle::Simple(reg(1, 0)),
                RawSingle::Composite { pieces: vec![piece(8, reg(2, 0)), piece(8, reg(3, 0))], bit_offset: 0 },
            ],
        };
        let raw = RawLocation {
            singles: vec![RawSingle::Composite { pieces: vec![RawPiece { bits: 16, location: alt }], bit_offset: 0 }],
        };
        assert_eq!(
            raw.normalize().places,
            vec![SingleLocation::Composite(vec![
                Piece { bits: 8, sources: BTreeSet::from([reg(1, 0), reg(2, 0)]) },
                Piece { bits: 8, sources: BTreeSet::from([reg(1, 8), reg(3, 0)]) },
            ])]
        );
    }
}
