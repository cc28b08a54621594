//! The edition classifier (docs/architecture.md §3): is an expression or CFI program plain
//! DWARF 5, DWARF 5 plus GNU operations, or does it need hetero-2020?
//!
//! [`classify_expr`] / [`explain_expr`] handle DWARF expressions (rules in
//! [`expr`]), [`classify_cfi`] / [`explain_cfi`] call frame instructions
//! (rules in [`cfi`]). The classifier decodes with `crate::asm::decode`,
//! never with an evaluator's decoder.

pub mod case;
pub mod cfi;
pub mod expr;

pub use case::explain_case;
pub use cfi::{classify_cfi, explain_cfi};
pub use expr::{classify_expr, explain_expr, Usage};

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
    /// Not DWARF: a SPIR-V OpenCL.DebugInfo.100 expression (issue 16). Only
    /// consumers that read SPIR-V debug operations are judged on it; DWARF
    /// consumers would see only its lowering.
    SpirvDebugInfo100,
}

/// An edition with the reason it is not narrower.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// The smallest edition the input fits in.
    pub edition: Edition,
    /// Why the input is outside a narrower edition: the classifier rule
    /// (one of the `REASON_*` constants of [`expr`] or [`cfi`]); `None` for
    /// [`Edition::Dwarf5`].
    pub reason: Option<&'static str>,
    /// Byte offset of the operation or instruction that decided it (for a
    /// nested `DW_OP_entry_value` block or CFI expression, the offset of
    /// the enclosing operation or instruction).
    pub at: Option<usize>,
}

impl Classification {
    /// Plain DWARF 5.
    pub const DWARF5: Classification = Classification { edition: Edition::Dwarf5, reason: None, at: None };

    fn new(edition: Edition, reason: &'static str, at: usize) -> Self {
        Classification { edition, reason: Some(reason), at: Some(at) }
    }

    /// Keeps the wider of two classifications (the first on a tie).
    fn max(self, other: Classification) -> Classification {
        if other.edition > self.edition {
            other
        } else {
            self
        }
    }
}

/// The edition of an expression case: its expression as its attribute and
/// result kind use it, and what its context makes it depend on (see
/// [`case`]).
pub fn of_expr_case(c: &crate::case::ExprCase) -> Edition {
    explain_case(c).edition
}

/// The edition of a CFI case: the larger of its CIE's initial instructions
/// and its FDE's instructions. An FDE whose headers do not parse is
/// classified DWARF 5, so that every consumer is asked about it (the
/// reference calls it ill-formed, which any answer satisfies).
pub fn of_cfi_case(c: &crate::case::CfiCase) -> Edition {
    let sec = &c.section;
    let Ok((fde, cie)) = sec.parse_fde(c.fde_offset) else {
        return Edition::Dwarf5;
    };
    let p = crate::asm::decode::Params {
        vendor: &sec.target.vendor,
        endian: sec.target.endian,
        format: cie.format,
        address_size: cie.address_size,
    };
    [cie.instructions, fde.instructions]
        .into_iter()
        .map(|r| match sec.bytes.get(r.start as usize..r.end as usize) {
            Some(b) => classify_cfi(b, sec.target.arch, &p),
            None => Edition::Dwarf5,
        })
        .max()
        .unwrap_or(Edition::Dwarf5)
}
