//! Folding rules on hand-made mark sets (module docs of `matrix`).

use super::*;
use Verdict::*;

fn v(x: Verdict) -> Mark {
    Mark::Verdict(x)
}

fn cell(marks: &[Mark]) -> String {
    fold(marks).to_string()
}

#[test]
fn any_disagreement_is_a_fail_counted_over_applicable_cases() {
    // One of three cases disagrees: fail wins over the two agreements.
    assert_eq!(cell(&[v(Agree), v(Agree), v(Disagree)]), "fail 1/3");
    // ... also over an accepted ill-formed case; `n/a` is not counted.
    assert_eq!(cell(&[v(IllFormedAccepted), v(Disagree), Mark::NotApplicable]), "fail 1/2");
}

#[test]
fn all_agree_shows_the_bare_count() {
    assert_eq!(cell(&[v(Agree); 12]), "pass 12");
}

#[test]
fn diagnosed_ill_formed_input_counts_as_a_pass() {
    // 2 of 3 pass (one agreement, one diagnosis); the unsupported one is
    // below pass in priority.
    assert_eq!(cell(&[v(IllFormedDiagnosed), v(Agree), v(Unsupported)]), "pass 2/3");
}

#[test]
fn accepted_ill_formed_outranks_pass() {
    assert_eq!(cell(&[v(Agree), v(IllFormedAccepted), v(OutsideEdition)]), "accepted-ill-formed 1/3");
}

#[test]
fn lower_labels_in_priority_order() {
    assert_eq!(cell(&[v(Unsupported), v(Unspecified)]), "unspecified 1/2");
    assert_eq!(cell(&[v(OutsideEdition), v(Unsupported)]), "unsupported 1/2");
    assert_eq!(cell(&[v(OutsideEdition), v(OutsideEdition)]), "out-of-edition 2");
    assert_eq!(cell(&[v(ReferenceBudget), v(OutsideEdition)]), "out-of-edition 1/2");
    assert_eq!(cell(&[v(ReferenceBudget)]), "ref-budget 1");
}

#[test]
fn a_fault_ranks_below_a_fail_and_down_below_unsupported() {
    assert_eq!(cell(&[v(Agree), v(Fault), v(Disagree)]), "fail 1/3");
    assert_eq!(cell(&[v(Agree), v(Fault), v(IllFormedAccepted)]), "fault 1/3");
    assert_eq!(cell(&[v(ConsumerDown), v(Agree)]), "pass 1/2");
    assert_eq!(cell(&[v(ConsumerDown), v(Unsupported)]), "unsupported 1/2");
    assert_eq!(cell(&[v(ConsumerDown), v(OutsideEdition)]), "consumer-down 1/2");
}

#[test]
fn reference_marks_without_an_oracle() {
    // One of two cases has an expectation, met.
    assert_eq!(cell(&[Mark::NoOracle, v(Agree)]), "pass 1/2");
    assert_eq!(cell(&[Mark::NoOracle, Mark::NoOracle]), "no oracle 2");
}

#[test]
fn not_applicable_only_when_nothing_applies() {
    assert_eq!(cell(&[]), "n/a");
    assert_eq!(cell(&[Mark::NotApplicable, Mark::NotApplicable]), "n/a");
    assert_eq!(cell(&[Mark::NotApplicable, v(Agree)]), "pass 1");
    assert_eq!(fold(&[Mark::NotApplicable]), Cell { label: Label::NotApplicable, count: 1, of: 0 });
}

#[test]
fn every_verdict_has_a_label() {
    // Each verdict maps to the label named for it in the module docs.
    let labels: Vec<&str> = Verdict::ALL.iter().map(|x| Label::of(v(*x)).text()).collect();
    assert_eq!(
        labels,
        [
            "pass",
            "fail",
            "fault",
            "consumer-down",
            "pass",
            "accepted-ill-formed",
            "unspecified",
            "out-of-edition",
            "unsupported",
            "ref-budget"
        ]
    );
}

#[test]
fn relative_links() {
    use std::path::Path;
    assert_eq!(render::relative(Path::new("/r/docs"), Path::new("/r/specs/cases/a.yaml")), "../specs/cases/a.yaml");
    assert_eq!(render::relative(Path::new("/r"), Path::new("/r/a.yaml")), "a.yaml");
    assert_eq!(render::relative(Path::new("/r/x/y"), Path::new("/r/a.yaml")), "../../a.yaml");
}

#[test]
fn known_reports_come_from_the_table() {
    let table = [reports::KnownReport { consumer: "c", class: "K1", url: "https://example.invalid/1" }];
    assert_eq!(reports::report_for(&table, "c", "K1").map(|r| r.url), Some("https://example.invalid/1"));
    assert_eq!(reports::report_for(&table, "c", "K2"), None);
    assert_eq!(reports::report_for(&table, "d", "K1"), None);
}
