//! The `unwind:` part of a CFI case: the machine state to unwind from and
//! the expected steps (`dwarfcheck_core::outcome::unwind`).

use super::context::{context, expectation, int, int_to_target_bytes, location, problem, register_key, Problem};
use super::schema::{StepSpec, UnwindSpec};
use crate::case::UnwindCase;
use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::outcome::unwind::{CallerRegister, Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::target::Target;
use std::collections::BTreeMap;
use std::sync::Arc;
use yaml_serde::Value as Yaml;

type R<T> = Result<T, Problem>;

/// Converts `unwind:`; `fde_offsets` are the section offsets of `cfi.fde`
/// then `cfi.fdes` (what a step's `fde:` index names).
pub(super) fn unwind_case(
    target: &Arc<Target>,
    vendor: VendorProfile,
    section: &Arc<CfiSection>,
    fde_offsets: &[u64],
    u: &UnwindSpec,
) -> R<UnwindCase> {
    let ctx = context(target, vendor, &u.context)?;
    if ctx.pc.is_none() {
        return Err(problem("unwind.context needs `pc:` (the top frame's program location)", &["unwind:"]));
    }
    if ctx.caller.is_some() || ctx.cfa.is_some() || ctx.cfi.is_some() {
        return Err(problem(
            "unwind.context gives machine state only: the CFA and calling frames come from the case's `cfi:`",
            &["unwind:"],
        ));
    }
    let mut ctx = ctx;
    ctx.cfi = Some(section.clone());
    let expect = match &u.expect {
        None => None,
        Some(e) => {
            let mut steps = Vec::new();
            for (i, s) in e.steps.iter().enumerate() {
                steps.push(step(s, i, &ctx, fde_offsets)?);
            }
            Some(Unwind { steps, end: end(&e.end, &ctx)? })
        }
    };
    Ok(UnwindCase { ctx: Arc::new(ctx), limit: u.frames, expect })
}

fn step(s: &StepSpec, i: usize, ctx: &dwarfcheck_core::context::Context, fde_offsets: &[u64]) -> R<Step> {
    let fde_offset = *fde_offsets.get(s.fde).ok_or_else(|| {
        problem(format!("step {i}: fde: {} names no FDE (0 = cfi.fde, 1.. = cfi.fdes)", s.fde), &["fde:"])
    })?;
    let lookup = s.lookup.unwrap_or(if i == 0 { s.pc } else { s.pc.wrapping_sub(1) });
    let cfa = location(&s.cfa, ctx)?.normalize();
    let mut registers = BTreeMap::new();
    for (k, v) in s.registers.iter() {
        let reg = register_key(k, &ctx.target)?;
        registers.insert(reg.number, caller_register(v, reg, ctx)?);
    }
    let caller_pc = match &s.caller_pc {
        Yaml::String(t) if t == "none" => None,
        y => Some(int(y).map_err(|e| problem(format!("caller_pc: {e}"), &["caller_pc"]))? as u64),
    };
    Ok(Step { pc: s.pc, lookup, fde_offset, cfa, registers, caller_pc })
}

/// `{ location: <location>, bytes: "hex" | value: N }`, or an error
/// expectation (`{ ill_formed: rule, at: N }` ...).
fn caller_register(
    v: &Yaml,
    reg: &dwarfcheck_core::target::Register,
    ctx: &dwarfcheck_core::context::Context,
) -> R<CallerRegister> {
    let m = v.as_mapping().ok_or_else(|| problem("a caller register is a mapping", &[reg.name.as_str()]))?;
    let Some(l) = m.get("location") else {
        return Ok(CallerRegister { location: expectation(v, ctx)?, bytes: None });
    };
    let location = Outcome::Location(location(l, ctx)?.normalize());
    let size = (reg.bits / 8) as usize;
    let bytes = match (m.get("bytes"), m.get("value")) {
        (Some(Yaml::String(h)), None) => {
            let b =
                dwarfcheck_core::encoding::hex::parse_hex(h).map_err(|e| problem(format!("bytes: {e}"), &["bytes"]))?;
            if b.len() != size {
                return Err(problem(format!("bytes: register {} has {size} bytes", reg.name), &["bytes"]));
            }
            Some(b)
        }
        (None, Some(n)) => {
            let n = int(n).map_err(|e| problem(format!("value: {e}"), &["value"]))?;
            Some(int_to_target_bytes(n, size, ctx.target.endian))
        }
        (None, None) => None,
        _ => return Err(problem("give at most one of `bytes:` (hex) and `value:`", &["bytes"])),
    };
    Ok(CallerRegister { location, bytes })
}

fn end(y: &Yaml, ctx: &dwarfcheck_core::context::Context) -> R<UnwindEnd> {
    Ok(match y {
        Yaml::String(s) if s == "base" => UnwindEnd::Base,
        Yaml::String(s) if s == "limit" => UnwindEnd::Limit,
        Yaml::Mapping(_) => UnwindEnd::Fault { outcome: expectation(y, ctx)? },
        _ => return Err(problem("end: is `base`, `limit`, or `{ ill_formed | eval_error | budget: .. }`", &["end:"])),
    })
}
