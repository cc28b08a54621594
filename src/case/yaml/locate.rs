//! Finds where, inside one case's lines, a piece of text sits, so that
//! errors found after parsing can still say `line:column`.
//!
//! [`CaseLines`] indexes a file's text once (its lines, and the line of each
//! `name:` value), so that locating every case of a file costs time linear
//! in the file's length, not in its length times its number of cases.

use std::collections::HashMap;

/// One file's lines and the first line of each `name: <value>` in it.
pub struct CaseLines<'t> {
    /// The file's lines, without their terminators.
    lines: Vec<&'t str>,
    /// Each `name:` value (quotes removed) with the 1-based line of its
    /// first occurrence.
    names: HashMap<&'t str, usize>,
}

impl<'t> CaseLines<'t> {
    /// Indexes `text` in one pass.
    pub fn new(text: &'t str) -> Self {
        let lines: Vec<&str> = text.lines().collect();
        let mut names = HashMap::new();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim_start().trim_start_matches("- ").trim_start();
            if let Some(rest) = t.strip_prefix("name:") {
                let v = rest.trim().trim_matches(|c| c == '"' || c == '\'');
                names.entry(v).or_insert(i + 1);
            }
        }
        CaseLines { lines, names }
    }

    /// The 1-based line that holds `name: <case>` (its first occurrence),
    /// or 1 if there is none.
    pub fn case_line(&self, case: &str) -> usize {
        self.names.get(case).copied().unwrap_or(1)
    }

    /// 1-based line of the top-level key `key:` (at column 1), or 1.
    pub fn top_key(&self, key: &str) -> usize {
        self.lines.iter().position(|l| l.strip_prefix(key).is_some_and(|r| r.starts_with(':'))).map_or(1, |i| i + 1)
    }

    /// Line and column (1-based) of the first occurrence of the first of
    /// `needles` that occurs at or after the case's first line, before the
    /// next case starts; falls back to the case's own line. Costs time in
    /// the length of that case only.
    pub fn find_in_case(&self, case: &str, needles: &[&str]) -> (usize, usize) {
        let start = self.case_line(case);
        let lines = &self.lines;
        let indent_of = |l: &str| l.len() - l.trim_start().len();
        let case_indent = lines.get(start - 1).map(|l| indent_of(l)).unwrap_or(0);
        let mut end = lines.len();
        for (i, l) in lines.iter().enumerate().skip(start) {
            if l.trim_start().starts_with("- ") && indent_of(l) <= case_indent {
                end = i;
                break;
            }
        }
        for needle in needles {
            for (i, l) in lines.iter().enumerate().take(end).skip(start - 1) {
                if let Some(c) = l.find(needle) {
                    return (i + 1, c + 1);
                }
            }
        }
        (start, 1)
    }
}
