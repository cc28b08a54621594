//! Evaluator throughput on real input: every location expression of one
//! libc6-dbg debug file (the largest under /usr/lib/debug/.build-id, found
//! at run time), and every FDE of a large `.eh_frame`, for each evaluator.
//!
//! Throughput is reported per expression / per FDE (criterion "elements").
//! Files that are not installed are skipped with a message.

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dwarfcheck::case::{CfiCase, ExprCase};
use dwarfcheck::consumer::{gimli::Gimli, Consumer};
use dwarfcheck::elf::{extract, largest_debug_file, Options};
use dwarfcheck_fast::expr as fast;
use std::hint::black_box;
use std::time::Duration;

fn exprs() -> Vec<ExprCase> {
    let Some(path) = largest_debug_file() else {
        eprintln!("no libc6-dbg file under /usr/lib/debug/.build-id: expression benchmarks skipped");
        return Vec::new();
    };
    let opts = Options { frames: false, ..Options::default() };
    match extract(&path, &opts) {
        Ok(x) => {
            eprintln!(
                "{}: {} expressions + {} location-list entries",
                path.display(),
                x.counts.expressions,
                x.counts.loclist_entries
            );
            x.exprs
        }
        Err(e) => {
            eprintln!("{}: {e:#}", path.display());
            Vec::new()
        }
    }
}

fn fdes() -> Vec<CfiCase> {
    let mut candidates = common::LIBLLVM.to_vec();
    candidates.extend(["/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"]);
    let Some(path) = common::first_existing(&candidates) else {
        eprintln!("no shared library with .eh_frame found: CFI benchmarks skipped");
        return Vec::new();
    };
    common::fdes_of(&path)
}

fn bench_exprs(c: &mut Criterion) {
    let cases = exprs();
    if cases.is_empty() {
        return;
    }
    let mut g = c.benchmark_group("expr");
    g.throughput(Throughput::Elements(cases.len() as u64));
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    g.bench_function("gimli-adapter", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(Gimli.evaluate(black_box(case)));
            }
        })
    });
    g.bench_function("gimli", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(dwarfcheck::consumer::gimli::evaluate(black_box(&case.expr), &case.ctx));
            }
        })
    });
    g.bench_function("reference", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(dwarfcheck::consumer::builtin::with_reference_state(&case.ctx, |state| {
                    dwarfcheck_reference::expr::evaluate(black_box(&case.expr), state)
                }));
            }
        })
    });
    g.bench_function("fast", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(fast::evaluate(black_box(&case.expr), &*case.ctx));
            }
        })
    });
    g.bench_function("fast-compile", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(fast::Program::compile(black_box(&case.expr), &*case.ctx));
            }
        })
    });
    // What a debugger embedding `fast` pays per evaluation: programs
    // compiled once, one scratch area reused.
    let programs: Vec<fast::Program> = cases.iter().map(|c| fast::Program::compile(&c.expr, &*c.ctx)).collect();
    let mut scratch = fast::Scratch::new();
    g.bench_function("fast-run", |b| {
        b.iter(|| {
            for (p, case) in programs.iter().zip(&cases) {
                black_box(p.run(black_box(&*case.ctx), &mut scratch));
            }
        })
    });
    g.finish();
}

fn bench_cfi(c: &mut Criterion) {
    let cases = fdes();
    if cases.is_empty() {
        return;
    }
    let mut g = c.benchmark_group("cfi");
    g.throughput(Throughput::Elements(cases.len() as u64));
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    g.bench_function("gimli", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(dwarfcheck::consumer::gimli::frame_table(black_box(case)));
            }
        })
    });
    g.bench_function("reference", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(dwarfcheck::consumer::builtin::reference_table(black_box(case)));
            }
        })
    });
    g.bench_function("fast", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(dwarfcheck::consumer::builtin::fast_table(black_box(case)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_exprs, bench_cfi);
criterion_main!(benches);
