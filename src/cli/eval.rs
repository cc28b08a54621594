//! `dwarfcheck eval`: evaluate one expression, show the reference's stack
//! after each operation and every consumer's outcome.

use clap::Args;
use dwarfcheck::asm;
use dwarfcheck::case::ExprCase;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::{gimli::Gimli, Consumer};
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::context::{Context, ResultKind};
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::target::presets;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct EvalArgs {
    /// The expression, e.g. 'DW_OP_breg7 8 DW_OP_deref DW_OP_stack_value'.
    expr: String,
    /// Target preset.
    #[arg(long, default_value = "x86_64")]
    target: String,
    /// Vendor profile (default: the target's).
    #[arg(long)]
    vendor: Option<String>,
    /// Required result kind: location or value (default: unspecified).
    #[arg(long)]
    result: Option<String>,
    /// Register value, NAME=VALUE (repeatable).
    #[arg(long = "reg", value_name = "NAME=VALUE")]
    regs: Vec<String>,
    /// Seed for synthetic registers and memory not given explicitly.
    #[arg(long)]
    synthetic: Option<u64>,
    /// Print the stack after each operation.
    #[arg(long)]
    trace: bool,
}

/// A number in decimal (negative: two's complement) or `0x` hex.
pub(super) fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse::<i64>().map(|v| v as u64).ok().or_else(|| s.parse().ok()),
    }
}

pub fn eval(a: &EvalArgs) -> ExitCode {
    let Some(target) = presets::by_name(&a.target) else {
        return super::input_error(format!(
            "unknown target `{}`; expected one of {}",
            a.target,
            presets::NAMES.join(", ")
        ));
    };
    let target = Arc::new(target);
    let mut ctx = Context::new(target.clone());
    if let Some(v) = &a.vendor {
        match VendorProfile::by_name(v) {
            Some(p) => ctx.vendor = p,
            None => {
                return super::input_error(format!(
                    "unknown vendor `{v}`; expected one of {}",
                    VendorProfile::NAMES.join(", ")
                ))
            }
        }
    }
    ctx.result_kind = match a.result.as_deref() {
        None => None,
        Some("location") => Some(ResultKind::Location),
        Some("value") => Some(ResultKind::Value),
        Some(o) => return super::input_error(format!("--result {o}: expected location or value")),
    };
    ctx.synthetic = a.synthetic;
    for r in &a.regs {
        let Some((name, val)) = r.split_once('=') else {
            return super::input_error(format!("--reg {r}: expected NAME=VALUE"));
        };
        let reg = target.register_by_name(name).or_else(|| parse_u64(name).and_then(|n| target.register(n)));
        let (Some(reg), Some(v)) = (reg, parse_u64(val)) else {
            return super::input_error(format!("--reg {r}: unknown register or bad value"));
        };
        let mut bytes = vec![0u8; (reg.bits / 8) as usize];
        for (i, b) in v.to_le_bytes().iter().enumerate().take(bytes.len()) {
            bytes[i] = *b;
        }
        if target.endian == dwarfcheck_core::target::Endian::Big {
            bytes.reverse();
        }
        ctx.registers.insert(reg.number, bytes);
    }
    let bytes = match asm::expr::assemble(&a.expr, &target, &ctx.vendor, Default::default(), ctx.address_bytes()) {
        Ok(b) => b,
        Err(e) => return super::input_error(format!("at character {}: {}", e.offset + 1, e.message)),
    };
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    println!("bytes: {}", hex.join(" "));
    let case = ExprCase::plain("eval", "command line", &bytes, Arc::new(ctx));
    if a.trace {
        let (_, trace) = dwarfcheck::consumer::builtin::with_reference_state(&case.ctx, |state| {
            dwarfcheck_reference::expr::evaluate_traced(&case.expr, state)
        });
        for t in trace {
            println!("{:#06x}  {:<40} [{}]", t.at, t.op, t.stack.join(", "));
        }
    }
    let consumers: [&dyn Consumer; 3] = [&Reference, &Fast, &Gimli];
    let mut outcomes = Vec::new();
    for c in consumers {
        let o = c.evaluate(&case);
        println!("{:<10} {o}", format!("{}:", c.name()));
        outcomes.push(o);
    }
    if outcomes[0] != outcomes[1] {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
