//! Calling frames: how the registers, CFA and program location of the frame
//! that called the current one are found (hetero-2020 "Call Frame
//! Information"; DWARF 5 §6.4).

use crate::outcome::cfi::RegisterRule;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The calling frame of a frame, found by virtually unwinding it with its
/// call frame information (hetero-2020 "Call Frame Information"; DWARF 5
/// §6.4). This is the simple frame chain of issue 3: the callee's CFI row
/// at the current program location is given directly as register rules.
///
/// `rules` says how each register of this (calling) frame is recovered
/// from the state of the frame it called: for the first `CallerFrame` of a
/// [`MachineState`](super::MachineState), from that state's registers, memory and CFA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerFrame {
    /// The program location in the calling frame (the call site).
    pub pc: Option<u64>,
    /// The calling frame's CFA: a byte address in address space
    /// `cfa_aspace`.
    pub cfa: Option<u64>,
    /// The address space of `cfa` (0, the default, unless the calling
    /// frame's CFA rule came from `DW_CFA_LLVM_def_aspace_cfa`).
    pub cfa_aspace: u64,
    /// The calling subprogram's `DW_AT_frame_base` expression.
    pub frame_base: Option<Vec<u8>>,
    /// Register rules of the called frame's CFI row, by DWARF register
    /// number. `Offset`/`ValOffset`/`Expression`/`ValExpression` use the
    /// *called* frame's CFA; `Register(R)` names a register of the called
    /// frame.
    pub rules: BTreeMap<u64, RegisterRule>,
    /// The rule of registers not in `rules` (the target's default rule,
    /// DWARF 5 §6.4.1; `SameValue` or `Undefined`).
    pub default_rule: RegisterRule,
    /// The frame that called this one, if known.
    pub caller: Option<Arc<CallerFrame>>,
    /// Whether this frame was found by virtually unwinding from the
    /// context (`unwind.context-from-cfi`) rather than given: then
    /// computing one of its registers while that same computation is under
    /// way is `unwind.cyclic` (explicitly given frames rely on the depth
    /// budget instead).
    pub unwound: bool,
}

impl Default for CallerFrame {
    /// Nothing known; registers without a rule are undefined.
    fn default() -> Self {
        CallerFrame {
            pc: None,
            cfa: None,
            cfa_aspace: 0,
            frame_base: None,
            rules: BTreeMap::new(),
            default_rule: RegisterRule::Undefined,
            caller: None,
            unwound: false,
        }
    }
}

impl CallerFrame {
    /// The rule for register `regno`: its own, else the default.
    pub fn rule(&self, regno: u64) -> &RegisterRule {
        self.rules.get(&regno).unwrap_or(&self.default_rule)
    }
}
