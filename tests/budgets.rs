//! Input that would exhaust the machine ends with a budget outcome instead
//! (issue 13): the pathological shapes run in a child process under a
//! memory cap, budget ceilings of case files, the deepest nesting on a
//! 2 MiB thread stack.
//!
//! Every expectation is derived by hand in the comments; the child's
//! `dwarfcheck run` checks both evaluators against it.

use dwarfcheck::case::yaml::load_str;
use dwarfcheck::case::Case;
use dwarfcheck::consumer::builtin::{fast_outcome, reference_outcome};
use dwarfcheck_core::context::Budgets;
use dwarfcheck_core::outcome::{BudgetKind, Failure, Outcome};
use std::fmt::Write as _;
use std::process::Command;

/// Virtual memory cap of the child, in KiB (1 GiB: the shapes need a few
/// MiB; without the budgets the first one grew to 24 GB).
const CAP_KIB: u64 = 1 << 20;

/// Runs `dwarfcheck run` on `yaml` in a child limited to [`CAP_KIB`] of
/// virtual memory and 120 s of time; returns its exit code and output.
fn run_capped(name: &str, yaml: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(format!("dwarfcheck-budgets-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(&file, yaml).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {CAP_KIB}; exec timeout -s KILL 120 \"$0\" run \"$1\""))
        .arg(env!("CARGO_BIN_EXE_dwarfcheck"))
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// Asserts that `dwarfcheck run` met all `n` hand-derived expectations of
/// `yaml` with both evaluators, within the memory cap.
fn both_meet(name: &str, yaml: &str, n: usize) {
    let (code, text) = run_capped(name, yaml);
    assert_eq!(code, 0, "{name}: exit {code}\n{text}");
    let want = format!("hand-derived expectations: {n} checked; reference met {n}, fast met {n}");
    assert!(text.contains(&want), "{name}: expected `{want}` in\n{text}");
}

#[test]
fn creation_loops_end_with_the_memory_budget_under_a_memory_cap() {
    // x86-64, hetero-2020; default budgets (8 MiB of memory, 100,000 steps).
    let yaml = r#"
target: x86_64
vendor: hetero-2020
cases:
  # Each turn (reg0 at 0, extend at 1, drop, skip -10 back to 0) creates
  # 65,536 parts of 64 bytes = 4 MiB: two turns fit, the third extend does not.
  - name: extend-loop
    rules: [expr.budget.memory]
    context: { result: location }
    expr: "DW_OP_reg0 DW_OP_LLVM_extend 1 65536 DW_OP_drop DW_OP_skip -10"
    expect: { budget: memory, at: 1 }
  # reg0 (0), reg1 (1), const1u 0x55 (2), select_bit_piece 1 64 (4), drop
  # (7), skip -11 (8) back to 0: 64 parts = 4,096 bytes a turn; 2,048 turns
  # fit in 8 MiB (12,288 steps), the 2,049th select_bit_piece does not.
  - name: select-bit-piece-loop
    rules: [expr.budget.memory]
    context: { result: location }
    expr: "DW_OP_reg0 DW_OP_reg1 DW_OP_const1u 0x55 DW_OP_LLVM_select_bit_piece 1 64 DW_OP_drop DW_OP_skip -11"
    expect: { budget: memory, at: 4 }
  # piece 1 (0) and skip -5 (2) alternate: operation 100,001 is a piece at
  # 0. By then 50,000 parts = 3.2 MB of memory and 50,000 bytes of size.
  - name: piece-loop
    rules: [op.skip.branches]
    context: { result: location }
    expr: "DW_OP_piece 1 DW_OP_skip -5"
    expect: { budget: steps, at: 0 }
  # implicit_value 1024 (0, 1,027 bytes long), drop (1027), skip (1028) to
  # 0: 1,024 bytes a turn, 8,192 turns fit in 8 MiB, the next one does not.
  - name: implicit-value-loop
    rules: [expr.budget.memory]
    context: { result: location }
    expr_bytes: "IMPLICIT 13 2f f9 fb"
    expect: { budget: memory, at: 0 }
  # Parts sharing one large part location: extend 1 64 of reg0 (offset 1;
  # 64 parts of weight 1 = 4,096 bytes), dup (4), piece 8 (5), then pairs of
  # over, piece 8 (the k-th piece at 5 + 3(k - 1)). Each piece's part is 64
  # bits of the extend composite: weight 64 = 4,096 bytes. 4,096 x 2,048 =
  # 8 MiB, so the extend and 2,047 pieces fit and piece 2,048 (offset
  # 6,146) does not. Without weighing, 30,000 such pieces normalised to
  # 1.9 million pieces and took 3.3 GB.
  - name: shared-part-pieces
    rules: [expr.budget.memory, op.piece.pops-part-appends]
    context: { result: location }
    expr: "DW_OP_reg0 DW_OP_LLVM_extend 1 64 DW_OP_dup DW_OP_piece 8 PAIRS"
    expect: { budget: memory, at: 6146 }
"#;
    let implicit = format!("9e 80 08{}", " 5a".repeat(1024));
    let pairs = "DW_OP_over DW_OP_piece 8 ".repeat(3000);
    let yaml = yaml.replace("IMPLICIT", &implicit).replace("PAIRS", pairs.trim());
    both_meet("creation-loops", &yaml, 5);
}

#[test]
fn walk_loops_end_with_the_work_budget_under_a_memory_cap() {
    // x86-64, hetero-2020; default budgets (2^20 = 1,048,576 parts of work,
    // 8 MiB of memory, 100,000 steps). Before the work budget the first
    // three ran for seconds to minutes in the reference.
    let mut yaml = String::from(
        r#"
target: x86_64
vendor: hetero-2020
cases:
  # extend 8 65536 of rax (1), piece 65536 (6) takes all 524,288 bits of
  # it: the walk reaches its 65,536 parts. piece_end (10), offset_uconst
  # 65000 (11) to bit 520,000, then dup (15), deref (16), drop, skip -6.
  # Each deref walks the outer part (1) and the inner composite over
  # [520000, 520064): 65,008 parts; 65,536 + 15 x 65,009 = 1,040,671, the
  # 16th read goes over.
  - name: nested-read-loop
    rules: [expr.budget.work]
    context: { result: location, registers: { rax: 5 } }
    expr: "DW_OP_reg0 DW_OP_LLVM_extend 8 65536 DW_OP_piece 65536 DW_OP_LLVM_piece_end DW_OP_LLVM_offset_uconst 65000 DW_OP_dup DW_OP_deref DW_OP_drop DW_OP_skip -6"
    expect: { budget: work, at: 16 }
  # extend 8 2 of the first 8 bits of a 65,536-part composite walks one
  # part: the loop (dup 6, extend 7, drop 10, skip 11) ends with the steps
  # budget. 2 + 24,999 x 4 = 99,998 operations, then dup and extend; the
  # 100,001st is the drop at 10. Memory: 4 MiB + 24,999 x 2 x 64 bytes.
  - name: extend-of-a-large-composite-loop
    rules: [expr.budget.work]
    context: { result: location, registers: { rax: 5 } }
    expr: "DW_OP_reg0 DW_OP_LLVM_extend 8 65536 DW_OP_dup DW_OP_LLVM_extend 8 2 DW_OP_drop DW_OP_skip -8"
    expect: { budget: steps, at: 10 }
  # extend 1 65536 (1: 4 MiB), dup (6), piece 8192 (7) takes all 65,536
  # bits: weight 65,536 pieces (rax bit 0 each time, nothing merges), 4 MiB
  # more, 8 MiB in all; over (10), the next piece 8192 (11) goes over the
  # memory budget.
  - name: pieces-of-a-large-composite
    rules: [expr.budget.memory]
    context: { result: location }
    expr: "DW_OP_reg0 DW_OP_LLVM_extend 1 65536 DW_OP_dup DW_OP_piece 8192 DW_OP_over DW_OP_piece 8192 DW_OP_over DW_OP_piece 8192 DW_OP_LLVM_piece_end"
    expect: { budget: memory, at: 11 }
"#,
    );
    // 20,000 pairs of 1-byte rax and 2-byte rdx parts (offset 6 each, 80,000
    // operations), piece_end (120,000), offset_uconst 59990 (120,001) to bit
    // 479,920, then dup (120,005), deref_size 1 (120,006), drop, skip -7.
    // Each read of [479920, 479928) reaches parts 0 to 39,993 (the part
    // at 479,928 does not start before the end): 39,994. 26 reads make
    // 1,039,844; the 27th goes over (80,000 + 2 + 27 x 4 steps).
    let pairs = "DW_OP_reg0 DW_OP_piece 1 DW_OP_reg1 DW_OP_piece 2 ".repeat(20_000);
    let _ = write!(
        yaml,
        r#"  - name: varied-parts-read-loop
    rules: [expr.budget.work]
    context: {{ result: location, registers: {{ rax: 5, rdx: 7 }} }}
    expr: "{pairs}DW_OP_LLVM_piece_end DW_OP_LLVM_offset_uconst 59990 DW_OP_dup DW_OP_deref_size 1 DW_OP_drop DW_OP_skip -7"
    expect: {{ budget: work, at: 120006 }}
"#
    );
    both_meet("walk-loops", &yaml, 4);
}

#[test]
fn a_call_chain_at_the_depth_ceiling_and_a_long_location_list_end_under_a_memory_cap() {
    // A DIE that calls itself with the deepest depth a case may ask for:
    // level 129 is refused at the outermost call (offset 1).
    let mut yaml = format!(
        r#"
target: x86_64
cases:
  - name: call-chain-at-the-ceiling
    rules: [op.call.depth-budget]
    context:
      result: value
      budgets: {{ depth: {} }}
      cu: {{ offset: 0x100, dies: {{ 0x140: {{ location: "DW_OP_call2 0x40" }} }} }}
    expr: "DW_OP_nop DW_OP_call2 0x40"
    expect: {{ budget: depth, at: 1 }}
"#,
        Budgets::CEILING.depth
    );
    // 50,000 entries, each a different memory place covering the pc: the
    // location is all of them (loclist.union), 50,000 steps in all.
    let n = 50_000u64;
    let mut entries = String::new();
    let mut places = String::new();
    for i in 0..n {
        let addr = 0x10_0000 + 8 * i;
        let _ = write!(
            entries,
            "{}{{ start_length: [0x1000, 0x100], expr: \"DW_OP_addr {addr:#x}\" }}",
            if i > 0 { ", " } else { "" }
        );
        let _ = write!(places, "{}{{ memory: {addr:#x} }}", if i > 0 { ", " } else { "" });
    }
    let _ = write!(
        yaml,
        r#"  - name: long-location-list
    rules: [loclist.union]
    attribute: location
    loclistx: 0
    context:
      pc: 0x1010
      cu: {{ loclists: [ [ {entries} ] ] }}
    expect:
      location: {{ any_of: [ {places} ] }}
"#
    );
    both_meet("calls-and-lists", &yaml, 2);
}

#[test]
fn a_case_file_cannot_raise_a_budget_past_its_ceiling() {
    // Issue 13's second reproduction: depth 5,000 overflowed the native
    // stack. Now the file is refused, at the line of the budget.
    let yaml = "target: x86_64\ncases:\n  - name: deep\n    rules: [op.call.depth-budget]\n    context:\n      result: value\n      budgets: { depth: 5000 }\n      cu: { offset: 0x100, dies: { 0x140: { location: \"DW_OP_call2 0x40\" } } }\n    expr: \"DW_OP_call2 0x40\"\n    expect: { budget: depth }\n";
    let errors = match load_str("deep.yaml", yaml) {
        Ok(_) => panic!("a depth of 5000 was accepted"),
        Err(e) => e,
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert_eq!((e.file.as_str(), e.line), ("deep.yaml", 7), "{e:?}");
    assert!(e.message.contains("depth") && e.message.contains("5000") && e.message.contains("128"), "{e:?}");
}

/// The case of `yaml` (one expression case).
fn one_case(yaml: &str) -> dwarfcheck::case::ExprCase {
    match load_str("t.yaml", yaml).unwrap_or_else(|e| panic!("{e:?}")).remove(0) {
        Case::Expr(c) => c,
        Case::Cfi(_) => panic!("not an expression case"),
    }
}

#[test]
fn the_deepest_nesting_fits_a_two_mib_thread_stack() {
    // Each nesting shape with the depth budget at its ceiling, and then
    // with a machine state that asks for far more (the evaluators clamp it
    // to the ceiling), on a thread with a 2 MiB stack: both evaluators
    // report the depth budget at the outermost operation, hand-derived.
    let shapes = [
        // A DIE calling itself: reported at the outermost call (offset 1).
        (
            "context: { result: value, cu: { offset: 0x100, dies: { 0x140: { location: \"DW_OP_call2 0x40\" } } } }\n    expr: \"DW_OP_nop DW_OP_call2 0x40\"",
            1,
        ),
        // A frame base that reaches the frame base again through a call
        // (a frame base containing DW_OP_fbreg itself is ill-formed before
        // it runs, attr.frame-base.fbreg; one reached through DW_OP_call*
        // is not checked): DW_OP_fbreg at offset 0.
        (
            "context: { result: location, frame_base: \"DW_OP_call2 0x40\", cu: { offset: 0x100, dies: { 0x140: { location: \"DW_OP_fbreg 0\" } } } }\n    expr: \"DW_OP_fbreg 0\"",
            0,
        ),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for (body, at) in shapes {
                let yaml =
                    format!("target: x86_64\ncases:\n  - name: deep\n    rules: [op.call.depth-budget]\n    {body}\n");
                let mut case = one_case(&yaml);
                let want = Outcome::Failed(Failure::Budget { budget: BudgetKind::Depth, at: Some(at) });
                for depth in [Budgets::CEILING.depth, u32::MAX] {
                    std::sync::Arc::make_mut(&mut case.ctx).budgets.depth = depth;
                    assert_eq!(reference_outcome(&case).0, want, "reference, depth {depth}: {body}");
                    assert_eq!(fast_outcome(&case), want, "fast, depth {depth}: {body}");
                }
            }
        })
        .unwrap();
    handle.join().expect("the nesting shapes ran out of stack or failed");
}

#[test]
fn a_composite_nested_twenty_thousand_deep_fits_a_two_mib_thread_stack() {
    // A loop that pieces the composite on top into a new composite 20,000
    // times (constu 20000 at 0, reg0 4, piece 1 5, piece_end 7; loop at 8:
    // piece 1, piece_end, swap, lit1, minus, dup, bra +4 to 22; 18: drop,
    // skip +4 to the end; 22: swap, skip -18 back to 8). Its meaning is the
    // one-level composite `reg0; piece 1`, and neither evaluator may
    // recurse 20,000 deep to find it.
    let nested = "target: x86_64\nvendor: hetero-2020\ncases:\n  - name: nested\n    rules: [op.piece.pops-part-creates]\n    context: { result: location, budgets: { steps: 1000000 } }\n    expr: \"DW_OP_constu 20000 DW_OP_reg0 DW_OP_piece 1 DW_OP_LLVM_piece_end DW_OP_piece 1 DW_OP_LLVM_piece_end DW_OP_swap DW_OP_lit1 DW_OP_minus DW_OP_dup DW_OP_bra 4 DW_OP_drop DW_OP_skip 4 DW_OP_swap DW_OP_skip -18\"\n";
    let flat = "target: x86_64\ncases:\n  - name: flat\n    rules: [op.piece.pops-part-creates]\n    context: { result: location }\n    expr: \"DW_OP_reg0 DW_OP_piece 1\"\n";
    let (nested, flat) = (one_case(nested), one_case(flat));
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let want = reference_outcome(&flat).0;
            assert!(matches!(want, Outcome::Location(_)), "{want:?}");
            assert_eq!(reference_outcome(&nested).0, want, "reference");
            assert_eq!(fast_outcome(&nested), want, "fast");
        })
        .unwrap();
    handle.join().expect("nested composites ran out of stack or differed");
}
