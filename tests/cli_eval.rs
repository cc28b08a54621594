//! `dwarfcheck eval` as a user runs it: expressions as text or hex, the
//! context from options or a `context:` file, verdicts per consumer, the
//! trace, errors that suggest the fix, and `--emit-case` output that the
//! case loader runs back. Expected values are derived by hand from each
//! command line.

use std::path::PathBuf;
use std::process::{Command, Output};

fn dwarfcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).args(args).output().expect("binary runs")
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dwarfcheck-cli-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The output line that starts with `prefix`.
fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line `{prefix}` in:\n{out}"))
}

/// Runs `args`, expecting exit status `code`; returns stdout.
fn ok(args: &[&str], code: i32) -> String {
    let o = dwarfcheck(args);
    assert_eq!(o.status.code(), Some(code), "{args:?}\n{}{}", stdout(&o), stderr(&o));
    stdout(&o)
}

/// `rsp` = 0x1000 and the 8 bytes at 0x1008 holding 0x2a.
const STACK: [&str; 4] = ["--reg", "rsp=0x1000", "--mem", "0x1008=2a 00 00 00 00 00 00 00"];

#[test]
fn text_and_hex_pairs_are_the_same_expression() {
    // breg7 (rsp) + 8 = 0x1008; deref reads 0x2a; the value left is an
    // address: memory location 0x2a. gimli reads it the same way.
    let mut args = vec!["eval", "DW_OP_breg7 RSP+8, DW_OP_deref"];
    args.extend(STACK);
    let text = ok(&args, 0);
    assert_eq!(line(&text, "bytes:"), "bytes: 77 08 06");
    args[1] = "77 08 06";
    let hex = ok(&args, 0);
    assert_eq!(line(&hex, "text:"), "text:  DW_OP_breg7 RSP+8, DW_OP_deref");
    assert_eq!(text, hex);
    assert!(line(&hex, "reference:").ends_with("value generic64:0x000000000000002a"), "{hex}");
    assert!(line(&hex, "fast:").contains(" agree "), "{hex}");
    assert!(line(&hex, "gimli:").contains(" agree "), "{hex}");
}

#[test]
fn hex_option_and_nested_blocks_in_llvm_dwarfdump_spelling() {
    // a3 = DW_OP_entry_value, block of 1 byte: 50 = DW_OP_reg0; 9f = stack_value.
    let o = ok(&["eval", "--hex", "a3 01 50 9f", "--consumers", "none"], 0);
    assert_eq!(line(&o, "text:"), "text:  DW_OP_entry_value(DW_OP_reg0 RAX), DW_OP_stack_value");
    // The same as text, checked against the bytes; a wrong --hex is refused.
    ok(&["eval", "DW_OP_entry_value(DW_OP_reg0) DW_OP_stack_value", "--hex", "a3 01 50 9f", "--consumers", "none"], 0);
    let o = dwarfcheck(&["eval", "DW_OP_entry_value(DW_OP_reg0)", "--hex", "a3 01 51"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("assembles to `a3 01 50`, not to --hex `a3 01 51`"), "{}", stderr(&o));
    // 9e = DW_OP_implicit_value, length 2, bytes 01 02: implicit storage.
    let o = ok(&["eval", "DW_OP_implicit_value 0x2 0x01 0x02"], 0);
    assert_eq!(line(&o, "bytes:"), "bytes: 9e 02 01 02");
    assert!(line(&o, "reference:").ends_with("location implicit[0102]"), "{o}");
}

#[test]
fn frame_base_cfa_object_tls_and_result_from_options() {
    // fbreg -8 from a frame base of rbp + 16 = 0x2010: 0x2008.
    for fb in ["DW_OP_breg6 RBP+16", "76 10"] {
        let o = ok(&["eval", "DW_OP_fbreg -8", "--frame-base", fb, "--reg", "rbp=0x2000"], 0);
        assert!(line(&o, "reference:").ends_with("location mem[0x2008]"), "{o}");
    }
    let o = ok(&["eval", "DW_OP_call_frame_cfa", "--cfa", "0x7000"], 0);
    assert!(line(&o, "reference:").ends_with("location mem[0x7000]"), "{o}");
    let o = ok(&["eval", "DW_OP_push_object_address", "--object", "0x4000", "--consumers", "none"], 0);
    assert!(line(&o, "reference:").ends_with("location mem[0x4000]"), "{o}");
    // TLS base 0x100000 + offset 0x10.
    let o = ok(&["eval", "DW_OP_const1u 0x10 DW_OP_form_tls_address", "--tls", "0x100000", "--consumers", "none"], 0);
    assert!(line(&o, "reference:").ends_with("location mem[0x100010]"), "{o}");
    // --result value: lit3 is the value 3 of the generic (64-bit) type.
    let o = ok(&["eval", "DW_OP_lit3", "--result", "value", "--consumers", "none"], 0);
    assert!(line(&o, "reference:").ends_with("value generic64:0x0000000000000003"), "{o}");
}

#[test]
fn lane_and_address_space_from_options() {
    // hetero-2020 push_lane pushes the current lane (AMDGPU wave64: lanes 0-63).
    let o = ok(
        &[
            "eval",
            "DW_OP_LLVM_push_lane",
            "--target",
            "amdgpu-gfx90a",
            "--lane",
            "3",
            "--result",
            "value",
            "--consumers",
            "none",
        ],
        0,
    );
    assert!(line(&o, "reference:").ends_with("value generic64:0x0000000000000003"), "{o}");
    // The CFA in address space 1 of an AMDGPU target, read through --mem in the same space.
    let o = ok(
        &[
            "eval",
            "DW_OP_call_frame_cfa",
            "--target",
            "amdgpu-gfx90a",
            "--vendor",
            "hetero-2020",
            "--cfa",
            "0x40",
            "--aspace",
            "1",
            "--consumers",
            "none",
        ],
        0,
    );
    assert!(line(&o, "reference:").ends_with("location mem(as1)[0x40]"), "{o}");
}

#[test]
fn context_file_gives_dies_and_memory() {
    // call4 runs DIE 0x40's location (lit5, an address), then deref reads
    // the generic-size (8-byte) value at address 5: 7.
    let ctx = temp_file(
        "ctx.yaml",
        "memory:\n  - { at: 0x5, bytes: \"07 00 00 00 00 00 00 00\" }\ncu:\n  dies:\n    0x40: { location: \"DW_OP_lit5\" }\n",
    );
    let o = ok(&["eval", "DW_OP_call4 0x40 DW_OP_deref", "--context", ctx.to_str().unwrap(), "--consumers", "none"], 0);
    assert!(line(&o, "reference:").ends_with("value generic64:0x0000000000000007"), "{o}");
    // A DIE whose location is a location list: the entry [0x1000, 0x1010)
    // gives lit7 (address 7) at --pc 0x1008; at 0x2000 no entry applies:
    // an empty location list is the undefined location.
    let ll = temp_file(
        "loclist.yaml",
        "# a DIE with a location list\ncu:\n  base_address: 0x1000\n  loclists:\n    - [ { offset_pair: [0x0, 0x10], expr: \"DW_OP_lit7\" } ]\n  dies:\n    0x40: { loclistx: 0 }\n",
    );
    let ll = ll.to_str().unwrap();
    let o = ok(&["eval", "DW_OP_call4 0x40", "--context", ll, "--pc", "0x1008", "--consumers", "none"], 0);
    assert!(line(&o, "reference:").ends_with("location mem[0x7]"), "{o}");
    let o = ok(&["eval", "DW_OP_call4 0x40", "--context", ll, "--pc", "0x2000", "--consumers", "none"], 0);
    assert!(line(&o, "reference:").ends_with("location undefined"), "{o}");
    emitted_case_runs(&["eval", "DW_OP_call4 0x40", "--context", ll, "--pc", "0x1008"], "emit-loclist.yaml");
    // Comments only: the default context.
    let none = temp_file("comments.yaml", "# nothing here\n");
    ok(&["eval", "DW_OP_lit0", "--context", none.to_str().unwrap(), "--consumers", "none"], 0);
    // An error in the file is located in the file, with a suggestion.
    let bad = temp_file("bad.yaml", "pc: 0x10\nregisters: { rspp: 1 }\n");
    let o = dwarfcheck(&["eval", "DW_OP_lit0", "--context", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains(&format!("{}:2:", bad.display())), "{e}");
    assert!(e.contains("did you mean `rsp`"), "{e}");
}

#[test]
fn verdict_lines_name_a_disagreement() {
    // G7 of docs/consumers.md: an emptied stack is an undefined location;
    // gimli disagrees.
    let o = dwarfcheck(&["eval", "DW_OP_call_frame_cfa DW_OP_drop", "--cfa", "0x1000", "--result", "location"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(line(&out, "reference:").ends_with("location undefined"), "{out}");
    assert!(line(&out, "fast:").contains(" agree "), "{out}");
    assert!(line(&out, "gimli:").contains(" DISAGREE (G7) "), "{out}");
    // --consumers none: no gimli line.
    let out = ok(&["eval", "DW_OP_lit0", "--consumers", "none"], 0);
    assert!(!out.contains("gimli:"), "{out}");
    assert!(out.contains("fast:"), "{out}");
}

#[test]
fn trace_shows_the_failing_first_operation() {
    let o = ok(&["eval", "DW_OP_breg7 RSP+0", "--trace", "--consumers", "none"], 0);
    let l = line(&o, "0x0000");
    assert!(l.contains("DW_OP_breg7 RSP+0") && l.contains("fails:") && l.contains("ctx.register-unavailable"), "{o}");
    // A later failure: the steps before it, then the failing operation at byte 1.
    let o = ok(&["eval", "DW_OP_lit1 DW_OP_deref", "--trace", "--consumers", "none"], 0);
    assert!(line(&o, "0x0000").contains("DW_OP_lit1"), "{o}");
    assert!(line(&o, "0x0001").contains("DW_OP_deref") && line(&o, "0x0001").contains("fails:"), "{o}");
}

#[test]
fn errors_suggest_the_fix() {
    let e = stderr(&dwarfcheck(&["eval", "--target", "x86_64", "DW_OP_LLVM_offset"]));
    assert!(e.contains("no encoding under vendor profile `gnu`") && e.contains("--vendor hetero-2020"), "{e}");
    let e = stderr(&dwarfcheck(&["eval", "DW_OP_lit1 DW_OP_derf"]));
    assert!(e.contains("did you mean `DW_OP_deref`"), "{e}");
    let e = stderr(&dwarfcheck(&["eval", "DW_OP_bregx rspp 0"]));
    assert!(e.contains("did you mean `rsp`"), "{e}");
    let o = dwarfcheck(&["eval", "DW_OP_lit0", "--reg", "rspp=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("did you mean `rsp`"), "{}", stderr(&o));
    let e = stderr(&dwarfcheck(&["eval", "DW_OP_lit0", "--target", "x86_6"]));
    assert!(e.contains("did you mean `x86_64`"), "{e}");
}

#[test]
fn limits_are_enforced() {
    // 256 KiB of --mem in all: 5 segments of 60,000 bytes pass it.
    let seg = format!("0x0={}", "00".repeat(60_000));
    let mut args = vec!["eval", "DW_OP_lit0"];
    for _ in 0..5 {
        args.extend(["--mem", seg.as_str()]);
    }
    let o = dwarfcheck(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("262144 bytes"), "{}", stderr(&o));
}

#[test]
fn help_explains_the_default_context() {
    let o = ok(&["eval", "--help"], 0);
    assert!(o.contains("Every register is unavailable"), "{o}");
    assert!(o.contains("--mem"), "{o}");
    assert!(o.contains("65,536 expression bytes"), "{o}");
}

/// Emits a case, loads it back with `dwarfcheck run`, and returns the case file.
fn emitted_case_runs(args: &[&str], name: &str) -> String {
    let mut a = args.to_vec();
    a.push("--emit-case");
    let yaml = ok(&a, 0);
    let f = temp_file(name, &yaml);
    let o = dwarfcheck(&["run", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{yaml}\n{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("hand-derived expectations: 1 checked; reference met 1, fast met 1"), "{}", stdout(&o));
    yaml
}

#[test]
fn emitted_cases_load_and_pass() {
    let mut args = vec!["eval", "DW_OP_breg7 RSP+8, DW_OP_deref"];
    args.extend(STACK);
    let y = emitted_case_runs(&args, "emit-mem.yaml");
    assert!(y.contains("expect: { value: 0x2a }"), "{y}");
    let y = emitted_case_runs(&["eval", "DW_OP_lit1 DW_OP_deref"], "emit-err.yaml");
    assert!(y.contains("expect: { eval_error: op.deref.memory-unreadable, at: 1 }"), "{y}");
    let y = emitted_case_runs(
        &["eval", "DW_OP_reg0 DW_OP_piece 4 DW_OP_implicit_value 0x2 0x01 0x02 DW_OP_piece 2"],
        "emit-comp.yaml",
    );
    assert!(
        y.contains(
            "expect: { location: { composite: [ { bits: 32, register: 0 }, { bits: 16, implicit: \"0102\" } ] } }"
        ),
        "{y}"
    );
    let y = emitted_case_runs(&["eval", "DW_OP_lit3", "--result", "value"], "emit-val.yaml");
    assert!(y.contains("expect: { value: 0x3 }"), "{y}");
    let ctx = temp_file("emit-ctx.yaml", "cu:\n  dies:\n    0x40: { location: \"DW_OP_lit5\" }\n");
    emitted_case_runs(&["eval", "DW_OP_call4 0x40", "--context", ctx.to_str().unwrap()], "emit-dies.yaml");
}
