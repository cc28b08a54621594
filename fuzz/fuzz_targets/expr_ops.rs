//! Generated contexts (x86-64 and AMDGPU: registers, memory in several
//! address spaces, lanes, DIEs) and structured, mostly well-formed
//! expressions for them, extension operations included
//! (`dwarfcheck::fuzzing::gen::fuzz_case`): reference == fast, and gimli
//! agrees on DWARF 5 input or disagrees in a known class.
//! The logic lives in `dwarfcheck::fuzzing::targets::Target::ExprOps`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::ExprOps.check(data) {
        panic!("{m}");
    }
});
