//! Raw frame-section bytes (first byte: section kind and target): every
//! FDE's row table and unwinding from synthetic states, reference == fast.
#![no_main]
use dwarfcheck::cfi::FrameKind;
use dwarfcheck::target::presets;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, bytes)) = data.split_first() else { return };
    let kind = if sel & 1 == 0 { FrameKind::DebugFrame } else { FrameKind::EhFrame };
    let target = Arc::new(match (sel >> 1) % 3 {
        0 => presets::x86_64(),
        1 => presets::aarch64(),
        _ => presets::amdgpu_gfx90a(),
    });
    if let Err(m) = dwarfcheck::fuzzing::check_cfi(kind, bytes, target) {
        panic!("{m}");
    }
});
