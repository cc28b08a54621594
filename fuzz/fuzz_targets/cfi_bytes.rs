//! Raw frame-section bytes (first byte: section kind and target): every
//! FDE's row table and unwinding from synthetic states, reference == fast.
//! The logic lives in `dwarfcheck::fuzzing::targets::Target::CfiBytes`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::CfiBytes.check(data) {
        panic!("{m}");
    }
});
