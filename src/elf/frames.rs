//! FDEs of `.eh_frame` and `.debug_frame`: each becomes a [`CfiCase`] over
//! one shared [`CfiSection`].
//!
//! FDE offsets come from the `cfi` module's entry walker
//! ([`CfiSection::fde_offsets`]), not from any consumer. Each run of
//! [`FDES_PER_UNIT`] FDEs is a unit of extraction ([`super::fold`]).

use super::fold::Fold;
use super::{section_data, ElfError, Extracted, Options};
use crate::case::{CfiCase, UnwindCase};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::target::Target;
use object::{Object, ObjectSection};
use std::sync::Arc;

/// How many FDEs of a frame section make one unit of extraction (see
/// [`super::extract_folded`]).
pub const FDES_PER_UNIT: usize = 512;

/// A run of FDEs of one frame section.
struct Run {
    section: Arc<CfiSection>,
    /// `.eh_frame` or `.debug_frame`.
    name: &'static str,
    /// Index in the section's FDEs of the first one, and how many FDEs
    /// the section has (for the unwinding samples).
    first: usize,
    total: usize,
    offsets: Vec<u64>,
}

/// One unit of extraction: a run of FDEs, or what a section's walk said
/// (a warning, a section not read).
enum Piece {
    Fdes(Run),
    Note(Extracted),
}

/// One case per FDE of the file's `.eh_frame` and `.debug_frame`, folded
/// by runs of [`FDES_PER_UNIT`] FDEs.
///
/// Section bases: `.eh_frame`'s own address for `DW_EH_PE_pcrel`, `.text`
/// for `DW_EH_PE_textrel`, and `.got` for `DW_EH_PE_datarel` (LSB "DWARF
/// Exception Header Encoding": data-relative values are relative to the
/// start of `.got` or `.eh_frame_hdr`; in `.eh_frame` that is `.got`).
/// Sections without contents (`NOBITS` in split debug files) are skipped.
/// A malformed entry stops the walk of its section with a warning.
pub(super) fn extract_fdes<F: Fold>(
    file: &object::File<'_>,
    origin: &str,
    target: &Arc<Target>,
    opts: &Options,
    fold: &F,
) -> Result<F::Acc, ElfError> {
    let addr_of = |name: &str| file.section_by_name(name).map(|s| s.address());
    let text_base = addr_of(".text");
    let data_base = addr_of(".got");
    let mut pieces = Vec::new();
    for (name, kind) in [(".eh_frame", FrameKind::EhFrame), (".debug_frame", FrameKind::DebugFrame)] {
        let Some(bytes) = section_data(file, origin, name)? else { continue };
        if opts.past_deadline() {
            let mut note = Extracted::default();
            note.unfinished_mut().frame_sections_not_read += 1;
            pieces.push(Piece::Note(note));
            continue;
        }
        let section = Arc::new(CfiSection {
            kind,
            bytes: Arc::from(&*bytes),
            address: addr_of(name).unwrap_or(0),
            text_base,
            data_base,
            target: target.clone(),
        });
        let (offsets, err) = fde_offsets(&section);
        if let Some(e) = err {
            let warnings = vec![format!("{origin}: {name}: {e}; rest of the section skipped")];
            pieces.push(Piece::Note(Extracted { warnings, ..Default::default() }));
        }
        let total = offsets.len();
        for (k, run) in offsets.chunks(FDES_PER_UNIT).enumerate() {
            let first = k * FDES_PER_UNIT;
            pieces.push(Piece::Fdes(Run { section: section.clone(), name, first, total, offsets: run.to_vec() }));
        }
    }
    Ok(super::fold::over(fold, pieces, |piece, out| match piece {
        Piece::Note(note) => *out = note,
        Piece::Fdes(run) => fdes(&run, origin, opts, out),
    }))
}

/// Adds one case per FDE of `run`.
fn fdes(run: &Run, origin: &str, opts: &Options, out: &mut Extracted) {
    let (name, n) = (run.name, run.total);
    match run.section.kind {
        FrameKind::EhFrame => out.counts.eh_frame_fdes += run.offsets.len(),
        FrameKind::DebugFrame => out.counts.debug_frame_fdes += run.offsets.len(),
    }
    let short = name.trim_start_matches('.');
    for (i, &off) in (run.first..).zip(&run.offsets) {
        // Evenly spaced samples: FDE i is one when i * samples / n steps up.
        let sampled =
            opts.unwind_samples > 0 && (i == 0 || i * opts.unwind_samples / n != (i - 1) * opts.unwind_samples / n);
        let unwind = if sampled { unwind_from_middle(&run.section, off, opts.seed) } else { None };
        out.counts.unwind_fdes += usize::from(unwind.is_some());
        out.cfi.push(CfiCase {
            name: format!("{short}+{off:#x}"),
            origin: format!("{origin}: {name} FDE at {off:#x}"),
            section: run.section.clone(),
            fde_offset: off,
            rules: Vec::new(),
            expect: None,
            unwind,
        });
    }
}

/// Virtual unwinding from the middle of the FDE at `off` (pc =
/// initial_location + address_range / 2, rounded down) with a synthetic
/// machine state: registers and memory of every address space read as a
/// deterministic function of `seed` and the FDE offset, thread and lane
/// `SYNTHETIC_THREAD_LANE`. `None` if the FDE's headers do not parse or it
/// covers no address. Unwinding goes on until the base of the stack, a
/// fault (typically `unwind.no-fde` once a synthetic return address leads
/// nowhere) or the frames budget.
fn unwind_from_middle(section: &Arc<CfiSection>, off: u64, seed: u64) -> Option<UnwindCase> {
    let (fde, _) = section.parse_fde(off).ok()?;
    if fde.pc_range == 0 {
        return None;
    }
    let mut c = dwarfcheck_core::context::Context::new(section.target.clone());
    c.pc = Some(fde.pc_begin.wrapping_add(fde.pc_range / 2));
    c.synthetic = Some(dwarfcheck_core::context::synthetic::mix(seed ^ off));
    let (t, l) = super::dwarf::SYNTHETIC_THREAD_LANE;
    (c.thread, c.lane) = (Some(t), Some(l));
    c.cfi = Some(section.clone());
    c.budgets.frames = SAMPLE_FRAMES;
    Some(UnwindCase { ctx: Arc::new(c), limit: None, expect: None })
}

/// The frames budget of a sampled unwinding (`unwind.frames-budget`). From
/// a synthetic state, unwinding finds no real stack: the synthetic return
/// addresses lead to `unwind.no-fde` after a step or two on clean input
/// (1,051 samples of the real multi-architecture input make 1,051 steps
/// in all). A corrupted FDE that covers the whole address space can keep
/// giving callers in itself; 32 frames bound that to an eighth of the
/// default budget's time.
pub const SAMPLE_FRAMES: u32 = 32;

/// Offsets of every FDE in `section`, in section order, and the error that
/// stopped the walk early, if any (the `cfi` module's entry walker, so that
/// the FDEs a consumer is judged on do not depend on that consumer).
pub fn fde_offsets(section: &CfiSection) -> (Vec<u64>, Option<dwarfcheck_core::cfi::header::CfiError>) {
    let mut out = Vec::new();
    for r in section.fde_offsets() {
        match r {
            Ok(off) => out.push(off),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}
