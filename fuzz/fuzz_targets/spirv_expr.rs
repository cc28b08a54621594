//! Generated contexts (x86-64 and AMDGPU) and generated SPIR-V
//! OpenCL.DebugInfo.100 expressions applied by `DebugDeclare` or
//! `DebugValue` (`dwarfcheck::fuzzing::gen::spirv_case`): reference ==
//! fast on the SPIR-V form, and its direct interpretation agrees with the
//! reference's evaluation of its lowering to DWARF.
//! The logic lives in `dwarfcheck::fuzzing::targets::Target::SpirvExpr`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(m) = dwarfcheck::fuzzing::targets::Target::SpirvExpr.check(data) {
        panic!("{m}");
    }
});
