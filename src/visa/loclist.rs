//! Lowers each vISA variable to a DWARF 5 location list over Gen ranges
//! (issue 17 item 3): one `DW_LLE_start_length` entry per Gen range of
//! each lowered interval, with the expression [`super::lower::expression`]
//! gives, in one `.debug_loclists` section per blob.
//!
//! Gen ranges of an interval (vISA indices `start ..= end`; ambiguity 104):
//! every index map entry whose vISA index is inside the interval owns the
//! Gen block from its Gen offset to the next larger Gen offset in the
//! object's index map (seed "VISAMap": the Gen instructions up to the next
//! entry's genOffset come from that vISA instruction), or to the object's
//! code end ([`code_end`]) for the last; adjacent blocks are merged. Pcs
//! are the object's relocation offset plus Gen offsets.
//!
//! Points ([`points`]): every [`POINT_STEP`] bytes of each range, the
//! start included: a Gen instruction is 16 bytes, or 8 compacted, so
//! every possible instruction start is a point.

use super::lower::{befp_at, dwarf_register, expression, NotLowered, BE_FP_VALUE};
use super::model::{Blob, Interval, Location, Object, RegFile};
use super::platform::Platform;
use super::target;
use crate::case::ExprCase;
use dwarfcheck_core::context::{AttrForm, CompUnit, Context};
use dwarfcheck_core::encoding::leb128::write_uleb;
use std::collections::BTreeSet;
use std::ops::Bound::{Excluded, Unbounded};
use std::sync::Arc;

/// Bytes between evaluated points: the size of a compacted Gen instruction.
pub const POINT_STEP: u64 = 8;

/// Bytes of one uncompacted Gen instruction: the code end of the last
/// object is its largest mapped Gen offset plus this.
pub const GEN_INSTRUCTION: u32 = 16;

/// One entry of a lowered location list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The pc range `[start, end)`.
    pub range: (u64, u64),
    /// Index of the interval in the variable.
    pub interval: usize,
    /// The decoded interval.
    pub decoded: Interval,
    /// BE_FP's GRF and sub-register the expression reads (BE_FP-relative
    /// memory only): BE_FP at the range's start.
    pub befp: Option<(u16, u16)>,
    /// The expression bytes.
    pub expr: Vec<u8>,
}

/// One variable's location list.
#[derive(Debug, Clone)]
pub struct VariableList {
    /// Index of the object in the blob.
    pub object: usize,
    /// The variable's name.
    pub variable: String,
    /// Byte offset of the list in [`Lists::cu`]'s `.debug_loclists`.
    pub offset: u64,
    /// The entries, in the order written.
    pub entries: Vec<Entry>,
    /// Intervals not lowered, with why.
    pub not_lowered: Vec<(usize, NotLowered)>,
}

/// A blob's location lists and the unit that holds them.
#[derive(Debug, Clone)]
pub struct Lists {
    /// The lists, one per variable.
    pub lists: Vec<VariableList>,
    /// A DWARF 5 unit (8-byte addresses) whose `.debug_loclists` holds them.
    pub cu: CompUnit,
    /// The target the lists are evaluated on.
    pub target: Arc<dwarfcheck_core::target::Target>,
}

/// The Gen offset where object `oi`'s code ends: the next object's
/// relocation offset minus its own when that is larger, else its largest
/// Gen offset in the index map or in a BE_FP interval plus one
/// instruction ([`GEN_INSTRUCTION`]).
pub fn code_end(blob: &Blob, oi: usize) -> u32 {
    let o = &blob.objects[oi];
    let last = o
        .index_map
        .iter()
        .map(|e| e.gen)
        .chain(o.frame.befp.iter().flatten().map(|i| i.end))
        .max()
        .unwrap_or(0)
        .saturating_add(GEN_INSTRUCTION);
    match blob.objects.get(oi + 1) {
        Some(n) if n.reloc_offset > o.reloc_offset => n.reloc_offset - o.reloc_offset,
        _ => last,
    }
}

/// The Gen ranges `[start, end)` of `iv` (vISA indices, inclusive) in
/// `object` whose code ends at `end`; `gens` is the sorted set of the
/// index map's Gen offsets.
pub fn gen_ranges(object: &Object, gens: &BTreeSet<u32>, iv: &Interval, end: u32) -> Vec<(u32, u32)> {
    if iv.start > iv.end {
        return Vec::new();
    }
    let mut blocks: Vec<(u32, u32)> = object
        .index_map
        .iter()
        .filter(|e| iv.start <= e.visa && e.visa <= iv.end)
        .map(|e| {
            let next = gens.range((Excluded(e.gen), Unbounded)).next().copied();
            (e.gen, next.unwrap_or(end.max(e.gen.saturating_add(1))))
        })
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (s, e) in blocks {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Lowers every variable of `blob` compiled for `platform` to a location
/// list. Work is linear in the index map entries times intervals per
/// object (each interval scans the map once).
pub fn lower_lists(blob: &Blob, platform: Platform) -> Lists {
    let target = Arc::new(target::target(platform));
    let mut bodies: Vec<u8> = Vec::new();
    let mut lists = Vec::new();
    for (oi, object) in blob.objects.iter().enumerate() {
        let gens: BTreeSet<u32> = object.index_map.iter().map(|e| e.gen).collect();
        let end = code_end(blob, oi);
        let base = u64::from(object.reloc_offset);
        for v in &object.variables {
            let mut l = VariableList {
                object: oi,
                variable: v.name.clone(),
                offset: bodies.len() as u64,
                entries: Vec::new(),
                not_lowered: Vec::new(),
            };
            for (ii, iv) in v.intervals.iter().enumerate() {
                let ranges = gen_ranges(object, &gens, iv, end);
                if ranges.is_empty() {
                    l.not_lowered.push((ii, NotLowered::Unmapped));
                }
                for (s, e) in ranges {
                    let befp = befp_at(object, s);
                    match expression(&iv.location, befp, platform.be_fp_unit()) {
                        Ok(expr) => {
                            let befp = matches!(iv.location, Location::Memory { absolute: false, .. })
                                .then_some(befp)
                                .flatten();
                            l.entries.push(Entry {
                                range: (base + u64::from(s), base + u64::from(e)),
                                interval: ii,
                                decoded: *iv,
                                befp,
                                expr,
                            })
                        }
                        Err(n) => l.not_lowered.push((ii, n)),
                    }
                }
            }
            write_list(&mut bodies, &l.entries);
            lists.push(l);
        }
    }
    // Header: unit_length, version 5, address_size 8, no segment
    // selector, no offsets table (DWARF 5 §7.29).
    let mut section = ((bodies.len() + 8) as u32).to_le_bytes().to_vec();
    section.extend([5, 0, 8, 0, 0, 0, 0, 0]);
    let header = section.len() as u64;
    section.extend(bodies);
    for l in &mut lists {
        l.offset += header;
    }
    let cu = CompUnit { version: 5, address_size: 8, debug_loclists: section.into(), ..CompUnit::default() };
    Lists { lists, cu, target }
}

/// `DW_LLE_start_length` per entry, then `DW_LLE_end_of_list`.
fn write_list(out: &mut Vec<u8>, entries: &[Entry]) {
    for e in entries {
        out.push(0x08);
        out.extend(e.range.0.to_le_bytes());
        write_uleb(out, e.range.1 - e.range.0);
        write_uleb(out, e.expr.len() as u64);
        out.extend(&e.expr);
    }
    out.push(0x00);
}

/// The points of a list: every [`POINT_STEP`] bytes of each entry's range.
pub fn points(l: &VariableList) -> impl Iterator<Item = u64> + '_ {
    l.entries.iter().flat_map(|e| (e.range.0..e.range.1).step_by(POINT_STEP as usize))
}

/// The entries of `l` whose range holds `pc`.
pub fn covering(l: &VariableList, pc: u64) -> impl Iterator<Item = &Entry> {
    l.entries.iter().filter(move |e| e.range.0 <= pc && pc < e.range.1)
}

/// The expression case evaluating `l` (form `DW_FORM_sec_offset` into
/// `lists.cu`'s `.debug_loclists`) at `pc`, in a state where the GRF of
/// each covering entry's BE_FP holds [`BE_FP_VALUE`] at its sub-register.
pub fn point_case(lists: &Lists, l: &VariableList, pc: u64, platform: Platform) -> ExprCase {
    let mut ctx = Context::new(lists.target.clone());
    ctx.pc = Some(pc);
    ctx.cu = Some(lists.cu.clone());
    for (reg, sub) in covering(l, pc).filter_map(|e| e.befp) {
        let bytes = ctx
            .registers
            .entry(dwarf_register(RegFile::Grf, reg))
            .or_insert_with(|| vec![0u8; platform.grf_bytes() as usize]);
        let at = usize::from(sub);
        if let Some(slot) = bytes.get_mut(at..at + 4) {
            slot.copy_from_slice(&BE_FP_VALUE.to_le_bytes());
        }
    }
    ExprCase {
        form: Some(AttrForm::LocList { offset: l.offset }),
        ..ExprCase::plain(format!("{}@{pc:#x}", l.variable), "visa", &[], Arc::new(ctx))
    }
}
