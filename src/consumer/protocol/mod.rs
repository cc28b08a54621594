//! The process protocol consumer: any program that speaks `dwarfcheck/1`
//! or `dwarfcheck/2` (one JSON object per line on stdin/stdout,
//! docs/protocol.md) judged against the reference (docs/architecture.md §7):
//! on expressions, and in version 2 on row tables and virtual unwinding.
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
pub mod serve;
pub mod wire;

pub use error::{OutcomeFormError, ProtocolError};

use crate::case::{CfiCase, ExprCase, UnwindCase};
use crate::consumer::external::RunBudget;
use crate::consumer::health::{Health, HealthReport, DEFAULT_DOWN_AFTER};
use crate::consumer::stderr::{StderrLog, DEFAULT_CAP};
use crate::consumer::{Consumer, Support};
use dwarfcheck_core::outcome::unwind::{CallerRegister, Step, Unwind};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfiOutcome, NormalLocation, Outcome, RawLocation, SingleLocation, Source};
use pool::Pool;
use reply::WireSupport;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wire::Version;

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
    /// The version its handshake picked.
    version: Version,
    /// What its handshake declared (in that version).
    declared: WireSupport,
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
        let declared = hello.supports.clone();
        let support = Support {
            editions: declared.editions.clone(),
            expr: declared.expr,
            // Judged on CFI cases when it answers either kind of CFI
            // request (version 2 only: reply::WireSupport::in_version).
            cfi: declared.rows || declared.unwind,
        };
        Ok(Protocol {
            name: hello.name.clone(),
            support,
            version: hello.version(),
            declared,
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

    /// The version its handshake picked.
    pub fn version(&self) -> Version {
        self.version
    }

    /// What its handshake declared it answers: `expr`, and in version 2
    /// `rows` and `unwind` (always false in version 1).
    pub fn declared(&self) -> &WireSupport {
        &self.declared
    }

    /// `ConsumerFault` naming this consumer.
    fn fault(&self, why: impl std::fmt::Display) -> Failure {
        Failure::ConsumerFault { what: format!("{}: {why}", self.name) }
    }

    /// Sends one request `line` (number `id`) and reads the reply with
    /// `parse`: `None` without asking once the consumer is down (or goes
    /// down while the request waits for a child); `Err` with a fault
    /// message when the child misbehaves (it is restarted for the next
    /// request, and the fault counts towards being declared down).
    fn request<T>(
        &self,
        id: u64,
        line: &str,
        parse: impl FnOnce(&str, u64) -> Result<T, ProtocolError>,
    ) -> Option<Result<T, Failure>> {
        if !self.health.admit() {
            return None;
        }
        let time = self.pool.budget().time;
        let asked = self.pool.with(|w| {
            // It may have gone down while this request waited for a child.
            if self.health.is_down() {
                return Ok(None);
            }
            w.ask(line, time).and_then(|reply| parse(&reply, id)).map(Some)
        });
        match asked {
            Ok(None) => {
                self.health.not_asked(1);
                None
            }
            Ok(Some(o)) => {
                self.health.answered();
                Some(Ok(o))
            }
            Err(e) => {
                let f = self.fault(&e);
                if self.health.faulted(&format!("{e}")) {
                    self.pool.retire_idle();
                }
                Some(Err(f))
            }
        }
    }

    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

impl Consumer for Protocol {
    /// The name from the consumer's hello reply.
    fn name(&self) -> &str {
        &self.name
    }

    /// The editions and `expr` from the hello reply; `cfi` when it declared
    /// `rows` or `unwind` (version 2).
    fn supports(&self) -> Support {
        self.support.clone()
    }

    /// [`Consumer::try_evaluate`]; a consumer that is down gives
    /// `ConsumerFault` without being asked.
    fn evaluate(&self, case: &ExprCase) -> Outcome {
        self.try_evaluate(case).unwrap_or_else(|| Outcome::Failed(self.fault("not asked: the consumer is down")))
    }

    /// Sends one `evaluate` request and returns the reply's outcome, or
    /// `ConsumerFault` when the child misbehaves (it is then restarted for
    /// the next case); `None` without asking once the consumer is down
    /// (after the fault that makes it so, its idle children are killed).
    fn try_evaluate(&self, case: &ExprCase) -> Option<Outcome> {
        let id = self.next_id();
        let line = match wire::evaluate_line(id, case, self.version) {
            Ok(l) => l,
            Err(o) => return Some(o),
        };
        let version = self.version;
        let r = self.request(id, &line, |reply, id| reply::parse_result(reply, id, version))?;
        Some(r.unwrap_or_else(Outcome::Failed))
    }

    /// Faults, whether and why it went down, and its children's stderr.
    fn health(&self) -> Option<HealthReport> {
        Some(self.health.report(self.stderr.excerpt()))
    }

    /// [`Consumer::try_frame_table`]; a consumer that is down gives
    /// `ConsumerFault` without being asked.
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        self.try_frame_table(case).unwrap_or_else(|| CfiOutcome::Failed(self.fault("not asked: the consumer is down")))
    }

    /// Sends one `rows` request for the case's whole FDE (version 2, when
    /// the handshake declared `rows`; otherwise `Unsupported` without
    /// asking), as [`Consumer::try_evaluate`] does.
    fn try_frame_table(&self, case: &CfiCase) -> Option<CfiOutcome> {
        if !self.declared.rows {
            let what = match self.version {
                Version::V1 => format!("{}: protocol dwarfcheck/1 has no CFI requests", self.name),
                Version::V2 => format!("{}: does not answer rows requests", self.name),
            };
            return Some(CfiOutcome::Failed(Failure::Unsupported { what }));
        }
        let id = self.next_id();
        let line = match wire::rows_line(id, case) {
            Ok(l) => l,
            Err(f) => return Some(CfiOutcome::Failed(f)),
        };
        let r = self.request(id, &line, reply::parse_rows)?;
        Some(r.unwrap_or_else(CfiOutcome::Failed))
    }

    /// Sends one `unwind` request (version 2, when the handshake declared
    /// `unwind`; otherwise `None`: not judged on unwinding). A fault, or a
    /// consumer that is down, gives an unwinding that faulted at once with
    /// `ConsumerFault`.
    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        if !self.declared.unwind {
            return None;
        }
        let id = self.next_id();
        let line = match wire::unwind_line(id, case, u) {
            Ok(l) => l,
            Err(f) => return Some(Unwind::fault(Outcome::Failed(f))),
        };
        let r = self.request(id, &line, reply::parse_unwind);
        Some(match r {
            Some(Ok(w)) => w,
            Some(Err(f)) => Unwind::fault(Outcome::Failed(f)),
            None => Unwind::fault(Outcome::Failed(self.fault("not asked: the consumer is down"))),
        })
    }

    /// What a protocol consumer reports of an unwinding (docs/protocol.md,
    /// "unwind"): per step the pc, the CFA's byte address and address space
    /// (not the thread or lane whose storage it is: the request's state
    /// names them), the caller pc and the value of every caller register
    /// the reference gives a value (registers it cannot recover are not
    /// compared); not the lookup address, the FDE offset or the registers'
    /// locations.
    fn unwind_view(&self, _case: &CfiCase, reference: &Unwind) -> Option<Unwind> {
        let steps = reference
            .steps
            .iter()
            .map(|s| Step {
                pc: s.pc,
                lookup: 0,
                fde_offset: 0,
                cfa: shared_storage(&s.cfa),
                registers: s
                    .registers
                    .iter()
                    .filter_map(|(n, r)| {
                        let bytes = r.bytes.clone()?;
                        Some((*n, CallerRegister { location: r.location.clone(), bytes: Some(bytes) }))
                    })
                    .collect(),
                caller_pc: s.caller_pc,
            })
            .collect();
        Some(Unwind { steps, end: reference.end.clone() })
    }
}

/// `cfa` with the thread and lane of a memory location left out (as a
/// reply gives it).
fn shared_storage(cfa: &NormalLocation) -> NormalLocation {
    match cfa.places.as_slice() {
        [SingleLocation::Simple(Source::Memory { aspace, bit_addr, .. })] => {
            RawLocation::simple(Source::memory(*aspace, *bit_addr)).normalize()
        }
        _ => cfa.clone(),
    }
}
