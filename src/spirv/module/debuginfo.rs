//! OpenCL.DebugInfo.100 extended instructions as the reader sees them: the
//! instruction numbers (seed `opencl-debuginfo-100.txt` §3.1, "Instruction
//! Enumeration") and each instruction's operand words.

use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::Op;

/// The name an `OpExtInstImport` gives the instruction set.
pub const SET_NAME: &str = "OpenCL.DebugInfo.100";

/// Instruction numbers of seed §3.1 the reader uses (the operand layouts
/// are those of seed §4).
pub mod op {
    /// `DebugInfoNone`.
    pub const INFO_NONE: u32 = 0;
    /// `DebugTypeBasic`: Name, Size (<id> of a constant, bits), Encoding.
    pub const TYPE_BASIC: u32 = 2;
    /// `DebugTypePointer`: Base Type, Storage Class, Flags.
    pub const TYPE_POINTER: u32 = 3;
    /// `DebugTypeQualifier`: Base Type, Type Qualifier.
    pub const TYPE_QUALIFIER: u32 = 4;
    /// `DebugTypeArray`: Base Type, Component Counts (<id>s of constants).
    pub const TYPE_ARRAY: u32 = 5;
    /// `DebugTypeVector`: Base Type, Component Count (a literal).
    pub const TYPE_VECTOR: u32 = 6;
    /// `DebugTypedef`: Name, Base Type, Source, Line, Column, Parent.
    pub const TYPEDEF: u32 = 7;
    /// `DebugTypeEnum`: Name, Underlying Type, Source, Line, Column, Parent,
    /// Size (<id> of a constant, bits), Flags, enumerators.
    pub const TYPE_ENUM: u32 = 9;
    /// `DebugTypeComposite`: Name, Tag, Source, Line, Column, Parent,
    /// Linkage Name, Size (<id> of a constant, bits), Flags, Members.
    pub const TYPE_COMPOSITE: u32 = 10;
    /// `DebugGlobalVariable`: Name, Type, Source, Line, Column, Parent,
    /// Linkage Name, Variable, Flags.
    pub const GLOBAL_VARIABLE: u32 = 18;
    /// `DebugLocalVariable`: Name, Type, Source, Line, Column, Parent,
    /// Flags, optional Arg Number.
    pub const LOCAL_VARIABLE: u32 = 26;
    /// `DebugInlinedVariable`: Variable, Inlined.
    pub const INLINED_VARIABLE: u32 = 27;
    /// `DebugDeclare`: Local Variable, Variable, Expression.
    pub const DECLARE: u32 = 28;
    /// `DebugValue`: Local Variable, Value, Expression, Indexes.
    pub const VALUE: u32 = 29;
    /// `DebugOperation`: the operation code, then its literal operands.
    pub const OPERATION: u32 = 30;
    /// `DebugExpression`: Operations (<id>s of `DebugOperation`s).
    pub const EXPRESSION: u32 = 31;
}

/// Name of instruction number `n` for messages (the ones the reader
/// handles; others by number).
pub fn name(n: u32) -> String {
    let known = match n {
        op::INFO_NONE => "DebugInfoNone",
        op::TYPE_BASIC => "DebugTypeBasic",
        op::TYPE_POINTER => "DebugTypePointer",
        op::TYPE_QUALIFIER => "DebugTypeQualifier",
        op::TYPE_ARRAY => "DebugTypeArray",
        op::TYPE_VECTOR => "DebugTypeVector",
        op::TYPEDEF => "DebugTypedef",
        op::TYPE_ENUM => "DebugTypeEnum",
        op::TYPE_COMPOSITE => "DebugTypeComposite",
        op::GLOBAL_VARIABLE => "DebugGlobalVariable",
        op::LOCAL_VARIABLE => "DebugLocalVariable",
        op::INLINED_VARIABLE => "DebugInlinedVariable",
        op::DECLARE => "DebugDeclare",
        op::VALUE => "DebugValue",
        op::OPERATION => "DebugOperation",
        op::EXPRESSION => "DebugExpression",
        _ => return format!("debug instruction {n}"),
    };
    known.to_string()
}

/// One `OpExtInst`: its set, its instruction number and its operand words
/// after those (rspirv decodes them as <id>s; literals are the same words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtInst {
    /// Result <id> of the `OpExtInstImport`.
    pub set: u32,
    /// Instruction number within the set.
    pub number: u32,
    /// The operand words after the instruction number.
    pub words: Vec<u32>,
}

/// `inst` as an [`ExtInst`], when it is an `OpExtInst` rspirv decoded as
/// the core grammar gives it.
pub fn ext_inst(inst: &Instruction) -> Option<ExtInst> {
    if inst.class.opcode != Op::ExtInst {
        return None;
    }
    let Some(Operand::IdRef(set)) = inst.operands.first() else { return None };
    let Some(Operand::LiteralExtInstInteger(number)) = inst.operands.get(1) else { return None };
    let words = inst.operands[2..].iter().filter_map(word).collect();
    Some(ExtInst { set: *set, number: *number, words })
}

/// The one word an operand is, if it is one word.
pub fn word(o: &Operand) -> Option<u32> {
    match o {
        Operand::IdRef(w) | Operand::LiteralBit32(w) | Operand::LiteralExtInstInteger(w) => Some(*w),
        _ => None,
    }
}
