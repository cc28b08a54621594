//! Parser of `readelf --debug-dump=frames-interp` output (GNU binutils 2.40).
//!
//! Grammar learnt from the tool's output on real binaries and on the
//! synthesised ELF files of the bundled cases:
//! - entry headers `00000000 0000000000000014 00000000 CIE "zR" cf=1 df=-8
//!   ra=16`, `00000018 ... FDE cie=00000000 pc=0000000000130210..0000000000130232`
//!   (`cie=invalid` when the pointer leads nowhere), `00000038 ZERO terminator`;
//! - a column header `   LOC           CFA      rbx   r12   ra    `, printed
//!   again when the columns change; `ra` is the CIE's return address column;
//! - rows `0000000000131622 rsp+16   u     c-8   `: the location, the CFA
//!   (`reg+N`, or `exp` for an expression), then one cell per column: `u`
//!   (undefined *or* never set: readelf shows both alike), `s` (same value),
//!   `c±N` (offset), `v±N` (val_offset), `exp`, `vexp` (expression bodies
//!   are not shown), or the register holding the value (`r1 (rdx)`);
//! - no rows at all for an FDE whose instructions are all `DW_CFA_nop`: the
//!   CIE's state holds;
//! - diagnostics: `readelf: Warning: ...`, `readelf: Error: ...`,
//!   `  DW_CFA_??? (User defined call frame op: 0x30)`,
//!   `Mismatched DW_CFA_restore_state`.
//!
//! Register names are binutils' (`rsp`, `x29`), resolved with the learnt
//! [`Names`]; unnamed registers print as `r<N>`. readelf has no notion of
//! address spaces and never shows AArch64's RA_SIGN_STATE (register 34).

use super::table::{hex, signed, Current, Names, ToolCfa, ToolEntry, ToolRow, ToolSection};
use dwarfcheck_core::outcome::{CfaRule, RegisterRule};
use std::collections::BTreeMap;

/// The tool's spelling of an unnamed register: `r<N>`.
pub const UNNAMED: &str = "r";

/// Parses the whole output of one run.
pub fn parse(text: &str, names: &Names) -> ToolSection {
    let mut s = ToolSection::default();
    let mut cur = Current::None;
    let mut columns: Vec<u64> = Vec::new();
    let mut ra = None;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || (t.starts_with("Contents of the ") && t.ends_with(" section:")) {
            continue;
        }
        if t.starts_with("readelf: ") || t.starts_with("DW_CFA_") || t.starts_with("Mismatched ") {
            s.diagnostic(cur, t);
            continue;
        }
        if let Some(cols) = t.strip_prefix("LOC") {
            let mut cols = cols.split_whitespace();
            if cols.next() != Some("CFA") {
                s.garbage(cur, t);
                continue;
            }
            let nums: Option<Vec<u64>> = cols.map(|c| if c == "ra" { ra } else { names.number(c, UNNAMED) }).collect();
            match nums {
                Some(n) => columns = n,
                None if s.entry(cur).is_some_and(|e| !e.diagnostics.is_empty()) => columns.clear(),
                None => s.garbage(cur, t),
            }
            continue;
        }
        if let Some((c, e)) = header(t) {
            cur = c;
            columns.clear();
            ra = match (cur, &e) {
                (Current::Cie(_), e) => e.ra,
                (Current::Fde(_), e) => e.cie.and_then(|c| s.cies.get(&c)).and_then(|c| c.ra),
                _ => None,
            };
            if let Some(slot) = s.entry(cur) {
                *slot = e;
            }
            continue;
        }
        s.row(cur, t, parse_row(t, &columns, names));
    }
    s
}

/// An entry header line: the new current entry and its header fields.
fn header(t: &str) -> Option<(Current, ToolEntry)> {
    let mut w = t.split_whitespace();
    let off = hex(w.next()?)?;
    let second = w.next()?;
    if second == "ZERO" {
        return Some((Current::None, ToolEntry::default()));
    }
    hex(second)?;
    let _id = w.next()?;
    match w.next()? {
        "CIE" => {
            let ra = w.find_map(|f| f.strip_prefix("ra=")).and_then(|r| r.parse().ok());
            Some((Current::Cie(off), ToolEntry { ra, ..Default::default() }))
        }
        "FDE" => {
            let cie_text = w.next()?.strip_prefix("cie=")?;
            let cie = hex(cie_text);
            let (b, e) = w.next()?.strip_prefix("pc=")?.split_once("..")?;
            // `cie=invalid`: readelf found no CIE there and says so.
            let diagnostics = if cie.is_none() { vec![format!("cie={cie_text}")] } else { Vec::new() };
            let e = ToolEntry { pc: Some((hex(b)?, hex(e)?)), cie, diagnostics, ..Default::default() };
            Some((Current::Fde(off), e))
        }
        _ => None,
    }
}

/// A row: location, CFA, one cell per column. A register cell may be two
/// words (`r1 (rdx)`).
fn parse_row(t: &str, columns: &[u64], names: &Names) -> Option<ToolRow> {
    let mut words = t.split_whitespace().peekable();
    let loc = words.next()?;
    if loc.len() < 8 {
        return None;
    }
    let at = hex(loc)?;
    let cfa = match words.next()? {
        "exp" => CfaRule::Expression { expr: Vec::new() },
        c => {
            let i = c.rfind(['+', '-'])?;
            CfaRule::RegOffset { register: names.number(&c[..i], UNNAMED)?, offset: signed(&c[i..])?, aspace: 0 }
        }
    };
    let mut rules = BTreeMap::new();
    for &col in columns {
        let cell = words.next()?;
        if words.peek().is_some_and(|w| w.starts_with('(') && w.ends_with(')')) {
            words.next();
        }
        if let Some(rule) = parse_cell(cell, names)? {
            rules.insert(col, rule);
        }
    }
    if words.next().is_some() {
        return None;
    }
    Some((at, ToolCfa::Rule(cfa), rules))
}

/// One cell; `Some(None)` for `u` (no rule shown: see [`super::readelf_view`]).
fn parse_cell(c: &str, names: &Names) -> Option<Option<RegisterRule>> {
    Some(Some(match c {
        "u" => return Some(None),
        "s" => RegisterRule::SameValue,
        "exp" => RegisterRule::Expression { expr: Vec::new() },
        "vexp" => RegisterRule::ValExpression { expr: Vec::new() },
        _ => {
            if let Some(o) = c.strip_prefix('c').and_then(signed).filter(|_| c.len() > 2) {
                RegisterRule::Offset { offset: o }
            } else if let Some(o) = c.strip_prefix('v').and_then(signed).filter(|_| c.len() > 2) {
                RegisterRule::ValOffset { offset: o }
            } else {
                RegisterRule::Register { register: names.number(c, UNNAMED)? }
            }
        }
    }))
}

/// The register names in the output of a run on
/// [`super::calibration_section`]: under the CIE of register `k`, the
/// column header holds `ra` and the name of `k`.
pub fn calibration_names(text: &str) -> Names {
    let mut reg = None;
    let mut pairs = Vec::new();
    for l in text.lines() {
        let t = l.trim();
        if let Some(cols) = t.strip_prefix("LOC") {
            if let (Some(k), Some(name)) = (reg, cols.split_whitespace().skip(1).find(|n| *n != "ra")) {
                pairs.push((name.to_string(), k));
            }
        } else if !l.starts_with(' ') && !t.is_empty() {
            reg = super::calibration_register(t);
        }
    }
    Names::new(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::outcome::Failure;
    use dwarfcheck_core::outcome::{CfiOutcome, Row};

    /// `readelf --debug-dump=frames-interp` (binutils 2.40) on dwarfcheck's
    /// own debug executable (entries 0x0-0x80, trimmed), then the FDE of
    /// the bundled case appendix-d6-foo (synthesised ELF, rows trimmed; its
    /// last row is made up to show the `exp`, `v-16` and `vexp` cells) and
    /// a diagnosed FDE of the case gnu-negative-offset-extended.
    const SAMPLE: &str = "\
Contents of the .eh_frame section:


00000000 0000000000000014 00000000 CIE \"zR\" cf=1 df=-8 ra=16
   LOC           CFA      ra    
0000000000000000 rsp+8    c-8   

00000018 0000000000000010 0000001c FDE cie=00000000 pc=0000000000130210..0000000000130232

00000080 0000000000000040 00000058 FDE cie=00000000 pc=0000000000131620..0000000000131729
   LOC           CFA      rbx   r12   ra    
0000000000131620 rsp+8    u     u     c-8   
000000000013162d rsp+80   c-48  c-40  c-8   

000000c4 00000028 00000000 FDE cie=00000000 pc=00001000..00001054
   LOC           CFA      rax   rdx   rsi   rbp   r8    
00001000 rsp+0    s     u     s     s     c-4   
00001044 rsp+0    s     u     s     s     r1 (rdx) 
0000104c rbp+16   exp   u     v-16  vexp  s     

000000f0 0000000000000014 00000000 FDE cie=00000000 pc=0000000000001000..0000000000001020
  DW_CFA_??? (User defined call frame op: 0x2f)
   LOC           CFA      ra    
0000000000001000 rsp+8    c-8   

00000108 ZERO terminator
";

    fn names() -> Names {
        let t = dwarfcheck_core::target::presets::x86_64();
        Names::new(t.registers.iter().map(|r| (r.name.clone(), r.number)))
    }

    #[test]
    fn rows_and_cells_parse_as_derived_by_hand() {
        let s = parse(SAMPLE, &names());
        assert!(s.garbage.is_empty() && s.diagnostics.is_empty(), "{s:?}");
        let rsp = |offset| CfaRule::RegOffset { register: 7, offset, aspace: 0 };
        // FDE at 0x18 printed no rows (all nops): the CIE's row (rsp+8,
        // ra = column 16 at CFA-8) over the FDE's whole range.
        let ra = BTreeMap::from([(16, RegisterRule::Offset { offset: -8 })]);
        let CfiOutcome::Table(t) = s.outcome("readelf", 0x18, true) else { panic!() };
        assert_eq!(t.rows, vec![Row { start: 0x130210, end: 0x130232, cfa: rsp(8), registers: ra.clone() }]);
        // FDE at 0x80: `u` cells are no rule; then rbx(3), r12(12) saved.
        let CfiOutcome::Table(t) = s.outcome("readelf", 0x80, true) else { panic!() };
        assert_eq!(t.rows[0], Row { start: 0x131620, end: 0x13162d, cfa: rsp(8), registers: ra.clone() });
        let saved = BTreeMap::from([
            (3, RegisterRule::Offset { offset: -48 }),
            (12, RegisterRule::Offset { offset: -40 }),
            (16, RegisterRule::Offset { offset: -8 }),
        ]);
        assert_eq!(t.rows[1], Row { start: 0x13162d, end: 0x131729, cfa: rsp(80), registers: saved });
        // FDE at 0xc4 (32-bit locations): r8 held in rdx (register 1),
        // expression cells with no bytes, v-16 a val_offset.
        let CfiOutcome::Table(t) = s.outcome("readelf", 0xc4, true) else { panic!() };
        assert_eq!(t.rows[1].registers[&8], RegisterRule::Register { register: 1 });
        let last = &t.rows[2];
        assert_eq!(last.cfa, CfaRule::RegOffset { register: 6, offset: 16, aspace: 0 });
        assert_eq!(last.registers[&0], RegisterRule::Expression { expr: vec![] });
        assert_eq!(last.registers[&4], RegisterRule::ValOffset { offset: -16 });
        assert_eq!(last.registers[&6], RegisterRule::ValExpression { expr: vec![] });
        assert!(!last.registers.contains_key(&1));
        // FDE at 0xf0: readelf gave up on an opcode: diagnosed.
        assert_eq!(s.outcome("readelf", 0xf0, true).kind(), "ill-formed");
    }

    #[test]
    fn a_row_with_too_few_or_too_many_cells_is_garbage() {
        let text = "00000000 0000000000000010 00000000 FDE cie=00000000 pc=0000000000001000..0000000000001010\n   LOC           CFA      rbx   ra    \n0000000000001000 rsp+8    u\n";
        let s = parse(text, &names());
        assert!(matches!(s.outcome("readelf", 0, true), CfiOutcome::Failed(Failure::ConsumerFault { .. })));
        let text = text.replace("rsp+8    u\n", "rsp+8    u c-8 c-16\n");
        let s = parse(&text, &names());
        assert!(matches!(s.outcome("readelf", 0, true), CfiOutcome::Failed(Failure::ConsumerFault { .. })));
    }

    #[test]
    fn calibration_reads_the_column_header() {
        // Captured shape: CIEs at 0 (ra=1) and 0x30 (ra=0) stand for
        // registers 0 and 2.
        let text = "00000000 0000000000000014 ffffffff CIE \"\" cf=1 df=-8 ra=1\n   LOC           CFA      rax   ra    \n0000000000000000 r0+0     s     u     \n\n00000030 0000000000000014 ffffffff CIE \"\" cf=1 df=-8 ra=0\n   LOC           CFA      ra    rcx   \n";
        let n = calibration_names(text);
        assert_eq!(
            (n.number("rax", UNNAMED), n.number("rcx", UNNAMED), n.number("ra", UNNAMED)),
            (Some(0), Some(2), None)
        );
    }
}
