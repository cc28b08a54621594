//! Contained consumers (issue 13, item 5): real misbehaving consumers,
//! small shell scripts written by each test into a directory of its own.
//! A consumer that never answers is declared down after three faults in a
//! row and costs about three time budgets; one that exits is noticed at
//! once even when something it started holds its stdout; nothing it
//! starts outlives it, `setsid` children included (checked in `/proc`);
//! its stderr is kept, capped, and not passed through; faults are counted
//! apart from disagreements in the summary, the JSON and JUnit.

use dwarfcheck::case::{Case, ExprCase};
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::debugger::{Debugger, Kind, Limits};
use dwarfcheck::consumer::external::RunBudget;
use dwarfcheck::consumer::protocol::Protocol;
use dwarfcheck::consumer::stderr::DEFAULT_CAP;
use dwarfcheck::consumer::Consumer;
use dwarfcheck::runner::compare::Verdict;
use dwarfcheck::runner::{self, report, Finding, Options};
use dwarfcheck_core::outcome::{Failure, Outcome};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A fresh directory for one test's scripts and files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dwarfcheck-contained-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The handshake reply of the test consumers (name `NAME`).
fn hello(name: &str) -> String {
    format!(
        r#"{{"protocol":"dwarfcheck/1","type":"hello","name":"{name}","supports":{{"editions":["dwarf5","dwarf5-gnu","hetero2020"],"expr":true}}}}"#
    )
}

/// Shell lines that answer every request `unsupported` with its id until
/// end of input.
const ANSWER_ALL: &str = r#"while read -r line; do
  id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  printf '{"protocol":"dwarfcheck/1","type":"result","id":%s,"outcome":{"kind":"unsupported","what":"test"}}\n' "$id"
done"#;

/// Shell lines that read every request and never answer (stdout open).
const MUTE: &str = "while read -r line; do :; done";

/// Writes `body` as a shell script `name.sh` in `dir`, after a line that
/// reads the handshake request; returns the consumer command.
fn script(dir: &Path, name: &str, before_hello: &str, after_hello: &str) -> String {
    let path = dir.join(format!("{name}.sh"));
    let text = format!("{before_hello}\nread -r hello\necho '{}'\n{after_hello}\n", hello(name));
    std::fs::write(&path, text).unwrap();
    format!("sh '{}'", path.display())
}

/// `n` small x86_64 expression cases.
fn cases(n: usize) -> Vec<ExprCase> {
    let yaml: String = (0..n).fold("target: x86_64\ncases:\n".to_string(), |y, i| {
        y + &format!(
            "  - {{ name: c{i}, rules: [op.plus-uconst.adds], context: {{ result: value }}, expr: \"DW_OP_lit{} DW_OP_plus_uconst 1\" }}\n",
            i % 32
        )
    });
    dwarfcheck::case::yaml::load_str("contained.yaml", &yaml)
        .unwrap()
        .into_iter()
        .map(|c| match c {
            Case::Expr(e) => e,
            Case::Cfi(_) => unreachable!(),
        })
        .collect()
}

fn budget(secs: u64) -> RunBudget {
    RunBudget { time: Duration::from_secs(secs), output_bytes: 1 << 20 }
}

/// Whether process `pid` exists (a zombie counts: it was not reaped).
fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The pid written in `file`, waiting up to 5 s for it.
fn pid_in(file: &Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(p) = std::fs::read_to_string(file).ok().and_then(|s| s.trim().parse().ok()) {
            return p;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "{} not written", file.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The session id of process `pid`, from `/proc/PID/stat`.
fn session_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    dwarfcheck::consumer::contain::procfs::parse_stat(pid, &stat).map(|p| p.sid)
}

fn is_fault(o: &Outcome, word: &str) -> bool {
    matches!(o, Outcome::Failed(Failure::ConsumerFault { what }) if what.contains(word))
}

#[test]
fn a_consumer_that_never_answers_is_declared_down_after_three_timeouts() {
    let dir = scratch("mute");
    let cmd = script(&dir, "mute", "", MUTE);
    // One child, 1 s per request, 20 cases: without the limit the run
    // would wait 20 s, one timeout after another.
    let n = 20;
    let p = Protocol::new(&cmd, budget(1), 1).unwrap();
    let all: Vec<Case> = cases(n).into_iter().map(Case::Expr).collect();
    let others: Vec<Box<dyn Consumer>> = vec![Box::new(p)];
    let start = Instant::now();
    let opts = Options { gates: vec!["mute".into()], ..Options::default() };
    let s = runner::run(&all, &Reference, &Fast, &others, &opts);
    let took = start.elapsed();
    let v = &s.verdicts["mute"];
    assert_eq!(v.get(&Verdict::Fault), Some(&3), "{v:?}");
    assert_eq!(v.get(&Verdict::ConsumerDown), Some(&(n - 3)), "{v:?}");
    assert_eq!(v.get(&Verdict::Disagree), None, "{v:?}");
    // Three timeouts of 1 s; generous room for a busy machine, far below 20.
    assert!(took < Duration::from_secs(8), "{took:?}");
    let h = &s.health["mute"];
    let down = h.down.as_ref().expect("declared down");
    assert_eq!((down.faults_in_a_row, down.answered_before, h.faults), (3, 0, 3));
    assert!(down.last_fault.contains("no reply within 1000 ms"), "{}", down.last_fault);
    assert_eq!(h.not_asked, (n - 3) as u64);
    // Faults are findings of their own, and a gated consumer that faults
    // fails the run.
    assert_eq!((s.failure_count, s.fault_count), (3, 3));
    assert!(s.failures.iter().all(|f| f.finding == Finding::ConsumerFault { consumer: "mute".into(), gated: true }));
    assert!(s.failed);
    // The details show the answer of the run, not a second request.
    assert!(s.failures[0].outcomes.iter().any(|(n, o)| n == "mute" && o.contains("no reply within 1000 ms")));
    // The text summary and JUnit count faults apart from disagreements.
    let text = report::text("t", &s, 0);
    assert!(text.contains("3 finding(s): 0 disagreement(s), 3 fault(s)"), "{text}");
    assert!(text.contains("declared DOWN after 3 faults in a row"), "{text}");
    let junit = report::junit("t", &s);
    assert!(junit.contains(r#"<testsuite name="mute" tests="5" failures="0" errors="4">"#), "{junit}");
    assert!(junit.contains("consumer down: 17 case(s) not asked"), "{junit}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_consumer_that_exits_is_noticed_at_once_though_a_child_holds_its_stdout() {
    let dir = scratch("exits");
    let pidfile = dir.join("sleep.pid");
    // At the first request it starts a `sleep` that inherits its stdout,
    // and exits 3 without replying.
    let after = format!("read -r request\nsleep 1000 &\necho $! > '{}'\nexit 3", pidfile.display());
    let cmd = script(&dir, "exits", "", &after);
    let p = Protocol::new(&cmd, budget(30), 1).unwrap();
    let c = &cases(1)[0];
    let start = Instant::now();
    let o = p.evaluate(c);
    let took = start.elapsed();
    assert!(is_fault(&o, "exited without a reply (exit status: 3)"), "{o:?}");
    // Not the 30 s budget, nor waiting for the sleep to close stdout.
    assert!(took < Duration::from_secs(3), "{took:?}");
    let sleeper = pid_in(&pidfile);
    drop(p);
    assert!(!exists(sleeper), "the sleep {sleeper} outlived the consumer");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_consumer_that_closes_its_stdin_is_noticed_at_once() {
    let dir = scratch("no-stdin");
    let cmd = script(&dir, "no-stdin", "", "exec 0<&-\nsleep 1000");
    let p = Protocol::new(&cmd, budget(30), 1).unwrap();
    let start = Instant::now();
    let o = p.evaluate(&cases(1)[0]);
    assert!(is_fault(&o, "stdin is closed"), "{o:?}");
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_setsid_child_does_not_outlive_the_run() {
    // The consumer starts `sleep 1000` in a session of its own, then
    // answers (ending on end of input) or crashes at the first request.
    for (name, after) in [("setsid-ok", ANSWER_ALL), ("setsid-crash", "read -r request\nkill -KILL $$")] {
        let dir = scratch(name);
        let pidfile = dir.join("sleep.pid");
        let before =
            format!("setsid sh -c 'echo $$ > \"{}\"; exec sleep 1000' </dev/null >/dev/null 2>&1 &", pidfile.display());
        let cmd = script(&dir, name, &before, after);
        let p = Protocol::new(&cmd, budget(30), 1).unwrap();
        let sleeper = pid_in(&pidfile);
        // It really left the consumer's session.
        let deadline = Instant::now() + Duration::from_secs(5);
        while session_of(sleeper) != Some(sleeper) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(session_of(sleeper), Some(sleeper), "{name}");
        let all: Vec<Case> = cases(3).into_iter().map(Case::Expr).collect();
        let others: Vec<Box<dyn Consumer>> = vec![Box::new(p)];
        let s = runner::run(&all, &Reference, &Fast, &others, &Options::default());
        let v = &s.verdicts[name];
        if name == "setsid-ok" {
            assert_eq!(v.get(&Verdict::Unsupported), Some(&3), "{v:?}");
        } else {
            assert!(v.get(&Verdict::Fault).is_some(), "{v:?}");
        }
        drop(others);
        assert!(!exists(sleeper), "{name}: the setsid sleep {sleeper} outlived the run");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn stderr_is_kept_capped_and_not_passed_through() {
    let dir = scratch("spam");
    // 1 MB of stderr between two marker lines, then normal answers.
    let before = "echo FIRST-LINE >&2\nhead -c 1000000 /dev/zero | tr '\\0' x >&2\necho >&2\necho LAST-LINE >&2";
    let cmd = script(&dir, "spam", before, ANSWER_ALL);
    let file = dir.join("one.yaml");
    std::fs::write(
        &file,
        "target: x86_64\ncases:\n  - { name: one, rules: [op.lit.pushes-generic], context: { result: value }, expr: \"DW_OP_lit1\" }\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .args(["run", "--consumers", "none", "--json", "--consumer"])
        .arg(format!("cmd:{cmd}"))
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Nothing of it on dwarfcheck's own stderr.
    assert!(!String::from_utf8_lossy(&out.stderr).contains("xxxx"), "{} bytes", out.stderr.len());
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &j["summary"]["health"]["spam"]["stderr"];
    // "FIRST-LINE\n" + 1,000,000 x + "\n" + "LAST-LINE\n".
    assert_eq!(e["bytes"], 11 + 1_000_000 + 1 + 10, "{e}");
    assert_eq!(e["truncated"], true);
    let text = e["text"].as_str().unwrap();
    assert!(text.starts_with("FIRST-LINE\n") && text.ends_with("LAST-LINE\n"), "{}", &text[..40]);
    assert!(text.len() <= DEFAULT_CAP + 100, "{}", text.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_command_line_limit_and_the_fault_columns() {
    // `--consumer-down-after 2` with a consumer that never answers: two
    // faults, the other cases down, in the JSON and JUnit.
    let dir = scratch("cli");
    let cmd = script(&dir, "mute", "", MUTE);
    let junit = dir.join("junit.xml");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "specs/cases/expr/memory.yaml", "--consumers", "none", "--json"])
        .args(["--protocol-timeout", "1", "--consumer-down-after", "2", "--junit"])
        .arg(&junit)
        .arg("--consumer")
        .arg(format!("cmd:{cmd}"))
        .output()
        .unwrap();
    // Not gated: faults do not fail the run.
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &j["summary"]["verdicts"]["mute"];
    let cases = j["summary"]["expr_cases"].as_u64().unwrap();
    // Two requests in flight at a time at most (the pool follows rayon's
    // threads, up to 4): the faults are 2 to 5, the rest down.
    let faults = v["fault"].as_u64().unwrap();
    assert!((2..=5).contains(&faults), "{v}");
    assert_eq!(faults + v["consumer-down"].as_u64().unwrap(), cases, "{v}");
    assert!(v.get("disagree").is_none(), "{v}");
    assert_eq!(j["summary"]["health"]["mute"]["down"]["faults_in_a_row"], 2);
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(x.contains(&format!(r#"failures="0" errors="{}""#, faults + 1)), "{x}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fake debugger (a shell script) that never answers is declared down
/// after three runs; one that crashes at once on every case is not (a
/// crash on a case is that case's finding, and costs little).
#[test]
fn a_debugger_that_never_answers_is_declared_down() {
    let dir = scratch("debugger");
    let all: Vec<Case> = cases(8).into_iter().map(Case::Expr).collect();
    let limits = Limits { per_case: Duration::from_millis(300), batch: 64, start: Duration::from_millis(200) };
    for (body, faults, down) in [("sleep 600", 3, 5), ("exit 1", 8, 0)] {
        let path = dir.join("fake-gdb");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&path).status().unwrap();
        let d = Debugger::with_program(Kind::Gdb, path, limits);
        let others: Vec<Box<dyn Consumer>> = vec![Box::new(d)];
        let s = runner::run(&all, &Reference, &Fast, &others, &Options::default());
        let v = &s.verdicts["gdb"];
        assert_eq!(v.get(&Verdict::Fault).copied().unwrap_or(0), faults, "{body}: {v:?}");
        assert_eq!(v.get(&Verdict::ConsumerDown).copied().unwrap_or(0), down, "{body}: {v:?}");
        assert_eq!(s.health["gdb"].down.is_some(), down > 0, "{body}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
