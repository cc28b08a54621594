//! The known classes of chain failure and disagreement (docs/consumers.md
//! "The llvm-spirv → llc chain"), recognised by signature from the stage
//! failure or the two outcomes and the SPIR-V expression.

use super::compile::{Stage, StageFailure};
use super::judge::{Judgement, Pair};
use super::retarget::Arch;
use crate::consumer::external::process::RunFault;
use crate::consumer::spirv::tools::Failure;
use dwarfcheck_core::encoding::spirv::{code, operand_count, Applies, SpirvExpression};

/// Every class of the chain's own: `(id, explanation, public report)`.
/// What `llvm-spirv-15 -r` itself does wrong has the `llvm-spirv`
/// consumer's classes (`consumer::spirv::classes`), so one behaviour has
/// one ID: the chain's first numbering gave LS3 as SC1, LS4 as SC6, LS2 as
/// SC7 and LS1 as SC11, and those IDs are not reused.
pub const CLASSES: &[(&str, &str, Option<&str>)] = &[
    (
        "SC2",
        "llvm-spirv-15 -r writes an operation LLVM's DIExpression cannot hold (an undefined code or a wrong \
         operand count passed through raw, a StackValue or Fragment not last, ...) and its verifier rejects the \
         module (rc 255): ill-formed input diagnosed, nothing to compile",
        None,
    ),
    (
        "SC3",
        "a DebugValue of a constant whose expression does not end in StackValue: llc-15 writes the constant \
         (DW_OP_litN, DW_OP_consts N), the operations and an added DW_OP_stack_value (an implicit location), \
         where the seed, like DWARF, takes the result as the variable's address (a memory location); for a \
         value in a register llc writes DW_OP_bregR 0 and the operations without it, and agrees",
        None,
    ),
    (
        "SC4",
        "amdgcn: llc-15 dies on a module whose allocas stay in address space 0 (the retarget keeps SPIR's \
         private space; amdgcn's data layout says 5) when an alloca's pointer escapes: SIGSEGV in \
         TargetLowering::LowerCallTo when it is passed to a call, SIGABRT \"Cannot select: bitcast FrameIndex\" \
         when it is cast; a crash, not a diagnostic (specs/cases/spirv-chain/sc4-escaping-alloca-amdgcn.ll)",
        None,
    ),
    (
        "SC5",
        "llvm-spirv-15 -r reads an operation code the seed does not define as one of its own extension \
         operations (10 with two operands is dropped, 34 becomes DW_OP_shl) and the chain gives a location where \
         the seed makes the expression ill-formed (spirv.op.unknown-code): ill-formed input accepted",
        None,
    ),
    (
        "SC8",
        "a Fragment of size 0 (ill-formed, spirv.fragment.within-variable) is dropped on the way and llc writes \
         the location of the whole variable: ill-formed input accepted",
        None,
    ),
    (
        "SC9",
        "a Fragment of a variable whose type gives no size (the seed cannot place it: \
         spirv.context.variable-size) goes through, and llc writes the DW_OP_piece anyway",
        None,
    ),
    (
        "SC10",
        "at -O2 input, the object has a DIE for the variable but no DW_AT_location or DW_AT_const_value, \
         where the module applies an expression (DebugValue of a kernel argument or a value LLVM's -O0 \
         instruction selection does not keep): the location is lost on the way",
        None,
    ),
    (
        "SC12",
        "amdgcn: llc-15 bases locations on 32-bit registers: DW_AT_frame_base is DW_OP_regx of the stack \
         pointer SGPR32 (a register location) under DW_OP_fbreg, and -O2 values sit in DW_OP_bregx of a 32-bit \
         register; both read a generic (64-bit on amdgcn) value from the 32-bit register, past its end \
         (op.deref.past-storage-end): the location fails to evaluate where the SPIR-V one has the alloca's \
         address or the value",
        None,
    ),
    (
        "SC13",
        "a DebugValue whose expression ends in Deref (no StackValue): llc-15 drops that last DW_OP_deref (LLVM \
         reads a final deref of a dbg.value as \"the variable is in memory at this address\", which a DWARF \
         memory location already says), one dereference fewer than the seed: DebugValue [Deref] of 5 becomes \
         DW_OP_lit5, memory at 5, where the seed reads memory at 5 and locates the variable at what it read",
        None,
    ),
];

/// The explanation of class `id` (the chain's, or `llvm-spirv`'s `LS*`).
pub fn explain(id: &str) -> Option<&'static str> {
    CLASSES.iter().find(|c| c.0 == id).map(|c| c.1).or_else(|| crate::consumer::spirv::classes::describe(id))
}

/// Whether `e` is well formed as llvm-spirv can carry it into LLVM: known
/// codes with their operand counts, no `BitPiece`, `StackValue` only last
/// or just before a last `Fragment`, `Fragment` only last, of non-zero size,
/// inside a variable of known size and not all of it (LLVM's verifier
/// rejects a fragment that covers the whole variable, LS2).
pub fn carried(e: &SpirvExpression) -> bool {
    let ops = &e.operations;
    let n = ops.len();
    ops.iter().enumerate().all(|(i, o)| {
        operand_count(o.code) == Some(o.operands.len())
            && o.code != code::BIT_PIECE
            && (o.code != code::FRAGMENT || (i + 1 == n && fragment_fits(&o.operands, e.variable_bits)))
            && (o.code != code::STACK_VALUE || i + 1 == n || (i + 2 == n && ops[n - 1].code == code::FRAGMENT))
    })
}

/// The class of a stage failure on a module whose expressions are
/// `exprs` (for a module built around one expression, that one).
pub fn classify_failure(arch: Arch, f: &StageFailure, exprs: &[&SpirvExpression]) -> Option<&'static str> {
    let bit_piece = exprs.iter().any(|e| e.operations.iter().any(|o| o.code == code::BIT_PIECE));
    match (f.stage, &f.failure) {
        (Stage::Reverse, Failure::Fault(RunFault::Signal(_))) if bit_piece => Some("LS3"),
        (Stage::Reverse, Failure::Refused(255, t)) if t.contains("fragment covers entire variable") => Some("LS2"),
        (Stage::Reverse, Failure::Refused(255, t)) if t.contains("Fails to verify module") && bit_piece => Some("LS1"),
        (Stage::Reverse, Failure::Refused(255, t)) if t.contains("Fails to verify module") => Some("SC2"),
        (Stage::Reverse, Failure::Fault(RunFault::Signal(_))) if exprs.iter().any(|e| !carried(e)) => Some("LS4"),
        (Stage::Llc, Failure::Fault(RunFault::Signal(_))) if arch == Arch::Amdgcn => Some("SC4"),
        _ => None,
    }
}

/// The class of a variable's disagreement.
pub fn classify(j: &Judgement) -> Option<&'static str> {
    match j {
        Judgement::Differ(p, e) => classify_pair(p, e),
        Judgement::NoLocation(_) => Some("SC10"),
        Judgement::PrefixFails(
            dwarfcheck_core::encoding::op::Op::Fbreg | dwarfcheck_core::encoding::op::Op::Bregx,
            dwarfcheck_core::outcome::Outcome::Failed(f),
        ) if f.rule().is_some_and(|r| r.as_str() == "op.deref.past-storage-end") => Some("SC12"),
        _ => None,
    }
}

/// The signatures: SC3, a `DebugValue` not ending in `StackValue` (before
/// a last `Fragment`) whose DWARF outcome is an implicit location while
/// the SPIR-V one is not; SC13, a `DebugValue` ending in `Deref` whose
/// DWARF has one `DW_OP_deref` fewer; SC5, SC8, SC9: the SPIR-V outcome fails by the
/// rule the class names while the DWARF one is a location.
fn classify_pair(p: &Pair, e: &SpirvExpression) -> Option<&'static str> {
    use dwarfcheck_core::outcome::location::{SingleLocation, Source};
    use dwarfcheck_core::outcome::Outcome;
    let ops: Vec<u32> = e.operations.iter().map(|o| o.code).filter(|c| *c != code::FRAGMENT).collect();
    let implicit = |o: &Outcome| match o {
        Outcome::Location(l) => l.places.iter().any(|s| match s {
            SingleLocation::Simple(Source::Implicit { .. }) => true,
            SingleLocation::Composite(ps) => {
                ps.iter().any(|p| p.sources.iter().any(|s| matches!(s, Source::Implicit { .. })))
            }
            _ => false,
        }),
        _ => false,
    };
    if let (Outcome::Failed(f), Outcome::Location(_)) = (&p.spirv_outcome, &p.dwarf_outcome) {
        let zero_fragment = e.operations.iter().any(|o| o.code == code::FRAGMENT && o.operands.get(1) == Some(&0));
        return match f.rule().map(|r| r.as_str()) {
            Some("spirv.op.unknown-code" | "spirv.op.operand-count") => Some("SC5"),
            Some("spirv.fragment.within-variable") if zero_fragment => Some("SC8"),
            Some("spirv.context.variable-size") => Some("SC9"),
            _ => None,
        };
    }
    let derefs = e.operations.iter().filter(|o| o.code == code::DEREF).count();
    let dwarf_derefs = p.dwarf_ops.iter().filter(|o| **o == dwarfcheck_core::encoding::op::Op::Deref).count();
    if e.applies == Applies::Value && ops.last() == Some(&code::DEREF) && dwarf_derefs < derefs {
        return Some("SC13");
    }
    let no_stack_value = ops.last() != Some(&code::STACK_VALUE);
    (e.applies == Applies::Value && no_stack_value && implicit(&p.dwarf_outcome) && !implicit(&p.spirv_outcome))
        .then_some("SC3")
}

/// Whether a `Fragment`'s operands (offset, size in bits) lie inside a
/// variable of `bits` bits without covering all of it.
fn fragment_fits(w: &[u32], bits: Option<u64>) -> bool {
    let (Some(v), [o, s]) = (bits, w) else { return false };
    let (o, s) = (u64::from(*o), u64::from(*s));
    s > 0 && o + s <= v && s < v
}
