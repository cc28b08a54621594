//! `DW_OP_entry_value` for the gimli adapter: gimli hands the block back
//! (`RequiresEntryValue`) and a debugger evaluates it in the calling frame,
//! whose registers it recovers with the CFI register rules of
//! `ctx.caller` (what a gimli user does with `UnwindTable` rows).

use crate::asm::decode::{decode_all, OperandValue, Params};
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::context::{Context, Entry, ResultKind};
use dwarfcheck_core::encoding::Op;
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, Outcome, TypeEncoding, Value};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Endian;
use std::collections::BTreeMap;

type Step<T> = Result<T, Outcome>;

/// The gimli adapter's evaluation of an expression in a context (passed in
/// by the caller, so that this module stays below the evaluator that uses
/// it).
pub(super) type Evaluate = fn(&[u8], &Context) -> Outcome;

/// The outcome when gimli asks for something the context cannot give: an
/// evaluation error named after gimli's request (`gimli:<Requires...>`).
pub(super) fn missing(what: &str) -> Outcome {
    Outcome::Failed(Failure::EvalError { rule: RuleId::new(format!("gimli:{what}")), at: None })
}

/// The value gimli needs for `DW_OP_entry_value` with `block`, evaluated
/// in the calling frame of `ctx`: a lone `DW_OP_reg*`/`DW_OP_regx` gives
/// that register's contents there, anything else must give a value.
///
/// Errors: no calling frame, a register the rules cannot recover, or
/// whatever the block's evaluation reports; `Unsupported` for a typed
/// result gimli's generic entry value cannot carry.
pub(super) fn entry_value(block: &[u8], ctx: &Context, depth: u32, evaluate: Evaluate) -> Step<gimli::Value> {
    let caller = ctx.caller.as_ref().ok_or_else(|| missing("RequiresEntryValue"))?;
    if depth + 1 > ctx.budgets.depth {
        return Err(Outcome::Failed(Failure::Budget { budget: BudgetKind::Depth, at: None }));
    }
    let p = Params {
        vendor: &ctx.vendor,
        endian: ctx.target.endian,
        format: ctx.cu.as_ref().map(|u| u.format).unwrap_or_default(),
        address_size: ctx.address_bytes(),
    };
    let (ops, _) = decode_all(block, &p);
    // The registers the block names, and, when it uses DW_OP_fbreg, those
    // the calling frame's frame base names: the calling frame's values of
    // all of them, by the CFI rules.
    let (fb_ops, _) = match &caller.frame_base {
        Some(fb) if ops.iter().any(|o| o.op() == Op::Fbreg) => decode_all(fb, &p),
        _ => Default::default(),
    };
    let mut registers = BTreeMap::new();
    for o in ops.iter().chain(&fb_ops) {
        let regno = match (o.op(), o.operands.first()) {
            (Op::Reg(n) | Op::Breg(n), _) => u64::from(n),
            (Op::Regx | Op::Bregx | Op::RegvalType | Op::GnuRegvalType, Some(OperandValue::Unsigned(r))) => *r,
            _ => continue,
        };
        registers.insert(regno, caller_register(ctx, caller.rule(regno), regno, evaluate)?);
    }
    let mut up = ctx.clone();
    up.registers = registers;
    up.pc = caller.pc;
    up.cfa = caller.cfa;
    up.frame_base = caller.frame_base.clone();
    up.caller = caller.caller.clone();
    up.object = None;
    up.initial_stack.clear();
    if let [only] = ops.as_slice() {
        if let (Op::Reg(_) | Op::Regx, Some((_, bytes))) = (only.op(), up.registers.iter().next()) {
            let n = usize::from(ctx.address_bytes()).min(bytes.len());
            let v = int_of(&bytes[..n], ctx.target.endian);
            return Ok(gimli::Value::Generic(v));
        }
    }
    up.result_kind = Some(ResultKind::Value);
    match evaluate(block, &up) {
        Outcome::Value(v) if v.ty.encoding == TypeEncoding::Generic => Ok(gimli::Value::Generic(v.to_u128() as u64)),
        Outcome::Value(_) => Err(Outcome::Failed(Failure::Unsupported {
            what: "a typed DW_OP_entry_value result (gimli takes a generic value)".into(),
        })),
        Outcome::Location(_) => Err(missing("RequiresEntryValue")),
        other => Err(other),
    }
}

fn int_of(bytes: &[u8], endian: Endian) -> u64 {
    let mut v = [0u8; 8];
    let n = bytes.len().min(8);
    if endian == Endian::Big {
        v[8 - n..].copy_from_slice(&bytes[bytes.len() - n..]);
        u64::from_be_bytes(v)
    } else {
        v[..n].copy_from_slice(&bytes[..n]);
        u64::from_le_bytes(v)
    }
}

fn bytes_of(v: u64, size: usize, endian: Endian) -> Vec<u8> {
    let le = v.to_le_bytes();
    let mut out: Vec<u8> = (0..size).map(|i| if i < 8 { le[i] } else { 0 }).collect();
    if endian == Endian::Big {
        out.reverse();
    }
    out
}

/// Register `regno` of the calling frame under `rule`, as its bytes.
fn caller_register(ctx: &Context, rule: &RegisterRule, regno: u64, evaluate: Evaluate) -> Step<Vec<u8>> {
    let reg = ctx.target.register(regno).ok_or_else(|| missing("RequiresEntryValue"))?;
    let size = (reg.bits / 8) as usize;
    let endian = ctx.target.endian;
    let cfa = || ctx.cfa.ok_or_else(|| missing("RequiresCallFrameCfa"));
    let read_mem = |a: u64| -> Step<Vec<u8>> {
        let mut b = vec![0u8; size];
        ctx.read_memory(dwarfcheck_core::context::MemoryStorage::shared(0), a, &mut b)
            .map_err(|_| missing("RequiresMemory"))?;
        Ok(b)
    };
    let read_reg = |r: u64| -> Step<Vec<u8>> {
        let other = ctx.target.register(r).ok_or_else(|| missing("RequiresRegister"))?;
        let mut b = vec![0u8; (other.bits / 8) as usize];
        ctx.read_register(r, 0, &mut b).map_err(|_| missing("RequiresRegister"))?;
        b.resize(size, 0);
        Ok(b)
    };
    // A CFI expression runs with the CFA pushed and must give a value.
    let run = |e: &[u8]| -> Step<u64> {
        let mut c = ctx.clone();
        c.initial_stack = vec![Entry::Value(Value::from_u128(
            BaseType::generic(ctx.target.generic_bits(), endian == Endian::Big),
            u128::from(cfa()?),
        ))];
        c.object = None;
        c.result_kind = Some(ResultKind::Value);
        match evaluate(e, &c) {
            Outcome::Value(v) => Ok(v.to_u128() as u64),
            other => Err(other),
        }
    };
    match rule {
        RegisterRule::SameValue => read_reg(regno),
        RegisterRule::Undefined => Err(missing("UndefinedCallerRegister")),
        RegisterRule::Offset { offset } => read_mem(cfa()?.wrapping_add(*offset as u64)),
        RegisterRule::ValOffset { offset } => Ok(bytes_of(cfa()?.wrapping_add(*offset as u64), size, endian)),
        RegisterRule::Register { register } => read_reg(*register),
        RegisterRule::Expression { expr } => read_mem(run(expr)?),
        RegisterRule::ValExpression { expr } => Ok(bytes_of(run(expr)?, size, endian)),
        _ => Err(Outcome::Failed(Failure::Unsupported { what: format!("caller register rule {rule:?}") })),
    }
}
