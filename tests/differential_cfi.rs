//! CFI row tables: the hand-derived cases of `specs/cases/cfi/*.yaml`
//! against the reference and the fast builder, and a differential
//! property test of reference vs fast over generated CIE/FDE instruction
//! streams (valid and random) in both `.debug_frame` and `.eh_frame`: row
//! tables, and virtual unwinding through them from synthetic states.

use dwarfcheck::asm::section::{build, CieLayout, FdeLayout, SectionLayout};
use dwarfcheck::case::yaml::cfi::{CfiExpect, CfiSpec};
use dwarfcheck::case::CfiCase;
use dwarfcheck::catalogue::{Catalogue, RuleKind};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::encoding::eh_pe;
use dwarfcheck_core::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::outcome::CfiOutcome;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::target::{presets, Target};
use dwarfcheck_fast as fast;
use dwarfcheck_reference as reference;
use proptest::prelude::*;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::Arc;

#[derive(Deserialize)]
struct File {
    target: String,
    cases: Vec<CaseDef>,
}

#[derive(Deserialize)]
struct CaseDef {
    name: String,
    rules: Vec<String>,
    cfi: CfiSpec,
    #[serde(default)]
    expect: Option<CfiExpect>,
}

fn case(name: &str, sec: Arc<CfiSection>, off: u64) -> CfiCase {
    CfiCase {
        name: name.into(),
        origin: String::new(),
        section: sec,
        fde_offset: off,
        rules: vec![],
        expect: None,
        unwind: None,
    }
}

/// Equal, except that an expected error without `at` matches any `at`.
fn matches(expected: &CfiOutcome, got: &CfiOutcome) -> bool {
    match (expected, got) {
        (
            CfiOutcome::Failed(Failure::IllFormed { rule: a, at: None }),
            CfiOutcome::Failed(Failure::IllFormed { rule: b, .. }),
        )
        | (
            CfiOutcome::Failed(Failure::EvalError { rule: a, at: None }),
            CfiOutcome::Failed(Failure::EvalError { rule: b, .. }),
        ) => a == b,
        (
            CfiOutcome::Failed(Failure::Budget { budget: a, at: None }),
            CfiOutcome::Failed(Failure::Budget { budget: b, .. }),
        ) => a == b,
        _ => expected == got,
    }
}

#[test]
fn yaml_cases_match_reference_and_fast() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/cases/cfi");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let cat = Catalogue::get();
    let mut covered = BTreeSet::new();
    let mut failures = Vec::new();
    let mut n = 0;
    for f in files.iter().filter(|p| p.extension().is_some_and(|x| x == "yaml")) {
        let text = std::fs::read_to_string(f).unwrap();
        let file: File = yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let target = Arc::new(presets::by_name(&file.target).expect("preset"));
        let mut names = BTreeSet::new();
        for c in &file.cases {
            n += 1;
            let tag = format!("{}: {}", f.file_name().unwrap().to_string_lossy(), c.name);
            assert!(names.insert(c.name.clone()), "{tag}: duplicate name");
            assert!(!c.rules.is_empty(), "{tag}: no rules");
            for r in &c.rules {
                assert!(cat.kind(r).is_some(), "{tag}: unknown rule {r}");
                covered.insert(r.clone());
            }
            let (sec, off) = c.cfi.build(&target).unwrap_or_else(|e| panic!("{tag}: {e}"));
            let cc = case(&c.name, sec, off);
            let r = reference::cfi::frame_table(&cc.section, cc.fde_offset);
            let fa = fast::cfi::frame_table(&cc.section, cc.fde_offset);
            if r != fa {
                failures.push(format!("{tag}: reference {r:?}\n   fast {fa:?}"));
            }
            if let Some(e) = &c.expect {
                let want = e.to_outcome_at(&target, off).unwrap_or_else(|m| panic!("{tag}: {m}"));
                if !matches(&want, &r) {
                    failures.push(format!("{tag}:\n  expected {want:?}\n  reference {r:?}"));
                }
                if let Some(rule) = r.rule() {
                    assert!(c.rules.contains(&rule.to_string()), "{tag}: outcome rule {rule} not listed in rules:");
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {n} cases failed:\n{}", failures.len(), failures.join("\n"));
    // Coverage: every CFI rule has a case; every non-semantics rule a negative one.
    let missing: Vec<_> = cat
        .rules
        .values()
        .filter(|r| r.id.starts_with("cfi.") && !covered.contains(&r.id))
        .map(|r| format!("{} ({:?})", r.id, r.kind))
        .collect();
    assert!(missing.is_empty(), "CFI rules without a case: {missing:#?}");
    let _ = RuleKind::Semantics;
}

// ---------------------------------------------------------------- differential

fn uleb(v: u64) -> Vec<u8> {
    let mut o = Vec::new();
    write_uleb(&mut o, v);
    o
}
fn sleb(v: i64) -> Vec<u8> {
    let mut o = Vec::new();
    write_sleb(&mut o, v);
    o
}

/// One call frame instruction, mostly valid, with small registers so that
/// rules interact; occasionally odd values (huge offsets, unknown aspace).
fn insn(cie: bool) -> impl Strategy<Value = Vec<u8>> {
    let (adv, mid, low) = if cie { (1, 1, 1) } else { (8, 2, 1) };
    let reg = prop_oneof![16 => 0u64..20, 2 => 30u64..40, 1 => any::<u64>()];
    let off = prop_oneof![30 => 0u64..64, 1 => any::<u64>()];
    let soff = prop_oneof![30 => -64i64..64, 1 => any::<i64>()];
    let asp = prop_oneof![12 => Just(0u64), 1 => 1u64..3];
    // Expression bytes: operations (some forbidden in CFI) mixed with operands.
    let op_byte = prop_oneof![
        12 => prop::sample::select(vec![0x0cu8, 0x92, 0x77, 0x08, 0x06, 0x22, 0x03, 0x96, 0xe9, 0x10]),
        1 => prop::sample::select(vec![0x9cu8, 0x97, 0xa1, 0xa3, 0xf3, 0x91]),
        2 => any::<u8>(),
    ];
    let blk = prop::collection::vec(op_byte, 0..6);
    prop_oneof![
        adv => (0u8..8).prop_map(|d| vec![0x40 | d]),
        mid => any::<u8>().prop_map(|d| vec![0x02, d]),
        low => (0u16..40).prop_map(|d| { let mut v = vec![0x03]; v.extend(d.to_le_bytes()); v }),
        low => (0u32..40).prop_map(|d| { let mut v = vec![0x04]; v.extend(d.to_le_bytes()); v }),
        low => (0u64..0x200).prop_map(|a| { let mut v = vec![0x01]; v.extend((0x1000 + a).to_le_bytes()); v }),
        3 => ((0u8..20), off.clone()).prop_map(|(r, o)| { let mut v = vec![0x80 | r]; v.extend(uleb(o)); v }),
        mid => (0u8..20).prop_map(|r| vec![0xc0 | r]),
        2 => Just(vec![0x00]),
        2 => Just(vec![0x0a]),
        1 => Just(vec![0x0b]),
        1 => Just(vec![0x2d]),
        3 => (prop::sample::select(vec![0x05u8, 0x14, 0x2f, 0x0c, 0x09]), reg.clone(), off.clone()).prop_map(|(o, r, x)| {
            let mut v = vec![o]; v.extend(uleb(r)); v.extend(uleb(x)); v
        }),
        3 => (prop::sample::select(vec![0x11u8, 0x15, 0x12]), reg.clone(), soff.clone()).prop_map(|(o, r, x)| {
            let mut v = vec![o]; v.extend(uleb(r)); v.extend(sleb(x)); v
        }),
        3 => (prop::sample::select(vec![0x06u8, 0x07, 0x08, 0x0d, 0x0e, 0x2e]), reg.clone()).prop_map(|(o, r)| {
            let mut v = vec![o]; v.extend(uleb(r)); v
        }),
        1 => soff.clone().prop_map(|x| { let mut v = vec![0x13]; v.extend(sleb(x)); v }),
        1 => blk.clone().prop_map(|b| { let mut v = vec![0x0f]; v.extend(uleb(b.len() as u64)); v.extend(b); v }),
        2 => (prop::sample::select(vec![0x10u8, 0x16]), reg.clone(), blk).prop_map(|(o, r, b)| {
            let mut v = vec![o]; v.extend(uleb(r)); v.extend(uleb(b.len() as u64)); v.extend(b); v
        }),
        1 => (reg.clone(), off, asp.clone()).prop_map(|(r, o, a)| { let mut v = vec![0x30]; v.extend(uleb(r)); v.extend(uleb(o)); v.extend(uleb(a)); v }),
        1 => (reg, soff, asp).prop_map(|(r, o, a)| { let mut v = vec![0x31]; v.extend(uleb(r)); v.extend(sleb(o)); v.extend(uleb(a)); v }),
    ]
}

/// Instructions, with now and then a few random bytes.
fn any_insn(cie: bool) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![40 => insn(cie), 1 => prop::collection::vec(any::<u8>(), 1..4)]
}

/// CIE initial instructions without row-creation or restore instructions.
fn clean_cie_stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        insn(true).prop_filter("no row creation or restore in a CIE", |v| {
            !(v[0] >> 6 == 1 || v[0] >> 6 == 3 || (1..=4).contains(&v[0]) || v[0] == 6 || v[0] == 0x0b)
        }),
        0..4,
    )
    .prop_map(|v| v.concat())
}

fn stream(max: usize, cie: bool) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any_insn(cie), 0..max).prop_map(|v| v.concat())
}

#[derive(Debug, Clone)]
struct Gen {
    eh: bool,
    dwarf64: bool,
    version: u8,
    aug: &'static str,
    enc: u8,
    caf: u64,
    daf: i64,
    arch: u8,
    cie_insns: Vec<u8>,
    fde_insns: Vec<u8>,
    pc_range: u64,
}

fn gen() -> impl Strategy<Value = Gen> {
    (
        any::<bool>(),
        prop::bool::weighted(0.2),
        prop::sample::select(vec![1u8, 3, 4]),
        prop::sample::select(vec!["", "zR", "zPLR", "zRS", "eh"]),
        prop::sample::select(vec![0x00u8, 0x1b, 0x03, 0x0b, 0x10, 0x01, 0x09, 0x04, 0x50]),
        prop::sample::select(vec![1u64, 4, 0]),
        prop::sample::select(vec![-8i64, -4, 1]),
        0u8..3,
        // CIE: usually a def_cfa first, then a short stream.
        (prop::bool::weighted(0.9), prop_oneof![4 => clean_cie_stream(), 1 => stream(4, true)]),
        stream(24, false),
        prop::sample::select(vec![0u64, 0x10, 0x200, 0x1000, 0x1000]),
    )
        .prop_map(|(eh, dwarf64, version, aug, enc, caf, daf, arch, (def, cie), fde, pc_range)| {
            let mut cie_insns = if def { vec![0x0c, 7, 8] } else { vec![] };
            cie_insns.extend(cie);
            Gen {
                eh,
                dwarf64,
                version: if eh && version == 4 { 3 } else { version },
                aug,
                enc,
                caf,
                daf,
                arch,
                cie_insns,
                fde_insns: fde,
                pc_range,
            }
        })
}

fn target_of(a: u8) -> Target {
    match a {
        0 => presets::x86_64(),
        1 => presets::aarch64(),
        _ => presets::amdgpu_gfx90a(),
    }
}

fn section_of(g: &Gen) -> Option<(Arc<CfiSection>, u64)> {
    let target = Arc::new(target_of(g.arch));
    let layout = SectionLayout {
        kind: if g.eh { FrameKind::EhFrame } else { FrameKind::DebugFrame },
        format: if g.dwarf64 { Format::Dwarf64 } else { Format::Dwarf32 },
        address: 0x4000,
        text_base: None,
        data_base: None,
        pad: true,
        cie: CieLayout {
            version: g.version,
            augmentation: g.aug.as_bytes().to_vec(),
            address_size: None,
            segment_selector_size: 0,
            code_align: g.caf,
            data_align: g.daf,
            return_address_register: 16,
            eh_ptr: 0,
            fde_encoding: g.aug.contains('R').then_some(g.enc),
            lsda_encoding: Some(eh_pe::UDATA4),
            personality: Some((eh_pe::ABSPTR, 0x5000)),
            augmentation_data: None,
            instructions: g.cie_insns.clone(),
        },
        fdes: vec![FdeLayout {
            segment: 0,
            pc_begin: 0x1000,
            pc_range: g.pc_range,
            lsda: Some(0x6000),
            augmentation_data: None,
            instructions: g.fde_insns.clone(),
        }],
    };
    let (bytes, offs) = build(&layout, &target).ok()?;
    let kind = layout.kind;
    Some((Arc::new(CfiSection::new(kind, bytes, 0x4000, target)), offs[0]))
}

/// Reference and fast virtual unwinding from a synthetic machine state
/// (every register and memory byte a function of `seed`) at `pc`, with
/// thread and lane 0 so that per-lane AMDGPU address spaces resolve.
fn unwinds_agree(sec: &CfiSection, pc: u64, seed: u64) -> Result<(), String> {
    let mut c = dwarfcheck_core::context::Context::new(sec.target.clone());
    c.pc = Some(pc);
    c.synthetic = Some(seed);
    (c.thread, c.lane) = (Some(0), Some(0));
    c.budgets.frames = 8;
    let r = reference::unwind::unwind(sec, &c, None);
    let f = fast::unwind::unwind(sec, &c, None);
    if dwarfcheck::runner::compare::same_evaluator_unwind(Some(&r), Some(&f)) {
        Ok(())
    } else {
        Err(format!("pc {pc:#x} seed {seed:#x}\nreference\n{r}\nfast\n{f}"))
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Generated CFI: reference and fast unwinding agree (one step, then
    /// a synthetic return address that usually has no FDE).
    #[test]
    fn unwinding_agrees(g in gen(), at in 0u64..0x1000, seed: u64) {
        let Some((sec, _)) = section_of(&g) else { return Ok(()) };
        let r = unwinds_agree(&sec, 0x1000 + at % g.pc_range.max(1), seed);
        prop_assert!(r.is_ok(), "{}\n{:?}", r.unwrap_err(), g);
    }

    #[test]
    fn reference_equals_fast(g in gen()) {
        let Some((sec, off)) = section_of(&g) else { return Ok(()) };
        let c = case("gen", sec.clone(), off);
        let r = reference::cfi::frame_table(&c.section, c.fde_offset);
        let f = fast::cfi::frame_table(&c.section, c.fde_offset);
        prop_assert_eq!(&r, &f, "{:?}", g);
        // The section walk sees the same FDE, and builds it iff the table is ok.
        let (st, _) = fast::cfi::build_all(&sec);
        prop_assert_eq!(st.fdes, 1);
        prop_assert_eq!(st.ok, u64::from(matches!(r, CfiOutcome::Table(_))));
    }

    #[test]
    fn random_sections_agree(bytes in prop::collection::vec(any::<u8>(), 0..96), off in 0u64..96, eh: bool) {
        let target = Arc::new(presets::x86_64());
        let sec = Arc::new(CfiSection::new(if eh { FrameKind::EhFrame } else { FrameKind::DebugFrame }, bytes, 0, target));
        let c = case("rand", sec.clone(), off);
        prop_assert_eq!(reference::cfi::frame_table(&c.section, c.fde_offset), fast::cfi::frame_table(&c.section, c.fde_offset));
        let _ = fast::cfi::build_all(&sec);
    }
}

/// Diagnostics: how the generated cases split over outcome kinds and rules
/// (`cargo test --test differential_cfi outcome_mix -- --ignored --nocapture`).
#[test]
#[ignore]
fn outcome_mix() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut hist = std::collections::BTreeMap::<String, u32>::new();
    for _ in 0..3000 {
        let g = gen().new_tree(&mut runner).unwrap().current();
        let Some((sec, off)) = section_of(&g) else { continue };
        let o = reference::cfi::frame_table(&sec, off);
        let key = match &o {
            CfiOutcome::Table(t) => format!("table rows={}", t.rows.len().min(5)),
            _ => format!("{} {}", o.kind(), o.rule().map(|r| r.to_string()).unwrap_or_default()),
        };
        *hist.entry(key).or_default() += 1;
    }
    for (k, v) in hist {
        println!("{v:6} {k}");
    }
}

/// Writes every case's section to `$CFI_DUMP_DIR/<file>--<case>.{hex,kind}`
/// for cross-checking with llvm-dwarfdump
/// (`CFI_DUMP_DIR=/tmp/x cargo test --test differential_cfi dump -- --ignored`).
#[test]
#[ignore]
fn dump_case_sections() {
    let Ok(out) = std::env::var("CFI_DUMP_DIR") else { return };
    std::fs::create_dir_all(&out).unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/cases/cfi");
    for f in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
        let file: File = yaml_serde::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let target = Arc::new(presets::by_name(&file.target).unwrap());
        for c in &file.cases {
            let (sec, off) = c.cfi.build(&target).unwrap();
            let stem = format!("{}/{}--{}", out, f.file_stem().unwrap().to_string_lossy(), c.name);
            let hex: Vec<String> = sec.bytes.iter().map(|b| format!("0x{b:02x}")).collect();
            std::fs::write(format!("{stem}.hex"), hex.join(",")).unwrap();
            let kind = if sec.kind == FrameKind::EhFrame { "eh_frame" } else { "debug_frame" };
            std::fs::write(format!("{stem}.kind"), format!("{kind} {:#x} {off}", sec.address)).unwrap();
        }
    }
}

// ---------------------------------------------------------------- budgets

/// x86-64 `.debug_frame`, version 4 CIE "def_cfa r7+8" (padded to 24
/// bytes), one FDE at 24 whose instructions start at 48.
fn one_fde(fde_insns: Vec<u8>) -> (Arc<CfiSection>, u64) {
    one_fde_range(fde_insns, 0x10)
}

fn one_fde_range(fde_insns: Vec<u8>, pc_range: u64) -> (Arc<CfiSection>, u64) {
    let target = Arc::new(presets::x86_64());
    let layout = SectionLayout {
        kind: FrameKind::DebugFrame,
        format: Format::Dwarf32,
        address: 0,
        text_base: None,
        data_base: None,
        pad: true,
        cie: CieLayout {
            version: 4,
            augmentation: vec![],
            address_size: None,
            segment_selector_size: 0,
            code_align: 1,
            data_align: -8,
            return_address_register: 16,
            eh_ptr: 0,
            fde_encoding: None,
            lsda_encoding: None,
            personality: None,
            augmentation_data: None,
            instructions: vec![0x0c, 7, 8],
        },
        fdes: vec![FdeLayout { pc_begin: 0x1000, pc_range, instructions: fde_insns, ..Default::default() }],
    };
    let (bytes, offs) = build(&layout, &target).unwrap();
    assert_eq!(offs[0], 24);
    (Arc::new(CfiSection::new(FrameKind::DebugFrame, bytes, 0, target)), 24)
}

fn both(sec: Arc<CfiSection>, off: u64) -> CfiOutcome {
    let c = case("budget", sec, off);
    let r = reference::cfi::frame_table(&c.section, c.fde_offset);
    assert_eq!(r, fast::cfi::frame_table(&c.section, c.fde_offset));
    r
}

#[test]
fn instruction_budget() {
    use dwarfcheck_core::cfi::MAX_INSTRUCTIONS;
    use dwarfcheck_core::outcome::BudgetKind;
    let n = MAX_INSTRUCTIONS as usize;
    // The CIE holds 7 instructions: def_cfa and 6 padding nops (18 bytes
    // padded to 24). An FDE of n - 7 nops (sized to need no padding) fits.
    let fit = n - 7 - (48 + n - 7) % 8;
    let (s, o) = one_fde(vec![0; fit]);
    assert!(matches!(both(s, o), CfiOutcome::Table(_)));
    // With n nops in the FDE, instruction number n + 1 is FDE nop number
    // n - 6 (1-based), at 48 + n - 7.
    let (s, o) = one_fde(vec![0; n]);
    assert_eq!(
        both(s, o),
        CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Steps, at: Some(48 + n as u64 - 7) })
    );
}

#[test]
fn register_rule_budget() {
    use dwarfcheck_core::cfi::MAX_REGISTER_RULES;
    use dwarfcheck_core::outcome::BudgetKind;
    assert_eq!(MAX_REGISTER_RULES, 256);
    // DW_CFA_undefined regN for N = 0..=256: 2 bytes for N < 128, 3 after.
    let mut insns = Vec::new();
    for r in 0..=256u64 {
        insns.push(0x07);
        insns.extend(uleb(r));
    }
    let (s, o) = one_fde(insns.clone());
    // The 257th register (N = 256) is at 48 + 128 * 2 + 128 * 3 = 688.
    assert_eq!(both(s, o), CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(688) }));
    // 256 registers fit; re-setting one of them is not a new register.
    insns.truncate(insns.len() - 3);
    insns.extend([0x08, 5]);
    let (s, o) = one_fde(insns);
    let CfiOutcome::Table(t) = both(s, o) else { panic!("expected a table") };
    assert_eq!(t.rows[0].registers.len(), 256);
}

#[test]
fn table_cells_budget() {
    use dwarfcheck_core::cfi::MAX_TABLE_CELLS;
    use dwarfcheck_core::outcome::BudgetKind;
    assert_eq!(MAX_TABLE_CELLS, 1 << 20);
    // 127 registers (DW_CFA_undefined reg0..reg126, 2 bytes each): each
    // row costs 1 + 127 = 128 cells, so 8192 rows make exactly 2^20 and
    // the row closed by the 8193rd DW_CFA_advance_loc(1) is one too many.
    let mut insns = Vec::new();
    for r in 0..127u8 {
        insns.extend([0x07, r]);
    }
    let mut ok = insns.clone();
    ok.extend(std::iter::repeat_n(0x41, 8191)); // 8191 rows + the last one = 8192
    let (s, o) = one_fde_range(ok, 0x10000);
    let CfiOutcome::Table(t) = both(s, o) else { panic!("8192 rows fit") };
    // Equal rules in every row: the normal form merges them into one.
    assert_eq!((t.rows.len(), t.rows[0].start, t.rows[0].end), (1, 0x1000, 0x11000));
    insns.extend(std::iter::repeat_n(0x41, 8193));
    let (s, o) = one_fde_range(insns, 0x10000);
    assert_eq!(both(s, o), CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(48 + 254 + 8192) }));
}

#[test]
fn fde_offsets_stop_at_eh_frame_terminator() {
    let target = Arc::new(presets::x86_64());
    // CIE (24 bytes), two FDEs of 20 bytes each (at 24 and 44), terminator
    // at 64, then bytes that are no entry at all.
    let cie = "14000000 00000000 01 7a5200 01 78 10 01 03 0c0708 9001 0000";
    let fde1 = "10000000 1c000000 00100000 10000000 00 000000";
    let fde2 = "10000000 30000000 00200000 10000000 00 000000";
    let hex = format!("{cie} {fde1} {fde2} 00000000 ffffffff ff");
    let bytes = dwarfcheck_core::encoding::hex::parse_hex(&hex).unwrap();
    let sec = Arc::new(CfiSection::new(FrameKind::EhFrame, bytes.clone(), 0, target.clone()));
    let offs: Vec<_> = sec.fde_offsets().collect::<Result<_, _>>().unwrap();
    assert_eq!(offs, vec![24, 44]);
    assert!(matches!(both(sec.clone(), 44), CfiOutcome::Table(ref t) if t.rows[0].start == 0x2000));
    // The same bytes as .debug_frame: no terminator; the zero length at 64
    // is an entry too short for its id, and the walk reports it.
    let dbg = CfiSection::new(FrameKind::DebugFrame, bytes, 0, target);
    let walked: Vec<_> = dbg.entries().collect();
    assert!(walked.last().unwrap().is_err());
}

// ------------------------------------------------- whole-section builder

/// Concatenates generated `.eh_frame` sections (relative CIE pointers keep
/// working; inner terminators dropped) so that FDEs of different CIEs
/// alternate, then checks that the section walk (which caches each CIE's
/// initial state) builds exactly what per-FDE builds do.
fn multi_section(gs: &[Gen], target: Arc<Target>) -> Option<Arc<CfiSection>> {
    let mut bytes = Vec::new();
    for g in gs {
        let mut g = g.clone();
        g.eh = true;
        g.arch = 0;
        let (s, _) = section_of(&g)?;
        // Both halves are written at address 0x4000; pcrel pointers shift
        // with the concatenation, which is fine for this comparison.
        bytes.extend_from_slice(&s.bytes[..s.bytes.len() - 4]);
    }
    bytes.extend([0, 0, 0, 0]);
    Some(Arc::new(CfiSection::new(FrameKind::EhFrame, bytes, 0x4000, target)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn section_walk_equals_per_fde_builds(gs in prop::collection::vec(gen(), 1..4)) {
        let target = Arc::new(presets::x86_64());
        let Some(sec) = multi_section(&gs, target) else { return Ok(()) };
        let (st, sink) = fast::cfi::build_all(&sec);
        let mut rows = 0;
        let mut cells = 0;
        let mut ok = 0;
        let mut fdes = 0;
        for off in sec.fde_offsets() {
            let off = off.unwrap();
            fdes += 1;
            let r = reference::cfi::frame_table(&sec, off);
            let Ok((fde, cie)) = sec.parse_fde(off) else { continue };
            let mut one = fast::cfi::CountingSink::default();
            let res = fast::cfi::Builder::new().build_fde(&sec, &fde, &cie, &mut one);
            prop_assert_eq!(res.is_ok(), matches!(r, CfiOutcome::Table(_)));
            ok += u64::from(res.is_ok());
            rows += one.rows;
            cells += one.cells;
        }
        prop_assert_eq!((st.fdes, st.ok, sink.rows, sink.cells), (fdes, ok, rows, cells));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// Valid sections with a few bytes overwritten: headers, augmentation
    /// data and instructions all get damaged; the builders must agree and
    /// never panic.
    #[test]
    fn mutated_sections_agree(g in gen(), edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let Some((sec, off)) = section_of(&g) else { return Ok(()) };
        let mut bytes = sec.bytes.to_vec();
        for (i, b) in &edits {
            let at = i.index(bytes.len());
            bytes[at] = *b;
        }
        let sec = Arc::new(CfiSection::new(sec.kind, bytes, sec.address, sec.target.clone()));
        let c = case("mutated", sec.clone(), off);
        prop_assert_eq!(reference::cfi::frame_table(&c.section, c.fde_offset), fast::cfi::frame_table(&c.section, c.fde_offset));
        let _ = fast::cfi::build_all(&sec);
        let r = unwinds_agree(&sec, 0x1000 + (edits.len() as u64 * 7) % g.pc_range.max(1), 0x5eed);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}
