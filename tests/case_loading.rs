//! Loading case files at scale: time per case stays flat as files grow
//! (issue 13, "linear loading"), and hostile nesting ends in a located
//! error instead of exhausting the stack.

use dwarfcheck::case::yaml::load_str;
use dwarfcheck::case::Case;
use std::time::{Duration, Instant};

/// A file of `n` cheap expression cases; case `i` pushes `i % 32` and
/// expects it back.
fn cheap_cases(n: usize) -> String {
    let mut s = String::from("target: x86_64\ncases:\n");
    for i in 0..n {
        s.push_str(&format!(
            "  - name: c{i}\n    rules: [op.lit.pushes-generic]\n    context: {{ result: value }}\n    expr: DW_OP_lit{}\n    expect: {{ value: {} }}\n",
            i % 32,
            i % 32
        ));
    }
    s
}

/// The shortest of `runs` loads of `text`, checking each loads `n` cases.
fn best_load_time(text: &str, n: usize, runs: usize) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            let cases = load_str("big.yaml", text).expect("loads");
            let d = t.elapsed();
            assert_eq!(cases.len(), n);
            d
        })
        .min()
        .expect("at least one run")
}

#[test]
fn loading_time_per_case_stays_flat() {
    let (small, large) = (2_000usize, 40_000usize);
    let (a, b) = (cheap_cases(small), cheap_cases(large));
    // Warm up (catalogue, allocator), then the best of three of each.
    let _ = load_str("warm.yaml", &cheap_cases(100)).expect("loads");
    let ts = best_load_time(&a, small, 3);
    let tl = best_load_time(&b, large, 3);
    let per_small = ts.as_secs_f64() / small as f64;
    let per_large = tl.as_secs_f64() / large as f64;
    eprintln!("per case: {small} cases {per_small:.3e} s, {large} cases {per_large:.3e} s");
    // A quadratic loader makes this ratio about 20 (large/small); linear
    // keeps it near 1. Generous bound for a shared, noisy machine.
    assert!(per_large < 4.0 * per_small, "per-case load time grew {:.1}x", per_large / per_small);
}

#[test]
fn every_case_keeps_its_own_line() {
    // Oracle: the generator writes case i's `name:` on line 3 + 5 i.
    let cases = load_str("lines.yaml", &cheap_cases(3_000)).expect("loads");
    for (i, c) in cases.iter().enumerate() {
        let origin = match c {
            Case::Expr(e) => &e.origin,
            Case::Cfi(f) => &f.origin,
        };
        assert_eq!(origin, &format!("lines.yaml:{}", 3 + 5 * i));
    }
}

#[test]
fn errors_in_many_cases_are_each_located() {
    // Every third case names an unknown register: each error points at
    // that case's `expr:` line (name line + 3), column of the register.
    let mut s = String::from("target: x86_64\ncases:\n");
    let n = 3_000;
    for i in 0..n {
        let expr = if i % 3 == 0 { "DW_OP_bregx nosuchreg 0" } else { "DW_OP_lit1" };
        s.push_str(&format!(
            "  - name: c{i}\n    rules: [op.lit.pushes-generic]\n    context: {{ result: value }}\n    expr: {expr}\n"
        ));
    }
    let errors = load_str("bad.yaml", &s).expect_err("unknown registers");
    assert_eq!(errors.len(), n / 3);
    for (k, e) in errors.iter().enumerate() {
        let i = 3 * k;
        assert_eq!(e.line, 3 + 4 * i + 3, "{e}");
    }
}

/// A file of one case (its `expr:` on line 6) followed by `extra` lines
/// (more keys of the case, indented 4).
fn one_case(extra: &str) -> String {
    format!("target: x86_64\ncases:\n  - name: a\n    rules: [op.lit.pushes-generic]\n    context: {{ result: value }}\n    expr: DW_OP_lit1\n{extra}")
}

/// Loads `text` and returns its one error (line, column, message).
fn nesting_error(text: &str) -> (usize, usize, String) {
    let errors = load_str("deep.yaml", text).expect_err("nesting past the limit");
    assert_eq!(errors.len(), 1, "{errors:?}");
    (errors[0].line, errors[0].column, errors[0].message.clone())
}

// Each hostile shape below would keep the YAML parser busy for minutes or
// hours (its time per token grows with the flow depth: 100,000 nested `[`
// take about 50 s), so a test that passes shows the pre-scan stopped it.

#[test]
fn a_million_nested_brackets_end_in_a_located_error() {
    let text = one_case(&format!("    expect: {}\n", "[".repeat(1_000_000)));
    // Line 7 holds `    expect: `; the 129th `[` is at column 12 + 129.
    let (line, column, message) = nesting_error(&text);
    assert_eq!((line, column), (7, 12 + 129), "{message}");
    assert!(message.contains("nested more than 128"), "{message}");
}

#[test]
fn nesting_hidden_between_quotes_comments_and_anchors_is_found() {
    // Closing brackets inside quoted scalars and comments, anchors, tags
    // and aliases between the real openers: the depth still grows by one
    // per `[` or `{`.
    let unit = "[ \"]]}\", 'a '']' , # ]]]]\n &x !t {k: [\"\\\"]\", ";
    let text = one_case(&format!("    expect: {}\n", unit.repeat(100_000)));
    let (line, _, message) = nesting_error(&text);
    assert!(message.contains("nested more than 128"), "{message}");
    // 3 openers per unit, one line break per unit: the 129th opener is the
    // last of unit 43, on its second line.
    assert_eq!(line, 7 + 42 + 1, "{message}");
}

#[test]
fn nesting_after_a_multi_line_plain_scalar_or_block_scalar_is_found() {
    // A plain scalar's continuation ends at a line indented no deeper than
    // its key; a block scalar's at a line indented less than its first
    // line. The flow collection after either is real.
    for extra in [
        format!("    description: a plain\n      scalar [[[ on two lines\n    expect: {}\n", "[".repeat(200_000)),
        format!("    description: |\n        text [[[\n      {}\n", "[".repeat(200_000)),
        format!("    description: >2\n      text\n     {}\n", "{a: ".repeat(200_000)),
    ] {
        let (line, _, message) = nesting_error(&one_case(&extra));
        assert!(message.contains("nested more than 128"), "{message}");
        assert_eq!(line, 9, "{message}");
    }
}

#[test]
fn brackets_that_are_text_are_not_nesting() {
    // Plain scalars (on one line and continued), block scalars and quoted
    // scalars holding thousands of brackets load: they are text to the
    // parser, as the loaded case shows.
    let many = "[".repeat(10_000);
    for extra in [
        format!("    description: see {many}\n"),
        format!("    description: first line\n      {many} continued\n"),
        format!("    description: |\n      {many}\n      {{{{{{\n"),
        format!("    description: \"{many}\n      {many}\"\n"),
        format!("    description: '{many}'\n"),
    ] {
        let text = one_case(&extra);
        let cases = load_str("text.yaml", &text).unwrap_or_else(|e| panic!("{e:?}\n{}", &text[..200]));
        assert_eq!(cases.len(), 1);
    }
}

#[test]
fn deep_block_nesting_is_a_located_error() {
    // 100,000 nested block sequences on one line: yaml_serde's own limit,
    // reported in the loader's words.
    let text = one_case(&format!("    expect:\n      {}x\n", "- ".repeat(100_000)));
    let (line, _, message) = nesting_error(&text);
    assert_eq!(line, 8);
    assert!(message.contains("nested more than 128"), "{message}");
}

#[test]
fn alias_bombs_end_in_a_located_error() {
    // 10,000 aliases of a 10,000-item anchor would be 10^8 nodes
    // (gigabytes); nested aliases (each level ten of the one below) would
    // be 10^10.
    let flat = format!("    expect: [&a [{}], {}]\n", vec!["1"; 10_000].join(","), vec!["*a"; 10_000].join(","));
    let mut nested = String::from("    expect:\n      - &l0 [1,1,1,1,1,1,1,1,1,1]\n");
    for i in 1..10 {
        nested.push_str(&format!("      - &l{i} [{}]\n", vec![format!("*l{}", i - 1); 10].join(",")));
    }
    for extra in [flat, nested] {
        let (line, _, message) = nesting_error(&one_case(&extra));
        assert!(message.contains("aliases expand"), "{message}");
        assert!(line >= 7, "{message}");
    }
    // A few aliases, as the bundled unwinding cases use them, are fine.
    let text = one_case("    description: &d repeated\n  - name: b\n    rules: [op.lit.pushes-generic]\n    description: *d\n    context: { result: value }\n    expr: DW_OP_lit2\n");
    assert_eq!(load_str("ok.yaml", &text).expect("loads").len(), 2);
}
