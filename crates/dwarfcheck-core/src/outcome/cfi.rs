//! Normalised call frame information outcomes (docs/architecture.md §4, "CFI outcomes").
//!
//! A row table maps address ranges to a CFA rule and register rules
//! (DWARF 5 §6.4.1). Normal form: rows sorted by start address, adjacent rows
//! with identical rules merged, a register absent from a row means "the
//! architecture's default rule" (explicit `DW_CFA_undefined` stays explicit).

use super::Failure;
use crate::rules::RuleId;
use std::collections::BTreeMap;

/// How the CFA is computed in a row.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "kind"))]
pub enum CfaRule {
    /// CFA = value of `register` + `offset` (bytes), in `aspace`
    /// (0 unless set by `DW_CFA_LLVM_def_aspace_cfa`).
    RegOffset {
        /// DWARF register number.
        register: u64,
        /// Byte offset (already multiplied by the data alignment factor
        /// where the instruction is factored).
        offset: i64,
        /// Address space identifier.
        aspace: u64,
    },
    /// CFA = the memory location the DWARF expression evaluates to.
    Expression {
        /// The expression bytes.
        #[cfg_attr(feature = "serde", serde(with = "crate::outcome::value::hex_bytes"))]
        expr: Vec<u8>,
    },
}

/// How one register of the caller is recovered (DWARF 5 §6.4.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "kind"))]
pub enum RegisterRule {
    /// Not recoverable.
    Undefined,
    /// Not modified from the caller.
    SameValue,
    /// Saved at CFA + offset (bytes).
    Offset {
        /// Byte offset from the CFA.
        offset: i64,
    },
    /// Value is CFA + offset (bytes).
    ValOffset {
        /// Byte offset from the CFA.
        offset: i64,
    },
    /// Saved in another register.
    Register {
        /// DWARF register number holding the value.
        register: u64,
    },
    /// Saved at the address the expression computes (CFA pushed first).
    Expression {
        /// The expression bytes.
        #[cfg_attr(feature = "serde", serde(with = "crate::outcome::value::hex_bytes"))]
        expr: Vec<u8>,
    },
    /// Value is what the expression computes (CFA pushed first).
    ValExpression {
        /// The expression bytes.
        #[cfg_attr(feature = "serde", serde(with = "crate::outcome::value::hex_bytes"))]
        expr: Vec<u8>,
    },
    /// AArch64 return-address signing state toggled by
    /// `DW_CFA_AARCH64_negate_ra_state`: `true` when the RA is signed.
    RaSigned {
        /// Current state after an odd number of toggles.
        signed: bool,
    },
}

/// One row: the rules in force for `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Row {
    /// First address covered.
    pub start: u64,
    /// One past the last address covered.
    pub end: u64,
    /// The CFA rule.
    pub cfa: CfaRule,
    /// Register rules by DWARF register number; absent means default.
    pub registers: BTreeMap<u64, RegisterRule>,
}

/// The row table of one FDE.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RowTable {
    /// Offset of the FDE in its section.
    pub fde_offset: u64,
    /// Rows in address order.
    pub rows: Vec<Row>,
}

impl RowTable {
    /// Puts the table in normal form: drops empty rows, merges adjacent
    /// rows with equal rules.
    pub fn normalize(mut self) -> Self {
        let mut out: Vec<Row> = Vec::with_capacity(self.rows.len());
        for r in self.rows.drain(..) {
            if r.end <= r.start {
                continue;
            }
            if let Some(last) = out.last_mut() {
                if last.end == r.start && last.cfa == r.cfa && last.registers == r.registers {
                    last.end = r.end;
                    continue;
                }
            }
            out.push(r);
        }
        self.rows = out;
        self
    }
}

/// The result of building the row table of one FDE.
///
/// Serialized with a `kind` tag: `table`, or the failure's own kind (the
/// failure's `at` is a byte offset in the frame section).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "kind"))]
pub enum CfiOutcome {
    /// The normalised table.
    Table(RowTable),
    /// Building the table failed.
    #[cfg_attr(feature = "serde", serde(untagged))]
    Failed(Failure),
}

impl CfiOutcome {
    /// Short label of the outcome kind: `table`, or the failure's
    /// ([`Failure::kind`]).
    pub fn kind(&self) -> &'static str {
        match self {
            CfiOutcome::Table(_) => "table",
            CfiOutcome::Failed(f) => f.kind(),
        }
    }

    /// The rule ID of an ill-formed or evaluation-error outcome.
    pub fn rule(&self) -> Option<&RuleId> {
        match self {
            CfiOutcome::Failed(f) => f.rule(),
            CfiOutcome::Table(_) => None,
        }
    }
}

impl From<Failure> for CfiOutcome {
    fn from(f: Failure) -> Self {
        CfiOutcome::Failed(f)
    }
}

use crate::encoding::hex::to_hex_spaced as hex;

/// The notation of case-file expectations (docs/case-format.md):
/// `reg7+8`, `reg7+8 in addrspace5`, `{9c 08}`.
impl std::fmt::Display for CfaRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CfaRule::RegOffset { register, offset, aspace } => {
                write!(f, "reg{register}{offset:+}")?;
                if *aspace != 0 {
                    write!(f, " in addrspace{aspace}")?;
                }
                Ok(())
            }
            CfaRule::Expression { expr } => write!(f, "{{{}}}", hex(expr)),
        }
    }
}

/// The notation of case-file expectations: `undefined`, `same`, `[CFA-8]`,
/// `CFA+8`, `reg1`, `[{hex}]`, `{hex}`, `signed`, `not-signed`.
impl std::fmt::Display for RegisterRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegisterRule::Undefined => write!(f, "undefined"),
            RegisterRule::SameValue => write!(f, "same"),
            RegisterRule::Offset { offset } => write!(f, "[CFA{offset:+}]"),
            RegisterRule::ValOffset { offset } => write!(f, "CFA{offset:+}"),
            RegisterRule::Register { register } => write!(f, "reg{register}"),
            RegisterRule::Expression { expr } => write!(f, "[{{{}}}]", hex(expr)),
            RegisterRule::ValExpression { expr } => write!(f, "{{{}}}", hex(expr)),
            RegisterRule::RaSigned { signed: true } => write!(f, "signed"),
            RegisterRule::RaSigned { signed: false } => write!(f, "not-signed"),
        }
    }
}

/// `[0x1000, 0x1004): CFA=reg7+8: reg16=[CFA-8]`, as llvm-dwarfdump prints
/// rows.
impl std::fmt::Display for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{:#x}, {:#x}): CFA={}", self.start, self.end, self.cfa)?;
        for (i, (r, rule)) in self.registers.iter().enumerate() {
            write!(f, "{} reg{r}={rule}", if i == 0 { ":" } else { "," })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_print_in_the_case_file_notation() {
        let row = Row {
            start: 0x1000,
            end: 0x1004,
            cfa: CfaRule::RegOffset { register: 7, offset: 8, aspace: 0 },
            registers: BTreeMap::from([
                (6, RegisterRule::ValOffset { offset: -16 }),
                (16, RegisterRule::Offset { offset: -8 }),
            ]),
        };
        assert_eq!(row.to_string(), "[0x1000, 0x1004): CFA=reg7+8: reg6=CFA-16, reg16=[CFA-8]");
        let cfa = CfaRule::RegOffset { register: 1, offset: -4, aspace: 5 };
        assert_eq!(cfa.to_string(), "reg1-4 in addrspace5");
        assert_eq!(RegisterRule::Expression { expr: vec![0x77, 0x08] }.to_string(), "[{77 08}]");
    }
}
