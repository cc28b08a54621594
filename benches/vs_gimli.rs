//! fast against gimli, each through its own API at its best, on real
//! input (issue 14): the contenders of `dwarfcheck::bench`, one criterion
//! benchmark per contender and family, one iteration = one pass over the
//! whole input. `dwarfcheck bench` times the same passes in interleaved
//! rounds in one process and prints min and median per item with the
//! ratio; use it for the figures, and this for criterion's history.
//!
//! Input (skipped with a message when not installed): the location
//! expressions and location-list entries of the largest libc6-dbg file
//! (all files with `DWARFCHECK_BENCH_ALL=1`), and the frame sections of
//! libLLVM.so.19.1 and libc.so.6.
//!
//! Run: `cargo bench --bench vs_gimli -- --warm-up-time 1 --measurement-time 5`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dwarfcheck::bench::{debug_files, expr, expr_cases, frame_files, frame_sections, rows, unwind};
use dwarfcheck::elf::largest_debug_file;
use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_fast::expr::{Program, Scratch};
use std::time::Duration;

fn bench_exprs(c: &mut Criterion) {
    let files = if std::env::var_os("DWARFCHECK_BENCH_ALL").is_some() {
        debug_files()
    } else {
        largest_debug_file().into_iter().collect()
    };
    let (cases, warnings) = expr_cases(&files);
    for w in warnings {
        eprintln!("skipped: {w}");
    }
    if cases.is_empty() {
        eprintln!("no libc6-dbg expression: expression benchmarks skipped");
        return;
    }
    let mut g = c.benchmark_group("vs_gimli/expr");
    g.throughput(Throughput::Elements(cases.len() as u64));
    g.sample_size(10).warm_up_time(Duration::from_secs(1));
    let prepared = expr::Prepared::new(&cases);
    let (mut program, mut scratch) = (Program::new(), Scratch::new());
    g.bench_function("fast", |b| b.iter(|| expr::fast_pass(&prepared, &mut program, &mut scratch)));
    g.bench_function("gimli", |b| b.iter(|| expr::gimli_pass(&prepared)));
    g.bench_function("fast-outcome", |b| b.iter(|| expr::fast_outcome_pass(&cases)));
    g.finish();
}

fn bench_frames(c: &mut Criterion) {
    for file in frame_files() {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for (sec, _) in frame_sections(&file).into_iter().filter(|(s, _)| s.kind == FrameKind::EhFrame) {
            let mut count = dwarfcheck_fast::cfi::CountingSink::default();
            dwarfcheck_fast::cfi::Builder::new().run_section(&sec, &mut count);
            let mut g = c.benchmark_group(format!("vs_gimli/rows/{name}"));
            g.throughput(Throughput::Elements(count.rows));
            g.sample_size(10).warm_up_time(Duration::from_secs(1));
            let mut builder = dwarfcheck_fast::cfi::Builder::new();
            g.bench_function("fast", |b| b.iter(|| rows::fast_pass(&mut builder, &sec)));
            let mut gr = rows::GimliRows::default();
            g.bench_function("gimli", |b| b.iter(|| gr.pass(&sec)));
            g.finish();

            let samples = unwind::Samples::new(&sec, 16);
            let Some(mut gu) = unwind::GimliUnwinder::new(&sec) else { continue };
            let mut fu = dwarfcheck_fast::unwind::Unwinder::new(&sec);
            let mut g = c.benchmark_group(format!("vs_gimli/unwind/{name}"));
            g.throughput(Throughput::Elements(samples.pcs.len() as u64));
            g.sample_size(10).warm_up_time(Duration::from_secs(1));
            g.bench_function("fast", |b| b.iter(|| unwind::fast_pass(&mut fu, &samples)));
            g.bench_function("gimli", |b| b.iter(|| gu.pass(&samples)));
            g.finish();
        }
    }
}

criterion_group!(benches, bench_exprs, bench_frames);
criterion_main!(benches);
