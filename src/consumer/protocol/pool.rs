//! A bounded pool of consumer child processes, each asked one line at a
//! time under a time budget and a reply-length cap.
//!
//! Every child runs `sh -c COMMAND` ([`wrapped`]) contained ([`contain`]:
//! a session of its own, everything it starts killed with it), with a
//! writer thread feeding its stdin, a reader thread cutting its stdout into
//! lines and a thread keeping its stderr in the consumer's [`StderrLog`].
//! A request
//! waits for the reply line while watching for the child's exit, so that a
//! child that stops reading or writing is noticed by the timeout, and one
//! that exits (even leaving a process that holds its stdout) or closes its
//! stdin at once; dwarfcheck is never blocked. A child that broke the
//! protocol, timed out or exited is killed and replaced by a fresh one,
//! with a fresh handshake, at the next request.

use super::reply::{self, HelloReply};
use super::wire;
use super::ProtocolError;
use crate::consumer::contain::{self, Contained};
use crate::consumer::external::process::RunBudget;
use crate::consumer::stderr::StderrLog;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often a waiting request looks whether the child has exited.
const EXIT_POLL: Duration = Duration::from_millis(5);

/// How long a reply written just before the child exited may take to
/// come through the pipe.
const LAST_WORDS: Duration = Duration::from_millis(50);

/// What the reader and writer threads report.
enum Event {
    /// One line of stdout, without its `\n`.
    Text(String),
    /// The child closed its stdout.
    Eof,
    /// A line longer than the cap, or not UTF-8, or a read error.
    Bad(String),
    /// Writing a request to its stdin failed (it closed its stdin).
    StdinClosed,
}

/// One running child with its handshake done.
pub struct Worker {
    child: Contained,
    to_child: Option<Sender<String>>,
    /// A second handle on the write end of the child's stdin, to see
    /// whether anything still reads it ([`no_reader`]).
    stdin_probe: Option<OwnedFd>,
    from_child: Receiver<Event>,
    /// Whether dropping it lets it exit on its own first (false once it
    /// misbehaved: then it is killed at once).
    graceful: bool,
    /// Its `hello` reply.
    pub hello: HelloReply,
}

/// The least time a consumer gets for its `hello` reply: starting a
/// program (an interpreter, a debugger loading symbols) on a loaded machine
/// can take longer than one request's budget, and a slow start is not a
/// fault. A consumer that never answers is still down after this long.
pub const HELLO_TIME: std::time::Duration = std::time::Duration::from_secs(10);

impl Worker {
    /// Starts `sh -c command`, its stderr going to `log`, and does the
    /// handshake.
    ///
    /// Errors: the shell cannot start; the child's hello reply is late,
    /// malformed or of another version (see [`reply::parse_hello`]).
    pub fn start(command: &str, budget: RunBudget, log: &Arc<StderrLog>) -> Result<Worker, ProtocolError> {
        let mut child = contain::spawn(
            Command::new("/bin/sh")
                .arg("-c")
                .arg(wrapped(command))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )
        .map_err(|source| ProtocolError::Spawn { command: command.to_string(), source })?;
        let c = child.child();
        let (Some(stdin), Some(stdout), Some(stderr)) = (c.stdin.take(), c.stdout.take(), c.stderr.take()) else {
            return Err(ProtocolError::NoPipes);
        };
        let stdin = OwnedFd::from(stdin);
        let stdin_probe = stdin.try_clone().ok();
        let stdin = std::fs::File::from(stdin);
        let log = log.clone();
        std::thread::spawn(move || log.drain(stderr));
        // One line in flight: a child that floods stdout waits on the pipe
        // instead of filling dwarfcheck's memory.
        let (events, from_child) = mpsc::sync_channel::<Event>(1);
        let (to_child, writer_rx) = mpsc::channel::<String>();
        let writer_events = events.clone();
        std::thread::spawn(move || write_lines(stdin, writer_rx, writer_events));
        let cap = budget.output_bytes;
        std::thread::spawn(move || read_lines(stdout, events, cap));
        let mut w = Worker {
            child,
            to_child: Some(to_child),
            stdin_probe,
            from_child,
            // Until the handshake is through: killed at once on failure.
            graceful: false,
            hello: HelloReply {
                protocol: String::new(),
                kind: String::new(),
                name: String::new(),
                supports: reply::WireSupport::default(),
            },
        };
        let reply = w.ask(&wire::hello_line(), budget.time.max(HELLO_TIME))?;
        w.hello = reply::parse_hello(&reply)?;
        w.graceful = true;
        Ok(w)
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one line and waits up to `time` for one line back, looking
    /// every few milliseconds whether the child has exited or nothing
    /// reads its stdin any more.
    ///
    /// Errors: the child closed its stdin or stdout, exited, sent a line
    /// that is too long or not UTF-8, or did not answer in time.
    pub fn ask(&mut self, line: &str, time: Duration) -> Result<String, ProtocolError> {
        let sent = self.to_child.as_ref().is_some_and(|tx| tx.send(line.to_string()).is_ok());
        if !sent {
            return Err(self.stdin_closed());
        }
        let deadline = Instant::now() + time;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ProtocolError::Timeout { ms: time.as_millis() });
            }
            match self.from_child.recv_timeout(left.min(EXIT_POLL)) {
                Ok(event) => return self.settle(event),
                Err(RecvTimeoutError::Disconnected) => return self.settle(Event::Eof),
                Err(RecvTimeoutError::Timeout) if self.child.exited().is_some() => {
                    // A reply written just before exiting is still good.
                    return match self.from_child.recv_timeout(LAST_WORDS) {
                        Ok(Event::Text(s)) => Ok(s),
                        _ => Err(ProtocolError::Exited { status: self.status() }),
                    };
                }
                Err(RecvTimeoutError::Timeout) if self.stdin_probe.as_ref().is_some_and(no_reader) => {
                    return Err(self.stdin_closed());
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// The result of a request the threads reported `event` for.
    fn settle(&mut self, event: Event) -> Result<String, ProtocolError> {
        match event {
            Event::Text(s) => Ok(s),
            Event::Bad(why) => Err(ProtocolError::BadLine(why)),
            Event::StdinClosed => Err(self.stdin_closed()),
            Event::Eof => {
                self.let_it_exit();
                Err(ProtocolError::NoReply { status: self.status() })
            }
        }
    }

    /// Gives an exiting child a moment, so that its status can be told.
    fn let_it_exit(&self) {
        let until = Instant::now() + LAST_WORDS;
        while self.child.exited().is_none() && Instant::now() < until {
            std::thread::sleep(EXIT_POLL);
        }
    }

    /// Nothing reads the child's stdin: it exited, or it closed its stdin.
    fn stdin_closed(&self) -> ProtocolError {
        self.let_it_exit();
        match self.child.exited() {
            Some(_) => ProtocolError::Exited { status: self.status() },
            None => ProtocolError::StdinClosed { status: String::new() },
        }
    }

    /// ` (exit status ...)` if the child has ended, else ``.
    fn status(&self) -> String {
        match self.child.exited() {
            Some(s) => format!(" ({s})"),
            None => String::new(),
        }
    }
}

impl Drop for Worker {
    /// Closes the child's stdin (end of requests), gives a well-behaved
    /// child about 100 ms to exit, then kills it and everything it started
    /// ([`Contained::kill_all`]) and reaps it.
    fn drop(&mut self) {
        self.to_child = None;
        self.stdin_probe = None;
        for _ in 0..if self.graceful { 20 } else { 0 } {
            if self.child.exited().is_some() {
                break;
            }
            std::thread::sleep(EXIT_POLL);
        }
        self.child.kill_all();
    }
}

/// The script `sh -c` runs for `command`: the command in the background
/// with the shell's stdin (passed through fd 3: a shell gives an
/// asynchronous command `/dev/null` as its stdin), while the shell closes
/// its own stdin and stdout and waits for it, exiting with its status. So
/// the shell, the child's main process, holds neither pipe: a consumer that
/// closes its stdin leaves no reader ([`no_reader`]), and one that exits
/// ends the shell.
fn wrapped(command: &str) -> String {
    format!("exec 3<&0\n{{ {command}\n}} 0<&3 3<&- &\nexec 0<&- 1>&- 3<&-\nwait $!\n")
}

/// Writes each received line plus `\n` and flushes; ends when the channel
/// closes (dropping stdin, so the child sees end of file) or a write fails
/// (reported as [`Event::StdinClosed`]).
fn write_lines(mut stdin: std::fs::File, rx: Receiver<String>, events: SyncSender<Event>) {
    for line in rx {
        let ok = stdin.write_all(line.as_bytes()).and_then(|_| stdin.write_all(b"\n")).and_then(|_| stdin.flush());
        if ok.is_err() {
            let _ = events.send(Event::StdinClosed);
            return;
        }
    }
}

/// Whether the pipe whose write end is `fd` has no reader left (Linux
/// reports `POLLERR` on such a write end): the child, and everything it
/// started, closed its stdin.
fn no_reader(fd: &OwnedFd) -> bool {
    let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
    // SAFETY: one valid pollfd, no waiting.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & libc::POLLERR != 0
}

/// Cuts stdout into lines of at most `cap` bytes and sends them; stops at
/// end of file, at the first bad line, or when nobody listens.
fn read_lines(stdout: std::process::ChildStdout, tx: SyncSender<Event>, cap: u64) {
    let mut r = BufReader::with_capacity(1 << 16, stdout);
    loop {
        let mut buf = Vec::new();
        let got = (&mut r).take(cap.saturating_add(1)).read_until(b'\n', &mut buf);
        let line = match got {
            Err(e) => Event::Bad(format!("reading its stdout: {e}")),
            Ok(0) => Event::Eof,
            Ok(_) if buf.last() == Some(&b'\n') || buf.len() as u64 <= cap => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                match String::from_utf8(buf) {
                    Ok(s) => Event::Text(s.strip_suffix('\r').map(str::to_string).unwrap_or(s)),
                    Err(_) => Event::Bad("a reply line that is not UTF-8".into()),
                }
            }
            Ok(_) => Event::Bad(format!("a reply line longer than {cap} bytes")),
        };
        let last = !matches!(line, Event::Text(_));
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
    /// Where every child's stderr goes.
    log: Arc<StderrLog>,
    max: usize,
    /// The first child's hello: restarted children must say the same.
    first: HelloReply,
    state: Mutex<State>,
    freed: Condvar,
}

impl Pool {
    /// Starts the first child (handshake included) of at most `max`
    /// (at least 1); every child's stderr goes to `log`.
    ///
    /// Errors: see [`Worker::start`].
    pub fn new(command: &str, budget: RunBudget, max: usize, log: Arc<StderrLog>) -> Result<Pool, ProtocolError> {
        let w = Worker::start(command, budget, &log)?;
        Ok(Pool {
            command: command.to_string(),
            budget,
            log,
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

    /// Kills the idle children (for a consumer declared down); busy ones
    /// end with their request.
    pub fn retire_idle(&self) {
        let idle = {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let idle = std::mem::take(&mut st.idle);
            st.live -= idle.len();
            idle
        };
        for mut w in idle {
            // Killed at once when dropped here.
            w.graceful = false;
            drop(w);
        }
        self.freed.notify_all();
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
        let started = Worker::start(&self.command, self.budget, &self.log).and_then(|w| {
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

    fn log() -> Arc<StderrLog> {
        Arc::new(StderrLog::new(1024))
    }

    fn budget() -> RunBudget {
        RunBudget { time: Duration::from_secs(5), output_bytes: 1 << 20 }
    }

    #[test]
    fn a_panicking_request_frees_its_slot() {
        // One slot: if the panic leaked it, the second request would wait
        // for ever; it runs on a thread so that the test can time out.
        let pool = std::sync::Arc::new(Pool::new(HELLO, budget(), 1, log()).unwrap());
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
        let pool = Pool::new(HELLO, budget(), 1, log()).unwrap();
        let first = pool.with(|w| Ok(w.pid())).unwrap();
        assert_eq!(pool.with(|w| Ok(w.pid())).ok(), Some(first));
        let failed = pool.with(|_| -> Result<(), ProtocolError> { Err(ProtocolError::BadLine("bad".into())) });
        assert_eq!(failed.map_err(|e| e.to_string()), Err("bad".to_string()));
        let second = pool.with(|w| Ok(w.pid())).unwrap();
        assert_ne!(first, second);
    }
}
