//! Case-file text: the loader never panics, and what loads agrees
//! (reference == fast).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(m) = dwarfcheck::fuzzing::check_case_yaml(text) {
        panic!("{m}");
    }
});
