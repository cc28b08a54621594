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

/// The number just before `word` in the `elf` report's title.
fn count_before(title: &str, word: &str) -> u64 {
    let head = &title[..title.find(word).unwrap_or_else(|| panic!("{word} in {title}"))];
    head.trim_end().rsplit(' ').next().unwrap().parse().unwrap_or_else(|e| panic!("{e}: {title}"))
}

/// Compilation units `llvm-dwarfdump-19 --debug-info` lists in `path`, if
/// it is installed (an independent oracle).
fn dwarfdump_units(path: &Path) -> Option<u64> {
    let o = Command::new("llvm-dwarfdump-19").arg("--debug-info").arg(path).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).matches(": Compile Unit:").count() as u64)
}

#[test]
fn a_time_budget_reports_what_it_did_not_finish() {
    let Some(debug) = dwarfcheck::testing::needed("libc6-dbg", dwarfcheck::elf::largest_debug_file()) else {
        return;
    };
    let debug = debug.to_str().unwrap();
    let run = |budget: &str| {
        let o = dwarfcheck(&["elf", "--consumers", "none", "--json", "--time-budget", budget, debug]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let j = json(&o);
        (j["job"].as_str().unwrap().to_string(), j["summary"].clone())
    };
    // Without a binding budget: every unit read, every case checked.
    let (title, full) = run("100000");
    let units = count_before(&title, " units:");
    let cases = count_before(&title, " location expressions") + count_before(&title, " location-list entries");
    assert_eq!(full["expr_cases"].as_u64(), Some(cases));
    assert_eq!(full["unfinished_inputs"], serde_json::json!([]));
    if let Some(n) = dwarfdump_units(Path::new(debug)) {
        assert_eq!(units, n);
    }

    // A budget of 0: nothing is read, and the note says how many units.
    let (_, none) = run("0");
    let notes = none["unfinished_inputs"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{none}");
    assert_eq!(notes[0]["input"].as_str(), Some(debug));
    assert!(notes[0]["reason"].as_str().unwrap().contains("time budget of 0 s ran out"), "{none}");
    assert_eq!(notes[0]["units_not_read"].as_u64(), Some(units));
    assert_eq!(none["expr_cases"].as_u64(), Some(0));

    // A budget that ends the work part way (the full run takes seconds):
    // what was read plus what was not is the whole, and the cases
    // extracted are either checked or counted as not checked.
    let (title, part) = run("0.3");
    let notes = part["unfinished_inputs"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{part}");
    let read_units = count_before(&title, " units:");
    assert_eq!(read_units + notes[0]["units_not_read"].as_u64().unwrap(), units, "{title} {part}");
    let extracted = count_before(&title, " location expressions") + count_before(&title, " location-list entries");
    let (checked, left) = (part["expr_cases"].as_u64().unwrap(), part["expr_cases_not_checked"].as_u64().unwrap());
    assert_eq!(checked + left, extracted, "{title} {part}");
    assert_eq!(notes[0]["expr_cases_not_checked"].as_u64(), Some(left));
    assert!(extracted <= cases && checked < cases, "{title} {part}");
}
