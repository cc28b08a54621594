//! Unit tests of the reference interpreter. Every expected outcome is
//! derived by hand from the spec text (the rule named next to it), not
//! from running the code. Expressions are raw bytes with the opcode
//! values of DWARF 5 Table 7.9 written out.

use super::{evaluate, evaluate_traced};
use dwarfcheck_core::context::{CompUnit, Context, Entry as CtxEntry, MemorySegment, ResultKind};
use dwarfcheck_core::encoding::{ate, VendorProfile};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{
    BaseType, BudgetKind, NormalLocation, Outcome, Piece, RawLocation, SingleLocation, Source, Value,
};
use dwarfcheck_core::rules::id;
use dwarfcheck_core::target::presets;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const RSP: u64 = 7;

fn ctx() -> Context {
    let mut c = Context::new(Arc::new(presets::x86_64()));
    c.registers.insert(0, 0x1122_3344_5566_7788u64.to_le_bytes().to_vec());
    c.registers.insert(RSP, 0x7ffc_0000u64.to_le_bytes().to_vec());
    c.registers.insert(6, 0x1000u64.to_le_bytes().to_vec());
    let mut xmm0 = vec![0u8; 16];
    xmm0[0] = 0x11;
    xmm0[15] = 0xff;
    c.registers.insert(17, xmm0);
    c.memory.push(MemorySegment::shared(0, 0x1000, vec![0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4]));
    let mut base_types = BTreeMap::new();
    base_types.insert(0x2a, BaseType::ate(ate::SIGNED, 32, false));
    base_types.insert(0x30, BaseType::ate(ate::UNSIGNED, 32, false));
    base_types.insert(0x31, BaseType::ate(ate::FLOAT, 64, false));
    base_types.insert(0x32, BaseType::ate(ate::SIGNED, 128, false));
    base_types.insert(0x33, BaseType::ate(ate::SIGNED, 64, false));
    base_types.insert(0x34, BaseType::ate(ate::UNSIGNED, 64, false));
    base_types.insert(0x35, BaseType::ate(ate::UNSIGNED, 128, false));
    base_types.insert(0x36, BaseType::ate(ate::FLOAT, 32, false));
    let mut debug_addr = vec![0u8; 8];
    debug_addr.extend_from_slice(&0x40_1000u64.to_le_bytes());
    c.cu = Some(CompUnit {
        version: 5,
        format: Default::default(),
        address_size: 8,
        debug_addr: debug_addr.into(),
        addr_base: 8,
        base_types,
        ..Default::default()
    });
    c
}

fn with_kind(mut c: Context, k: ResultKind) -> Context {
    c.result_kind = Some(k);
    c
}

fn g64(v: u64) -> Outcome {
    Outcome::Value(Value::from_u128(BaseType::generic(64, false), u128::from(v)))
}

fn typed(ty: BaseType, v: u128) -> Outcome {
    Outcome::Value(Value::from_u128(ty, v))
}

fn loc(src: Source) -> Outcome {
    Outcome::Location(RawLocation::simple(src).normalize())
}

fn mem(a: u64) -> Source {
    Source::memory(0, u128::from(a) * 8)
}

fn reg(regno: u64, bit_offset: u64) -> Source {
    Source::Register { regno, bit_offset }
}

fn composite(pieces: &[(u64, Source)]) -> Outcome {
    Outcome::Location(NormalLocation {
        places: vec![SingleLocation::Composite(
            pieces.iter().map(|(b, s)| Piece { bits: *b, sources: BTreeSet::from([s.clone()]) }).collect(),
        )],
    })
}

fn ill(rule: dwarfcheck_core::rules::RuleId, at: Option<u64>) -> Outcome {
    Outcome::Failed(Failure::IllFormed { rule, at })
}

fn err(rule: dwarfcheck_core::rules::RuleId, at: Option<u64>) -> Outcome {
    Outcome::Failed(Failure::EvalError { rule, at })
}

fn value(e: &[u8]) -> Outcome {
    evaluate(e, &with_kind(ctx(), ResultKind::Value))
}

fn location(e: &[u8]) -> Outcome {
    evaluate(e, &with_kind(ctx(), ResultKind::Location))
}

mod dies;
mod extension;
mod locations;
mod robustness;
mod spirv;
mod values;
