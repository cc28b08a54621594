//! Structured CFI programs from `dwarfcheck::fuzzing::gen::cfi_section`,
//! unwound from synthetic machine states: reference == fast.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let target = Arc::new(dwarfcheck::target::presets::x86_64());
    let mut u = arbitrary::Unstructured::new(data);
    let Ok(Some(sec)) = dwarfcheck::fuzzing::gen::cfi_section(&mut u, &target) else { return };
    if let Err(m) = dwarfcheck::fuzzing::check_cfi(sec.kind, &sec.bytes, target) {
        panic!("{m}");
    }
});
