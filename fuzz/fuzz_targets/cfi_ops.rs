//! Structured CFI programs from `dwarfcheck::fuzzing::gen::cfi_section`,
//! unwound from synthetic machine states: reference == fast.
//! The logic lives in `dwarfcheck::fuzzing::targets::Target::CfiOps`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::CfiOps.check(data) {
        panic!("{m}");
    }
});
