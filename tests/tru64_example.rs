//! The split lifetime example of the seed's §12.3.2.4, decoded from the
//! bytes of `specs/cases/tru64/worked-example.tru64`: the fields are the
//! ones the example's `.byte` lines give, and the resolved ranges and
//! definition points are those derived by hand from the normative text of
//! §12.3.2.3 (instruction counts of 4 bytes, base 0x120001800).

use dwarfcheck::tru64::cases;
use dwarfcheck::tru64::model::{Location, Optrndx, Procedure, Record, Scheme, Symbols, Target};
use dwarfcheck::tru64::resolve::{resolve_children, Span, View, Where};
use std::path::PathBuf;

const ST_LOCAL: u64 = 4;
const ST_PARAM: u64 = 3;
const SC_VAR_REGISTER: u64 = 19;
const N: Target = Target::Local(Optrndx { rfd: 0, index: 5 });

fn example() -> cases::Tru64Case {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/tru64/worked-example.tru64");
    cases::load(&p).unwrap().cases.remove(0)
}

fn reg(st: u64, r: i64) -> Location {
    Location { st, sc: SC_VAR_REGISTER, value: r }
}

#[test]
fn the_example_decodes_to_its_fields() {
    let c = example();
    let out = cases::outcome(&c).unwrap();
    assert!(out.faults.is_empty(), "{:?}", out.faults);
    assert_eq!(out.bytes.len(), 16 + 16 + 25 + 16);
    // The split data starts with 2+1^4 read as type 2 in the low nibble and
    // scheme 1 in the high one: 0x12.
    assert_eq!(out.bytes[0x20], 0x12);
    let records = out.decoded.records();
    let Record::Split { descs, .. } = &records[1] else { panic!("{records:?}") };
    assert_eq!(descs.len(), 1);
    let d = &descs[0];
    assert_eq!(d.target, N);
    assert_eq!(d.scheme, Scheme::Normal);
    let raw: Vec<(Location, i64, u64, Vec<i64>)> =
        d.children.iter().map(|c| (c.location, c.range.start, c.range.len, c.defs.clone())).collect();
    assert_eq!(
        raw,
        vec![
            (reg(ST_LOCAL, 0x11), 24, 1, vec![-5]),
            (reg(ST_LOCAL, 0), 0, 1, vec![-6]),
            (reg(ST_LOCAL, 0), 24, 2, vec![0]),
        ]
    );
    // Offsets of the records and of each child's range field.
    let at: Vec<usize> = out.decoded.entries.iter().map(|e| e.at).collect();
    assert_eq!(at, vec![0, 0x10, 0x39]);
    assert_eq!(out.decoded.entries[1].marks[0].ranges, vec![0x27, 0x2e, 0x35]);
}

#[test]
fn the_example_resolves_as_derived_by_hand() {
    let c = example();
    let records = cases::outcome(&c).unwrap().decoded.records();
    let Record::Split { descs, .. } = &records[1] else { panic!() };
    let r = resolve_children(&descs[0].children);
    // Child 1: 24 from the base; child 2: 0 from 25 (after 24); child 3: 24
    // from 26 (after 25) = 50, two instructions.
    let spans: Vec<Span> = r.iter().map(|c| c.span).collect();
    assert_eq!(spans, vec![Span { first: 24, len: 1 }, Span { first: 25, len: 1 }, Span { first: 50, len: 2 }]);
    // Definitions: 23 - 5 = 18; 24 - 6 = 18; 49 + 0 = 49.
    let defs: Vec<Vec<i128>> = r.iter().map(|c| c.defs.clone()).collect();
    assert_eq!(defs, vec![vec![18], vec![18], vec![49]]);
}

#[test]
fn location_at_every_pc_of_the_first_80_instructions() {
    let c = example();
    let records = cases::outcome(&c).unwrap().decoded.records();
    let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
    let default = Where::Default(reg(ST_PARAM, 0x11));
    for i in 0..80u64 {
        let pc = 0x1_2000_1800 + 4 * i;
        let want = match i {
            24 => Where::Children(vec![reg(ST_LOCAL, 0x11)]),
            25 | 50 | 51 => Where::Children(vec![reg(ST_LOCAL, 0)]),
            _ => default.clone(),
        };
        assert_eq!(view.location_at(&N, pc), want, "pc {pc:#x}");
    }
}

#[test]
fn promoted_and_unallocated_have_no_default() {
    let c = example();
    let mut records = cases::outcome(&c).unwrap().decoded.records();
    let Record::Split { descs, .. } = &mut records[1] else { panic!() };
    descs[0].scheme = Scheme::Promoted;
    let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
    assert_eq!(view.location_at(&N, 0x1_2000_1800), Where::Nowhere);
    assert_eq!(view.location_at(&N, 0x1_2000_1860), Where::Children(vec![reg(ST_LOCAL, 0x11)]));
    // Without N's symbol there is no default either.
    let none = Symbols::default();
    let records = cases::outcome(&c).unwrap().decoded.records();
    let view = View { procedure: Procedure { base: 0x1_2000_1800, insns: None }, symbols: &none, records: &records };
    assert_eq!(view.location_at(&N, 0x1_2000_1800), Where::Nowhere);
}
