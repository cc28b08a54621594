//! The Intel GPU target preset a vISA blob is lowered against: the core preset (`intel-gpu-<platform>`) for the blob's platform family.
//!
//! The register numbering, register files and address spaces are
//! documented on [`dwarfcheck_core::target::intel`]; this module only maps
//! a [`Platform`] to its register file.

use super::platform::Platform;
use dwarfcheck_core::target::intel;
use dwarfcheck_core::target::Target;

pub use dwarfcheck_core::target::intel::{A0 as A0_BASE, ASPACE_SCRATCH, F0_BASE, GRF_BASE, IP};

/// The preset `intel-gpu-<platform>` for `platform`.
pub fn target(platform: Platform) -> Target {
    intel::intel_gpu(&format!("intel-gpu-{platform}"), platform.register_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each platform's preset is the core preset of the same name: the
    /// platform table and the core's register files agree.
    #[test]
    fn platform_presets_match_core_presets() {
        for p in Platform::ALL {
            let ours = target(p);
            let core = dwarfcheck_core::target::presets::by_name(&ours.name).expect("core has the preset");
            assert_eq!(ours.registers, core.registers, "{p}");
            assert_eq!(ours.address_spaces, core.address_spaces, "{p}");
        }
        // Hand-read from IGC's numbering: r127 is 143, f1 is 289.
        let t = target(Platform::Tgllp);
        assert_eq!(t.register_by_name("r127").map(|r| (r.number, r.bits)), Some((143, 256)));
        assert_eq!(t.register_by_name("f1").map(|r| r.number), Some(289));
        assert!(t.register(144).is_none());
        assert_eq!(target(Platform::Pvc).register_by_name("r255").map(|r| (r.number, r.bits)), Some((271, 512)));
    }
}
