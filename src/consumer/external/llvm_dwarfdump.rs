//! Parser of `llvm-dwarfdump --debug-frame --eh-frame` output (LLVM 19).
//!
//! Grammar learnt from the tool's output on real binaries and on the
//! synthesised ELF files of the bundled cases:
//! - entry headers `00000018 00000010 0000001c FDE cie=00000000
//!   pc=00130210...00130232`, `00000000 00000014 ffffffff CIE`,
//!   `00000038 ZERO terminator`;
//! - indented instruction listing and CIE fields (ignored);
//! - the CIE's initial row `  CFA=RSP+8: RIP=[CFA-8]` and FDE rows
//!   `  0x130a61: CFA=RSP+16: RIP=[CFA-8]`;
//! - CFA rules `RSP`, `RSP+16`, `RBP-8`, `RBP+16 in addrspace5`,
//!   `unspecified`, or an expression (`DW_OP_breg7 RSP+8, DW_OP_deref`);
//! - register rules `undefined`, `same`, `[CFA-8]`, `[CFA]`, `CFA+16`
//!   (val_offset), `RDX` (another register), `[DW_OP_...]` (expression),
//!   `DW_OP_...` (val_expression), `<empty>`, a decimal constant (AArch64
//!   `reg34=1`: the RA_SIGN_STATE pseudo-register);
//! - `error: ...` / `warning: ...` lines, after the entry they concern (an
//!   error outside an entry ends the walk of the section);
//! - `<decoding error> e1` inside an expression LLVM 19 cannot decode (the
//!   hetero-2020 `DW_OP_LLVM_*` operations of the AMDGPU fixtures): the FDE
//!   is `Unsupported`.
//!
//! Register names are LLVM's (`RSP`, `W29`, `SGPR33_LO16`), resolved with
//! the learnt [`Names`]; unnamed registers print as `reg<N>`.

use super::table::{hex, signed, Current, Names, ToolCfa, ToolEntry, ToolRow, ToolSection};
use dwarfcheck_core::outcome::{CfaRule, RegisterRule};
use dwarfcheck_core::target::{Arch, Target};
use std::collections::BTreeMap;

/// The tool's spelling of an unnamed register: `reg<N>`.
pub const UNNAMED: &str = "reg";

/// What parsing needs: the tool's register names and the target (for
/// assembling expressions with our register names and vendor profile).
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The tool's register names.
    pub names: &'a Names,
    /// The target of the section.
    pub target: &'a Target,
}

/// Parses the whole output of one run.
pub fn parse(text: &str, cx: Ctx<'_>) -> ToolSection {
    let mut s = ToolSection::default();
    let mut cur = Current::None;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.ends_with(" contents:") || (!line.starts_with(' ') && t.contains(":\tfile format ")) {
            continue;
        }
        if let Some(msg) = t.strip_prefix("error: ").or_else(|| t.strip_prefix("warning: ")) {
            s.diagnostic(cur, msg);
            continue;
        }
        if !line.starts_with(' ') {
            match header(t) {
                Some((c, e)) => {
                    cur = c;
                    if let Some(slot) = s.entry(cur) {
                        *slot = e;
                    }
                }
                None => s.garbage(cur, t),
            }
            continue;
        }
        let row = if let Some(r) = t.strip_prefix("CFA=") {
            Some((0, r))
        } else if t.starts_with("0x") {
            t.split_once(": CFA=").and_then(|(a, r)| Some((hex(a)?, r)))
        } else {
            continue; // the instruction listing and the CIE's fields
        };
        if t.contains("<decoding error>") {
            // LLVM prints the bytes of an expression it cannot decode.
            if let Some(e) = s.entry(cur) {
                e.unsupported.get_or_insert_with(|| format!("cannot decode an expression (`{t}`)"));
                continue;
            }
        }
        s.row(cur, t, row.and_then(|(at, r)| parse_row(at, r, cx)));
    }
    s
}

/// An entry header line: the new current entry and its header fields.
fn header(t: &str) -> Option<(Current, ToolEntry)> {
    let mut w = t.split_whitespace();
    let off = hex(w.next()?)?;
    if w.next()? == "ZERO" {
        return Some((Current::None, ToolEntry::default()));
    }
    let _id = w.next()?;
    match w.next()? {
        "CIE" => Some((Current::Cie(off), ToolEntry::default())),
        "FDE" => {
            let cie = hex(w.next()?.strip_prefix("cie=")?);
            let (b, e) = w.next()?.strip_prefix("pc=")?.split_once("...")?;
            let e = ToolEntry { pc: Some((hex(b)?, hex(e)?)), cie, ..Default::default() };
            Some((Current::Fde(off), e))
        }
        _ => None,
    }
}

/// One row after `CFA=`: the CFA rule, then `: ` and the register rules.
fn parse_row(at: u64, text: &str, cx: Ctx<'_>) -> Option<ToolRow> {
    let (cfa, regs) = match separator(text) {
        Some(i) => (&text[..i], Some(&text[i + 2..])),
        None => (text, None),
    };
    let cfa = parse_cfa(cfa, cx)?;
    let mut rules = BTreeMap::new();
    for item in regs.map(split_rules).unwrap_or_default() {
        let (name, rule) = item.split_once('=')?;
        let reg = cx.names.number(name, UNNAMED)?;
        rules.insert(reg, parse_rule(reg, rule, cx)?);
    }
    Some((at, cfa, rules))
}

/// Byte index of the `: ` that ends the CFA part of a row: the first one
/// outside `<...>` (a typed operation prints `<base_type ref: 0x0>`).
fn separator(text: &str) -> Option<usize> {
    let mut depth = 0u32;
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && b.get(i + 1) == Some(&b' ') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Splits `A=x, B=DW_OP_lit1, DW_OP_plus, C=same` into the rules, keeping
/// the `, ` inside an expression (a piece that does not start `NAME=`).
fn split_rules(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for piece in s.split(", ") {
        let starts_rule = piece
            .split_once('=')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
        match out.last_mut() {
            Some(last) if !starts_rule || piece.starts_with("DW_OP_") => {
                last.push_str(", ");
                last.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
    }
    out
}

fn parse_cfa(s: &str, cx: Ctx<'_>) -> Option<ToolCfa> {
    if s == "unspecified" {
        return Some(ToolCfa::Unspecified);
    }
    if s.starts_with("DW_OP_") || s == "<empty>" {
        return Some(ToolCfa::Rule(CfaRule::Expression { expr: assemble(s, cx)? }));
    }
    let (rule, aspace) = match s.split_once(" in addrspace") {
        Some((r, a)) => (r, a.trim().parse().ok()?),
        None => (s, 0),
    };
    let (register, offset) = reg_plus(rule, cx)?;
    Some(ToolCfa::Rule(CfaRule::RegOffset { register, offset, aspace }))
}

/// `NAME`, `NAME+N` or `NAME-N`.
fn reg_plus(s: &str, cx: Ctx<'_>) -> Option<(u64, i64)> {
    let (name, off) = match s.find(['+', '-']) {
        Some(i) => (&s[..i], signed(&s[i..])?),
        None => (s, 0),
    };
    Some((cx.names.number(name, UNNAMED)?, off))
}

/// `CFA`, `CFA+N`, `CFA-N`: the offset.
fn cfa_plus(s: &str) -> Option<i64> {
    let rest = s.strip_prefix("CFA")?;
    if rest.is_empty() {
        Some(0)
    } else {
        signed(rest)
    }
}

fn parse_rule(reg: u64, s: &str, cx: Ctx<'_>) -> Option<RegisterRule> {
    Some(match s {
        "undefined" => RegisterRule::Undefined,
        "same" => RegisterRule::SameValue,
        _ if s.starts_with('[') && s.ends_with(']') => {
            let inner = &s[1..s.len() - 1];
            match cfa_plus(inner) {
                Some(offset) => RegisterRule::Offset { offset },
                None => RegisterRule::Expression { expr: assemble(inner, cx)? },
            }
        }
        _ if s.starts_with("DW_OP_") || s == "<empty>" => RegisterRule::ValExpression { expr: assemble(s, cx)? },
        _ if s.starts_with("CFA") => RegisterRule::ValOffset { offset: cfa_plus(s)? },
        _ if s.bytes().all(|b| b.is_ascii_digit()) => {
            // LLVM keeps DW_CFA_AARCH64_negate_ra_state as a constant rule
            // of RA_SIGN_STATE; no other constant rule exists in DWARF.
            if cx.target.arch != Arch::Aarch64 || reg != dwarfcheck_core::cfi::AARCH64_RA_SIGN_STATE {
                return None;
            }
            RegisterRule::RaSigned { signed: s.parse::<u64>().ok()? & 1 == 1 }
        }
        _ => RegisterRule::Register { register: cx.names.number(s, UNNAMED)? },
    })
}

/// Assembles an expression LLVM printed, after renaming LLVM's register
/// names to the target's (our assembler knows only the latter).
fn assemble(text: &str, cx: Ctx<'_>) -> Option<Vec<u8>> {
    let mut renamed = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |w: &mut String, out: &mut String| {
        let ours = (!w.starts_with("DW_") && w.starts_with(|c: char| c.is_ascii_alphabetic()))
            .then(|| cx.names.number(w, UNNAMED))
            .flatten()
            .and_then(|n| cx.target.register(n))
            .map(|r| r.name.clone());
        out.push_str(ours.as_deref().unwrap_or(w));
        w.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut renamed);
            renamed.push(c);
        }
    }
    flush(&mut word, &mut renamed);
    let t = cx.target;
    crate::asm::expr::assemble(&renamed, t, &t.vendor, Default::default(), t.address_bytes()).ok()
}

/// The register names in the output of a run on
/// [`super::calibration_section`]: under the CIE of register `k`, the
/// listing line `DW_CFA_same_value: NAME`.
pub fn calibration_names(text: &str) -> Names {
    let mut reg = None;
    let mut pairs = Vec::new();
    for l in text.lines() {
        if !l.starts_with(' ') && !l.is_empty() {
            reg = super::calibration_register(l);
        } else if let (Some(k), Some(name)) = (reg, l.trim().strip_prefix("DW_CFA_same_value: ")) {
            pairs.push((name.to_string(), k));
        }
    }
    Names::new(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarfcheck_core::outcome::Failure;
    use dwarfcheck_core::outcome::{CfiOutcome, Row};
    use dwarfcheck_core::target::presets;

    /// `llvm-dwarfdump-19 --debug-frame --eh-frame` on dwarfcheck's own
    /// debug executable (entries 0x0-0x80, trimmed), with one synthesised
    /// FDE of the bundled cases appended (expression-and-val-expression,
    /// hetero-2020 def_aspace_cfa and the appendix D.6 register rules).
    const SAMPLE: &str = "\
/work/tgt-cfi-tools/debug/dwarfcheck:\tfile format elf64-x86-64

.debug_frame contents:


.eh_frame contents:

00000000 00000014 00000000 CIE
  Format:                DWARF32
  Version:               1
  Augmentation:          \"zR\"
  Code alignment factor: 1
  Data alignment factor: -8
  Return address column: 16
  Augmentation data:     1B

  DW_CFA_def_cfa: RSP +8
  DW_CFA_offset: RIP -8
  DW_CFA_undefined: RIP

  CFA=RSP+8: RIP=undefined

00000018 00000010 0000001c FDE cie=00000000 pc=00130210...00130232
  Format:       DWARF32
  DW_CFA_nop:

  0x130210: CFA=RSP+8: RIP=undefined

0000006c 00000010 00000044 FDE cie=00000000 pc=00130a60...00130a7c
  Format:       DWARF32
  DW_CFA_advance_loc: 1 to 0x130a61
  DW_CFA_def_cfa_offset: +16

  0x130a60: CFA=RSP+8: RIP=[CFA-8]
  0x130a61: CFA=RSP+16: RIP=[CFA-8]

00000080 00000040 00000058 FDE cie=00000000 pc=00001000...00001020
  0x1000: CFA=RSP+8: RBX=DW_OP_bregx RSP+0, RBP=[DW_OP_breg7 RSP+8], RIP=[CFA-8]
  0x1004: CFA=RBP+16 in addrspace5: R8=RDX, RSI=CFA-16, RBP=[CFA], RAX=same
  0x1008: CFA=DW_OP_breg7 RSP+8, DW_OP_deref: RIP=[CFA-8]

000000c4 00000010 00000000 FDE cie=00000000 pc=00002000...00002010
  DW_CFA_def_cfa_offset: +16
error: decoding the FDE opcodes into rows failed
error: DW_CFA_def_cfa_offset found when CFA rule was not RegPlusOffset

000000d8 ZERO terminator
";

    fn names() -> Names {
        let t = presets::x86_64();
        Names::new(t.registers.iter().map(|r| (r.name.to_uppercase(), r.number)))
    }

    /// LLVM 19 prints a typed operation's type as `<base_type ref: 0x0>`:
    /// that `: ` is not the end of the CFA part (the separator is at byte 42,
    /// right after `0x0>`).
    #[test]
    fn separator_skips_type_references() {
        let row = "DW_OP_regval_type RSP <base_type ref: 0x0>: RIP=[CFA-8]";
        assert_eq!(separator(row), Some(42));
        assert_eq!(&row[44..], "RIP=[CFA-8]");
        assert_eq!(separator("RSP+8: RIP=[CFA-8]"), Some(5));
        assert_eq!(separator("RSP+8"), None);
    }

    #[test]
    fn rows_rules_and_diagnostics_parse_as_derived_by_hand() {
        let t = presets::x86_64();
        let n = names();
        let s = parse(SAMPLE, Ctx { names: &n, target: &t });
        assert!(s.garbage.is_empty() && s.diagnostics.is_empty(), "{s:?}");
        // CIE at 0: one initial row, CFA = rsp(7)+8, RIP(16) undefined.
        let cie = &s.cies[&0];
        let rsp8 = CfaRule::RegOffset { register: 7, offset: 8, aspace: 0 };
        assert_eq!(cie.rows, vec![(0, ToolCfa::Rule(rsp8.clone()), BTreeMap::from([(16, RegisterRule::Undefined)]))]);
        // FDE at 0x6c: two rows [0x130a60, 0x130a61) and [0x130a61, 0x130a7c).
        let CfiOutcome::Table(tb) = s.outcome("llvm-dwarfdump", 0x6c, false) else { panic!() };
        let ra = BTreeMap::from([(16, RegisterRule::Offset { offset: -8 })]);
        assert_eq!(
            tb.rows,
            vec![
                Row { start: 0x130a60, end: 0x130a61, cfa: rsp8.clone(), registers: ra.clone() },
                Row {
                    start: 0x130a61,
                    end: 0x130a7c,
                    cfa: CfaRule::RegOffset { register: 7, offset: 16, aspace: 0 },
                    registers: ra.clone()
                },
            ]
        );
        // FDE at 0x80: val_expression DW_OP_bregx 7 0 = 92 07 00; expression
        // DW_OP_breg7 8 = 77 08; register rule RDX = 1; val_offset -16;
        // [CFA] = offset 0; address space 5; CFA expression 77 08 06.
        let CfiOutcome::Table(tb) = s.outcome("llvm-dwarfdump", 0x80, false) else { panic!() };
        assert_eq!(tb.rows[0].registers[&3], RegisterRule::ValExpression { expr: vec![0x92, 0x07, 0x00] });
        assert_eq!(tb.rows[0].registers[&6], RegisterRule::Expression { expr: vec![0x77, 0x08] });
        let r1 = &tb.rows[1];
        assert_eq!(r1.cfa, CfaRule::RegOffset { register: 6, offset: 16, aspace: 5 });
        assert_eq!(r1.registers[&8], RegisterRule::Register { register: 1 });
        assert_eq!(r1.registers[&4], RegisterRule::ValOffset { offset: -16 });
        assert_eq!(r1.registers[&6], RegisterRule::Offset { offset: 0 });
        assert_eq!(r1.registers[&0], RegisterRule::SameValue);
        assert_eq!(tb.rows[2].cfa, CfaRule::Expression { expr: vec![0x77, 0x08, 0x06] });
        assert_eq!((tb.rows[2].start, tb.rows[2].end), (0x1008, 0x1020));
        // FDE at 0xc4: the tool's error makes it diagnosed (ill-formed kind).
        assert_eq!(s.outcome("llvm-dwarfdump", 0xc4, false).kind(), "ill-formed");
    }

    #[test]
    fn an_undecodable_expression_is_unsupported() {
        // Captured from llvm-dwarfdump-19 --debug-frame on the AMDGPU
        // fixture hetero-direct.o (built by .ci/fixtures), FDE at 0x10.
        let t = presets::amdgpu_wave64();
        let n = Names::new([("SGPR32_LO16".to_string(), 64u64)]);
        let text = "00000010 00000034 00000000 FDE cie=00000000 pc=00000000...00000010\n  0x4: CFA=SGPR32_LO16 in addrspace6\n  0x8: CFA=DW_OP_regx SGPR32_LO16, DW_OP_lit6, <decoding error> e1\n";
        let s = parse(text, Ctx { names: &n, target: &t });
        assert_eq!(s.outcome("llvm-dwarfdump", 0x10, false).kind(), "unsupported");
    }

    #[test]
    fn garbage_and_unknown_names_are_faults_not_guesses() {
        let t = presets::x86_64();
        let n = names();
        let text = "00000000 00000010 00000000 FDE cie=00000000 pc=00001000...00001020\n  0x1000: CFA=QQQ+8\n";
        let s = parse(text, Ctx { names: &n, target: &t });
        assert!(matches!(s.outcome("llvm-dwarfdump", 0, false), CfiOutcome::Failed(Failure::ConsumerFault { .. })));
        let s = parse("something odd\n", Ctx { names: &n, target: &t });
        assert!(matches!(s.outcome("llvm-dwarfdump", 0, false), CfiOutcome::Failed(Failure::ConsumerFault { .. })));
    }

    #[test]
    fn aarch64_sign_state_is_a_constant_rule_of_reg34() {
        // Captured from llvm-dwarfdump-19 on the synthesised ELF of the
        // bundled case negate-ra-state-toggles: W29/W30 are x29/x30, WSP
        // is sp (31), reg34=1 means RA_SIGN_STATE = signed.
        let t = presets::aarch64();
        let mut pairs: Vec<(String, u64)> = (0..31).map(|i| (format!("W{i}"), i)).collect();
        pairs.push(("WSP".into(), 31));
        let n = Names::new(pairs);
        let text = "00000018 00000024 00000000 FDE cie=00000000 pc=00001000...00001020\n  0x1000: CFA=WSP: reg34=1\n  0x1004: CFA=WSP+16: W29=[CFA-16], W30=[CFA-8], reg34=0\n";
        let s = parse(text, Ctx { names: &n, target: &t });
        let CfiOutcome::Table(tb) = s.outcome("llvm-dwarfdump", 0x18, false) else { panic!("{s:?}") };
        assert_eq!(tb.rows[0].cfa, CfaRule::RegOffset { register: 31, offset: 0, aspace: 0 });
        assert_eq!(tb.rows[0].registers[&34], RegisterRule::RaSigned { signed: true });
        assert_eq!(tb.rows[1].registers[&34], RegisterRule::RaSigned { signed: false });
        assert_eq!(tb.rows[1].registers[&29], RegisterRule::Offset { offset: -16 });
    }

    #[test]
    fn calibration_lists_names_in_register_order() {
        // CIEs at 0 and 24 stand for registers 0 and 1.
        let text = "00000000 00000014 ffffffff CIE\n  DW_CFA_same_value: RAX\n\n00000018 00000014 ffffffff CIE\n  DW_CFA_same_value: RDX\n  DW_CFA_nop:\n";
        let n = calibration_names(text);
        assert_eq!((n.number("RAX", UNNAMED), n.number("RDX", UNNAMED)), (Some(0), Some(1)));
    }
}
