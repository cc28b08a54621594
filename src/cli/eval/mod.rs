//! `dwarfcheck eval`: a small workbench for one expression. The context
//! comes from the options or a case file's `context:` mapping, the
//! expression as text or bytes; it prints the reference's stack after each
//! operation, every consumer's outcome and verdict, or the whole evaluation
//! as a ready-to-edit case.

mod args;
mod context;
mod verdict;

pub use args::EvalArgs;

use args::MAX_EXPR_BYTES;
use dwarfcheck::asm;
use dwarfcheck::case::ExprCase;
use dwarfcheck::text::suggest::did_you_mean;
use dwarfcheck_core::context::{Context, MachineState};
use dwarfcheck_core::encoding::hex::{parse_hex, to_hex_spaced};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::target::{presets, Endian};
use std::process::ExitCode;

/// The rule an emitted case lists when the reference gives a result.
const RUNS_TO_END: &str = "expr.eval.runs-to-end";

pub fn eval(a: &EvalArgs) -> ExitCode {
    if presets::by_name(&a.target).is_none() {
        return super::input_error(format!(
            "unknown target `{}`{}; expected one of {}",
            a.target,
            did_you_mean(&a.target, presets::NAMES),
            presets::NAMES.join(", ")
        ));
    }
    if let Some(v) = a.vendor.as_deref().filter(|v| VendorProfile::by_name(v).is_none()) {
        return super::input_error(format!(
            "unknown vendor `{v}`{}; expected one of {}",
            did_you_mean(v, VendorProfile::NAMES),
            VendorProfile::NAMES.join(", ")
        ));
    }
    let others = match verdict::consumers(&a.consumers) {
        Ok(o) => o,
        Err(e) => return super::input_error(format!("--consumers: {e}")),
    };
    let mapping = match context::mapping(a, &a.target) {
        Ok(m) => m,
        Err(errs) => return input_errors(&errs),
    };
    let mut case = match context::load(&a.target, a.vendor.as_deref(), &mapping) {
        Ok(c) => c,
        Err(errs) => return input_errors(&errs),
    };
    let bytes = match expression(a, &case.ctx) {
        Ok(b) => b,
        Err(e) => return super::input_error(e),
    };
    case.expr = bytes.as_slice().into();
    let (text, reassembles) = disassembly(&bytes, &case.ctx);
    let mut report = vec![format!("bytes: {}", to_hex_spaced(&bytes)), format!("text:  {text}")];
    let (reference, _) = dwarfcheck::consumer::builtin::reference_outcome(&case);
    if a.trace {
        report.extend(trace(&case, &reference));
    }
    let (lines, bad) = verdict::lines(&case, &reference, &others);
    report.extend(lines);
    if a.emit_case {
        for l in &report {
            println!("# {l}");
        }
        let expr = if reassembles {
            format!("expr: {}", quoted(&text))
        } else {
            format!("expr_bytes: \"{}\"", to_hex_spaced(&bytes))
        };
        let big = case.ctx.target.endian == Endian::Big;
        let expect = dwarfcheck::case::yaml::emit::expectation(&reference, big);
        if expect.is_none() {
            println!("# no `expect:`: the case format cannot state the reference's outcome ({reference})");
        }
        let rule = reference.rule().map(|r| r.to_string()).unwrap_or_else(|| RUNS_TO_END.into());
        print!("{}", context::case_file(&a.target, a.vendor.as_deref(), &mapping, &rule, &expr, expect.as_deref()));
    } else {
        for l in &report {
            println!("{l}");
        }
    }
    if bad {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn input_errors(errs: &[String]) -> ExitCode {
    for e in errs.iter().skip(1) {
        eprintln!("dwarfcheck: {e}");
    }
    super::input_error(errs.first().map(String::as_str).unwrap_or("bad input"))
}

/// `text` as a YAML scalar (quoted where YAML needs it).
fn quoted(text: &str) -> String {
    yaml_serde::to_string(&yaml_serde::Value::String(text.to_string()))
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|_| format!("{text:?}"))
}

/// The expression's bytes: the positional argument as text or hex pairs,
/// `--hex`, or both (the text must assemble to the bytes).
///
/// Errors: nothing given, bad hex, more than [`MAX_EXPR_BYTES`] bytes, text
/// that does not assemble (at which character, and why), text and bytes
/// that differ.
fn expression(a: &EvalArgs, ctx: &Context) -> Result<Vec<u8>, String> {
    let too_long = |n: usize| n > MAX_EXPR_BYTES;
    let hex = |h: &str, what: &str| -> Result<Vec<u8>, String> {
        if too_long(h.len() / 3) {
            return Err(format!("{what}: more than {MAX_EXPR_BYTES} bytes (the limit of eval)"));
        }
        let b = parse_hex(h).map_err(|e| format!("{what}: {e}"))?;
        if too_long(b.len()) {
            return Err(format!("{what}: more than {MAX_EXPR_BYTES} bytes (the limit of eval)"));
        }
        Ok(b)
    };
    match (a.expr.as_deref(), a.hex.as_deref()) {
        (None, None) => Err("give an expression: operations as text, or bytes as hex (an argument, or --hex)".into()),
        (Some(t), Some(_)) if context::is_hex_pairs(t) => {
            Err("the expression's bytes are given twice: as the argument and as --hex".into())
        }
        (Some(t), None) if context::is_hex_pairs(t) => hex(t, "the expression"),
        (None, Some(h)) => hex(h, "--hex"),
        (Some(t), h) => {
            if too_long(t.len() / 8) {
                return Err(format!("the expression: more than {MAX_EXPR_BYTES} bytes (the limit of eval)"));
            }
            let (format, size) = operand_sizes(ctx);
            let b = asm::expr::assemble(t, &ctx.target, &ctx.vendor, format, size)
                .map_err(|e| format!("at character {}: {}", e.offset + 1, e.message))?;
            if too_long(b.len()) {
                return Err(format!("the expression: more than {MAX_EXPR_BYTES} bytes (the limit of eval)"));
            }
            match h {
                Some(h) => {
                    let given = hex(h, "--hex")?;
                    if given != b {
                        return Err(format!(
                            "the text assembles to `{}`, not to --hex `{}`",
                            to_hex_spaced(&b),
                            to_hex_spaced(&given)
                        ));
                    }
                    Ok(b)
                }
                None => Ok(b),
            }
        }
    }
}

/// The DWARF format (size of DIE-offset operands) and the address size in
/// **bytes** that expressions of `ctx` are encoded with, as the case loader
/// assembles them.
fn operand_sizes(ctx: &Context) -> (Format, u8) {
    (ctx.cu.as_ref().map(|c| c.format).unwrap_or_default(), ctx.address_bytes())
}

/// The llvm-dwarfdump-style text of `bytes`, and whether it assembles back
/// to exactly `bytes`.
fn disassembly(bytes: &[u8], ctx: &Context) -> (String, bool) {
    let (format, size) = operand_sizes(ctx);
    let text = asm::expr::disassemble(bytes, &ctx.target, &ctx.vendor, format, size);
    let back = asm::expr::assemble(&text, &ctx.target, &ctx.vendor, format, size);
    let same = back.as_deref() == Ok(bytes);
    (text, same)
}

/// The reference's stack after each operation, then the operation the
/// evaluation fails at (or the failure, when it has no operation).
fn trace(case: &ExprCase, reference: &Outcome) -> Vec<String> {
    let (_, steps) = dwarfcheck::consumer::builtin::with_reference_state(&case.ctx, |state| {
        dwarfcheck_reference::expr::evaluate_traced(&case.expr, state)
    });
    let mut out: Vec<String> =
        steps.iter().map(|t| format!("{:#06x}  {:<40} [{}]", t.at, t.op, t.stack.join(", "))).collect();
    if let Outcome::Failed(f) = reference {
        let ctx = &case.ctx;
        let (format, size) = operand_sizes(ctx);
        let ops = asm::expr::disassemble_ops(&case.expr, &ctx.target, &ctx.vendor, format, size);
        let at = f.at().and_then(|at| find_op(&ops, at as usize).map(|o| (at, o.text.clone())));
        out.push(match at {
            Some((at, text)) => format!("{at:#06x}  {text:<40} fails: {f}"),
            None => format!("fails: {f}"),
        });
    }
    out
}

/// The operation at byte offset `at`, top-level or nested.
fn find_op(ops: &[asm::expr::DisOp], at: usize) -> Option<&asm::expr::DisOp> {
    ops.iter().find_map(|o| if o.offset == at { Some(o) } else { find_op(&o.nested, at) })
}
