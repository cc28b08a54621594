//! Case files through the binary, as a new user writes them: errors say
//! what the format expects (never a Rust type), name the key and the
//! `file:line`, and suggest the nearest rule IDs, registers, operations
//! and case names; `run --case` picks cases by name.

use std::path::PathBuf;
use std::process::{Command, Output};

fn dwarfcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).args(args).output().expect("binary runs")
}

/// `text` written to a file of its own (named after the test) in a
/// directory of this process.
fn case_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dwarfcheck-cli-cases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.yaml"));
    std::fs::write(&p, text).unwrap();
    p
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A file of one case named `x` on x86_64 whose remaining lines (from line
/// 5 on) are `body`.
fn one_case(body: &str) -> String {
    format!("target: x86_64\ncases:\n  - name: x\n    rules: [expr.eval.runs-to-end]\n{body}\n")
}

/// Runs `text` as a case file; it must be an input error (exit 2) with
/// exactly one error line, which is returned.
fn load_error(name: &str, text: &str) -> (PathBuf, String) {
    let p = case_file(name, text);
    let o = dwarfcheck(&["run", "--consumers", "none", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{name}: {}{}", stdout(&o), stderr(&o));
    let e = stderr(&o);
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 1, "{name}: {e}");
    (p, lines[0].to_string())
}

/// Words of the Rust types the loader reads into, which a case file's
/// author never wrote and cannot look up.
const RUST_WORDS: [&str; 14] = [
    "struct", "enum ", "Spec", "u8", "u16", "u32", "u64", "u128", "i64", "i128", "usize", "Option<", "Vec<", "YAML tag",
];

/// Broken case files: what is broken (the line it is on, 1-based), and the
/// key and the expectation the message must name.
const BROKEN: [(&str, &str, usize, &str, &str); 11] = [
    (
        "context-list",
        "    context: [1, 2]\n    expr: DW_OP_lit1",
        5,
        "context",
        "a `context:` mapping with keys result, registers, memory, pc",
    ),
    (
        "pc-too-big",
        "    context: { pc: 0x1ffffffffffffffffffff }\n    expr: DW_OP_lit1",
        5,
        "pc",
        "a non-negative integer of at most 64 bits",
    ),
    (
        "lane-negative",
        "    context: { lane: -1 }\n    expr: DW_OP_lit1",
        5,
        "lane",
        "a non-negative integer of at most 32 bits",
    ),
    ("cu-scalar", "    context: { cu: 5 }\n    expr: DW_OP_lit1", 5, "cu", "a `cu:` mapping with keys version, format"),
    ("result-list", "    context: { result: [1] }\n    expr: DW_OP_lit1", 5, "result", "one of `location`, `value`"),
    (
        "bits-word",
        "    context: { cu: { base_types: { 1: { encoding: DW_ATE_signed, bits: x } } } }\n    expr: DW_OP_lit1",
        5,
        "bits",
        "a non-negative integer of at most 32 bits",
    ),
    (
        "value-too-big",
        "    expr: DW_OP_lit1\n    expect: { value: 0x1ffffffffffffffffffffffffffffffffffff }",
        6,
        "value",
        "an integer of at most 128 bits",
    ),
    (
        "memory-no-bytes",
        "    context: { memory: [ { at: 1 } ] }\n    expr: DW_OP_lit1",
        5,
        "memory",
        "the required key `bytes` is missing",
    ),
    ("cfi-scalar", "    cfi: 5", 5, "cfi", "a `cfi:` mapping with keys section"),
    (
        "budgets-typo",
        "    context: { budgets: { step: 5 } }\n    expr: DW_OP_lit1",
        5,
        "budgets",
        "did you mean `steps`?",
    ),
    (
        "offset-pair-three",
        "    context: { cu: { loclists: [ [ { offset_pair: [1, 2, 3] } ] ] } }\n    expr: DW_OP_lit1",
        5,
        "offset_pair",
        "a list of 2 items, found 3 items",
    ),
];

#[test]
fn type_errors_speak_the_case_format_not_rust() {
    for (name, body, line, key, expected) in BROKEN {
        let (p, e) = load_error(name, &one_case(body));
        assert!(e.starts_with(&format!("{}:{line}:", p.display())), "{name}: not at line {line}: {e}");
        let message = &e[p.display().to_string().len()..];
        assert!(message.contains(key), "{name}: key `{key}` not named: {e}");
        assert!(message.contains(expected), "{name}: `{expected}` not said: {e}");
        for w in RUST_WORDS {
            assert!(!message.contains(w), "{name}: Rust type word `{w}` in: {e}");
        }
    }
}

#[test]
fn a_case_that_is_not_a_mapping_lists_a_cases_keys() {
    let (p, e) = load_error("case-scalar", "target: x86_64\ncases: [5]\n");
    assert!(e.starts_with(&format!("{}:2:", p.display())), "{e}");
    assert!(e.contains("cases[0]: expected a case mapping with keys name, rules,"), "{e}");
    assert!(!e.contains("CaseSpec") && !e.contains("struct"), "{e}");
}

#[test]
fn a_target_register_of_the_wrong_form_says_what_was_expected() {
    let (p, e) = load_error("ra-list", "target: { name: t, return_address_register: [1] }\ncases: []\n");
    assert_eq!(e, format!("{}:1:9: target: expected a register number or a register name", p.display()));
}

#[test]
fn an_unknown_key_gets_a_did_you_mean() {
    let (p, e) = load_error("contxt", &one_case("    contxt: {}\n    expr: DW_OP_lit1"));
    assert!(e.starts_with(&format!("{}:5:", p.display())), "{e}");
    assert!(e.contains("unknown key `contxt`") && e.ends_with("did you mean `context`?"), "{e}");
}

#[test]
fn a_misspelt_rule_id_gets_a_did_you_mean() {
    let text = "target: x86_64\ncases:\n  - name: x\n    rules: [op.deref.memry-unreadable]\n    expr: DW_OP_lit1\n";
    let (p, e) = load_error("rule-typo", text);
    assert_eq!(
        e,
        format!(
            "{}:4:13: rule `op.deref.memry-unreadable` is not in specs/rules/; did you mean `op.deref.memory-unreadable`?",
            p.display()
        )
    );
    // The same in an expectation.
    let (p, e) = load_error(
        "expect-rule-typo",
        &one_case("    expr: DW_OP_lit1\n    expect: { ill_formed: op.bra.target-not-op-strt }"),
    );
    assert!(e.starts_with(&format!("{}:6:", p.display())), "{e}");
    assert!(e.contains("expect.ill_formed: rule `op.bra.target-not-op-strt`"), "{e}");
    assert!(e.ends_with("did you mean `op.bra.target-not-op-start`?"), "{e}");
}

/// A CFI case whose `expect:` is `expect` (one flow mapping).
fn cfi_case(expect: &str) -> String {
    format!(
        "target: x86_64\ncases:\n  - name: c\n    rules: [cfi.restore-state.empty-stack]\n    cfi:\n      cie: {{ version: 4, code_align: 1, data_align: -8, ra: 16, instructions: \"DW_CFA_def_cfa: reg7 +8\" }}\n      fde: {{ pc_begin: 0x1000, pc_range: 0x20, instructions: \"DW_CFA_nop; DW_CFA_restore_state\" }}\n    expect: {expect}\n"
    )
}

#[test]
fn cfi_expectations_suggest_rule_ids_and_name_kinds_as_the_catalogue_does() {
    let (p, e) = load_error("cfi-rule-typo", &cfi_case("{ ill_formed: cfi.restore-state.empty-stak }"));
    assert!(e.starts_with(&format!("{}:8:", p.display())), "{e}");
    assert!(e.ends_with("did you mean `cfi.restore-state.empty-stack`?"), "{e}");
    // An evaluation-error rule where an ill-formed one belongs: the kind
    // is spelt as in specs/rules/, not as a Rust enum variant.
    let (_, e) = load_error("cfi-rule-kind", &cfi_case("{ ill_formed: op.deref.memory-unreadable }"));
    assert!(e.contains("rule op.deref.memory-unreadable has kind evaluation-error;"), "{e}");
    assert!(!e.contains("EvaluationError"), "{e}");
}

#[test]
fn a_rule_id_nothing_is_near_gets_no_suggestion() {
    let text = "target: x86_64\ncases:\n  - name: x\n    rules: [no.such.thing.anywhere]\n    expr: DW_OP_lit1\n";
    let (_, e) = load_error("rule-far", text);
    assert!(e.ends_with("rule `no.such.thing.anywhere` is not in specs/rules/"), "{e}");
}

#[test]
fn a_misspelt_register_gets_a_did_you_mean() {
    let (p, e) = load_error("reg-typo", &one_case("    context: { registers: { rsx: 1 } }\n    expr: DW_OP_lit1"));
    assert!(e.starts_with(&format!("{}:5:", p.display())), "{e}");
    assert!(e.contains("register `rsx` is not a register of target x86_64; did you mean `rax`"), "{e}");
}

#[test]
fn a_misspelt_operation_gets_a_did_you_mean() {
    let (p, e) = load_error("op-typo", &one_case("    expr: \"DW_OP_lit1 DW_OP_derf\""));
    assert!(e.starts_with(&format!("{}:5:", p.display())), "{e}");
    assert!(e.contains("unknown operation `DW_OP_derf`; did you mean `DW_OP_deref`"), "{e}");
}

fn two_cases() -> PathBuf {
    case_file(
        "two",
        "target: x86_64\ncases:\n  - name: lit-one\n    rules: [op.lit.pushes-generic]\n    expr: DW_OP_lit1\n    expect: { value: 1 }\n  - name: lit-two\n    rules: [op.lit.pushes-generic]\n    expr: DW_OP_lit2\n    expect: { value: 3 }\n",
    )
}

#[test]
fn run_case_runs_only_the_named_case() {
    let p = two_cases();
    // lit-two expects 3 (DW_OP_lit2 gives 2): the whole file fails ...
    let all = dwarfcheck(&["run", "--consumers", "none", p.to_str().unwrap()]);
    assert_eq!(all.status.code(), Some(1), "{}", stdout(&all));
    // ... lit-one alone passes, and is the only case run.
    let one = dwarfcheck(&["run", "--consumers", "none", "--case", "lit-one", p.to_str().unwrap()]);
    assert_eq!(one.status.code(), Some(0), "{}{}", stdout(&one), stderr(&one));
    assert!(stdout(&one).contains("1 expression cases"), "{}", stdout(&one));
}

#[test]
fn a_case_not_found_lists_the_cases_there_are() {
    let p = two_cases();
    let o = dwarfcheck(&["run", "--consumers", "none", "--case", "lit-on", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        "dwarfcheck: no case named `lit-on` (did you mean `lit-one`?); the cases are `lit-one`, `lit-two`"
    );
}

#[test]
fn a_case_not_found_among_many_names_the_nearest() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/expr");
    let o = dwarfcheck(&["run", "--consumers", "none", "--case", "surprise-piece-counts-byte", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.starts_with(
            "dwarfcheck: no case named `surprise-piece-counts-byte`; did you mean `surprise-piece-counts-bytes`"
        ),
        "{e}"
    );
    assert!(e.contains("names containing it: `surprise-piece-counts-bytes`"), "{e}");
    assert!(!e.contains("the cases are"), "hundreds of cases are not all listed: {e}");
}

#[test]
fn the_surprises_of_the_docs_hold() {
    // docs/case-format.md "Common surprises" shows these cases; each has a
    // hand-derived `expect:` that the reference and fast must meet.
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/expr/surprises.yaml");
    let o = dwarfcheck(&["run", "--consumers", "none", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("reference met 13, fast met 13"), "{}", stdout(&o));
}
