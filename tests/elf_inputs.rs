//! `dwarfcheck elf` over several inputs: an input that cannot be read costs
//! only itself (issue 13, "partial failure is not fatal"), and a time
//! budget per input reports what it did not finish.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dwarfcheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).args(args).output().expect("binary runs")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dwarfcheck-elf-inputs-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small optimised C program with DWARF 5 locations and CFI, built by
/// gcc into `dir`; `None` (skipped) without gcc.
fn small_program(dir: &Path) -> Option<PathBuf> {
    let have = dwarfcheck::testing::needed("gcc", dwarfcheck::testing::have_tool("gcc").then_some(()));
    have?;
    let src = dir.join("p.c");
    std::fs::write(
        &src,
        "int g;\n__attribute__((noinline)) int f(int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += p[i] * g; return s; }\nint main(int c, char **v) { int a[4] = {c, 2, 3, 4}; g = c; return f(a, c + 2); }\n",
    )
    .unwrap();
    let exe = dir.join("p");
    let ok = Command::new("gcc").args(["-g", "-gdwarf-5", "-O2", "-o"]).arg(&exe).arg(&src).status();
    assert!(ok.is_ok_and(|s| s.success()), "gcc builds the program");
    Some(exe)
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn unreadable_inputs_are_listed_and_the_others_checked() {
    let dir = temp_dir("partial");
    let Some(good) = small_program(&dir) else { return };
    let missing = dir.join("missing.so");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not an ELF file\n").unwrap();
    let (good, missing, text) = (good.to_str().unwrap(), missing.to_str().unwrap(), text.to_str().unwrap());

    // Oracle: the good file checked alone.
    let alone = dwarfcheck(&["elf", "--consumers", "none", "--json", good]);
    assert_eq!(alone.status.code(), Some(0));
    let alone = json(&alone)["summary"].clone();
    assert!(alone["expr_cases"].as_u64().unwrap() > 0 && alone["cfi_cases"].as_u64().unwrap() > 0, "{alone}");

    let mixed = dwarfcheck(&["elf", "--consumers", "none", "--json", missing, good, text]);
    assert_eq!(mixed.status.code(), Some(0), "{}", String::from_utf8_lossy(&mixed.stderr));
    let mut summary = json(&mixed)["summary"].clone();
    let unreadable = summary["unreadable_inputs"].as_array().unwrap().clone();
    let listed: Vec<(&str, &str)> =
        unreadable.iter().map(|n| (n["input"].as_str().unwrap(), n["reason"].as_str().unwrap())).collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[0].0, missing);
    assert!(listed[0].1.contains("cannot read"), "{listed:?}");
    assert_eq!(listed[1].0, text);
    assert!(listed[1].1.contains("not a readable ELF file"), "{listed:?}");
    // Everything else is what the good file gives alone.
    summary["unreadable_inputs"] = serde_json::json!([]);
    assert_eq!(summary, alone);

    // The text report lists them at its end; JUnit has them as errors.
    let junit = dir.join("r.xml");
    let o = dwarfcheck(&["elf", "--consumers", "none", "--junit", junit.to_str().unwrap(), missing, good, text]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    let tail = &out[out.find("inputs not checked (2):").expect("listed")..];
    assert!(tail.contains(missing) && tail.contains(text), "{out}");
    assert!(out.starts_with("dwarfcheck elf: 1 of 3 file(s)"), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<error message=").count(), 2, "{xml}");

    // Asked to, any unreadable input fails the run; none readable always does.
    let strict = dwarfcheck(&["elf", "--consumers", "none", "--strict-inputs", missing, good]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&strict.stdout).contains("inputs not checked (1):"));
    let none = dwarfcheck(&["elf", "--consumers", "none", missing, text]);
    assert_eq!(none.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
