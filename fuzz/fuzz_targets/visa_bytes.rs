//! Arbitrary bytes as a vISA debug info blob: detection and decoding under
//! every layout never panic, and where a layout decodes them, the lowering
//! (location lists over Gen ranges, CFI rows, one unwinding step) gives
//! the same answers in the reference and the fast evaluator.
//! The logic lives in `dwarfcheck::visa::check::fuzz_one`, through
//! `dwarfcheck::fuzzing::targets::Target::VisaBytes`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::VisaBytes.check(data) {
        panic!("{m}");
    }
});
