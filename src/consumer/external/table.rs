//! What a tool printed for a frame section, parsed, and how one FDE of it
//! becomes a normalised [`CfiOutcome`]; the register-name table of a tool.

use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfaRule, CfiOutcome, RegisterRule, Row, RowTable};
use dwarfcheck_core::rules::RuleId;
use std::collections::{BTreeMap, HashMap, HashSet};

/// A CFA rule as a tool prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolCfa {
    /// A rule the normal form can hold.
    Rule(CfaRule),
    /// The tool says no CFA rule is defined (llvm-dwarfdump's
    /// `CFA=unspecified`).
    Unspecified,
}

/// One printed row: start address, CFA rule, register rules.
pub type ToolRow = (u64, ToolCfa, BTreeMap<u64, RegisterRule>);

/// One CIE or FDE as a tool printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolEntry {
    /// FDE: `[begin, end)` of its code, from the entry's header line.
    pub pc: Option<(u64, u64)>,
    /// FDE: section offset of its CIE, if the tool printed one.
    pub cie: Option<u64>,
    /// CIE: its return address column (readelf's `ra` column).
    pub ra: Option<u64>,
    /// The rows, in printed order.
    pub rows: Vec<ToolRow>,
    /// The tool's diagnostics (errors, warnings) about this entry.
    pub diagnostics: Vec<String>,
    /// Lines that could not be parsed.
    pub garbage: Vec<String>,
    /// What the tool says it cannot show (llvm-dwarfdump's `<decoding
    /// error>` inside an expression it does not know).
    pub unsupported: Option<String>,
}

/// Everything a tool printed for one frame section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolSection {
    /// FDEs by section offset.
    pub fdes: HashMap<u64, ToolEntry>,
    /// CIEs by section offset.
    pub cies: HashMap<u64, ToolEntry>,
    /// Diagnostics printed outside any entry (they stop the tool's walk of
    /// the section: FDEs after them are not printed).
    pub diagnostics: Vec<String>,
    /// Unparsable lines outside any entry.
    pub garbage: Vec<String>,
}

/// Which of the two above an entry header opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Current {
    /// Before the first entry, or after a terminator.
    None,
    /// The CIE at this offset.
    Cie(u64),
    /// The FDE at this offset.
    Fde(u64),
}

impl ToolSection {
    /// The entry lines are being attributed to, if any.
    pub fn entry(&mut self, cur: Current) -> Option<&mut ToolEntry> {
        match cur {
            Current::None => None,
            Current::Cie(o) => Some(self.cies.entry(o).or_default()),
            Current::Fde(o) => Some(self.fdes.entry(o).or_default()),
        }
    }

    /// Records a diagnostic of the current entry (or of the section).
    pub fn diagnostic(&mut self, cur: Current, line: &str) {
        match self.entry(cur) {
            Some(e) => e.diagnostics.push(line.to_string()),
            None => self.diagnostics.push(line.to_string()),
        }
    }

    /// Records a parsed row of the current entry; a line that did not parse
    /// as a row (`None`), or a row outside every entry, is garbage.
    pub fn row(&mut self, cur: Current, line: &str, row: Option<ToolRow>) {
        match (row, self.entry(cur)) {
            (Some(r), Some(e)) => e.rows.push(r),
            _ => self.garbage(cur, line),
        }
    }

    /// Records an unparsable line of the current entry (or of the section).
    pub fn garbage(&mut self, cur: Current, line: &str) {
        match self.entry(cur) {
            Some(e) => e.garbage.push(line.to_string()),
            None => self.garbage.push(line.to_string()),
        }
    }

    /// The outcome for the FDE at `offset`, as `tool` showed it.
    ///
    /// - an unparsable line outside every entry: `ConsumerFault`;
    /// - a diagnostic about the FDE: `IllFormed { rule: "<tool>:diagnostic" }`
    ///   (the tool rejected or gave up on the entry; for third parties only
    ///   the kind is compared, docs/architecture.md §8);
    /// - else what the tool says it cannot show: `Unsupported`;
    /// - else an unparsable line in the FDE: `ConsumerFault`;
    /// - an FDE the tool did not print: the same `IllFormed` after a
    ///   section-level diagnostic, else `IllFormed { "<tool>:not-shown" }`
    ///   (the tool's listing says there is no FDE it can read there; both
    ///   tools skip some entries silently);
    /// - otherwise its rows: each ends where the next starts, the last at
    ///   the FDE's end; `inherit_cie` (readelf) takes the CIE's last row
    ///   when the FDE printed none; then [`RowTable::normalize`]. A row with
    ///   no CFA rule that covers at least one address is `IllFormed {
    ///   "<tool>:cfa-unspecified" }` (the normal form has no such rule).
    pub fn outcome(&self, tool: &str, offset: u64, inherit_cie: bool) -> CfiOutcome {
        if let Some(g) = self.garbage.first() {
            return CfiOutcome::Failed(Failure::ConsumerFault {
                what: format!("{tool}: unparsable output line `{g}`"),
            });
        }
        let diagnosed = |what: &str| {
            CfiOutcome::Failed(Failure::IllFormed { rule: RuleId::new(format!("{tool}:{what}")), at: None })
        };
        let Some(fde) = self.fdes.get(&offset) else {
            return match self.diagnostics.first() {
                Some(_) => diagnosed("diagnostic"),
                None => diagnosed("not-shown"),
            };
        };
        if !fde.diagnostics.is_empty() {
            return diagnosed("diagnostic");
        }
        if let Some(what) = &fde.unsupported {
            return CfiOutcome::Failed(Failure::Unsupported { what: format!("{tool}: {what}") });
        }
        if let Some(g) = fde.garbage.first() {
            return CfiOutcome::Failed(Failure::ConsumerFault {
                what: format!("{tool}: unparsable output line `{g}`"),
            });
        }
        let Some((begin, end)) = fde.pc else {
            return CfiOutcome::Failed(Failure::ConsumerFault {
                what: format!("{tool}: no address range for the FDE at {offset:#x}"),
            });
        };
        let inherited;
        let rows = if fde.rows.is_empty() && inherit_cie {
            let last = fde.cie.and_then(|c| self.cies.get(&c)).and_then(|c| c.rows.last());
            inherited = last.map(|(_, cfa, regs)| vec![(begin, cfa.clone(), regs.clone())]).unwrap_or_default();
            &inherited
        } else {
            &fde.rows
        };
        let mut out = Vec::with_capacity(rows.len());
        for (i, (start, cfa, regs)) in rows.iter().enumerate() {
            let stop = rows.get(i + 1).map_or(end, |r| r.0);
            let cfa = match cfa {
                ToolCfa::Rule(r) => r.clone(),
                ToolCfa::Unspecified if stop <= *start => continue,
                ToolCfa::Unspecified => return diagnosed("cfa-unspecified"),
            };
            out.push(Row { start: *start, end: stop, cfa, registers: regs.clone() });
        }
        CfiOutcome::Table(RowTable { fde_offset: offset, rows: out }.normalize())
    }
}

/// A tool's register names for one architecture, learnt by running it on a
/// CIE that names every register ([`super::calibration_section`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    by_name: HashMap<String, u64>,
    ambiguous: HashSet<String>,
}

impl Names {
    /// The table from `(name, number)` pairs; a name printed for two
    /// numbers is ambiguous and resolves to nothing.
    pub fn new(pairs: impl IntoIterator<Item = (String, u64)>) -> Self {
        let mut n = Names::default();
        for (name, num) in pairs {
            if n.ambiguous.contains(&name) {
                continue;
            }
            match n.by_name.get(&name) {
                Some(&old) if old != num => {
                    n.by_name.remove(&name);
                    n.ambiguous.insert(name);
                }
                _ => {
                    n.by_name.insert(name, num);
                }
            }
        }
        n
    }

    /// The DWARF register number the tool means by `name`: a learnt name,
    /// else the tool's spelling of an unnamed register (`prefix` + decimal
    /// number: llvm-dwarfdump `reg34`, readelf `r34`).
    pub fn number(&self, name: &str, prefix: &str) -> Option<u64> {
        if let Some(n) = self.by_name.get(name) {
            return Some(*n);
        }
        if self.ambiguous.contains(name) {
            return None;
        }
        let digits = name.strip_prefix(prefix)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }
}

/// Parses `+N`, `-N` or `N` (decimal).
pub fn signed(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: i128 = digits.parse().ok()?;
    i64::try_from(if neg { -v } else { v }).ok()
}

/// Parses lowercase or uppercase hex digits, with or without `0x`.
pub fn hex(s: &str) -> Option<u64> {
    let d = s.strip_prefix("0x").unwrap_or(s);
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(d, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg_offset(register: u64, offset: i64) -> ToolCfa {
        ToolCfa::Rule(CfaRule::RegOffset { register, offset, aspace: 0 })
    }

    #[test]
    fn rows_end_where_the_next_starts_and_the_last_at_the_fde_end() {
        // Rows at 0x10 and 0x14 of an FDE covering [0x10, 0x20): the first
        // covers [0x10, 0x14), the second [0x14, 0x20).
        let mut s = ToolSection::default();
        s.fdes.insert(
            0x18,
            ToolEntry {
                pc: Some((0x10, 0x20)),
                rows: vec![(0x10, reg_offset(7, 8), BTreeMap::new()), (0x14, reg_offset(7, 16), BTreeMap::new())],
                ..Default::default()
            },
        );
        let CfiOutcome::Table(t) = s.outcome("t", 0x18, false) else { panic!() };
        assert_eq!((t.rows[0].start, t.rows[0].end, t.rows[1].start, t.rows[1].end), (0x10, 0x14, 0x14, 0x20));
        // Not printed: the tool shows no FDE there (ill-formed kind), with
        // the rule saying whether it said why.
        assert_eq!(s.outcome("t", 0x40, false).rule().unwrap().as_str(), "t:not-shown");
        s.diagnostics.push("error: x".into());
        assert_eq!(s.outcome("t", 0x40, false).rule().unwrap().as_str(), "t:diagnostic");
    }

    #[test]
    fn an_fde_without_rows_inherits_the_cie_row_when_asked() {
        // readelf prints nothing for an FDE whose instructions are all
        // DW_CFA_nop: the CIE's state holds over the whole range.
        let mut s = ToolSection::default();
        s.cies.insert(0, ToolEntry { rows: vec![(0, reg_offset(7, 8), BTreeMap::new())], ..Default::default() });
        s.fdes.insert(0x18, ToolEntry { pc: Some((0x100, 0x110)), cie: Some(0), ..Default::default() });
        let CfiOutcome::Table(t) = s.outcome("t", 0x18, true) else { panic!() };
        assert_eq!(t.rows.len(), 1);
        assert_eq!((t.rows[0].start, t.rows[0].end), (0x100, 0x110));
        let CfiOutcome::Table(t) = s.outcome("t", 0x18, false) else { panic!() };
        assert!(t.rows.is_empty());
    }

    #[test]
    fn names_resolve_learnt_spellings_and_reject_ambiguous_ones() {
        let n = Names::new([("RSP".to_string(), 7), ("X".to_string(), 1), ("X".to_string(), 2)]);
        assert_eq!(n.number("RSP", "reg"), Some(7));
        assert_eq!(n.number("reg34", "reg"), Some(34));
        assert_eq!(n.number("X", "reg"), None);
        assert_eq!(n.number("regx", "reg"), None);
        assert_eq!((signed("+16"), signed("-8"), signed("3"), signed("+")), (Some(16), Some(-8), Some(3), None));
    }
}
