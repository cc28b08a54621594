//! The process protocol (`dwarfcheck/1`, docs/protocol.md): the example
//! consumer (examples/protocol_consumer.py) against the reference, the
//! misbehaving consumers of tests/protocol/, and the worked example of the
//! docs. Needs `python3` on PATH.

use dwarfcheck::case::{Case, ExprCase};
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::external::RunBudget;
use dwarfcheck::consumer::protocol::{default_budget, wire, Protocol, ProtocolError};
use dwarfcheck::consumer::Consumer;
use dwarfcheck::runner::compare::{judge, Verdict};
use dwarfcheck::runner::{self, Finding, Options};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, NormalLocation, Outcome, SingleLocation, Source, Value};
use std::path::PathBuf;
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A consumer running `command` from the crate root, one child at a time
/// (so that restarts after a fault are exercised on every fault).
fn consumer(command: &str, budget: RunBudget) -> Protocol {
    let cmd = format!("cd '{}' && exec {command}", root().display());
    Protocol::new(&cmd, budget, 1).unwrap_or_else(|e| panic!("{command}: {e}"))
}

fn example() -> Protocol {
    consumer("python3 examples/protocol_consumer.py", default_budget())
}

/// The expression cases of a case file text (x86_64 unless it says).
fn cases(yaml: &str) -> Vec<ExprCase> {
    let all = dwarfcheck::case::yaml::load_str("test.yaml", yaml).unwrap_or_else(|e| panic!("{e:?}"));
    all.into_iter()
        .map(|c| match c {
            Case::Expr(e) => e,
            Case::Cfi(_) => panic!("expression cases only"),
        })
        .collect()
}

fn generic64(v: u128) -> Outcome {
    Outcome::Value(Value::from_u128(BaseType::generic(64, false), v))
}

fn simple(s: Source) -> Outcome {
    Outcome::Location(NormalLocation { places: vec![SingleLocation::Simple(s)] })
}

const SUBSET: &str = r#"
target: x86_64
cases:
  - name: const-plus
    rules: [op.const.pushes-generic, op.plus.adds]
    context: { result: value }
    expr: "DW_OP_const1s -1 DW_OP_lit2 DW_OP_plus"
  - name: breg
    rules: [op.breg.register-plus-offset]
    context: { result: location, registers: { rsp: 0x7ffc0000 } }
    expr: "DW_OP_breg7 16"
  - name: stack-value
    rules: [op.stack-value.creates-storage]
    context: { result: location }
    expr: "DW_OP_lit5 DW_OP_stack_value"
  - name: reg
    rules: [op.regx.pushes-register]
    context: { result: location }
    expr: "DW_OP_reg3"
  - name: breg-as-value
    rules: [op.breg.register-plus-offset, op.plus.adds]
    context: { result: value, registers: { rbp: 0x1000 } }
    expr: "DW_OP_breg6 -16 DW_OP_constu 300 DW_OP_plus"
  - name: minus-is-outside-the-subset
    rules: [op.minus.subtracts]
    context: { result: value }
    expr: "DW_OP_lit1 DW_OP_lit2 DW_OP_minus"
"#;

#[test]
fn example_consumer_agrees_on_its_subset_and_is_unsupported_elsewhere() {
    let cases = cases(SUBSET);
    let p = example();
    assert_eq!(p.name(), "example-python");
    assert!(p.supports().expr && !p.supports().cfi);
    // Worked out by hand (x86_64: 64-bit generic type, little endian):
    let want = [
        // -1 + 2 wraps to 1 in 64 bits.
        generic64(1),
        // rsp + 16: a memory location in address space 0, bit address = 8 * byte address.
        simple(Source::memory(0, 8 * 0x7ffc_0010)),
        // The value 5 as 8 bytes of implicit storage in memory order.
        simple(Source::Implicit { bytes: vec![5, 0, 0, 0, 0, 0, 0, 0], bit_offset: 0 }),
        simple(Source::Register { regno: 3, bit_offset: 0 }),
        // rbp - 16 = 0xff0, as an address, plus 300 = 0x111c.
        generic64(0x111c),
    ];
    for (c, w) in cases.iter().zip(&want) {
        assert_eq!(&p.evaluate(c), w, "{}", c.name);
        assert_eq!(&Reference.evaluate(c), w, "reference on {}", c.name);
    }
    let last = p.evaluate(&cases[5]);
    assert!(matches!(&last, Outcome::Failed(Failure::Unsupported { what }) if what.contains("0x1c")), "{last:?}");

    // The same through the runner: five agreements, one unsupported.
    let all: Vec<Case> = cases.into_iter().map(Case::Expr).collect();
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(example())];
    let s = runner::run(&all, &Reference, &Fast, &others, &Options::default());
    let v = &s.verdicts["example-python"];
    assert_eq!(v.get(&Verdict::Agree), Some(&5));
    assert_eq!(v.get(&Verdict::Unsupported), Some(&1));
    assert!(!s.failed && s.failure_count == 0);
}

#[test]
fn example_consumer_never_disagrees_on_the_bundled_expression_cases() {
    let mut cases = Vec::new();
    for f in dwarfcheck::case::yaml::find_case_files(&[root().join("specs/cases/expr")]).unwrap() {
        cases.extend(dwarfcheck::case::yaml::load_file(&f).unwrap());
    }
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(example())];
    let s = runner::run(&cases, &Reference, &Fast, &others, &Options::default());
    let v = &s.verdicts["example-python"];
    // It must answer some cases (the subset is common) and get none wrong.
    assert!(v.get(&Verdict::Agree).copied().unwrap_or(0) >= 20, "{v:?}");
    assert_eq!(v.get(&Verdict::Disagree), None, "{:#?}", s.failures);
}

const MISBEHAVING: &str = r#"
target: x86_64
cases:
  - { name: ok-1, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: garbage, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: ok-2, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: wrong-id, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: ok-3, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: crash, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: ok-4, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: hang, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: ok-5, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: flood, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
  - { name: ok-6, rules: [op.lit.pushes-generic], context: { result: value }, expr: "DW_OP_lit1" }
"#;

/// 1 s per request, reply lines of at most 10,000 bytes.
fn tight() -> RunBudget {
    RunBudget { time: Duration::from_secs(1), output_bytes: 10_000 }
}

#[test]
fn misbehaving_consumer_faults_and_the_run_goes_on() {
    let cases = cases(MISBEHAVING);
    let p = consumer("python3 tests/protocol/misbehave.py", tight());
    // What each misbehaviour must be reported as (a word of the fault
    // message); the cases between them get the consumer's own answer,
    // which shows a fresh child took over after each fault.
    let faults = [
        ("garbage", "bad reply"),
        ("wrong-id", "while request"),
        ("crash", "without a reply"),
        ("hang", "no reply within 1000 ms"),
        ("flood", "longer than 10000 bytes"),
    ];
    let started = std::time::Instant::now();
    for c in &cases {
        let o = p.evaluate(c);
        match faults.iter().find(|f| f.0 == c.name) {
            Some((_, word)) => {
                assert!(
                    matches!(&o, Outcome::Failed(Failure::ConsumerFault { what }) if what.contains(word)),
                    "{}: {o:?}",
                    c.name
                )
            }
            None => assert_eq!(o, Outcome::Failed(Failure::Unsupported { what: "on purpose".into() }), "{}", c.name),
        }
    }
    // One hang of 1 s, everything else quick: no request waits twice.
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());

    // Through the runner: each fault is a fault of that consumer (never
    // three in a row here, so it is not declared down), which fails the
    // run only when gated.
    let all: Vec<Case> = cases.into_iter().map(Case::Expr).collect();
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(consumer("python3 tests/protocol/misbehave.py", tight()))];
    let opts = Options { gates: vec!["misbehave".into()], ..Options::default() };
    let s = runner::run(&all, &Reference, &Fast, &others, &opts);
    let v = &s.verdicts["misbehave"];
    assert_eq!(v.get(&Verdict::Fault), Some(&5));
    assert_eq!(v.get(&Verdict::Disagree), None);
    assert!(s.health["misbehave"].down.is_none());
    assert_eq!(v.get(&Verdict::Unsupported), Some(&6));
    assert!(s.failed);
}

#[test]
fn the_pool_runs_at_most_its_bound_of_children_in_parallel() {
    // Eight threads ask 16 slow cases (100 ms each) of a pool of two: both
    // children are started (the requests overlap) and no third one is.
    let yaml: String = (0..16).fold("target: x86_64\ncases:\n".to_string(), |y, i| {
        y + &format!("  - {{ name: slow-{i}, rules: [op.lit.pushes-generic], expr: DW_OP_lit1 }}\n")
    });
    let cases = cases(&yaml);
    let dir = std::env::temp_dir().join(format!("dwarfcheck-protocol-pids-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let cmd = format!("cd '{}' && PIDS='{}' exec python3 tests/protocol/misbehave.py", root().display(), dir.display());
    let p = Protocol::new(&cmd, default_budget(), 2).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(8).build().unwrap();
    let outcomes: Vec<Outcome> = pool.install(|| {
        use rayon::prelude::*;
        cases.par_iter().map(|c| p.evaluate(c)).collect()
    });
    assert!(
        outcomes.iter().all(|o| *o == Outcome::Failed(Failure::Unsupported { what: "on purpose".into() })),
        "{outcomes:?}"
    );
    drop(p);
    let pids = std::fs::read_to_string(&dir).unwrap();
    let _ = std::fs::remove_file(&dir);
    assert_eq!(pids.lines().collect::<std::collections::BTreeSet<_>>().len(), 2, "{pids}");
}

#[test]
fn a_bad_handshake_or_spec_is_refused_up_front() {
    let dir = root();
    let run = |spec: &str| Protocol::from_spec(spec, tight()).map(|p| p.name().to_string());
    // The first child's failure, inside the error that names the command.
    let start_failure = |spec: &str| match run(spec).unwrap_err() {
        ProtocolError::Start { source, .. } => *source,
        other => panic!("expected a start failure, got {other}"),
    };
    let e = start_failure(&format!("cmd:sh '{}'", dir.join("tests/protocol/bad_hello.sh").display()));
    assert!(matches!(&e, ProtocolError::HelloVersion { found } if found == "dwarfcheck/0"), "{e}");
    // Its end of file and its exit come together: either is reported.
    let e = start_failure("cmd:/nonexistent/consumer");
    assert!(matches!(e, ProtocolError::NoReply { .. } | ProtocolError::Exited { .. }), "{e}");
    let e = run("python3 x.py").unwrap_err();
    assert!(matches!(&e, ProtocolError::BadSpec { spec } if spec == "python3 x.py"), "{e}");
    assert!(e.to_string().contains("cmd:"));
    assert!(matches!(run("cmd:  "), Err(ProtocolError::EmptyCommand)));
}

#[test]
fn a_deliberately_wrong_answer_is_a_disagreement() {
    let cases = cases(SUBSET);
    let p = consumer("python3 tests/protocol/off_by_one.py", default_budget());
    assert_eq!(p.name(), "off-by-one");
    // const-plus is 1; the buggy consumer says 2.
    let reference = Reference.evaluate(&cases[0]);
    let wrong = p.evaluate(&cases[0]);
    assert_eq!(wrong, generic64(2));
    assert_eq!(judge(&reference, &wrong, false), Verdict::Disagree);
    // Locations it leaves alone, so `breg` still agrees.
    assert_eq!(judge(&Reference.evaluate(&cases[1]), &p.evaluate(&cases[1]), false), Verdict::Agree);

    let all: Vec<Case> = cases.into_iter().map(Case::Expr).collect();
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(p)];
    let s = runner::run(&all, &Reference, &Fast, &others, &Options::default());
    // Two value cases (const-plus, breg-as-value) are off by one.
    assert_eq!(s.verdicts["off-by-one"].get(&Verdict::Disagree), Some(&2));
    let who: Vec<_> = s.failures.iter().map(|f| (f.case.as_str(), &f.finding)).collect();
    let finding = Finding::Consumer { consumer: "off-by-one".into(), gated: false };
    assert_eq!(who, vec![("const-plus", &finding), ("breg-as-value", &finding)]);
}

/// The text between `<!-- name -->` and the next `<!-- end -->` in
/// docs/protocol.md, inside its code fence.
fn doc_block(doc: &str, name: &str) -> String {
    let start = doc.find(&format!("<!-- {name} -->")).unwrap_or_else(|| panic!("no {name} block"));
    let rest = &doc[start..];
    let end = rest.find("<!-- end -->").expect("block end");
    rest[..end].lines().filter(|l| !l.starts_with("<!--") && !l.starts_with("```")).collect::<Vec<_>>().join("\n")
}

/// The bundled case `name` of `file` (under specs/cases/).
fn bundled(file: &str, name: &str) -> ExprCase {
    dwarfcheck::case::yaml::load_file(&root().join("specs/cases").join(file))
        .unwrap()
        .into_iter()
        .find_map(|c| match c {
            Case::Expr(e) if e.name == name => Some(e),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no case {name} in {file}"))
}

#[test]
fn the_worked_examples_in_the_docs_are_what_the_code_sends_and_gets() {
    let doc = std::fs::read_to_string(root().join("docs/protocol.md")).unwrap();
    assert_eq!(wire::hello_line(), doc_block(&doc, "hello"));
    // The two cases of docs/protocol.md, "Worked example", with their
    // outcomes worked out by hand on the big-endian 32-bit target be32:
    // - be-breg: r0 holds 00 00 10 00 = 0x1000 (big endian); + 4 is a
    //   memory location at byte 0x1004, bit address 0x8020;
    // - be-stack-value: 5 as a 4-byte generic value in memory order is
    //   00 00 00 05 (implicit storage; written last byte first: "05000000").
    let examples = [
        ("be-breg", simple(Source::memory(0, 8 * 0x1004))),
        ("be-stack-value", simple(Source::Implicit { bytes: vec![0, 0, 0, 5], bit_offset: 0 })),
    ];
    let mut input = format!("{}\n", doc_block(&doc, "hello"));
    let mut want = format!("{}\n", doc_block(&doc, "hello-reply"));
    for (i, (name, outcome)) in examples.iter().enumerate() {
        let id = i as u64 + 1;
        let case = bundled("expr/big-endian.yaml", name);
        // What dwarfcheck sends for the case as request `id`.
        assert_eq!(
            wire::evaluate_line(id, &case, wire::Version::V1).unwrap(),
            doc_block(&doc, &format!("request-{id}")),
            "{name}"
        );
        // The documented reply is the reference's outcome.
        let reply = doc_block(&doc, &format!("reply-{id}"));
        let got = dwarfcheck::consumer::protocol::reply::parse_result(&reply, id, wire::Version::V1).unwrap();
        assert_eq!(&got, outcome, "{name}");
        assert_eq!(got, Reference.evaluate(&case), "{name}");
        input += &format!("{}\n", doc_block(&doc, &format!("request-{id}")));
        want += &format!("{reply}\n");
    }
    // What the example consumer answers to the documented lines.
    assert_eq!(python(&["examples/protocol_consumer.py"], &input), want);
}

/// Runs python3 with `args` in the crate root on `input`; its stdout.
fn python(args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(args)
        .current_dir(root())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 on PATH");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_cli_runs_a_protocol_consumer_by_its_handshake_name() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .current_dir(root())
        .args(["run", "specs/cases/expr/memory.yaml", "--consumers", "none", "--json"])
        .args(["--consumer", "cmd:python3 examples/protocol_consumer.py", "--gate", "example-python"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let agree = &j["summary"]["verdicts"]["example-python"]["agree"];
    assert!(agree.as_u64().is_some_and(|n| n > 0), "{j}");
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .current_dir(root())
        .args(["run", "specs/cases/expr/memory.yaml", "--consumer", "python3 x.py"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
