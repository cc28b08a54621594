//! Split DWARF (`gcc -gsplit-dwarf`): `.dwo` files, a `.dwp` package, and
//! an executable's skeleton units with either beside it. Oracles:
//! `llvm-dwarfdump-19 --debug-info` on each `.dwo` (how many locations and
//! location-list entries), `nm` (the addresses the skeleton's `.debug_addr`
//! must resolve to).

use dwarfcheck::elf::{extract, Counts, Extracted, Options};
use dwarfcheck::testing::{have_tool, needed};
use dwarfcheck_core::outcome::{Outcome, SingleLocation, Source};
use std::path::{Path, PathBuf};
use std::process::Command;

const A_C: &str = "#include <stdio.h>
struct S { int a; long b; double c; };
__attribute__((noinline)) long f(struct S *s, int n) {
  long t = 0;
  for (int i = 0; i < n; i++) { t += s[i].a * s[i].b; if (t > 1000) t -= s[i].c; }
  return t;
}
static int g_counter = 3;
__thread long t_first = 7;
__thread int t_count = 5;
int main(int argc, char **argv) {
  t_count += argc + t_first;
  struct S arr[4] = {{1,2,3.0},{4,5,6.0},{argc,8,9.0},{10,11,12.0}};
  long r = f(arr, argc + 2);
  g_counter += r;
  printf(\"%ld %d %d %s\\n\", r, g_counter, t_count, argv[0]);
  return 0;
}
";
const B_C: &str = "int h(int x, int y) { int z = x * y; for (int i = 0; i < y; i++) z ^= i << x; return z + x; }\n";

/// Builds `prog`, `a.dwo` and `b.dwo` with `gcc -gsplit-dwarf -gdwarf-N
/// -O2` in a fresh directory (gcc runs there, so it is the units'
/// `DW_AT_comp_dir`). `None` (skipped) without gcc or llvm-dwarfdump-19.
fn build(version: u8) -> Option<PathBuf> {
    needed("gcc", have_tool("gcc").then_some(()))?;
    needed("llvm-dwarfdump-19", have_tool("llvm-dwarfdump-19").then_some(()))?;
    let dir = std::env::temp_dir().join(format!("dwarfcheck-split-{version}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.c"), A_C).unwrap();
    std::fs::write(dir.join("b.c"), B_C).unwrap();
    let gcc = |args: &[&str]| {
        let ok = Command::new("gcc").args(args).current_dir(&dir).status();
        assert!(ok.is_ok_and(|s| s.success()), "gcc {args:?}");
    };
    let v = format!("-gdwarf-{version}");
    gcc(&["-gsplit-dwarf", &v, "-O2", "-c", "a.c", "-o", "a.o"]);
    gcc(&["-gsplit-dwarf", &v, "-O2", "-c", "b.c", "-o", "b.o"]);
    gcc(&["a.o", "b.o", "-o", "prog"]);
    Some(dir)
}

/// What llvm-dwarfdump-19 lists in a `.dwo`: `DW_AT_location` and
/// `DW_AT_frame_base` attributes that are expressions, and location-list
/// entries that carry one.
fn dwarfdump_counts(dwo: &Path) -> (usize, usize) {
    let o = Command::new("llvm-dwarfdump-19").arg("--debug-info").arg(dwo).output().expect("llvm-dwarfdump-19 runs");
    let text = String::from_utf8_lossy(&o.stdout);
    let exprlocs = text
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("DW_AT_location") || l.starts_with("DW_AT_frame_base"))
        .filter(|l| l.split_once('(').is_some_and(|(_, r)| r.starts_with("DW_OP")))
        .count();
    let entries = text.lines().map(str::trim_start).filter(|l| l.starts_with("DW_LLE_") && l.contains("): ")).count();
    (exprlocs, entries)
}

/// The address `nm` gives the symbol `name` in `exe`.
fn nm_address(exe: &Path, name: &str) -> Option<u64> {
    let o = Command::new("nm").arg(exe).output().ok()?;
    String::from_utf8_lossy(&o.stdout).lines().find_map(|l| {
        let mut w = l.split_whitespace();
        let (addr, _, sym) = (w.next()?, w.next()?, w.next()?);
        (sym == name).then(|| u64::from_str_radix(addr, 16).ok()).flatten()
    })
}

/// The address of the TLS segment (`PT_TLS`) of `exe`, from `readelf -lW`.
fn tls_segment(exe: &Path) -> Option<u64> {
    let o = Command::new("readelf").arg("-lW").arg(exe).output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let line = text.lines().map(str::trim_start).find(|l| l.starts_with("TLS "))?;
    let vaddr = line.split_whitespace().nth(2)?;
    u64::from_str_radix(vaddr.trim_start_matches("0x"), 16).ok()
}

fn opts() -> Options {
    Options { frames: false, ..Options::default() }
}

/// The expression bytes and pc of every case, in order.
fn cases_of(x: &Extracted) -> Vec<(Vec<u8>, Option<u64>)> {
    x.exprs.iter().map(|c| (c.expr.to_vec(), c.ctx.pc)).collect()
}

/// Moves `names` of `dir` into `dir/away` (so they are not found).
fn hide(dir: &Path, names: &[&str]) {
    std::fs::create_dir_all(dir.join("away")).unwrap();
    for n in names {
        std::fs::rename(dir.join(n), dir.join("away").join(n)).unwrap();
    }
}

fn unhide(dir: &Path, names: &[&str]) {
    for n in names {
        std::fs::rename(dir.join("away").join(n), dir.join(n)).unwrap();
    }
}

/// The checks every DWARF version gets: counts against llvm-dwarfdump,
/// addresses through the skeleton against nm, a `.dwp` if a packager is
/// installed, and skeletons without their `.dwo` reported.
fn check(version: u8) {
    let Some(dir) = build(version) else { return };
    let prog = dir.join("prog");
    let (a, b) = (dwarfdump_counts(&dir.join("a.dwo")), dwarfdump_counts(&dir.join("b.dwo")));
    assert!(a.0 > 0 && a.1 > 0, "a.dwo has locations and location lists: {a:?}");

    // Each .dwo alone: its split unit, addresses unresolved.
    for (name, (exprlocs, entries)) in [("a.dwo", a), ("b.dwo", b)] {
        let x = extract(&dir.join(name), &opts()).unwrap();
        let c = x.counts;
        assert_eq!((c.units, c.split_units, c.skeletons_without_split), (1, 1, 0), "{name}: {c:?}");
        assert_eq!((c.expressions, c.loclist_entries), (exprlocs, entries), "{name}: {c:?}");
        assert!(x.exprs.iter().all(|e| e.origin.contains(name)), "{name}");
    }

    // The executable: two skeletons, each with its split unit.
    let x = extract(&prog, &opts()).unwrap();
    let c = x.counts;
    assert_eq!((c.units, c.split_units, c.skeletons_without_split), (4, 2, 0), "{c:?} {:?}", x.warnings);
    assert_eq!((c.expressions, c.loclist_entries), (a.0 + b.0, a.1 + b.1), "{c:?}");
    // Through the skeleton's .debug_addr and DW_AT_addr_base: the static
    // variable's location is its address, and a location list of `f`'s
    // parameters starts where `f` does.
    let g = nm_address(&prog, "g_counter").expect("nm finds g_counter");
    let addrx = x.exprs.iter().find(|e| e.expr.len() == 2 && matches!(e.expr[0], 0xa1 | 0xfb)).expect("DW_OP_addrx");
    let (outcome, _) = dwarfcheck::consumer::builtin::reference_outcome(addrx);
    match outcome {
        Outcome::Location(l) => {
            assert_eq!(l.places, vec![SingleLocation::Simple(Source::memory(0, u128::from(g) * 8))])
        }
        other => panic!("{other:?}"),
    }
    // `DW_OP_constx` (GNU: `DW_OP_GNU_const_index`) reads a thread-local
    // variable's offset from .debug_addr too: its location is the
    // synthetic TLS base plus that entry. gcc 12 relocates these entries
    // with R_X86_64_64, so the linker stores the TLS segment's address
    // plus st_value (nm) where a DTPOFF relocation would store st_value
    // alone: either reading is accepted, the same for both variables.
    let segment = tls_segment(&prog).expect("readelf shows the TLS segment");
    let location = |off: u64| {
        let bits = u128::from(dwarfcheck::elf::dwarf::SYNTHETIC_TLS_BASE.wrapping_add(off)) * 8;
        Outcome::Location(dwarfcheck_core::outcome::NormalLocation {
            places: vec![SingleLocation::Simple(Source::memory(0, bits))],
        })
    };
    let mut got: Vec<Outcome> = x
        .exprs
        .iter()
        .filter(|e| matches!(e.expr[0], 0xa2 | 0xfc))
        .map(|e| dwarfcheck::consumer::builtin::reference_outcome(e).0)
        .collect();
    got.sort_by_key(|o| format!("{o:?}"));
    let offsets: Vec<u64> =
        ["t_first", "t_count"].iter().map(|v| nm_address(&prog, v).expect("nm finds the TLS variables")).collect();
    assert_ne!(offsets[0], offsets[1]);
    let readings = [0, segment].map(|base| {
        let mut w: Vec<Outcome> = offsets.iter().map(|o| location(base + o)).collect();
        w.sort_by_key(|o| format!("{o:?}"));
        w
    });
    assert!(readings.contains(&got), "{got:?} is neither of {readings:?}");
    let f = nm_address(&prog, "f").expect("nm finds f");
    assert!(x.exprs.iter().any(|e| e.ctx.pc == Some(f) && e.origin.contains("entry")), "no list starts at f");
    let lists: Vec<_> = x.exprs.iter().filter(|e| e.origin.contains(" entry ")).collect();
    assert_eq!(lists.len(), a.1 + b.1);
    assert!(lists.iter().all(|e| e.ctx.pc.is_some()), "every list entry of a resolved unit has its pc");

    // A package beside the executable, the .dwo files gone: the same cases.
    let packager = ["llvm-dwp-19", "dwp"].into_iter().find(|t| have_tool(t));
    let packaged = packager.is_some_and(|p| {
        Command::new(p).args(["-e", "prog", "-o", "prog.dwp"]).current_dir(&dir).status().is_ok_and(|s| s.success())
    });
    if packaged {
        hide(&dir, &["a.dwo", "b.dwo"]);
        let p = extract(&prog, &opts()).unwrap();
        assert_eq!(p.counts, c, "{:?}", p.warnings);
        assert_eq!(cases_of(&p), cases_of(&x));
        let alone = extract(&dir.join("prog.dwp"), &opts()).unwrap();
        let c2 = alone.counts;
        assert_eq!((c2.units, c2.split_units), (2, 2), "{c2:?}");
        assert_eq!((c2.expressions, c2.loclist_entries), (a.0 + b.0, a.1 + b.1), "{c2:?}");
        unhide(&dir, &["a.dwo", "b.dwo"]);
        hide(&dir, &["prog.dwp"]);
    } else {
        eprintln!("skipped the package: no llvm-dwp-19 or dwp");
    }

    // Neither: both skeletons counted as not checked, each with a warning,
    // and the report says so.
    hide(&dir, &["a.dwo", "b.dwo"]);
    let m = extract(&prog, &opts()).unwrap();
    let expect = Counts { units: 2, skeletons_without_split: 2, ..Counts::default() };
    assert_eq!(m.counts, expect, "{:?}", m.warnings);
    assert!(m.warnings.iter().any(|w| w.contains("a.dwo") && w.contains("not found")), "{:?}", m.warnings);
    let o = Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).args(["elf", "--consumers", "none"]).arg(&prog).output();
    let out = String::from_utf8_lossy(&o.as_ref().unwrap().stdout).into_owned();
    assert_eq!(o.unwrap().status.code(), Some(0));
    assert!(out.contains("skeleton units whose .dwo was not found: 2"), "{out}");
    assert!(out.contains("2 skeleton unit(s) whose .dwo was not found"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gcc_split_dwarf_5() {
    check(5);
}

#[test]
fn gcc_split_dwarf_4() {
    check(4);
}
