//! Finds where, inside one case's lines, a piece of text sits, so that
//! errors found after parsing can still say `line:column`.

/// Line/column (1-based) of the case named `case` in `text`: the line that
/// holds `name: <case>`.
pub fn case_line(text: &str, case: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        if let Some(rest) = t.strip_prefix("name:") {
            let v = rest.trim().trim_matches(|c| c == '"' || c == '\'');
            if v == case {
                return i + 1;
            }
        }
    }
    1
}

/// Line and column of the first occurrence of `needle` at or after the
/// case's first line, before the next case starts; falls back to the
/// case's own line.
pub fn find_in_case(text: &str, case: &str, needles: &[&str]) -> (usize, usize) {
    let start = case_line(text, case);
    let lines: Vec<&str> = text.lines().collect();
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
