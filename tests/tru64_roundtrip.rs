//! Round trips between the Tru64 encoder and decoder, written apart from
//! each other: over 10,000 generated procedures, decode(encode(x)) = x and
//! encode(decode(b)) = b; over mutated streams, decoding and validation
//! never panic and every fault lies inside the data. A fixed seed unless
//! PROPTEST_RNG_SEED says otherwise.

use dwarfcheck::tru64::decode::decode;
use dwarfcheck::tru64::encode::encode;
use dwarfcheck::tru64::model::*;
use dwarfcheck::tru64::read::Reader;
use proptest::prelude::*;

fn config(cases: u32, seed: u64) -> ProptestConfig {
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
fn uleb() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0u64..200, 1 => any::<u64>()]
}

fn sleb() -> impl Strategy<Value = i64> {
    prop_oneof![4 => -100i64..100, 1 => any::<i64>()]
}

fn optrndx() -> impl Strategy<Value = Optrndx> {
    (uleb(), uleb()).prop_map(|(rfd, index)| Optrndx { rfd, index })
}

fn range() -> impl Strategy<Value = RawRange> {
    (sleb(), uleb()).prop_map(|(start, len)| RawRange { start, len })
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![optrndx().prop_map(Target::Local), "[a-zA-Z_][a-zA-Z0-9_$]{0,12}".prop_map(Target::External),]
}

fn child() -> impl Strategy<Value = Child> {
    (uleb(), uleb(), sleb(), range(), proptest::collection::vec(sleb(), 0..4))
        .prop_map(|(st, sc, value, range, defs)| Child { location: Location { st, sc, value }, range, defs })
}

fn split_desc() -> impl Strategy<Value = SplitDesc> {
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

fn middle_record() -> impl Strategy<Value = Record> {
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
fn procedure() -> impl Strategy<Value = Vec<Record>> {
    (uleb(), proptest::collection::vec(middle_record(), 0..6), uleb()).prop_map(|(version, mid, end)| {
        let mut v = vec![Record::Stamp { version, data: vec![] }];
        v.extend(mid);
        v.push(Record::End { val: end, data: vec![] });
        v
    })
}

proptest! {
    #![proptest_config(config(10_000, 0x5eed_0018))]
    #[test]
    fn decode_encode_round_trips(x in procedure()) {
        let b = encode(&x).unwrap();
        let d = decode(&b);
        // Only the rules that do not stop decoding may fire (the generator
        // repeats kinds and uses event codes 6..15); framing and field
        // faults cannot, on an encoder's output.
        let allowed = ["tru64.record.once", "tru64.event.code"];
        prop_assert!(d.faults.iter().all(|f| allowed.contains(&f.rule.as_str())), "{:?}", d.faults);
        prop_assert_eq!(d.records(), x.clone());
        prop_assert_eq!(encode(&d.records()).unwrap(), b);
    }
}

proptest! {
    #![proptest_config(config(2_000, 0x5eed_0019))]
    #[test]
    fn mutated_streams_decode_without_panic(
        x in procedure(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = encode(&x).unwrap();
        for (i, v) in flips {
            let n = b.len();
            b[i.index(n)] = v;
        }
        let n = b.len();
        b.truncate(cut.index(n + 1));
        let p = Procedure { base: 0x1_2000_0000, insns: Some(64) };
        let (d, faults) = dwarfcheck::tru64::check(&b, p, &Symbols::default());
        for f in &faults {
            prop_assert!(f.at <= b.len(), "{f} past {} bytes", b.len());
        }
        // What decodes re-encodes to bytes that decode to the same records.
        if let Ok(again) = encode(&d.records()) {
            prop_assert_eq!(decode(&again).records(), d.records());
        }
    }
}

proptest! {
    #![proptest_config(config(2_000, 0x5eed_001b))]
    #[test]
    fn arbitrary_bytes_decode_without_panic(stamp in proptest::bool::ANY, tail in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut b = if stamp { encode(&[Record::Stamp { version: 1, data: vec![] }]).unwrap() } else { vec![] };
        b.extend(tail);
        let (_, faults) = dwarfcheck::tru64::check(&b, Procedure { base: 0, insns: None }, &Symbols::default());
        prop_assert!(faults.iter().all(|f| f.at <= b.len()));
    }
}

/// LEB edges, against values worked out by hand.
#[test]
fn leb_edges() {
    let read_u = |b: &[u8]| Reader::new(b, 0).uleb("x").map_err(|f| f.rule.to_string());
    let read_s = |b: &[u8]| Reader::new(b, 0).sleb("x").map_err(|f| f.rule.to_string());
    assert_eq!(read_u(&[0xe5, 0x8e, 0x26]), Ok(624485));
    assert_eq!(read_s(&[0xc0, 0xbb, 0x78]), Ok(-123456));
    assert_eq!(read_s(&[0x7b]), Ok(-5));
    assert_eq!(read_u(&[0xff; 9].iter().copied().chain([0x01]).collect::<Vec<_>>()), Ok(u64::MAX));
    assert_eq!(read_u(&[0xff; 9].iter().copied().chain([0x02]).collect::<Vec<_>>()), Err("tru64.leb.too-wide".into()));
    assert_eq!(read_u(&[0x80; 10].iter().copied().chain([0x00]).collect::<Vec<_>>()), Ok(0));
    assert_eq!(read_u(&[0x80; 10].iter().copied().chain([0x01]).collect::<Vec<_>>()), Err("tru64.leb.too-wide".into()));
    assert_eq!(read_s(&[0x80; 9].iter().copied().chain([0x7f]).collect::<Vec<_>>()), Ok(i64::MIN));
    assert_eq!(read_s(&[0xff; 9].iter().copied().chain([0x00]).collect::<Vec<_>>()), Ok(i64::MAX));
    assert_eq!(read_s(&[0x80; 9].iter().copied().chain([0x3f]).collect::<Vec<_>>()), Err("tru64.leb.too-wide".into()));
    assert_eq!(read_u(&[0x80, 0x80]), Err("tru64.leb.truncated".into()));
    assert_eq!(read_s(&[]), Err("tru64.leb.truncated".into()));
}
