//! Generated evaluation contexts: the x86-64 rich context with its values
//! changed and entries dropped, or an AMDGPU wavefront with registers,
//! memory in several address spaces (shared, per thread, per lane), a
//! thread and a focused lane; either with the standard unit's base types
//! and DIEs.

use crate::fuzzing::case::{default_rules, standard_unit, FuzzCase, Section};
use arbitrary::{Result, Unstructured};

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

/// `n` bytes of memory as hex.
fn bytes(u: &mut Unstructured, n: usize) -> Result<String> {
    let mut s = String::with_capacity(2 * n);
    for _ in 0..n {
        s.push_str(&format!("{:02x}", u.arbitrary::<u8>()?));
    }
    Ok(s)
}

/// A context to evaluate generated expressions in, as a [`FuzzCase`] with
/// no expression yet: 2 in 3 the x86-64 rich context
/// ([`FuzzCase::rich`]) with some register values changed and some entries
/// dropped, else [`amdgpu`]. The vendor profile is `hetero-2020`, 1 in 4
/// `llvm-user` (the `DW_OP_LLVM_user` encoding), and for x86-64 1 in 3
/// `gnu` (DWARF 5 and GNU operations only: the input gimli is judged on).
pub fn context(u: &mut Unstructured) -> Result<FuzzCase> {
    let mut fc = if u.ratio(2u8, 3)? { x86_64(u)? } else { amdgpu(u)? };
    match u.int_in_range(0u8..=11)? {
        0..=2 => fc.vendor = "llvm-user".into(),
        3..=6 if fc.target == "x86_64" => fc.vendor = "gnu".into(),
        _ => {}
    }
    if u.ratio(1u8, 3)? {
        fc.entries.push((Section::Key, format!("result: {}", u.choose(&["value", "location"])?)));
    }
    Ok(fc)
}

fn x86_64(u: &mut Unstructured) -> Result<FuzzCase> {
    let mut fc = FuzzCase::rich(Vec::new());
    for e in fc.entries.iter_mut().filter(|e| e.0 == Section::Register) {
        if super::rare(u, 4)? {
            let name = e.1.split(':').next().unwrap_or("rax").to_string();
            e.1 = format!("{name}: {:#x}", value(u)?);
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
    use Section::*;
    let lane = if super::rare(u, 20)? { 64 } else { u.int_in_range(0u32..=63)? };
    let mut e: Vec<(Section, String)> = vec![
        (Key, "pc: 0x1000".into()),
        (Key, "thread: 1".into()),
        (Key, format!("lane: {lane}")),
        (Key, format!("synthetic: {:#x}", u.arbitrary::<u16>()?)),
        (Key, "budgets: { steps: 5000, size_bytes: 8192 }".into()),
        (Key, "object: { memory: 0x1000 }".into()),
        (Key, "tls_base: 0x2000".into()),
        (Register, format!("exec_mask_64: {:#x}", if u.ratio(1u8, 2)? { u64::MAX } else { u.arbitrary()? })),
    ];
    // The frame: a CFA in private_wave, and a calling frame whose CFA is
    // 0x40 further and whose registers are those of this frame.
    let cfa = u.int_in_range(0u64..=0x10)? * 4;
    e.push((Key, format!("cfa: {cfa:#x}")));
    e.push((Key, "cfa_aspace: 6".into()));
    e.push((Key, "frame_base: \"DW_OP_call_frame_cfa\"".into()));
    e.push((Key, format!("caller: {{ pc: 0x1100, cfa: {:#x}, cfa_aspace: 6, default_rule: same }}", cfa + 0x40)));
    for i in 0..u.int_in_range(0u8..=4)? {
        e.push((Register, format!("sgpr{i}: {:#x}", value(u)? as u32)));
    }
    if u.ratio(1u8, 2)? {
        e.push((Register, format!("vgpr0: \"{}\"", bytes(u, 256)?)));
    }
    e.push((Memory, format!("{{ aspace: 0, at: 0x1000, bytes: \"{}\" }}", bytes(u, 32)?)));
    e.push((Memory, format!("{{ aspace: 3, at: 0x0, bytes: \"{}\" }}", bytes(u, 16)?)));
    e.push((Memory, format!("{{ aspace: 5, at: 0x0, lane: {}, bytes: \"{}\" }}", lane.min(63), bytes(u, 16)?)));
    e.push((Memory, format!("{{ aspace: 6, at: 0x0, thread: 1, bytes: \"{}\" }}", bytes(u, 64)?)));
    e.extend(standard_unit());
    Ok(FuzzCase {
        target: "amdgpu-wave64".into(),
        vendor: "hetero-2020".into(),
        entries: e,
        expr: Vec::new(),
        rules: default_rules(),
    })
}
