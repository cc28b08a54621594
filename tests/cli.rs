//! End-to-end tests of the `dwarfcheck` binary: exit statuses, located
//! errors, and that hostile input ends with an outcome, not a hang or panic.

use std::path::PathBuf;
use std::process::{Command, Output};

fn dwarfcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).args(args).output().expect("binary runs")
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dwarfcheck-cli-{}", std::process::id()));
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

#[test]
fn bundled_suite_passes() {
    let o = dwarfcheck(&["run"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("expression cases"));
}

#[test]
fn every_rule_is_covered() {
    let o = dwarfcheck(&["coverage", "--fail-uncovered"]);
    let out = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        out.lines().filter(|l| !l.starts_with("ok")).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn bad_yaml_is_an_input_error_with_location() {
    let p = temp_file("bad.yaml", "target: x86_64\ncases:\n  - name: a\n    rules: [expr.decode.unknown-opcode\n");
    let o = dwarfcheck(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains(&format!("{}:", p.display())), "{e}");
    assert!(e.lines().next().unwrap().split(':').nth(1).unwrap().parse::<usize>().is_ok(), "line number in {e}");
}

#[test]
fn a_wrong_expectation_fails_the_run() {
    // DW_OP_lit1 yields 1, not 2: the reference misses the expectation.
    let p = temp_file(
        "wrong.yaml",
        "target: x86_64\ncases:\n  - name: lit1-is-not-2\n    rules: [op.lit.pushes-generic]\n    context: { result: value }\n    expr: DW_OP_lit1\n    expect: { value: 2 }\n",
    );
    let o = dwarfcheck(&["run", "--consumers", "none", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("lit1-is-not-2"));
}

#[test]
fn branch_loop_ends_in_a_budget_outcome() {
    // DW_OP_skip -3 jumps back to itself forever.
    let o = dwarfcheck(&["eval", "DW_OP_skip -3"]);
    let out = stdout(&o);
    assert!(out.contains("reference:") && out.contains("budget"), "{out}");
    assert!(out.lines().find(|l| l.starts_with("fast:")).unwrap().contains("budget"), "{out}");
}

#[test]
fn garbage_elf_is_an_input_error() {
    let p = temp_file("garbage.elf", "\x7fELF this is not really an ELF file");
    let o = dwarfcheck(&["elf", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn unknown_gate_is_a_usage_error() {
    let o = dwarfcheck(&["run", "--gate", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn unknown_vendor_profile_is_a_usage_error() {
    let o = dwarfcheck(&["elf", "--vendor", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected one of dwarf5"));
}

#[test]
fn minimize_refuses_an_input_that_passes() {
    // DW_OP_lit1: both evaluators agree, gimli too; nothing to minimise.
    let dir = std::env::temp_dir().join(format!("dwarfcheck-min-{}", std::process::id())).join("expr_bytes");
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("crash-lit1");
    std::fs::write(&input, [0x31u8]).unwrap();
    let o = dwarfcheck(&["minimize", input.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("does not fail"), "{}", stderr(&o));
}

#[test]
fn export_corpus_writes_seeds_that_pass_their_targets() {
    use dwarfcheck::fuzzing::targets::Target;
    let out = std::env::temp_dir().join(format!("dwarfcheck-corpus-{}", std::process::id()));
    let o = dwarfcheck(&["export-corpus", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    for t in [Target::ExprBytes, Target::CfiBytes, Target::CaseYaml] {
        let seeds: Vec<_> = std::fs::read_dir(out.join(t.name())).unwrap().flatten().collect();
        // The bundled suite has hundreds of expression cases, hundreds of
        // CFI cases and dozens of files.
        assert!(seeds.len() >= 20, "{}: {} seeds", t.name(), seeds.len());
        for s in seeds.iter().step_by(7) {
            let data = std::fs::read(s.path()).unwrap();
            t.check(&data).unwrap_or_else(|m| panic!("{}: {m}", s.path().display()));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
