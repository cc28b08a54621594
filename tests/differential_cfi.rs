//! CFI row tables: the hand-derived cases of `specs/cases/cfi/*.yaml`
//! against the reference and the fast builder, and a differential
//! property test of reference vs fast over generated CIE/FDE instruction
//! streams (valid and random) in both `.debug_frame` and `.eh_frame`.

use dwarfcheck::case::CfiCase;
use dwarfcheck::cfi::spec::{CfiExpect, CfiSpec};
use dwarfcheck::cfi::write::{build, CieLayout, FdeLayout, SectionLayout};
use dwarfcheck::cfi::{CfiSection, FrameKind};
use dwarfcheck::context::Format;
use dwarfcheck::encoding::eh_pe;
use dwarfcheck::encoding::leb128::{write_sleb, write_uleb};
use dwarfcheck::outcome::CfiOutcome;
use dwarfcheck::rules::{Catalogue, RuleKind};
use dwarfcheck::target::{presets, Target};
use dwarfcheck::{fast, reference};
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
    CfiCase { name: name.into(), origin: String::new(), section: sec, fde_offset: off, rules: vec![], expect: None }
}

/// Equal, except that an expected error without `at` matches any `at`.
fn matches(expected: &CfiOutcome, got: &CfiOutcome) -> bool {
    match (expected, got) {
        (CfiOutcome::IllFormed { rule: a, at: None }, CfiOutcome::IllFormed { rule: b, .. })
        | (CfiOutcome::EvalError { rule: a, at: None }, CfiOutcome::EvalError { rule: b, .. }) => a == b,
        (CfiOutcome::Budget { budget: a, at: None }, CfiOutcome::Budget { budget: b, .. }) => a == b,
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
            let r = reference::cfi::frame_table(&cc);
            let fa = fast::cfi::frame_table(&cc);
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
fn insn() -> impl Strategy<Value = Vec<u8>> {
    let reg = prop_oneof![8 => 0u64..20, 1 => 30u64..40, 1 => any::<u64>()];
    let off = prop_oneof![8 => 0u64..64, 1 => any::<u64>()];
    let soff = prop_oneof![8 => -64i64..64, 1 => any::<i64>()];
    let blk = prop::collection::vec(any::<u8>(), 0..4);
    prop_oneof![
        4 => (0u8..8).prop_map(|d| vec![0x40 | d]),
        1 => any::<u8>().prop_map(|d| vec![0x02, d]),
        1 => (0u16..40).prop_map(|d| { let mut v = vec![0x03]; v.extend(d.to_le_bytes()); v }),
        1 => (0u32..40).prop_map(|d| { let mut v = vec![0x04]; v.extend(d.to_le_bytes()); v }),
        1 => (0u64..0x200).prop_map(|a| { let mut v = vec![0x01]; v.extend((0x1000 + a).to_le_bytes()); v }),
        3 => ((0u8..20), off.clone()).prop_map(|(r, o)| { let mut v = vec![0x80 | r]; v.extend(uleb(o)); v }),
        2 => (0u8..20).prop_map(|r| vec![0xc0 | r]),
        2 => Just(vec![0x00]),
        2 => Just(vec![0x0a]),
        2 => Just(vec![0x0b]),
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
        1 => (reg.clone(), off, 0u64..3).prop_map(|(r, o, a)| { let mut v = vec![0x30]; v.extend(uleb(r)); v.extend(uleb(o)); v.extend(uleb(a)); v }),
        1 => (reg, soff, 0u64..3).prop_map(|(r, o, a)| { let mut v = vec![0x31]; v.extend(uleb(r)); v.extend(sleb(o)); v.extend(uleb(a)); v }),
        1 => prop::collection::vec(any::<u8>(), 1..4),
    ]
}

fn stream(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(insn(), 0..max).prop_map(|v| v.concat())
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
        (prop::bool::weighted(0.9), stream(4)),
        stream(24),
        prop::sample::select(vec![0u64, 0x10, 0x40, 0x200]),
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn reference_equals_fast(g in gen()) {
        let Some((sec, off)) = section_of(&g) else { return Ok(()) };
        let c = case("gen", sec.clone(), off);
        let r = reference::cfi::frame_table(&c);
        let f = fast::cfi::frame_table(&c);
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
        prop_assert_eq!(reference::cfi::frame_table(&c), fast::cfi::frame_table(&c));
        let _ = fast::cfi::build_all(&sec);
    }
}
