//! The FDE lookup index of a frame section: every FDE whose headers parse,
//! sorted by start address, searched by binary search (`unwind.step`,
//! `unwind.no-fde`).

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
    /// `max_end[i]`: the largest `end` of `fdes[..=i]` (stops the backward
    /// scan of overlapping ranges early).
    max_end: Vec<u128>,
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
        let mut m = 0u128;
        ix.max_end = ix
            .fdes
            .iter()
            .map(|f| {
                m = m.max(f.end);
                m
            })
            .collect();
        ix
    }

    /// The first FDE in section order with `begin <= pc < end`, if any.
    pub fn find(&self, pc: u64) -> Option<&Indexed> {
        let n = self.fdes.partition_point(|f| f.begin <= pc);
        let mut best: Option<&Indexed> = None;
        for i in (0..n).rev() {
            if self.max_end[i] <= u128::from(pc) {
                break;
            }
            let f = &self.fdes[i];
            if f.end > u128::from(pc) && best.is_none_or(|b| f.order < b.order) {
                best = Some(f);
            }
        }
        best
    }
}
