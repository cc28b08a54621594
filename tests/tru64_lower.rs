//! The Tru64 lowering to DWARF (`tru64::lower`, `tru64::check`): the
//! worked example of §12.3.2.4 lowers to the list written out by hand;
//! every clean case of `specs/cases/tru64/` lowers with both evaluators
//! agreeing with each other and with the direct reading at every
//! instruction; and so do 10,000 generated procedures (fixed seed unless
//! PROPTEST_RNG_SEED says otherwise).

use dwarfcheck::tru64::check::{self, Budget};
use dwarfcheck::tru64::lower::{self, EntryFrom, LocEntry, ALPHA};
use dwarfcheck::tru64::model::*;
use dwarfcheck::tru64::resolve::View;
use dwarfcheck::tru64::{cases, encode::encode};
use proptest::prelude::*;
use std::path::PathBuf;

mod common;
use common::tru64::{config, optrndx, target};

fn case_files() -> Vec<PathBuf> {
    cases::case_files(&[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/tru64")])
}

fn worked_example() -> cases::Tru64Case {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/tru64/worked-example.tru64");
    cases::load(&f).unwrap().cases.into_iter().find(|c| c.name == "split-example-12.3.2.4").unwrap()
}

fn entry(begin: u64, end: u64, expr: &[u8], from: EntryFrom) -> LocEntry {
    LocEntry { begin, end, expr: expr.to_vec(), from }
}

/// §12.3.2.4 by hand: N (default: by reference in R17, `DW_OP_breg17 0`)
/// is split into R17 at instruction 24, R0 at 25, and R0 at 50-51
/// (`DW_OP_breg0 0`), in a procedure at 0x120001800 whose size is not
/// given, so the list ends after the last child (instruction 52).
#[test]
fn worked_example_lowers_to_the_hand_derived_list() {
    let c = worked_example();
    let records = cases::outcome(&c).unwrap().decoded.records();
    let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
    let l = lower::lower(&view, &ALPHA);
    assert_eq!((l.low, l.insns, l.high()), (0x1_2000_1800, 52, 0x1_2000_18d0));
    assert_eq!(l.lists.len(), 1);
    let (r17, r0) = (&[0x81, 0x00][..], &[0x70, 0x00][..]);
    assert_eq!(
        l.lists[0].entries,
        vec![
            entry(0x1_2000_1800, 0x1_2000_1860, r17, EntryFrom::Default),
            entry(0x1_2000_1860, 0x1_2000_1864, r17, EntryFrom::Child(0)),
            entry(0x1_2000_1864, 0x1_2000_1868, r0, EntryFrom::Child(1)),
            entry(0x1_2000_1868, 0x1_2000_18c8, r17, EntryFrom::Default),
            entry(0x1_2000_18c8, 0x1_2000_18d0, r0, EntryFrom::Child(2)),
        ]
    );
    assert_eq!(l.lists[0].unlowered, 0);
    let r = check::check(&view, &ALPHA, Budget::default());
    assert_eq!((r.variables, r.lists, r.entries, r.points, r.disagreement_count), (1, 1, 5, 52, 0), "{}", r.line());

    // With the size given (64 instructions) the default also follows the
    // last child, to the end.
    let sized = View { procedure: Procedure { base: 0x1_2000_1800, insns: Some(64) }, ..view };
    let l = lower::lower(&sized, &ALPHA);
    assert_eq!(l.lists[0].entries.last(), Some(&entry(0x1_2000_18d0, 0x1_2000_1900, r17, EntryFrom::Default)));
    let r = check::check(&sized, &ALPHA, Budget::default());
    assert_eq!((r.entries, r.points, r.disagreement_count), (6, 64, 0), "{}", r.line());
}

/// The direct reading scans every symbol at every point, so the check
/// charges each point that work: the worked example with 2,000 more
/// symbols (copies of its first, which `find` never reaches) still gives
/// its 52 points under the default budget, but 10 points' worth of work
/// (10 × `WORK_PER_POINT` units) stops it after fewer than 10 points.
#[test]
fn the_budget_bounds_work_not_only_points() {
    let c = worked_example();
    let records = cases::outcome(&c).unwrap().decoded.records();
    let mut symbols = c.symbols.clone();
    let first = symbols.symbols[0].clone();
    symbols.symbols.extend(std::iter::repeat_n(first, 2_000));
    let view = View { procedure: c.procedure, symbols: &symbols, records: &records };
    let r = check::check(&view, &ALPHA, Budget::default());
    assert_eq!((r.points, r.truncated, r.disagreement_count), (52, false, 0), "{}", r.line());
    let r = check::check(&view, &ALPHA, Budget { points: 10 });
    assert!(r.truncated && r.points > 0 && r.points < 10, "{}", r.line());
}

/// The evaluated location at hand-picked pcs of the example: memory at
/// the address R17 or R0 holds (`check::register_value`).
#[test]
fn worked_example_evaluates_to_the_registers_contents() {
    use dwarfcheck_core::outcome::{NormalLocation, Outcome, SingleLocation, Source};
    let c = worked_example();
    let records = cases::outcome(&c).unwrap().decoded.records();
    let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
    let t = Target::Local(Optrndx { rfd: 0, index: 5 });
    let at = |reg: u128| {
        Outcome::Location(NormalLocation {
            places: vec![SingleLocation::Simple(Source::memory(0, (0x7000_0000_0000 + reg * 0x1_0000) * 8))],
        })
    };
    assert_eq!(check::expected(&view.location_at(&t, 0x1_2000_185c), &ALPHA), at(17));
    assert_eq!(check::expected(&view.location_at(&t, 0x1_2000_1864), &ALPHA), at(0));
    assert_eq!(check::expected(&view.location_at(&t, 0x1_2000_18cc), &ALPHA), at(0));
}

/// Every case with no fault lowers, and both evaluators agree with each
/// other and with the reading at every instruction.
#[test]
fn clean_cases_lower_without_disagreement() {
    let mut n = 0;
    let mut failures = Vec::new();
    for f in case_files() {
        for c in cases::load(&f).unwrap().cases {
            let o = cases::outcome(&c).unwrap();
            if !o.faults.is_empty() {
                continue;
            }
            n += 1;
            let records = o.decoded.records();
            let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
            let r = check::check(&view, &ALPHA, Budget::default());
            if r.failed() || r.truncated {
                failures.push(format!("{}: {}: {}", f.display(), c.name, r.line()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(n >= 10, "{n} clean cases");
}

/// Semantic events to rows: label and write rows are statements, an
/// instruction-only row is not, null events give none, two events at one
/// instruction share a row.
#[test]
fn events_become_rows() {
    let records = vec![
        Record::Stamp { version: 1, data: vec![] },
        Record::SemEvent {
            val: 0,
            events: [(0, 4), (2, 1), (0, 5), (15, 0), (1, 5), (1, 3)]
                .iter()
                .map(|&(count, event)| SemEvent { count, event })
                .collect(),
        },
        Record::End { val: 0, data: vec![] },
    ];
    let symbols = Symbols::default();
    let view = View { procedure: Procedure { base: 0x1000, insns: Some(40) }, symbols: &symbols, records: &records };
    let l = lower::lower(&view, &ALPHA);
    let rows: Vec<(u64, bool, bool)> = l.lines.iter().map(|r| (r.address, r.is_stmt, r.basic_block)).collect();
    // Instructions 0 (label), 2 (write + inst-only), 18 (inst-only), 19 (call).
    assert_eq!(rows, vec![(0x1000, true, true), (0x1008, true, false), (0x1048, false, false), (0x104c, true, false)]);
    let w = lower::write_dwarf(&l).unwrap();
    assert!(!w.section(".debug_line").is_empty());
}

/// A discontiguous scope's ranges, by hand: begin at instruction 4, first
/// range +1 for 2 (5-6), next from the second instruction after 6 (8) +3
/// for 1 (11).
#[test]
fn scope_becomes_ranges() {
    let s = Optrndx { rfd: 0, index: 9 };
    let records = vec![Record::DiscontigScope {
        val: 0,
        scopes: vec![ScopeDesc {
            scope: s,
            ranges: vec![RawRange { start: 1, len: 2 }, RawRange { start: 3, len: 1 }],
        }],
    }];
    let symbols = Symbols {
        symbols: vec![Symbol { name: None, local: Some(s), external: None, location: None, begin: Some(0x1010) }],
    };
    let view = View { procedure: Procedure { base: 0x1000, insns: Some(16) }, symbols: &symbols, records: &records };
    let l = lower::lower(&view, &ALPHA);
    assert_eq!(l.scopes.len(), 1);
    assert_eq!(l.scopes[0].ranges, vec![(0x1014, 0x101c), (0x102c, 0x1030)]);
    let w = lower::write_dwarf(&l).unwrap();
    assert_eq!(w.range_offsets.len(), 1);
    assert!(!w.section(".debug_rnglists").is_empty());
}

/// Locations whose lowering the check can evaluate: every class
/// `place_of` lowers, and some it does not.
fn location() -> impl Strategy<Value = Location> {
    prop_oneof![
        (0i64..64).prop_map(|v| Location { st: 4, sc: 4, value: v }),
        (0i64..64).prop_map(|v| Location { st: 3, sc: 19, value: v }),
        (-512i64..512).prop_map(|v| Location { st: 4, sc: 5, value: v }),
        any::<i64>().prop_map(|v| Location { st: 2, sc: 3, value: v }),
        (0u64..20, -4i64..70).prop_map(|(sc, v)| Location { st: 4, sc, value: v }),
    ]
}

fn child() -> impl Strategy<Value = Child> {
    (location(), -4i64..20, 0u64..12).prop_map(|(location, start, len)| Child {
        location,
        range: RawRange { start, len },
        defs: vec![],
    })
}

/// A procedure of up to 48 instructions: up to four split descriptions
/// (targets from a small set, so that duplicates find theirs), own
/// locations for some targets.
fn lowerable() -> impl Strategy<Value = (Procedure, Symbols, Vec<Record>)> {
    let small = (0u64..3).prop_map(|index| Optrndx { rfd: 0, index });
    let desc = prop_oneof![
        4 => (small.clone(), 0u8..2, proptest::collection::vec(child(), 0..5)).prop_map(|(o, p, children)| SplitDesc {
            target: Target::Local(o),
            scheme: if p == 0 { Scheme::Normal } else { Scheme::Promoted },
            children,
            duplicate_of: None,
        }),
        1 => (small.clone(), prop_oneof![small.clone(), optrndx()]).prop_map(|(o, d)| SplitDesc {
            target: Target::Local(o),
            scheme: Scheme::Duplicate,
            children: vec![],
            duplicate_of: Some(d),
        }),
        1 => (target(), proptest::collection::vec(child(), 0..3)).prop_map(|(target, children)| SplitDesc {
            target,
            scheme: Scheme::Normal,
            children,
            duplicate_of: None,
        }),
    ];
    (
        0u64..0x1_0000_0000,
        proptest::option::weighted(0.8, 0u64..48),
        proptest::collection::vec(desc, 0..4),
        proptest::collection::vec(proptest::option::of(location()), 3),
    )
        .prop_map(|(base, insns, descs, own)| {
            let symbols = own
                .into_iter()
                .enumerate()
                .map(|(i, location)| Symbol {
                    name: None,
                    local: Some(Optrndx { rfd: 0, index: i as u64 }),
                    external: None,
                    location,
                    begin: None,
                })
                .collect();
            let records = vec![
                Record::Stamp { version: 1, data: vec![] },
                Record::Split { val: 0, descs },
                Record::End { val: 0, data: vec![] },
            ];
            (Procedure { base: base * 4, insns }, Symbols { symbols }, records)
        })
}

proptest! {
    #![proptest_config(config(10_000, 0x5eed_0020))]
    /// Reference = fast = `location_at` at every instruction, on the
    /// records as decoded from their encoding.
    #[test]
    fn generated_procedures_lower_without_disagreement((p, symbols, records) in lowerable()) {
        let bytes = encode(&records).unwrap();
        let decoded = dwarfcheck::tru64::decode::decode(&bytes).records();
        prop_assert_eq!(&decoded, &records);
        let view = View { procedure: p, symbols: &symbols, records: &decoded };
        let r = check::check(&view, &ALPHA, Budget { points: 10_000 });
        prop_assert!(!r.failed() && !r.truncated, "{}", r.line());
    }
}

proptest! {
    #![proptest_config(config(500, 0x5eed_0021))]
    /// Whatever a generated stream decodes to lowers without disagreement
    /// (the `tru64_bytes` fuzz oracle on a few hundred inputs).
    #[test]
    fn fuzz_oracle_holds_on_generated_streams(x in common::tru64::procedure()) {
        let b = encode(&x).unwrap();
        prop_assert!(check::fuzz_one(&b).is_ok(), "{:?}", check::fuzz_one(&b));
    }
}

/// The `tru64_bytes` oracle passes every seed `export-corpus` writes for
/// it (the stream of every `.tru64` case), each cut at every 7th byte, and
/// with each 5th byte flipped; the registered target agrees.
#[test]
fn fuzz_oracle_holds_on_the_seeds() {
    use dwarfcheck::fuzzing::{export::Seeds, targets::Target};
    let mut seeds = Seeds::default();
    seeds.add_tru64(&[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/tru64")]);
    let mut n = 0;
    for b in &seeds.tru64_bytes {
        let name = dwarfcheck::fuzzing::minimize::digest(b);
        Target::Tru64Bytes.check(b).unwrap_or_else(|v| panic!("{name}: {v}"));
        n += 1;
        let mut inputs: Vec<Vec<u8>> = (0..b.len()).step_by(7).map(|k| b[..k].to_vec()).collect();
        inputs.push(b.clone());
        inputs.extend((0..b.len()).step_by(5).map(|k| {
            let mut m = b.clone();
            m[k] ^= 0x5a;
            m
        }));
        for i in inputs {
            if let Err(e) = check::fuzz_one(&i) {
                panic!("{name}: {e}");
            }
        }
    }
    assert!(n >= 30, "{n} seeds");
}
