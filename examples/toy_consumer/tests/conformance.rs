//! The toy checked against dwarfcheck's bundled suite through the one
//! call of `dwarfcheck::conformance`, as any Rust consumer's own
//! `cargo test` would.

use dwarfcheck::conformance::core::context::MachineState;
use dwarfcheck::conformance::core::outcome::{BaseType, Outcome, Value};
use dwarfcheck::conformance::{self, Allow, Case, Options, Selection, Verdict};
use toy_consumer::Toy;

/// The operations the toy implements, by name (the harness's
/// disassembler spells them so); `DW_OP_reg*` only alone.
fn toy_knows(op: &str) -> bool {
    const NAMED: &[&str] = &[
        "DW_OP_const1u",
        "DW_OP_const1s",
        "DW_OP_const2u",
        "DW_OP_const2s",
        "DW_OP_const4u",
        "DW_OP_const4s",
        "DW_OP_const8u",
        "DW_OP_const8s",
        "DW_OP_constu",
        "DW_OP_consts",
        "DW_OP_dup",
        "DW_OP_drop",
        "DW_OP_swap",
        "DW_OP_plus",
        "DW_OP_plus_uconst",
        "DW_OP_minus",
        "DW_OP_mul",
        "DW_OP_and",
        "DW_OP_or",
        "DW_OP_xor",
        "DW_OP_neg",
        "DW_OP_not",
        "DW_OP_stack_value",
    ];
    NAMED.contains(&op) || numbered(op, "DW_OP_lit") || numbered(op, "DW_OP_breg")
}

/// Whether `op` is `prefix` followed by a number below 32 (`DW_OP_lit7`).
fn numbered(op: &str, prefix: &str) -> bool {
    op.strip_prefix(prefix).and_then(|n| n.parse::<u8>().ok()).is_some_and(|n| n < 32)
}

/// The bundled expression cases the toy should be judged on, found
/// independently of the toy's decoder: evaluated as given on a
/// little-endian 8-byte target, and whose disassembly (the harness's)
/// uses only operations the toy knows, `DW_OP_stack_value` last if at
/// all, or is one `DW_OP_reg0`-`reg31`.
fn cases_the_toy_covers() -> Vec<String> {
    let (cases, errors) = conformance::suite::load(&conformance::Source::Bundled, &Selection::default());
    assert!(errors.is_empty(), "{errors:?}");
    cases
        .iter()
        .filter_map(|case| match case {
            Case::Expr(c) => Some((case, c)),
            Case::Cfi(_) => None,
        })
        .filter(|(_, c)| c.attribute.is_none() && c.form.is_none() && c.spirv.is_none())
        .filter(|(_, c)| c.ctx.initial_stack.is_empty() && c.ctx.object.is_none())
        .filter(|(_, c)| c.ctx.address_bytes() == 8 && c.ctx.target.endian == conformance::core::target::Endian::Little)
        .filter(|(case, _)| {
            // One item per operation, its name first.
            let text = dwarfcheck::runner::input_text(case);
            let ops: Vec<&str> = text.split(", ").map(|i| i.split(' ').next().unwrap_or("")).collect();
            let alone_register = ops.len() == 1 && numbered(ops[0], "DW_OP_reg");
            let last_stack_value =
                ops.iter().position(|o| *o == "DW_OP_stack_value").is_none_or(|i| i + 1 == ops.len());
            let values = ops.iter().filter(|o| **o != "DW_OP_stack_value").count();
            !text.is_empty() && (alone_register || (values > 0 && last_stack_value && ops.iter().all(|o| toy_knows(o))))
        })
        .map(|(case, _)| case.name().to_string())
        .collect()
}

/// The toy agrees with the reference on every case it answers, and is
/// judged on at least the cases it covers.
#[test]
fn toy_agrees_on_every_case_it_supports() {
    let report = conformance::check_expressions(&Toy::default(), &Options::default());
    report.assert_conforms();
    assert_eq!(report.count(Verdict::Disagree), 0, "{report}");
    let covered = cases_the_toy_covers();
    // The counts line, for the log: `toy: N cases, M judged: ...`.
    eprintln!(
        "{} ({} covered by the toy's operations)",
        report.to_string().lines().next().unwrap_or(""),
        covered.len()
    );
    assert!(covered.len() >= 30, "the suite has few plain cases: {covered:?}");
    let judged: Vec<&str> = report
        .cases
        .iter()
        .filter(|v| v.verdict != Verdict::Unsupported && v.verdict != Verdict::OutsideEdition)
        .map(|v| v.case.as_str())
        .collect();
    let missed: Vec<&String> = covered.iter().filter(|c| !judged.contains(&c.as_str())).collect();
    assert!(missed.is_empty(), "covered but not judged: {missed:?}\n{report}");
    assert!(report.judged() >= covered.len(), "{report}");
    // Every case's both answers are in the report.
    let agree = report.cases.iter().find(|v| v.case == "minus-order").expect("minus-order is run");
    assert_eq!(agree.verdict, Verdict::Agree);
    let seven = Outcome::Value(Value::from_u128(BaseType::generic(64, false), 7));
    assert_eq!(agree.reference, seven.to_string());
    assert_eq!(agree.consumer.as_deref(), Some(agree.reference.as_str()));
}

/// A toy with `DW_OP_minus`'s operands swapped disagrees on
/// `minus-order` (10 - 3 in specs/cases/expr/arithmetic.yaml), and the
/// report names the case, its file and its rule; allowing it by rule
/// ratchets: then it conforms, and an allow entry no failure matches is
/// stale.
#[test]
fn a_wrong_minus_is_caught_and_named() {
    let wrong = Toy { swapped_minus: true };
    let report = conformance::check_expressions(&wrong, &Options::default());
    let v = report.disagreements().find(|v| v.case == "minus-order").expect("minus-order disagrees");
    assert_eq!(v.file, "specs/cases/expr/arithmetic.yaml");
    assert!(v.rules.contains(&"op.minus.subtracts".to_string()));
    let three_minus_ten =
        Outcome::Value(Value::from_u128(BaseType::generic(64, false), u128::from(3u64.wrapping_sub(10))));
    assert_eq!(v.consumer, Some(three_minus_ten.to_string()));
    let text = report.to_string();
    assert!(text.contains("DISAGREE minus-order (specs/cases/expr/arithmetic.yaml:"), "{text}");
    assert!(text.contains("op.minus.subtracts"), "{text}");
    assert!(text.contains("DW_OP_lit10, DW_OP_lit3, DW_OP_minus"), "{text}");
    let panic = std::panic::catch_unwind(|| report.assert_no_disagreements()).expect_err("the check must fail");
    let message = panic.downcast_ref::<String>().expect("a formatted panic message");
    assert!(message.contains("minus-order") && message.contains("op.minus.subtracts"), "{message}");

    // Every case that disagrees uses DW_OP_minus: allowing them all by
    // name makes the toy conform; an extra entry is stale.
    let names: Vec<String> = report.disagreements().map(|v| v.case.clone()).collect();
    let allow = Allow { cases: names.clone(), rules: Vec::new() };
    let allowed = conformance::check_expressions(&wrong, &Options { allow, ..Options::default() });
    allowed.assert_conforms();
    let stale = Allow { cases: [names, vec!["plus".to_string()]].concat(), rules: Vec::new() };
    let with_stale = conformance::check_expressions(&wrong, &Options { allow: stale, ..Options::default() });
    assert_eq!(with_stale.stale_allowances, vec!["case plus".to_string()]);
    assert!(std::panic::catch_unwind(|| with_stale.assert_conforms()).is_err());
}

/// Selecting by rule runs only the cases that exercise it.
#[test]
fn selection_by_rule_runs_only_those_cases() {
    let selection = Selection { rules: vec!["op.minus".to_string()], ..Selection::default() };
    let report = conformance::check_expressions(&Toy::default(), &Options { selection, ..Options::default() });
    assert!(report.cases.iter().any(|v| v.case == "minus-order"));
    assert!(report.cases.iter().all(|v| v.rules.iter().any(|r| r.starts_with("op.minus"))), "{report}");
    report.assert_conforms();
}
