//! One-step virtual unwinds per second with the fast unwinder on a
//! synthetic x86-64 program: a `.debug_frame` of [`FDES`] FDEs (each a
//! typical `push rbp` prologue: after 8 bytes CFA = rsp + 16, rbp at
//! CFA-16, rip at CFA-8) plus one outermost FDE whose return address is
//! undefined, and a stack of [`DEPTH`] frames in memory (saved rbp and
//! return address per frame, each return address inside another FDE).
//!
//! Throughput is in steps (`Throughput::Elements`):
//! - `step`: `Unwinder::step` on every frame of the stack in turn, the
//!   index built once and the machine state taken once (what a debugger
//!   does per frame; each step's `Step` result is built, that is the only
//!   allocation);
//! - `unwinder.unwind`: a whole walk to the base with one reused
//!   `Unwinder` (`DEPTH + 1` steps);
//! - `fast::unwind::unwind`: the same walk through the free function,
//!   which also indexes the section's FDEs on every call.
//!
//!
//! When libLLVM (llvm-19, `.ci/setup`) is installed, the group
//! `unwind-libLLVM` also times, on its `.eh_frame`: `index` (building the
//! FDE index, `Unwinder::new`, in FDEs/s) and `top-step` (one step from a
//! frame at the start of every [`LLVM_STRIDE`]-th FDE with synthetic
//! registers and memory, in steps/s: FDE lookup, the FDE's whole row
//! table, CFA and caller registers).
//!
//! Run: `cargo bench --bench unwind -- --warm-up-time 1 --measurement-time 5`.
//!
//! Measured on the 2-core CI machine (2026-11-23, shared): `step` 1.18 M
//! steps/s (about 850 ns a step), `unwinder.unwind` 0.92 M steps/s,
//! `fast::unwind::unwind` 0.27 M steps/s (indexing 2001 FDEs per call);
//! libLLVM: `index` 5.5 M FDEs/s (118,004 FDEs in 21 ms), `top-step`
//! 0.48 M steps/s.

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dwarfcheck::case::yaml::load_str;
use dwarfcheck::case::{Case, CfiCase};
use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_core::context::Context;
use dwarfcheck_core::outcome::unwind::{Step, UnwindEnd};
use dwarfcheck_fast::unwind::{unwind, Frame, Unwinder};
use std::fmt::Write;
use std::hint::black_box;

/// FDEs of the synthetic section (besides the outermost one).
const FDES: u64 = 2000;
/// Frames of the synthetic stack (besides the outermost one).
const DEPTH: u64 = 64;
/// Code address of FDE 0; FDE i covers [BASE + i*0x100, + 0x100).
const BASE: u64 = 0x10_0000;
/// The outermost function's FDE start.
const OUTER: u64 = 0x1000;
/// Initial rsp of frame 0.
const STACK: u64 = 0x7fff_0000;

/// The FDE frame `j` runs in (spread over the section).
fn fde_of(j: u64) -> u64 {
    (j * 7919) % FDES
}

/// The pc of frame `j` (`DEPTH` is the outermost frame): 0x20 bytes into
/// its function, after the prologue, so the row at `pc - 1` is the last.
fn pc_of(j: u64) -> u64 {
    if j == DEPTH {
        OUTER + 0x20
    } else {
        BASE + fde_of(j) * 0x100 + 0x20
    }
}

/// The synthetic case: section, and frame 0's machine state. Each FDE:
/// `push rbp` at +0 (CFA = rsp + 16, rbp at CFA-16 from +1), `mov rbp,
/// rsp` at +1 (CFA = rbp + 16 from +4); rip at CFA-8 from the CIE.
fn input() -> CfiCase {
    let mut y = String::from("target: x86_64\ncases:\n  - name: bench\n    rules: [unwind.step]\n    cfi:\n");
    y.push_str("      cie: { version: 4, data_align: -8, ra: 16, instructions: \"DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8\" }\n");
    y.push_str(&format!(
        "      fde: {{ pc_begin: {OUTER:#x}, pc_range: 0x100, instructions: \"DW_CFA_undefined: reg16\" }}\n"
    ));
    y.push_str("      fdes:\n");
    for i in 0..FDES {
        let _ = writeln!(
            y,
            "        - {{ pc_begin: {:#x}, pc_range: 0x100, instructions: \"DW_CFA_advance_loc: 1; DW_CFA_def_cfa_offset: +16; DW_CFA_offset: reg6 -16; DW_CFA_advance_loc: 3; DW_CFA_def_cfa_register: reg6\" }}",
            BASE + i * 0x100
        );
    }
    // Frame j's rsp and rbp are STACK + 16 j: the caller's rbp saved at
    // rbp, the return address (frame j+1's pc) at rbp + 8; its CFA,
    // rbp + 16, is frame j+1's rsp and rbp.
    let mut mem = String::new();
    for j in 0..DEPTH {
        for b in (STACK + 16 * (j + 1)).to_le_bytes() {
            let _ = write!(mem, "{b:02x}");
        }
        for b in pc_of(j + 1).to_le_bytes() {
            let _ = write!(mem, "{b:02x}");
        }
    }
    let _ = write!(
        y,
        "    unwind:\n      context:\n        pc: {:#x}\n        registers: {{ rsp: {STACK:#x}, rbp: {STACK:#x} }}\n        memory: [ {{ at: {STACK:#x}, bytes: \"{mem}\" }} ]\n",
        pc_of(0)
    );
    match load_str("bench.yaml", &y).unwrap_or_else(|e| panic!("{e:?}")).remove(0) {
        Case::Cfi(c) => c,
        Case::Expr(_) => unreachable!(),
    }
}

fn bench(c: &mut Criterion) {
    let case = input();
    let u = case.unwind.as_ref().expect("unwind:");
    let sec = &*case.section;
    let ctx = &*u.ctx;
    let whole = unwind(sec, ctx, None);
    assert_eq!(whole.end, UnwindEnd::Base, "{whole}");
    assert_eq!(whole.steps.len() as u64, DEPTH + 1);
    let steps: Vec<Step> = whole.steps;

    let mut g = c.benchmark_group("unwind");
    g.throughput(Throughput::Elements(DEPTH + 1));
    let mut un = Unwinder::new(sec);
    g.bench_function("step", |b| {
        let top = un.start(ctx).expect("pc");
        b.iter(|| {
            let mut n = 0usize;
            for k in 0..steps.len() {
                let frame = match k {
                    0 => top,
                    _ => Frame { pc: steps[k].pc, lookup: steps[k].lookup, callee: Some(&steps[k - 1]) },
                };
                let st = un.step(ctx, black_box(&frame)).expect("step");
                n += st.step.registers.len();
            }
            n
        })
    });
    g.bench_function("unwinder.unwind", |b| b.iter(|| un.unwind(black_box(ctx), None).steps.len()));
    g.bench_function("fast::unwind::unwind", |b| b.iter(|| unwind(black_box(sec), black_box(ctx), None).steps.len()));
    g.finish();
}

/// libLLVM's FDEs timed by `top-step`: every this many in index order.
const LLVM_STRIDE: usize = 16;

fn bench_libllvm(c: &mut Criterion) {
    let Some(path) = common::first_existing(common::LIBLLVM) else {
        eprintln!("libLLVM.so.19.1 not found (install llvm-19 with .ci/setup): unwind-libLLVM skipped");
        return;
    };
    let cases = common::fdes_of(&path);
    let Some(first) = cases.iter().find(|c| c.section.kind == FrameKind::EhFrame) else {
        eprintln!("{}: no .eh_frame FDE: unwind-libLLVM skipped", path.display());
        return;
    };
    let sec = first.section.clone();
    let mut un = Unwinder::new(&sec);
    let fdes = un.index().fdes.len() as u64;
    let pcs: Vec<u64> = un.index().fdes.iter().step_by(LLVM_STRIDE).map(|f| f.begin).collect();
    let mut ctx = Context::new(sec.target.clone());
    ctx.synthetic = Some(0x5eed);
    ctx.pc = Some(pcs[0]);
    un.start(&ctx).expect("pc");
    let made = pcs.iter().filter(|&&pc| un.step(&ctx, &Frame { pc, lookup: pc, callee: None }).is_ok()).count();
    eprintln!("libLLVM .eh_frame: {fdes} FDEs indexed, {made} of {} top steps made", pcs.len());

    let mut g = c.benchmark_group("unwind-libLLVM");
    g.sample_size(10);
    g.throughput(Throughput::Elements(fdes));
    g.bench_function("index", |b| b.iter(|| Unwinder::new(black_box(&sec)).index().fdes.len()));
    g.throughput(Throughput::Elements(pcs.len() as u64));
    g.bench_function("top-step", |b| {
        b.iter(|| {
            pcs.iter().filter(|&&pc| un.step(&ctx, black_box(&Frame { pc, lookup: pc, callee: None })).is_ok()).count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench, bench_libllvm);
criterion_main!(benches);
