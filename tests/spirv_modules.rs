//! SPIR-V modules (issue 16, item 5): what `spirv::module` reads from the
//! fixture modules agrees with spirv-dis's text of the same modules, and
//! each rule of `specs/rules/spirv-module.yaml` is reported where a
//! hand-written module breaks it.
//!
//! Oracles:
//! - `spirv-dis --raw-id --offsets` (spirv-tools): for every module built
//!   by `.ci/fixtures-spirv`, the same DebugOperations (spirv-dis spelling),
//!   DebugExpressions, DebugDeclares and DebugValues, at the same
//!   instruction index and byte offset, with the same variable name and
//!   line (from the `OpString` and `DebugLocalVariable` it prints) and the
//!   storage class of the declared pointer's `OpTypePointer`;
//! - the `; expect-rules:` and `; expect:` lines of the module cases under
//!   `specs/cases/spirv-modules/`, written by hand from each module's text
//!   (assembled with spirv-as after `_prelude.spvasm`).
//!
//! The tools run contained (`consumer::external::process`: time and
//! output budgets). Without clang-15, llvm-spirv-15 or spirv-tools the
//! tests are skipped, or fail when `CI` is set.

use dwarfcheck::consumer::external::process::{self, RunBudget, TempDir};
use dwarfcheck::spirv::module::{self, cases, Application, Module};
use dwarfcheck_core::encoding::spirv::Applies;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const BUDGET: RunBudget = RunBudget { time: Duration::from_secs(60), output_bytes: 64 << 20 };

/// `program args...`, contained; its output. Panics when it fails.
fn run(program: &Path, args: &[&OsStr]) -> String {
    let dir = TempDir::new().unwrap();
    let out = process::run(program, args, dir.path(), BUDGET)
        .unwrap_or_else(|e| panic!("{} {args:?}: {e}", program.display()));
    assert_eq!(out.code, 0, "{} {args:?} failed: {}", program.display(), out.text);
    out.text
}

/// spirv-dis and spirv-as, or `None` (skip) when spirv-tools is missing.
fn spirv_tools() -> Option<(PathBuf, PathBuf)> {
    let found = process::find_program(&["spirv-dis"]).zip(process::find_program(&["spirv-as"]));
    dwarfcheck::testing::needed("spirv-tools (spirv-dis, spirv-as)", found)
}

fn fixtures() -> Option<Vec<PathBuf>> {
    dwarfcheck::testing::spirv_fixture_modules()
}

/// One instruction line of `spirv-dis --raw-id --offsets --no-header`.
#[derive(Debug, Clone)]
struct Line {
    index: usize,
    byte: usize,
    result: Option<u32>,
    /// The words after `=` (or the whole line), offset comment removed.
    tokens: Vec<String>,
}

fn id(t: &str) -> u32 {
    t.strip_prefix('%').and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("not a raw id: {t}"))
}

/// Every instruction of spirv-dis's text, by result id and in order.
fn disassemble(dis: &Path, spv: &Path) -> (Vec<Line>, HashMap<u32, usize>) {
    let text = run(dis, &[OsStr::new("--raw-id"), OsStr::new("--offsets"), OsStr::new("--no-header"), spv.as_os_str()]);
    let mut lines = Vec::new();
    let mut by_id = HashMap::new();
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with(';')) {
        let (body, off) = l.rsplit_once("; 0x").unwrap_or_else(|| panic!("no offset: {l}"));
        let byte = usize::from_str_radix(off.trim(), 16).unwrap();
        let (result, rest) = match body.split_once(" = ") {
            Some((r, rest)) => (Some(id(r.trim())), rest),
            None => (None, body),
        };
        let tokens: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
        if let Some(r) = result {
            by_id.insert(r, lines.len());
        }
        lines.push(Line { index: lines.len(), byte, result, tokens });
    }
    (lines, by_id)
}

/// `OpExtInst %type %set NAME args...`: NAME and the args.
fn ext(l: &Line) -> Option<(&str, &[String])> {
    (l.tokens.first()? == "OpExtInst").then(|| (l.tokens[3].as_str(), &l.tokens[4..]))
}

/// What spirv-dis's text says about one fixture, checked against `m`.
fn check_module(dis: &Path, spv: &Path, m: &Module) {
    let name = spv.display();
    let (lines, by_id) = disassemble(dis, spv);
    let def = |i: u32| &lines[by_id[&i]];
    let string = |i: u32| {
        let t = def(i).tokens.join(" ");
        t.strip_prefix("OpString \"").and_then(|s| s.strip_suffix('"')).unwrap_or_else(|| panic!("{t}")).to_string()
    };
    let op_text = |i: u32| ext(def(i)).filter(|(n, _)| *n == "DebugOperation").unwrap().1.join(" ");
    // A debug type's size in bits as spirv-dis's text gives it: the Size
    // constant of DebugTypeBasic and DebugTypeComposite, the address size
    // for a pointer, through typedefs; vectors and arrays as their element
    // times their counts (an array count of DebugInfoNone, which
    // llvm-spirv-15 writes after each real one, leaves the size unknown).
    let constant = |i: u32| {
        let t = &def(i).tokens;
        (t[0] == "OpConstant").then(|| t[2].parse::<u64>().unwrap())
    };
    let type_bits = |mut t: u32| -> Option<u64> {
        let mut times = 1u64;
        loop {
            let (k, a) = ext(def(t)).unwrap();
            match k {
                "DebugTypedef" => t = id(&a[1]),
                "DebugTypeVector" => {
                    times *= a[1].parse::<u64>().unwrap();
                    t = id(&a[0]);
                }
                "DebugTypeArray" => {
                    for c in &a[1..] {
                        times *= constant(id(c))?;
                    }
                    t = id(&a[0]);
                }
                "DebugTypeBasic" => return constant(id(&a[1])).map(|b| b * times),
                "DebugTypeComposite" => return constant(id(&a[7])).map(|b| b * times),
                "DebugTypePointer" => return m.address_bytes.map(|b| u64::from(b) * 8 * times),
                _ => return None,
            }
        }
    };
    let model = lines.iter().find(|l| l.tokens[0] == "OpMemoryModel").unwrap();
    let bytes = match model.tokens[1].as_str() {
        "Physical32" => Some(4),
        "Physical64" => Some(8),
        _ => None,
    };
    assert_eq!(m.address_bytes, bytes, "{name}: addressing model");
    let of = |n: &'static str| lines.iter().filter(move |l| ext(l).is_some_and(|(k, _)| k == n));

    // Every DebugOperation, in spirv-dis's spelling.
    assert_eq!(m.operations.len(), of("DebugOperation").count(), "{name}: DebugOperations");
    for (o, l) in m.operations.iter().zip(of("DebugOperation")) {
        assert_eq!((o.position.index, o.position.word * 4, Some(o.id)), (l.index, l.byte, l.result), "{name}");
        assert_eq!(o.operation.to_string(), ext(l).unwrap().1.join(" "), "{name}: %{}", o.id);
    }
    // Every DebugExpression: its operations.
    assert_eq!(m.expressions.len(), of("DebugExpression").count(), "{name}: DebugExpressions");
    for (x, l) in m.expressions.iter().zip(of("DebugExpression")) {
        assert_eq!((x.position.index, x.position.word * 4, Some(x.id)), (l.index, l.byte, l.result), "{name}");
        let ours: Vec<String> = x.operations.as_ref().unwrap().iter().map(ToString::to_string).collect();
        let theirs: Vec<String> = ext(l).unwrap().1.iter().map(|o| op_text(id(o))).collect();
        assert_eq!(ours, theirs, "{name}: DebugExpression %{}", x.id);
    }
    // Every DebugDeclare and DebugValue: the expression applied, the
    // variable's name and line, the declared pointer's storage class.
    let apps: Vec<&Line> =
        lines.iter().filter(|l| ext(l).is_some_and(|(k, _)| k == "DebugDeclare" || k == "DebugValue")).collect();
    assert_eq!(m.applications.len(), apps.len(), "{name}: DebugDeclares and DebugValues");
    for (a, l) in m.applications.iter().zip(apps) {
        let (which, args) = ext(l).unwrap();
        assert_eq!((a.position.index, a.position.word * 4, Some(a.id)), (l.index, l.byte, l.result), "{name}");
        let ops: Vec<String> = ext(def(id(&args[2]))).unwrap().1.iter().map(|o| op_text(id(o))).collect();
        let e = a.expression.as_ref().unwrap_or_else(|| panic!("{name}: %{} has no expression", a.id));
        assert_eq!(e.to_string(), format!("{which} [{}]", ops.join(", ")), "{name}: %{}", a.id);
        let (vk, vargs) = ext(def(id(&args[0]))).unwrap();
        assert_eq!(vk, "DebugLocalVariable");
        let v = a.variable.as_ref().unwrap();
        assert_eq!(v.name.as_deref(), Some(string(id(&vargs[0])).as_str()), "{name}: %{}", a.id);
        assert_eq!(v.line.map(|n| n.to_string()).as_deref(), Some(vargs[3].as_str()), "{name}: %{}", a.id);
        assert_eq!(v.bits, type_bits(id(&vargs[1])), "{name}: %{}: size of '{:?}'", a.id, v.name);
        assert_eq!(a.operand, id(&args[1]));
        let indexes: Vec<u32> = args[3..].iter().map(|i| id(i)).collect();
        assert_eq!(a.indexes, indexes);
        if which == "DebugDeclare" {
            // `%x = OpVariable %ptr ...` or `%x = OpFunctionParameter %ptr`:
            // the result type's `OpTypePointer SC %base`.
            let ty = def(id(&def(a.operand).tokens[1]));
            assert_eq!(ty.tokens[0], "OpTypePointer", "{name}: %{}", a.id);
            assert_eq!(a.storage_class.as_deref(), Some(ty.tokens[1].as_str()), "{name}: %{}", a.id);
        }
    }
}

#[test]
fn fixture_modules_read_as_spirv_dis_reads_them() {
    let Some(files) = fixtures() else { return };
    let Some((dis, _)) = spirv_tools() else { return };
    let mut shapes_o2 = std::collections::BTreeSet::new();
    for f in &files {
        let m = module::read_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        check_module(&dis, f, &m);
        // llvm-spirv-15's modules break no module rule.
        assert!(m.violations.is_empty(), "{}: {:?}", f.display(), m.violations);
        assert!(m.warnings.is_empty(), "{}: {:?}", f.display(), m.warnings);
        let stem = f.file_stem().unwrap().to_string_lossy();
        for a in &m.applications {
            let e = a.expression.as_ref().unwrap();
            if stem.ends_with("-O0") {
                // The issue's -O0 shape: every variable declared in memory.
                assert_eq!(e.to_string(), "DebugDeclare [Constu 0, Swap, Xderef]", "{}", f.display());
                assert_eq!(a.storage_class.as_deref(), Some("Function"));
            } else {
                shapes_o2.insert(e.to_string());
            }
        }
        // One case per application, each with one initial entry of the
        // module's address size.
        let cs = cases::cases(&m, &stem, 7);
        assert_eq!(cs.len(), m.applications.len());
        for c in &cs {
            assert_eq!(c.ctx.initial_stack.len(), 1);
            assert_eq!(c.ctx.target.generic_bits(), u32::from(m.address_bytes.unwrap()) * 8);
            assert!(c.spirv.is_some() && c.attribute.is_none() && c.form.is_none());
        }
    }
    // The issue's -O2 example shape (calls.cl: the struct of two ints
    // summed, its second member one more than the first).
    assert!(
        shapes_o2.contains("DebugValue [PlusUconst 1, Constu 0, Swap, Xderef, StackValue, Fragment 32 32]"),
        "{shapes_o2:#?}"
    );
    assert!(shapes_o2.iter().any(|s| s.contains("Fragment 16 16")), "{shapes_o2:#?}");
}

/// `a` as an `; expect:` line writes it.
fn describe(a: &Application) -> Option<String> {
    let mut s = a.expression.as_ref()?.to_string();
    if let Some(v) = &a.variable {
        if let Some(n) = &v.name {
            s.push_str(&format!(" '{n}'"));
        }
        if let Some(l) = v.line {
            s.push_str(&format!(" line {l}"));
        }
        if let Some(b) = v.bits {
            s.push_str(&format!(", {b} bits"));
        }
    }
    if let Some(c) = &a.storage_class {
        s.push_str(&format!(", {c}"));
    }
    Some(s)
}

#[test]
fn module_cases_report_their_rules() {
    let Some((_, asm)) = spirv_tools() else { return };
    let dir = root().join("specs/cases/spirv-modules");
    let prelude = std::fs::read_to_string(dir.join("_prelude.spvasm")).unwrap();
    let tmp = TempDir::new().unwrap();
    let cases = dwarfcheck::spirv::module::suite::module_case_files(std::slice::from_ref(&dir));
    assert!(cases.len() >= 7, "module cases: {cases:?}");
    for c in &cases {
        let stem = c.path.file_stem().unwrap().to_string_lossy().to_string();
        let src = tmp.path().join(format!("{stem}.spvasm"));
        let spv = tmp.path().join(format!("{stem}.spv"));
        std::fs::write(&src, format!("{prelude}{}", c.text)).unwrap();
        run(&asm, &[OsStr::new("--preserve-numeric-ids"), src.as_os_str(), OsStr::new("-o"), spv.as_os_str()]);
        let m = module::read_file(&spv).unwrap();
        let mut want = c.expect_rules.clone();
        let mut got: Vec<String> = m.violations.iter().map(|v| v.rule.to_string()).collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{stem}: {:#?}", m.violations);
        let described: Vec<String> = m.applications.iter().filter_map(describe).collect();
        assert_eq!(described, c.expect, "{stem}");
    }
    // Every rule of the catalogue has its module case.
    let catalogue = std::fs::read_to_string(root().join("specs/rules/spirv-module.yaml")).unwrap();
    for rule in catalogue.lines().filter_map(|l| l.strip_prefix("- id: ")) {
        assert!(cases.iter().any(|c| c.rule == rule.trim()), "no module case for {rule}");
    }
}

#[test]
fn hostile_bytes_are_refused_without_panicking() {
    // Not a module, a header alone, a truncated instruction.
    assert!(module::read(b"").is_err());
    assert!(module::read(&[0u8; 20]).is_err());
    let header: Vec<u8> = [0x0723_0203u32, 0x0001_0400, 0, 100, 0].iter().flat_map(|w| w.to_le_bytes()).collect();
    let m = module::read(&header).unwrap();
    assert_eq!(m, Module::default());
    let mut trunc = header.clone();
    trunc.extend(0x0004_000eu32.to_le_bytes()); // OpMemoryModel of 4 words, 1 given
    assert!(module::read(&trunc).is_err());
    // Every prefix and many one-word mutations of a fixture: an answer,
    // never a panic.
    let Some(files) = fixtures() else { return };
    let bytes = std::fs::read(&files[0]).unwrap();
    for cut in (0..bytes.len()).step_by(4) {
        let _ = module::read(&bytes[..cut]);
    }
    let mut x = 0x9e37_79b9_u32;
    for _ in 0..2000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let mut b = bytes.clone();
        let at = 20 + (x as usize % ((b.len() - 20) / 4)) * 4;
        b[at..at + 4].copy_from_slice(&x.rotate_left(7).to_le_bytes());
        if let Ok(m) = module::read(&b) {
            let _ = cases::cases(&m, "mutated", 1);
        }
    }
}

#[test]
fn initial_entries_are_deterministic_and_of_the_address_size() {
    let Some((_, asm)) = spirv_tools() else { return };
    let dir = root().join("specs/cases/spirv-modules");
    let text = std::fs::read_to_string(dir.join("_prelude.spvasm")).unwrap()
        + &std::fs::read_to_string(dir.join("well-formed.spvasm")).unwrap();
    let tmp = TempDir::new().unwrap();
    let (src, spv) = (tmp.path().join("w.spvasm"), tmp.path().join("w.spv"));
    std::fs::write(&src, text).unwrap();
    run(&asm, &[src.as_os_str(), OsStr::new("-o"), spv.as_os_str()]);
    let m = module::read_file(&spv).unwrap();
    let a = &m.applications;
    assert_eq!(a.iter().map(|a| a.applies).collect::<Vec<_>>(), [Applies::Declare, Applies::Value]);
    let c1 = cases::cases(&m, "w", 5);
    let c2 = cases::cases(&m, "w", 5);
    for (x, y) in c1.iter().zip(&c2) {
        assert_eq!(x.ctx.initial_stack, y.ctx.initial_stack);
    }
    let t = cases::target(Some(4));
    assert_eq!(t.generic_bits(), 32);
    let dwarfcheck_core::context::Entry::Value(v) = cases::initial_entry(&a[0], 5, &t) else { panic!() };
    let addr = v.to_u128();
    assert!(addr % 8 == 0 && (0x1000_0000..0x2000_0000).contains(&addr), "{addr:#x}");
    assert!(c1[0].origin.starts_with("w: DebugDeclare %") && c1[0].origin.ends_with("'x' line 7"), "{}", c1[0].origin);
}

#[test]
fn spirv_command_reports_cases_and_module_rules() {
    let Some((_, asm)) = spirv_tools() else { return };
    let dir = root().join("specs/cases/spirv-modules");
    let tmp = TempDir::new().unwrap();
    let mut inputs = Vec::new();
    for stem in ["declare-pointer", "variable-is-local-variable"] {
        let text = std::fs::read_to_string(dir.join("_prelude.spvasm")).unwrap()
            + &std::fs::read_to_string(dir.join(format!("{stem}.spvasm"))).unwrap();
        let (src, spv) = (tmp.path().join(format!("{stem}.spvasm")), tmp.path().join(format!("{stem}.spv")));
        std::fs::write(&src, text).unwrap();
        run(&asm, &[src.as_os_str(), OsStr::new("-o"), spv.as_os_str()]);
        inputs.push(spv);
    }
    let missing = tmp.path().join("missing.spv");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["spirv", "--json", "--consumers", "none"])
        .args(&inputs)
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["summary"];
    // One DebugDeclare, two DebugValues, each with an expression.
    assert_eq!(s["expr_cases"], 3);
    assert_eq!(s["verdicts"]["fast"]["agree"], 3);
    let rules = s["module_rules"].as_object().unwrap();
    assert_eq!(
        rules.keys().collect::<Vec<_>>(),
        ["spirv.module.declare-pointer", "spirv.module.variable-is-local-variable"]
    );
    let at = rules["spirv.module.variable-is-local-variable"].as_array().unwrap();
    assert_eq!(at.len(), 2);
    // Positions as `FILE: #INDEX (word W)`: DebugValues %v1 and %v2 are
    // consecutive instructions.
    let pos: Vec<(usize, usize)> = at
        .iter()
        .map(|p| {
            let p = p.as_str().unwrap();
            let (_, rest) = p.split_once(": #").unwrap();
            let (index, rest) = rest.split_once(" (word ").unwrap();
            let (word, _) = rest.split_once(')').unwrap();
            (index.parse().unwrap(), word.parse().unwrap())
        })
        .collect();
    // `%v = OpExtInst %void %1 DebugValue %var %value %expr`: 8 words.
    assert_eq!((pos[1].0 - pos[0].0, pos[1].1 - pos[0].1), (1, 8), "{pos:?}");
    let unreadable = s["unreadable_inputs"].as_array().unwrap();
    assert_eq!(unreadable.len(), 1);
    assert_eq!(unreadable[0]["input"], missing.display().to_string());
}
