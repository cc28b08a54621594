//! Property tests of `RawLocation::normalize`, docs/architecture.md §4's normal form.
//!
//! The normal form is the canonical comparison form of location
//! descriptions that both evaluators feed (src/outcome/location.rs).
//! Generated raw trees: up to three levels of nested composites, parts of
//! 0..=64 bits, sources of every `Source` kind (memory in address spaces 0..=3
//! with and without thread/lane, registers, implicit bytes, implicit
//! pointers, undefined), locations with zero, one or several single
//! locations. Properties:
//! 1. **Idempotence**: converting a normal form back to a raw tree
//!    (`RawLocation::from(&NormalLocation)`) and normalising it gives the
//!    same normal form.
//! 2. **Equivalent trees normalise equal**: each meaning-preserving rewrite
//!    (split a part in two, wrap a part's location in a one-part composite
//!    with or without a skipped prefix, insert zero-length parts, reorder and
//!    duplicate single locations, replace a composite's bit offset by
//!    cutting its first bits off) leaves the normal form unchanged, alone
//!    and in random sequences.
//! 3. **Sensitivity**: in trees with one single location everywhere,
//!    changing the length of a top-level part, or the register number or
//!    bit offset of a source whose bits are read, changes the normal form.
//! 4. **Bitwise meaning**: the normal form, expanded bit by bit, lists the
//!    same places as a direct bit-by-bit reading of the raw tree, and it is
//!    canonical (sorted, deduplicated places; no empty piece; no two
//!    adjacent pieces that continue one another).
//! 5. **Robustness**: with some part lengths and bit offsets near 2^63 or
//!    2^64 bits, normalising neither panics nor wraps; a composite keeps
//!    `min(total, u64::MAX) - offset` bits (the normaliser's documented
//!    cut-off), in the canonical shape, idempotently.
//!
//! Hand-derived unit examples for each rewrite close the file.

use dwarfcheck_core::outcome::{NormalLocation, Piece, RawLocation, RawPiece, RawSingle, SingleLocation, Source};
use proptest::prelude::*;
use std::collections::BTreeSet;

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/// Bit offsets: mostly whole bytes, so that parts often continue one another.
fn bit_offset() -> impl Strategy<Value = u64> {
    prop_oneof![3 => (0u64..8).prop_map(|b| b * 8), 1 => 0u64..64]
}

/// A source of any kind, from small ranges so that equal and continuing
/// sources recur.
fn source() -> BoxedStrategy<Source> {
    let memory =
        (0u64..4, bit_offset(), prop::option::weighted(0.2, 0u64..3), prop::option::weighted(0.2, 0u32..4)).prop_map(
            |(aspace, bit_addr, thread, lane)| Source::Memory { aspace, bit_addr: u128::from(bit_addr), thread, lane },
        );
    let register = (0u64..4, bit_offset()).prop_map(|(regno, bit_offset)| Source::Register { regno, bit_offset });
    let implicit = (prop::collection::vec(0u8..2, 0..3), bit_offset())
        .prop_map(|(bytes, bit_offset)| Source::Implicit { bytes, bit_offset });
    let pointer = (0u64..3, prop::option::of(0u64..2), -2i64..2, bit_offset()).prop_map(
        |(die, aspace, byte_displacement, bit_offset)| Source::ImplicitPointer {
            die,
            aspace,
            byte_displacement,
            bit_offset,
        },
    );
    prop_oneof![3 => memory, 3 => register, 1 => implicit, 1 => pointer, 1 => Just(Source::Undefined)].boxed()
}

/// Part lengths in bits, 0..=64, often whole bytes.
fn part_bits() -> impl Strategy<Value = u64> {
    prop_oneof![1 => Just(0u64), 3 => (1u64..=8).prop_map(|b| b * 8), 2 => 0u64..=64]
}

/// A location of nesting depth at most `depth`; `multi`: zero or several
/// single locations are allowed (otherwise exactly one).
fn location(depth: u32, multi: bool) -> BoxedStrategy<RawLocation> {
    let s = single(depth, multi);
    if multi {
        prop_oneof![
            1 => Just(RawLocation { singles: vec![] }),
            10 => prop::collection::vec(s.clone(), 1..=1).prop_map(|singles| RawLocation { singles }),
            3 => prop::collection::vec(s, 2..=3).prop_map(|singles| RawLocation { singles }),
        ]
        .boxed()
    } else {
        s.prop_map(|s| RawLocation { singles: vec![s] }).boxed()
    }
}

fn single(depth: u32, multi: bool) -> BoxedStrategy<RawSingle> {
    let simple = source().prop_map(RawSingle::Simple);
    if depth == 0 {
        simple.boxed()
    } else {
        prop_oneof![2 => simple, 1 => composite(depth, multi)].boxed()
    }
}

/// A composite of 0..=4 parts, its bit offset mostly inside the storage.
fn composite(depth: u32, multi: bool) -> BoxedStrategy<RawSingle> {
    let part = (part_bits(), location(depth - 1, multi)).prop_map(|(bits, location)| RawPiece { bits, location });
    prop::collection::vec(part, 0..=4)
        .prop_flat_map(|pieces| {
            let total = total_bits(&pieces);
            let offset = prop_oneof![3 => Just(0u64), 2 => 0..=total, 1 => 0..=total + 16];
            (Just(pieces), offset)
        })
        .prop_map(|(pieces, bit_offset)| RawSingle::Composite { pieces, bit_offset })
        .boxed()
}

/// A top-level location description: mostly composites, sometimes several
/// single locations, rarely none.
fn tree() -> BoxedStrategy<RawLocation> {
    let top = prop_oneof![1 => source().prop_map(RawSingle::Simple), 4 => composite(3, true)];
    prop_oneof![
        1 => Just(RawLocation { singles: vec![] }),
        10 => prop::collection::vec(top.clone(), 1..=1).prop_map(|singles| RawLocation { singles }),
        4 => prop::collection::vec(top, 2..=3).prop_map(|singles| RawLocation { singles }),
    ]
    .boxed()
}

/// One composite, with one single location at every level: every bit it
/// reads comes from exactly one source, so no part is covered by an
/// alternative.
fn single_single_tree() -> BoxedStrategy<RawLocation> {
    composite(3, false).prop_map(|s| RawLocation { singles: vec![s] }).boxed()
}

// ---------------------------------------------------------------------------
// Tree helpers and rewrites
// ---------------------------------------------------------------------------

fn total_bits(pieces: &[RawPiece]) -> u64 {
    pieces.iter().map(|p| p.bits).sum()
}

/// The same location, `k` bits further on: simple places advance, composites
/// take a larger bit offset, an empty (undefined) location stays empty.
fn advanced(loc: &RawLocation, k: u64) -> RawLocation {
    let singles = loc
        .singles
        .iter()
        .map(|s| match s {
            RawSingle::Simple(src) => RawSingle::Simple(src.advanced(k)),
            RawSingle::Composite { pieces, bit_offset } => {
                RawSingle::Composite { pieces: pieces.clone(), bit_offset: bit_offset + k }
            }
        })
        .collect();
    RawLocation { singles }
}

/// Counts the parts (at any depth) that `pred` accepts.
fn count_parts(loc: &RawLocation, pred: &dyn Fn(&RawPiece) -> bool) -> usize {
    let mut n = 0;
    for s in &loc.singles {
        if let RawSingle::Composite { pieces, .. } = s {
            for p in pieces {
                n += usize::from(pred(p)) + count_parts(&p.location, pred);
            }
        }
    }
    n
}

/// Replaces the `n`-th part that `pred` accepts (pre-order) by what `f`
/// makes of it. Returns whether it was found.
fn edit_part(
    loc: &mut RawLocation,
    pred: &dyn Fn(&RawPiece) -> bool,
    n: &mut usize,
    f: &mut dyn FnMut(RawPiece) -> Vec<RawPiece>,
) -> bool {
    for s in &mut loc.singles {
        if let RawSingle::Composite { pieces, .. } = s {
            let mut i = 0;
            while i < pieces.len() {
                if pred(&pieces[i]) {
                    if *n == 0 {
                        let new = f(pieces.remove(i));
                        pieces.splice(i..i, new);
                        return true;
                    }
                    *n -= 1;
                }
                if edit_part(&mut pieces[i].location, pred, n, f) {
                    return true;
                }
                i += 1;
            }
        }
    }
    false
}

fn count_composites(loc: &RawLocation) -> usize {
    let mut n = 0;
    for s in &loc.singles {
        if let RawSingle::Composite { pieces, .. } = s {
            n += 1 + pieces.iter().map(|p| count_composites(&p.location)).sum::<usize>();
        }
    }
    n
}

/// Lets `f` change the parts and bit offset of the `n`-th composite
/// (pre-order). Returns whether it was found.
fn edit_composite(loc: &mut RawLocation, n: &mut usize, f: &mut dyn FnMut(&mut Vec<RawPiece>, &mut u64)) -> bool {
    for s in &mut loc.singles {
        if let RawSingle::Composite { pieces, bit_offset } = s {
            if *n == 0 {
                f(pieces, bit_offset);
                return true;
            }
            *n -= 1;
            for p in pieces.iter_mut() {
                if edit_composite(&mut p.location, n, f) {
                    return true;
                }
            }
        }
    }
    false
}

/// splitmix64: a reproducible stream of choices from one generated seed.
fn next(state: &mut u64) -> usize {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as usize
}

/// Shuffles the single locations of every location in the tree and
/// duplicates up to two of each.
fn shuffle_and_duplicate(loc: &mut RawLocation, rng: &mut u64) {
    for s in &mut loc.singles {
        if let RawSingle::Composite { pieces, .. } = s {
            for p in pieces.iter_mut() {
                shuffle_and_duplicate(&mut p.location, rng);
            }
        }
    }
    let n = loc.singles.len();
    if n == 0 {
        return;
    }
    for i in (1..n).rev() {
        loc.singles.swap(i, next(rng) % (i + 1));
    }
    for _ in 0..next(rng) % 3 {
        let len = loc.singles.len();
        let copy = loc.singles[next(rng) % len].clone();
        loc.singles.insert(next(rng) % (len + 1), copy);
    }
}

/// The parts with their first `o` bits cut off: parts wholly before `o` go,
/// the part `o` falls inside keeps its tail (its location advanced).
fn cut_front(pieces: &[RawPiece], o: u64) -> Vec<RawPiece> {
    let mut out = Vec::new();
    let mut start = 0;
    for p in pieces {
        let end = start + p.bits;
        if end <= o {
            // wholly cut off
        } else if start < o {
            out.push(RawPiece { bits: end - o, location: advanced(&p.location, o - start) });
        } else {
            out.push(p.clone());
        }
        start = end;
    }
    out
}

/// Makes some parts and composite offsets huge (near 2^63 or 2^64 bits),
/// as unbudgeted input such as gimli's `DW_OP_bit_piece` sizes can be.
fn inflate(loc: &mut RawLocation, rng: &mut u64) {
    for s in &mut loc.singles {
        if let RawSingle::Composite { pieces, bit_offset } = s {
            match next(rng) % 6 {
                0 => *bit_offset = u64::MAX - *bit_offset,
                1 => *bit_offset |= 1 << 63,
                _ => {}
            }
            for p in pieces.iter_mut() {
                match next(rng) % 4 {
                    0 => p.bits = u64::MAX - p.bits,
                    1 => p.bits |= 1 << 63,
                    _ => {}
                }
                inflate(&mut p.location, rng);
            }
        }
    }
}

/// A meaning-preserving rewrite of a raw tree (docs/architecture.md §4: each leaves the
/// places a location description names unchanged).
#[derive(Debug, Clone)]
enum Rewrite {
    /// Split the `sel`-th part of at least 2 bits at `1 + k % (bits - 1)`.
    Split { sel: usize, k: u64 },
    /// Wrap the `sel`-th part's location into a composite of `prefix`,
    /// a part of the same length and that location, and `suffix`; the
    /// composite's bit offset skips the prefix.
    Wrap { sel: usize, prefix: Option<RawPiece>, suffix: Option<RawPiece> },
    /// Insert a zero-length part into the `sel`-th composite at `pos`.
    Zero { sel: usize, pos: usize, location: RawLocation },
    /// Shuffle and duplicate single locations everywhere.
    Singles { seed: u64 },
}

fn small_part() -> BoxedStrategy<RawPiece> {
    (part_bits(), location(1, true)).prop_map(|(bits, location)| RawPiece { bits, location }).boxed()
}

fn split() -> BoxedStrategy<Rewrite> {
    (any::<usize>(), any::<u64>()).prop_map(|(sel, k)| Rewrite::Split { sel, k }).boxed()
}
fn wrap() -> BoxedStrategy<Rewrite> {
    (any::<usize>(), prop::option::of(small_part()), prop::option::of(small_part()))
        .prop_map(|(sel, prefix, suffix)| Rewrite::Wrap { sel, prefix, suffix })
        .boxed()
}
fn zero() -> BoxedStrategy<Rewrite> {
    (any::<usize>(), any::<usize>(), location(1, true))
        .prop_map(|(sel, pos, location)| Rewrite::Zero { sel, pos, location })
        .boxed()
}
fn singles() -> BoxedStrategy<Rewrite> {
    any::<u64>().prop_map(|seed| Rewrite::Singles { seed }).boxed()
}

impl Rewrite {
    /// Applies the rewrite; false if the tree has no place for it.
    fn apply(&self, loc: &mut RawLocation) -> bool {
        match self {
            Rewrite::Split { sel, k } => {
                let pred = |p: &RawPiece| p.bits >= 2;
                let count = count_parts(loc, &pred);
                if count == 0 {
                    return false;
                }
                let mut n = sel % count;
                edit_part(loc, &pred, &mut n, &mut |p| {
                    let k = 1 + k % (p.bits - 1);
                    let tail = RawPiece { bits: p.bits - k, location: advanced(&p.location, k) };
                    vec![RawPiece { bits: k, location: p.location }, tail]
                })
            }
            Rewrite::Wrap { sel, prefix, suffix } => {
                let pred = |_: &RawPiece| true;
                let count = count_parts(loc, &pred);
                if count == 0 {
                    return false;
                }
                let mut n = sel % count;
                edit_part(loc, &pred, &mut n, &mut |p| {
                    let bit_offset = prefix.as_ref().map_or(0, |q| q.bits);
                    let mut pieces: Vec<RawPiece> = prefix.iter().cloned().collect();
                    pieces.push(RawPiece { bits: p.bits, location: p.location });
                    pieces.extend(suffix.iter().cloned());
                    let location = RawLocation { singles: vec![RawSingle::Composite { pieces, bit_offset }] };
                    vec![RawPiece { bits: p.bits, location }]
                })
            }
            Rewrite::Zero { sel, pos, location } => {
                let count = count_composites(loc);
                if count == 0 {
                    return false;
                }
                let mut n = sel % count;
                edit_composite(loc, &mut n, &mut |pieces, _| {
                    let at = pos % (pieces.len() + 1);
                    pieces.insert(at, RawPiece { bits: 0, location: location.clone() });
                })
            }
            Rewrite::Singles { seed } => {
                let mut rng = *seed;
                shuffle_and_duplicate(loc, &mut rng);
                true
            }
        }
    }
}

/// Where a composite's new bit offset falls.
#[derive(Debug, Clone, Copy)]
enum OffsetAt {
    /// On a part boundary (0 and the end included).
    Boundary,
    /// Strictly inside a part.
    Inside,
    /// Past the end of the composite.
    PastEnd,
}

// ---------------------------------------------------------------------------
// A direct bit-by-bit reading of a tree (the oracle of property 4)
// ---------------------------------------------------------------------------

/// A single location read bit by bit: a simple place, or for a composite
/// the set of places of each bit it covers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Bits {
    Simple(Source),
    Composite(Vec<BTreeSet<Source>>),
}

/// The places bit `j` of a part's location reads: the union over its single
/// locations; no single location means undefined storage.
fn bit_of_location(loc: &RawLocation, j: u64) -> BTreeSet<Source> {
    if loc.singles.is_empty() {
        return BTreeSet::from([Source::Undefined]);
    }
    let mut out = BTreeSet::new();
    for s in &loc.singles {
        match s {
            RawSingle::Simple(src) => {
                out.insert(src.advanced(j));
            }
            RawSingle::Composite { pieces, bit_offset } => out.extend(bit_of_composite(pieces, bit_offset + j)),
        }
    }
    out
}

/// The places bit `pos` of composite storage reads: bit `pos - start` of
/// the part that covers it; past the last part, undefined (the project's
/// reading, docs/architecture.md §4).
fn bit_of_composite(pieces: &[RawPiece], pos: u64) -> BTreeSet<Source> {
    let mut start = 0;
    for p in pieces {
        if pos < start + p.bits {
            return bit_of_location(&p.location, pos - start);
        }
        start += p.bits;
    }
    BTreeSet::from([Source::Undefined])
}

/// The raw tree read bit by bit: a top-level composite covers its bits
/// from its offset to its end.
fn read_raw(raw: &RawLocation) -> BTreeSet<Bits> {
    if raw.singles.is_empty() {
        return BTreeSet::from([Bits::Simple(Source::Undefined)]);
    }
    raw.singles
        .iter()
        .map(|s| match s {
            RawSingle::Simple(src) => Bits::Simple(src.clone()),
            RawSingle::Composite { pieces, bit_offset } => {
                Bits::Composite((*bit_offset..total_bits(pieces)).map(|i| bit_of_composite(pieces, i)).collect())
            }
        })
        .collect()
}

/// The normal form expanded bit by bit.
fn read_normal(n: &NormalLocation) -> BTreeSet<Bits> {
    n.places
        .iter()
        .map(|p| match p {
            SingleLocation::Simple(src) => Bits::Simple(src.clone()),
            SingleLocation::Composite(pieces) => Bits::Composite(
                pieces
                    .iter()
                    .flat_map(|pc| (0..pc.bits).map(move |j| pc.sources.iter().map(|s| s.advanced(j)).collect()))
                    .collect(),
            ),
        })
        .collect()
}

/// docs/architecture.md §4's canonical shape: places sorted and distinct, at least one;
/// pieces non-empty with at least one source, their lengths adding up to
/// at most `u64::MAX` bits; adjacent pieces do not continue one another
/// (else they would have been merged).
fn check_canonical(n: &NormalLocation) -> Result<(), TestCaseError> {
    prop_assert!(!n.places.is_empty(), "no places: {n}");
    prop_assert!(n.places.windows(2).all(|w| w[0] < w[1]), "places not a sorted set: {n}");
    for p in &n.places {
        if let SingleLocation::Composite(pieces) = p {
            for pc in pieces {
                prop_assert!(pc.bits > 0 && !pc.sources.is_empty(), "empty piece in {n}");
            }
            let total = pieces.iter().try_fold(0u64, |t, pc| t.checked_add(pc.bits));
            prop_assert!(total.is_some(), "composite longer than u64::MAX bits: {n}");
            for w in pieces.windows(2) {
                let continued: BTreeSet<Source> = w[0].sources.iter().map(|s| s.advanced(w[0].bits)).collect();
                prop_assert_ne!(&continued, &w[1].sources, "unmerged pieces in {}", n);
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Sensitivity helpers
// ---------------------------------------------------------------------------

/// For each simple single location (pre-order), whether any of its bits is
/// read when bits `[lo, hi)` of `loc` are read.
fn leaves_read(loc: &RawLocation, lo: u64, hi: u64, out: &mut Vec<bool>) {
    for s in &loc.singles {
        match s {
            RawSingle::Simple(_) => out.push(lo < hi),
            RawSingle::Composite { pieces, bit_offset } => {
                let (lo, hi) = if lo < hi { (bit_offset + lo, bit_offset + hi) } else { (0, 0) };
                let mut start = 0;
                for p in pieces {
                    let (a, b) = (lo.max(start), hi.min(start + p.bits));
                    let (a, b) = if a < b { (a - start, b - start) } else { (0, 0) };
                    leaves_read(&p.location, a, b, out);
                    start += p.bits;
                }
            }
        }
    }
}

/// The simple single locations' sources, pre-order (the order of
/// `leaves_read`).
fn leaf_sources(loc: &RawLocation, out: &mut Vec<Source>) {
    for s in &loc.singles {
        match s {
            RawSingle::Simple(src) => out.push(src.clone()),
            RawSingle::Composite { pieces, .. } => pieces.iter().for_each(|p| leaf_sources(&p.location, out)),
        }
    }
}

/// Lets `f` change the `n`-th simple single location (pre-order, the
/// order of `leaves_read`).
fn edit_leaf(loc: &mut RawLocation, n: &mut usize, f: &mut dyn FnMut(&mut Source)) -> bool {
    for s in &mut loc.singles {
        match s {
            RawSingle::Simple(src) => {
                if *n == 0 {
                    f(src);
                    return true;
                }
                *n -= 1;
            }
            RawSingle::Composite { pieces, .. } => {
                for p in pieces.iter_mut() {
                    if edit_leaf(&mut p.location, n, f) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// The top-level composite of a single-single tree.
fn top_composite(raw: &mut RawLocation) -> (&mut Vec<RawPiece>, &mut u64) {
    match &mut raw.singles[..] {
        [RawSingle::Composite { pieces, bit_offset }] => (pieces, bit_offset),
        _ => unreachable!("single_single_tree builds one composite"),
    }
}

fn normal_bits(n: &NormalLocation) -> u64 {
    match &n.places[..] {
        [SingleLocation::Composite(pieces)] => pieces.iter().map(|p| p.bits).sum(),
        _ => unreachable!("one composite normalises to one composite"),
    }
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

/// Asserts that applying `rewrites` in order keeps the normal form
/// (rejects the case when none of them had a place in the tree).
fn check_rewrite(raw: &RawLocation, rewrites: &[Rewrite]) -> Result<(), TestCaseError> {
    let mut other = raw.clone();
    let mut applied = false;
    for r in rewrites {
        applied |= r.apply(&mut other);
    }
    prop_assume!(applied);
    prop_assert_eq!(raw.normalize(), other.normalize(), "raw {:?}\nrewritten {:?}", raw, other);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, max_global_rejects: 10_000, ..ProptestConfig::default() })]

    /// Property 1: normalising the raw form of a normal form gives it back.
    #[test]
    fn idempotent(raw in tree()) {
        let n = raw.normalize();
        prop_assert_eq!(RawLocation::from(&n).normalize(), n);
    }

    /// Property 2, split: a part of b bits equals a part of k bits followed
    /// by one of b-k bits whose places are k bits further on.
    #[test]
    fn split_part(raw in tree(), r in split()) {
        check_rewrite(&raw, &[r])?;
    }

    /// Property 2, wrap: a part's location equals a composite of one part
    /// of the same length with that location (after a skipped prefix, before
    /// an unread suffix).
    #[test]
    fn wrap_part(raw in tree(), r in wrap()) {
        check_rewrite(&raw, &[r])?;
    }

    /// Property 2, zero-length parts: they add nothing, wherever they are.
    #[test]
    fn zero_length_parts(raw in tree(), rs in prop::collection::vec(zero(), 1..4)) {
        check_rewrite(&raw, &rs)?;
    }

    /// Property 2, singles: the single locations of a location are a set.
    #[test]
    fn singles_are_a_set(raw in tree(), r in singles()) {
        check_rewrite(&raw, &[r])?;
    }

    /// Property 2, all rewrites in random sequences.
    #[test]
    fn rewrite_sequences(
        raw in tree(),
        rs in prop::collection::vec(prop_oneof![split(), wrap(), zero(), singles()], 1..6),
    ) {
        check_rewrite(&raw, &rs)?;
    }

    /// Property 2, bit offset: a composite with bit offset o equals the same
    /// composite with its first o bits cut off and bit offset 0.
    #[test]
    fn offset_equals_cut(
        raw in tree(),
        sel in any::<usize>(),
        at in prop_oneof![Just(OffsetAt::Boundary), Just(OffsetAt::Inside), Just(OffsetAt::PastEnd)],
        seed in any::<u64>(),
    ) {
        let count = count_composites(&raw);
        prop_assume!(count > 0);
        let mut with_offset = raw.clone();
        let mut found = true;
        edit_composite(&mut with_offset, &mut (sel % count), &mut |pieces, bit_offset| {
            let total = total_bits(pieces);
            let mut bounds = vec![0];
            bounds.extend(pieces.iter().scan(0, |pos, p| { *pos += p.bits; Some(*pos) }));
            *bit_offset = match at {
                OffsetAt::Boundary => bounds[seed as usize % bounds.len()],
                OffsetAt::PastEnd => total + 1 + seed % 8,
                OffsetAt::Inside => {
                    let inside: Vec<u64> = bounds
                        .windows(2)
                        .filter(|w| w[1] - w[0] >= 2)
                        .map(|w| w[0] + 1 + seed % (w[1] - w[0] - 1))
                        .collect();
                    if inside.is_empty() {
                        found = false;
                        return;
                    }
                    inside[(seed >> 32) as usize % inside.len()]
                }
            };
        });
        prop_assume!(found);
        let mut cut = with_offset.clone();
        edit_composite(&mut cut, &mut (sel % count), &mut |pieces, bit_offset| {
            *pieces = cut_front(pieces, *bit_offset);
            *bit_offset = 0;
        });
        prop_assert_eq!(with_offset.normalize(), cut.normalize(), "offset {:?}\ncut {:?}", with_offset, cut);
    }

    /// Property 3, part length: in a single-single composite with bit offset
    /// o, the normal form covers total - o bits, so another length of one
    /// top-level part changes it.
    #[test]
    fn part_length_matters(raw in single_single_tree(), sel in any::<usize>(), new_bits in 0u64..=64) {
        let mut raw = raw;
        let mut changed = raw.clone();
        let (pieces, _) = top_composite(&mut changed);
        prop_assume!(!pieces.is_empty());
        let i = sel % pieces.len();
        prop_assume!(pieces[i].bits != new_bits);
        pieces[i].bits = new_bits;
        let (t_new, t_old) = (total_bits(pieces), total_bits(top_composite(&mut raw).0));
        // Same offset in both, inside both composites.
        let o = (*top_composite(&mut raw).1).min(t_old).min(t_new);
        *top_composite(&mut raw).1 = o;
        *top_composite(&mut changed).1 = o;
        let (a, b) = (raw.normalize(), changed.normalize());
        prop_assert_eq!(normal_bits(&a), t_old - o);
        prop_assert_eq!(normal_bits(&b), t_new - o);
        prop_assert_ne!(a, b);
    }

    /// Property 3, sources: in a single-single tree every bit read has one
    /// place; moving a read source to another register or bit offset
    /// changes that place, hence the normal form.
    #[test]
    fn source_matters(raw in single_single_tree(), sel in any::<usize>(), regno in any::<bool>(), delta in 1u64..64) {
        let mut raw = raw;
        let (pieces, o) = top_composite(&mut raw);
        // The top-level composite reads its bits o..total.
        let len = total_bits(pieces).saturating_sub(*o);
        let mut read = Vec::new();
        leaves_read(&raw, 0, len, &mut read);
        let mut sources = Vec::new();
        leaf_sources(&raw, &mut sources);
        let eligible: Vec<usize> =
            (0..read.len()).filter(|&i| read[i] && sources[i] != Source::Undefined).collect();
        prop_assume!(!eligible.is_empty());
        let mut changed = raw.clone();
        let mut n = eligible[sel % eligible.len()];
        edit_leaf(&mut changed, &mut n, &mut |s| match s {
            Source::Register { regno: r, .. } if regno => *r += 1,
            Source::Memory { bit_addr, .. } => *bit_addr += u128::from(delta),
            Source::Register { bit_offset, .. }
            | Source::Implicit { bit_offset, .. }
            | Source::ImplicitPointer { bit_offset, .. } => *bit_offset += delta,
            Source::Undefined => unreachable!("not eligible"),
        });
        prop_assert_ne!(raw.normalize(), changed.normalize(), "changed {:?}", changed);
    }

    /// Robustness: parts adding up past `u64::MAX` bits neither panic nor
    /// wrap; a composite keeps `min(total, u64::MAX) - offset` bits, in the
    /// canonical shape, and stays idempotent.
    #[test]
    fn huge_lengths_are_cut_off(raw in tree(), seed in any::<u64>()) {
        let mut raw = raw;
        inflate(&mut raw, &mut { seed });
        let n = raw.normalize();
        check_canonical(&n)?;
        prop_assert_eq!(&RawLocation::from(&n).normalize(), &n);
        if let [RawSingle::Composite { pieces, bit_offset }] = &raw.singles[..] {
            let total = pieces.iter().fold(0u64, |t, p| t.saturating_add(p.bits));
            prop_assert_eq!(normal_bits(&n), total.saturating_sub(*bit_offset));
        }
    }

    /// Property 4: the normal form reads, bit by bit, the places the tree
    /// reads, and has the canonical shape.
    #[test]
    fn means_what_the_tree_means(raw in tree()) {
        let n = raw.normalize();
        check_canonical(&n)?;
        prop_assert_eq!(read_normal(&n), read_raw(&raw), "normal form {}", n);
    }
}

// ---------------------------------------------------------------------------
// Hand-derived examples
// ---------------------------------------------------------------------------

fn reg(regno: u64, bit_offset: u64) -> Source {
    Source::Register { regno, bit_offset }
}
fn part(bits: u64, s: Source) -> RawPiece {
    RawPiece { bits, location: RawLocation::simple(s) }
}
fn composite_of(pieces: Vec<RawPiece>, bit_offset: u64) -> RawLocation {
    RawLocation { singles: vec![RawSingle::Composite { pieces, bit_offset }] }
}
fn piece(bits: u64, sources: &[Source]) -> Piece {
    Piece { bits, sources: sources.iter().cloned().collect() }
}
fn normal_composite(pieces: Vec<Piece>) -> NormalLocation {
    NormalLocation { places: vec![SingleLocation::Composite(pieces)] }
}

#[test]
fn example_split() {
    // [16: mem(as1)[0x10] | 8: reg2] with the first part split at bit 5:
    // [5: mem(as1) bit 0x80 | 11: mem(as1) bit 0x85 | 8: reg2]. The second
    // part continues the first (0x80 + 5 = 0x85), so both read
    // [16: mem(as1) bit 0x80 | 8: reg2].
    let mem = |bit_addr| Source::Memory { aspace: 1, bit_addr, thread: None, lane: None };
    let whole = composite_of(vec![part(16, mem(0x80)), part(8, reg(2, 0))], 0);
    let split = composite_of(vec![part(5, mem(0x80)), part(11, mem(0x85)), part(8, reg(2, 0))], 0);
    let expected = normal_composite(vec![piece(16, &[mem(0x80)]), piece(8, &[reg(2, 0)])]);
    assert_eq!(whole.normalize(), expected);
    assert_eq!(split.normalize(), expected);
}

#[test]
fn example_split_of_a_part_with_two_places() {
    // A 16-bit part in {reg1, composite[8: reg2 | 8: reg3]}: bits 0..8 are in
    // reg1+0 or reg2+0, bits 8..16 in reg1+8 or reg3+0. Split at 4: the
    // tail's location is {reg1+4, the composite at offset 4}, reading
    // 4 bits from reg1+4/reg2+4 and 8 from reg1+8/reg3+0. Merging the first
    // two pieces gives back [8: reg1/reg2 | 8: reg1+8/reg3].
    let alt = |k: u64| RawLocation {
        singles: vec![
            RawSingle::Simple(reg(1, k)),
            RawSingle::Composite { pieces: vec![part(8, reg(2, 0)), part(8, reg(3, 0))], bit_offset: k },
        ],
    };
    let whole = composite_of(vec![RawPiece { bits: 16, location: alt(0) }], 0);
    let split = composite_of(vec![RawPiece { bits: 4, location: alt(0) }, RawPiece { bits: 12, location: alt(4) }], 0);
    let expected = normal_composite(vec![piece(8, &[reg(1, 0), reg(2, 0)]), piece(8, &[reg(1, 8), reg(3, 0)])]);
    assert_eq!(whole.normalize(), expected);
    assert_eq!(split.normalize(), expected);
}

#[test]
fn example_wrap() {
    // [8: reg3+8 | 8: reg4]. Wrapping the first part's location alone:
    // [8: composite[8: reg3+8] | 8: reg4]; with a 4-bit prefix reg5 skipped
    // by bit offset 4 and an unread suffix reg6: [8: composite[4: reg5 |
    // 8: reg3+8 | 8: reg6] at offset 4 | 8: reg4]. The part reads composite
    // bits 4..12, all of them reg3+8.., so each reads [8: reg3+8 | 8: reg4].
    let plain = composite_of(vec![part(8, reg(3, 8)), part(8, reg(4, 0))], 0);
    let alone = composite_of(
        vec![RawPiece { bits: 8, location: composite_of(vec![part(8, reg(3, 8))], 0) }, part(8, reg(4, 0))],
        0,
    );
    let inner = composite_of(vec![part(4, reg(5, 0)), part(8, reg(3, 8)), part(8, reg(6, 0))], 4);
    let prefixed = composite_of(vec![RawPiece { bits: 8, location: inner }, part(8, reg(4, 0))], 0);
    let expected = normal_composite(vec![piece(8, &[reg(3, 8)]), piece(8, &[reg(4, 0)])]);
    assert_eq!(plain.normalize(), expected);
    assert_eq!(alone.normalize(), expected);
    assert_eq!(prefixed.normalize(), expected);
}

#[test]
fn example_zero_length_parts() {
    // [0: reg9 | 8: reg1 | 0: undefined | 8: reg1+8 | 0: {}]: the empty parts
    // read nothing, and reg1+8 continues reg1 after 8 bits: [16: reg1].
    let raw = composite_of(
        vec![
            part(0, reg(9, 0)),
            part(8, reg(1, 0)),
            part(0, Source::Undefined),
            part(8, reg(1, 8)),
            RawPiece { bits: 0, location: RawLocation { singles: vec![] } },
        ],
        0,
    );
    assert_eq!(raw.normalize(), normal_composite(vec![piece(16, &[reg(1, 0)])]));
}

#[test]
fn example_singles_reordered_and_duplicated() {
    // Top level {reg2, mem[0x2], reg2} is the set {mem[0x2], reg2}: memory
    // sorts before registers (declaration order of `Source`).
    let mem = Source::memory(0, 0x10);
    let raw = RawLocation {
        singles: vec![RawSingle::Simple(reg(2, 0)), RawSingle::Simple(mem.clone()), RawSingle::Simple(reg(2, 0))],
    };
    let expected = NormalLocation { places: vec![SingleLocation::Simple(mem), SingleLocation::Simple(reg(2, 0))] };
    assert_eq!(raw.normalize(), expected);
    // An 8-bit part in {reg2, reg1, reg2}: one piece of 8 bits in reg1 or reg2.
    let alts = RawLocation {
        singles: vec![RawSingle::Simple(reg(2, 0)), RawSingle::Simple(reg(1, 0)), RawSingle::Simple(reg(2, 0))],
    };
    let raw = composite_of(vec![RawPiece { bits: 8, location: alts }], 0);
    assert_eq!(raw.normalize(), normal_composite(vec![piece(8, &[reg(1, 0), reg(2, 0)])]));
}

#[test]
fn example_offset_versus_cut() {
    let parts = || vec![part(8, reg(1, 0)), part(8, reg(2, 0)), part(8, reg(3, 0))];
    // Offset 8, a part boundary: bits 8..24 are reg2 then reg3; cutting the
    // first 8 bits drops the reg1 part.
    let expected = normal_composite(vec![piece(8, &[reg(2, 0)]), piece(8, &[reg(3, 0)])]);
    assert_eq!(composite_of(parts(), 8).normalize(), expected);
    assert_eq!(composite_of(parts()[1..].to_vec(), 0).normalize(), expected);
    // Offset 12, inside the reg2 part: bits 12..24 are reg2 from its bit 4
    // for 4 bits, then reg3 for 8; cut off, the reg2 part keeps 4 bits
    // starting at reg2+4.
    let expected = normal_composite(vec![piece(4, &[reg(2, 4)]), piece(8, &[reg(3, 0)])]);
    assert_eq!(composite_of(parts(), 12).normalize(), expected);
    assert_eq!(composite_of(vec![part(4, reg(2, 4)), part(8, reg(3, 0))], 0).normalize(), expected);
}

#[test]
fn example_from_normal_form() {
    // {reg7, composite[8: reg1/mem[0] | 4: undefined]} as a raw tree: the
    // simple place stays simple; the composite becomes two parts at offset
    // 0, the first with the two places as single locations.
    let n = NormalLocation {
        places: vec![
            SingleLocation::Simple(reg(7, 0)),
            SingleLocation::Composite(vec![
                piece(8, &[Source::memory(0, 0), reg(1, 0)]),
                piece(4, &[Source::Undefined]),
            ]),
        ],
    };
    let raw = RawLocation::from(&n);
    let expected = RawLocation {
        singles: vec![
            RawSingle::Simple(reg(7, 0)),
            RawSingle::Composite {
                pieces: vec![
                    RawPiece {
                        bits: 8,
                        location: RawLocation {
                            singles: vec![RawSingle::Simple(Source::memory(0, 0)), RawSingle::Simple(reg(1, 0))],
                        },
                    },
                    part(4, Source::Undefined),
                ],
                bit_offset: 0,
            },
        ],
    };
    assert_eq!(raw, expected);
    assert_eq!(raw.normalize(), n);
}
