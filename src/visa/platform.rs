//! GPU register files the vISA rules check registers against, per platform
//! family (the `-platform` names GenX_IR accepts, lower-cased).

use dwarfcheck_core::target::intel::{self, RegisterFile};

/// A GPU platform family as IGC names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Platform {
    /// Gen9 (Skylake): 128 GRFs of 32 bytes.
    Skl,
    /// Gen12LP (Tiger Lake): 128 GRFs of 32 bytes.
    Tgllp,
    /// Xe-HPG (DG2): 128 GRFs of 32 bytes.
    Dg2,
    /// Xe-HPC (Ponte Vecchio): 256 GRFs (large-GRF mode) of 64 bytes.
    Pvc,
}

impl Platform {
    /// Every platform, in the order above.
    pub const ALL: [Platform; 4] = [Platform::Skl, Platform::Tgllp, Platform::Dg2, Platform::Pvc];

    /// Parses a platform name: `skl`, `tgllp`, `dg2` (also `dg2-g10`) or
    /// `pvc`, in any case.
    pub fn parse(s: &str) -> Option<Platform> {
        match s.to_ascii_lowercase().as_str() {
            "skl" => Some(Platform::Skl),
            "tgllp" => Some(Platform::Tgllp),
            "dg2" | "dg2-g10" => Some(Platform::Dg2),
            "pvc" => Some(Platform::Pvc),
            _ => None,
        }
    }

    /// The name GenX_IR's `-platform` option takes.
    pub fn genx_name(self) -> &'static str {
        match self {
            Platform::Skl => "SKL",
            Platform::Tgllp => "TGLLP",
            Platform::Dg2 => "DG2",
            Platform::Pvc => "PVC",
        }
    }

    /// The platform family's register file (the core's Intel presets
    /// hold the figures, from IGC's platform tables).
    pub fn register_file(self) -> RegisterFile {
        match self {
            Platform::Pvc => intel::XE_HPC_256X64,
            _ => intel::GEN_128X32,
        }
    }

    /// Number of general registers (r0 ..).
    pub fn grf_count(self) -> u32 {
        self.register_file().grf_count
    }

    /// Width of one general register in bytes.
    pub fn grf_bytes(self) -> u32 {
        self.register_file().grf_bytes
    }

    /// Number of flag registers (f0 ..), each 32 bits (4 bytes).
    pub fn flag_count(self) -> u32 {
        self.register_file().flag_count
    }

    /// Number of address registers (a0 only), 16 sub-registers of 2 bytes.
    pub fn address_count(self) -> u32 {
        1
    }

    /// Bytes per unit of BE_FP (and of the frame and stack pointers of
    /// IGC's stack-call ABI): 16 (owords) before Xe-HPG, 1 from DG2 on.
    ///
    /// The seed gives BE_FP-relative offsets in bytes but not the unit of
    /// BE_FP itself (docs/ambiguities.md item 110). IGC's DWARF emitter
    /// multiplies BE_FP by 16 exactly when its `ScratchOffsetInOW` option
    /// is set, which it sets for platforms that are not DG2 or a later
    /// product (intel-graphics-compiler, `DebugEmitterOpts` and the VISA
    /// emitter's debug setup); the tgllp fixtures' `.debug_frame` scales by
    /// 16, the dg2 fixtures' does not.
    pub fn be_fp_unit(self) -> u32 {
        match self {
            Platform::Skl | Platform::Tgllp => 16,
            Platform::Dg2 | Platform::Pvc => 1,
        }
    }

    /// Width of the address register in bytes.
    pub fn address_bytes(self) -> u32 {
        intel::A0_BYTES
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Platform::Skl => "skl",
            Platform::Tgllp => "tgllp",
            Platform::Dg2 => "dg2",
            Platform::Pvc => "pvc",
        })
    }
}
