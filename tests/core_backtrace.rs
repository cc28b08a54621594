//! The fast evaluator embedded in a debugger: `examples/core_backtrace`
//! (compiled into this test from its modules) reads the core of a real
//! C program (`specs/fixtures/core_backtrace/stack.c`, built with
//! `gcc -O2 -g -no-pie` and `gcc -O0 -g -no-pie`, DWARF 5 as gcc 12 writes
//! it by default, and `gcc -O2 -gdwarf-4 -no-pie` for DWARF 4's
//! `.debug_loc` and GNU call sites) that GDB wrote when the
//! program stopped itself with SIGABRT, and must agree with GDB and with
//! the C source:
//! - every thread's frames inside the program (down to `main` for the
//!   main thread, to `worker` for the other), frame by frame, pc and
//!   function name; the pcs of the frames below them (libc, `_start`,
//!   with GDB's `backtrace past-main` on) too;
//! - every variable and parameter GDB prints a value for (read through
//!   GDB's Python API, in one canonical text); a variable GDB can read and
//!   the example cannot is a failure (none is expected: the fixture uses
//!   nothing the fast evaluator reports as unsupported, such as
//!   `DW_OP_GNU_parameter_ref`);
//! - the values the C source gives, whatever GDB says.
//!
//! Skipped with a note when gcc or gdb is missing, a failure in CI
//! (`dwarfcheck::testing::needed`). GDB runs in its own process group under
//! a time budget and an output cap, in a temporary directory.

#[path = "../examples/core_backtrace/backtrace.rs"]
mod backtrace;
#[path = "../examples/core_backtrace/core_file.rs"]
mod core_file;
#[path = "../examples/core_backtrace/die.rs"]
mod die;
#[path = "../examples/core_backtrace/fast.rs"]
mod fast;
#[path = "../examples/core_backtrace/module.rs"]
mod module;
#[path = "../examples/core_backtrace/process.rs"]
mod process;
#[path = "../examples/core_backtrace/ranges.rs"]
mod ranges;
#[path = "../examples/core_backtrace/reader.rs"]
mod reader;
#[path = "../examples/core_backtrace/scope.rs"]
mod scope;
#[path = "../examples/core_backtrace/state.rs"]
mod state;
#[path = "../examples/core_backtrace/types.rs"]
mod types;

use backtrace::ThreadTrace;
use dwarfcheck::consumer::external::process::{find_program, run, RunBudget, TempDir};
use dwarfcheck::testing::needed;
use object::{Object, ObjectSymbol};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use types::{Scalar, Token};

/// The fixture's source.
const SOURCE: &str = "specs/fixtures/core_backtrace/stack.c";

/// GDB's side, run after the core is written: every thread's frames
/// (`F|lwp|level|pc|name`) and, per frame, every argument and local of its
/// blocks up to the function's (`V|name|value`), values in the canonical
/// text of [`canonical`]. Lines start with `DC|` to stand out from GDB's.
const GDB_SCRIPT: &str = r#"
import gdb, struct

def canon(v):
    try:
        if v.is_optimized_out:
            return '?'
        t = v.type.strip_typedefs()
        c = t.code
        if c in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION):
            return '{' + ','.join(f.name + '=' + canon(v[f]) for f in t.fields()) + '}'
        if c == gdb.TYPE_CODE_ARRAY:
            lo, hi = t.range()
            return '[' + ','.join(canon(v[i]) for i in range(lo, hi + 1)) + ']'
        if c == gdb.TYPE_CODE_FLT:
            f, i = {4: ('<f', '<I'), 8: ('<d', '<Q')}[t.sizeof]
            return 'f%x' % struct.unpack(i, struct.pack(f, float(v)))[0]
        if c == gdb.TYPE_CODE_PTR:
            return str(int(v.cast(gdb.lookup_type('unsigned long'))))
        return str(int(v))
    except (gdb.error, KeyError, ValueError):
        return '?'

out = []
for th in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
    th.switch()
    f = gdb.newest_frame()
    level = 0
    while f is not None and level < 64:
        out.append('DC|F|%d|%d|%d|%s' % (th.ptid[1], level, f.pc(), f.name() or '??'))
        try:
            b = f.block()
        except RuntimeError:
            b = None
        while b is not None:
            for sym in b:
                # A variable with DW_AT_const_value is a constant to GDB.
                if sym.is_argument or sym.is_variable or sym.is_constant:
                    try:
                        val = canon(sym.value(f))
                    except gdb.error:
                        val = '?'
                    out.append('DC|V|%s|%s' % (sym.name, val))
            if b.function is not None:
                break
            b = b.superblock
        f = f.older()
        level += 1
print('\n'.join(out))
"#;

/// One frame as GDB shows it.
#[derive(Debug, Default)]
struct GdbFrame {
    pc: u64,
    name: String,
    /// Canonical values by variable name (the innermost block's first).
    values: BTreeMap<String, String>,
}

/// A value's tokens in the canonical text GDB's side prints:
/// `{x=-10,y=300}`, `[1,2]`; integers, characters, booleans and pointers
/// in decimal, floats as `f` and their bits in hex, no value as `?`.
fn canonical(tokens: &[Token]) -> String {
    types::render_with(
        tokens,
        |s| match s {
            Scalar::Int(v) | Scalar::Char(v) => v.to_string(),
            Scalar::Uint(v) | Scalar::Bool(v) => v.to_string(),
            Scalar::Float { bits, .. } => format!("f{bits:x}"),
            Scalar::Pointer(p) => p.to_string(),
            Scalar::Raw(b) => format!("raw{}", b.len()),
            Scalar::Missing(_) => "?".into(),
        },
        "=",
        ",",
    )
}

/// Runs `program args` in `dir` under a budget; panics with its output if
/// it cannot run or fails.
fn run_ok(program: &Path, args: &[&OsStr], dir: &Path, seconds: u64) -> String {
    let budget = RunBudget { time: Duration::from_secs(seconds), output_bytes: 4 << 20 };
    match run(program, args, dir, budget) {
        Ok(out) if out.code == 0 => out.text,
        Ok(out) => panic!("{} exited with {}:\n{}", program.display(), out.code, out.text),
        Err(e) => panic!("{}: {e}", program.display()),
    }
}

/// Builds the fixture with `opt` (optimisation level) and `debug` (debug
/// info flag), runs it under GDB, which writes its core
/// when SIGABRT arrives and then prints the frames and values; returns the
/// executable, the core and GDB's frames by thread (LWP id).
fn build_and_stop(
    gcc: &Path,
    gdb: &Path,
    dir: &Path,
    opt: &str,
    debug: &str,
) -> (PathBuf, PathBuf, BTreeMap<u32, Vec<GdbFrame>>) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(SOURCE);
    let exe = dir.join(format!("stack{opt}"));
    let args = [opt, debug, "-no-pie", "-pthread", "-o"].map(OsStr::new);
    let mut args = args.to_vec();
    args.push(exe.as_os_str());
    args.push(source.as_os_str());
    run_ok(gcc, &args, dir, 120);
    let core = dir.join(format!("core{opt}"));
    let script = dir.join("frames.py");
    std::fs::write(&script, GDB_SCRIPT).unwrap();
    let cmds = [
        "set debuginfod enabled off".to_string(),
        "set pagination off".to_string(),
        "set confirm off".to_string(),
        "set backtrace past-main on".to_string(),
        "run".to_string(),
        format!("generate-core-file {}", core.display()),
        format!("source {}", script.display()),
    ];
    let mut args: Vec<&OsStr> = vec![OsStr::new("-nx"), OsStr::new("-batch")];
    for c in &cmds {
        args.push(OsStr::new("-ex"));
        args.push(OsStr::new(c));
    }
    args.push(exe.as_os_str());
    let text = run_ok(gdb, &args, dir, 300);
    assert!(core.exists(), "GDB wrote no core:\n{text}");
    let mut threads: BTreeMap<u32, Vec<GdbFrame>> = BTreeMap::new();
    let mut current: Option<u32> = None;
    for line in text.lines().filter_map(|l| l.strip_prefix("DC|")) {
        let f: Vec<&str> = line.splitn(5, '|').collect();
        match f.as_slice() {
            ["F", lwp, _level, pc, name] => {
                let lwp: u32 = lwp.parse().unwrap();
                let frame = GdbFrame { pc: pc.parse().unwrap(), name: name.to_string(), ..GdbFrame::default() };
                threads.entry(lwp).or_default().push(frame);
                current = Some(lwp);
            }
            ["V", name, value] => {
                let frame = threads.get_mut(&current.unwrap()).and_then(|t| t.last_mut()).unwrap();
                frame.values.entry(name.to_string()).or_insert_with(|| value.to_string());
            }
            _ => panic!("unexpected GDB line {line:?}"),
        }
    }
    assert!(!threads.is_empty(), "GDB printed no frames:\n{text}");
    (exe, core, threads)
}

/// The address of the first symbol of `exe` whose name is `name` or starts
/// with `name.` (a function's static local).
fn symbol(exe: &Path, name: &str) -> u64 {
    let data = std::fs::read(exe).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let dotted = format!("{name}.");
    file.symbols()
        .find(|s| s.name().is_ok_and(|n| n == name || n.starts_with(&dotted)))
        .map(|s| s.address())
        .unwrap_or_else(|| panic!("no symbol {name}"))
}

/// The values the C source gives, as (function, variable, canonical
/// value); `lwp` is the main thread's, `table` and `origin` the addresses
/// of those statics.
fn known_values(lwp: u32, table: u64, origin: u64) -> Vec<(&'static str, &'static str, String)> {
    let f = |x: f64| format!("f{:x}", x.to_bits());
    vec![
        ("raise_abort", "code", "3".into()),
        ("raise_abort", "pid", lwp.to_string()),
        ("raise_abort", "tid", lwp.to_string()),
        ("level3", "ratio", f(37.5)),
        ("level3", "count", "3".into()),
        ("level3", "total", (-10i64 * 1_000_000_007).to_string()),
        ("level3", "flag", "150".into()),
        ("level3", "ok", "1".into()),
        ("level2", "big", "1234567890123".into()),
        ("level2", "tab", table.to_string()),
        ("level2", "ratio", f(37.5)),
        ("level2", "arr", "[-10,300,81,123]".into()),
        ("level1", "small", "-5".into()),
        ("level1", "medium", "300".into()),
        ("level1", "letter", "81".into()),
        ("level1", "pt", "{x=-10,y=300,tag=81}".into()),
        ("main", "origin", "{x=42,y=-7,tag=119}".into()),
        ("main", "rounds", "3".into()),
        ("park", "id", "42".into()),
        ("park", "token", 0x1122_3344_5566_7788u64.to_string()),
        ("worker", "arg", origin.to_string()),
        ("worker", "origin", origin.to_string()),
    ]
}

/// Checks one build of the fixture (`opt`, `debug`: gcc flags).
fn check(gcc: &Path, gdb: &Path, opt: &str, debug: &str) {
    let dir = TempDir::new().unwrap();
    let (exe, core, gdb_threads) = build_and_stop(gcc, gdb, dir.path(), opt, debug);
    let process = process::Process::open(&exe, &core).unwrap();
    let traces: Vec<ThreadTrace> = backtrace::backtrace(&process);
    let shown = backtrace::render(&traces);
    let context = format!("{opt} {debug}: the example printed\n{shown}\nnotes: {:?}", process.notes);

    // The same threads; the one that got the signal is the main thread.
    let mine: BTreeMap<u32, &ThreadTrace> = traces.iter().map(|t| (t.lwp, t)).collect();
    assert_eq!(mine.keys().collect::<Vec<_>>(), gdb_threads.keys().collect::<Vec<_>>(), "{context}");
    let main_lwp = traces[0].lwp;
    let values = known_values(main_lwp, symbol(&exe, "table"), symbol(&exe, "origin"));

    for (lwp, gdb_frames) in &gdb_threads {
        let trace = mine[lwp];
        let program: &[&str] =
            if *lwp == main_lwp { &["raise_abort", "level3", "level2", "level1", "main"] } else { &["park", "worker"] };
        // GDB's program frames are the source's call chain.
        let gdb_names: Vec<&str> = gdb_frames.iter().take(program.len()).map(|f| f.name.as_str()).collect();
        assert_eq!(gdb_names, program, "GDB's frames of thread {lwp}");
        // Frame by frame: pc and name inside the program, pc below it.
        assert_eq!(trace.frames.len(), gdb_frames.len(), "frame count of thread {lwp}\n{context}");
        assert!(trace.end.starts_with("base of the stack"), "{context}");
        for (k, (m, g)) in trace.frames.iter().zip(gdb_frames).enumerate() {
            assert_eq!(m.pc, g.pc, "pc of frame {k} of thread {lwp}\n{context}");
            if k < program.len() {
                assert_eq!(m.function.as_deref(), Some(g.name.as_str()), "frame {k} of thread {lwp}\n{context}");
            }
        }
        // Values: GDB's wherever it prints one; the source's.
        for (k, (m, g)) in trace.frames.iter().zip(gdb_frames).enumerate().take(program.len()) {
            let mut by_name: BTreeMap<&str, String> = BTreeMap::new();
            for v in &m.variables {
                by_name.entry(v.name.as_str()).or_insert_with(|| canonical(&v.value));
            }
            let names: Vec<&String> = g.values.keys().collect();
            assert_eq!(by_name.keys().collect::<Vec<_>>(), names, "variables of frame {k} of thread {lwp}\n{context}");
            for (name, value) in &g.values {
                if !value.contains('?') {
                    assert_eq!(
                        &by_name[name.as_str()],
                        value,
                        "{name} in frame {k} ({}), thread {lwp}\n{context}",
                        g.name
                    );
                }
            }
            for (_, var, want) in values.iter().filter(|(f, _, _)| *f == g.name) {
                assert_eq!(&by_name[var], want, "{var} in {} (the C source's value)\n{context}", g.name);
            }
        }
    }
    // Every known value was looked at: each function is on some stack.
    for (f, _, _) in &values {
        assert!(traces.iter().any(|t| t.frames.iter().any(|x| x.function.as_deref() == Some(*f))), "{f}\n{context}");
    }
}

#[test]
fn backtraces_and_values_equal_gdbs_and_the_sources() {
    let Some(gcc) = needed("gcc", find_program(&["gcc"])) else { return };
    let Some(gdb) = needed("gdb", find_program(&["gdb"])) else { return };
    for (opt, debug) in [("-O2", "-g"), ("-O0", "-g"), ("-O2", "-gdwarf-4")] {
        check(&gcc, &gdb, opt, debug);
    }
}
