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

mod common;
use common::tru64::{config, procedure};

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
