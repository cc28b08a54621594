//! Replays `corpus/regressions/`, the minimised fuzz findings: each must
//! pass its target's oracles again (reference == fast, gimli only in a
//! known class), and the YAML cases must meet their hand-derived
//! expectations.

use dwarfcheck::case::{yaml::load_file, Case};
use dwarfcheck::fuzzing::replay::{bundled_dir, replay};
use dwarfcheck::runner::compare::exact;

#[test]
fn every_regression_passes_its_oracles() {
    let results = replay(&bundled_dir());
    assert!(results.len() >= 2, "corpus/regressions/ holds the findings: {results:?}");
    let failed: Vec<_> = results.iter().filter(|r| r.1.is_err()).collect();
    assert!(failed.is_empty(), "regressions that fail again: {failed:#?}");
}

#[test]
fn yaml_regressions_meet_their_expectations() {
    let mut checked = 0;
    for (f, _) in replay(&bundled_dir()) {
        if f.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        for c in load_file(&f).unwrap_or_else(|e| panic!("{}: {e:?}", f.display())) {
            let Case::Expr(e) = c else { continue };
            let Some(expect) = &e.expect else { continue };
            let (r, _) = dwarfcheck::consumer::builtin::reference_outcome(&e);
            let fast = dwarfcheck::consumer::builtin::fast_outcome(&e);
            assert!(exact(expect, &r), "{}: reference {r}", e.name);
            assert!(exact(expect, &fast), "{}: fast {fast}", e.name);
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} expectations checked");
}
