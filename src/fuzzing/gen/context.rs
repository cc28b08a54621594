//! Generated evaluation contexts: the x86-64 rich context with its values
//! changed and entries dropped, or an AMDGPU wavefront with registers,
//! memory in several address spaces (shared, per thread, per lane), a
//! thread and a focused lane; either with the standard unit's base types
//! and DIEs.

use crate::fuzzing::case::{default_rules, rich::CFA_FRAME_BASE, standard_unit, Caller, Entry, FuzzCase, RegValue};
use arbitrary::{Result, Unstructured};
use dwarfcheck_core::context::{MemorySegment, ResultKind};

/// AMDGPU wave64 DWARF register numbers (`dwarfcheck_core::target::amdgpu`):
/// `exec_mask_64`, `sgpr0` (the first of 64 in a row), `vgpr0`.
pub(crate) const EXEC_MASK_64: u64 = 17;
pub(crate) const SGPR0: u64 = 32;
pub(crate) const VGPR0: u64 = 2560;

/// A value for a register or address: small, near the rich context's
/// stack and data, or anything.
fn value(u: &mut Unstructured) -> Result<u64> {
    Ok(match u.int_in_range(0u8..=5)? {
        0 => u.arbitrary()?,
        1 => 0x7ffc0f00 + u.int_in_range(0u64..=0x100)?,
        2 => 0x601000 + u.int_in_range(0u64..=0x20)?,
        _ => u.int_in_range(0u64..=64)?,
    })
}

/// `n` bytes.
fn bytes(u: &mut Unstructured, n: usize) -> Result<Vec<u8>> {
    (0..n).map(|_| u.arbitrary::<u8>()).collect()
}

/// A context to evaluate generated expressions in, as a [`FuzzCase`] with
/// no expression yet: 2 in 3 the x86-64 rich context
/// ([`FuzzCase::rich`]) with some register values changed and some entries
/// dropped, else [`amdgpu`]. The vendor profile is 2 in 13 each
/// `llvm-user` (the `DW_OP_LLVM_user` encoding), `dwarf5` (no vendor
/// operations), `hetero-2020-uleb` and `intel` (GNU and IGC's
/// `DW_OP_INTEL_*`), on x86-64 3 in 13 `gnu` (DWARF 5 and GNU operations
/// only), else `hetero-2020`.
pub fn context(u: &mut Unstructured) -> Result<FuzzCase> {
    let mut fc = if u.ratio(2u8, 3)? { x86_64(u)? } else { amdgpu(u)? };
    match u.int_in_range(0u8..=12)? {
        0..=1 => fc.vendor = "llvm-user".into(),
        2..=4 if fc.target == "x86_64" => fc.vendor = "gnu".into(),
        5..=6 => fc.vendor = "dwarf5".into(),
        7..=8 => fc.vendor = "hetero-2020-uleb".into(),
        9..=10 => fc.vendor = "intel".into(),
        _ => {}
    }
    if u.ratio(1u8, 3)? {
        fc.entries.push(Entry::Result(*u.choose(&[ResultKind::Value, ResultKind::Location])?));
    }
    Ok(fc)
}

fn x86_64(u: &mut Unstructured) -> Result<FuzzCase> {
    let mut fc = FuzzCase::rich(Vec::new());
    for e in fc.entries.iter_mut() {
        if let Entry::Register(_, v) = e {
            if super::rare(u, 4)? {
                *v = RegValue::Int(value(u)?);
            }
        }
    }
    let mut keep = Vec::with_capacity(fc.entries.len());
    for e in fc.entries.drain(..) {
        if !super::rare(u, 12)? {
            keep.push(e);
        }
    }
    fc.entries = keep;
    Ok(fc)
}

/// An AMDGPU wave64 context: thread 1, a focused lane (now and then one
/// past the wavefront), exec, a few SGPRs and VGPRs, global memory at
/// 0x1000, local (LDS, space 3) memory, private_lane (space 5) memory of
/// the focused lane and private_wave (space 6) memory of the thread, a
/// CFA in private_wave; unlisted registers and memory read synthetic
/// bytes.
fn amdgpu(u: &mut Unstructured) -> Result<FuzzCase> {
    let lane = if super::rare(u, 20)? { 64 } else { u.int_in_range(0u32..=63)? };
    let mut e: Vec<Entry> = vec![
        Entry::Pc(0x1000),
        Entry::Thread(1),
        Entry::Lane(lane),
        Entry::Synthetic(u64::from(u.arbitrary::<u16>()?)),
        Entry::Budgets { steps: 5000, size_bytes: 8192 },
        Entry::Object(0x1000),
        Entry::TlsBase(0x2000),
        Entry::Register(EXEC_MASK_64, RegValue::Int(if u.ratio(1u8, 2)? { u64::MAX } else { u.arbitrary()? })),
    ];
    // The frame: a CFA in private_wave, and a calling frame whose CFA is
    // 0x40 further and whose registers are those of this frame.
    let cfa = u.int_in_range(0u64..=0x10)? * 4;
    e.push(Entry::Cfa(cfa));
    e.push(Entry::CfaAspace(6));
    e.push(Entry::FrameBase(CFA_FRAME_BASE));
    e.push(Entry::Caller(Caller { pc: 0x1100, cfa: cfa + 0x40, cfa_aspace: 6, rules: &[] }));
    for i in 0..u.int_in_range(0u8..=4)? {
        e.push(Entry::Register(SGPR0 + u64::from(i), RegValue::Int(u64::from(value(u)? as u32))));
    }
    if u.ratio(1u8, 2)? {
        e.push(Entry::Register(VGPR0, RegValue::Bytes(bytes(u, 256)?)));
    }
    let seg = |aspace, thread, lane, bytes| MemorySegment {
        aspace,
        address: if aspace == 0 { 0x1000 } else { 0 },
        bytes,
        thread,
        lane,
    };
    e.push(Entry::Memory(seg(0, None, None, bytes(u, 32)?)));
    e.push(Entry::Memory(seg(3, None, None, bytes(u, 16)?)));
    e.push(Entry::Memory(seg(5, None, Some(lane.min(63)), bytes(u, 16)?)));
    e.push(Entry::Memory(seg(6, Some(1), None, bytes(u, 64)?)));
    e.extend(standard_unit());
    Ok(FuzzCase {
        target: "amdgpu-wave64".into(),
        vendor: "hetero-2020".into(),
        entries: e,
        expr: Vec::new(),
        rules: default_rules(),
        spirv: None,
    })
}
