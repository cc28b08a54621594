//! The FDE lookup index of a frame section: every FDE whose headers parse,
//! sorted by start address, and the address ranges that one FDE decides,
//! searched by binary search (`unwind.step`, `unwind.no-fde`).

use dwarfcheck_core::cfi::{CfiSection, Cie, EntryKind, Fde};

/// One FDE of the index.
#[derive(Debug, Clone)]
pub struct Indexed {
    /// First address covered.
    pub begin: u64,
    /// One past the last address covered (`begin + pc_range`, exact).
    pub end: u128,
    /// Position of the FDE in section order (the first covering FDE in
    /// section order applies).
    pub order: u32,
    /// The decoded FDE header.
    pub fde: Fde,
    /// Index of its CIE in [`FdeIndex::cies`].
    pub cie: u32,
}

/// The FDEs of a section that parse, by start address, with their CIEs
/// decoded once.
#[derive(Debug, Clone, Default)]
pub struct FdeIndex {
    /// FDEs sorted by (`begin`, `order`).
    pub fdes: Vec<Indexed>,
    /// First addresses of disjoint address ranges, ascending: range k
    /// covers the addresses from `firsts[k]` to `firsts[k + 1]` (or to the
    /// end of the address space). At most two ranges per FDE.
    firsts: Vec<u64>,
    /// `decided[k]`: the position in `fdes` of the FDE that applies in
    /// range k, or [`NONE`].
    decided: Vec<u32>,
    /// Address buckets: the addresses `firsts[0] + (b << shift)` up to
    /// the next bucket's lie in ranges `buckets[b]..=buckets[b + 1]` (the
    /// last bucket: to the last range), so that a lookup searches a few
    /// ranges only. At most one bucket per range.
    buckets: Vec<u32>,
    /// log2 of the bytes per bucket.
    shift: u32,
    /// Decoded CIEs.
    pub cies: Vec<Cie>,
}

impl FdeIndex {
    /// Walks `sec` once in section order and indexes every FDE whose
    /// headers (and CIE) parse; an FDE that does not parse is skipped
    /// (`unwind.no-fde`). The walk stops where the entries cannot be
    /// delimited any more.
    pub fn build(sec: &CfiSection) -> Self {
        let mut ix = FdeIndex::default();
        let mut cache: Option<Cie> = None;
        let mut order = 0u32;
        let mut by_offset = std::collections::HashMap::new();
        for entry in sec.entries() {
            let Ok(entry) = entry else { break };
            if !matches!(entry.kind, EntryKind::Fde { .. }) {
                continue;
            }
            order += 1;
            let Ok(fde) = sec.parse_fde_entry(&entry, &mut cache) else { continue };
            let Some(cie) = &cache else { continue };
            let ci = *by_offset.entry(cie.offset).or_insert_with(|| {
                ix.cies.push(cie.clone());
                ix.cies.len() - 1
            });
            let end = u128::from(fde.pc_begin) + u128::from(fde.pc_range);
            ix.fdes.push(Indexed { begin: fde.pc_begin, end, order, fde, cie: ci as u32 });
        }
        ix.fdes.sort_by_key(|f| (f.begin, f.order));
        let spans: Vec<(u64, u128, u32)> = ix.fdes.iter().map(|f| (f.begin, f.end, f.order)).collect();
        (ix.firsts, ix.decided) = deciding_ranges(&spans).into_iter().unzip();
        (ix.buckets, ix.shift) = buckets(&ix.firsts);
        ix
    }

    /// The first FDE in section order with `begin <= pc < end`, if any.
    pub fn find(&self, pc: u64) -> Option<&Indexed> {
        self.position(pc).map(|i| &self.fdes[i])
    }

    /// [`FdeIndex::find`] as a position in [`FdeIndex::fdes`] (one binary
    /// search, however the FDEs' ranges overlap).
    pub fn position(&self, pc: u64) -> Option<usize> {
        let k = range_of(&self.firsts, &self.buckets, self.shift, pc)?;
        let i = self.decided[k];
        (i != NONE).then_some(i as usize)
    }
}

/// No FDE applies (in [`FdeIndex`]'s ranges).
const NONE: u32 = u32::MAX;

/// The buckets of ranges whose first addresses are `firsts` (ascending),
/// and log2 of their size in bytes: as few bytes per bucket as keep the
/// buckets no more than the ranges.
fn buckets(firsts: &[u64]) -> (Vec<u32>, u32) {
    let (Some(&lo), Some(&hi)) = (firsts.first(), firsts.last()) else { return (Vec::new(), 0) };
    let n = firsts.len() as u64;
    let mut shift = 0u32;
    while shift < 63 && ((hi - lo) >> shift) >= n {
        shift += 1;
    }
    let count = ((hi - lo) >> shift) + 1;
    let buckets = (0..count)
        .map(|b| {
            let at = lo + (b << shift);
            (firsts.partition_point(|&f| f <= at) - 1) as u32
        })
        .collect();
    (buckets, shift)
}

/// The range of `firsts` (see [`FdeIndex`]) that holds `pc`, through the
/// buckets of [`buckets`]; `None` before the first.
#[inline]
fn range_of(firsts: &[u64], buckets: &[u32], shift: u32, pc: u64) -> Option<usize> {
    let lo = *firsts.first()?;
    let off = pc.checked_sub(lo)?;
    let b = usize::try_from(off >> shift).map_or(buckets.len() - 1, |b| b.min(buckets.len() - 1));
    let start = buckets[b] as usize;
    let end = buckets.get(b + 1).map_or(firsts.len(), |&e| e as usize + 1);
    // (`firsts[start] <= pc`: at least one.)
    Some(start + firsts[start..end].partition_point(|&f| f <= pc) - 1)
}

/// The disjoint ranges of `spans` (`(begin, end, order)`, sorted by
/// `begin`: the FDE at position i covers `begin <= pc < end`) that one
/// span decides, the first in `order` of those that cover them: `(first
/// address, position or NONE)` by first address, neighbours with the same
/// decision merged. One sweep over the spans' bounds with a heap of the
/// spans open there; at most `2 * spans.len()` entries.
fn deciding_ranges(spans: &[(u64, u128, u32)]) -> Vec<(u64, u32)> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut bounds: Vec<u128> = spans.iter().flat_map(|&(b, e, _)| [u128::from(b), e]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut open: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new();
    let mut out: Vec<(u64, u32)> = Vec::new();
    let mut next = 0usize;
    for &b in &bounds {
        let Ok(first) = u64::try_from(b) else { break };
        while next < spans.len() && spans[next].0 == first {
            open.push(Reverse((spans[next].2, next as u32)));
            next += 1;
        }
        // (Spans that ended are dropped when they come to the top: the top
        // is then the first in order of those still open.)
        while let Some(&Reverse((_, i))) = open.peek() {
            if spans[i as usize].1 > b {
                break;
            }
            open.pop();
        }
        let decided = open.peek().map_or(NONE, |&Reverse((_, i))| i);
        if out.last().is_none_or(|&(_, d)| d != decided) {
            out.push((first, decided));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{buckets, deciding_ranges, range_of, NONE};

    /// The first span in order that covers `pc`, by a scan of them all.
    fn scan(spans: &[(u64, u128, u32)], pc: u64) -> u32 {
        let mut best: Option<(u32, u32)> = None;
        for (i, &(b, e, o)) in spans.iter().enumerate() {
            if b <= pc && u128::from(pc) < e && best.is_none_or(|(bo, _)| o < bo) {
                best = Some((o, i as u32));
            }
        }
        best.map_or(NONE, |(_, i)| i)
    }

    /// The decision at `pc` by the buckets, checked against a binary search
    /// over all the ranges.
    fn lookup(ranges: &[(u64, u32)], pc: u64) -> u32 {
        let firsts: Vec<u64> = ranges.iter().map(|r| r.0).collect();
        let (b, shift) = buckets(&firsts);
        assert!(b.len() <= firsts.len().max(1), "{} buckets for {} ranges", b.len(), firsts.len());
        let whole = ranges.partition_point(|r| r.0 <= pc).checked_sub(1);
        assert_eq!(range_of(&firsts, &b, shift, pc), whole, "{ranges:?} at {pc:#x}");
        whole.map_or(NONE, |k| ranges[k].1)
    }

    #[test]
    fn the_ranges_give_the_first_covering_span_in_order_as_a_scan_does() {
        // A small deterministic generator: overlapping, nested, empty,
        // touching spans, one reaching the end of the address space.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..200 {
            let n = 1 + rnd(12) as usize;
            let mut spans: Vec<(u64, u128, u32)> = (0..n)
                .map(|o| {
                    let b = rnd(40);
                    (b, u128::from(b + rnd(25)), o as u32)
                })
                .collect();
            if round % 7 == 0 {
                spans.push((u64::MAX - 3, 1u128 << 64, n as u32));
            }
            spans.sort_by_key(|s| (s.0, s.2));
            let ranges = deciding_ranges(&spans);
            assert!(ranges.len() <= 2 * spans.len());
            for pc in (0..80).chain(u64::MAX - 5..=u64::MAX) {
                assert_eq!(lookup(&ranges, pc), scan(&spans, pc), "{spans:?} at {pc}");
            }
        }
    }
}
