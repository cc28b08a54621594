//! How a consumer that runs other programs (a protocol child pool, a
//! debugger) is faring: its faults in a row, and whether it has been
//! declared down after too many (docs/architecture.md §7).
//!
//! A consumer that is down is not asked again: its remaining cases are
//! `consumer-down` ([`crate::runner::compare::Verdict::ConsumerDown`]), so
//! that one that never answers costs a few time budgets, not one per case.

use super::stderr::Excerpt;
use serde::Serialize;
use std::sync::Mutex;
use std::time::Instant;

/// Faults in a row after which a consumer is declared down, by default.
pub const DEFAULT_DOWN_AFTER: u32 = 3;

/// When and why a consumer was declared down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Down {
    /// The faults in a row that decided it.
    pub faults_in_a_row: u32,
    /// Milliseconds from the consumer's start to the decision.
    pub after_ms: u64,
    /// Requests it had answered before (faults not counted).
    pub answered_before: u64,
    /// The last fault's message.
    pub last_fault: String,
}

/// A consumer's health over a run, for reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HealthReport {
    /// Faults in a row that declare it down (0: never).
    pub down_after: u32,
    /// Requests answered.
    pub answered: u64,
    /// Faults (no reply in time, a crash, a broken protocol, ...).
    pub faults: u64,
    /// Whether, when and why it was declared down.
    pub down: Option<Down>,
    /// Requests not made because it was down.
    pub not_asked: u64,
    /// What it wrote to stderr (head and tail), if anything.
    pub stderr: Option<Excerpt>,
}

/// The fault counter of one consumer; shared by all its children.
#[derive(Debug)]
pub struct Health {
    down_after: u32,
    started: Instant,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    in_a_row: u32,
    answered: u64,
    faults: u64,
    not_asked: u64,
    down: Option<Down>,
}

impl Health {
    /// A consumer declared down after `down_after` faults in a row (0:
    /// never), starting now.
    pub fn new(down_after: u32) -> Self {
        Health { down_after, started: Instant::now(), state: Mutex::new(State::default()) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a request may be made: `false` once the consumer is down
    /// (the refused request is counted as not asked).
    pub fn admit(&self) -> bool {
        let mut s = self.state();
        if s.down.is_some() {
            s.not_asked += 1;
            return false;
        }
        true
    }

    /// Whether the consumer has been declared down.
    pub fn is_down(&self) -> bool {
        self.state().down.is_some()
    }

    /// A request was answered: the faults in a row start again from 0.
    pub fn answered(&self) {
        let mut s = self.state();
        s.answered += 1;
        s.in_a_row = 0;
    }

    /// A fault that shows the consumer still runs (a debugger that crashed
    /// on one case's input): counted, but the faults in a row start again
    /// from 0.
    pub fn faulted_on_case(&self) {
        let mut s = self.state();
        s.faults += 1;
        s.in_a_row = 0;
    }

    /// `n` more requests not made because the consumer is down.
    pub fn not_asked(&self, n: u64) {
        self.state().not_asked += n;
    }

    /// A request faulted with message `what`; returns whether the consumer
    /// is now down (declared by this fault or before).
    pub fn faulted(&self, what: &str) -> bool {
        let mut s = self.state();
        s.faults += 1;
        s.in_a_row += 1;
        if s.down.is_none() && self.down_after > 0 && s.in_a_row >= self.down_after {
            s.down = Some(Down {
                faults_in_a_row: s.in_a_row,
                after_ms: self.started.elapsed().as_millis() as u64,
                answered_before: s.answered,
                last_fault: what.to_string(),
            });
        }
        s.down.is_some()
    }

    /// The counts so far, with `stderr`.
    pub fn report(&self, stderr: Option<Excerpt>) -> HealthReport {
        let s = self.state();
        HealthReport {
            down_after: self.down_after,
            answered: s.answered,
            faults: s.faults,
            down: s.down.clone(),
            not_asked: s.not_asked,
            stderr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn down_after_the_given_faults_in_a_row_only() {
        let h = Health::new(3);
        // Two faults, an answer, two faults: never three in a row.
        for step in ["f", "f", "a", "f", "f"] {
            if step == "f" {
                assert!(!h.faulted("x"));
            } else {
                h.answered();
            }
        }
        assert!(h.admit());
        assert!(h.faulted("last"));
        assert!(!h.admit());
        assert!(!h.admit());
        let r = h.report(None);
        assert_eq!((r.answered, r.faults, r.not_asked), (1, 5, 2));
        let d = r.down.unwrap();
        assert_eq!((d.faults_in_a_row, d.answered_before, d.last_fault.as_str()), (3, 1, "last"));
    }

    #[test]
    fn zero_means_never_down() {
        let h = Health::new(0);
        for _ in 0..100 {
            assert!(!h.faulted("x"));
        }
        assert!(h.admit());
    }
}
