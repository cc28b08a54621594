//! Case-file text: the loader never panics, and what loads agrees
//! (reference == fast).
//! The logic lives in `dwarfcheck::fuzzing::targets::Target::CaseYaml`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::CaseYaml.check(data) {
        panic!("{m}");
    }
});
