//! Rows per second building every row of llvm-19's `libLLVM.so.19.1`
//! `.eh_frame` with the fast row builder, gimli's `UnwindTable` and the
//! reference.
//!
//! Every builder's throughput is given in the same elements: the rows of
//! non-zero length the fast builder emits for the FDEs it is timed on
//! (gimli's count is checked against it before timing), so the ratio of
//! two lines of one run is the ratio of their speeds.
//!
//! - `fast`: `fast::cfi::build_all` (one `Builder` reused over the section,
//!   CIE initial rules cached, rows counted, not stored).
//! - `gimli`: gimli 0.34 used directly, as a debugger would: one
//!   `UnwindContext` reused for every FDE, the last CIE parsed reused while
//!   its FDEs follow, every row of every `UnwindTable` read and dropped.
//! - `reference`: `reference::cfi::frame_table` on every
//!   [`REFERENCE_STRIDE`]-th FDE (header parsing, the table in outcome form
//!   and its normalisation included, since that is its only interface).
//!
//! When libLLVM is not installed the group is skipped with a message.

mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dwarfcheck::case::CfiCase;
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_fast::cfi::{build_all, Builder, CountingSink};
use gimli::{
    BaseAddresses, CieOrFde, CommonInformationEntry, EhFrame, EhFrameOffset, EndianSlice, RunTimeEndian, UnwindContext,
    UnwindSection,
};
use std::hint::black_box;
use std::sync::Arc;

/// The reference builds the table of one FDE in this many (every
/// `REFERENCE_STRIDE`-th FDE in section order, so the subset spans the
/// whole library).
const REFERENCE_STRIDE: usize = 4;

type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// Row counts of one gimli pass over a section.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct GimliCount {
    /// Rows whose address range is not empty (the unit of every line).
    rows: u64,
    /// Rows gimli returned, empty ones included.
    returned: u64,
    /// FDEs whose header or instructions gimli rejected.
    failed: u64,
}

/// libLLVM's `.eh_frame` and one case per FDE in it, or `None` (with a
/// message) when the library is not installed or has no `.eh_frame`.
fn input() -> Option<(Arc<CfiSection>, Vec<CfiCase>)> {
    let Some(path) = common::first_existing(common::LIBLLVM) else {
        eprintln!("libLLVM.so.19.1 not found (install llvm-19 with .ci/setup): CFI row benchmarks skipped");
        return None;
    };
    let cases: Vec<CfiCase> =
        common::fdes_of(&path).into_iter().filter(|c| c.section.kind == FrameKind::EhFrame).collect();
    let Some(first) = cases.first() else {
        eprintln!("{}: no .eh_frame FDE: CFI row benchmarks skipped", path.display());
        return None;
    };
    Some((first.section.clone(), cases))
}

/// gimli's view of `sec` (an `.eh_frame`) and its pointer bases, set up the
/// way `consumer::gimli::cfi` does.
fn gimli_section(sec: &CfiSection) -> (EhFrame<R<'_>>, BaseAddresses) {
    let endian = match sec.target.endian {
        dwarfcheck_core::target::Endian::Big => RunTimeEndian::Big,
        dwarfcheck_core::target::Endian::Little => RunTimeEndian::Little,
    };
    let mut eh = EhFrame::new(&sec.bytes, endian);
    eh.set_address_size(sec.target.address_bytes());
    if sec.target.arch == dwarfcheck_core::target::Arch::Aarch64 {
        eh.set_vendor(gimli::Vendor::AArch64);
    }
    let mut bases = BaseAddresses::default().set_eh_frame(sec.address);
    if let Some(t) = sec.text_base {
        bases = bases.set_text(t);
    }
    if let Some(d) = sec.data_base {
        bases = bases.set_got(d);
    }
    (eh, bases)
}

/// Reads every row of every FDE of `eh` with gimli, reusing `uctx`.
/// A malformed entry header ends the walk (as it ends the project's).
fn gimli_rows(eh: &EhFrame<R<'_>>, bases: &BaseAddresses, uctx: &mut UnwindContext<usize>) -> GimliCount {
    let mut n = GimliCount::default();
    let mut last_cie: Option<(EhFrameOffset, CommonInformationEntry<R<'_>>)> = None;
    let mut entries = eh.entries(bases);
    while let Ok(Some(entry)) = entries.next() {
        let CieOrFde::Fde(partial) = entry else { continue };
        let fde = partial.parse(|s, b, off| match &last_cie {
            Some((o, c)) if *o == off => Ok(c.clone()),
            _ => {
                let c = s.cie_from_offset(b, off)?;
                last_cie = Some((off, c.clone()));
                Ok(c)
            }
        });
        let Ok(fde) = fde else {
            n.failed += 1;
            continue;
        };
        let Ok(mut table) = fde.rows(eh, bases, uctx) else {
            n.failed += 1;
            continue;
        };
        loop {
            match table.next_row() {
                Ok(Some(row)) => {
                    n.returned += 1;
                    n.rows += u64::from(row.start_address() < row.end_address());
                    black_box(row);
                }
                Ok(None) => break,
                Err(_) => {
                    n.failed += 1;
                    break;
                }
            }
        }
    }
    n
}

/// Rows the fast builder emits for `cases` one FDE at a time (the element
/// count of the reference line).
fn fast_rows_of(cases: &[&CfiCase]) -> u64 {
    let mut b = Builder::new();
    let mut sink = CountingSink::default();
    for case in cases {
        b.reset();
        if let Ok((fde, cie)) = case.section.parse_fde(case.fde_offset) {
            // An FDE that fails still counts the rows emitted before the
            // error, as `build_all` does.
            let _ = b.build_fde(&case.section, &fde, &cie, &mut sink);
        }
    }
    sink.rows
}

fn bench_rows(c: &mut Criterion) {
    let Some((sec, cases)) = input() else { return };
    let (stats, fast_count) = build_all(&sec);
    let (eh, bases) = gimli_section(&sec);
    let mut uctx = Box::new(UnwindContext::new());
    let g_count = gimli_rows(&eh, &bases, &mut uctx);
    eprintln!(
        "libLLVM .eh_frame: {} FDEs ({} built without error), {} rows from fast; gimli: {} non-empty rows \
         ({} returned), {} FDEs failed",
        stats.fdes, stats.ok, fast_count.rows, g_count.rows, g_count.returned, g_count.failed
    );
    if g_count.rows != fast_count.rows {
        eprintln!("warning: gimli and fast row counts differ; the gimli line is in fast's rows");
    }
    let subset: Vec<&CfiCase> = cases.iter().step_by(REFERENCE_STRIDE).collect();
    let subset_rows = fast_rows_of(&subset);
    eprintln!("reference subset: {} of {} FDEs, {} rows from fast", subset.len(), cases.len(), subset_rows);

    let mut g = c.benchmark_group("cfi-rows");
    g.sample_size(10);
    g.throughput(Throughput::Elements(fast_count.rows));
    g.bench_function("fast", |b| b.iter(|| black_box(build_all(black_box(&sec)))));
    g.bench_function("gimli", |b| b.iter(|| black_box(gimli_rows(black_box(&eh), &bases, &mut uctx))));
    g.throughput(Throughput::Elements(subset_rows));
    g.bench_function("reference-subset", |b| {
        b.iter(|| {
            for case in &subset {
                black_box(dwarfcheck::consumer::builtin::reference_table(black_box(case)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_rows);
criterion_main!(benches);
