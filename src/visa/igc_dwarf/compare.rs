//! Compares IGC's DWARF variables with the vISA blob of the same compile.
//!
//! The blob names vISA variables (`V44`), the DWARF source variables
//! (`gid`): neither carries the other's names, so a DWARF variable is
//! matched with the blob's object by its subprogram's name (an object's,
//! or a subroutine's: at -O2 IGC's stack-call functions are subroutines
//! of the kernel object), then by place:
//! at every Gen offset of the object's index map inside a location entry
//! (a point), each register piece IGC names (at SIMD lane 0) is looked up
//! among the blob variables live there (interval `start..=end` holding the
//! point's vISA index) in that register, and compared with the register
//! the lowering writes ([`crate::visa::lower::dwarf_register`]) and its
//! sub-register (bytes × 8 against IGC's bit offset). An address IGC
//! computes from register bits (its frame form: `DW_OP_regx`, the bits of
//! `%fp`, plus an offset) also agrees with the frame's BE_FP interval in
//! that register and sub-register at that pc ([`befp_at`]: what the
//! lowering reads for BE_FP-relative memory). A point that agrees is a
//! match; every other outcome is a class of [`super::classes`].

use super::place::{self, Place};
use super::read::IgcDwarf;
use crate::visa::lower::{befp_at, dwarf_register};
use crate::visa::model::{Blob, Location, Object, RegFile};
use crate::visa::Platform;
use std::collections::BTreeMap;

/// One difference, with what both sides say.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Difference {
    /// Class ID ([`super::classes::CLASSES`]).
    pub class: &'static str,
    /// DWARF subprogram and variable name.
    pub variable: String,
    /// The Gen offset (as in the DWARF), when the difference is at a point.
    pub pc: Option<u64>,
    /// The expression bytes.
    pub expr: Vec<u8>,
    /// IGC's reading and the blob's, in words.
    pub detail: String,
}

/// What a comparison gave.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// DWARF variables with a location.
    pub variables: usize,
    /// Of them, those whose subprogram is an object of the blob.
    pub matched: usize,
    /// Points compared (entry × Gen offset × register piece).
    pub points: usize,
    /// Points that agree.
    pub agree: usize,
    /// Everything else.
    pub differences: Vec<Difference>,
}

impl Report {
    /// Differences per class, in class order.
    pub fn per_class(&self) -> BTreeMap<&'static str, usize> {
        per_class(&self.differences)
    }
}

/// How many of `differences` fall in each class, in class order.
pub fn per_class(differences: &[Difference]) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for d in differences {
        *m.entry(d.class).or_insert(0) += 1;
    }
    m
}

/// The register file and number of DWARF register `regno` on `platform`.
fn file_of(regno: u64, platform: Platform) -> Option<(RegFile, u16)> {
    for file in [RegFile::Grf, RegFile::Address, RegFile::Flag] {
        let base = dwarf_register(file, 0);
        let count = match file {
            RegFile::Grf => platform.grf_count(),
            RegFile::Address => platform.address_count(),
            RegFile::Flag => platform.flag_count(),
        };
        if regno >= base && regno < base + u64::from(count) {
            return Some((file, (regno - base) as u16));
        }
    }
    None
}

/// The blob's register variables of `object`: (vISA index bounds, file,
/// register, sub-register in bytes).
fn registers(object: &Object) -> Vec<(u32, u32, RegFile, u16, u16)> {
    let mut v = Vec::new();
    for var in &object.variables {
        for iv in &var.intervals {
            if let Location::Register { file, reg, sub } = iv.location {
                v.push((iv.start, iv.end, file, reg, sub));
            }
        }
    }
    v
}

/// Compares `dwarf` with `blob` compiled for `platform`. Linear in the
/// DWARF's entries times the object's index map and register intervals.
pub fn compare(dwarf: &IgcDwarf, blob: &Blob, platform: Platform) -> Report {
    let mut r = Report { variables: dwarf.variables.len(), ..Report::default() };
    let igc_elf = dwarf.machine == 62;
    for var in &dwarf.variables {
        let who = format!("{}::{}", var.subprogram, var.name);
        let object = blob
            .objects
            .iter()
            .find(|o| o.name == var.subprogram)
            .or_else(|| blob.objects.iter().find(|o| o.subroutines.iter().any(|s| s.name == var.subprogram)));
        let Some(object) = object else {
            for e in &var.entries {
                r.differences.push(diff("IG7", &who, None, &e.expr, "no blob object of that name".into()));
            }
            continue;
        };
        r.matched += 1;
        let regs = registers(object);
        let base = u64::from(object.reloc_offset);
        for e in &var.entries {
            let p = place::read(&e.expr);
            let pieces = match &p {
                Place::Registers { pieces } => pieces,
                Place::Constant | Place::Empty => {
                    r.differences.push(diff("IG4", &who, None, &e.expr, format!("{p:?}")));
                    continue;
                }
                Place::ConstAddress { address } => {
                    r.differences.push(diff("IG5", &who, None, &e.expr, format!("address {address:#x} at lane 0")));
                    continue;
                }
                Place::Unreadable { at, op } => {
                    r.differences.push(diff("IG6", &who, None, &e.expr, format!("op {op:#04x} at byte {at}")));
                    continue;
                }
            };
            if igc_elf && pieces.iter().any(|q| q.regno < 32) {
                r.differences.push(diff(
                    "IG10",
                    &who,
                    None,
                    &e.expr,
                    "e_machine 62: an x86-64 reader names these registers XMM/ST".into(),
                ));
            }
            let points: Vec<(u32, u64)> = object
                .index_map
                .iter()
                .map(|m| (m.visa, base + u64::from(m.gen)))
                .filter(|&(_, pc)| e.lo <= pc && pc < e.hi)
                .collect();
            if points.is_empty() {
                r.differences.push(diff("IG8", &who, None, &e.expr, format!("range [{:#x}, {:#x})", e.lo, e.hi)));
                continue;
            }
            for piece in pieces {
                let Some((file, reg)) = file_of(piece.regno, platform) else {
                    r.differences.push(diff("IG9", &who, None, &e.expr, format!("DWARF register {}", piece.regno)));
                    continue;
                };
                let in_reg: Vec<_> = regs.iter().filter(|x| x.2 == file && x.3 == reg).collect();
                for &(visa, pc) in &points {
                    r.points += 1;
                    let live: Vec<_> = in_reg.iter().filter(|x| x.0 <= visa && visa <= x.1).collect();
                    let igc = format!("IGC: {file:?} {reg} bit {} ({:?})", piece.bit_offset, piece.usage);
                    // An address from register bits: BE_FP's place at that
                    // pc is what the lowering reads for BE_FP-relative memory.
                    let befp = (piece.usage == place::Use::Address && file == RegFile::Grf)
                        .then(|| befp_at(object, (pc - base) as u32))
                        .flatten()
                        .filter(|&(b, sub)| b == reg && u64::from(sub) * 8 == piece.bit_offset);
                    if befp.is_some() || live.iter().any(|x| u64::from(x.4) * 8 == piece.bit_offset) {
                        r.agree += 1;
                    } else if let Some(x) = live.first() {
                        let d = format!("{igc}; blob: sub-register {} bytes", x.4);
                        r.differences.push(diff("IG1", &who, Some(pc), &e.expr, d));
                    } else if !in_reg.is_empty() {
                        let d = format!("{igc}; blob: not live at vISA index {visa}");
                        r.differences.push(diff("IG2", &who, Some(pc), &e.expr, d));
                    } else {
                        let d = format!("{igc}; blob: no variable in that register");
                        r.differences.push(diff("IG3", &who, Some(pc), &e.expr, d));
                    }
                }
            }
        }
    }
    r
}

fn diff(class: &'static str, who: &str, pc: Option<u64>, expr: &[u8], detail: String) -> Difference {
    Difference { class, variable: who.to_string(), pc, expr: expr.to_vec(), detail }
}
