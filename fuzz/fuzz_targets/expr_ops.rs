//! Structured, mostly well-formed expressions (extension operations
//! included) from `dwarfcheck::fuzzing::gen::expression`: reference == fast.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ctx = dwarfcheck::fuzzing::rich_context();
    let mut u = arbitrary::Unstructured::new(data);
    let Ok(e) = dwarfcheck::fuzzing::gen::expression(&mut u, &ctx) else { return };
    if let Err(m) = dwarfcheck::fuzzing::check_expr(&e, &ctx) {
        panic!("{m}");
    }
});
