//! Expression cases from a module's `DebugDeclare`s and `DebugValue`s,
//! each in a deterministic synthetic context the way `elf` builds them for
//! real DWARF (docs/architecture.md §1).

use super::{Application, Module};
use crate::case::ExprCase;
use crate::elf::dwarf::SYNTHETIC_THREAD_LANE;
use dwarfcheck_core::context::synthetic::mix;
use dwarfcheck_core::context::{Context, Entry, ResultKind};
use dwarfcheck_core::encoding::spirv::Applies;
use dwarfcheck_core::outcome::{BaseType, Value};
use dwarfcheck_core::target::{presets, Target};
use std::sync::Arc;

/// The target of a module whose addressing model has addresses of
/// `address_bytes` bytes: `Physical64` (and a model without addresses)
/// gets the x86_64 preset; `Physical32` gets the x86_64 preset with 32-bit
/// addresses in its default address space, named `x86_64-x32` (the x32
/// ABI's model: x86-64 registers, 32-bit pointers). SPIR-V expressions use
/// no registers, so only the address size and the byte order (little, as
/// both SPIR-V producers here and the preset have it) matter.
pub fn target(address_bytes: Option<u8>) -> Target {
    let mut t = presets::x86_64();
    if address_bytes == Some(4) {
        t.name = "x86_64-x32".into();
        for a in t.address_spaces.iter_mut().filter(|a| a.number == 0) {
            a.address_bits = 32;
        }
    }
    t
}

/// The initial stack entry of `a` (rule `spirv.expr.initial-entry`): for a
/// `DebugDeclare` an 8-byte aligned generic address value in
/// `0x1000_0000..0x2000_0000` (valid under 32- and 64-bit addressing),
/// for a `DebugValue` a generic value; both a function of `seed` and the
/// instruction's result <id> only.
pub fn initial_entry(a: &Application, seed: u64, target: &Target) -> Entry {
    let bits = target.generic_bits();
    let ty = BaseType::generic(bits, target.endian == dwarfcheck_core::target::Endian::Big);
    let h = mix(seed ^ mix(u64::from(a.id)));
    let v = match a.applies {
        Applies::Declare => 0x1000_0000 | (h & 0x0fff_fff8),
        Applies::Value if bits >= 64 => h,
        Applies::Value => h & ((1u64 << bits) - 1),
    };
    Entry::Value(Value::from_u128(ty, u128::from(v)))
}

/// The origin of `a`'s case: `k.spv: DebugValue %37 #120 (word 812) 'sum'
/// line 7`.
pub fn origin(file: &str, a: &Application) -> String {
    let which = match a.applies {
        Applies::Declare => "DebugDeclare",
        Applies::Value => "DebugValue",
    };
    let mut s = format!("{file}: {which} %{} {}", a.id, a.position);
    if let Some(v) = &a.variable {
        if let Some(n) = &v.name {
            s.push_str(&format!(" '{n}'"));
        }
        if let Some(l) = v.line {
            s.push_str(&format!(" line {l}"));
        }
    }
    s
}

/// One case per `DebugDeclare`/`DebugValue` of `m` whose expression could
/// be read, in module order. `file` names the module in origins; `seed`
/// is that of the synthetic machine state (`Context::synthetic`).
pub fn cases(m: &Module, file: &str, seed: u64) -> Vec<ExprCase> {
    let target = Arc::new(target(m.address_bytes));
    m.applications
        .iter()
        .filter_map(|a| {
            let e = Arc::new(a.expression.clone()?);
            let mut c = Context::new(target.clone());
            c.result_kind = Some(ResultKind::Location);
            (c.thread, c.lane) = (Some(SYNTHETIC_THREAD_LANE.0), Some(SYNTHETIC_THREAD_LANE.1));
            c.synthetic = Some(seed);
            c.initial_stack = vec![initial_entry(a, seed, &target)];
            Some(ExprCase {
                name: format!("{file}#{}", a.position.index),
                origin: origin(file, a),
                expr: crate::spirv::lower::lower(&e).unwrap_or_default().into(),
                attribute: None,
                form: None,
                spirv: Some(e),
                ctx: Arc::new(c),
                rules: Vec::new(),
                expect: None,
            })
        })
        .collect()
}
