//! Raw expression bytes in the fixed rich context: reference == fast.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ctx = dwarfcheck::fuzzing::rich_context();
    if let Err(m) = dwarfcheck::fuzzing::check_expr(data, &ctx) {
        panic!("{m}");
    }
});
