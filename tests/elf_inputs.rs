//! `dwarfcheck elf` over several inputs: an input that cannot be read costs
//! only itself (issue 13, "partial failure is not fatal"), a time budget
//! per input reports what it did not finish, and checking units in
//! parallel with verdicts folded as they come gives the summary of the
//! files checked one at a time, holding only a few units' cases at once
//! (issue 14).

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
    let started = std::time::Instant::now();
    let (title, full) = run("100000");
    let full_run = started.elapsed().as_secs_f64();
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

    // A budget that ends the work part way (a quarter of the full run's
    // time, start-up included): what was read plus what was not is the
    // whole, and the cases extracted are either checked or counted as not
    // checked.
    let (title, part) = run(&format!("{:.4}", (full_run / 4.0).max(0.0001)));
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

/// libc6-dbg's debug files, the largest three and the first `first` of
/// the others in path order, then libc.so.6 (FDEs of `.eh_frame`, some
/// unwound) and a path that does not exist; `None` (skipped) without
/// libc6-dbg.
fn many_inputs(first: usize) -> Option<Vec<PathBuf>> {
    let all = dwarfcheck::elf::debug_files();
    let all = dwarfcheck::testing::needed("libc6-dbg", (!all.is_empty()).then_some(all))?;
    let mut by_size = all.clone();
    by_size.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)));
    let largest: Vec<PathBuf> = by_size.into_iter().take(3).collect();
    let rest = all.into_iter().filter(|p| !largest.contains(p)).take(first);
    let mut files: Vec<PathBuf> = largest.iter().cloned().chain(rest).collect();
    files.push(PathBuf::from("/usr/lib/x86_64-linux-gnu/libc.so.6"));
    files.push(PathBuf::from("/nonexistent/dwarfcheck-input.so"));
    Some(files)
}

/// The files one at a time, the way `elf` checked them before issue 14:
/// each extracted whole, its cases run at once, the summaries absorbed in
/// order; also the counts, the files read and the warnings.
fn one_at_a_time(
    files: &[PathBuf],
    others: &[Box<dyn dwarfcheck::consumer::Consumer>],
    run: &dwarfcheck::runner::Options,
) -> (dwarfcheck::runner::Summary, dwarfcheck::elf::Counts, usize, Vec<String>) {
    use dwarfcheck::case::Case;
    use dwarfcheck::consumer::builtin::{Fast, Reference};
    let mut total = dwarfcheck::runner::Summary::default();
    let (mut counts, mut read, mut warnings) = (dwarfcheck::elf::Counts::default(), 0, Vec::new());
    for f in files {
        match dwarfcheck::elf::extract(f, &dwarfcheck::elf::Options::default()) {
            Ok(x) => {
                read += 1;
                counts += x.counts;
                let input = f.display().to_string();
                warnings.extend(x.warnings.iter().map(|w| dwarfcheck::runner::files::warning_line(&input, w)));
                let cases: Vec<Case> =
                    x.exprs.into_iter().map(Case::Expr).chain(x.cfi.into_iter().map(Case::Cfi)).collect();
                total.absorb(dwarfcheck::runner::run(&cases, &Reference, &Fast, others, run), run.keep_details);
            }
            Err(e) => total.unreadable_inputs.push(dwarfcheck::runner::InputNote {
                input: f.display().to_string(),
                reason: e.reason(),
                expr_cases_not_checked: 0,
                cfi_cases_not_checked: 0,
                units_not_read: 0,
            }),
        }
    }
    (total, counts, read, warnings)
}

/// The checker `elf` uses, with a budget that does not bind.
fn checker<'a>(
    others: &'a [Box<dyn dwarfcheck::consumer::Consumer>],
    run: &dwarfcheck::runner::Options,
) -> dwarfcheck::runner::files::FileChecker<'a> {
    use dwarfcheck::consumer::builtin::{Fast, Reference};
    dwarfcheck::runner::files::FileChecker {
        extract: dwarfcheck::elf::Options::default(),
        budget: std::time::Duration::from_secs(100_000),
        reference: &Reference,
        fast: &Fast,
        others,
        run: run.clone(),
    }
}

#[test]
fn a_multi_file_run_gives_the_summary_of_the_files_one_at_a_time() {
    let Some(files) = many_inputs(12) else { return };
    // gimli disagrees on a few cases of the largest files (docs/consumers.md,
    // G1 and G4): with room for 3 detailed findings, which ones are kept
    // depends on the order of the verdicts.
    let others: Vec<Box<dyn dwarfcheck::consumer::Consumer>> = vec![Box::new(dwarfcheck::consumer::gimli::Gimli)];
    let run = dwarfcheck::runner::Options { keep_details: 3, ..Default::default() };
    let (want, counts, read, warnings) = one_at_a_time(&files, &others, &run);
    let got = checker(&others, &run).check(&files);
    assert_eq!(got.counts, counts);
    assert_eq!((got.files_read, read), (files.len() - 1, files.len() - 1));
    assert_eq!(got.warnings, warnings);
    assert!(want.failure_count > want.failures.len(), "findings beyond the details kept: {}", want.failure_count);
    assert!(want.cfi_cases > 0 && want.unwind_cases > 0 && want.expr_cases > 0);
    assert_eq!(serde_json::to_value(&got.summary).unwrap(), serde_json::to_value(&want).unwrap());
}

#[test]
fn verdicts_are_folded_unit_by_unit_not_held_per_file() {
    let Some(files) = many_inputs(usize::MAX) else { return };
    let got = checker(&[], &dwarfcheck::runner::Options::default()).check(&files);
    let total = got.summary.expr_cases + got.summary.cfi_cases;
    let (peak, unit) = (got.peak_cases_held, got.largest_unit_cases);
    // Each thread holds the cases of the unit it checks (and, while it
    // waits for a helper, perhaps of one more it took up meanwhile):
    // nowhere near the cases of a whole file, let alone of all files.
    let threads = rayon::current_num_threads();
    assert!(unit > 0 && peak >= unit, "peak {peak}, largest unit {unit}");
    assert!(peak <= 4 * threads * unit, "peak {peak}, largest unit {unit}, {threads} threads");
    assert!(peak * 10 < total, "peak {peak} of {total} cases");
    eprintln!("peak {peak} cases held, largest unit {unit}, {total} cases, {threads} threads");
}

#[test]
fn cases_come_in_file_order_though_units_are_extracted_in_parallel() {
    let Some(debug) = dwarfcheck::testing::needed("libc6-dbg", dwarfcheck::elf::largest_debug_file()) else {
        return;
    };
    let offset = |name: &str, prefix: &str| {
        let hex = name.strip_prefix(prefix).unwrap().split('.').next().unwrap();
        u64::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap()
    };
    // Case names carry the DIE's offset in .debug_info: sequential
    // extraction gives them in increasing order.
    let x = dwarfcheck::elf::extract(&debug, &dwarfcheck::elf::Options::default()).unwrap();
    let dies: Vec<u64> = x.exprs.iter().map(|c| offset(&c.name, "die")).collect();
    assert!(x.counts.units > 100 && dies.len() > 10_000, "{:?}", x.counts);
    assert!(dies.windows(2).all(|w| w[0] <= w[1]), "expression cases out of DIE order");
    // And FDEs in section order, across runs of FDEs.
    let libc = Path::new("/usr/lib/x86_64-linux-gnu/libc.so.6");
    let x = dwarfcheck::elf::extract(libc, &dwarfcheck::elf::Options::default()).unwrap();
    let fdes: Vec<u64> = x.cfi.iter().map(|c| offset(&c.name, "eh_frame+")).collect();
    assert!(fdes.len() > dwarfcheck::elf::frames::FDES_PER_UNIT, "{} FDEs", fdes.len());
    assert!(fdes.windows(2).all(|w| w[0] < w[1]), "FDE cases out of section order");
}
