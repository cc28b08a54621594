//! `dwarfcheck export-suite` as a user runs it: the export read back as
//! plain JSON (never through the writer), every case rebuilt from its data
//! alone and evaluated with the reference against the exported expected
//! outcome; determinism; every case `run` loads listed with its rules; and,
//! where installed, the JSON Schemas and the Python checker on the export.

use dwarfcheck::case::{CfiCase, ExprCase, UnwindCase};
use dwarfcheck::consumer::builtin::{reference_outcome, Reference};
use dwarfcheck::consumer::Consumer;
use dwarfcheck::runner::compare::{exact, exact_cfi};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::context::{AttrForm, Attribute, CallerFrame, CompUnit, Context, Die, Entry, MemorySegment};
use dwarfcheck_core::outcome::cfi::CfiOutcome;
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::target::Target;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

/// The bundled suite exported once into a temporary directory.
fn export() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("dwarfcheck-export-{}", std::process::id()));
        run_export(&dir);
        dir
    })
}

fn run_export(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let out = Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["export-suite", "--out"])
        .arg(dir)
        .output()
        .expect("runs dwarfcheck");
    assert!(out.status.success(), "export-suite failed: {}", String::from_utf8_lossy(&out.stderr));
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn de<T: DeserializeOwned>(v: &Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v}"))
}

fn hex(v: &Value) -> Vec<u8> {
    let s = v.as_str().unwrap_or_else(|| panic!("hex string expected: {v}"));
    assert!(s.len().is_multiple_of(2), "odd hex {s}");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

fn opt_hex(v: &Value) -> Option<Vec<u8>> {
    (!v.is_null()).then(|| hex(v))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("integer expected: {v}"))
}

fn opt_u(v: &Value) -> Option<u64> {
    v.as_u64()
}

/// A case file's targets, rebuilt.
fn targets(file: &Value) -> BTreeMap<String, Arc<Target>> {
    file["targets"].as_object().expect("targets").iter().map(|(k, v)| (k.clone(), Arc::new(de(v)))).collect()
}

fn form(v: &Value) -> Option<AttrForm> {
    let o = v.as_object()?;
    Some(match o.iter().next().expect("one key") {
        (k, x) if k == "exprloc" => AttrForm::Exprloc(hex(x)),
        (k, x) if k == "loclist" => AttrForm::LocList { offset: u(x) },
        (k, x) if k == "loclistx" => AttrForm::LocListX { index: u(x) },
        (k, x) if k == "constant" => AttrForm::Constant(u(x)),
        (k, _) => panic!("unknown form {k}"),
    })
}

fn section(v: &Value, t: &BTreeMap<String, Arc<Target>>) -> CfiSection {
    let kind: FrameKind = de(&v["kind"]);
    let mut s = CfiSection::new(kind, hex(&v["bytes"]), u(&v["address"]), t[v["target"].as_str().unwrap()].clone());
    s.text_base = opt_u(&v["text_base"]);
    s.data_base = opt_u(&v["data_base"]);
    s
}

fn caller(v: &Value) -> CallerFrame {
    CallerFrame {
        pc: opt_u(&v["pc"]),
        cfa: opt_u(&v["cfa"]),
        cfa_aspace: u(&v["cfa_aspace"]),
        frame_base: opt_hex(&v["frame_base"]),
        rules: v["rules"].as_array().unwrap().iter().map(|r| (u(&r["register"]), de(&r["rule"]))).collect(),
        default_rule: de(&v["default_rule"]),
        caller: (!v["caller"].is_null()).then(|| Arc::new(caller(&v["caller"]))),
        unwound: v["unwound"].as_bool().unwrap(),
    }
}

fn unit(v: &Value) -> CompUnit {
    CompUnit {
        version: u(&v["version"]) as u16,
        format: de(&v["format"]),
        address_size: u(&v["address_size"]) as u8,
        debug_addr: hex(&v["debug_addr"]).into(),
        addr_base: u(&v["addr_base"]),
        base_types: v["base_types"].as_array().unwrap().iter().map(|b| (u(&b["offset"]), de(&b["type"]))).collect(),
        offset: u(&v["offset"]),
        dies: v["dies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let die = Die {
                    location: form(&d["location"]),
                    const_value: opt_hex(&d["const_value"]),
                    byte_size: opt_u(&d["byte_size"]),
                };
                (u(&d["offset"]), die)
            })
            .collect(),
        debug_loclists: hex(&v["debug_loclists"]).into(),
        loclists_base: u(&v["loclists_base"]),
        debug_loc: hex(&v["debug_loc"]).into(),
        base_address: opt_u(&v["base_address"]),
    }
}

/// An entry of the initial stack or the current object: a value, or a
/// location read as the location outcome it is shaped as.
fn entry(v: &Value) -> Entry {
    if let Some(loc) = v.get("location") {
        let mut o = loc.clone();
        o["kind"] = Value::from("location");
        match expected_outcome(&o.to_string()) {
            Outcome::Location(l) => Entry::Location(l),
            other => panic!("not a location: {other}"),
        }
    } else {
        Entry::Value(de(&v["value"]))
    }
}

/// A context rebuilt from its JSON alone.
fn context(v: &Value, t: &BTreeMap<String, Arc<Target>>) -> Context {
    let mut c = Context::new(t[v["target"].as_str().unwrap()].clone());
    c.vendor = de(&v["vendor"]);
    c.result_kind = (!v["result_kind"].is_null()).then(|| de(&v["result_kind"]));
    c.thread = opt_u(&v["thread"]);
    c.lane = opt_u(&v["lane"]).map(|l| l as u32);
    c.pc = opt_u(&v["pc"]);
    c.cfa = opt_u(&v["cfa"]);
    c.cfa_aspace = u(&v["cfa_aspace"]);
    c.frame_base = opt_hex(&v["frame_base"]);
    c.object = (!v["object"].is_null()).then(|| entry(&v["object"]));
    c.initial_stack = v["initial_stack"].as_array().unwrap().iter().map(entry).collect();
    c.tls_base = opt_u(&v["tls_base"]);
    c.registers = v["registers"].as_array().unwrap().iter().map(|r| (u(&r["number"]), hex(&r["bytes"]))).collect();
    c.memory = v["memory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| MemorySegment {
            aspace: u(&m["aspace"]),
            address: u(&m["address"]),
            bytes: hex(&m["bytes"]),
            thread: opt_u(&m["thread"]),
            lane: opt_u(&m["lane"]).map(|l| l as u32),
        })
        .collect();
    c.synthetic = opt_u(&v["synthetic"]);
    c.cu = (!v["cu"].is_null()).then(|| unit(&v["cu"]));
    c.caller = (!v["caller"].is_null()).then(|| Arc::new(caller(&v["caller"])));
    c.cfi = (!v["cfi"].is_null()).then(|| Arc::new(section(&v["cfi"], t)));
    c.budgets = de(&v["budgets"]);
    c
}

fn expr_case(v: &Value, t: &BTreeMap<String, Arc<Target>>) -> ExprCase {
    let ctx = Arc::new(context(&v["context"], t));
    let mut c = ExprCase::plain(v["name"].as_str().unwrap(), v["id"].as_str().unwrap(), &hex(&v["bytes"]), ctx);
    c.attribute = v["attribute"].as_str().map(|n| *Attribute::ALL.iter().find(|a| a.dw_name() == n).expect(n));
    c.form = form(&v["form"]);
    c.spirv = (!v["spirv"].is_null()).then(|| Arc::new(de(&v["spirv"])));
    c
}

/// The exact text of each case's `expected` in a case file: a memory
/// location's `bit_addr` may pass 64 bits, which `serde_json::Value` cannot
/// hold exactly.
#[derive(serde::Deserialize)]
struct RawFile {
    cases: Vec<RawCase>,
}

#[derive(serde::Deserialize)]
struct RawCase {
    id: String,
    expected: Box<serde_json::value::RawValue>,
}

/// One case read back: its JSON, its file's targets, and the exact text of
/// its `expected`.
struct Read {
    case: Value,
    targets: BTreeMap<String, Arc<Target>>,
    expected_text: String,
}

/// A CFI case's expected outcome from its exact text, read by the
/// protocol's reader of row tables.
fn expected_table(text: &str) -> CfiOutcome {
    let line = format!(r#"{{"protocol":"dwarfcheck/2","type":"result","id":1,"outcome":{text}}}"#);
    dwarfcheck::consumer::protocol::reply::parse_rows(&line, 1).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Whether JSON `actual` meets `expected` as `compare::exact` judges
/// outcomes: equal, except that an expected `at` of `null` matches any.
fn matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len()
                && e.iter().all(|(k, x)| a.get(k).is_some_and(|y| (k == "at" && x.is_null()) || matches(x, y)))
        }
        (Value::Array(e), Value::Array(a)) => e.len() == a.len() && e.iter().zip(a).all(|(x, y)| matches(x, y)),
        _ => expected == actual,
    }
}

/// The index and every case file, read back.
fn cases() -> (Value, Vec<Read>) {
    let dir = export();
    let index = read(&dir.join("index.json"));
    let mut files: BTreeMap<String, (Value, RawFile)> = BTreeMap::new();
    let mut out = Vec::new();
    for e in index["cases"].as_array().unwrap() {
        let path = e["path"].as_str().unwrap().to_string();
        let (file, raw) = files.entry(path.clone()).or_insert_with(|| {
            let text = std::fs::read_to_string(dir.join(&path)).unwrap();
            (serde_json::from_str(&text).unwrap(), serde_json::from_str(&text).unwrap())
        });
        let case = file["cases"].as_array().unwrap().iter().find(|c| c["id"] == e["id"]).cloned();
        let expected_text = raw.cases.iter().find(|c| c.id == e["id"]).map(|c| c.expected.get().to_string());
        out.push(Read {
            case: case.unwrap_or_else(|| panic!("{} is not in {path}", e["id"])),
            targets: targets(file),
            expected_text: expected_text.unwrap(),
        });
    }
    (index, out)
}

/// An expression case's expected outcome from its exact text, read by the
/// harness's reader of outcomes in their serde form (the protocol's, which
/// takes 128-bit bit addresses).
fn expected_outcome(text: &str) -> Outcome {
    let line = format!(r#"{{"protocol":"dwarfcheck/1","type":"result","id":1,"outcome":{text}}}"#);
    dwarfcheck::consumer::protocol::reply::parse_result(&line, 1, dwarfcheck::consumer::protocol::wire::Version::V1)
        .unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn export_and_harness_agree_on_every_case() {
    let (index, cases) = cases();
    assert_eq!(index["format"], "dwarfcheck-suite");
    assert_eq!(index["version"], 1);
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut from_reference = 0;
    let mut unwinds = 0;
    let mut with_unspecified = 0;
    let mut bad = Vec::new();
    for Read { case: v, targets: t, expected_text } in &cases {
        let kind = v["kind"].as_str().unwrap().to_string();
        from_reference += usize::from(v["expected_from"] == "reference");
        let ok = match kind.as_str() {
            "expr" | "spirv-expr" => {
                let c = expr_case(v, t);
                let (outcome, unspecified) = reference_outcome(&c);
                let listed: Vec<&str> =
                    v["unspecified"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
                with_unspecified += usize::from(!listed.is_empty());
                exact(&expected_outcome(expected_text), &outcome)
                    && listed == unspecified.iter().map(|r| r.as_str()).collect::<Vec<_>>()
            }
            "cfi" => {
                let mut c = CfiCase {
                    name: v["name"].as_str().unwrap().into(),
                    origin: v["id"].as_str().unwrap().into(),
                    section: Arc::new(section(&v["section"], t)),
                    fde_offset: u(&v["fde_offset"]),
                    rules: Vec::new(),
                    expect: None,
                    unwind: None,
                };
                let mut ok = exact_cfi(&expected_table(expected_text), &Reference.frame_table(&c));
                if let Some(w) = v["unwind"].as_object() {
                    unwinds += 1;
                    let u = UnwindCase {
                        ctx: Arc::new(context(&w["context"], t)),
                        limit: w["limit"].as_u64().map(|l| l as u32),
                        expect: None,
                    };
                    c.unwind = Some(u.clone());
                    let got = Reference.unwind(&c, &u).map(|g| serde_json::to_value(g).unwrap());
                    ok &= matches(&w["expected"], got.as_ref().unwrap_or(&Value::Null));
                }
                ok
            }
            k => panic!("unknown kind {k}"),
        };
        if !ok {
            bad.push(v["id"].as_str().unwrap().to_string());
        }
        *by_kind.entry(kind).or_default() += 1;
    }
    assert!(bad.is_empty(), "{} case(s) whose rebuilt evaluation differs: {:?}", bad.len(), &bad[..bad.len().min(20)]);
    // Every kind rebuilt, and as many as the index counts.
    let counts = &index["counts"];
    assert_eq!(by_kind.get("expr").copied().unwrap_or(0) as u64, u(&counts["expr"]));
    assert_eq!(by_kind.get("spirv-expr").copied().unwrap_or(0) as u64, u(&counts["spirv_expr"]));
    assert_eq!(by_kind.get("cfi").copied().unwrap_or(0) as u64, u(&counts["cfi"]));
    assert_eq!(unwinds as u64, u(&counts["unwind"]));
    assert_eq!(cases.len() as u64, u(&counts["cases"]));
    assert!(by_kind.values().all(|&n| n > 0) && by_kind.len() == 3 && unwinds > 0, "{by_kind:?}");
    assert!(with_unspecified > 0, "no case rests on an unspecified rule");
    eprintln!(
        "rebuilt and evaluated {} cases {by_kind:?}, {unwinds} unwinding, {from_reference} expected from the reference, {with_unspecified} resting on unspecified rules",
        cases.len()
    );
}

#[test]
fn export_is_deterministic() {
    let a = export();
    let b = std::env::temp_dir().join(format!("dwarfcheck-export-again-{}", std::process::id()));
    run_export(&b);
    let files = |d: &Path| dwarfcheck::case::files::with_extension(&[d.to_path_buf()], "json");
    let (fa, fb) = (files(a), files(&b));
    assert_eq!(fa.len(), fb.len());
    assert!(fa.len() > 2);
    for (x, y) in fa.iter().zip(&fb) {
        assert_eq!(x.strip_prefix(a).unwrap(), y.strip_prefix(&b).unwrap());
        assert!(std::fs::read(x).unwrap() == std::fs::read(y).unwrap(), "{} differs", x.display());
    }
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn every_case_run_loads_is_in_the_index_with_its_rules() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let inputs = [root.join("specs/cases"), root.join("corpus/regressions")];
    let mut loaded = Vec::new();
    for f in dwarfcheck::case::yaml::find_case_files(&inputs).unwrap() {
        loaded.extend(dwarfcheck::case::yaml::load_file(&f).unwrap());
    }
    let index = read(&export().join("index.json"));
    let entries = index["cases"].as_array().unwrap();
    assert_eq!(entries.len(), loaded.len());
    for c in &loaded {
        let file = c.origin().rsplit_once(':').map_or(c.origin(), |(f, _)| f);
        let found: Vec<&Value> = entries
            .iter()
            .filter(|e| e["name"] == c.name() && file.ends_with(&format!("/{}", e["file"].as_str().unwrap())))
            .collect();
        assert_eq!(found.len(), 1, "{} of {file}", c.name());
        let rules: Vec<&str> = found[0]["rules"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        assert_eq!(rules, c.rules(), "{}", c.name());
    }
    // The inputs version 1 leaves out are listed, not silently missing.
    let left = index["left_out"].as_array().unwrap();
    for ext in ["visa", "tru64"] {
        let n = dwarfcheck::case::files::with_extension(&inputs, ext).len();
        assert!(n > 0);
        assert_eq!(left.iter().filter(|l| l["file"].as_str().unwrap().ends_with(&format!(".{ext}"))).count(), n);
    }
}

/// Whether `python3` can import every module of `modules`.
fn python_has(modules: &str) -> bool {
    Command::new("python3").args(["-c", &format!("import {modules}")]).output().is_ok_and(|o| o.status.success())
}

/// Runs `examples/NAME` with `args`.
fn python(name: &str, args: &[&std::ffi::OsStr]) -> std::process::Output {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples").join(name);
    Command::new("python3").arg(script).args(args).output().unwrap()
}

/// The checker's JSON summary of the export in `dir`.
fn checked(dir: &Path, gate: bool) -> (Option<i32>, Value) {
    let mut args = vec![std::ffi::OsStr::new("--json")];
    if gate {
        args.push(std::ffi::OsStr::new("--gate"));
    }
    args.push(dir.as_os_str());
    let c = python("suite_check.py", &args);
    assert!(matches!(c.status.code(), Some(0 | 1)), "suite_check: {}", String::from_utf8_lossy(&c.stderr));
    (c.status.code(), serde_json::from_slice(&c.stdout).unwrap())
}

#[test]
fn schemas_validate_the_export_and_the_python_checker_runs() {
    let Some(()) = dwarfcheck::testing::needed(
        "python3 with jsonschema and pyelftools",
        python_has("jsonschema, elftools").then_some(()),
    ) else {
        return;
    };
    let dir = export();
    let v = python("suite_validate.py", &[dir.as_os_str()]);
    assert!(
        v.status.success(),
        "schema validation: {}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
    let (code, summary) = checked(dir, false);
    assert_eq!(code, Some(0));
    let index = read(&dir.join("index.json"));
    // Every expression case judged, most of them agreed on; every
    // difference in a known class (docs/consumers.md, PE1 to PE5, found
    // with pyelftools 0.33), none unclassified.
    assert_eq!(summary["cases"], index["counts"]["expr"]);
    assert!(u(&summary["verdicts"]["agree"]) * 2 > u(&summary["cases"]), "{summary}");
    let classes: Vec<&str> = summary["classes"].as_object().unwrap().keys().map(|k| k.as_str()).collect();
    if summary["pyelftools"] == "0.33" {
        assert_eq!(classes, ["PE1", "PE2", "PE3", "PE4", "PE5"], "{summary}");
    }
    assert!(!classes.contains(&"PE0"), "{summary}");
}

#[test]
fn the_python_checker_reports_an_operand_pyelftools_reads_otherwise() {
    let Some(()) = dwarfcheck::testing::needed("python3 with pyelftools", python_has("elftools").then_some(())) else {
        return;
    };
    // An export whose `DW_OP_breg7 16` says 17: pyelftools, reading the
    // bytes, must be found to disagree (unclassified), and --gate fail.
    let dir = std::env::temp_dir().join(format!("dwarfcheck-export-tampered-{}", std::process::id()));
    run_export(&dir);
    let path = dir.join("cases/cases/expr/memory.json");
    let mut file = read(&path);
    let case = file["cases"].as_array_mut().unwrap().iter_mut().find(|c| c["name"] == "breg-is-a-location").unwrap();
    assert_eq!(case["operations"][0]["name"], "DW_OP_breg7");
    assert_eq!(case["operations"][0]["operands"][0], 16);
    case["operations"][0]["operands"][0] = Value::from(17);
    std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
    let (code, summary) = checked(&dir, true);
    assert_eq!(code, Some(1), "{summary}");
    let finding =
        summary["findings"].as_array().unwrap().iter().find(|f| f["id"] == "cases/expr/memory.yaml#breg-is-a-location");
    let finding = finding.unwrap_or_else(|| panic!("{summary}"));
    assert_eq!(finding["verdict"], "disagree");
    assert_eq!(finding["class"], "PE0");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn schema_validation_rejects_a_broken_export() {
    let Some(()) = dwarfcheck::testing::needed("python3 with jsonschema", python_has("jsonschema").then_some(()))
    else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("dwarfcheck-export-broken-{}", std::process::id()));
    run_export(&dir);
    let path = dir.join("index.json");
    let mut index = read(&path);
    index["cases"][0]["kind"] = Value::from("expression");
    std::fs::write(&path, serde_json::to_vec(&index).unwrap()).unwrap();
    let v = python("suite_validate.py", &[dir.as_os_str()]);
    assert_eq!(v.status.code(), Some(1), "{}", String::from_utf8_lossy(&v.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn given_paths_are_exported_under_their_names_and_a_bad_file_exports_nothing() {
    let root = std::env::temp_dir().join(format!("dwarfcheck-export-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let cases = root.join("mine");
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::write(
        cases.join("one.yaml"),
        "target: x86_64\ncases:\n  - name: lit\n    rules: [op.lit.pushes-generic]\n    context: { result: value }\n    expr: \"DW_OP_lit4 DW_OP_lit3\"\n",
    )
    .unwrap();
    let out = root.join("out");
    let run = |args: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).arg("export-suite").args(args).output().unwrap()
    };
    let o = run(&["--out".as_ref(), out.as_os_str(), cases.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let index = read(&out.join("index.json"));
    let entry = &index["cases"][0];
    assert_eq!(index["counts"]["cases"], 1);
    assert_eq!(entry["id"], "mine/one.yaml#lit");
    assert_eq!(entry["path"], "cases/mine/one.json");
    assert_eq!(entry["expected_from"], "reference");
    let file = read(&out.join("cases/mine/one.json"));
    let case = &file["cases"][0];
    // DW_OP_lit4 DW_OP_lit3, decoded; the reference's value (the top of
    // the stack, 3) of the generic type (8 bytes on x86_64), written last
    // byte first.
    assert_eq!(case["bytes"], "3433");
    assert_eq!(case["operations"][0]["name"], "DW_OP_lit4");
    assert_eq!(case["operations"][1]["name"], "DW_OP_lit3");
    assert_eq!(case["operations"][1]["offset"], 1);
    assert_eq!(case["expected"]["kind"], "value");
    assert_eq!(case["expected"]["bytes"], "0000000000000003");
    assert_eq!(case["origin"], "mine/one.yaml:3");
    // A file that does not load: exit 2, its error located, nothing written.
    std::fs::write(
        cases.join("two.yaml"),
        "target: x86_64\ncases:\n  - name: bad\n    rules: [op.lit.pushes-generic]\n    expr: \"DW_OP_nosuch\"\n",
    )
    .unwrap();
    let out2 = root.join("out2");
    let o = run(&["--out".as_ref(), out2.as_os_str(), cases.as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("two.yaml:5:"), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out2.exists());
    let _ = std::fs::remove_dir_all(&root);
}
