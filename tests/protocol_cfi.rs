//! Version 2 of the process protocol (docs/protocol.md, "Version 2: row
//! tables and unwinding"): version negotiation (a version 1 consumer is
//! asked what it was asked before), every worked example of the document
//! checked against the code and the reference, `rows` and `unwind` requests
//! judged through the runner, and the pyelftools rows consumer of
//! `examples/` against the built-in `pyelftools` consumer on the bundled
//! CFI cases. Needs `python3`; the pyelftools parts are skipped without
//! pyelftools (unless `CI` is set).

use dwarfcheck::case::{Case, CfiCase};
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::external::{External, RunBudget, Tool};
use dwarfcheck::consumer::protocol::wire::{RowsRequest, UnwindRequest, Version};
use dwarfcheck::consumer::protocol::{default_budget, reply, serve, wire, Protocol};
use dwarfcheck::consumer::{Answer, Consumer};
use dwarfcheck::runner::compare::{judge_unwind, Verdict};
use dwarfcheck::runner::{self, Finding, Options};
use dwarfcheck_core::outcome::{CfiOutcome, Failure};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A consumer running `command` from the crate root with `workers` children.
fn consumer(command: &str, workers: usize) -> Protocol {
    let cmd = format!("cd '{}' && exec {command}", root().display());
    Protocol::new(&cmd, default_budget(), workers).unwrap_or_else(|e| panic!("{command}: {e}"))
}

fn have_pyelftools() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import elftools"])
        .output()
        .is_ok_and(|o| o.status.success());
    dwarfcheck::testing::needed("pyelftools", ok.then_some(())).is_some()
}

/// The bundled CFI case `name` of `file` (under specs/cases/).
fn cfi(file: &str, name: &str) -> CfiCase {
    dwarfcheck::case::yaml::load_file(&root().join("specs/cases").join(file))
        .unwrap()
        .into_iter()
        .find_map(|c| match c {
            Case::Cfi(e) if e.name == name => Some(e),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no case {name} in {file}"))
}

/// The text between `<!-- name -->` and the next `<!-- end -->` in
/// docs/protocol.md, inside its code fence.
fn doc_block(doc: &str, name: &str) -> String {
    let start = doc.find(&format!("<!-- {name} -->")).unwrap_or_else(|| panic!("no {name} block"));
    let rest = &doc[start..];
    let end = rest.find("<!-- end -->").expect("block end");
    rest[..end].lines().filter(|l| !l.starts_with("<!--") && !l.starts_with("```")).collect::<Vec<_>>().join("\n")
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
fn every_json_block_of_the_document_is_json() {
    let doc = std::fs::read_to_string(root().join("docs/protocol.md")).unwrap();
    let mut n = 0;
    for block in doc.split("```json\n").skip(1) {
        let text = &block[..block.find("```").expect("closed fence")];
        // The reply-shape block elides its outcome on purpose.
        if text.contains("{...}") {
            continue;
        }
        for line in text.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            n += 1;
        }
    }
    assert!(n >= 13, "{n} JSON lines");
}

#[test]
fn the_version_2_worked_examples_are_what_the_code_sends_and_the_reference_answers() {
    let doc = std::fs::read_to_string(root().join("docs/protocol.md")).unwrap();
    assert_eq!(wire::hello_line(), doc_block(&doc, "hello"));
    let hello = reply::parse_hello(&doc_block(&doc, "hello-reply-2")).unwrap();
    assert_eq!(hello.version(), Version::V2);
    assert!(hello.supports.rows && !hello.supports.unwind && !hello.supports.expr);

    // rows, by FDE offset: what dwarfcheck sends for the case.
    let gcc = cfi("cfi/eh-frame.yaml", "gcc-style-hand-encoded");
    let request_1 = doc_block(&doc, "rows-request-1");
    assert_eq!(wire::rows_line(1, &gcc).unwrap(), request_1);
    // rows, by address: the same request with the address instead.
    let request_2 = doc_block(&doc, "rows-request-2");
    let r2: RowsRequest = serde_json::from_str(&request_2).unwrap();
    assert_eq!((r2.id, r2.fde_offset, r2.address), (2, None, Some(0x1005)));
    for (id, request) in [(1, &request_1), (2, &request_2)] {
        let reply = doc_block(&doc, &format!("rows-reply-{id}"));
        assert_eq!(serve::answer(request).unwrap(), reply, "rows-reply-{id}");
        let CfiOutcome::Table(t) = reply::parse_rows(&reply, id).unwrap() else { panic!("a table") };
        // Worked out by hand in the document: the last row is
        // [0x1004, 0x1010) CFA = rbp + 16, rbp at CFA-16, rip at CFA-8.
        assert_eq!(t.rows.last().unwrap().to_string(), "[0x1004, 0x1010): CFA=reg6+16: reg6=[CFA-16], reg16=[CFA-8]");
        assert_eq!(t.rows.len(), if id == 1 { 3 } else { 1 });
    }
    // The whole table is the reference's for the case, and the case's
    // hand-derived expectation.
    let r1 = reply::parse_rows(&doc_block(&doc, "rows-reply-1"), 1).unwrap();
    assert_eq!(r1, Reference.frame_table(&gcc));

    // unwind: what dwarfcheck sends, and the reference's reply.
    let two = cfi("cfi/unwind.yaml", "unwind-two-frames");
    let u = two.unwind.as_ref().unwrap();
    let request_3 = doc_block(&doc, "unwind-request-3");
    assert_eq!(wire::unwind_line(3, &two, u).unwrap(), request_3);
    let r3: UnwindRequest = serde_json::from_str(&request_3).unwrap();
    assert_eq!((r3.state.pc, r3.frames), (Some(0x1004), None));
    let reply_3 = doc_block(&doc, "unwind-reply-3");
    assert_eq!(serve::answer(&request_3).unwrap(), reply_3);
    let got = reply::parse_unwind(&reply_3, 3).unwrap();
    // Hand-derived in the document (and the case's expectation): CFAs
    // 0x7008 and 0x7010, caller pc 0x2010, then the base of the stack.
    let caller_pcs: Vec<_> = got.steps.iter().map(|s| s.caller_pc).collect();
    assert_eq!(caller_pcs, vec![Some(0x2010), None]);
    let reference = Reference.unwind(&two, u).unwrap();
    let p = consumer("python3 examples/pyelftools_rows_consumer.py", 1);
    let view = p.unwind_view(&two, &reference).unwrap();
    assert_eq!(judge_unwind(&view, &got, false), Verdict::Agree);

    // The example consumer answers the handshake and both rows requests
    // with exactly the documented lines, and declines the unwind.
    if have_pyelftools() {
        let input = [doc_block(&doc, "hello"), request_1, request_2].join("\n") + "\n";
        let want = ["hello-reply-2", "rows-reply-1", "rows-reply-2"].map(|b| doc_block(&doc, b)).join("\n") + "\n";
        assert_eq!(python(&["examples/pyelftools_rows_consumer.py"], &input), want);
        let declined = python(&["examples/pyelftools_rows_consumer.py"], &format!("{request_3}\n"));
        assert!(declined.contains(r#""kind":"unsupported""#), "{declined}");
    }
}

#[test]
fn a_version_1_consumer_is_asked_what_it_was_asked_before() {
    let v1 = consumer("python3 examples/protocol_consumer.py", 1);
    assert_eq!(v1.version(), Version::V1);
    assert!(v1.supports().expr && !v1.supports().cfi);
    // No CFI request is sent: unsupported without asking.
    let gcc = cfi("cfi/eh-frame.yaml", "gcc-style-hand-encoded");
    assert!(
        matches!(v1.frame_table(&gcc), CfiOutcome::Failed(Failure::Unsupported { what }) if what.contains("dwarfcheck/1"))
    );
    let two = cfi("cfi/unwind.yaml", "unwind-two-frames");
    assert!(v1.unwind(&two, two.unwind.as_ref().unwrap()).is_none());
    // A version 1 hello reply declaring rows and unwind is read as
    // version 1's: neither is asked.
    let r = reply::parse_hello(
        r#"{"protocol":"dwarfcheck/1","type":"hello","name":"x","supports":{"editions":["dwarf5"],"expr":true,"rows":true,"unwind":true}}"#,
    )
    .unwrap();
    assert!(!r.supports.rows && !r.supports.unwind);
    // The version 2 consumer picks version 2 and is judged on CFI.
    let v2 = consumer("python3 tests/protocol/replay.py /dev/null", 1);
    assert_eq!(v2.version(), Version::V2);
    assert!(v2.supports().cfi && !v2.supports().expr);
}

/// The bundled unwinding cases, as cases.
fn unwind_cases() -> Vec<Case> {
    dwarfcheck::testing::bundled_cfi_cases()
        .into_iter()
        .filter(|c| matches!(c, Case::Cfi(c) if c.unwind.is_some()))
        .collect()
}

#[test]
fn unwind_replies_are_judged_like_framehops() {
    // A consumer replaying the reference's own answers agrees on every
    // bundled unwinding case it is sent; one with a wrong caller pc in one
    // case disagrees there, and nowhere else.
    let cases = unwind_cases();
    let mut answers = BTreeMap::new();
    let mut sent = 0;
    for c in &cases {
        let Case::Cfi(c) = c else { continue };
        let Ok(line) = wire::unwind_line(1, c, c.unwind.as_ref().unwrap()) else { continue };
        sent += 1;
        let reply: serde_json::Value = serde_json::from_str(&serve::answer(&line).unwrap()).unwrap();
        answers.insert(c.name.clone(), reply["outcome"].clone());
    }
    assert!(sent >= 10, "{sent} unwinding cases sent");
    let run = |answers: &BTreeMap<String, serde_json::Value>| {
        let file =
            std::env::temp_dir().join(format!("dwarfcheck-replay-{}-{}.json", std::process::id(), answers.len()));
        std::fs::write(&file, serde_json::to_string(answers).unwrap()).unwrap();
        let others: Vec<Box<dyn Consumer>> =
            vec![Box::new(consumer(&format!("python3 tests/protocol/replay.py '{}'", file.display()), 2))];
        let s = runner::run(&cases, &Reference, &Fast, &others, &Options::default());
        let _ = std::fs::remove_file(&file);
        s
    };
    let s = run(&answers);
    let v = &s.verdicts["replay"];
    let names: Vec<_> = s.failures.iter().map(|f| (&f.case, &f.outcomes)).collect();
    assert_eq!(v.get(&Verdict::Disagree), None, "{v:?} {names:#?}");
    assert_eq!(v.get(&Verdict::Fault), None, "{v:?}");
    let judged: usize = v.iter().filter(|(k, _)| !matches!(k, Verdict::OutsideEdition)).map(|(_, n)| *n).sum();
    assert!(v.get(&Verdict::Agree).copied().unwrap_or(0) >= 10, "{v:?} ({judged} judged)");

    // The first case judged on a step with a caller pc and resting on no
    // open rule (unwind-two-frames rests on unwind.sp-is-cfa).
    let judged = cases.iter().find_map(|c| match c {
        Case::Cfi(c)
            if !dwarfcheck::runner::compare::exercises_unspecified(&c.rules)
                && answers.get(&c.name).is_some_and(|o| o["steps"][0]["caller_pc"].is_u64()) =>
        {
            Some(c.name.clone())
        }
        _ => None,
    });
    let name = judged.expect("a judged case");
    let mut wrong = answers.clone();
    let o = wrong.get_mut(&name).unwrap();
    o["steps"][0]["caller_pc"] = serde_json::json!(o["steps"][0]["caller_pc"].as_u64().unwrap() + 4);
    let s = run(&wrong);
    let failing: Vec<_> = s.failures.iter().map(|f| (f.case.clone(), &f.finding)).collect();
    let finding = Finding::Consumer { consumer: "replay".into(), gated: false };
    assert_eq!(failing, vec![(name, &finding)], "{:?}", s.verdicts["replay"]);
}

#[test]
fn the_pyelftools_rows_consumer_agrees_where_the_built_in_pyelftools_agrees() {
    if !have_pyelftools() {
        return;
    }
    let cases = dwarfcheck::testing::bundled_cfi_cases();
    let py = External::new(Tool::Pyelftools, RunBudget::default()).unwrap();
    let others: Vec<Box<dyn Consumer>> = vec![
        Box::new(External::new(Tool::Pyelftools, RunBudget::default()).unwrap()),
        Box::new(consumer("python3 examples/pyelftools_rows_consumer.py", 2)),
    ];
    let s = runner::run(&cases, &Reference, &Fast, &others, &Options::default());
    let v = &s.verdicts["pyelftools-protocol"];
    eprintln!("pyelftools-protocol: {v:?}\npyelftools: {:?}", s.verdicts["pyelftools"]);
    assert_eq!(v.get(&Verdict::Fault), None, "{:?}", s.health);
    // Disagreements: the same cases as the built-in consumer's, each in
    // one of its classes (P1 to P5).
    let failing = |who: &str| -> Vec<String> {
        s.failures
            .iter()
            .filter(|f| matches!(&f.finding, Finding::Consumer { consumer, .. } if consumer == who))
            .map(|f| f.case.clone())
            .collect()
    };
    let ours = failing("pyelftools-protocol");
    assert_eq!(ours, failing("pyelftools"));
    for name in &ours {
        let case = cases.iter().find(|c| c.name() == name).unwrap();
        let Case::Cfi(c) = case else { panic!("a CFI case") };
        let (r, a) = (Reference.frame_table(c), py.frame_table(c));
        let class = py.failure_class(case, Answer::Cfi(&r), Answer::Cfi(&a)).map(|k| k.id);
        assert!(class.as_deref().is_some_and(|k| k.starts_with('P')), "{name}: {class:?}");
    }
    // Agreements: the built-in consumer's, but for the AArch64 FDEs with
    // DW_CFA_AARCH64_negate_ra_state, which this consumer declines.
    let agree = |who: &str| s.verdicts[who].get(&Verdict::Agree).copied().unwrap_or(0);
    let declined = v.get(&Verdict::Unsupported).copied().unwrap_or(0);
    assert!(agree("pyelftools-protocol") <= agree("pyelftools"));
    assert!(agree("pyelftools-protocol") + declined >= agree("pyelftools"), "{v:?}");
    assert!(agree("pyelftools-protocol") >= 40, "{v:?}");
}
