//! GPU register files the vISA rules check registers against, per platform
//! family (the `-platform` names GenX_IR accepts, lower-cased).

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

    /// Number of general registers (r0 ..).
    pub fn grf_count(self) -> u32 {
        match self {
            Platform::Pvc => 256,
            _ => 128,
        }
    }

    /// Width of one general register in bytes.
    pub fn grf_bytes(self) -> u32 {
        match self {
            Platform::Pvc => 64,
            _ => 32,
        }
    }

    /// Number of flag registers (f0 ..), each 32 bits (4 bytes).
    pub fn flag_count(self) -> u32 {
        match self {
            Platform::Pvc => 4,
            _ => 2,
        }
    }

    /// Number of address registers (a0 only), 16 sub-registers of 2 bytes.
    pub fn address_count(self) -> u32 {
        1
    }

    /// Width of the address register in bytes.
    pub fn address_bytes(self) -> u32 {
        32
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
