//! Coverage marks of the expression targets: which operations the
//! reference executed under which vendor profile. The evaluators' own
//! coverage cannot tell profiles apart (a DWARF 5 operation runs the same
//! code under each), so a fuzz binary gives libFuzzer one extra counter per
//! mark (docs/fuzzing.md, "Coverage marks"), and keeps an input that
//! executes an operation under a profile for the first time.

use crate::asm::decode::{decode_all, Params};
use crate::case::ExprCase;
use dwarfcheck_core::encoding::{Op, VendorProfile};
use dwarfcheck_core::outcome::{Failure, Outcome};

/// How many marks there are: 256 per vendor profile of
/// `VendorProfile::NAMES`, one per leading opcode byte, with the
/// `DW_OP_LLVM_user` sub-opcodes 0 to 31 in the unassigned 0xc0–0xdf.
pub const MARKS: usize = 6 * 256;

/// The mark of an operation with leading byte `opcode` (and `DW_OP_LLVM_user`
/// sub-opcode `subop`) under the profile at `profile` in
/// `VendorProfile::NAMES`.
pub fn mark_of(profile: usize, opcode: u8, subop: Option<u64>) -> usize {
    let slot = match subop {
        Some(s) => 0xc0 + (s as usize & 0x1f),
        None => usize::from(opcode),
    };
    profile * 256 + slot
}

/// Calls `mark` with the mark of each operation of `case` the reference
/// surely executed, given its outcome `outcome`: every operation when it
/// gave a result (or failed only the final result-kind check), those up to
/// the one it stopped at when it failed at an offset; in both cases none
/// past the first `DW_OP_skip` or `DW_OP_bra`, after which the path is not
/// known without a trace. None on a decoding error (nothing ran) or an
/// unlocated failure.
pub fn executed(case: &ExprCase, outcome: &Outcome, mark: &mut dyn FnMut(usize)) {
    debug_assert_eq!(MARKS, VendorProfile::NAMES.len() * 256);
    let Some(profile) = VendorProfile::NAMES.iter().position(|n| *n == case.ctx.vendor.name) else { return };
    let last = match outcome {
        Outcome::Failed(Failure::IllFormed { rule, .. }) if rule.as_str().starts_with("expr.decode.") => return,
        Outcome::Failed(
            Failure::IllFormed { at: Some(a), .. }
            | Failure::EvalError { at: Some(a), .. }
            | Failure::Budget { at: Some(a), .. },
        ) => Some(*a),
        Outcome::Failed(Failure::IllFormed { at: None, .. }) | Outcome::Value(_) | Outcome::Location(_) => None,
        Outcome::Failed(_) => return,
    };
    let (ops, _) = decode_all(&case.expr, &Params::for_context(&case.ctx));
    for o in &ops {
        if last.is_some_and(|a| o.offset as u64 > a) {
            break;
        }
        mark(mark_of(profile, case.expr[o.offset], o.subop));
        if matches!(o.op(), Op::Bra | Op::Skip) {
            break;
        }
    }
}
