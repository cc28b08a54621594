//! Interleaved timing rounds: every contender runs once per round, in
//! turn, on the same input in the same process, so that a slower or
//! faster moment of a shared machine falls on all of them alike; each
//! contender's figure is the minimum and the median over the rounds.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// One side of a comparison: a name and one full pass over the input.
/// The pass returns a number derived from every result (a count or a
/// checksum) so that nothing it computes can be optimised away.
pub struct Contender<'a> {
    /// Shown in the table (`fast`, `gimli`, `reference`).
    pub name: &'static str,
    /// One pass over the whole input.
    pub pass: Box<dyn FnMut() -> u64 + 'a>,
}

impl<'a> Contender<'a> {
    /// A contender named `name` running `pass`.
    pub fn new(name: &'static str, pass: impl FnMut() -> u64 + 'a) -> Self {
        Contender { name, pass: Box::new(pass) }
    }
}

/// What one contender measured: wall time of a whole pass, over the rounds.
#[derive(Debug, Clone)]
pub struct Timing {
    /// The contender's name.
    pub name: &'static str,
    /// Fastest pass.
    pub min: Duration,
    /// Median pass (the lower middle one for an even number of rounds).
    pub median: Duration,
    /// What the first pass returned (the same every round for a
    /// deterministic pass).
    pub check: u64,
}

impl Timing {
    /// Minimum time per input item in **nanoseconds**.
    pub fn min_ns_per(&self, items: usize) -> f64 {
        self.min.as_secs_f64() * 1e9 / items.max(1) as f64
    }

    /// Median time per input item in **nanoseconds**.
    pub fn median_ns_per(&self, items: usize) -> f64 {
        self.median.as_secs_f64() * 1e9 / items.max(1) as f64
    }
}

/// Runs one warm-up pass of each contender, then `rounds` rounds in which
/// every contender runs one pass in turn (the order rotates each round).
/// Returns one [`Timing`] per contender, in the order given.
pub fn interleave(contenders: &mut [Contender<'_>], rounds: usize) -> Vec<Timing> {
    let n = contenders.len();
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); n];
    let checks: Vec<u64> = contenders.iter_mut().map(|c| black_box((c.pass)())).collect();
    for r in 0..rounds.max(1) {
        for k in 0..n {
            let i = (k + r) % n;
            let t = Instant::now();
            black_box((contenders[i].pass)());
            times[i].push(t.elapsed());
        }
    }
    contenders
        .iter()
        .zip(times)
        .zip(checks)
        .map(|((c, mut t), check)| {
            t.sort();
            Timing { name: c.name, min: t[0], median: t[(t.len() - 1) / 2], check }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contender_runs_once_per_round_and_reports_its_first_result() {
        let (mut a, mut b) = (0u64, 0u64);
        let mut cs = vec![
            Contender::new("a", || {
                a += 1;
                a
            }),
            Contender::new("b", || {
                b += 10;
                b
            }),
        ];
        let t = interleave(&mut cs, 5);
        drop(cs);
        // One warm-up pass plus five rounds each.
        assert_eq!((a, b), (6, 60));
        assert_eq!((t[0].name, t[0].check, t[1].name, t[1].check), ("a", 1, "b", 10));
        assert!(t[0].min <= t[0].median && t[1].min <= t[1].median);
    }
}
