//! The edition classifier (DESIGN §3): is an expression or CFI program plain
//! DWARF 5, DWARF 5 plus GNU operations, or does it need hetero-2020?

use serde::{Deserialize, Serialize};

/// The smallest edition an input fits in. Ordered: each contains the ones
/// before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Edition {
    /// Only DWARF 5 operations, used as DWARF 5 allows.
    Dwarf5,
    /// DWARF 5 plus the GNU vendor operations GCC emits.
    Dwarf5Gnu,
    /// Needs the heterogeneous-debugging extensions.
    Hetero2020,
}
