//! A bounded pool of consumer child processes, each asked one line at a
//! time under a time budget and a reply-length cap.
//!
//! Every child runs `sh -c COMMAND` in its own process group, with a
//! writer thread feeding its stdin and a reader thread cutting its stdout
//! into lines, so that a child that stops reading or writing is noticed by
//! the requester's timeout and never blocks dwarfcheck. A child that broke
//! the protocol, timed out or exited is killed (its whole process group)
//! and replaced by a fresh one, with a fresh handshake, at the next request.

use super::reply::{self, HelloReply};
use super::wire;
use super::ProtocolError;
use crate::consumer::external::process::{kill_group, RunBudget};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// What the reader thread found on the child's stdout.
enum Line {
    /// One line, without its `\n`.
    Text(String),
    /// The child closed its stdout.
    Eof,
    /// A line longer than the cap, or not UTF-8, or a read error.
    Bad(String),
}

/// One running child with its handshake done.
pub struct Worker {
    child: Child,
    to_child: Option<Sender<String>>,
    from_child: Receiver<Line>,
    /// Whether dropping it lets it exit on its own first (false once it
    /// misbehaved: then it is killed at once).
    graceful: bool,
    /// Its `hello` reply.
    pub hello: HelloReply,
}

impl Worker {
    /// Starts `sh -c command` and does the handshake.
    ///
    /// Errors: the shell cannot start; the child's hello reply is late,
    /// malformed or of another version (see [`reply::parse_hello`]).
    pub fn start(command: &str, budget: RunBudget) -> Result<Worker, ProtocolError> {
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| ProtocolError::Spawn { command: command.to_string(), source })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            kill_group(&mut child);
            return Err(ProtocolError::NoPipes);
        };
        let (to_child, writer_rx) = mpsc::channel::<String>();
        std::thread::spawn(move || write_lines(stdin, writer_rx));
        // One line in flight: a child that floods stdout waits on the pipe
        // instead of filling dwarfcheck's memory.
        let (reader_tx, from_child) = mpsc::sync_channel::<Line>(1);
        let cap = budget.output_bytes;
        std::thread::spawn(move || read_lines(stdout, reader_tx, cap));
        let mut w = Worker {
            child,
            to_child: Some(to_child),
            from_child,
            // Until the handshake is through: killed at once on failure.
            graceful: false,
            hello: HelloReply {
                protocol: String::new(),
                kind: String::new(),
                name: String::new(),
                supports: reply::WireSupport { editions: Vec::new(), expr: false, cfi: false },
            },
        };
        let reply = w.ask(&wire::hello_line(), budget.time)?;
        w.hello = reply::parse_hello(&reply)?;
        w.graceful = true;
        Ok(w)
    }

    /// Sends one line and waits up to `time` for one line back.
    ///
    /// Errors: the child closed its stdin or stdout, exited, sent a line
    /// that is too long or not UTF-8, or did not answer in time.
    pub fn ask(&mut self, line: &str, time: Duration) -> Result<String, ProtocolError> {
        let sent = self.to_child.as_ref().is_some_and(|tx| tx.send(line.to_string()).is_ok());
        if !sent {
            return Err(ProtocolError::StdinClosed { status: self.status() });
        }
        match self.from_child.recv_timeout(time) {
            Ok(Line::Text(s)) => Ok(s),
            Ok(Line::Bad(why)) => Err(ProtocolError::BadLine(why)),
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                // Give an exiting child a moment so its status can be told.
                std::thread::sleep(Duration::from_millis(20));
                Err(ProtocolError::NoReply { status: self.status() })
            }
            Err(RecvTimeoutError::Timeout) => Err(ProtocolError::Timeout { ms: time.as_millis() }),
        }
    }

    /// ` (exit status ...)` if the child has ended, else ``.
    fn status(&mut self) -> String {
        match self.child.try_wait() {
            Ok(Some(s)) => format!(" ({s})"),
            _ => String::new(),
        }
    }
}

impl Drop for Worker {
    /// Closes the child's stdin (end of requests), gives a well-behaved
    /// child about 100 ms to exit, then kills its process group and reaps
    /// it.
    fn drop(&mut self) {
        self.to_child = None;
        for _ in 0..if self.graceful { 10 } else { 0 } {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        kill_group(&mut self.child);
    }
}

/// Writes each received line plus `\n` and flushes; ends when the channel
/// closes (dropping stdin, so the child sees end of file) or a write fails.
fn write_lines(mut stdin: std::process::ChildStdin, rx: Receiver<String>) {
    for line in rx {
        let ok = stdin.write_all(line.as_bytes()).and_then(|_| stdin.write_all(b"\n")).and_then(|_| stdin.flush());
        if ok.is_err() {
            return;
        }
    }
}

/// Cuts stdout into lines of at most `cap` bytes and sends them; stops at
/// end of file, at the first bad line, or when nobody listens.
fn read_lines(stdout: std::process::ChildStdout, tx: SyncSender<Line>, cap: u64) {
    let mut r = BufReader::with_capacity(1 << 16, stdout);
    loop {
        let mut buf = Vec::new();
        let got = (&mut r).take(cap.saturating_add(1)).read_until(b'\n', &mut buf);
        let line = match got {
            Err(e) => Line::Bad(format!("reading its stdout: {e}")),
            Ok(0) => Line::Eof,
            Ok(_) if buf.last() == Some(&b'\n') || buf.len() as u64 <= cap => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                match String::from_utf8(buf) {
                    Ok(s) => Line::Text(s.strip_suffix('\r').map(str::to_string).unwrap_or(s)),
                    Err(_) => Line::Bad("a reply line that is not UTF-8".into()),
                }
            }
            Ok(_) => Line::Bad(format!("a reply line longer than {cap} bytes")),
        };
        let last = !matches!(line, Line::Text(_));
        if tx.send(line).is_err() || last {
            return;
        }
    }
}

/// Idle children and how many exist.
struct State {
    idle: Vec<Worker>,
    live: usize,
}

/// At most `max` children of one command, started on demand.
pub struct Pool {
    command: String,
    budget: RunBudget,
    max: usize,
    /// The first child's hello: restarted children must say the same.
    first: HelloReply,
    state: Mutex<State>,
    freed: Condvar,
}

impl Pool {
    /// Starts the first child (handshake included) of at most `max`
    /// (at least 1).
    ///
    /// Errors: see [`Worker::start`].
    pub fn new(command: &str, budget: RunBudget, max: usize) -> Result<Pool, ProtocolError> {
        let w = Worker::start(command, budget)?;
        Ok(Pool {
            command: command.to_string(),
            budget,
            max: max.max(1),
            first: w.hello.clone(),
            state: Mutex::new(State { idle: vec![w], live: 1 }),
            freed: Condvar::new(),
        })
    }

    /// The first child's hello reply.
    pub fn hello(&self) -> &HelloReply {
        &self.first
    }

    /// The per-request time and reply-length budget.
    pub fn budget(&self) -> RunBudget {
        self.budget
    }

    /// Runs `f` with a child of its own: an idle one, a new one while
    /// fewer than `max` exist, else the next one freed. A child for which
    /// `f` fails is killed; a later call starts a replacement.
    ///
    /// Errors: `f`'s error, or a replacement that did not start or
    /// introduced itself differently from the first child.
    pub fn with<T>(&self, f: impl FnOnce(&mut Worker) -> Result<T, ProtocolError>) -> Result<T, ProtocolError> {
        let mut lease = Lease { pool: self, worker: Some(self.checkout()?), healthy: false };
        let r = f(lease.worker.as_mut().expect("leased"));
        lease.healthy = r.is_ok();
        r
    }

    /// An idle child, or a new one (counted before it starts, so the bound
    /// holds while it does), waiting while `max` are busy.
    fn checkout(&self) -> Result<Worker, ProtocolError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(w) = st.idle.pop() {
                return Ok(w);
            }
            if st.live < self.max {
                st.live += 1;
                break;
            }
            st = self.freed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        drop(st);
        let started = Worker::start(&self.command, self.budget).and_then(|w| {
            if w.hello == self.first {
                Ok(w)
            } else {
                Err(ProtocolError::Restarted {
                    name: w.hello.name.clone(),
                    supports: format!("{:?}", w.hello.supports),
                })
            }
        });
        if started.is_err() {
            self.state.lock().unwrap_or_else(|e| e.into_inner()).live -= 1;
            self.freed.notify_one();
        }
        started
    }
}

/// A checked-out child. Dropping it returns a healthy child to the pool
/// and kills any other (also when the request panicked), freeing its slot.
struct Lease<'a> {
    pool: &'a Pool,
    worker: Option<Worker>,
    healthy: bool,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let Some(mut w) = self.worker.take() else { return };
        let mut st = self.pool.state.lock().unwrap_or_else(|e| e.into_inner());
        if self.healthy {
            st.idle.push(w);
        } else {
            st.live -= 1;
            drop(st);
            w.graceful = false;
            drop(w);
        }
        self.pool.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell consumer that answers the handshake, then reads on.
    const HELLO: &str = r#"read l; echo '{"protocol":"dwarfcheck/1","type":"hello","name":"t","supports":{"editions":[],"expr":true}}'; cat >/dev/null"#;

    fn budget() -> RunBudget {
        RunBudget { time: Duration::from_secs(5), output_bytes: 1 << 20 }
    }

    #[test]
    fn a_panicking_request_frees_its_slot() {
        // One slot: if the panic leaked it, the second request would wait
        // for ever; it runs on a thread so that the test can time out.
        let pool = std::sync::Arc::new(Pool::new(HELLO, budget(), 1).unwrap());
        let p = pool.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                p.with(|_| -> Result<(), ProtocolError> { panic!("request bug") })
            }));
            let second = p.with(|w| Ok(w.hello.name.clone())).map_err(|e| e.to_string());
            let _ = tx.send((first.is_err(), second));
        });
        assert_eq!(rx.recv_timeout(Duration::from_secs(20)), Ok((true, Ok("t".to_string()))));
    }

    #[test]
    fn a_failed_request_restarts_the_child() {
        // The failing request's child is killed; the next one gets a new
        // process (another pid) that passed the handshake again.
        let pool = Pool::new(HELLO, budget(), 1).unwrap();
        let first = pool.with(|w| Ok(w.child.id())).unwrap();
        assert_eq!(pool.with(|w| Ok(w.child.id())).ok(), Some(first));
        let failed = pool.with(|_| -> Result<(), ProtocolError> { Err(ProtocolError::BadLine("bad".into())) });
        assert_eq!(failed.map_err(|e| e.to_string()), Err("bad".to_string()));
        let second = pool.with(|w| Ok(w.child.id())).unwrap();
        assert_ne!(first, second);
    }
}
