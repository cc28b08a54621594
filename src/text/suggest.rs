//! "Did you mean": the known names nearest to a misspelt one, by edit distance.

/// Longest word, in characters, that suggestions are looked for: longer
/// input is no misspelt name, and the distance is quadratic in length.
pub const MAX_WORD: usize = 64;

/// The names of `known` nearest to `word` by case-insensitive edit distance
/// (Levenshtein: insertions, deletions, substitutions of one character),
/// at most `max` of them, nearest first (ties in `known`'s order).
///
/// A name is offered only if its distance is at most a third of `word`'s
/// length (at least 1, at most 2), so unrelated names are never offered.
/// An empty result for a `word` longer than [`MAX_WORD`] characters.
pub fn nearest<I, S>(word: &str, known: I, max: usize) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let w: Vec<char> = word.to_lowercase().chars().collect();
    if w.is_empty() || w.len() > MAX_WORD {
        return Vec::new();
    }
    let limit = (w.len() / 3).clamp(1, 2);
    let mut found: Vec<(usize, usize, String)> = Vec::new();
    for (i, k) in known.into_iter().enumerate() {
        let k = k.as_ref();
        let c: Vec<char> = k.to_lowercase().chars().collect();
        if c.len().abs_diff(w.len()) > limit || c == w {
            continue;
        }
        let d = distance(&w, &c);
        if d <= limit && !found.iter().any(|f| f.2 == k) {
            found.push((d, i, k.to_string()));
        }
    }
    found.sort();
    found.into_iter().take(max).map(|f| f.2).collect()
}

/// `"; did you mean `a` or `b`?"` for [`nearest`]'s names (at most three),
/// or the empty string when none is near: ready to append to an error.
pub fn did_you_mean<I, S>(word: &str, known: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let n = nearest(word, known, 3);
    match n.as_slice() {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|s| format!("`{s}`")).collect();
            format!("; did you mean {} or `{last}`?", init.join(", "))
        }
    }
}

/// Levenshtein distance of two character strings (one row of memory).
fn distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits() {
        let c = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(distance(&c("kitten"), &c("sitting")), 3);
        assert_eq!(distance(&c(""), &c("abc")), 3);
        assert_eq!(distance(&c("rsp"), &c("rsp")), 0);
    }

    #[test]
    fn offers_near_names_only() {
        let known = ["DW_OP_deref", "DW_OP_drop", "DW_OP_dup", "DW_OP_plus"];
        assert_eq!(nearest("DW_OP_derf", known, 3), vec!["DW_OP_deref"]);
        assert!(nearest("DW_OP_something_else", known, 3).is_empty());
        assert_eq!(did_you_mean("rsx", ["rsp", "rbp", "rax"]), "; did you mean `rsp` or `rax`?");
        assert_eq!(did_you_mean("xyzzy", ["rsp"]), "");
        assert_eq!(did_you_mean(&"a".repeat(100), ["a"]), "");
    }
}
