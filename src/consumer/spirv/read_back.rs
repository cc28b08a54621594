//! spirv-as and spirv-dis judged on their reading of `DebugOperation`s:
//! the expression a tool makes of the module is read back and evaluated
//! by the reference, so a misread operation shows as a different outcome
//! (docs/consumers.md "SPIR-V tools as consumers").
//!
//! - spirv-as assembles the module spelled with names ([`Spelling::Names`]);
//!   dwarfcheck's reader (`spirv::module::read`, rspirv) decodes the words
//!   it wrote.
//! - spirv-dis disassembles the module assembled word for word
//!   ([`Spelling::Words`], so spirv-as's reading does not enter);
//!   [`parse_disassembly`] reads its text.
//!
//! Either way the variable's size is the case's: the tools are judged on
//! the operations and on Declare/Value.

use super::{failed, fault, reference_on, refused, tools, Tool};
use crate::case::ExprCase;
use crate::consumer::external::process::TempDir;
use crate::spirv::module::build::{module_text_as, Spelling};
use dwarfcheck_core::encoding::spirv::{Applies, DebugOperation, SpirvExpression};
use dwarfcheck_core::outcome::Outcome;
use std::collections::HashMap;

/// `tool`'s answer to `case`, whose expression is `e`: the reference's
/// outcome on the expression the tool read, or the tool's refusal or
/// fault ([`super::refused`], [`super::fault`]).
pub fn answer(tool: Tool, case: &ExprCase, e: &SpirvExpression, spelling: Spelling) -> Outcome {
    let dir = match TempDir::new() {
        Ok(d) => d,
        Err(err) => return fault(tool, format!("temporary directory: {err}")),
    };
    let d = dir.path();
    let assembled = tools::assemble(d, "k", &module_text_as(e, spelling));
    let read = match (tool, assembled) {
        (Tool::SpirvAs, Err(f)) => return failed(tool, f),
        (_, Err(f)) => return fault(tool, format!("the module does not assemble word for word: {f}")),
        (Tool::SpirvAs, Ok(spv)) => match crate::spirv::module::read_file(&spv) {
            Ok(m) => match m.applications.as_slice() {
                [a] => a.expression.clone().ok_or_else(|| "no readable DebugExpression".to_string()),
                other => Err(format!("{} DebugDeclare/DebugValue instead of 1", other.len())),
            },
            Err(err) => Err(err.to_string()),
        },
        (_, Ok(_)) => match tools::run(d, "spirv-dis", &["--raw-id", "--no-header", "k.spv"]) {
            Err(f) => return fault(tool, f),
            Ok(o) if o.code != 0 => return refused(tool, &o.text),
            Ok(o) => parse_disassembly(&o.text).map(|(applies, operations)| SpirvExpression {
                applies,
                operations,
                variable_bits: e.variable_bits,
            }),
        },
    };
    match read {
        Ok(x) => reference_on(case, x),
        Err(why) => fault(tool, format!("what it wrote does not read back: {why}")),
    }
}

/// The expression of the one `DebugDeclare`/`DebugValue` in spirv-dis's
/// `--raw-id` text: its `DebugExpression`'s `DebugOperation`s in order,
/// each parsed as `spirv::text` spells them (name or `#code`, then the
/// literal operands).
///
/// Errors: a line that does not parse, a missing definition, or not
/// exactly one application, as text.
pub fn parse_disassembly(text: &str) -> Result<(Applies, Vec<DebugOperation>), String> {
    let mut operations: HashMap<&str, DebugOperation> = HashMap::new();
    let mut expressions: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut applications = Vec::new();
    for line in text.lines() {
        let Some((id, rest)) = line.split_once('=') else { continue };
        let id = id.trim();
        let words: Vec<&str> = rest.split_whitespace().collect();
        // `OpExtInst %void %set Instruction operands...`
        let (Some(&"OpExtInst"), Some(instruction)) = (words.first(), words.get(3)) else { continue };
        let operands = &words[4..];
        match *instruction {
            "DebugOperation" => {
                let mut ops = crate::spirv::text::parse(&operands.join(" ")).map_err(|e| format!("{line}: {e}"))?;
                match (ops.pop(), ops.is_empty()) {
                    (Some(op), true) => {
                        operations.insert(id, op);
                    }
                    _ => return Err(format!("not one operation: {line}")),
                }
            }
            "DebugExpression" => {
                expressions.insert(id, operands.to_vec());
            }
            "DebugDeclare" | "DebugValue" => {
                let applies = if *instruction == "DebugDeclare" { Applies::Declare } else { Applies::Value };
                let expr = operands.get(2).ok_or_else(|| format!("no Expression operand: {line}"))?;
                applications.push((applies, *expr));
            }
            _ => {}
        }
    }
    let [(applies, expr)] = applications.as_slice() else {
        return Err(format!("{} DebugDeclare/DebugValue instead of 1", applications.len()));
    };
    let ids = expressions.get(expr).ok_or_else(|| format!("{expr} is no DebugExpression"))?;
    let ops = ids
        .iter()
        .map(|id| operations.get(id).cloned().ok_or_else(|| format!("{id} is no DebugOperation")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((*applies, ops))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-written spirv-dis text (the shape of its `--raw-id` output).
    #[test]
    fn parses_the_expression_of_the_application() {
        let text = "\
%12 = OpExtInst %3 %2 DebugOperation Constu 0
%13 = OpExtInst %3 %2 DebugOperation Swap
%14 = OpExtInst %3 %2 DebugOperation Fragment 32 16
%15 = OpExtInst %3 %2 DebugExpression %12 %13 %14
%16 = OpExtInst %3 %2 DebugOperation Deref
%20 = OpExtInst %3 %2 DebugDeclare %9 %10 %15
";
        let (applies, ops) = parse_disassembly(text).unwrap();
        assert_eq!(applies, Applies::Declare);
        let want = [(8, vec![0]), (5, vec![]), (9, vec![32, 16])];
        let got: Vec<(u32, Vec<u32>)> = ops.into_iter().map(|o| (o.code, o.operands)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn two_applications_or_a_missing_operation_do_not_read() {
        let two = "%5 = OpExtInst %3 %2 DebugExpression\n%6 = OpExtInst %3 %2 DebugValue %1 %4 %5\n\
                   %7 = OpExtInst %3 %2 DebugValue %1 %4 %5\n";
        assert!(parse_disassembly(two).unwrap_err().contains("2 DebugDeclare"));
        let missing = "%5 = OpExtInst %3 %2 DebugExpression %9\n%6 = OpExtInst %3 %2 DebugValue %1 %4 %5\n";
        assert!(parse_disassembly(missing).unwrap_err().contains("%9 is no DebugOperation"));
    }
}
