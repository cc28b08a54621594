//! Size-budget weight of the parts `DW_OP_LLVM_extend` and
//! `DW_OP_LLVM_select_bit_piece` build (rule `op.extend.size-limits`).

use super::machine::{Location, Scratch};
use dwarfcheck_core::outcome::SingleLocation;

/// Weighs parts cut from one part location (as moved for each part).
///
/// A part's weight is the number of places of its part location's normal
/// form, a composite place counting the normal-form pieces inside the
/// part's bits. A composite's normal form is computed once, so weighing the
/// C parts of `DW_OP_LLVM_select_bit_piece` stays linear.
pub(super) enum Weigher {
    /// One non-composite place: weight 1.
    One,
    /// A composite: start bit of each piece of its normal form at offset 0.
    Composite(Vec<u64>),
    /// Several places: the moved location's normal form, each time.
    Exact,
}

impl Weigher {
    /// The weigher of part location `l` (before any move).
    pub(super) fn new(s: &Scratch, l: &Location) -> Self {
        match *l {
            Location::Composite { idx, .. } => {
                let mut starts = Vec::new();
                if let [SingleLocation::Composite(pieces)] =
                    s.export_location(&Location::Composite { idx, bit: 0 }).places.as_slice()
                {
                    let mut pos = 0u64;
                    for p in pieces {
                        starts.push(pos);
                        pos += p.bits;
                    }
                }
                Weigher::Composite(starts)
            }
            Location::Multi { .. } => Weigher::Exact,
            _ => Weigher::One,
        }
    }

    /// The weight of a part of `bits` **bits** at `l`, this weigher's
    /// location moved (or not).
    pub(super) fn weight(&self, s: &Scratch, l: &Location, bits: u64) -> u128 {
        match (self, l) {
            (Weigher::One, _) => 1,
            (Weigher::Composite(starts), Location::Composite { bit, .. }) => {
                // Pieces overlapping [bit, bit + bits): slicing a normal form
                // keeps its piece boundaries.
                let first = starts.partition_point(|&x| x <= *bit).saturating_sub(1);
                let end = starts.partition_point(|&x| x < bit.saturating_add(bits));
                end.saturating_sub(first) as u128
            }
            _ => exact(s, l, bits),
        }
    }
}

/// The weight from `l`'s normal form.
fn exact(s: &Scratch, l: &Location, bits: u64) -> u128 {
    let places = s.export_location(l).places;
    places
        .iter()
        .map(|p| match p {
            SingleLocation::Simple(_) => 1,
            SingleLocation::Composite(pieces) => {
                let mut pos = 0u64;
                let mut n = 0u128;
                for p in pieces {
                    if pos >= bits {
                        break;
                    }
                    n += 1;
                    pos += p.bits;
                }
                n
            }
        })
        .sum()
}
