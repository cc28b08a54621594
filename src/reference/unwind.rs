//! Reference virtual unwinding (hetero-2020 "Structure of Call Frame
//! Information"; DWARF 5 §6.4.4; rules `unwind.*`): not yet implemented.

use crate::cfi::CfiSection;
use crate::context::Context;
use crate::outcome::unwind::Unwind;
use crate::outcome::Outcome;

/// Virtually unwinds through `section` from the machine state `ctx` (its
/// `pc`, registers and memory are the top frame's), making at most `limit`
/// steps (`None`: until the base of the stack, bounded by
/// `ctx.budgets.frames`).
pub fn unwind(_section: &CfiSection, _ctx: &Context, _limit: Option<u32>) -> Unwind {
    Unwind::fault(Outcome::Unsupported { what: "virtual unwinding".into() })
}
