//! The process protocol consumer: any program that speaks `dwarfcheck/1`
//! (one JSON object per line on stdin/stdout, docs/protocol.md) judged
//! against the reference (docs/architecture.md §7).
//!
//! [`wire`] holds the messages and the context mapping, [`pool`] the child
//! processes. Everything that goes wrong with a child (no reply in time, a
//! reply that is not JSON or answers another request, a crash) becomes
//! [`Outcome::ConsumerFault`] for that case, and the child is restarted for
//! the next one; after [`Health`]'s number of faults in a row the consumer
//! is declared down and asked nothing more. The children's stderr is kept
//! in a bounded log ([`StderrLog`]), shown with the consumer's health.

mod error;
pub mod pool;
pub mod reply;
pub mod wire;

pub use error::{OutcomeFormError, ProtocolError};

use crate::case::{CfiCase, ExprCase};
use crate::consumer::external::RunBudget;
use crate::consumer::health::{Health, HealthReport, DEFAULT_DOWN_AFTER};
use crate::consumer::stderr::{StderrLog, DEFAULT_CAP};
use crate::consumer::{Consumer, Support};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use pool::Pool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The prefix of a consumer spec that names a command (`cmd:COMMAND`).
pub const SPEC_PREFIX: &str = "cmd:";

/// Most children one consumer runs at once.
pub const MAX_WORKERS: usize = 4;

/// The default budget of one request: 10 s to answer, replies of at most
/// 16 MiB per line.
pub fn default_budget() -> RunBudget {
    RunBudget { time: Duration::from_secs(10), output_bytes: 16 << 20 }
}

/// A consumer that speaks the process protocol.
pub struct Protocol {
    name: String,
    support: Support,
    pool: Pool,
    next_id: AtomicU64,
    health: Health,
    stderr: Arc<StderrLog>,
}

impl std::fmt::Debug for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Protocol").field("name", &self.name).field("support", &self.support).finish()
    }
}

impl Protocol {
    /// A consumer from a spec `cmd:COMMAND` (the command is run with
    /// `sh -c`), with `budget` per request and as many children as rayon
    /// has threads, at most [`MAX_WORKERS`].
    ///
    /// Errors: the spec does not start with `cmd:`, the command is empty,
    /// or the first child does not start or fails the handshake.
    pub fn from_spec(spec: &str, budget: RunBudget) -> Result<Protocol, ProtocolError> {
        let command =
            spec.strip_prefix(SPEC_PREFIX).ok_or_else(|| ProtocolError::BadSpec { spec: spec.to_string() })?;
        Protocol::new(command, budget, rayon::current_num_threads().min(MAX_WORKERS))
    }

    /// A consumer running `sh -c command` in at most `workers` children,
    /// declared down after [`DEFAULT_DOWN_AFTER`] faults in a row, keeping
    /// [`DEFAULT_CAP`] bytes of their stderr.
    ///
    /// Errors: an empty command, or the first child does not start or
    /// fails the handshake.
    pub fn new(command: &str, budget: RunBudget, workers: usize) -> Result<Protocol, ProtocolError> {
        if command.trim().is_empty() {
            return Err(ProtocolError::EmptyCommand);
        }
        let stderr = Arc::new(StderrLog::new(DEFAULT_CAP));
        let pool = Pool::new(command, budget, workers, stderr.clone())
            .map_err(|e| ProtocolError::Start { command: command.to_string(), source: Box::new(e) })?;
        let hello = pool.hello();
        let support = Support {
            editions: hello.supports.editions.clone(),
            expr: hello.supports.expr,
            // Version 1 has no CFI requests.
            cfi: false,
        };
        Ok(Protocol {
            name: hello.name.clone(),
            support,
            pool,
            next_id: AtomicU64::new(1),
            health: Health::new(DEFAULT_DOWN_AFTER),
            stderr,
        })
    }

    /// The same consumer, declared down after `n` faults in a row (0:
    /// never).
    pub fn down_after(mut self, n: u32) -> Protocol {
        self.health = Health::new(n);
        self
    }

    fn fault(&self, why: impl std::fmt::Display) -> Outcome {
        Outcome::Failed(Failure::ConsumerFault { what: format!("{}: {why}", self.name) })
    }
}

impl Consumer for Protocol {
    /// The name from the consumer's hello reply.
    fn name(&self) -> &str {
        &self.name
    }

    /// The editions and `expr` from the hello reply; never CFI.
    fn supports(&self) -> Support {
        self.support.clone()
    }

    /// [`Consumer::try_evaluate`]; a consumer that is down gives
    /// `ConsumerFault` without being asked.
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        self.try_evaluate(case).unwrap_or_else(|| self.fault("not asked: the consumer is down"))
    }

    /// Sends one `evaluate` request and returns the reply's outcome, or
    /// `ConsumerFault` when the child misbehaves (it is then restarted for
    /// the next case); `None` without asking once the consumer is down
    /// (after the fault that makes it so, its idle children are killed).
    fn try_evaluate(&self, case: &ExprCase) -> Option<Outcome> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = match wire::evaluate_line(id, case) {
            Ok(l) => l,
            Err(o) => return Some(o),
        };
        if !self.health.admit() {
            return None;
        }
        let time = self.pool.budget().time;
        let asked = self.pool.with(|w| {
            // It may have gone down while this request waited for a child.
            if self.health.is_down() {
                return Ok(None);
            }
            w.ask(&line, time).and_then(|reply| reply::parse_result(&reply, id)).map(Some)
        });
        match asked {
            Ok(None) => {
                self.health.not_asked(1);
                None
            }
            Ok(Some(o)) => {
                self.health.answered();
                Some(o)
            }
            Err(e) => {
                let o = self.fault(&e);
                if self.health.faulted(&format!("{e}")) {
                    self.pool.retire_idle();
                }
                Some(o)
            }
        }
    }

    /// Faults, whether and why it went down, and its children's stderr.
    fn health(&self) -> Option<HealthReport> {
        Some(self.health.report(self.stderr.excerpt()))
    }

    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: format!("protocol {} has no CFI requests", wire::VERSION) })
    }
}
