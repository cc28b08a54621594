//! Choosing cases by name (`dwarfcheck run --case NAME`), saying which
//! names there are when one asked for is not there.

use super::Case;
use crate::text::suggest::{did_you_mean, nearest};

/// Up to this many cases loaded, a name that is not there is answered with
/// every name; beyond it, with the nearest few and those containing it.
pub const LIST_ALL_UP_TO: usize = 20;

/// At most this many names containing the one asked for are shown.
const CONTAINING_SHOWN: usize = 10;

/// The cases whose name is one of `names`, in the order loaded (every case
/// of that name: names are unique within a file, not across files). With
/// no `names`, every case.
///
/// Errors: one message per name that no case has (see [`not_found`]).
pub fn by_name(cases: Vec<Case>, names: &[String]) -> Result<Vec<Case>, Vec<String>> {
    if names.is_empty() {
        return Ok(cases);
    }
    let missing: Vec<String> = names
        .iter()
        .filter(|n| !cases.iter().any(|c| c.name() == n.as_str()))
        .map(|n| not_found(n, cases.iter().map(Case::name)))
        .collect();
    if !missing.is_empty() {
        return Err(missing);
    }
    Ok(cases.into_iter().filter(|c| names.iter().any(|n| n == c.name())).collect())
}

/// "no case named `x`" and what there is: every name when there are at
/// most [`LIST_ALL_UP_TO`]; else the nearest names by edit distance ("did
/// you mean"), and the names containing `name` (at most ten, with a count
/// of the rest).
pub fn not_found<'a>(name: &str, known: impl Iterator<Item = &'a str> + Clone) -> String {
    let mut all: Vec<&str> = known.collect();
    all.sort_unstable();
    all.dedup();
    let quoted = |v: &[&str]| v.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    let head = format!("no case named `{name}`");
    if all.is_empty() {
        return format!("{head}: no cases were loaded");
    }
    if all.len() <= LIST_ALL_UP_TO {
        let near = nearest(name, &all, 3);
        let hint = if near.is_empty() { String::new() } else { format!(" (did you mean `{}`?)", near[0]) };
        return format!("{head}{hint}; the cases are {}", quoted(&all));
    }
    let mut out = head;
    let hint = did_you_mean(name, &all);
    out.push_str(&hint);
    let lower = name.to_lowercase();
    let containing: Vec<&str> =
        all.iter().copied().filter(|n| !lower.is_empty() && n.to_lowercase().contains(&lower)).collect();
    if !containing.is_empty() {
        let shown = &containing[..containing.len().min(CONTAINING_SHOWN)];
        out.push_str(&format!("; names containing it: {}", quoted(shown)));
        if containing.len() > shown.len() {
            out.push_str(&format!(" and {} more", containing.len() - shown.len()));
        }
    }
    if hint.is_empty() && containing.is_empty() {
        out.push_str(&format!("; none of the {} cases loaded has a name near it", all.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_cases_are_all_listed() {
        let m = not_found("piece-registr", ["b-case", "piece-register"].into_iter());
        assert_eq!(
            m,
            "no case named `piece-registr` (did you mean `piece-register`?); the cases are `b-case`, `piece-register`"
        );
    }

    #[test]
    fn many_cases_give_the_nearest_and_those_containing_it() {
        let names: Vec<String> = (0..30).map(|i| format!("deref-{i:02}")).collect();
        let m = not_found("deref-0x", names.iter().map(String::as_str));
        assert!(m.starts_with("no case named `deref-0x`; did you mean `deref-00`, `deref-01` or `deref-02`?"), "{m}");
        let m = not_found("deref", names.iter().map(String::as_str));
        assert!(m.ends_with("names containing it: `deref-00`, `deref-01`, `deref-02`, `deref-03`, `deref-04`, `deref-05`, `deref-06`, `deref-07`, `deref-08`, `deref-09` and 20 more"), "{m}");
        let m = not_found("zzz", names.iter().map(String::as_str));
        assert_eq!(m, "no case named `zzz`; none of the 30 cases loaded has a name near it");
    }
}
