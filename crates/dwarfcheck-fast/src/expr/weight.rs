//! What walking and building composites costs: the parts a front-to-back
//! walk reaches (the work budget, rule `expr.budget.work`) and the weight
//! of a part (the size and memory budgets, rules `op.extend.size-limits`,
//! `expr.budget.memory`).

use super::machine::{Location, Scratch, NONE};
use dwarfcheck_core::outcome::SingleLocation;
use std::collections::HashMap;

/// Walk counts of nested windows already walked, by (composite, start bit,
/// bits): a location that shares one part location among many parts (as
/// `DW_OP_LLVM_extend` builds it) is counted in time linear in its parts.
pub(super) type WalkMemo = HashMap<(u32, u64, u64), u64>;

impl Scratch {
    /// The parts a walk of `l` over bits `[skip, skip + n)` reaches (rule
    /// `expr.budget.work`, counted as the reference walks: every part from
    /// the first up to the first one starting at or after the window's end,
    /// and the part locations of those that overlap the window, over the
    /// bits they overlap), or `None` once there are more than `limit`.
    ///
    /// A composite of parts of one size skips to the part holding the
    /// window's first bit and counts the parts skipped. Recursion is one
    /// level per composite nesting, bounded by `export::MAX_NESTING`.
    pub(super) fn walk_cost(&self, l: &Location, skip: u64, n: u64, limit: u64, memo: &mut WalkMemo) -> Option<u64> {
        match *l {
            Location::Composite { idx, bit } => self.composite_cost(idx, bit.saturating_add(skip), n, limit, memo),
            Location::Multi { start, len } => {
                let mut total = 0u64;
                for i in start..start + len {
                    total += self.walk_cost(&self.multi[i as usize], skip, n, limit - total, memo)?;
                }
                Some(total)
            }
            _ => Some(0),
        }
    }

    fn composite_cost(&self, idx: u32, start: u64, n: u64, limit: u64, memo: &mut WalkMemo) -> Option<u64> {
        if let Some(&c) = memo.get(&(idx, start, n)) {
            return (c <= limit).then_some(c);
        }
        let end = start.saturating_add(n);
        let c = self.composites[idx as usize];
        let (mut total, mut pos, mut p) = (0u64, 0u64, c.first);
        if c.stride > 0 && c.first != NONE {
            // Parts of one size at consecutive indices: every part before
            // the one holding bit `start` is reached.
            let count = c.total_bits / c.stride;
            let k = (start / c.stride).min(count);
            total = k;
            pos = k * c.stride;
            p = if k < count { c.first + k as u32 } else { NONE };
            if total > limit {
                return None;
            }
        }
        while p != NONE && pos < end {
            let part = self.parts[p as usize];
            total += 1;
            if total > limit {
                return None;
            }
            let pend = pos.saturating_add(part.bits);
            let (lo, hi) = (pos.max(start), pend.min(end));
            if lo < hi && matches!(part.location, Location::Composite { .. } | Location::Multi { .. }) {
                total += self.walk_cost(&part.location, lo - pos, hi - lo, limit - total, memo)?;
            }
            pos = pend;
            p = part.next;
        }
        // (Short walks are not worth remembering; a map that stays empty
        // allocates nothing.)
        if total >= 16 {
            memo.insert((idx, start, n), total);
        }
        Some(total)
    }

    /// The weight of a part of `bits` **bits** at `l`: 1 for one place in
    /// non-composite storage; otherwise the number of places of the normal
    /// form of those bits, a composite place counting its pieces.
    pub(super) fn part_weight(&self, l: &Location, bits: u64) -> u128 {
        match *l {
            Location::Composite { .. } | Location::Multi { .. } => self
                .normal_window(l, bits)
                .places
                .iter()
                .map(|p| match p {
                    SingleLocation::Simple(_) => 1,
                    SingleLocation::Composite(pieces) => pieces.len() as u128,
                })
                .sum(),
            _ => 1,
        }
    }
}
