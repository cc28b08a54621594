//! Vendor profiles: how the contested opcode range 0xe0–0xff is decoded
//! (docs/architecture.md §3). GNU, HP, LLVM, WASM and PGI all use overlapping values.

/// Which vendor operations a decoder recognises.
///
/// A profile is chosen by the target, by the case file (`vendor:`), or by a
/// compilation unit's `DW_AT_LLVM_augmentation` string (`[llvm:vX.Y]`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VendorProfile {
    /// Profile name as accepted by [`VendorProfile::by_name`].
    pub name: String,
    /// GNU operations (0xe0, 0xf0–0xfd) as GCC emits them.
    pub gnu: bool,
    /// Hetero-2020 direct opcodes 0xe1–0xec.
    pub hetero_2020: bool,
    /// Newest LLVM form: 0xe9 is `DW_OP_LLVM_user` + ULEB128 sub-opcode.
    pub llvm_user: bool,
    /// Hetero-2020 only: whether the displacement of
    /// `DW_OP_LLVM_aspace_bregx` is SLEB128 (the seed's prose, the default)
    /// or ULEB128 (the seed's encoding table). Rule
    /// `op.aspace-bregx.displacement-encoding` records the conflict.
    pub aspace_bregx_signed: bool,
    /// IGC's `DW_OP_INTEL_*` operations 0xeb–0xef (Intel GPU targets:
    /// ELF `e_machine` 0xb6 and 205, EM_INTELGT). They take precedence over
    /// hetero-2020's readings of 0xeb/0xec when both are set.
    pub intel: bool,
}

impl VendorProfile {
    /// Strict DWARF 5: no vendor operation is recognised.
    pub fn dwarf5() -> Self {
        Self::new("dwarf5", false, false, false)
    }
    /// DWARF 5 plus the GNU operations. The default for CPU targets.
    pub fn gnu() -> Self {
        Self::new("gnu", true, false, false)
    }
    /// GNU plus hetero-2020 direct opcodes 0xe1–0xec (SLEB128 displacement
    /// for `DW_OP_LLVM_aspace_bregx`).
    pub fn hetero_2020() -> Self {
        Self::new("hetero-2020", true, true, false)
    }
    /// GNU plus the newest LLVM `DW_OP_LLVM_user` encoding.
    pub fn llvm_user() -> Self {
        Self::new("llvm-user", true, false, true)
    }

    /// GNU plus IGC's `DW_OP_INTEL_*` operations 0xeb–0xef, as the Intel
    /// Graphics Compiler writes them for Intel GPUs.
    pub fn intel() -> Self {
        let mut p = Self::new("intel", true, false, false);
        p.intel = true;
        p
    }

    fn new(name: &str, gnu: bool, hetero_2020: bool, llvm_user: bool) -> Self {
        VendorProfile { name: name.to_string(), gnu, hetero_2020, llvm_user, aspace_bregx_signed: true, intel: false }
    }

    /// Looks a profile up by name: `dwarf5`, `gnu`, `hetero-2020`,
    /// `hetero-2020-uleb` (ULEB128 `aspace_bregx` displacement), `llvm-user`,
    /// `intel`.
    pub fn by_name(name: &str) -> Option<Self> {
        Some(match name {
            "dwarf5" => Self::dwarf5(),
            "gnu" => Self::gnu(),
            "hetero-2020" => Self::hetero_2020(),
            "hetero-2020-uleb" => {
                let mut p = Self::hetero_2020();
                p.name = name.to_string();
                p.aspace_bregx_signed = false;
                p
            }
            "llvm-user" => Self::llvm_user(),
            "intel" => Self::intel(),
            _ => return None,
        })
    }

    /// All profile names [`VendorProfile::by_name`] accepts.
    pub const NAMES: &'static [&'static str] =
        &["dwarf5", "gnu", "hetero-2020", "hetero-2020-uleb", "llvm-user", "intel"];

    /// The profile a `DW_AT_LLVM_augmentation` string selects, if any:
    /// `[llvm:v0.0]` marks the hetero-2020 direct encoding; later versions
    /// use `DW_OP_LLVM_user`.
    pub fn from_augmentation(aug: &str) -> Option<Self> {
        let rest = aug.strip_prefix("[llvm:v")?;
        let ver = rest.split(']').next()?;
        Some(if ver == "0.0" { Self::hetero_2020() } else { Self::llvm_user() })
    }
}

impl Default for VendorProfile {
    fn default() -> Self {
        Self::gnu()
    }
}
