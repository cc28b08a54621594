//! Raw expression bytes in the fixed rich context: reference == fast, and
//! gimli agrees on DWARF 5 input or disagrees in a known class.
//! The logic lives in `dwarfcheck::fuzzing::targets::Target::ExprBytes`.
//! (One vendor profile only, so no coverage marks: the evaluators' own
//! coverage tells its operations apart.)
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::ExprBytes.check(data) {
        panic!("{m}");
    }
});
