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
