//! The parts `DW_OP_LLVM_extend` and `DW_OP_LLVM_select_bit_piece` create:
//! a part location moved N*S bits and cut to the S bits the part uses, so
//! that C parts cost memory in proportion to S*C (the size budget), not C
//! times the size of a large composite part location.
//!
//! Cutting does not change the meaning: a part of S bits only ever reads the
//! S bits of its location from its bit offset on, and the normal form
//! (docs/architecture.md §4) slices composite parts exactly that way.

use super::entry::{Loc, Single, Storage};
use super::machine::Machine;
use super::stop::Stop;
use dwarfcheck_core::outcome::{NormalLocation, Piece, SingleLocation};
use dwarfcheck_core::rules::{id, RuleId};

/// A part location description to copy many times: the location itself and,
/// when it contains a composite, its normal form (computed once).
pub(super) struct PartSource<'a> {
    loc: &'a Loc,
    normal: Option<NormalLocation>,
}

impl<'a> PartSource<'a> {
    /// Prepares `loc` for [`Machine::part_at`].
    pub(super) fn new(loc: &'a Loc) -> Self {
        let has_composite = loc.singles.iter().any(|s| matches!(s.storage, Storage::Composite { .. }));
        PartSource { loc, normal: has_composite.then(|| loc.normalize()) }
    }
}

/// Cuts `[start, start + len)` **bits** out of normalised pieces; each
/// source of a cut piece is advanced to the first bit taken.
fn cut(pieces: &[Piece], start: u64, len: u64) -> Vec<Piece> {
    let end = start.saturating_add(len);
    let mut out = Vec::new();
    let mut pos = 0u64;
    for p in pieces {
        let (lo, hi) = (pos.max(start), pos.saturating_add(p.bits).min(end));
        if lo < hi {
            let skip = lo - pos;
            out.push(Piece { bits: hi - lo, sources: p.sources.iter().map(|s| s.advanced(skip)).collect() });
        }
        pos = pos.saturating_add(p.bits);
        if pos >= end {
            break;
        }
    }
    out
}

impl Machine<'_> {
    /// The location of a part of `bits` bits at `src` moved `delta` bits, as
    /// `DW_OP_LLVM_bit_offset delta` would move it: undefined storage is
    /// unchanged; when `moved` names a rule, an offset at or past a
    /// storage's end is that evaluation error (`DW_OP_LLVM_extend` passes
    /// `None`: its parts are PL itself, not moved); then every bit of the
    /// part must be inside each storage (`composite.part-exceeds-storage`,
    /// ill-formed).
    ///
    /// Also returns the part's weight for `op.extend.size-limits`: one per
    /// place of its normal form, a composite place counting its normal-form
    /// pieces inside the part's bits.
    pub(super) fn part_at(
        &self,
        src: &PartSource<'_>,
        delta: u64,
        bits: u64,
        moved: Option<RuleId>,
    ) -> Result<(Loc, u64), Stop> {
        let ctx = self.ctx;
        // The checks, on the single location descriptions as they are: the
        // move first (when the part is a moved PL), then the part's fit.
        for s in &src.loc.singles {
            let Some(rule) = moved.clone() else { break };
            if s.storage == Storage::Undefined {
                continue;
            }
            let new = s.bit_offset.saturating_add(u128::from(delta));
            if let Some(size) = s.storage.size_bits(ctx) {
                if new >= size {
                    return Err(Stop::Eval(rule));
                }
            }
        }
        for s in &src.loc.singles {
            if s.storage == Storage::Undefined {
                continue;
            }
            let new = s.bit_offset.saturating_add(u128::from(delta));
            if let Some(size) = s.storage.size_bits(ctx) {
                if new.saturating_add(u128::from(bits)) > size {
                    return Err(Stop::Ill(id::COMPOSITE_PART_EXCEEDS_STORAGE));
                }
            }
        }
        // The part location itself.
        let Some(normal) = &src.normal else {
            let singles: Vec<Single> = src
                .loc
                .singles
                .iter()
                .map(|s| match s.storage {
                    Storage::Undefined => s.clone(),
                    _ => Single { storage: s.storage.clone(), bit_offset: s.bit_offset + u128::from(delta) },
                })
                .collect();
            let weight = singles.len() as u64;
            return Ok((Loc { singles }, weight));
        };
        let places: Vec<SingleLocation> = normal
            .places
            .iter()
            .map(|p| match p {
                SingleLocation::Simple(s) => SingleLocation::Simple(s.advanced(delta)),
                SingleLocation::Composite(pieces) => SingleLocation::Composite(cut(pieces, delta, bits)),
            })
            .collect();
        let weight = places
            .iter()
            .map(|p| match p {
                SingleLocation::Simple(_) => 1,
                SingleLocation::Composite(pieces) => pieces.len() as u64,
            })
            .sum();
        Ok((Loc::from_normal(&NormalLocation { places }), weight))
    }
}
