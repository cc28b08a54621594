//! Arbitrary bytes as one procedure's Tru64 optimization data (a PPODE
//! stream): decoding and validation never panic, and whatever decodes
//! lowers to DWARF location lists on which the reference and the fast
//! evaluator agree with each other and with the direct reading
//! (`View::location_at`) at every instruction.
//! The logic lives in `dwarfcheck::tru64::check::fuzz_one`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::Tru64Bytes.check(data) {
        panic!("{m}");
    }
});
