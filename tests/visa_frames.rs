//! vISA call frame information lowered to CFI (src/visa/frame.rs): FDE
//! ranges, rows and one unwinding step derived by hand from the decoded
//! CallFrameInfo of the committed stack-call fixture and of the hand case
//! `specs/cases/visa/cfi.visa` (save entries: the real fixtures have none),
//! and the reference and fast evaluators agreeing on every row and every
//! unwound register at every point of every FDE.

use dwarfcheck::case::CfiCase;
use dwarfcheck::consumer::builtin::{fast_table, reference_table, Fast, Reference};
use dwarfcheck::consumer::Consumer;
use dwarfcheck::visa::detect::{decode_with, detect};
use dwarfcheck::visa::frame::{case, lower_frames, CALLER_BE_FP_VALUE, RA_VALUE};
use dwarfcheck::visa::lower::BE_FP_VALUE;
use dwarfcheck::visa::model::Blob;
use dwarfcheck::visa::{Layout, Platform};
use dwarfcheck_core::outcome::cfi::{CfaRule, RegisterRule, RowTable};
use dwarfcheck_core::outcome::location::SingleLocation;
use dwarfcheck_core::outcome::unwind::{Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::{CfiOutcome, Outcome, Source};
use std::path::Path;

fn committed(name: &str) -> Blob {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/fixtures/intel").join(name);
    detect(&std::fs::read(p).unwrap()).chosen().unwrap()
}

/// The blob of case `name` of specs/cases/visa/cfi.visa.
fn hand_case(name: &str) -> Blob {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/cases/visa/cfi.visa");
    let f = dwarfcheck::visa::cases::load(&p).unwrap();
    let c = f.cases.iter().find(|c| c.name == name).unwrap();
    decode_with(&dwarfcheck::visa::cases::parse_hex(&c.hex).unwrap(), Some(Layout::Igc2022)).unwrap()
}

fn table(c: &CfiCase) -> RowTable {
    let (r, f) = (reference_table(c), fast_table(c));
    assert_eq!(r, f, "{}", c.name);
    match r {
        CfiOutcome::Table(t) => t,
        o => panic!("{}: {o:?}", c.name),
    }
}

/// One unwinding step at `pc`, the same in both evaluators.
fn unwind_at(c: &CfiCase) -> Unwind {
    let u = c.unwind.as_ref().unwrap();
    let (r, f) = (Reference.unwind(c, u).unwrap(), Fast.unwind(c, u).unwrap());
    assert_eq!(r, f, "{}", c.name);
    r
}

fn scratch(byte: u64) -> Vec<SingleLocation> {
    vec![SingleLocation::Simple(Source::Memory { aspace: 1, bit_addr: u128::from(byte) * 8, thread: None, lane: None })]
}

fn register_bytes(s: &Step, regno: u64) -> Option<Vec<u8>> {
    s.registers.get(&regno).and_then(|r| r.bytes.clone())
}

/// The frame base on Gen12LP, where BE_FP counts 16-byte units: BE_FP
/// read from r125.12 (regx 141, offset_uconst 12, deref_size 4), times 16
/// (constu 16, mul), plus 0 bytes (consts 0, plus), in scratch (constu 1,
/// form_aspace_address).
fn cfa_tgllp() -> Vec<u8> {
    vec![0x90, 0x8d, 0x01, 0xe4, 0x0c, 0x94, 0x04, 0x10, 0x10, 0x1e, 0x11, 0x00, 0x22, 0x10, 0x01, 0xe1]
}

/// Scratch byte of BE_FP-relative offset `off` in the unwinding state on
/// Gen12LP: BE_FP holds `BE_FP_VALUE` units of 16 bytes.
fn frame_byte(off: u64) -> u64 {
    u64::from(BE_FP_VALUE) * 16 + off
}

#[test]
fn stackcall_o0_frames_derived_by_hand() {
    // GenX_IR -decodedbg: stackcall (kernel): frame 0, BE_FP (64, 4160) in
    // r125.12, no caller BE_FP, no return address; blend (relocation 4160):
    // frame 64, BE_FP (64, 1872) in r125.12, caller BE_FP at BE_FP+12,
    // return address at BE_FP+0; scale (6080): the same over (64, 2192).
    let b = committed("stackcall-tgllp-O0.dbg");
    let l = lower_frames(&b, Platform::Tgllp);
    let ranges: Vec<(usize, (u64, u64))> = l.fdes.iter().map(|f| (f.object, f.range)).collect();
    assert_eq!(ranges, [(0, (64, 4160)), (1, (4160 + 64, 4160 + 1872)), (2, (6080 + 64, 6080 + 2192))]);
    assert_eq!(l.skipped_saves, 0);

    // The kernel: CFA the frame base (BE_FP × 16), ip undefined: the base
    // of the stack.
    let k = case(&l, &l.fdes[0], &b, 64, Platform::Tgllp);
    let t = table(&k);
    assert_eq!(t.rows.len(), 1);
    assert_eq!(t.rows[0].cfa, CfaRule::Expression { expr: cfa_tgllp() });
    assert_eq!(t.rows[0].registers.get(&0), Some(&RegisterRule::Undefined));
    let u = unwind_at(&k);
    assert_eq!(u.end, UnwindEnd::Base);
    assert_eq!(u.steps[0].caller_pc, None);
    assert_eq!(u.steps[0].cfa.places, scratch(frame_byte(0)));

    // blend: CFA the frame base; ip saved at CFA + 0 (BE_FP + 0); r125's
    // bytes 12..16 from BE_FP + 12, the rest undefined.
    for fde in &l.fdes[1..] {
        let c = case(&l, fde, &b, fde.range.0, Platform::Tgllp);
        let t = table(&c);
        assert_eq!(t.rows.len(), 1, "{}", c.name);
        assert_eq!((t.rows[0].start, t.rows[0].end), fde.range);
        assert_eq!(t.rows[0].cfa, CfaRule::Expression { expr: cfa_tgllp() });
        assert_eq!(t.rows[0].registers.get(&0), Some(&RegisterRule::Offset { offset: 0 }));
        assert!(matches!(t.rows[0].registers.get(&141), Some(RegisterRule::Expression { .. })));
        let u = unwind_at(&c);
        let s = &u.steps[0];
        assert_eq!(u.end, UnwindEnd::Limit, "{}: {u:?}", c.name);
        assert_eq!(s.cfa.places, scratch(frame_byte(0)));
        assert_eq!(s.caller_pc, Some(u64::from(RA_VALUE)));
        let r125 = s.registers.get(&141).expect("r125 has a rule");
        let Outcome::Location(loc) = &r125.location else { panic!("{r125:?}") };
        // The piece at bytes 12..16 is scratch BE_FP + 12.
        assert!(format!("{loc:?}").contains(&format!("{}", frame_byte(12) * 8)), "{loc:?}");
        // Undefined bytes around it: no value for the whole register.
        assert_eq!(r125.bytes, None);
        let _ = CALLER_BE_FP_VALUE;
    }

    // The same blob read for Xe-HPG, where BE_FP counts bytes: no
    // multiply, and the frame base is BE_FP's value itself.
    let l = lower_frames(&b, Platform::Dg2);
    let c = case(&l, &l.fdes[1], &b, l.fdes[1].range.0, Platform::Dg2);
    let t = table(&c);
    let cfa_dg2 = vec![0x90, 0x8d, 0x01, 0xe4, 0x0c, 0x94, 0x04, 0x11, 0x00, 0x22, 0x10, 0x01, 0xe1];
    assert_eq!(t.rows[0].cfa, CfaRule::Expression { expr: cfa_dg2 });
    let u = unwind_at(&c);
    assert_eq!(u.steps[0].cfa.places, scratch(u64::from(BE_FP_VALUE)));
    assert_eq!(u.steps[0].caller_pc, Some(u64::from(RA_VALUE)));
}

#[test]
fn hand_case_with_saves_derived_by_hand() {
    // specs/cases/visa/cfi.visa "function-with-saves": relocation 64,
    // frame 64, BE_FP (16, 256) in r125.12, caller BE_FP at BE_FP+12,
    // return address at BE_FP+0; callee save at Gen 32: r2 (bytes 64..96)
    // at BE_FP+16; caller save at Gen 128: r3 (96..128) in r16.
    let b = hand_case("function-with-saves");
    let l = lower_frames(&b, Platform::Tgllp);
    assert_eq!(l.fdes.len(), 1);
    assert_eq!(l.fdes[0].range, (64 + 16, 64 + 256));
    assert_eq!(l.skipped_saves, 0);
    let c = case(&l, &l.fdes[0], &b, 80, Platform::Tgllp);
    let t = table(&c);
    let bounds: Vec<(u64, u64)> = t.rows.iter().map(|r| (r.start, r.end)).collect();
    assert_eq!(bounds, [(80, 96), (96, 192), (192, 320)]);
    for r in &t.rows {
        assert_eq!(r.cfa, CfaRule::Expression { expr: cfa_tgllp() });
        assert_eq!(r.registers.get(&0), Some(&RegisterRule::Offset { offset: 0 }));
    }
    // r2 is DWARF 18: at BE_FP + 16 = CFA + 16 from Gen 32 on.
    assert_eq!(t.rows[0].registers.get(&18), None);
    assert_eq!(t.rows[1].registers.get(&18), Some(&RegisterRule::Offset { offset: 16 }));
    assert_eq!(t.rows[2].registers.get(&18), Some(&RegisterRule::Offset { offset: 16 }));
    // r3 (DWARF 19) in r16 (DWARF 32) from Gen 128 on: drop the CFA,
    // regx 32.
    assert_eq!(t.rows[1].registers.get(&19), None);
    assert_eq!(t.rows[2].registers.get(&19), Some(&RegisterRule::Expression { expr: vec![0x96, 0x90, 0x20] }));

    // Unwinding at pc 200 (row 3): r2 is read from scratch BE_FP + 16, r3
    // from r16, the caller pc from BE_FP + 0.
    let u = unwind_at(&case(&l, &l.fdes[0], &b, 200, Platform::Tgllp));
    let s = &u.steps[0];
    assert_eq!(s.caller_pc, Some(u64::from(RA_VALUE)));
    let Outcome::Location(r2) = &s.registers[&18].location else { panic!() };
    assert_eq!(r2.places, scratch(frame_byte(16)));
    let Outcome::Location(r3) = &s.registers[&19].location else { panic!() };
    assert_eq!(r3.places, vec![SingleLocation::Simple(Source::Register { regno: 32, bit_offset: 0 })]);
    // The state's r16 is not given: no value for r3; r2's 32 bytes are
    // in the 64-byte frame (zeros).
    assert_eq!(register_bytes(s, 18), Some(vec![0; 32]));
}

#[test]
fn every_point_of_every_fde_agrees() {
    let mut blobs: Vec<(String, Blob, Platform)> =
        ["stackcall-tgllp-O0.dbg", "stackcall-tgllp-O2.dbg", "lanes-tgllp-O2.dbg"]
            .map(|n| (n.to_string(), committed(n), Platform::Tgllp))
            .into();
    blobs.push(("cfi.visa".into(), hand_case("function-with-saves"), Platform::Tgllp));
    if let Some(list) = dwarfcheck::testing::intel_fixture_blobs() {
        for (p, platform) in list {
            let b = detect(&std::fs::read(&p).unwrap()).chosen().unwrap();
            blobs.push((p.display().to_string(), b, platform));
        }
    }
    let (mut fdes, mut rows, mut points) = (0, 0, 0);
    for (name, b, platform) in &blobs {
        let l = lower_frames(b, *platform);
        for fde in &l.fdes {
            fdes += 1;
            rows += table(&case(&l, fde, b, fde.range.0, *platform)).rows.len();
            for pc in (fde.range.0..fde.range.1).step_by(8) {
                let u = unwind_at(&case(&l, fde, b, pc, *platform));
                assert!(!matches!(u.end, UnwindEnd::Fault { .. }), "{name} at {pc:#x}: {u:?}");
                points += 1;
            }
        }
    }
    eprintln!("{} blobs: {fdes} FDEs, {rows} rows, {points} unwinding points", blobs.len());
    assert!(fdes >= 4 && points > 0);
}
