//! SPIR-V OpenCL.DebugInfo.100 debug operations (seed
//! `opencl-debuginfo-100.txt` §3.6 "Debug Operations", §4 `DebugOperation`,
//! `DebugExpression`, `DebugDeclare`, `DebugValue`): operation codes, their
//! spirv-dis names and operand counts, and an expression as both
//! evaluators take it.
//!
//! Like the rest of [`crate::encoding`] this only names words; each
//! evaluator checks and interprets an expression itself
//! (`specs/rules/spirv-expressions.yaml`).

/// Operation codes of the `DebugOperation` enumerant (seed §3.6).
pub mod code {
    /// `Deref`: pop an address, push the generic value read there.
    pub const DEREF: u32 = 0;
    /// `Plus`: pop two, push their sum.
    pub const PLUS: u32 = 1;
    /// `Minus`: pop two, push the second minus the top.
    pub const MINUS: u32 = 2;
    /// `PlusUconst N`: add the literal to the top entry.
    pub const PLUS_UCONST: u32 = 3;
    /// `BitPiece Offset Size` (both in bits; the reverse of
    /// `DW_OP_bit_piece`'s operand order).
    pub const BIT_PIECE: u32 = 4;
    /// `Swap`: exchange the top two entries.
    pub const SWAP: u32 = 5;
    /// `Xderef`: pop an address (top) and an address space (below it),
    /// push the generic value read there.
    pub const XDEREF: u32 = 6;
    /// `StackValue`: the top value is the object's value, not its address.
    pub const STACK_VALUE: u32 = 7;
    /// `Constu N`: push the literal.
    pub const CONSTU: u32 = 8;
    /// `Fragment Offset Size` (bits): the location so far describes bits
    /// `[Offset, Offset + Size)` of the source variable.
    pub const FRAGMENT: u32 = 9;
}

/// Name (as spirv-dis prints it), code and number of single-word literal
/// operands of each operation of seed §3.6.
pub const OPERATIONS: &[(&str, u32, usize)] = &[
    ("Deref", code::DEREF, 0),
    ("Plus", code::PLUS, 0),
    ("Minus", code::MINUS, 0),
    ("PlusUconst", code::PLUS_UCONST, 1),
    ("BitPiece", code::BIT_PIECE, 2),
    ("Swap", code::SWAP, 0),
    ("Xderef", code::XDEREF, 0),
    ("StackValue", code::STACK_VALUE, 0),
    ("Constu", code::CONSTU, 1),
    ("Fragment", code::FRAGMENT, 2),
];

/// The spirv-dis name of operation `code`, if the seed defines it.
pub fn name(code: u32) -> Option<&'static str> {
    OPERATIONS.iter().find(|(_, c, _)| *c == code).map(|(n, _, _)| *n)
}

/// The code of the operation spelled `name` (spirv-dis spelling, exact
/// case), if the seed defines it.
pub fn code_of(name: &str) -> Option<u32> {
    OPERATIONS.iter().find(|(n, _, _)| *n == name).map(|(_, c, _)| *c)
}

/// How many literal operands operation `code` takes, if the seed defines it.
pub fn operand_count(code: u32) -> Option<usize> {
    OPERATIONS.iter().find(|(_, c, _)| *c == code).map(|(_, _, k)| *k)
}

/// One `DebugOperation` as a module holds it: its code and its literal
/// operand words, unchecked (an unknown code or a wrong number of operands
/// is for the evaluators to report: `spirv.op.unknown-code`,
/// `spirv.op.operand-count`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DebugOperation {
    /// The operation code (seed §3.6).
    pub code: u32,
    /// The literal operands, one 32-bit word each.
    pub operands: Vec<u32>,
}

impl std::fmt::Display for DebugOperation {
    /// spirv-dis spelling: `Constu 0`, `Fragment 32 32`; a code the seed
    /// does not define as `#N` (a bare number would read as an operand of
    /// the operation before it), the spelling the harness's case text reads
    /// back.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match name(self.code) {
            Some(n) => write!(f, "{n}")?,
            None => write!(f, "#{}", self.code)?,
        }
        for w in &self.operands {
            write!(f, " {w}")?;
        }
        Ok(())
    }
}

/// Which instruction applies the expression to the variable (seed §4
/// "DebugDeclare", "DebugValue"): it decides the initial stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Applies {
    /// `DebugDeclare`: the stack starts with the variable's address.
    Declare,
    /// `DebugValue`: the stack starts with the variable's value.
    Value,
}

/// A `DebugExpression` applied to a variable, as both evaluators take it.
/// The initial stack entry (the variable's address or value) comes from
/// the evaluation context's initial stack
/// ([`MachineState::initial_stack`](crate::context::MachineState::initial_stack)),
/// which must hold exactly one entry (`spirv.context.initial-entry`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SpirvExpression {
    /// `DebugDeclare` or `DebugValue`.
    pub applies: Applies,
    /// The operations, in order. Outcomes report a faulty operation by its
    /// index in this list (the `at` of an ill-formed or evaluation-error
    /// outcome), not by a byte offset.
    pub operations: Vec<DebugOperation>,
    /// The source variable's size in bits, from its type's `DebugTypeBasic`
    /// or composite size; `None` when the module does not give it
    /// (`Fragment` then cannot be checked: `spirv.context.variable-size`).
    pub variable_bits: Option<u64>,
}

impl std::fmt::Display for SpirvExpression {
    /// The operations in spirv-dis spelling, comma-separated, after the
    /// instruction: `DebugDeclare [Constu 0, Swap, Xderef]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let which = match self.applies {
            Applies::Declare => "DebugDeclare",
            Applies::Value => "DebugValue",
        };
        write!(f, "{which} [")?;
        for (i, op) in self.operations.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{op}")?;
        }
        write!(f, "]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_seed() {
        // Seed §3.6, read by hand: codes 0..=9 in this order.
        let names: Vec<_> = (0..10).map(|c| name(c).unwrap()).collect();
        assert_eq!(
            names,
            ["Deref", "Plus", "Minus", "PlusUconst", "BitPiece", "Swap", "Xderef", "StackValue", "Constu", "Fragment"]
        );
        assert_eq!(name(10), None);
        let counts: Vec<_> = (0..10).map(|c| operand_count(c).unwrap()).collect();
        assert_eq!(counts, [0, 0, 0, 1, 2, 0, 0, 0, 1, 2]);
        assert_eq!(code_of("Xderef"), Some(6));
        assert_eq!(code_of("xderef"), None);
    }

    #[test]
    fn display_is_spirv_dis_spelling() {
        let e = SpirvExpression {
            applies: Applies::Value,
            operations: vec![
                DebugOperation { code: code::PLUS_UCONST, operands: vec![1] },
                DebugOperation { code: 34, operands: vec![] },
                DebugOperation { code: code::FRAGMENT, operands: vec![32, 32] },
            ],
            variable_bits: Some(64),
        };
        assert_eq!(e.to_string(), "DebugValue [PlusUconst 1, #34, Fragment 32 32]");
    }
}
