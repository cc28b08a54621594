//! The lowering check (src/visa/check.rs) and `dwarfcheck visa` on it: the
//! committed blobs report their counts and no disagreement, the point
//! budget truncates, and the `visa_bytes` fuzz oracle passes every seed
//! `export-corpus` writes for it (the fixture and case blobs), some
//! truncations and some byte flips of each.

use dwarfcheck::fuzzing::export::Seeds;
use dwarfcheck::fuzzing::minimize::digest;
use dwarfcheck::fuzzing::targets::Target;
use dwarfcheck::visa::check::{check, fuzz_one, Budget};
use dwarfcheck::visa::detect::detect;
use dwarfcheck::visa::Platform;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn committed_blob_report() {
    let b =
        detect(&std::fs::read(root().join("specs/fixtures/intel/stackcall-tgllp-O0.dbg")).unwrap()).chosen().unwrap();
    let r = check(&b, Platform::Tgllp, Budget::default());
    assert_eq!((r.objects, r.fdes), (3, 3));
    assert_eq!(r.disagreement_count, 0, "{:?}", r.disagreements);
    assert!(!r.truncated && r.points > 0 && r.unwinds > 0 && r.rows == 3);
    // Budget: 10 points in all.
    let small = check(&b, Platform::Tgllp, Budget { points: 10 });
    assert!(small.truncated && small.points + small.unwinds == 10);
}

#[test]
fn fuzz_oracle_passes_every_seed() {
    let mut seeds = Seeds::default();
    seeds.add_visa(&[root().join("specs/cases/visa"), root().join("specs/fixtures/intel")]);
    let mut n = 0;
    for bytes in &seeds.visa_bytes {
        let name = digest(bytes);
        Target::VisaBytes.check(bytes).unwrap_or_else(|v| panic!("{name}: {v}"));
        fuzz_one(bytes).unwrap_or_else(|m| panic!("{name}: {m}"));
        // Truncations and single-byte flips of each seed.
        for cut in [0, 1, 6, bytes.len() / 2] {
            fuzz_one(&bytes[..cut.min(bytes.len())]).unwrap();
        }
        for k in 0..16 {
            let mut b = bytes.clone();
            if let Some(x) = b.get_mut((k * 7919 + 11) % bytes.len().max(1)) {
                *x ^= 0xff;
            }
            fuzz_one(&b).unwrap_or_else(|m| panic!("{name} flipped {k}: {m}"));
        }
        n += 1;
    }
    assert!(n >= 30, "{n} seeds");
}

/// `visa_bytes` is a target like the others: its input's plain encoding
/// is the blob itself, and a minimised finding written as
/// `regressions/visa_bytes/<digest>` is replayed through its oracle.
#[test]
fn visa_bytes_is_a_registered_target() {
    use dwarfcheck::fuzzing::{replay, targets::Input};
    assert_eq!(Target::by_name("visa_bytes"), Some(Target::VisaBytes));
    let blob = std::fs::read(root().join("specs/fixtures/intel/stackcall-tgllp-O2.dbg")).unwrap();
    let Some(input @ Input::Visa(_)) = Target::VisaBytes.decode(&blob) else { panic!("not a visa input") };
    assert_eq!(input.raw(), Some((Target::VisaBytes, blob.clone())));
    assert!(Target::VisaBytes.decode(&[]).is_none());
    let dir = std::env::temp_dir().join(format!("dwarfcheck-visa-replay-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("visa_bytes")).unwrap();
    std::fs::write(dir.join("visa_bytes").join(digest(&blob)), &blob).unwrap();
    let results = replay::replay(&dir);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(results.len(), 1);
    assert!(results[0].1.is_ok(), "{:?}", results[0]);
}

#[test]
fn visa_command_reports_the_lowering() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["visa", "specs/fixtures/intel/stackcall-tgllp-O0.dbg"])
        .current_dir(root())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("lowering: 3 object(s)") && text.contains("3 FDE(s), 3 row(s)"), "{text}");
    assert!(text.contains("0 reference/fast disagreement(s)"), "{text}");
}
