//! Generated contexts (x86-64 and AMDGPU: registers, memory in several
//! address spaces, lanes, DIEs) and structured, mostly well-formed
//! expressions for them, extension operations included
//! (`dwarfcheck::fuzzing::gen::fuzz_case`): reference == fast, and gimli
//! agrees on DWARF 5 input or disagrees in a known class.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = arbitrary::Unstructured::new(data);
    let Ok((_, case)) = dwarfcheck::fuzzing::gen::fuzz_case(&mut u) else { return };
    if let Err(m) = dwarfcheck::fuzzing::check_expr_case(&case).and_then(|()| dwarfcheck::fuzzing::check_gimli(&case)) {
        panic!("{m}");
    }
});
