//! The vISA lowering (src/visa/lower.rs): every variable interval of the
//! committed blobs and of every blob `.ci/fixtures-intel` dumps is lowered
//! and evaluated at a pc inside it by the reference and the fast evaluator,
//! which must agree; a few intervals are checked against locations derived
//! by hand from the blob's bytes (offsets in each test).

use dwarfcheck::consumer::builtin::{fast_outcome, reference_outcome};
use dwarfcheck::visa::detect::detect;
use dwarfcheck::visa::lower::{dwarf_register, lower, LoweredInterval, NotLowered, BE_FP_VALUE};
use dwarfcheck::visa::model::Blob;
use dwarfcheck::visa::model::Location;
use dwarfcheck::visa::target::{ASPACE_SCRATCH, GRF_BASE};
use dwarfcheck::visa::Platform;
use dwarfcheck_core::outcome::location::SingleLocation;
use dwarfcheck_core::outcome::{Outcome, Source};
use std::path::Path;

fn blob(path: &Path) -> Blob {
    detect(&std::fs::read(path).unwrap()).chosen().unwrap_or_else(|f| panic!("{}: {f:?}", path.display()))
}

fn committed(name: &str) -> Blob {
    blob(&Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/fixtures/intel").join(name))
}

/// (intervals, lowered, agreements); panics on the first disagreement.
fn check(name: &str, blob: &Blob, platform: Platform) -> (usize, usize, usize) {
    let all = lower(blob, platform);
    let (mut lowered, mut agree, mut memory) = (0, 0, 0);
    for l in &all {
        let Ok(case) = &l.case else { continue };
        memory += usize::from(matches!(l.interval.location, Location::Memory { .. }));
        lowered += 1;
        let (r, _) = reference_outcome(case);
        let f = fast_outcome(case);
        assert_eq!(r, f, "{name}: {} {:02x?}", case.name, &case.expr[..]);
        assert_eq!(place(l), expected(&l.interval.location, platform), "{name}: {} {:02x?}", case.name, &case.expr[..]);
        agree += 1;
    }
    eprintln!("{name}: {} intervals, {lowered} lowered ({memory} in memory), {agree} agreements", all.len());
    (all.len(), lowered, agree)
}

/// Where the decoded location says the variable is, from the model alone
/// (not from the expression): the register at its DWARF number (IGC's
/// numbering) and the sub-register's bits, or the scratch byte (absolute,
/// or BE_FP's value in the case's state, in the platform's BE_FP units,
/// plus the offset).
fn expected(location: &Location, platform: Platform) -> Source {
    match *location {
        Location::Register { file, reg, sub } => {
            Source::Register { regno: dwarf_register(file, reg), bit_offset: u64::from(sub) * 8 }
        }
        Location::Memory { absolute, offset, .. } => {
            let base = if absolute { 0 } else { i64::from(BE_FP_VALUE) * i64::from(platform.be_fp_unit()) };
            let byte = u128::try_from(base + i64::from(offset)).expect("a scratch address");
            Source::Memory { aspace: ASPACE_SCRATCH, bit_addr: byte * 8, thread: None, lane: None }
        }
    }
}

/// The single place of a one-piece location outcome.
fn place(l: &LoweredInterval) -> Source {
    let (r, _) = reference_outcome(l.case.as_ref().unwrap());
    let Outcome::Location(loc) = r else { panic!("{r:?}") };
    match &loc.places[..] {
        [SingleLocation::Simple(s)] => s.clone(),
        p => panic!("not one simple place: {p:?}"),
    }
}

#[test]
fn stackcall_o0_intervals_derived_by_hand() {
    let b = committed("stackcall-tgllp-O0.dbg");
    let all = lower(&b, Platform::Tgllp);
    // 6b1: "V33", one interval at 6b8: vISA 0 .. 219 in r127.0 (02 02, then
    // 7f 00 00 00); IGC numbers r127 as DWARF register 16 + 127 = 143.
    let v33 = all.iter().find(|l| l.interval.at == 0x6b8).unwrap();
    assert_eq!(v33.variable, "V33");
    let case = v33.case.as_ref().unwrap();
    assert_eq!(&case.expr[..], &[0x90, 0x8f, 0x01]);
    // vISA index 0 is not in the index map, which is not sorted: its first
    // entry at 1d is vISA 0x13 -> Gen 0, its second at 25 (01 00 00 00 60
    // 00 00 00) vISA 1 -> Gen 0x60, the smallest mapped index inside
    // 0 ..= 219: pc 96.
    assert_eq!(case.ctx.pc, Some(96));
    assert_eq!(place(v33), Source::Register { regno: GRF_BASE + 127, bit_offset: 0 });
}

#[test]
fn every_committed_blob_agrees() {
    for n in ["stackcall-tgllp-O0.dbg", "stackcall-tgllp-O2.dbg", "lanes-tgllp-O2.dbg"] {
        let (n_all, lowered, agree) = check(n, &committed(n), Platform::Tgllp);
        assert!(lowered > 0 && agree == lowered, "{n}: {n_all} {lowered} {agree}");
    }
}

#[test]
fn every_dumped_blob_agrees() {
    let Some(list) = dwarfcheck::testing::intel_fixture_blobs() else { return };
    let mut total = (0, 0, 0);
    for (path, platform) in list {
        let name = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&path).display().to_string();
        let (a, l, g) = check(&name, &blob(&path), platform);
        total = (total.0 + a, total.1 + l, total.2 + g);
    }
    eprintln!("total: {} intervals, {} lowered, {} agreements", total.0, total.1, total.2);
    assert!(total.1 > 0 && total.1 == total.2);
}

#[test]
fn memory_locations_lower_into_scratch() {
    use dwarfcheck::visa::lower::expression;
    // Absolute 0x40: consts 0x40 (SLEB128 c0 00: bit 6 set needs a second
    // byte), constu 1, form_aspace_address.
    let abs = Location::Memory { absolute: true, offset: 0x40, raw: 0x8000_0040 };
    assert_eq!(expression(&abs, None, 16).unwrap(), [0x11, 0xc0, 0x00, 0x10, 0x01, 0xe1]);
    // 12 off BE_FP in r125.12, BE_FP in bytes (Xe-HPG): regx 141,
    // offset_uconst 12, deref_size 4, consts 12, plus, constu 1,
    // form_aspace_address.
    let rel = Location::Memory { absolute: false, offset: 12, raw: 12 };
    assert_eq!(expression(&rel, None, 1), Err(NotLowered::NoBeFp));
    assert_eq!(
        expression(&rel, Some((125, 12)), 1).unwrap(),
        [0x90, 0x8d, 0x01, 0xe4, 0x0c, 0x94, 0x04, 0x11, 0x0c, 0x22, 0x10, 0x01, 0xe1]
    );
    // BE_FP in 16-byte units (Gen12LP): constu 16, mul after the load.
    assert_eq!(
        expression(&rel, Some((125, 12)), 16).unwrap(),
        [0x90, 0x8d, 0x01, 0xe4, 0x0c, 0x94, 0x04, 0x10, 0x10, 0x1e, 0x11, 0x0c, 0x22, 0x10, 0x01, 0xe1]
    );
}

#[test]
fn befp_relative_memory_reads_befp_from_its_grf() {
    // blend (object 1 of stackcall-tgllp-O0) keeps BE_FP in r125.12 over
    // Gen 64 ..= 1872 (frame at 1fbe). The blob's variables all live in
    // registers, so every one is moved to "12 bytes off BE_FP": where a
    // BE_FP interval covers the case's pc, the case must read BE_FP
    // (BE_FP_VALUE in the case's r125 bytes 12..16, in 16-byte units on
    // Gen12LP) and give scratch byte 0x1000 × 16 + 12; elsewhere it is not
    // lowered.
    let mut b = committed("stackcall-tgllp-O0.dbg");
    let rel = Location::Memory { absolute: false, offset: 12, raw: 12 };
    for o in &mut b.objects {
        for v in &mut o.variables {
            for i in &mut v.intervals {
                i.location = rel;
            }
        }
    }
    let all = lower(&b, Platform::Tgllp);
    let mut seen = 0;
    for l in &all {
        let befp_covers = |o: usize| {
            let obj = &b.objects[o];
            l.case.as_ref().ok().and_then(|c| c.ctx.pc).is_some_and(|pc| {
                let gen = pc - u64::from(obj.reloc_offset);
                obj.frame.befp.iter().flatten().any(|i| u64::from(i.start) <= gen && gen <= u64::from(i.end))
            })
        };
        if !befp_covers(l.object) {
            assert!(matches!(l.case, Err(NotLowered::NoBeFp) | Err(NotLowered::Unmapped)), "{}", l.variable);
        } else {
            let c = l.case.as_ref().unwrap();
            assert_eq!(reference_outcome(c).0, fast_outcome(c));
            assert_eq!(place(l), expected(&rel, Platform::Tgllp));
            assert_eq!(
                place(l),
                Source::Memory { aspace: 1, bit_addr: (0x1000 * 16 + 12) * 8, thread: None, lane: None }
            );
            seen += 1;
        }
    }
    assert!(seen > 0, "no interval inside a BE_FP interval");
    eprintln!("{seen} BE_FP-relative cases");
}
