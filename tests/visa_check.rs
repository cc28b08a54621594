//! The lowering check (src/visa/check.rs) and `dwarfcheck visa` on it: the
//! committed blobs report their counts and no disagreement, the point
//! budget truncates, and the `visa_bytes` fuzz oracle passes every seed of
//! corpus/visa_bytes, some truncations and some byte flips of each.

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
    let mut n = 0;
    for f in std::fs::read_dir(root().join("corpus/visa_bytes")).unwrap().flatten() {
        let bytes = std::fs::read(f.path()).unwrap();
        fuzz_one(&bytes).unwrap_or_else(|m| panic!("{}: {m}", f.path().display()));
        // Truncations and single-byte flips of each seed.
        for cut in [0, 1, 6, bytes.len() / 2] {
            fuzz_one(&bytes[..cut.min(bytes.len())]).unwrap();
        }
        for k in 0..16 {
            let mut b = bytes.clone();
            if let Some(x) = b.get_mut((k * 7919 + 11) % bytes.len().max(1)) {
                *x ^= 0xff;
            }
            fuzz_one(&b).unwrap_or_else(|m| panic!("{} flipped {k}: {m}", f.path().display()));
        }
        n += 1;
    }
    assert!(n >= 30, "{n} seeds");
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
