//! Outcomes of virtual unwinding: the CFA and caller registers of each
//! frame (hetero-2020 "Structure of Call Frame Information"; DWARF 5
//! §6.4.1 and §6.4.4; rules `unwind.*` in `specs/rules/unwind.yaml`).
//!
//! One [`Step`] unwinds one frame: from the machine state of a frame at
//! its program location it gives the frame's CFA location description and
//! the location description of every register of its caller. Virtual
//! unwinding repeats the step until the base of the stack
//! ([`UnwindEnd::Base`]), a frame limit, or a fault.

use super::{NormalLocation, Outcome};
use std::collections::BTreeMap;

/// One caller register after a step (`unwind.step.registers`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CallerRegister {
    /// The register's location description in the calling frame
    /// (`Outcome::Location`), or why its rule could not give one
    /// (`IllFormed`/`EvalError`/`Budget`/`Unsupported`, per
    /// `frame.rule.*`/`unwind.*`). `Outcome::Value` never occurs.
    pub location: Outcome,
    /// The register's value: exactly the register's size in **bytes**, in
    /// target byte order, read through `location` (`unwind.step.value`).
    /// `None` when `location` is not a location, or when some bit of it
    /// cannot be read (undefined storage, unreadable memory, unavailable
    /// register).
    #[cfg_attr(feature = "serde", serde(with = "opt_hex", default))]
    pub bytes: Option<Vec<u8>>,
}

/// One frame unwound (`unwind.step`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Step {
    /// The frame's program location: the context's `pc` for the top frame,
    /// else the caller pc of the step before.
    pub pc: u64,
    /// The address whose row was used: `pc` for the top frame, `pc - 1`
    /// for the others unless the row before came from a signal frame
    /// (`unwind.lookup-address`).
    pub lookup: u64,
    /// Section offset of the FDE whose row applied.
    pub fde_offset: u64,
    /// The frame's CFA: a memory location description (byte address, in
    /// the address space of its CFA rule) (`unwind.cfa.*`).
    pub cfa: NormalLocation,
    /// Every register of the calling frame that the row has a column for
    /// (explicit rules, including explicit `undefined`), plus the return
    /// address column; by DWARF register number. A register absent here
    /// has the default rule (undefined, `cfi.table.default-rule`).
    /// AArch64's RA_SIGN_STATE (34) is never listed: its rule is
    /// architectural (`unwind.aarch64.ra-sign-state`).
    pub registers: BTreeMap<u64, CallerRegister>,
    /// The caller's program location: the return address column's value
    /// (PAC bits removed where `unwind.aarch64.ra-sign-state` says so).
    /// `None` when the return address rule is undefined: this frame is the
    /// base of the stack (`unwind.base-of-stack`).
    pub caller_pc: Option<u64>,
}

/// Why virtual unwinding stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case", tag = "kind"))]
pub enum UnwindEnd {
    /// The return address rule of the last step is undefined: the base of
    /// the stack was reached (`unwind.base-of-stack`, DWARF 5 §6.4.4).
    Base,
    /// The requested number of steps was made (the case's `frames:`)
    /// before the base of the stack.
    Limit,
    /// A step could not be made: the fault's outcome carries the rule
    /// (`unwind.no-fde`, `unwind.cfa.not-memory`, `unwind.cyclic`, any
    /// `cfi.*` rule that makes the FDE's row table fail, a CFA expression's
    /// own outcome, `unwind.return-address-unreadable`) or the budget
    /// (`frames`: `unwind.frames-budget`). `at` offsets are byte offsets
    /// in the expression or section that failed.
    Fault {
        /// What went wrong.
        outcome: Outcome,
    },
}

/// The result of virtually unwinding from a machine state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Unwind {
    /// The steps made, top frame first.
    pub steps: Vec<Step>,
    /// Why unwinding stopped after the last step.
    pub end: UnwindEnd,
}

impl Unwind {
    /// An unwinding that could not start: no step, the fault `outcome`.
    pub fn fault(outcome: Outcome) -> Self {
        Unwind { steps: Vec::new(), end: UnwindEnd::Fault { outcome } }
    }
}

impl std::fmt::Display for Unwind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, s) in self.steps.iter().enumerate() {
            write!(f, "#{i} pc={:#x} (row at {:#x}, FDE {:#x}) CFA={}", s.pc, s.lookup, s.fde_offset, s.cfa)?;
            for (r, c) in &s.registers {
                write!(f, "; r{r}={}", c.location)?;
                if let Some(b) = &c.bytes {
                    write!(f, " = {}", crate::encoding::hex::to_hex(b))?;
                }
            }
            match s.caller_pc {
                Some(pc) => writeln!(f, "; caller pc={pc:#x}")?,
                None => writeln!(f, "; no caller")?,
            }
        }
        match &self.end {
            UnwindEnd::Base => write!(f, "end: base of stack"),
            UnwindEnd::Limit => write!(f, "end: frame limit"),
            UnwindEnd::Fault { outcome } => write!(f, "end: {outcome}"),
        }
    }
}

/// Serde for optional byte strings as hex text in memory order.
#[cfg(feature = "serde")]
mod opt_hex {
    use crate::encoding::hex;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `Some(bytes)` as memory-order hex.
    pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_some(&hex::to_hex(b)),
            None => s.serialize_none(),
        }
    }

    /// Reads hex written by [`serialize`].
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let t: Option<String> = Option::deserialize(d)?;
        t.map(|t| hex::parse_hex(&t).map_err(serde::de::Error::custom)).transpose()
    }
}
