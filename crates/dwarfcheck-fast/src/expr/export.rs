//! The normal form of location descriptions straight from the scratch
//! arenas (docs/architecture.md §4, as `RawLocation::normalize` defines it), window by
//! window with memoisation, and the bound on composite nesting that keeps
//! every recursion over parts shallow (hetero-2020 "Composite Location
//! Description Operations").

use super::machine::{Location, Scratch, NONE};
use dwarfcheck_core::outcome::{NormalLocation, Piece, SingleLocation, Source};
use std::collections::{BTreeSet, HashMap};

/// Nesting depth of composites (a composite part whose location is a
/// composite, ...) beyond which a new part's location is replaced by a flat
/// copy of the bits it uses: same bits, same normal form, bounded recursion.
pub const MAX_NESTING: u32 = 64;

/// Merged pieces of `[start, start + len)` of a composite, by (composite,
/// start, len) **bits**.
type Memo = HashMap<(u32, u64, u64), Vec<Piece>>;

impl Scratch {
    /// The normal form of any location description (several places,
    /// composites at any offset, nested composites).
    pub(super) fn normal_form(&self, l: &Location) -> NormalLocation {
        let mut memo = Memo::new();
        let mut places = Vec::new();
        self.places_of(l, &mut memo, &mut places);
        if places.is_empty() {
            places.push(SingleLocation::Simple(Source::Undefined));
        }
        places.sort();
        places.dedup();
        NormalLocation { places }
    }

    fn places_of(&self, l: &Location, memo: &mut Memo, out: &mut Vec<SingleLocation>) {
        match *l {
            Location::Multi { start, len } => {
                for i in start..start + len {
                    self.places_of(&self.multi[i as usize], memo, out);
                }
            }
            Location::Composite { idx, bit } => {
                let total = self.composites[idx as usize].total_bits;
                out.push(SingleLocation::Composite(self.window(idx, bit, total.saturating_sub(bit), memo)));
            }
            _ => out.push(SingleLocation::Simple(self.source(l))),
        }
    }

    /// The merged pieces of bits `[start, start + len)` of composite `idx`;
    /// bits past its end read as undefined.
    ///
    /// Remembered in `memo` for the nested windows ([`Self::segments`]),
    /// which parts sharing a part location ask for again and again; an
    /// outermost window is asked for once and not copied there.
    fn window(&self, idx: u32, start: u64, len: u64, memo: &mut Memo) -> Vec<Piece> {
        let mut out: Vec<Piece> = Vec::new();
        let end = start.saturating_add(len);
        let mut pos = 0u64;
        let mut p = self.composites[idx as usize].first;
        while p != NONE && pos < end {
            let part = &self.parts[p as usize];
            let pend = pos.saturating_add(part.bits);
            let (lo, hi) = (pos.max(start), pend.min(end));
            if lo < hi {
                match part.location {
                    // (A part in one non-composite storage, the common
                    // case: no intermediate vector.)
                    Location::Composite { .. } | Location::Multi { .. } => {
                        for piece in self.segments(&part.location, lo - pos, hi - lo, memo) {
                            push_merged(&mut out, piece);
                        }
                    }
                    _ => push_merged(&mut out, piece_of(hi - lo, self.source(&part.location).advanced(lo - pos))),
                }
            }
            pos = pend;
            p = part.next;
        }
        let covered: u64 = out.iter().map(|p| p.bits).sum();
        if covered < len {
            push_merged(&mut out, piece_of(len - covered, Source::Undefined));
        }
        out
    }

    /// [`Self::window`] remembered in `memo`.
    fn window_memo(&self, idx: u32, start: u64, len: u64, memo: &mut Memo) -> Vec<Piece> {
        if let Some(p) = memo.get(&(idx, start, len)) {
            return p.clone();
        }
        let out = self.window(idx, start, len, memo);
        memo.insert((idx, start, len), out.clone());
        out
    }

    /// The pieces of `n` bits of location `l` from `skip` bits on.
    fn segments(&self, l: &Location, skip: u64, n: u64, memo: &mut Memo) -> Vec<Piece> {
        match *l {
            Location::Composite { idx, bit } => self.window_memo(idx, bit.saturating_add(skip), n, memo),
            Location::Multi { start, len } => {
                let alts: Vec<Vec<Piece>> =
                    (start..start + len).map(|i| self.segments(&self.multi[i as usize], skip, n, memo)).collect();
                union(n, &alts)
            }
            _ => vec![piece_of(n, self.source(l).advanced(skip))],
        }
    }

    /// The normal form of the `bits` bits of `l` from each single
    /// location's offset on: what a part of that size at `l` describes.
    pub(super) fn normal_window(&self, l: &Location, bits: u64) -> NormalLocation {
        let mut memo = Memo::new();
        let mut places = Vec::new();
        let singles = match *l {
            Location::Multi { start, len } => &self.multi[start as usize..(start + len) as usize],
            _ => std::slice::from_ref(l),
        };
        for x in singles {
            places.push(match *x {
                Location::Composite { idx, bit } => SingleLocation::Composite(self.window(idx, bit, bits, &mut memo)),
                _ => SingleLocation::Simple(self.source(x)),
            });
        }
        if places.is_empty() {
            places.push(SingleLocation::Simple(Source::Undefined));
        }
        places.sort();
        places.dedup();
        NormalLocation { places }
    }

    /// `l` as the location of a part of `bits` bits: itself, or, when it
    /// nests composites [`MAX_NESTING`] deep, the normal form of those bits
    /// as new complete composites (one single location per place).
    pub(super) fn shallow(&mut self, l: Location, bits: u64) -> Location {
        if self.nesting(&l) < MAX_NESTING {
            return l;
        }
        let normal = self.normal_window(&l, bits);
        self.import_location(&normal)
    }

    /// Appends a part of `bits` bits at `location` to composite `idx`.
    /// A part location nesting composites 64 deep is first flattened to
    /// a composite of the pieces its bits are made of (same normal form).
    pub fn append_part(&mut self, idx: u32, bits: u64, location: Location) {
        let location = self.shallow(location, bits);
        self.link_part(idx, bits, location);
    }

    /// The normalised outcome form of a location description.
    pub fn export_location(&self, l: &Location) -> NormalLocation {
        match l {
            Location::Composite { idx, bit: 0 } => match self.export_flat_composite(*idx) {
                Some(pieces) => NormalLocation { places: vec![SingleLocation::Composite(pieces)] },
                None => self.normal_form(l),
            },
            Location::Multi { .. } | Location::Composite { .. } => self.normal_form(l),
            // One place in non-composite storage is already normal.
            _ => NormalLocation { places: vec![SingleLocation::Simple(self.source(l))] },
        }
    }

    /// The normal form of a composite at bit offset 0 whose parts are all
    /// single places in non-composite storage (the common DWARF 5 shape),
    /// built directly: zero-length parts dropped, parts that continue the
    /// previous part's storage merged, exactly as `RawLocation::normalize`
    /// does. `None` for any other composite.
    fn export_flat_composite(&self, idx: u32) -> Option<Vec<Piece>> {
        let mut pieces: Vec<Piece> = Vec::with_capacity(4);
        let mut p = self.composites[idx as usize].first;
        while p != NONE {
            let part = &self.parts[p as usize];
            p = part.next;
            if matches!(part.location, Location::Composite { .. } | Location::Multi { .. }) {
                return None;
            }
            if part.bits == 0 {
                continue;
            }
            let src = self.source(&part.location);
            if let Some(last) = pieces.last_mut() {
                if last.sources.first().is_some_and(|prev| prev.advanced(last.bits) == src) {
                    last.bits += part.bits;
                    continue;
                }
            }
            // (`insert` into an empty set is much cheaper than `from([..])`,
            // which sorts.)
            let mut sources = BTreeSet::new();
            sources.insert(src);
            pieces.push(Piece { bits: part.bits, sources });
        }
        Some(pieces)
    }
}

fn piece_of(bits: u64, s: Source) -> Piece {
    let mut sources = BTreeSet::new();
    sources.insert(s);
    Piece { bits, sources }
}

/// Appends a piece, merging it into the last one when it continues that
/// one's storage; zero-length pieces are dropped.
fn push_merged(out: &mut Vec<Piece>, p: Piece) {
    if p.bits == 0 {
        return;
    }
    if let Some(last) = out.last_mut() {
        if last.continued_by(&p.sources) {
            last.bits += p.bits;
            return;
        }
    }
    out.push(p);
}

/// Several places of the same `bits` bits: cut at every boundary of any of
/// them, each cut holding the union of their places.
fn union(bits: u64, alts: &[Vec<Piece>]) -> Vec<Piece> {
    if alts.len() == 1 {
        return alts[0].clone();
    }
    let mut cuts = BTreeSet::from([0u64, bits]);
    for a in alts {
        let mut pos = 0u64;
        for p in a {
            pos = pos.saturating_add(p.bits);
            cuts.insert(pos.min(bits));
        }
    }
    let cuts: Vec<u64> = cuts.into_iter().collect();
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let mut sources = BTreeSet::new();
        for a in alts {
            let mut pos = 0u64;
            for p in a {
                if lo < pos + p.bits {
                    sources.extend(p.sources.iter().map(|s| s.advanced(lo - pos)));
                    break;
                }
                pos += p.bits;
            }
        }
        push_merged(&mut out, Piece { bits: hi - lo, sources });
    }
    out
}
