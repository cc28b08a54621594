//! The lean step allocates nothing once warm: 10,000 one-step unwinds of
//! libc's `.eh_frame` (skipped when absent) at rows it unwinds natively,
//! after a warm-up pass, counted by a global allocator.

mod common;

use dwarfcheck_core::context::Context;
use dwarfcheck_core::outcome::cfi::{CfaRule, CfiOutcome, RegisterRule};
use dwarfcheck_fast::cfi::frame_table;
use dwarfcheck_fast::unwind::{Frame, Unwinder};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting allocations and reallocations.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn ten_thousand_lean_steps_allocate_nothing_after_warm_up() {
    let Some(sec) = common::eh_frame(common::LIBC) else {
        eprintln!("{} not found: skipped", common::LIBC);
        return;
    };
    let mut un = Unwinder::new(&sec);
    // Program locations in every FDE, to 10,000, whose row the lean step
    // unwinds natively: CFA = register + offset, the return address (rip,
    // 16) at an offset from it or undefined (the others go through the
    // general step, which allocates its outcomes).
    let native = |pc: u64| {
        let Some(f) = un.index().find(pc) else { return false };
        let CfiOutcome::Table(t) = frame_table(&sec, f.fde.offset) else { return false };
        t.rows.iter().any(|r| {
            r.start <= pc
                && pc < r.end
                && matches!(r.cfa, CfaRule::RegOffset { aspace: 0, .. })
                && matches!(r.registers.get(&16), None | Some(RegisterRule::Offset { .. } | RegisterRule::Undefined))
        })
    };
    let pcs: Vec<u64> = common::pcs(un.index()).into_iter().filter(|&pc| native(pc)).take(10_000).collect();
    assert_eq!(pcs.len(), 10_000);
    let mut state = Context::new(sec.target.clone());
    state.synthetic = Some(0x5eed);
    let pass = |un: &mut Unwinder<'_>| {
        let mut found = 0u64;
        for &pc in &pcs {
            if let Ok(s) = un.step_summary(&state, &Frame { pc, lookup: pc, callee: None }) {
                found = found.wrapping_add(s.cfa_address ^ s.caller_pc.unwrap_or(0));
            }
        }
        found
    };
    let warm = pass(&mut un);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let again = pass(&mut un);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    assert_eq!(warm, again);
    assert_eq!(allocations, 0, "{allocations} allocations in 10,000 warm steps");
}
