//! dwarfcheck's row text: the line format the row-table helpers print (the
//! pyelftools script today), parsed into a [`ToolSection`]
//! (docs/consumers.md, "Row text").
//!
//! ```text
//! CIE 0x0
//! FDE 0x18 cie=0x0 pc=0x1000..0x1040
//! ROW 0x1000 cfa=reg:7:8 16=off:-8
//! ROW 0x1004 cfa=reg:7:16 6=off:-16 16=off:-8
//! ERR 0x58 DWARFError: what the tool said about the FDE at 0x58
//! ERR section what stopped the walk of the section
//! ```
//!
//! Offsets and addresses are hexadecimal (`0x`), register numbers and
//! rule operands decimal, expressions hexadecimal bytes. A CFA is
//! `cfa=reg:R:OFFSET`, `cfa=expr:BYTES` or `cfa=none`; a register rule is
//! `R=undefined`, `R=same`, `R=off:N`, `R=valoff:N`, `R=reg:M`,
//! `R=expr:BYTES`, `R=valexpr:BYTES`, `R=arch` or `R=opaque` (and
//! `cfa=opaque`): an architectural rule, a rule the tool gives only as an
//! operation list it cannot turn back into bytes, or an offset beyond 64
//! bits has no normal form, and the entry is unsupported.

use super::table::{hex, signed, Current, ToolCfa, ToolRow, ToolSection};
use dwarfcheck_core::outcome::{CfaRule, RegisterRule};
use std::collections::BTreeMap;

/// Parses everything a row-text helper printed for one frame section.
pub fn parse(text: &str) -> ToolSection {
    let mut s = ToolSection::default();
    let mut cur = Current::None;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            None => {}
            Some("CIE") => match words.next().and_then(hex) {
                Some(off) => {
                    cur = Current::Cie(off);
                    s.cies.entry(off).or_default();
                }
                None => s.garbage(cur, line),
            },
            Some("FDE") => match fde_header(words) {
                Some((off, cie, pc)) => {
                    cur = Current::Fde(off);
                    let e = s.fdes.entry(off).or_default();
                    (e.cie, e.pc) = (Some(cie), Some(pc));
                }
                None => s.garbage(cur, line),
            },
            Some("ROW") => match row(words) {
                Ok(r) => s.row(cur, line, Some(r)),
                Err(Unusable::Unsupported(what)) => {
                    if let Some(e) = s.entry(cur) {
                        e.unsupported = Some(what.into());
                    }
                }
                Err(Unusable::Garbage) => s.row(cur, line, None),
            },
            Some("ERR") => match words.next() {
                Some("section") => s.diagnostic(Current::None, line),
                Some(w) => match hex(w) {
                    Some(off) => s.diagnostic(Current::Fde(off), line),
                    None => s.garbage(cur, line),
                },
                None => s.garbage(cur, line),
            },
            Some(_) => s.garbage(cur, line),
        }
    }
    s
}

/// `OFFSET cie=OFFSET pc=BEGIN..END`.
fn fde_header<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<(u64, u64, (u64, u64))> {
    let off = hex(words.next()?)?;
    let cie = hex(words.next()?.strip_prefix("cie=")?)?;
    let (a, b) = words.next()?.strip_prefix("pc=")?.split_once("..")?;
    Some((off, cie, (hex(a)?, hex(b)?)))
}

/// Why a row line gives no row.
enum Unusable {
    /// A rule or number the normal form has no place for.
    Unsupported(&'static str),
    /// Not row text.
    Garbage,
}

/// A signed decimal number of the normal form (64 bits); a longer one
/// (pyelftools computes in unbounded integers) is unsupported.
fn number(s: &str) -> Result<i64, Unusable> {
    match signed(s) {
        Some(n) => Ok(n),
        None if s.trim_start_matches(['-', '+']).bytes().all(|b| b.is_ascii_digit()) && s.len() > 1 => {
            Err(Unusable::Unsupported("an offset beyond 64 bits (no normal form)"))
        }
        None => Err(Unusable::Garbage),
    }
}

/// `START cfa=... R=RULE...`.
fn row<'a>(mut words: impl Iterator<Item = &'a str>) -> Result<ToolRow, Unusable> {
    let start = words.next().and_then(hex).ok_or(Unusable::Garbage)?;
    let cfa = words.next().and_then(|w| w.strip_prefix("cfa=")).ok_or(Unusable::Garbage)?;
    let cfa = match cfa.split_once(':') {
        None if cfa == "none" => ToolCfa::Unspecified,
        None if cfa == "opaque" => return Err(Unusable::Unsupported("a CFA rule the tool gives only as operations")),
        Some(("reg", rest)) => {
            let (r, off) = rest.split_once(':').ok_or(Unusable::Garbage)?;
            let register = r.parse().map_err(|_| Unusable::Garbage)?;
            let offset = number(off)?;
            ToolCfa::Rule(CfaRule::RegOffset { register, offset, aspace: 0 })
        }
        Some(("expr", b)) => ToolCfa::Rule(CfaRule::Expression { expr: bytes(b)? }),
        _ => return Err(Unusable::Garbage),
    };
    let mut regs = BTreeMap::new();
    for w in words {
        let (r, rule) = w.split_once('=').ok_or(Unusable::Garbage)?;
        let r: u64 = r.parse().map_err(|_| Unusable::Garbage)?;
        let rule = match rule.split_once(':') {
            None => match rule {
                "undefined" => RegisterRule::Undefined,
                "same" => RegisterRule::SameValue,
                "arch" => return Err(Unusable::Unsupported("an architectural register rule (no normal form)")),
                "opaque" => return Err(Unusable::Unsupported("a register rule the tool gives only as operations")),
                _ => return Err(Unusable::Garbage),
            },
            Some(("off", n)) => RegisterRule::Offset { offset: number(n)? },
            Some(("valoff", n)) => RegisterRule::ValOffset { offset: number(n)? },
            Some(("reg", n)) => RegisterRule::Register { register: n.parse().map_err(|_| Unusable::Garbage)? },
            Some(("expr", b)) => RegisterRule::Expression { expr: bytes(b)? },
            Some(("valexpr", b)) => RegisterRule::ValExpression { expr: bytes(b)? },
            _ => return Err(Unusable::Garbage),
        };
        regs.insert(r, rule);
    }
    Ok((start, cfa, regs))
}

/// Hexadecimal bytes without separators.
fn bytes(s: &str) -> Result<Vec<u8>, Unusable> {
    if !s.len().is_multiple_of(2) {
        return Err(Unusable::Garbage);
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| Unusable::Garbage)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::outcome::{CfiOutcome, Row, RowTable};

    /// A hand-written listing: two rows of one FDE, an FDE the tool gave
    /// up on, and an architectural rule.
    #[test]
    fn parses_rows_errors_and_unsupported_rules() {
        let text = "CIE 0x0\n\
                    FDE 0x18 cie=0x0 pc=0x1000..0x1010\n\
                    ROW 0x1000 cfa=reg:7:8 16=off:-8\n\
                    ROW 0x1004 cfa=reg:7:16 6=off:-16 16=off:-8 3=expr:7008\n\
                    FDE 0x30 cie=0x0 pc=0x2000..0x2010\n\
                    ERR 0x30 DWARFError: Unknown CFI opcode\n\
                    FDE 0x48 cie=0x0 pc=0x3000..0x3010\n\
                    ROW 0x3000 cfa=reg:7:8 16=arch\n\
                    FDE 0x60 cie=0x0 pc=0x4000..0x4010\n\
                    ROW 0x4000 cfa=reg:7:8 6=off:-18446744073709551616\n";
        let s = parse(text);
        let off = |n| RegisterRule::Offset { offset: n };
        let cfa = |n| CfaRule::RegOffset { register: 7, offset: n, aspace: 0 };
        let want = RowTable {
            fde_offset: 0x18,
            rows: vec![
                Row { start: 0x1000, end: 0x1004, cfa: cfa(8), registers: BTreeMap::from([(16, off(-8))]) },
                Row {
                    start: 0x1004,
                    end: 0x1010,
                    cfa: cfa(16),
                    registers: BTreeMap::from([
                        (3, RegisterRule::Expression { expr: vec![0x70, 0x08] }),
                        (6, off(-16)),
                        (16, off(-8)),
                    ]),
                },
            ],
        }
        .normalize();
        assert_eq!(s.outcome("t", 0x18, false), CfiOutcome::Table(want));
        assert!(
            matches!(s.outcome("t", 0x30, false), CfiOutcome::Failed(dwarfcheck_core::outcome::Failure::IllFormed { rule, .. }) if rule.as_str() == "t:diagnostic")
        );
        assert!(matches!(
            s.outcome("t", 0x48, false),
            CfiOutcome::Failed(dwarfcheck_core::outcome::Failure::Unsupported { .. })
        ));
        assert!(matches!(
            s.outcome("t", 0x60, false),
            CfiOutcome::Failed(dwarfcheck_core::outcome::Failure::Unsupported { .. })
        ));
        // Not row text at all: a fault of the tool.
        let s = parse("hello\n");
        assert!(matches!(
            s.outcome("t", 0x18, false),
            CfiOutcome::Failed(dwarfcheck_core::outcome::Failure::ConsumerFault { .. })
        ));
    }
}
