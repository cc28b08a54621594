//! `eval`'s outcome lines: the reference's outcome, then each consumer's
//! outcome and its verdict against the reference, judged by the runner's
//! comparison policy (`runner::compare`, through `runner::run_recorded`).

use dwarfcheck::case::{Case, ExprCase};
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::{by_name, Consumer};
use dwarfcheck::runner::compare::Verdict;
use dwarfcheck::runner::{self, Answered, Options};
use dwarfcheck_core::outcome::Outcome;

/// The third-party consumers named in `names` (`none` is skipped).
///
/// Errors: an unknown or uninstalled consumer, with the names there are.
pub fn consumers(names: &[String]) -> Result<Vec<Box<dyn Consumer>>, String> {
    let budgets = by_name::Budgets::default();
    names
        .iter()
        .filter(|n| n.as_str() != "none")
        .map(|n| by_name::consumer(n, &budgets).map_err(|e| e.to_string()))
        .collect()
}

/// One line for the reference, then one per consumer (fast first):
/// `name: verdict outcome`; and whether any verdict is a disagreement or a
/// fault.
pub fn lines(case: &ExprCase, reference: &Outcome, others: &[Box<dyn Consumer>]) -> (Vec<String>, bool) {
    let cases = [Case::Expr(case.clone())];
    let opts = Options::default();
    let (_, records) = runner::run_recorded(&cases, &Reference, &Fast, others, &opts);
    let verdicts = records.first().map(|r| r.verdicts.clone()).unwrap_or_default();
    let answers = records.first().map(|r| r.answers.clone()).unwrap_or_default();
    let width = others.iter().map(|o| o.name().len()).chain([9]).max().unwrap_or(9) + 1;
    let mut out = vec![format!("{:<width$} {:<20} {reference}", "reference:", "")];
    let mut bad = false;
    let fast: &dyn Consumer = &Fast;
    let all = std::iter::once(fast).chain(others.iter().map(|o| o.as_ref()));
    for (i, c) in all.enumerate() {
        let v = verdicts.get(i).copied();
        let shown = match v {
            Some(Verdict::OutsideEdition) => "(not asked: the expression is outside its edition)".to_string(),
            Some(Verdict::ConsumerDown) => "(not asked: down)".to_string(),
            _ => shown_outcome(case, c, i, &answers).to_string(),
        };
        let mut label = v.map(Verdict::label).unwrap_or("-").to_string();
        if let (Some(Verdict::Disagree), "gimli") = (v, c.name()) {
            // A known gimli disagreement names its class (docs/consumers.md).
            let answer = shown_outcome(case, c, i, &answers);
            if let Some(class) = dwarfcheck::consumer::gimli::classes::known_class(case, reference, &answer) {
                label = format!("{label} ({class})");
            }
        }
        bad |= matches!(v, Some(Verdict::Disagree | Verdict::Fault));
        out.push(format!("{:<width$} {label:<20} {shown}", format!("{}:", c.name())));
    }
    (out, bad)
}

/// Consumer `i`'s outcome (0 is fast): the runner's record of the answer
/// when it kept one, else asked again.
fn shown_outcome(case: &ExprCase, c: &dyn Consumer, i: usize, answers: &[Option<Answered>]) -> Outcome {
    match i.checked_sub(1).and_then(|j| answers.get(j)).cloned().flatten() {
        Some(Answered::Expr(o)) => o,
        _ => c.evaluate(case),
    }
}
