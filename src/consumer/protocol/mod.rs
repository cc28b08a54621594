//! The process protocol consumer: any program that speaks `dwarfcheck/1`
//! (one JSON object per line on stdin/stdout, docs/protocol.md) judged
//! against the reference (docs/architecture.md §7).
//!
//! [`wire`] holds the messages and the context mapping, [`pool`] the child
//! processes. Everything that goes wrong with a child (no reply in time, a
//! reply that is not JSON or answers another request, a crash) becomes
//! [`Outcome::ConsumerFault`] for that case, and the child is restarted for
//! the next one.

mod error;
pub mod pool;
pub mod reply;
pub mod wire;

pub use error::{OutcomeFormError, ProtocolError};

use crate::case::{CfiCase, ExprCase};
use crate::consumer::external::RunBudget;
use crate::consumer::{Consumer, Support};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use pool::Pool;
use std::sync::atomic::{AtomicU64, Ordering};
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

    /// A consumer running `sh -c command` in at most `workers` children.
    ///
    /// Errors: an empty command, or the first child does not start or
    /// fails the handshake.
    pub fn new(command: &str, budget: RunBudget, workers: usize) -> Result<Protocol, ProtocolError> {
        if command.trim().is_empty() {
            return Err(ProtocolError::EmptyCommand);
        }
        let pool = Pool::new(command, budget, workers)
            .map_err(|e| ProtocolError::Start { command: command.to_string(), source: Box::new(e) })?;
        let hello = pool.hello();
        let support = Support {
            editions: hello.supports.editions.clone(),
            expr: hello.supports.expr,
            // Version 1 has no CFI requests.
            cfi: false,
        };
        Ok(Protocol { name: hello.name.clone(), support, pool, next_id: AtomicU64::new(1) })
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

    /// Sends one `evaluate` request and returns the reply's outcome, or
    /// `ConsumerFault` when the child misbehaves (it is then restarted for
    /// the next case).
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = match wire::evaluate_line(id, case) {
            Ok(l) => l,
            Err(o) => return o,
        };
        let time = self.pool.budget().time;
        let r = self.pool.with(|w| w.ask(&line, time).and_then(|reply| reply::parse_result(&reply, id)));
        r.unwrap_or_else(|e| Outcome::Failed(Failure::ConsumerFault { what: format!("{}: {e}", self.name) }))
    }

    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: format!("protocol {} has no CFI requests", wire::VERSION) })
    }
}
