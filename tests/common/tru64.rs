//! The generators of Tru64 procedures the round-trip and lowering tests share, and their proptest configuration.

#![allow(dead_code)]

use dwarfcheck::tru64::model::*;
use proptest::prelude::*;

/// A configuration of `cases` cases with a fixed seed unless
/// PROPTEST_RNG_SEED says otherwise.
pub fn config(cases: u32, seed: u64) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: match ProptestConfig::default().rng_seed {
            proptest::test_runner::RngSeed::Random => proptest::test_runner::RngSeed::Fixed(seed),
            chosen => chosen,
        },
        ..ProptestConfig::default()
    }
}

/// Integers across every LEB length: small ones often, any 64-bit value
/// sometimes.
pub fn uleb() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0u64..200, 1 => any::<u64>()]
}

pub fn sleb() -> impl Strategy<Value = i64> {
    prop_oneof![4 => -100i64..100, 1 => any::<i64>()]
}

pub fn optrndx() -> impl Strategy<Value = Optrndx> {
    (uleb(), uleb()).prop_map(|(rfd, index)| Optrndx { rfd, index })
}

pub fn range() -> impl Strategy<Value = RawRange> {
    (sleb(), uleb()).prop_map(|(start, len)| RawRange { start, len })
}

pub fn target() -> impl Strategy<Value = Target> {
    prop_oneof![optrndx().prop_map(Target::Local), "[a-zA-Z_][a-zA-Z0-9_$]{0,12}".prop_map(Target::External),]
}

pub fn child() -> impl Strategy<Value = Child> {
    (uleb(), uleb(), sleb(), range(), proptest::collection::vec(sleb(), 0..4))
        .prop_map(|(st, sc, value, range, defs)| Child { location: Location { st, sc, value }, range, defs })
}

pub fn split_desc() -> impl Strategy<Value = SplitDesc> {
    prop_oneof![
        (target(), proptest::bool::ANY, proptest::collection::vec(child(), 0..4)).prop_map(|(target, p, children)| {
            SplitDesc {
                target,
                scheme: if p { Scheme::Promoted } else { Scheme::Normal },
                children,
                duplicate_of: None,
            }
        }),
        (target(), optrndx()).prop_map(|(target, o)| SplitDesc {
            target,
            scheme: Scheme::Duplicate,
            children: vec![],
            duplicate_of: Some(o),
        }),
    ]
}

pub fn middle_record() -> impl Strategy<Value = Record> {
    prop_oneof![
        (uleb(), proptest::collection::vec((0u8..16, 0u8..16), 0..24)).prop_map(|(val, e)| Record::SemEvent {
            val,
            events: e.into_iter().map(|(count, event)| SemEvent { count, event }).collect()
        }),
        (uleb(), proptest::collection::vec(split_desc(), 0..4)).prop_map(|(val, descs)| Record::Split { val, descs }),
        (uleb(), proptest::collection::vec((optrndx(), proptest::collection::vec(range(), 0..4)), 0..4)).prop_map(
            |(val, s)| Record::DiscontigScope {
                val,
                scopes: s.into_iter().map(|(scope, ranges)| ScopeDesc { scope, ranges }).collect()
            }
        ),
        (prop_oneof![Just(3u32), Just(7u32), 8u32..200], uleb(), proptest::collection::vec(any::<u8>(), 0..12))
            .prop_map(|(tag, val, data)| Record::Opaque { tag, val, data }),
    ]
}

/// A procedure's stream: STAMP, up to six records, END.
pub fn procedure() -> impl Strategy<Value = Vec<Record>> {
    (uleb(), proptest::collection::vec(middle_record(), 0..6), uleb()).prop_map(|(version, mid, end)| {
        let mut v = vec![Record::Stamp { version, data: vec![] }];
        v.extend(mid);
        v.push(Record::End { val: end, data: vec![] });
        v
    })
}
