//! A case's evaluation context as plain JSON data (docs/suite-format.md,
//! "Contexts"): every element of `dwarfcheck_core::context::Context`, with
//! byte strings as hex in memory order.

use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::context::{AttrForm, CallerFrame, CompUnit, Context, MachineState};
use dwarfcheck_core::encoding::hex::to_hex;
use dwarfcheck_core::target::Target;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The targets of one exported case file, by the name contexts refer to
/// them with: each distinct target once (a second, different target of
/// the same name is named `NAME#2`, and so on).
#[derive(Debug, Default)]
pub struct Targets {
    /// Name → (the target, its JSON form).
    by_name: BTreeMap<String, (Target, Value)>,
}

impl Targets {
    /// The name under which `t` is listed, listing it if it is new.
    pub fn name_of(&mut self, t: &Target) -> String {
        let mut name = t.name.clone();
        let mut n = 1;
        loop {
            match self.by_name.get(&name) {
                Some((known, _)) if known == t => return name,
                Some(_) => {
                    n += 1;
                    name = format!("{}#{n}", t.name);
                }
                None => {
                    let v = serde_json::to_value(t).unwrap_or(Value::Null);
                    self.by_name.insert(name.clone(), (t.clone(), v));
                    return name;
                }
            }
        }
    }

    /// The `targets` object of the case file: name → target.
    pub fn into_json(self) -> Value {
        Value::Object(self.by_name.into_iter().map(|(k, (_, v))| (k, v)).collect())
    }
}

/// Marks a string that stands for raw JSON text (see [`to_json`]).
pub(crate) const RAW_MARK: &str = "\u{0}raw:";

/// `v` as JSON. A value `serde_json::Value` cannot hold (a memory
/// location's `bit_addr` past 64 bits: a byte address near 2^64 is a bit
/// address near 2^67) stands as a string of [`RAW_MARK`] and its JSON
/// text, which [`super::write_json`] splices in as the exact integer.
pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or_else(|_| match serde_json::to_string(v) {
        Ok(text) => Value::String(format!("{RAW_MARK}{text}")),
        Err(_) => Value::Null,
    })
}

/// The context `ctx` as JSON (docs/suite-format.md "Contexts").
/// `address_size` (bytes) and `dwarf_version` are derived for readers
/// that only decode: the unit's address size, else the target's; the
/// unit's version, else 5.
pub fn context(ctx: &Context, targets: &mut Targets) -> Value {
    let registers: Vec<Value> = ctx
        .registers
        .iter()
        .map(|(n, b)| {
            let name = ctx.target.register(*n).map(|r| r.name.clone());
            json!({ "number": n, "name": name, "bytes": to_hex(b) })
        })
        .collect();
    let memory: Vec<Value> = ctx
        .memory
        .iter()
        .map(|m| {
            json!({ "aspace": m.aspace, "address": m.address, "bytes": to_hex(&m.bytes), "thread": m.thread, "lane": m.lane })
        })
        .collect();
    json!({
        "target": targets.name_of(&ctx.target),
        "vendor": to_json(&ctx.vendor),
        "address_size": ctx.address_bytes(),
        "dwarf_version": ctx.cu.as_ref().map_or(5, |c| c.version),
        "result_kind": ctx.result_kind.map(|k| to_json(&k)),
        "thread": ctx.thread,
        "lane": ctx.lane,
        "pc": ctx.pc,
        "cfa": ctx.cfa,
        "cfa_aspace": ctx.cfa_aspace,
        "frame_base": ctx.frame_base.as_deref().map(to_hex),
        "object": ctx.object.as_ref().map(to_json),
        "initial_stack": ctx.initial_stack.iter().map(to_json).collect::<Vec<_>>(),
        "tls_base": ctx.tls_base,
        "registers": registers,
        "memory": memory,
        "synthetic": ctx.synthetic,
        "cu": ctx.cu.as_ref().map(unit),
        "caller": ctx.caller.as_deref().map(caller),
        "cfi": ctx.cfi.as_deref().map(|s| section(s, targets)),
        "budgets": to_json(&ctx.budgets),
    })
}

/// An attribute value's form (docs/suite-format.md "Forms").
pub fn form(f: &AttrForm) -> Value {
    match f {
        AttrForm::Exprloc(e) => json!({ "exprloc": to_hex(e) }),
        AttrForm::LocList { offset } => json!({ "loclist": offset }),
        AttrForm::LocListX { index } => json!({ "loclistx": index }),
        AttrForm::Constant(c) => json!({ "constant": c }),
    }
}

/// The current compilation unit: header facts, sections as hex, base
/// types and DIEs as arrays sorted by offset.
fn unit(cu: &CompUnit) -> Value {
    let base_types: Vec<Value> =
        cu.base_types.iter().map(|(o, t)| json!({ "offset": o, "type": to_json(t) })).collect();
    let dies: Vec<Value> = cu
        .dies
        .iter()
        .map(|(o, d)| {
            json!({
                "offset": o,
                "location": d.location.as_ref().map(form),
                "const_value": d.const_value.as_deref().map(to_hex),
                "byte_size": d.byte_size,
            })
        })
        .collect();
    json!({
        "version": cu.version,
        "format": to_json(&cu.format),
        "address_size": cu.address_size,
        "offset": cu.offset,
        "addr_base": cu.addr_base,
        "debug_addr": to_hex(&cu.debug_addr),
        "base_types": base_types,
        "dies": dies,
        "debug_loclists": to_hex(&cu.debug_loclists),
        "loclists_base": cu.loclists_base,
        "debug_loc": to_hex(&cu.debug_loc),
        "base_address": cu.base_address,
    })
}

/// A calling frame and, nested, the frames that called it. Nesting is
/// bounded by the case loader (a case file's own nesting limit).
fn caller(f: &CallerFrame) -> Value {
    let rules: Vec<Value> = f.rules.iter().map(|(r, rule)| json!({ "register": r, "rule": to_json(rule) })).collect();
    json!({
        "pc": f.pc,
        "cfa": f.cfa,
        "cfa_aspace": f.cfa_aspace,
        "frame_base": f.frame_base.as_deref().map(to_hex),
        "rules": rules,
        "default_rule": to_json(&f.default_rule),
        "unwound": f.unwound,
        "caller": f.caller.as_deref().map(caller),
    })
}

/// A frame section (docs/suite-format.md "Frame sections").
pub fn section(s: &CfiSection, targets: &mut Targets) -> Value {
    json!({
        "kind": to_json(&s.kind),
        "bytes": to_hex(&s.bytes),
        "address": s.address,
        "text_base": s.text_base,
        "data_base": s.data_base,
        "target": targets.name_of(&s.target),
    })
}
