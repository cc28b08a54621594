//! Raw expression bytes in the fixed rich context: reference == fast, and
//! gimli agrees on DWARF 5 input or disagrees in a known class.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let ctx = dwarfcheck::fuzzing::rich_context();
    let case = dwarfcheck::fuzzing::expr_case(data, &ctx);
    if let Err(m) = dwarfcheck::fuzzing::check_expr_case(&case).and_then(|()| dwarfcheck::fuzzing::check_gimli(&case)) {
        panic!("{m}");
    }
});
