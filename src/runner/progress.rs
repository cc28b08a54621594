//! Progress bars for long runs, drawn on stderr and only when stderr is a
//! terminal, so that piped output, `--json` and test logs never hold one.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by [`hide_all`]: no bar is drawn.
static HIDDEN: AtomicBool = AtomicBool::new(false);

/// No progress bar from now on in this process (`--quiet`).
pub fn hide_all() {
    HIDDEN.store(true, Ordering::Relaxed);
}

/// Below this many cases a run is quick and shows no bar.
pub const MIN_CASES: u64 = 2_000;

/// A bar of `len` units drawn with the indicatif `template`, or `None` when
/// not `wanted` or stderr is not a terminal. It ticks by itself, so a long
/// step (one large file) still shows that work goes on.
pub fn on_terminal(len: u64, template: &str, wanted: bool) -> Option<ProgressBar> {
    if !wanted || HIDDEN.load(Ordering::Relaxed) || !std::io::stderr().is_terminal() {
        return None;
    }
    let b = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    b.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    b.enable_steady_tick(std::time::Duration::from_millis(200));
    Some(b)
}

/// The bar of a run over `len` cases: shown when `wanted` and the run has
/// more than [`MIN_CASES`] cases.
pub fn cases(len: u64, wanted: bool) -> Option<ProgressBar> {
    on_terminal(len, "{spinner} checking {pos}/{len} cases [{bar:40}] {per_sec} eta {eta}", wanted && len > MIN_CASES)
}
