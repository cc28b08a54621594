//! IGC's own DWARF against the lowering of the vISA blob of the same
//! compile, and third-party tools on it (issue 17 item 6), on the compiles
//! `.ci/fixtures-intel` makes (skipped without ocloc).

use dwarfcheck::visa::igc_dwarf::{classes, compare, fixture, place, read};
use std::path::Path;

fn compiles() -> Option<Vec<fixture::Compile>> {
    dwarfcheck::testing::intel_fixture_blobs()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fixtures/intel");
    Some(fixture::compiles(&root))
}

/// Every difference between IGC's DWARF and the blob is classified, on
/// every DWARF ELF of every compile, and every compile has its DWARF.
#[test]
fn every_difference_classified() {
    let Some(all) = compiles() else { return };
    assert!(all.len() >= 24);
    let mut points = 0;
    for c in &all {
        // intc: INTC-embedded + dump; zebin: the .bin + dump.
        assert!(c.elfs.len() >= 2, "{}: {} DWARF ELFs", c.name, c.elfs.len());
        for e in &c.elfs {
            let dwarf = read::read(&e.bytes).unwrap_or_else(|m| panic!("{}: {m}", e.origin));
            let blob = fixture::blob(&e.blob).unwrap();
            let r = compare::compare(&dwarf, &blob, c.platform);
            eprintln!("{} {}: vars {} matched {} points {} agree {} {:?}", c.name, e.origin, r.variables, r.matched, r.points, r.agree, r.per_class());
            assert!(r.variables > 0, "{}: no variables", e.origin);
            for d in &r.differences {
                assert!(classes::class(d.class).is_some(), "{}: unclassified {d:?}", e.origin);
            }
            points += r.points;
        }
    }
    assert!(points > 0);
}
