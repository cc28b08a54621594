//! A minimal SPIR-V module (spirv-as text) around one `DebugExpression`,
//! for the third-party consumers of issue 16 item 6 (spirv-as/spirv-dis,
//! spirv-val, `llvm-spirv-15 -r`).
//!
//! The template is reduced from what llvm-spirv 15 itself writes for
//! `specs/fixtures/spirv/structs.cl` (one kernel, one `DebugLocalVariable`,
//! one `DebugDeclare` of a `Function` `OpVariable` or `DebugValue` of an
//! `OpConstant`), with the three changes spirv-val asks for on a well-formed
//! expression: `DebugTypeFunction` returns `OpTypeVoid` (not
//! `DebugInfoNone`), `DebugFunction` has no Declaration operand, and the
//! entry point has no `LinkageAttributes`.
//!
//! By default every `DebugOperation` is written with spirv-as's `!N`
//! immediate form (the word as is), its code and each operand: spirv-as
//! refuses a code the seed does not define when spelled as a number, and
//! checks the operand count of a named one, while a case may hold any code
//! with any number of operands (`spirv.op.unknown-code`,
//! `spirv.op.operand-count`). [`Spelling::Names`] writes names instead, for
//! judging spirv-as's own reading of them.

use dwarfcheck_core::encoding::spirv::{name, Applies, DebugOperation, SpirvExpression};
use std::fmt::Write as _;

/// The value a `DebugValue` applies its expression to (`OpConstant` of
/// 64-bit integer type).
pub const VALUE: u64 = 5;

/// How each `DebugOperation` is spelled in the module text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// Every word with spirv-as's `!N` form: the code and operands exactly
    /// as the expression holds them, whatever they are.
    Words,
    /// As a person writes it and spirv-dis prints it: a defined code by its
    /// name (`DebugOperation PlusUconst 8`), an undefined one by its number
    /// (`DebugOperation 10 32 5`), operands as plain literals. spirv-as
    /// then reads the names and checks the operands itself.
    Names,
}

/// [`module_text_as`] with [`Spelling::Words`].
pub fn module_text(e: &SpirvExpression) -> String {
    module_text_as(e, Spelling::Words)
}

/// spirv-as text (`--target-env spv1.4`) of a module whose one kernel `k`
/// applies `e` to one local variable `v`, each operation spelled as
/// `spelling` says.
///
/// - `v`'s type is a `DebugTypeBasic` of size `e.variable_bits` **bits**
///   (an `OpConstant` of 32-bit integer type, 64-bit when it does not fit);
///   when `e.variable_bits` is `None`, an empty structure
///   (`DebugTypeComposite`) whose Size is `DebugInfoNone`, which spirv-val
///   and llvm-spirv accept. Either way [`super::read`] gives back
///   `e.variable_bits`.
/// - [`Applies::Declare`]: `DebugDeclare` of an `OpVariable` of `Function`
///   storage class (pointer to a 64-bit integer);
///   [`Applies::Value`]: `DebugValue` of the constant [`VALUE`].
/// - The `DebugExpression` has one `DebugOperation` per operation of `e`,
///   in order, with exactly its code and operand words.
pub fn module_text_as(e: &SpirvExpression, spelling: Spelling) -> String {
    let mut t = String::new();
    t.push_str(HEADER);
    if let Some(bits) = e.variable_bits {
        // spirv-as sizes a literal by the constant's type: 64 bits when
        // the size does not fit in 32.
        let ty = if u32::try_from(bits).is_ok() { "%u32" } else { "%u64" };
        let _ = writeln!(t, "   %bits = OpConstant {ty} {bits}");
    }
    let _ = writeln!(t, "      %value = OpConstant %u64 {VALUE}");
    t.push_str(TYPES);
    match e.variable_bits {
        Some(_) => t.push_str("  %vtype = OpExtInst %void %dbg DebugTypeBasic %s_int %bits Signed\n"),
        None => t.push_str(
            "  %vtype = OpExtInst %void %dbg DebugTypeComposite %s_s Structure %src 1 0 %cu %s_s %none FlagIsProtected|FlagIsPrivate\n",
        ),
    }
    t.push_str(FUNCTION);
    let mut ids = Vec::with_capacity(e.operations.len());
    for (i, op) in e.operations.iter().enumerate() {
        let id = format!("%op{i}");
        let _ = writeln!(t, "{id} = OpExtInst %void %dbg DebugOperation {}", operation_words(op, spelling));
        ids.push(id);
    }
    let _ = writeln!(t, "   %expr = OpExtInst %void %dbg DebugExpression {}", ids.join(" "));
    t.push_str(BODY);
    match e.applies {
        Applies::Declare => t.push_str("  %apply = OpExtInst %void %dbg DebugDeclare %var %ptr %expr\n"),
        Applies::Value => t.push_str("  %apply = OpExtInst %void %dbg DebugValue %var %value %expr\n"),
    }
    t.push_str(TAIL);
    t
}

/// The words after `DebugOperation`, spelled as `spelling` says.
fn operation_words(op: &DebugOperation, spelling: Spelling) -> String {
    let mut t = match (spelling, name(op.code)) {
        (Spelling::Words, _) => format!("!{}", op.code),
        (Spelling::Names, Some(n)) => n.to_string(),
        (Spelling::Names, None) => op.code.to_string(),
    };
    for w in &op.operands {
        let _ = match spelling {
            Spelling::Words => write!(t, " !{w}"),
            Spelling::Names => write!(t, " {w}"),
        };
    }
    t
}

const HEADER: &str = "\
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
        %std = OpExtInstImport \"OpenCL.std\"
        %dbg = OpExtInstImport \"OpenCL.DebugInfo.100\"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k \"k\"
     %s_file = OpString \"/tmp/k.cl\"
      %s_md5 = OpString \"//__CSK_MD5:00000000000000000000000000000000\"
        %s_v = OpString \"v\"
        %s_k = OpString \"k\"
    %s_empty = OpString \"\"
      %s_int = OpString \"int\"
        %s_s = OpString \"s\"
               OpSource OpenCL_C 200000
               OpName %k \"k\"
        %u64 = OpTypeInt 64 0
        %u32 = OpTypeInt 32 0
";

const TYPES: &str = "\
       %void = OpTypeVoid
      %fntype = OpTypeFunction %void
      %ptrty = OpTypePointer Function %u64
       %none = OpExtInst %void %dbg DebugInfoNone
        %src = OpExtInst %void %dbg DebugSource %s_file %s_md5
         %cu = OpExtInst %void %dbg DebugCompilationUnit 65536 5 %src OpenCL_C
";

const FUNCTION: &str = "\
    %dfntype = OpExtInst %void %dbg DebugTypeFunction None %void
        %dfn = OpExtInst %void %dbg DebugFunction %s_k %dfntype %src 1 0 %cu %s_empty FlagIsDefinition|FlagPrototyped 1 %k
        %var = OpExtInst %void %dbg DebugLocalVariable %s_v %vtype %src 2 0 %dfn None
";

const BODY: &str = "\
          %k = OpFunction %void DontInline %fntype
      %entry = OpLabel
        %ptr = OpVariable %ptrty Function
      %scope = OpExtInst %void %dbg DebugScope %dfn
               OpLine %s_file 2 1
";

const TAIL: &str = "\
    %noscope = OpExtInst %void %dbg DebugNoScope
               OpReturn
               OpFunctionEnd
";
