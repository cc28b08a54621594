//! Reports for CI, driven through the binary as a user would (issue 19
//! item 3): JUnit with a test case per case and consumer.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dwarfcheck-cli-reports-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn dwarfcheck(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).args(args).current_dir(dir).output().unwrap()
}

/// Two cases, one with a wrong `expect`: JUnit names each test case
/// `FILE:CASE [CONSUMER]`, so the reference's and fast's failures of the
/// same case are told apart, passing cases are test cases of their own,
/// and the failure text is the finding's details.
#[test]
fn junit_has_a_test_case_per_case_and_consumer() {
    let dir = scratch("junit");
    std::fs::write(
        dir.join("c.yaml"),
        "target: x86_64\ncases:\n\
         \x20 - name: right\n    rules: [op.addr.pushes-memory]\n    context: { result: location }\n\
         \x20   expr: \"DW_OP_addr 0x404040\"\n    expect: { location: { memory: 0x404040 } }\n\
         \x20 - name: wrong-expect\n    rules: [op.addr.pushes-memory]\n    context: { result: location }\n\
         \x20   expr: \"DW_OP_addr 0x404040\"\n    expect: { location: { memory: 0x505050 } }\n",
    )
    .unwrap();
    let out = dwarfcheck(&["run", "c.yaml", "--consumers", "gimli", "--junit", "j.xml"], &dir);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let xml = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    for consumer in ["reference", "fast", "gimli"] {
        assert!(xml.contains(&format!("name=\"c.yaml:right [{consumer}]\"/>")), "{consumer}: {xml}");
        assert!(xml.contains(&format!("name=\"c.yaml:wrong-expect [{consumer}]\"")), "{consumer}: {xml}");
    }
    assert!(xml.contains(r#"<testsuite name="reference" tests="2" failures="1" errors="0" skipped="0">"#), "{xml}");
    assert!(xml.contains(r#"<testsuite name="fast" tests="2" failures="1" errors="0" skipped="0">"#), "{xml}");
    assert!(xml.contains(r#"<testsuite name="gimli" tests="2" failures="0" errors="0" skipped="0">"#), "{xml}");
    assert!(xml.contains("<failure message=\"reference does not meet the hand-derived expectation\">"), "{xml}");
    assert!(xml.contains("expected: location mem[0x505050]"), "{xml}");
    assert_eq!(xml.matches("<testcase ").count(), 6, "{xml}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The text summary's verdict table stays aligned when a consumer's name
/// is longer than the column used to be (the example protocol consumer
/// calls itself `example-python`): every line of the table has the same
/// length, and each count ends under its column's label.
#[test]
fn the_verdict_table_is_aligned() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = dwarfcheck(
        &[
            "run",
            "specs/cases/expr/memory.yaml",
            "--consumers",
            "gimli",
            "--consumer",
            "cmd:python3 examples/protocol_consumer.py",
        ],
        root,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("  consumer ")).take(4).collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines.iter().any(|l| l.starts_with("  example-python ")), "{text}");
    assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{text}");
    let agree_end = lines[0].find("agree").unwrap() + "agree".len();
    let gimli = lines.iter().find(|l| l.starts_with("  gimli")).unwrap();
    assert!(gimli[..agree_end].ends_with(|c: char| c.is_ascii_digit()), "{text}");
    assert_eq!(gimli.as_bytes()[agree_end], b' ', "{text}");
}

/// `synth` describes what it wrote in words: the files, the variable's C
/// type and size, that `DW_OP_stack_value` was appended for a value, the
/// pc; never a Rust debug dump.
#[test]
fn synth_output_is_for_people() {
    let dir = scratch("synth");
    std::fs::write(
        dir.join("v.yaml"),
        "target: x86_64\ncases:\n  - name: three\n    rules: [op.lit.pushes-generic]\n    \
         context: { result: value }\n    expr: \"DW_OP_lit3\"\n    expect: { value: 3 }\n",
    )
    .unwrap();
    let out = dwarfcheck(&["synth", "v.yaml", "--case", "three"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("wrote ./three (executable) and ./three.core (core file)\n"), "{text}");
    assert!(text.contains("variable v:       unsigned char[8] (8 byte(s)), DW_OP_stack_value appended"), "{text}");
    assert!(text.contains("stopped at pc:    0x555500000000"), "{text}");
    assert!(!text.contains("Bytes {") && !text.contains("stack_value: true"), "{text}");
    assert!(dir.join("three").is_file() && dir.join("three.core").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// An ELF whose `.debug_info` is cut short (its unit's bytes overwritten
/// past the header): the warning names the file once, the run exits 0,
/// and with `--strict` it exits 1. The ELF is compiled here by `cc -g`.
#[test]
fn corrupted_dwarf_warns_once_per_path_and_fails_under_strict() {
    use object::{Object as _, ObjectSection as _};
    let dir = scratch("strict");
    std::fs::write(
        dir.join("a.c"),
        "int g;\nint f(int x) { int y = x * 2; g = y; return y + 1; }\nint main(void) { return f(3); }\n",
    )
    .unwrap();
    let cc = Command::new("cc").args(["-O2", "-g", "a.c", "-o", "a"]).current_dir(&dir).status();
    if !cc.is_ok_and(|s| s.success()) {
        eprintln!("no C compiler; skipped");
        return;
    }
    let mut bytes = std::fs::read(dir.join("a")).unwrap();
    let (off, len) = {
        let f = object::File::parse(&*bytes).unwrap();
        let s = f.section_by_name(".debug_info").expect(".debug_info");
        let (o, l) = s.file_range().unwrap();
        (o as usize, l as usize)
    };
    // Keep the unit header (12 bytes in DWARF 5's 32-bit format) and the
    // first DIE's abbreviation code; fill the rest with bytes no DIE reads.
    for b in &mut bytes[off + 40..off + len] {
        *b = 0xfe;
    }
    std::fs::write(dir.join("bad"), &bytes).unwrap();
    let out = dwarfcheck(&["elf", "--consumers", "none", "bad"], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let warning = err.lines().find(|l| l.contains("warning:")).unwrap_or_else(|| panic!("no warning: {err}"));
    assert!(warning.starts_with("bad: warning: unit at 0x0: "), "{warning}");
    assert_eq!(warning.matches("bad").count(), 1, "{warning}");
    let strict = dwarfcheck(&["elf", "--consumers", "none", "--strict", "bad"], &dir);
    assert_eq!(strict.status.code(), Some(1), "{}", String::from_utf8_lossy(&strict.stderr));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("1 warning(s) about corrupted input (--strict)"));
    // The file as compiled has no warning, and --strict passes.
    assert_eq!(dwarfcheck(&["elf", "--consumers", "none", "--strict", "a"], &dir).status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `synth` with a case name the file lacks names the nearest one.
#[test]
fn synth_suggests_the_case_name() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = dwarfcheck(&["synth", "specs/cases/expr/memory.yaml", "--case", "adr", "--out", "/nonexistent"], root);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no case named `adr`") && err.contains("did you mean `addr`?"), "{err}");
}

/// `completions SHELL` prints a script the shell loads: bash's defines the
/// completion function and registers it; zsh's starts with `#compdef`;
/// each knows the subcommands.
#[test]
fn completions_for_bash_and_zsh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bash = dwarfcheck(&["completions", "bash"], root);
    assert_eq!(bash.status.code(), Some(0));
    let text = String::from_utf8_lossy(&bash.stdout);
    assert!(text.contains("_dwarfcheck()") && text.contains("complete -F _dwarfcheck"), "{text}");
    assert!(text.contains("matrix") && text.contains("igc-dwarf") && text.contains("--strict"), "bash");
    let zsh = dwarfcheck(&["completions", "zsh"], root);
    assert!(String::from_utf8_lossy(&zsh.stdout).starts_with("#compdef dwarfcheck"));
    assert_eq!(dwarfcheck(&["completions", "tcsh"], root).status.code(), Some(2));
}

/// `--color always` marks the verdict line, `never` and the default on a
/// pipe do not; `--quiet` leaves out the notes on stderr but not the
/// result.
#[test]
fn color_and_quiet() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "specs/cases/expr/memory.yaml", "--consumers", "none"];
        args.extend_from_slice(extra);
        String::from_utf8_lossy(&dwarfcheck(&args, root).stdout).into_owned()
    };
    assert!(run(&["--color", "always"]).contains("\x1b[32mno disagreements\x1b[0m"));
    assert!(!run(&["--color", "never"]).contains('\x1b'));
    assert!(!run(&[]).contains('\x1b'));
    let dir = scratch("quiet");
    let cases = root.join("specs/cases/expr/memory.yaml");
    let matrix = |q: &[&str]| {
        let mut args = vec!["matrix", cases.to_str().unwrap(), "--consumers", "none", "--out", "m.md"];
        args.extend_from_slice(q);
        dwarfcheck(&args, &dir)
    };
    let loud = matrix(&[]);
    assert!(String::from_utf8_lossy(&loud.stderr).contains("dwarfcheck matrix: wrote m.md"));
    let quiet = matrix(&["--quiet"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    assert!(std::fs::read_to_string(dir.join("m.md")).unwrap().contains("# Conformance matrix"));
    let _ = std::fs::remove_dir_all(&dir);
}
