//! The known classes of the SPIR-V tools' disagreements and faults
//! (docs/consumers.md "SPIR-V tools as consumers"), each recognised from
//! the case's expression and the two answers by signature, so that the
//! matrix groups them and says which are understood.

use super::Tool;
use crate::case::ExprCase;
use crate::consumer::FailureClass;
use dwarfcheck_core::encoding::spirv::{code, operand_count, Applies, SpirvExpression};
use dwarfcheck_core::outcome::{Failure, Outcome};

/// Every class: `(id, tool, explanation)`. No public report was found for
/// any of them (KhronosGroup/SPIRV-LLVM-Translator and llvm-project
/// trackers searched, 2026-11).
const CLASSES: &[(&str, Tool, &str)] = &[
    (
        "LS1",
        Tool::LlvmSpirv,
        "llvm-spirv writes BitPiece as DW_OP_bit_piece, which LLVM's DIExpression does not allow: the IR verifier \
         rejects the module ('invalid expression') where the seed gives a composite location",
    ),
    (
        "LS2",
        Tool::LlvmSpirv,
        "a Fragment covering the whole variable becomes DW_OP_LLVM_fragment 0 V, which LLVM's verifier rejects \
         ('fragment covers entire variable'); the seed allows it",
    ),
    (
        "LS3",
        Tool::LlvmSpirv,
        "llvm-spirv dies of SIGSEGV translating a DebugValue whose expression has a BitPiece (the same BitPiece \
         declared reaches the verifier instead, LS1)",
    ),
    (
        "LS4",
        Tool::LlvmSpirv,
        "llvm-spirv crashes (SIGSEGV or SIGABRT) on an operation code the seed does not define or on an operation \
         with fewer literals than it takes: it reads the operand count from its own table, past the instruction",
    ),
];

/// The explanation of class `id`.
pub fn describe(id: &str) -> Option<&'static str> {
    CLASSES.iter().find(|c| c.0 == id).map(|c| c.2)
}

/// The class of `tool`'s answer `answer` to `case` where the reference
/// gives `reference`, or `None` (unclassified).
pub fn class(tool: Tool, case: &ExprCase, reference: &Outcome, answer: &Outcome) -> Option<FailureClass> {
    let _ = reference;
    let e = case.spirv.as_deref()?;
    let id = match tool {
        Tool::LlvmSpirv => llvm_spirv(e, answer)?,
        Tool::SpirvAs | Tool::SpirvDis | Tool::SpirvVal => return None,
    };
    Some(FailureClass {
        id: id.to_string(),
        explanation: describe(id).unwrap_or_default().to_string(),
        docs: Some("docs/consumers.md#spirv-tools-as-consumers".into()),
        report: None,
    })
}

/// The `LS*` class of an llvm-spirv answer.
fn llvm_spirv(e: &SpirvExpression, answer: &Outcome) -> Option<&'static str> {
    let has = |c: u32| e.operations.iter().any(|o| o.code == c);
    let malformed = e.operations.iter().any(|o| operand_count(o.code).is_none_or(|n| o.operands.len() < n));
    match answer {
        Outcome::Failed(Failure::IllFormed { rule, .. }) => {
            let why = rule.as_str();
            if why.contains("invalid expression") && has(code::BIT_PIECE) {
                Some("LS1")
            } else if why.contains("fragment covers entire variable") && has(code::FRAGMENT) {
                Some("LS2")
            } else {
                None
            }
        }
        Outcome::Failed(Failure::ConsumerFault { what }) if what.contains("signal") => {
            if malformed {
                Some("LS4")
            } else if e.applies == Applies::Value && has(code::BIT_PIECE) && what.contains("SIGSEGV") {
                Some("LS3")
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_described_once() {
        for (i, c) in CLASSES.iter().enumerate() {
            assert_eq!(c.0, format!("LS{}", i + 1));
            assert_eq!(describe(c.0), Some(c.2));
        }
    }
}
