//! Compares IGC's own `.debug_frame` with the vISA blob's `CallFrameInfo`
//! of the same compile, row by row (issue 17 item 6; docs/consumers.md
//! "IGC's own DWARF", classes IG11–IG15).
//!
//! IGC's section is read by the reference's CFI parser (one CIE, an FDE
//! per object). At every Gen offset of the object's index map inside each
//! row (a point) a machine state is built from the blob: BE_FP's GRF (the
//! blob's BE_FP interval covering the point) holds
//! [`crate::visa::lower::BE_FP_VALUE`] at its sub-register, and scratch
//! holds the caller's BE_FP at the blob's caller-BE_FP slot. Three facts
//! are then compared, each a point of its own:
//! - the CFA: IGC's CFA expression evaluated against the frame base
//!   (BE_FP × [`Platform::be_fp_unit`]), which is the lowering's CFA
//!   (`visa::frame`);
//! - the return address: the scratch address IGC's rule for its return
//!   address column gives against the blob's return-address slot;
//! - the caller's BE_FP: the address of the caller's BE_FP GRF in IGC's
//!   rule, plus BE_FP's sub-register, against the blob's caller-BE_FP slot.
//!
//! IGC's CFI expressions use `DW_OP_INTEL_push_bit_piece_stack`, which
//! neither evaluator executes (docs/ambiguities.md item 102). They are
//! evaluated here by [`eval`], a small stack machine for the forms IGC
//! writes in its frames: constants, `DW_OP_regx` followed by
//! `DW_OP_INTEL_push_bit_piece_stack` (pops a bit size and a bit offset,
//! pushes those bits of the named register, as IGC's DWARF emitter uses it
//! to extract a sub-register), `and`, `or`, `mul`, `plus`, `plus_uconst`,
//! `deref` and `deref_size`. Addresses carry IGC's scratch tag, 0x09 in
//! the top byte (every fixture's frame expressions OR it in); a tagged
//! address is a scratch byte address once the tag is removed.

use super::compare::Difference;
use crate::case::CfiCase;
use crate::consumer::builtin::reference_table;
use crate::visa::frame::CALLER_BE_FP_VALUE;
use crate::visa::lower::{befp_at, dwarf_register, BE_FP_VALUE};
use crate::visa::model::{Blob, Interval, Location, Object, RegFile};
use crate::visa::{target, Platform};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::encoding::leb128::{read_sleb, read_uleb};
use dwarfcheck_core::outcome::cfi::{CfaRule, RegisterRule, Row};
use dwarfcheck_core::outcome::CfiOutcome;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// IGC's scratch tag: the top byte of a scratch address in its DWARF.
pub const SCRATCH_TAG: u64 = 0x09 << 56;

/// The most FDEs of IGC's section compared (each is an object).
pub const MAX_FDES: usize = 512;

/// What one comparison of frames gave.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FrameReport {
    /// FDEs in IGC's `.debug_frame`.
    pub fdes: usize,
    /// Rows of those FDEs.
    pub rows: usize,
    /// Facts compared (CFA, return address, caller BE_FP at each point).
    pub points: usize,
    /// Facts that agree.
    pub agree: usize,
    /// Everything else.
    pub differences: Vec<Difference>,
}

impl FrameReport {
    /// Differences per class, in class order.
    pub fn per_class(&self) -> BTreeMap<&'static str, usize> {
        super::compare::per_class(&self.differences)
    }
}

/// A machine state for [`eval`]: register bytes by DWARF number, and
/// scratch bytes from `scratch.0` on.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Register contents (little-endian), by IGC's DWARF numbering.
    pub registers: BTreeMap<u64, Vec<u8>>,
    /// Scratch: the byte address of the first byte, and the bytes.
    pub scratch: (u64, Vec<u8>),
}

impl State {
    fn read(&self, addr: u64, n: usize) -> Result<u64, String> {
        if addr & 0xff00_0000_0000_0000 != SCRATCH_TAG {
            return Err(format!("load from {addr:#x}, not a tagged scratch address"));
        }
        let at = (addr & !SCRATCH_TAG).checked_sub(self.scratch.0).ok_or("load below the frame")?;
        let at = usize::try_from(at).map_err(|_| "load past the frame")?;
        let b = self.scratch.1.get(at..at.saturating_add(n)).ok_or(format!("load of {n} bytes at {addr:#x}"))?;
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }
}

/// Evaluates IGC frame expression `expr` in `state`, with `initial` pushed
/// first (the CFA, for a register rule). One step per operation: bounded
/// by the expression's length.
///
/// Returns the value on top of the stack; errors: an operation outside
/// the forms this module names (opcode and byte offset), a stack
/// underflow, a load outside the state's scratch, a register not in the
/// state or bits outside it.
pub fn eval(expr: &[u8], state: &State, initial: Option<u64>) -> Result<u64, String> {
    let mut st: Vec<u64> = initial.into_iter().collect();
    let mut reg: Option<u64> = None;
    let mut i = 0;
    let pop = |st: &mut Vec<u64>, at: usize| st.pop().ok_or(format!("stack underflow at byte {at}"));
    while i < expr.len() {
        let (at, op) = (i, expr[i]);
        i += 1;
        let mut fixed = |n: usize| -> Result<u64, String> {
            let b = expr.get(i..i + n).ok_or(format!("operand cut at byte {i}"))?;
            i += n;
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(b);
            Ok(u64::from_le_bytes(w))
        };
        match op {
            0x08 => st.push(fixed(1)?),
            0x0a => st.push(fixed(2)?),
            0x0c => st.push(fixed(4)?),
            0x0e => st.push(fixed(8)?),
            0x10 | 0x23 | 0x90 => {
                let (v, n) = read_uleb(&expr[i..]).map_err(|_| format!("bad ULEB128 at byte {i}"))?;
                i += n;
                match op {
                    0x10 => st.push(v),
                    0x23 => {
                        let a = pop(&mut st, at)?;
                        st.push(a.wrapping_add(v));
                    }
                    _ => reg = Some(v),
                }
            }
            0x11 => {
                let (v, n) = read_sleb(&expr[i..]).map_err(|_| format!("bad SLEB128 at byte {i}"))?;
                i += n;
                st.push(v as u64);
            }
            0x30..=0x4f => st.push(u64::from(op - 0x30)),
            0x50..=0x6f => reg = Some(u64::from(op - 0x50)),
            0x1a | 0x1e | 0x21 | 0x22 => {
                let b = pop(&mut st, at)?;
                let a = pop(&mut st, at)?;
                st.push(match op {
                    0x1a => a & b,
                    0x1e => a.wrapping_mul(b),
                    0x21 => a | b,
                    _ => a.wrapping_add(b),
                });
            }
            0x06 => {
                let a = pop(&mut st, at)?;
                st.push(state.read(a, 8)?);
            }
            0x94 => {
                let n = usize::from(*expr.get(i).ok_or(format!("operand cut at byte {i}"))?);
                i += 1;
                if n == 0 || n > 8 {
                    return Err(format!("deref_size {n} at byte {at}"));
                }
                let a = pop(&mut st, at)?;
                st.push(state.read(a, n)?);
            }
            0xec => {
                let size = pop(&mut st, at)?;
                let offset = pop(&mut st, at)?;
                let r = reg.take().ok_or(format!("push_bit_piece_stack without a register at byte {at}"))?;
                let bytes = state.registers.get(&r).ok_or(format!("register {r} not in the state"))?;
                st.push(bits(bytes, offset, size).ok_or(format!("bits {offset}+{size} of register {r}"))?);
            }
            0x96 => {}
            _ => return Err(format!("op {op:#04x} at byte {at}")),
        }
    }
    st.pop().ok_or_else(|| "empty stack at the end".to_string())
}

/// Bits `offset .. offset + size` (at most 64) of little-endian `bytes`.
fn bits(bytes: &[u8], offset: u64, size: u64) -> Option<u64> {
    if size == 0 || size > 64 || offset.checked_add(size)? > bytes.len() as u64 * 8 {
        return None;
    }
    let mut v = 0u64;
    for k in 0..size {
        let b = offset + k;
        if bytes[(b / 8) as usize] >> (b % 8) & 1 == 1 {
            v |= 1 << k;
        }
    }
    Some(v)
}

/// The location of the interval of `list` covering Gen offset `gen`.
fn covering(list: &Option<Vec<Interval>>, gen: u32) -> Option<Location> {
    list.as_ref()?.iter().find(|i| i.start <= gen && gen <= i.end).map(|i| i.location)
}

/// The object of `blob` whose code holds `pc` (the last one whose
/// relocation offset is at most `pc`).
fn object_at(blob: &Blob, pc: u64) -> Option<&Object> {
    blob.objects.iter().filter(|o| u64::from(o.reloc_offset) <= pc).max_by_key(|o| o.reloc_offset)
}

/// Where the blob says a saved value is, as IGC would give it: a tagged
/// scratch byte address (BE_FP-relative memory on the frame base, absolute
/// memory as is), or a DWARF register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Address(u64),
    Register(u64),
}

fn slot(loc: Location, frame_base: u64) -> Slot {
    match loc {
        Location::Memory { absolute: false, offset, .. } => {
            Slot::Address(SCRATCH_TAG | frame_base.wrapping_add_signed(i64::from(offset)))
        }
        Location::Memory { absolute: true, offset, .. } => Slot::Address(SCRATCH_TAG | offset as u32 as u64),
        Location::Register { file, reg, .. } => Slot::Register(dwarf_register(file, reg)),
    }
}

/// What IGC's rule says, in the same terms (`None`: not saved).
fn igc_slot(rule: Option<&RegisterRule>, cfa: u64, state: &State) -> Result<Option<Slot>, String> {
    Ok(match rule {
        None | Some(RegisterRule::Undefined) | Some(RegisterRule::SameValue) => None,
        Some(RegisterRule::Offset { offset }) => Some(Slot::Address(cfa.wrapping_add_signed(*offset))),
        Some(RegisterRule::Register { register }) => Some(Slot::Register(*register)),
        Some(RegisterRule::Expression { expr }) => Some(Slot::Address(eval(expr, state, Some(cfa))?)),
        Some(other) => return Err(format!("rule {other:?}")),
    })
}

fn show(s: Option<Slot>) -> String {
    match s {
        None => "not saved".into(),
        Some(Slot::Address(a)) => format!("scratch {:#x}", a & !SCRATCH_TAG),
        Some(Slot::Register(r)) => format!("register {r}"),
    }
}

/// Compares IGC's `.debug_frame` (`section`: relocated bytes) with the
/// `CallFrameInfo` of `blob` compiled for `platform`. Linear in IGC's rows
/// times the index map of their objects; at most [`MAX_FDES`] FDEs.
pub fn compare_frames(section: &[u8], blob: &Blob, platform: Platform) -> FrameReport {
    let mut r = FrameReport::default();
    let target = Arc::new(target::target(platform));
    let sec = Arc::new(CfiSection::new(FrameKind::DebugFrame, section.to_vec(), 0, target));
    let unit = u64::from(platform.be_fp_unit());
    let frame_base = u64::from(BE_FP_VALUE) * unit;
    let mut covered: Vec<(u64, u64)> = Vec::new();
    for off in sec.fde_offsets().take(MAX_FDES) {
        let off = match off {
            Ok(o) => o,
            Err(e) => {
                r.differences.push(diff("IG14", "section", None, format!("{e:?}")));
                break;
            }
        };
        r.fdes += 1;
        let (fde, cie) = match sec.parse_fde(off) {
            Ok(x) => x,
            Err(e) => {
                r.differences.push(diff("IG14", &format!("FDE at {off:#x}"), None, format!("{e:?}")));
                continue;
            }
        };
        covered.push((fde.pc_begin, fde.pc_begin.saturating_add(fde.pc_range)));
        let Some(object) = object_at(blob, fde.pc_begin) else {
            r.differences.push(diff("IG14", &format!("FDE at {off:#x}"), None, "no blob object at its pc".into()));
            continue;
        };
        let case = CfiCase {
            name: format!("igc-fde-{off:#x}"),
            origin: "igc".into(),
            section: sec.clone(),
            fde_offset: off,
            rules: Vec::new(),
            expect: None,
            unwind: None,
        };
        let rows = match reference_table(&case) {
            CfiOutcome::Table(t) => t.rows,
            other => {
                r.differences.push(diff("IG14", &object.name, None, format!("{other:?}")));
                continue;
            }
        };
        r.rows += rows.len();
        let base = u64::from(object.reloc_offset);
        let gens: BTreeSet<u32> = object.index_map.iter().map(|m| m.gen).collect();
        for row in &rows {
            let lo = u32::try_from(row.start.saturating_sub(base)).unwrap_or(u32::MAX);
            let hi = u32::try_from(row.end.saturating_sub(base)).unwrap_or(u32::MAX);
            for &gen in gens.range(lo..hi) {
                let pc = base + u64::from(gen);
                let Some((reg, sub)) = befp_at(object, gen) else {
                    r.points += 1;
                    r.differences.push(diff("IG12", &object.name, Some(pc), "no BE_FP interval in the blob".into()));
                    continue;
                };
                let p = Point {
                    object,
                    row,
                    ra_column: cie.return_address_register,
                    befp: (reg, sub),
                    gen,
                    pc,
                    unit,
                    state: state_at(object, gen, (reg, sub), platform, frame_base),
                };
                compare_point(&mut r, &p);
            }
        }
    }
    // Blob frames no FDE of IGC's covers.
    for o in &blob.objects {
        for iv in o.frame.befp.iter().flatten() {
            let pc = u64::from(o.reloc_offset) + u64::from(iv.start);
            if !covered.iter().any(|&(a, b)| a <= pc && pc < b) {
                r.differences.push(diff("IG15", &o.name, Some(pc), "BE_FP interval without an FDE".into()));
            }
        }
    }
    r
}

/// The state at Gen offset `gen`: BE_FP's GRF, and a frame of scratch at
/// `frame_base` (at least 64 bytes) with the caller's BE_FP in its slot.
fn state_at(object: &Object, gen: u32, (reg, sub): (u16, u16), platform: Platform, frame_base: u64) -> State {
    let mut grf = vec![0u8; platform.grf_bytes() as usize];
    if let Some(s) = grf.get_mut(usize::from(sub)..usize::from(sub) + 4) {
        s.copy_from_slice(&BE_FP_VALUE.to_le_bytes());
    }
    let mut frame = vec![0u8; usize::from(object.frame.size).max(64)];
    if let Some(Location::Memory { absolute: false, offset, .. }) = covering(&object.frame.caller_befp, gen) {
        if let Some(s) = usize::try_from(offset).ok().and_then(|o| frame.get_mut(o..o + 4)) {
            s.copy_from_slice(&CALLER_BE_FP_VALUE.to_le_bytes());
        }
    }
    State { registers: BTreeMap::from([(dwarf_register(RegFile::Grf, reg), grf)]), scratch: (frame_base, frame) }
}

/// One point of a row: where it is and the state built for it.
struct Point<'a> {
    object: &'a Object,
    row: &'a Row,
    /// IGC's return address column (its CIE's).
    ra_column: u64,
    /// BE_FP's GRF and sub-register (bytes) in the blob at the point.
    befp: (u16, u16),
    gen: u32,
    pc: u64,
    /// Bytes per BE_FP unit.
    unit: u64,
    state: State,
}

/// The three facts at one point.
fn compare_point(r: &mut FrameReport, p: &Point<'_>) {
    let Point { object, row, ra_column, gen, pc, unit, .. } = *p;
    let state = &p.state;
    let frame_base = state.scratch.0;
    let who = |what: &str| format!("{}::{what}", object.name);
    // The CFA.
    r.points += 1;
    let cfa = match &row.cfa {
        CfaRule::Expression { expr } => eval(expr, state, None),
        other => Err(format!("CFA rule {other:?}")),
    };
    let cfa = match cfa {
        Ok(v) => v,
        Err(m) => {
            r.differences.push(diff("IG14", &who("cfa"), Some(pc), m));
            return;
        }
    };
    let caller_base = u64::from(CALLER_BE_FP_VALUE) * unit;
    if cfa == SCRATCH_TAG | frame_base {
        r.agree += 1;
    } else if cfa == SCRATCH_TAG | caller_base {
        let d = format!("IGC: scratch {caller_base:#x} (the caller's frame base); lowering: {frame_base:#x}");
        r.differences.push(diff("IG11", &who("cfa"), Some(pc), d));
    } else {
        let d = format!("IGC: {cfa:#x}; lowering: scratch {frame_base:#x}");
        r.differences.push(diff("IG13", &who("cfa"), Some(pc), d));
    }
    // The return address and the caller's BE_FP.
    let f = &object.frame;
    let facts = [
        ("return-address", ra_column, covering(&f.ret_addr, gen).map(|l| slot(l, frame_base)), 0u64),
        (
            "caller-be-fp",
            dwarf_register(RegFile::Grf, p.befp.0),
            covering(&f.caller_befp, gen).map(|l| slot(l, frame_base)),
            u64::from(p.befp.1),
        ),
    ];
    for (what, column, blob_slot, inside) in facts {
        r.points += 1;
        let igc = match igc_slot(row.registers.get(&column), cfa, state) {
            // The caller's BE_FP is `inside` bytes into the saved GRF.
            Ok(Some(Slot::Address(a))) => Some(Slot::Address(a.wrapping_add(inside))),
            Ok(s) => s,
            Err(m) => {
                r.differences.push(diff("IG14", &who(what), Some(pc), m));
                continue;
            }
        };
        // IGC keeps a register's value where it is (a register rule) when
        // the blob saves nothing: both say "not in memory".
        let same = igc == blob_slot || (blob_slot.is_none() && matches!(igc, None | Some(Slot::Register(_))));
        if same {
            r.agree += 1;
        } else {
            let d = format!("IGC: {}; blob: {}", show(igc), show(blob_slot));
            r.differences.push(diff("IG13", &who(what), Some(pc), d));
        }
    }
}

fn diff(class: &'static str, who: &str, pc: Option<u64>, detail: String) -> Difference {
    Difference { class, variable: who.to_string(), pc, expr: Vec::new(), detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// r127 (DWARF 143) with BE_FP 0x1000 at bytes 12..16, scratch from
    /// 0x10000 with 0x800 at byte 12.
    fn state() -> State {
        let mut grf = vec![0u8; 32];
        grf[12..16].copy_from_slice(&0x1000u32.to_le_bytes());
        let mut frame = vec![0u8; 64];
        frame[12..16].copy_from_slice(&0x800u32.to_le_bytes());
        State { registers: BTreeMap::from([(143, grf)]), scratch: (0x10000, frame) }
    }

    #[test]
    fn igc_tgllp_frame_forms() {
        // stackcall-tgllp-O0's kernel CFA: r127 bits 96..128, × 16, tagged.
        let kernel = [
            0x90, 0x8f, 0x01, 0x0a, 0x60, 0x00, 0x08, 0x20, 0xec, 0x08, 0x10, 0x1e, 0x0e, 0, 0, 0, 0, 0, 0, 0, 9, 0x21,
        ];
        assert_eq!(eval(&kernel, &state(), None), Ok(SCRATCH_TAG | 0x10000));
        // A function's CFA: the caller's BE_FP loaded from frame base + 12,
        // × 16, tagged: 0x800 × 16.
        let mut function = kernel[..12].to_vec();
        function.extend([0x10, 0x0c, 0x22, 0x0e, 0, 0, 0, 0, 0, 0, 0, 9, 0x21, 0x06, 0x0c, 0xff, 0xff, 0xff, 0xff]);
        function.extend([0x1a, 0x08, 0x10, 0x1e, 0x0e, 0, 0, 0, 0, 0, 0, 0, 9, 0x21]);
        assert_eq!(eval(&function, &state(), None), Ok(SCRATCH_TAG | 0x8000));
        // The register rule form (frame base + 0) with the CFA pushed first.
        let mut rule = kernel[..12].to_vec();
        rule.extend([0x10, 0x00, 0x22, 0x0e, 0, 0, 0, 0, 0, 0, 0, 9, 0x21]);
        assert_eq!(eval(&rule, &state(), Some(7)), Ok(SCRATCH_TAG | 0x10000));
    }

    #[test]
    fn bad_forms_are_errors() {
        assert!(eval(&[0xed], &state(), None).unwrap_err().contains("0xed"));
        assert!(eval(&[0x22], &state(), None).unwrap_err().contains("underflow"));
        // A load from an untagged address.
        assert!(eval(&[0x10, 0x05, 0x06], &state(), None).unwrap_err().contains("not a tagged"));
        // Bits past the register.
        assert!(eval(&[0x90, 0x8f, 0x01, 0x0a, 0xf0, 0x00, 0x08, 0x20, 0xec], &state(), None).is_err());
        assert!(eval(&[0x0e, 1, 2], &state(), None).unwrap_err().contains("cut"));
        assert_eq!(bits(&[0xf0, 0x0f], 4, 8), Some(0xff));
    }
}
