//! The notation of a case file's values: its `context:` mapping (registers
//! by name, memory, the unit, calling frames, budgets), entries, values,
//! locations and `expect:` outcomes, turned into the core's types with
//! errors that name the text to point at.

use super::schema::ContextSpec;
use crate::asm;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::context::{AttrForm, CallerFrame, CompUnit, Context, Die, Entry, MemorySegment};
use dwarfcheck_core::encoding::hex::parse_hex;
use dwarfcheck_core::encoding::{ate, VendorProfile};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, Outcome, RawLocation, RawPiece, RawSingle, Source, Value};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::{Endian, Target};
use std::collections::BTreeMap;
use std::sync::Arc;
use yaml_serde::{Mapping, Value as Yaml};

/// A conversion error before it is located: the message and the texts to
/// look for in the case's lines.
pub(super) struct Problem {
    /// What is wrong and what was expected.
    pub(super) message: String,
    /// Texts to look for in the case's lines, to locate the error.
    pub(super) near: Vec<String>,
}

pub(super) fn problem(message: impl Into<String>, near: &[&str]) -> Problem {
    Problem { message: message.into(), near: near.iter().map(|s| s.to_string()).collect() }
}

/// A conversion step's result.
pub(super) type R<T> = Result<T, Problem>;

pub(super) fn assemble(text: &str, ctx: &Context, key: &str) -> R<Vec<u8>> {
    let format = ctx.cu.as_ref().map(|c| c.format).unwrap_or_default();
    asm::expr::assemble(text, &ctx.target, &ctx.vendor, format, ctx.address_bytes()).map_err(|e| {
        let near: String = text.chars().skip(e.offset).take(12).collect();
        let near = near.split_whitespace().next().unwrap_or("").to_string();
        Problem {
            message: format!("{key} at character {} of the expression: {}", e.offset + 1, e.message),
            near: vec![near, key.to_string()],
        }
    })
}

pub(super) fn context(target: &Arc<Target>, vendor: VendorProfile, s: &ContextSpec) -> R<Context> {
    let mut ctx = Context::new(target.clone());
    ctx.vendor = vendor;
    ctx.result_kind = s.result;
    ctx.pc = s.pc;
    ctx.cfa = s.cfa;
    ctx.cfa_aspace = s.cfa_aspace;
    ctx.tls_base = s.tls_base;
    ctx.thread = s.thread;
    ctx.lane = s.lane;
    ctx.synthetic = s.synthetic;
    if let Some(cu) = &s.cu {
        let mut base_types = BTreeMap::new();
        for (die, bt) in &cu.base_types {
            let encoding = ate::from_name(&bt.encoding).ok_or_else(|| {
                problem(
                    format!("unknown base type encoding `{}`; expected a DW_ATE_* name", bt.encoding),
                    &[bt.encoding.as_str()],
                )
            })?;
            let big = match bt.endian {
                Some(e) => e == Endian::Big,
                None => target.endian == Endian::Big,
            };
            // attr.llvm-vector-size.representation: `bits` is the element's
            // size; the base type's size is the whole vector's.
            let n = bt.vector_size.unwrap_or(1);
            let total = if n == 0 { Some(bt.bits) } else { bt.bits.checked_mul(n) }
                .ok_or_else(|| problem(format!("vector of {n} x {} bits is too large", bt.bits), &["vector_size"]))?;
            let mut t = BaseType::ate(encoding, total, big);
            t.vector_size = n;
            base_types.insert(*die, t);
        }
        let debug_addr = match &cu.debug_addr {
            Some(h) => parse_hex(h).map_err(|m| problem(format!("cu.debug_addr: {m}"), &["debug_addr"]))?,
            None => Vec::new(),
        };
        let section = |h: &Option<String>, key: &str| -> R<Arc<[u8]>> {
            match h {
                Some(h) => Ok(parse_hex(h).map_err(|m| problem(format!("cu.{key}: {m}"), &[key]))?.into()),
                None => Ok(Vec::new().into()),
            }
        };
        ctx.cu = Some(CompUnit {
            version: cu.version,
            format: cu.format,
            address_size: cu.address_size.unwrap_or(target.address_bytes()),
            debug_addr: debug_addr.into(),
            addr_base: cu.addr_base,
            base_types,
            offset: cu.offset,
            dies: BTreeMap::new(),
            debug_loclists: section(&cu.debug_loclists, "debug_loclists")?,
            loclists_base: cu.loclists_base,
            debug_loc: section(&cu.debug_loc, "debug_loc")?,
            base_address: cu.base_address,
        });
        if let Some(lists) = &cu.loclists {
            if cu.debug_loclists.is_some() || cu.debug_loc.is_some() {
                return Err(problem(
                    "give `loclists:` or the hex `debug_loclists:`/`debug_loc:`, not both",
                    &["loclists"],
                ));
            }
            let u = ctx.cu.as_ref().expect("just set");
            let layout = super::loclists::Layout {
                version: u.version,
                format: u.format,
                address_size: u.address_size,
                endian: target.endian,
            };
            let mut expr =
                |t: &str| assemble(t, &ctx, "expr:").map_err(|p| super::loclists::LoclistError::Assembler(p.message));
            let a = super::loclists::assemble(lists, &layout, &mut expr)
                .map_err(|m| problem(format!("cu.{m}"), &["loclists"]))?;
            let u = ctx.cu.as_mut().expect("just set");
            if u.version >= 5 {
                u.debug_loclists = a.bytes.into();
                u.loclists_base = a.base;
            } else {
                u.debug_loc = a.bytes.into();
            }
        }
        // DIE expressions assemble with the unit in place (operand sizes).
        let mut dies = BTreeMap::new();
        for (off, d) in &cu.dies {
            dies.insert(*off, die(d, &ctx).map_err(|p| with_near(p, "dies"))?);
        }
        if let Some(u) = ctx.cu.as_mut() {
            u.dies = dies;
        }
    }
    for (k, v) in s.registers.iter() {
        let reg = register_key(k, target).map_err(|p| with_near(p, "registers"))?;
        let size = (reg.bits / 8) as usize;
        let bytes = match v {
            Yaml::String(h) => {
                let b = parse_hex(h).map_err(|m| problem(format!("register {}: {m}", reg.name), &[h.as_str()]))?;
                if b.len() != size {
                    return Err(problem(
                        format!("register {} holds {size} bytes; {} given", reg.name, b.len()),
                        &[h.as_str()],
                    ));
                }
                b
            }
            _ => {
                let n = int(v).map_err(|m| problem(format!("register {}: {m}", reg.name), &[&reg.name]))?;
                int_to_target_bytes(n, size, target.endian)
            }
        };
        ctx.registers.insert(reg.number, bytes);
    }
    for m in &s.memory {
        let bytes = parse_hex(&m.bytes).map_err(|e| problem(format!("memory.bytes: {e}"), &[m.bytes.as_str()]))?;
        ctx.memory.push(MemorySegment { aspace: m.aspace, address: m.at, bytes, thread: m.thread, lane: m.lane });
    }
    ctx.frame_base = match (&s.frame_base, &s.frame_base_bytes) {
        (Some(t), None) => Some(assemble(t, &ctx, "frame_base:")?),
        (None, Some(h)) => Some(parse_hex(h).map_err(|m| problem(format!("frame_base_bytes: {m}"), &["frame_base"]))?),
        (None, None) => None,
        _ => return Err(problem("give `frame_base` or `frame_base_bytes`, not both", &["frame_base"])),
    };
    if let Some(o) = &s.object {
        ctx.object = Some(entry(o, &ctx).map_err(|p| with_near(p, "object"))?);
    }
    let mut stack = Vec::new();
    for e in &s.initial_stack {
        stack.push(entry(e, &ctx).map_err(|p| with_near(p, "initial_stack"))?);
    }
    ctx.initial_stack = stack;
    if let Some(c) = &s.caller {
        ctx.caller = Some(Arc::new(caller(c, &ctx).map_err(|p| with_near(p, "caller"))?));
    }
    if let Some(y) = &s.cfi {
        let spec: crate::case::yaml::cfi::CfiSpec =
            reparse(y).map_err(|e| problem(format!("context.cfi: {}", super::serde_message(&e)), &["cfi:"]))?;
        let (section, _) = spec.build(target).map_err(|e| problem(format!("context.cfi: {e}"), &["cfi:"]))?;
        ctx.cfi = Some(section);
    }
    if let Some(b) = s.budgets {
        // A case may lower a budget or raise it up to its hard ceiling only.
        b.check_ceiling().map_err(|e| problem(format!("budgets: {e}"), &[&format!("{}:", e.name), e.name]))?;
        ctx.budgets = b;
    }
    Ok(ctx)
}

/// One `cu.dies` entry: exactly one location form at most.
fn die(d: &super::schema::DieSpec, ctx: &Context) -> R<Die> {
    let forms = [
        d.location.is_some(),
        d.location_bytes.is_some(),
        d.loclist.is_some(),
        d.loclistx.is_some(),
        d.constant.is_some(),
    ];
    if forms.iter().filter(|&&f| f).count() > 1 {
        return Err(problem(
            "give at most one of `location`, `location_bytes`, `loclist`, `loclistx`, `constant`",
            &["location"],
        ));
    }
    let location = if let Some(t) = &d.location {
        Some(AttrForm::Exprloc(assemble(t, ctx, "location:")?))
    } else if let Some(h) = &d.location_bytes {
        Some(AttrForm::Exprloc(parse_hex(h).map_err(|m| problem(format!("location_bytes: {m}"), &["location_bytes"]))?))
    } else if let Some(offset) = d.loclist {
        Some(AttrForm::LocList { offset })
    } else if let Some(index) = d.loclistx {
        Some(AttrForm::LocListX { index })
    } else {
        d.constant.map(AttrForm::Constant)
    };
    let const_value = match &d.const_value {
        Some(h) => Some(parse_hex(h).map_err(|m| problem(format!("const_value: {m}"), &["const_value"]))?),
        None => None,
    };
    Ok(Die { location, const_value, byte_size: d.byte_size })
}

/// The `caller:` mapping, recursively (bounded by the YAML nesting the
/// parser accepts).
fn caller(c: &super::schema::CallerSpec, ctx: &Context) -> R<CallerFrame> {
    let target = &ctx.target;
    let rule = |text: &str| {
        crate::case::yaml::cfi::parse_rule(text, target).map_err(|m| problem(format!("caller rule: {m}"), &[text]))
    };
    let mut f = CallerFrame { pc: c.pc, cfa: c.cfa, cfa_aspace: c.cfa_aspace, ..Default::default() };
    if let Some(t) = &c.frame_base {
        f.frame_base = Some(assemble(t, ctx, "frame_base:")?);
    }
    if let Some(d) = &c.default_rule {
        f.default_rule = rule(d)?;
    }
    for (k, v) in c.rules.iter() {
        let reg = register_key(k, target)?;
        let text = match v {
            Yaml::String(s) => s.clone(),
            other => yaml_text(other),
        };
        f.rules.insert(reg.number, rule(&text)?);
    }
    if let Some(up) = &c.caller {
        f.caller = Some(Arc::new(caller(up, ctx)?));
    }
    Ok(f)
}

/// The target register a mapping key names: a DWARF number or a name.
pub(super) fn register_key<'t>(k: &Yaml, target: &'t Target) -> R<&'t dwarfcheck_core::target::Register> {
    match k {
        Yaml::Number(n) => n.as_u64().and_then(|n| target.register(n)),
        Yaml::String(name) => target.register_by_name(name),
        _ => None,
    }
    .ok_or_else(|| {
        let shown = yaml_text(k);
        let hint = crate::text::suggest::did_you_mean(&shown, target.registers.iter().map(|r| &r.name));
        problem(format!("register `{shown}` is not a register of target {}{hint}", target.name), &[shown.as_str()])
    })
}

/// `p` with `key: ` before its message (unless it starts with a key
/// already) and `key` among the texts that locate it.
fn keyed(mut p: Problem, key: &str) -> Problem {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    if !p.message.starts_with(&format!("{leaf}:")) && !p.message.starts_with(&format!("{leaf}.")) {
        p.message = format!("{key}: {}", p.message);
    } else {
        p.message = format!("{}{}", &key[..key.len() - leaf.len()], p.message);
    }
    p.near.push(leaf.to_string());
    p
}

pub(super) fn with_near(mut p: Problem, key: &str) -> Problem {
    p.near.push(key.to_string());
    p
}

/// An initial-stack entry or current object.
fn entry(y: &Yaml, ctx: &Context) -> R<Entry> {
    if let Some(v) = y.as_mapping().and_then(|m| m.get("value")) {
        return Ok(Entry::Value(value(v, ctx)?));
    }
    Ok(Entry::Location(location(y, ctx)?.normalize()))
}

/// The `expect:` mapping.
pub(super) fn expectation(y: &Yaml, ctx: &Context) -> R<Outcome> {
    let m = y.as_mapping().ok_or_else(|| problem("`expect` must be a mapping", &["expect"]))?;
    let at = match m.get("at") {
        None => None,
        Some(a) => Some(int(a).map_err(|e| problem(format!("expect.at: {e}"), &["at:"]))? as u64),
    };
    // Iterate the entries rather than index by their text: a key that is not
    // a string (`1:`, `~:`) has text that does not index back.
    let entries: Vec<(String, &Yaml)> = m.iter().map(|(k, v)| (yaml_text(k), v)).filter(|(k, _)| k != "at").collect();
    if entries.len() != 1 {
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        return Err(problem(
            format!(
                "`expect` needs exactly one of value, location, ill_formed, eval_error, budget (found: {})",
                keys.join(", ")
            ),
            &["expect"],
        ));
    }
    let (key, v) = (&entries[0].0, entries[0].1);
    let rule = |v: &Yaml| -> R<RuleId> {
        let id = v.as_str().ok_or_else(|| problem("expected a rule ID", &["expect"]))?;
        let catalogue = crate::catalogue::Catalogue::get();
        if catalogue.kind(id).is_none() {
            return Err(problem(format!("expect.{key}: {}", catalogue.unknown(id)), &[id]));
        }
        Ok(RuleId::new(id))
    };
    Ok(match key.as_str() {
        "value" => Outcome::Value(value(v, ctx).map_err(|p| keyed(p, "expect"))?),
        "location" => Outcome::Location(location(v, ctx).map_err(|p| keyed(p, "expect.location"))?.normalize()),
        "ill_formed" => Outcome::Failed(Failure::IllFormed { rule: rule(v)?, at }),
        "eval_error" => Outcome::Failed(Failure::EvalError { rule: rule(v)?, at }),
        "budget" => {
            let budget = match v.as_str() {
                Some("steps") => BudgetKind::Steps,
                Some("stack") => BudgetKind::Stack,
                Some("depth") => BudgetKind::Depth,
                Some("size") => BudgetKind::Size,
                Some("frames") => BudgetKind::Frames,
                Some("memory") => BudgetKind::Memory,
                Some("work") => BudgetKind::Work,
                _ => {
                    return Err(problem(
                        "expect.budget is one of steps, stack, depth, size, frames, memory, work",
                        &["budget"],
                    ))
                }
            };
            Outcome::Failed(Failure::Budget { budget, at })
        }
        other => {
            return Err(problem(
                format!("unknown expectation `{other}`; expected value, location, ill_formed, eval_error or budget"),
                &[other],
            ))
        }
    })
}

/// A value: an integer (generic type), or `{ type, v | hex }`.
pub(super) fn value(y: &Yaml, ctx: &Context) -> R<Value> {
    let generic = ctx.generic_type();
    match y {
        Yaml::Mapping(m) => {
            let ty = match m.get("type") {
                None => generic,
                Some(t) => base_type(t, ctx)?,
            };
            match (m.get("v"), m.get("hex")) {
                (Some(v), None) => match v {
                    Yaml::Number(n) if n.is_f64() => float_value(ty, n.as_f64().unwrap_or(0.0)),
                    _ => Ok(Value::from_u128(ty, int(v).map_err(|e| problem(format!("v: {e}"), &["v:"]))? as u128)),
                },
                (None, Some(h)) => {
                    let h = h.as_str().ok_or_else(|| problem("`hex` is a string of hex digits", &["hex"]))?;
                    let mut b = parse_hex(h).map_err(|e| problem(format!("hex: {e}"), &[h]))?;
                    b.reverse();
                    if b.len() != ty.bytes() {
                        return Err(problem(format!("type {ty} takes {} bytes; {} given", ty.bytes(), b.len()), &[h]));
                    }
                    Ok(Value { ty, bytes: b })
                }
                _ => Err(problem("a typed value has exactly one of `v:` or `hex:`", &["value"])),
            }
        }
        _ => Ok(Value::from_u128(generic, int(y).map_err(|e| problem(format!("value: {e}"), &["value"]))? as u128)),
    }
}

fn float_value(ty: BaseType, f: f64) -> R<Value> {
    match ty.bits {
        32 => Ok(Value::from_u128(ty, u128::from((f as f32).to_bits()))),
        64 => Ok(Value::from_u128(ty, u128::from(f.to_bits()))),
        n => {
            Err(problem(format!("a decimal `v:` needs a 32- or 64-bit float type, not {n} bits; use `hex:`"), &["v:"]))
        }
    }
}

/// `generic`, `<ate-name><bits>` (e.g. `signed32`, `float64`), or a DIE
/// offset of the unit's base types.
fn base_type(y: &Yaml, ctx: &Context) -> R<BaseType> {
    let big = ctx.target.endian == Endian::Big;
    if let Some(die) = y.as_u64() {
        return ctx.base_type(die).map_err(|_| problem(format!("no base type DIE at unit offset {die:#x}"), &["type"]));
    }
    let s = y.as_str().ok_or_else(|| problem("a type is `generic`, e.g. `signed32`, or a DIE offset", &["type"]))?;
    if s == "generic" {
        return Ok(ctx.generic_type());
    }
    let digits = s.trim_start_matches(|c: char| !c.is_ascii_digit());
    let name = &s[..s.len() - digits.len()];
    let bits: u32 =
        digits.parse().map_err(|_| problem(format!("type `{s}` lacks a bit size, e.g. `signed32`"), &[s]))?;
    let enc = ate::from_name(&format!("DW_ATE_{name}"))
        .ok_or_else(|| problem(format!("unknown encoding `{name}` in type `{s}`; expected a DW_ATE_ name"), &[s]))?;
    Ok(BaseType::ate(enc, bits, big))
}

/// A location description mapping.
pub(super) fn location(y: &Yaml, ctx: &Context) -> R<RawLocation> {
    let m = y.as_mapping().ok_or_else(|| {
        problem(format!("a location is a mapping such as `{{ register: 0 }}`, not `{}`", yaml_text(y)), &[])
    })?;
    if let Some(alts) = m.get("any_of") {
        let seq = alts.as_sequence().ok_or_else(|| problem("`any_of` is a list of locations", &["any_of"]))?;
        let mut singles = Vec::new();
        for a in seq {
            singles.extend(location(a, ctx)?.singles);
        }
        return Ok(RawLocation { singles });
    }
    if let Some(parts) = m.get("composite") {
        let seq = parts.as_sequence().ok_or_else(|| problem("`composite` is a list of parts", &["composite"]))?;
        let mut pieces = Vec::new();
        for p in seq {
            let pm = p.as_mapping().ok_or_else(|| problem("a part is a mapping with `bits:`", &["composite"]))?;
            let bits = pm.get("bits").ok_or_else(|| problem("each part gives its size in `bits:`", &["composite"]))?;
            let bits = int(bits).map_err(|e| problem(format!("bits: {e}"), &["bits"]))? as u64;
            let mut rest = pm.clone();
            rest.remove("bits");
            pieces.push(RawPiece { bits, location: location(&Yaml::Mapping(rest), ctx)? });
        }
        let bit_offset = opt_int(m, "bit_offset")?;
        return Ok(RawLocation { singles: vec![RawSingle::Composite { pieces, bit_offset }] });
    }
    Ok(RawLocation::simple(source(m, ctx)?))
}

fn opt_int(m: &Mapping, key: &str) -> R<u64> {
    match m.get(key) {
        None => Ok(0),
        Some(v) => Ok(int(v).map_err(|e| problem(format!("{key}: {e}"), &[key]))? as u64),
    }
}

fn source(m: &Mapping, ctx: &Context) -> R<Source> {
    let bit_offset = opt_int(m, "bit_offset")?;
    if let Some(r) = m.get("register") {
        let reg = match r {
            Yaml::String(n) => ctx.target.register_by_name(n).map(|r| r.number),
            _ => int(r).ok().map(|n| n as u64),
        }
        .ok_or_else(|| problem(format!("unknown register `{}`", yaml_text(r)), &["register"]))?;
        return Ok(Source::Register { regno: reg, bit_offset });
    }
    if let Some(a) = m.get("memory") {
        let addr = int(a).map_err(|e| problem(format!("memory: {e}"), &["memory"]))? as u64;
        let aspace = opt_int(m, "aspace")?;
        let bound = |key: &str| -> R<Option<u64>> {
            m.get(key).map(|v| int(v).map(|n| n as u64).map_err(|e| problem(format!("{key}: {e}"), &[key]))).transpose()
        };
        let (thread, lane) = (bound("thread")?, bound("lane")?.map(|l| l as u32));
        let bit_addr = u128::from(addr) * 8 + u128::from(bit_offset);
        return Ok(Source::Memory { aspace, bit_addr, thread, lane });
    }
    if let Some(h) = m.get("implicit") {
        let h = h.as_str().ok_or_else(|| problem("`implicit` is a string of hex bytes", &["implicit"]))?;
        return Ok(Source::Implicit {
            bytes: parse_hex(h).map_err(|e| problem(format!("implicit: {e}"), &[h]))?,
            bit_offset,
        });
    }
    if m.get("undefined").is_some() {
        return Ok(Source::Undefined);
    }
    if let Some(p) = m.get("implicit_pointer") {
        let pm =
            p.as_mapping().ok_or_else(|| problem("`implicit_pointer` is `{ die, offset }`", &["implicit_pointer"]))?;
        let die = pm.get("die").ok_or_else(|| problem("implicit_pointer needs `die`", &["implicit_pointer"]))?;
        let die = int(die).map_err(|e| problem(format!("die: {e}"), &["die"]))? as u64;
        let byte_displacement = match pm.get("offset") {
            Some(o) => int(o).map_err(|e| problem(format!("offset: {e}"), &["offset"]))? as i64,
            None => 0,
        };
        let aspace = match pm.get("aspace") {
            Some(a) => Some(int(a).map_err(|e| problem(format!("aspace: {e}"), &["aspace"]))? as u64),
            None => None,
        };
        return Ok(Source::ImplicitPointer { die, aspace, byte_displacement, bit_offset });
    }
    let keys: Vec<String> = m.keys().map(yaml_text).collect();
    Err(problem(
        format!(
            "unknown location `{{{}}}`; expected register, memory, implicit, undefined, implicit_pointer, composite or any_of",
            keys.join(", ")
        ),
        &[],
    ))
}

/// An integer scalar: YAML int (decimal, 0x, 0o, 0b, negative) or a string
/// holding one.
///
/// Errors: [`NotAnInteger`] with the text found.
pub(super) fn int(y: &Yaml) -> Result<i128, NotAnInteger> {
    match y {
        Yaml::Number(n) => {
            if let Some(u) = n.as_u64() {
                Ok(i128::from(u))
            } else if let Some(i) = n.as_i64() {
                Ok(i128::from(i))
            } else {
                Err(NotAnInteger(n.to_string()))
            }
        }
        Yaml::String(s) => {
            let (neg, body) = match s.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, s.as_str()),
            };
            let v =
                if let Some(h) = body.strip_prefix("0x") { u128::from_str_radix(h, 16) } else { body.parse::<u128>() }
                    .map_err(|_| NotAnInteger(s.clone()))?;
            let v = v as i128;
            Ok(if neg { -v } else { v })
        }
        other => Err(NotAnInteger(yaml_text(other))),
    }
}

/// A scalar that is not an integer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected an integer of at most 128 bits (decimal, 0x hex, or negative), found `{0}`")]
pub(super) struct NotAnInteger(String);

/// `n` as `size` bytes in target byte order (two's complement, truncated).
pub(super) fn int_to_target_bytes(n: i128, size: usize, endian: Endian) -> Vec<u8> {
    let le = n.to_le_bytes();
    let mut b: Vec<u8> = (0..size)
        .map(|i| {
            if i < 16 {
                le[i]
            } else if n < 0 {
                0xff
            } else {
                0
            }
        })
        .collect();
    if endian == Endian::Big {
        b.reverse();
    }
    b
}

fn yaml_text(y: &Yaml) -> String {
    match y {
        Yaml::String(s) => s.clone(),
        Yaml::Number(n) => n.to_string(),
        Yaml::Bool(b) => b.to_string(),
        other => yaml_serde::to_string(other).unwrap_or_default().trim().to_string(),
    }
}

/// Deserializes a sub-tree through its YAML text, so that plain scalars
/// such as register numbers used as mapping keys read as strings, exactly as
/// they would when the whole file is read.
pub(super) fn reparse<T: serde::de::DeserializeOwned>(y: &Yaml) -> Result<T, yaml_serde::Error> {
    let text = yaml_serde::to_string(y)?;
    yaml_serde::from_str(&text)
}
