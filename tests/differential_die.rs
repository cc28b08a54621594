//! Differential test for the DIE-backed parts: the fast evaluator must give
//! exactly the reference interpreter's outcome (rule IDs and offsets
//! included) on generated units with DIEs (calls, implicit pointer
//! targets), location lists (`.debug_loclists` and `.debug_loc`), caller
//! frames with CFI register rules, and attribute contexts.
//! `DIFF_CASES=N` sets the number of generated cases (default 2000).

use dwarfcheck::case::ExprCase;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::context::{
    AttrForm, Attribute, CallerFrame, CompUnit, Context, Die, Entry, MemorySegment, ResultKind,
};
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, NormalLocation, Outcome, SingleLocation, Source, Value};
use dwarfcheck_core::target::presets;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `.debug_info` offset of the unit; DIEs live at `UNIT + 0x10 * (1..=8)`.
const UNIT: u64 = 0x100;
/// Unit base address (when the unit has one).
const BASE: u64 = 0x40_0000;

thread_local! {
    /// Whether the case being built is for a big-endian target.
    static BIG: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The low `n` bytes of `v` in the target's byte order.
fn ne(v: u128, n: usize) -> Vec<u8> {
    if BIG.with(|b| b.get()) {
        v.to_be_bytes()[16 - n..].to_vec()
    } else {
        v.to_le_bytes()[..n].to_vec()
    }
}

/// Everything the generator chooses.
#[derive(Debug, Clone)]
struct Gen {
    expr: Vec<Op>,
    dies: Vec<(u8, Vec<Op>)>,
    lists: Vec<(u8, u64, u64, Vec<Op>)>,
    v4: bool,
    dwarf64: bool,
    base: bool,
    pc: u8,
    caller: Option<Caller>,
    result: u8,
    attr: u8,
    form: u8,
    initial: u8,
    object: bool,
    depth: u8,
    amdgpu: bool,
    be: bool,
}

/// A caller frame: (register, rule kind, offset) triples, whether it has a
/// caller of its own, whether its default rule is `same value`.
type Caller = (Vec<(u64, u8, i64)>, bool, bool);

/// One generated operation: a choice and two raw numbers.
type Op = (u8, u64, u64);

fn op() -> impl Strategy<Value = Op> {
    (any::<u8>(), any::<u64>(), any::<u64>())
}

fn ops(max: usize) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 0..max)
}

fn gen() -> impl Strategy<Value = Gen> {
    let dies = prop::collection::vec((any::<u8>(), ops(4)), 8);
    let lists = prop::collection::vec((any::<u8>(), 0u64..0x40, 0u64..0x40, ops(3)), 0..5);
    let regno = prop_oneof![6 => 0u64..8, 1 => Just(16u64), 1 => Just(17u64), 1 => 32u64..36];
    let offset = prop_oneof![8 => -24i64..24, 1 => Just(-0x2000i64), 1 => Just(i64::MAX / 8)];
    let rules = prop::collection::vec((regno, any::<u8>(), offset), 0..6);
    let caller = prop::option::weighted(0.7, (rules, any::<bool>(), any::<bool>()));
    (
        (ops(7), dies, lists, prop::bool::weighted(0.25), any::<bool>(), any::<bool>(), any::<u8>()),
        (caller, 0u8..3, any::<u8>(), any::<u8>(), 0u8..4, any::<bool>(), 0u8..5, 0u8..8),
    )
        .prop_map(
            |((expr, dies, lists, v4, dwarf64, base, pc), (caller, result, attr, form, initial, object, depth, t))| {
                Gen {
                    expr,
                    dies,
                    lists,
                    v4,
                    dwarf64,
                    base,
                    pc,
                    caller,
                    result,
                    attr,
                    form,
                    initial,
                    object,
                    depth,
                    amdgpu: t < 2,
                    be: t == 2,
                }
            },
        )
}

/// Emits one operation of the DIE-backed kind mix (plus a few plain ones).
fn emit(out: &mut Vec<u8>, &(c, a, b): &Op, obytes: usize) {
    let die_rel = 0x10 * (1 + a % 9); // 0x90 names no DIE
    let off = |out: &mut Vec<u8>, v: u64| out.extend(ne(v.into(), obytes));
    match c % 24 {
        0 => out.push(0x30 + (a % 32) as u8),
        1 if b % 3 == 0 => {
            out.push(0x90); // regx: 16, 17 and the first AMDGPU SGPRs
            write_uleb(out, [16, 17, 32, 33][(a % 4) as usize]);
        }
        1 => out.push(0x50 + (a % 8) as u8),
        2 => {
            out.push(0x70 + (a % 8) as u8);
            write_sleb(out, (b % 32) as i64 - 8);
        }
        3 => out.push([0x06, 0x12, 0x13, 0x16, 0x22, 0x9f][(a % 6) as usize]),
        4 => {
            out.push(0x98);
            out.extend(ne(die_rel.into(), 2));
        }
        5 => {
            out.push(0x99);
            out.extend(ne(die_rel.into(), 4));
        }
        6 => {
            out.push(0x9a);
            off(out, UNIT + die_rel);
        }
        7 | 8 => {
            out.push(if c % 24 == 7 { 0xa0 } else { 0xf2 });
            off(out, UNIT + die_rel);
            write_sleb(out, (b % 24) as i64 - 8);
            // Often read it whole (an implicit pointer value), sometimes a part.
            match b % 4 {
                0 | 1 => out.push(0x06),
                2 => out.extend([0x94, 4]),
                _ => {}
            }
        }
        9 => {
            if b % 2 == 0 {
                out.push(0x30 + (a % 6) as u8);
            }
            out.push(0xe9); // DW_OP_LLVM_aspace_implicit_pointer
            off(out, UNIT + die_rel);
            write_sleb(out, (b % 8) as i64);
        }
        10 | 11 => {
            // entry_value with a small block
            let mut blk = Vec::new();
            match b % 10 {
                0 => blk.push(0x50 + (a % 8) as u8),
                1 => {
                    blk.push(0x70 + (a % 8) as u8);
                    write_sleb(&mut blk, (b % 16) as i64);
                    blk.push(0x06);
                }
                2 => {
                    blk.push(0x70 + (a % 8) as u8);
                    blk.push(0x00);
                }
                3 => blk.push(0x30 + (a % 4) as u8),
                4 if a % 2 == 0 => blk.extend([0x90, 17]),
                5 => blk.extend([0xa3, 0x01, 0x50 + (a % 8) as u8]), // an entry value of the caller's caller
                6 => blk.extend([0xe6, (a % 8) as u8, 0x06]),        // call_frame_entry_reg R; deref
                7 => {
                    blk.push(0x98);
                    blk.extend(ne(die_rel.into(), 2));
                }
                8 => blk.extend([0xa5, (a % 8) as u8, 0x00]), // regval_type R, generic
                9 => blk.extend([0x91, (a % 16) as u8, 0x06]), // fbreg N; deref
                _ => {}
            }
            out.push(if a % 3 == 0 { 0xf3 } else { 0xa3 });
            write_uleb(out, blk.len() as u64);
            out.extend(blk);
        }
        12 => {
            out.push(0xe6); // DW_OP_LLVM_call_frame_entry_reg
            write_uleb(out, a % 9);
        }
        13 => {
            out.push(0x93);
            write_uleb(out, [1, 2, 4, 8][(a % 4) as usize]);
        }
        14 => {
            out.push(0x94);
            out.push([1, 2, 4, 8][(a % 4) as usize]);
        }
        15 => {
            out.push(0x23);
            write_uleb(out, a % 16);
        }
        16 => out.push(0x9c),
        17 => {
            out.push(0x91);
            write_sleb(out, (a % 16) as i64);
        }
        18 => {
            out.push(0x03);
            out.extend(ne((0x1000 + a % 0x40).into(), 8));
        }
        19 => {
            out.push(0x0a);
            out.extend(ne((0x1000 + a % 0x40).into(), 2));
        }
        20 => out.push([0x00, 0x01, 0x02, 0x04, 0x05, 0x07, 0xff][(a % 7) as usize]), // not operations
        21 => {
            out.push(0x9e);
            write_uleb(out, 2);
            out.extend([a as u8, b as u8]);
        }
        22 => {
            out.push(0x92);
            write_uleb(out, a % 9);
            write_sleb(out, (b % 8) as i64);
        }
        23 if b % 2 == 0 => {
            // typed operations on the unit's base types (vectors, and a
            // vector size of 0 at 0x38)
            let die = [0x20u8, 0x28, 0x30, 0x38, 0x00, 0x44][(a % 6) as usize];
            match (b / 2) % 4 {
                0 => out.extend([0xa5, (a % 8) as u8, die]), // regval_type
                1 => out.extend([0xa6, [4, 8, 16, 16, 8, 3][(a % 6) as usize], die]), // deref_type
                2 => out.extend([0xa8, die]),                // convert
                _ => {
                    out.extend([0xa4, die, 16]); // const_type with a 16-byte block
                    out.extend((0..16).map(|i| (a >> (i % 8)) as u8));
                }
            }
        }
        _ => out.push(0x96),
    }
}

fn bytes(ops: &[Op], obytes: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for o in ops {
        emit(&mut v, o, obytes);
    }
    v
}

/// The generated location list sections: `.debug_loclists` (offsets table
/// of two entries at 0, lists after it) or `.debug_loc`; returns the
/// section and the offsets of list 0 and list 1.
fn sections(g: &Gen, obytes: usize) -> (Vec<u8>, u64, u64) {
    let mut sec = Vec::new();
    if g.v4 {
        let mut starts = [0u64; 2];
        for (half, st) in starts.iter_mut().enumerate() {
            *st = sec.len() as u64;
            for (i, (k, lo, len, e)) in g.lists.iter().enumerate() {
                if i % 2 != half {
                    continue;
                }
                let e = bytes(e, obytes);
                if k % 7 == 0 {
                    sec.extend(ne(u64::MAX.into(), 8));
                    sec.extend(ne((BASE + lo).into(), 8));
                    continue;
                }
                sec.extend(ne((*lo).into(), 8));
                sec.extend(ne((lo + len).into(), 8));
                sec.extend(ne(e.len() as u128, 2));
                sec.extend(e);
            }
            if g.lists.len() % 5 != 4 || half == 0 {
                sec.extend(&[0u8; 16]);
            }
        }
        return (sec, starts[0], starts[1]);
    }
    // loclists_base = 16: offsets table of two 4/8-byte entries before it is
    // unused; the table itself starts at 16.
    let table = 16usize;
    sec.resize(table + 2 * obytes, 0);
    let mut starts = [0u64; 2];
    for (half, st) in starts.iter_mut().enumerate() {
        *st = sec.len() as u64;
        for (i, (k, lo, len, e)) in g.lists.iter().enumerate() {
            if i % 2 != half {
                continue;
            }
            let e = bytes(e, obytes);
            match k % 11 {
                0 => {
                    sec.push(0x04);
                    write_uleb(&mut sec, *lo);
                    write_uleb(&mut sec, lo + len);
                }
                1 => {
                    sec.push(0x06);
                    sec.extend(ne((BASE + lo).into(), 8));
                    continue;
                }
                2 => {
                    sec.push(0x01);
                    write_uleb(&mut sec, lo % 3);
                    continue;
                }
                3 => {
                    sec.push(0x02);
                    write_uleb(&mut sec, lo % 3);
                    write_uleb(&mut sec, len % 3);
                }
                4 => {
                    sec.push(0x03);
                    write_uleb(&mut sec, lo % 3);
                    write_uleb(&mut sec, *len);
                }
                5 => sec.push(0x05),
                6 => {
                    sec.push(0x07);
                    sec.extend(ne((BASE + lo).into(), 8));
                    sec.extend(ne((BASE + lo + len).into(), 8));
                }
                7 => {
                    sec.push(0x08);
                    sec.extend(ne((BASE + lo).into(), 8));
                    write_uleb(&mut sec, *len);
                }
                8 => {
                    sec.push(0x09 + (lo % 3) as u8); // not an entry kind
                    continue;
                }
                _ => {
                    sec.push(0x04);
                    write_uleb(&mut sec, *lo);
                    write_uleb(&mut sec, lo + len);
                }
            }
            write_uleb(&mut sec, e.len() as u64);
            sec.extend(e);
        }
        if g.lists.len() % 5 != 4 || half == 0 {
            sec.push(0x00);
        }
    }
    for (i, st) in starts.iter().enumerate() {
        let rel = st - table as u64;
        sec[table + i * obytes..table + (i + 1) * obytes].copy_from_slice(&ne(rel.into(), obytes));
    }
    (sec, starts[0], starts[1])
}

fn mem_loc(a: u64) -> NormalLocation {
    NormalLocation { places: vec![SingleLocation::Simple(Source::memory(0, u128::from(a) * 8))] }
}

fn rule(kind: u8, n: i64, r: u64) -> RegisterRule {
    match kind % 9 {
        0 => RegisterRule::Undefined,
        1 => RegisterRule::SameValue,
        2 | 3 => RegisterRule::Offset { offset: n },
        4 => RegisterRule::ValOffset { offset: n },
        5 => RegisterRule::Register { register: (r + 1) % 8 },
        6 => RegisterRule::Expression { expr: vec![0x23, (n & 0x1f) as u8] }, // plus_uconst
        7 => RegisterRule::ValExpression { expr: vec![0x06] },                // deref
        _ => RegisterRule::Register { register: 17 },                         // xmm0: size mismatch
    }
}

fn build(g: &Gen) -> ExprCase {
    BIG.with(|b| b.set(g.be));
    let target = if g.amdgpu {
        presets::amdgpu_gfx90a()
    } else if g.be {
        let mut t = presets::aarch64();
        t.endian = dwarfcheck_core::target::Endian::Big;
        t
    } else {
        presets::x86_64()
    };
    let mut c = Context::new(Arc::new(target));
    c.vendor = VendorProfile::hetero_2020();
    let obytes = if g.dwarf64 { 8 } else { 4 };
    for r in 0..8u64 {
        c.registers.insert(r, ne((0x1000 + 8 * r).into(), 8));
    }
    if g.amdgpu {
        c.registers.clear();
        for r in 32..40u64 {
            c.registers.insert(r, ne((0x1000 + 4 * r).into(), 4));
        }
    }
    c.registers.insert(16, ne(0x40_0010, 8));
    if g.amdgpu {
        c.registers.insert(17, ne(u64::MAX.into(), 8)); // exec mask
    } else {
        c.registers.insert(17, ne(0x1010u128 | 0x1111 << 64, if g.be { 8 } else { 16 }));
    }
    c.memory.push(MemorySegment::shared(0, 0x1000, (0..0x80u8).map(|i| i.wrapping_mul(29)).collect()));
    c.cfa = Some(0x1040);
    c.result_kind = [None, Some(ResultKind::Location), Some(ResultKind::Value)][g.result as usize];
    let (sec, l0, l1) = sections(g, obytes);
    let mut dies = BTreeMap::new();
    for (i, (k, e)) in g.dies.iter().enumerate() {
        let off = UNIT + 0x10 * (i as u64 + 1);
        let e = bytes(e, obytes);
        let die = match k % 8 {
            0..=2 => Die { location: Some(AttrForm::Exprloc(e)), ..Default::default() },
            3 => Die {
                location: Some(AttrForm::LocList { offset: if k % 2 == 0 { l0 } else { l1 } }),
                ..Default::default()
            },
            4 => Die { location: Some(AttrForm::LocListX { index: u64::from(k % 3) }), ..Default::default() },
            5 => {
                Die { const_value: Some(e.iter().copied().take(8).collect()), byte_size: Some(8), ..Default::default() }
            }
            6 => Die::default(),
            _ => Die { location: Some(AttrForm::Exprloc(vec![0x98, 0x10 * (1 + k % 8), 0])), ..Default::default() },
        };
        dies.insert(off, die);
    }
    let mut debug_addr = Vec::new();
    for v in [BASE + 4, BASE + 0x20, 0x1000] {
        debug_addr.extend(ne(v.into(), 8));
    }
    c.cu = Some(CompUnit {
        version: if g.v4 { 4 } else { 5 },
        format: if g.dwarf64 { Format::Dwarf64 } else { Format::Dwarf32 },
        address_size: 8,
        debug_addr: debug_addr.into(),
        offset: UNIT,
        dies,
        debug_loclists: if g.v4 { Vec::new().into() } else { sec.clone().into() },
        loclists_base: 16,
        debug_loc: if g.v4 { sec.into() } else { Vec::new().into() },
        base_address: g.base.then_some(BASE),
        base_types: BTreeMap::from([
            (0x20, BaseType::ate(5, 32, g.be)),
            (0x28, BaseType::ate(4, 64, g.be)),
            (0x30, BaseType { vector_size: 4, ..BaseType::ate(5, 128, g.be) }),
            (0x38, BaseType { vector_size: 0, ..BaseType::ate(5, 32, g.be) }),
        ]),
        ..Default::default()
    });
    c.pc = match g.pc % 4 {
        0 => None,
        _ => Some(BASE + u64::from(g.pc % 0x48)),
    };
    if let Some((rules, deeper, same_default)) = &g.caller {
        let mut rs = BTreeMap::new();
        for (r, k, n) in rules {
            rs.insert(*r, rule(*k, *n, *r));
        }
        let default_rule = if *same_default { RegisterRule::SameValue } else { RegisterRule::Undefined };
        let up = deeper.then(|| {
            Arc::new(CallerFrame {
                pc: Some(BASE + 0x30),
                cfa: Some(0x1060),
                rules: BTreeMap::from([(3, RegisterRule::Offset { offset: -8 }), (6, RegisterRule::SameValue)]),
                default_rule: RegisterRule::SameValue,
                ..Default::default()
            })
        });
        c.caller = Some(Arc::new(CallerFrame {
            pc: Some(BASE + 0x10),
            cfa: Some(0x1050),
            cfa_aspace: 0,
            unwound: false,
            frame_base: Some(match rules.len() % 4 {
                0 => vec![0x9c],
                1 => vec![0x56],
                2 => vec![0x76, 0x08],
                _ => vec![0x90, 0x03],
            }),
            rules: rs,
            default_rule,
            caller: up,
        }));
    }
    let gty = c.generic_type();
    c.initial_stack = match g.initial {
        0 => vec![],
        1 => vec![Entry::Location(mem_loc(0x1008))],
        2 => vec![Entry::Value(Value::from_u128(gty, 4)), Entry::Location(mem_loc(0x1010))],
        _ => vec![Entry::Value(Value::from_u128(BaseType::ate(5, 32, false), 3))],
    };
    if g.object {
        c.object = Some(Entry::Location(mem_loc(0x1020)));
    }
    c.budgets.depth = [1, 2, 3, 16, 16][g.depth as usize];
    // Now and then small steps, stack and size budgets.
    match g.pc % 16 {
        3 => c.budgets.steps = 4,
        7 => c.budgets.stack = 2,
        // (Not below the generic size: fast's reads apply the size budget
        // to every retrieved value, the reference to typed operands only.)
        11 => c.budgets.size_bytes = 8,
        _ => {}
    }
    let attribute = (g.attr % 20 < 14).then(|| Attribute::ALL[(g.attr % 20) as usize]);
    let takes_constant = matches!(attribute, Some(Attribute::DataMemberLocation | Attribute::LlvmLanes));
    let form = match g.form % 8 {
        0 => Some(AttrForm::LocList { offset: if g.form.is_multiple_of(3) { l1 } else { l0 } }),
        1 => Some(AttrForm::LocListX { index: u64::from(g.form % 3) }),
        2 | 3 if takes_constant || g.form > 250 => Some(AttrForm::Constant(u64::from(g.form / 8) % 24)),
        _ if attribute == Some(Attribute::LlvmLanes) => Some(AttrForm::Constant(u64::from(g.form % 3))),
        _ => None,
    };
    if g.form.is_multiple_of(5) {
        c.frame_base = Some(if g.form.is_multiple_of(2) { vec![0x9c] } else { vec![0x77, 0x00] });
    }
    ExprCase {
        name: "generated".into(),
        origin: "differential_die".into(),
        expr: bytes(&g.expr, obytes).into(),
        attribute,
        form,
        spirv: None,
        ctx: Arc::new(c),
        rules: Vec::new(),
        expect: None,
    }
}

fn cases() -> u32 {
    std::env::var("DIFF_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn fast_matches_reference_on_die_backed_cases(g in gen()) {
        let case = build(&g);
        let (want, _) = dwarfcheck::consumer::builtin::reference_outcome(&case);
        let got = dwarfcheck::consumer::builtin::fast_outcome(&case);
        // Nothing to compare when the reference does not implement it
        // (messages of "not implemented" differ between evaluators too).
        if matches!(want, Outcome::Failed(Failure::Unsupported { .. })) {
            return Ok(());
        }
        prop_assert_eq!(
            &got, &want,
            "expr {:02x?} attribute {:?} form {:?}", case.expr, case.attribute, case.form
        );
    }
}

/// The generator reaches the interesting outcomes (so the comparison above
/// is not vacuous): some calls, location lists and entry values succeed.
#[test]
fn generator_reaches_locations_and_values() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut loc, mut val, mut err) = (0, 0, 0);
    for _ in 0..400 {
        let g = gen().new_tree(&mut runner).unwrap().current();
        match dwarfcheck::consumer::builtin::fast_outcome(&build(&g)) {
            Outcome::Location(_) => loc += 1,
            Outcome::Value(_) => val += 1,
            _ => err += 1,
        }
    }
    assert!(loc > 40 && val > 10 && err > 40, "locations {loc}, values {val}, failures {err}");
}

/// Whether `got` meets a case expectation; an expectation without `at`
/// accepts any offset.
fn meets(want: &Outcome, got: &Outcome) -> bool {
    match (want, got) {
        (
            Outcome::Failed(Failure::IllFormed { rule: a, at: None }),
            Outcome::Failed(Failure::IllFormed { rule: b, .. }),
        )
        | (
            Outcome::Failed(Failure::EvalError { rule: a, at: None }),
            Outcome::Failed(Failure::EvalError { rule: b, .. }),
        ) => a == b,
        (
            Outcome::Failed(Failure::Budget { budget: a, at: None }),
            Outcome::Failed(Failure::Budget { budget: b, .. }),
        ) => a == b,
        _ => want == got,
    }
}

/// Every bundled expression case, through the case entry points (attribute
/// contexts and value forms applied): fast gives the reference's outcome
/// and meets the hand-derived expectation.
#[test]
fn bundled_cases_through_case_entry_points() {
    use dwarfcheck::case::{yaml, Case};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/cases/expr");
    let mut n = 0;
    let mut bad = Vec::new();
    for f in yaml::find_case_files(&[dir]).unwrap() {
        for case in yaml::load_file(&f).unwrap_or_else(|e| panic!("{}: {e:?}", f.display())) {
            let Case::Expr(c) = case else { continue };
            n += 1;
            let got = dwarfcheck::consumer::builtin::fast_outcome(&c);
            let (want, _) = dwarfcheck::consumer::builtin::reference_outcome(&c);
            let unsupported = matches!(want, Outcome::Failed(Failure::Unsupported { .. }));
            if (!unsupported && got != want) || c.expect.as_ref().is_some_and(|e| !meets(e, &got)) {
                bad.push(format!("{} {}: fast {got} / reference {want} / expected {:?}", c.origin, c.name, c.expect));
            }
        }
    }
    assert!(n > 0, "no cases found");
    assert!(bad.is_empty(), "{} of {n} cases disagree:\n{}", bad.len(), bad.join("\n"));
}
