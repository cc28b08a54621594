//! Generated contexts (x86-64 and AMDGPU: registers, memory in several
//! address spaces, lanes, DIEs) and structured, mostly well-formed
//! expressions for them, extension operations included
//! (`dwarfcheck::fuzzing::gen::fuzz_case`), under every vendor profile:
//! reference == fast, and gimli agrees on DWARF 5 input or disagrees in a
//! known class.
//! The logic lives in `dwarfcheck::fuzzing::targets::Target::ExprOps`; the
//! operations the reference executes, per vendor profile, are libFuzzer
//! extra counters (`dwarfcheck::fuzzing::marks`).
#![no_main]
use dwarfcheck::fuzzing::marks::MARKS;
use libfuzzer_sys::fuzz_target;
use std::sync::atomic::{AtomicU8, Ordering};

/// libFuzzer reads (and clears before each run) the counters of this
/// section as coverage features of their own.
#[used]
#[link_section = "__libfuzzer_extra_counters"]
static EXTRA_COUNTERS: [AtomicU8; MARKS] = [const { AtomicU8::new(0) }; MARKS];

fuzz_target!(|data: &[u8]| {
    let mut mark = |i: usize| EXTRA_COUNTERS[i].store(1, Ordering::Relaxed);
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::ExprOps.check_marked(data, Some(&mut mark)) {
        panic!("{m}");
    }
});
