//! LLDB's own CFI row tables (`lldb-rows`; issue 15; docs/debuggers.md,
//! "lldb-rows"): each x86-64 CFI case becomes an executable and core file
//! ([`crate::synth::cfi::synthesise_unwind`]; a case with no unwinding
//! part gets a minimal state, [`minimal_unwind`]), LLDB loads them and
//! prints with `image show-unwind -a ADDR` the plan it parsed from the
//! frame section ("eh_frame UnwindPlan" or "debug_frame UnwindPlan"), and
//! its rows are judged as a row table like readelf's or libdw's.
//!
//! LLDB parses CFI with its own reader (`DWARFCallFrameInfo`), not
//! llvm-dwarfdump's, so this is a separate column. It prints rows as
//! `row[N]: OFFSET: CFA=rsp +8 => rbp=[CFA-16] rip=[CFA-8]`, OFFSET in
//! bytes from the function's start (decimal); expressions it prints
//! disassembled, so only their kind is compared ([`LldbRows::cfi_view`]).

use super::{Batches, Kind, Limits};
use crate::case::{Case, CfiCase, ExprCase, UnwindCase};
use crate::consumer::external::table::{signed, ToolCfa, ToolEntry, ToolRow, ToolSection};
use crate::consumer::health::HealthReport;
use crate::consumer::{Answer, Consumer, ConsumerError, FailureClass, Support};
use crate::edition::Edition;
use crate::synth::cfi::synthesise_unwind;
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::context::Context;
use dwarfcheck_core::outcome::{CfaRule, CfiOutcome, Failure, Outcome, RegisterRule, RowTable};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::{Arch, Target};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The probe (LLDB's SB API and command interpreter).
pub const PROBE: &str = concat!(include_str!("lldb_core.py"), include_str!("probe_lldb_rows.py"));

/// Consumer name.
pub const NAME: &str = "lldb-rows";

/// The top frame's rsp in a minimal state: in the user half, far from any
/// code or frame section a case places (no memory is given there).
const MINIMAL_RSP: u64 = 0x7ff0_0000_0000;

/// What LLDB prints for an expression it cannot disassemble (its bytes
/// follow): still an expression rule it parsed.
const DECODING_ERROR: &str = "<decoding error>";

/// x86-64 DWARF number of rsp.
const RSP: u64 = 7;

/// LLDB's row tables, through synthesised cores.
pub struct LldbRows {
    runs: Batches,
    /// Answers of prepared cases, by origin and name; `None`: not run, LLDB
    /// was down.
    cache: Mutex<HashMap<String, Option<CfiOutcome>>>,
}

impl std::fmt::Debug for LldbRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LldbRows").field("program", &self.runs.program().1).finish()
    }
}

fn key(c: &CfiCase) -> String {
    Batches::case_key(&c.origin, &c.name)
}

fn fault(what: String) -> CfiOutcome {
    CfiOutcome::Failed(Failure::ConsumerFault { what })
}

fn unsupported(what: String) -> CfiOutcome {
    CfiOutcome::Failed(Failure::Unsupported { what })
}

/// The FDE at `offset` of `sec`: `[begin, end)` of its code.
fn fde_range(sec: &CfiSection, offset: u64) -> Option<(u64, u64)> {
    let (fde, _) = sec.parse_fde(offset).ok()?;
    Some((fde.pc_begin, fde.pc_begin.saturating_add(fde.pc_range)))
}

/// The state a core is made of for a case with no unwinding part: pc at
/// the start of the case's FDE, rsp at [`MINIMAL_RSP`], no memory. `None`
/// when the FDE's header does not parse.
pub fn minimal_unwind(case: &CfiCase) -> Option<UnwindCase> {
    let (begin, _) = fde_range(&case.section, case.fde_offset)?;
    let mut c = Context::new(case.section.target.clone());
    c.pc = Some(begin);
    c.registers.insert(RSP, MINIMAL_RSP.to_le_bytes().to_vec());
    Some(UnwindCase { ctx: Arc::new(c), limit: None, expect: None })
}

impl LldbRows {
    /// LLDB found on `PATH`.
    ///
    /// Errors: [`ConsumerError::NotInstalled`] when none of
    /// [`Kind::programs`] is on `PATH`.
    pub fn new(limits: Limits) -> Result<Self, ConsumerError> {
        Ok(LldbRows { runs: Batches::find(Kind::Lldb, limits, NAME)?, cache: Mutex::new(HashMap::new()) })
    }

    /// Declared down after `n` runs in a row without an answer (0: never).
    pub fn down_after(mut self, n: u32) -> Self {
        self.runs.set_down_after(n);
        self
    }

    /// Asks LLDB for `cases` in batches of [`Limits::batch`], in parallel.
    fn run_all(&self, cases: &[&CfiCase]) -> Vec<Option<CfiOutcome>> {
        let chunks: Vec<&[&CfiCase]> = cases.chunks(self.runs.limits().batch.max(1)).collect();
        chunks.par_iter().flat_map_iter(|c| self.run_batch(c)).collect()
    }

    fn run_batch(&self, cases: &[&CfiCase]) -> Vec<Option<CfiOutcome>> {
        self.runs.run(
            cases.len(),
            &|i| key(cases[i]),
            &|i, dir| job(cases[i], i, dir),
            PROBE,
            &|v| {
                let i = v.get("id").and_then(|i| i.as_u64()).unwrap_or(0) as usize;
                answer(cases[i.min(cases.len() - 1)], v)
            },
            &fault,
        )
    }
}

/// Synthesises case number `i` into `dir` and describes it for the probe;
/// `Err`: its answer when it cannot be asked (not x86-64, not
/// representable).
fn job(c: &CfiCase, i: usize, dir: &Path) -> Result<serde_json::Value, CfiOutcome> {
    if c.section.target.arch != Arch::X86_64 {
        return Err(unsupported(format!("{NAME} is judged on x86-64 only")));
    }
    let Some((begin, end)) = fde_range(&c.section, c.fde_offset) else {
        return Err(unsupported("the FDE's header does not parse".into()));
    };
    if begin >= end {
        return Err(unsupported("an FDE with no code cannot be looked up".into()));
    }
    // The synthesised executable does not put the text or data base the
    // case assumes where LLDB would look for it.
    let relative = crate::consumer::fde_cie(&c.section, c.fde_offset)
        .is_some_and(|cie| c.section.kind == FrameKind::EhFrame && matches!(cie.fde_encoding & 0x70, 0x20 | 0x30));
    if relative {
        return Err(unsupported("text- or data-relative pointers: the synthesised file has no such base".into()));
    }
    let minimal;
    let u = match &c.unwind {
        Some(u) => u,
        None => {
            minimal = minimal_unwind(c).ok_or_else(|| unsupported("the FDE's header does not parse".into()))?;
            &minimal
        }
    };
    let exe = dir.join(format!("case{i}"));
    let core = dir.join(format!("case{i}.core"));
    let d = synthesise_unwind(c, u, &exe.display().to_string()).map_err(|e| unsupported(e.to_string()))?;
    std::fs::write(&exe, &d.executable)
        .and_then(|_| std::fs::write(&core, &d.core))
        .map_err(|e| fault(format!("writing the debuggee: {e}")))?;
    Ok(serde_json::json!({ "id": i, "executable": exe, "core": core, "address": begin }))
}

/// One probe result line as the row table of the case's FDE.
fn answer(c: &CfiCase, v: &serde_json::Value) -> CfiOutcome {
    if let Some(msg) = v.get("error").and_then(|e| e.as_str()) {
        let line: String = msg.lines().next().unwrap_or("").chars().take(160).collect();
        return fault(format!("{NAME}: {line}"));
    }
    let text = v.get("text").and_then(|t| t.as_str()).unwrap_or("");
    let Some((begin, end)) = fde_range(&c.section, c.fde_offset) else {
        return unsupported("the FDE's header does not parse".into());
    };
    parse(text, &c.section, c.fde_offset, begin, end)
}

/// The plan LLDB parsed from `sec` (heading `eh_frame UnwindPlan:` or
/// `debug_frame UnwindPlan:`) in `image show-unwind`'s output `text`, as
/// the row table of the FDE at `offset` covering `[begin, end)`.
///
/// - LLDB names no function at the address, or shows no plan from the
///   frame section: `IllFormed { "lldb-rows:not-shown" }` (LLDB's listing
///   says there is no FDE it can use there, as for the other row tools);
/// - a rule with no normal form (LLDB's `AFA` rules, a dereferenced
///   register CFA): `Unsupported`;
/// - a row line that does not parse: `ConsumerFault`;
/// - else the rows, each from its offset to the next, the last to `end`
///   ([`ToolSection::outcome`]).
pub fn parse(text: &str, sec: &CfiSection, offset: u64, begin: u64, end: u64) -> CfiOutcome {
    let heading = match sec.kind {
        FrameKind::EhFrame => "eh_frame UnwindPlan:",
        FrameKind::DebugFrame => "debug_frame UnwindPlan:",
    };
    let not_shown =
        || CfiOutcome::Failed(Failure::IllFormed { rule: RuleId::new(format!("{NAME}:not-shown")), at: None });
    let Some(start) = text.lines().find_map(|l| {
        let rest = l.strip_prefix("UNWIND PLANS for ")?;
        let a = rest.rsplit_once("(start addr ")?.1.strip_suffix(')')?;
        crate::consumer::external::table::hex(a)
    }) else {
        return not_shown();
    };
    let mut lines = text.lines().skip_while(|l| l.trim() != heading);
    if lines.next().is_none() {
        return not_shown();
    }
    let mut entry = ToolEntry { pc: Some((begin, end)), ..Default::default() };
    for line in lines.take_while(|l| !l.trim().is_empty()) {
        let Some(row) = line.trim().strip_prefix("row[") else { continue };
        match parse_row(row, &sec.target, start) {
            Ok(r) => entry.rows.push(r),
            Err(Some(what)) => return unsupported(format!("{NAME}: {what}")),
            Err(None) => entry.garbage.push(line.to_string()),
        }
    }
    let mut s = ToolSection::default();
    s.fdes.insert(offset, entry);
    s.outcome(NAME, offset, false)
}

/// One row after `row[`: `N]: OFFSET: CFA=RULE => REG=RULE ...`, OFFSET
/// from `start`. `Err(Some(what))`: a rule with no normal form;
/// `Err(None)`: the line does not parse.
fn parse_row(row: &str, target: &Target, start: u64) -> Result<ToolRow, Option<String>> {
    let (_, rest) = row.split_once("]:").ok_or(None)?;
    let (off, rest) = rest.split_once(':').ok_or(None)?;
    let off: u64 = off.trim().parse().map_err(|_| None)?;
    let rest = rest.trim();
    let (cfa, regs) = match rest.split_once("=>") {
        Some((c, r)) => (c.trim(), r.trim()),
        None => (rest, ""),
    };
    let cfa = cfa.strip_prefix("CFA=").ok_or(None)?;
    let cfa = parse_cfa(cfa, target)?;
    // Rules are `NAME=RULE` separated by spaces; a word without `=` goes on
    // the rule before it (`rbx= <same>`, a disassembled expression).
    let mut rules: Vec<String> = Vec::new();
    for w in regs.split_whitespace() {
        match rules.last_mut() {
            Some(last) if !w.contains('=') || last.ends_with('=') => {
                if !last.ends_with('=') {
                    last.push(' ');
                }
                last.push_str(w);
            }
            _ => rules.push(w.to_string()),
        }
    }
    let mut registers = BTreeMap::new();
    for r in &rules {
        let (name, rule) = r.split_once('=').ok_or(None)?;
        let regno = register_number(name, target).ok_or(None)?;
        if let Some(rule) = parse_rule(rule, target)? {
            registers.insert(regno, rule);
        }
    }
    Ok((start.wrapping_add(off), ToolCfa::Rule(cfa), registers))
}

/// The DWARF number of LLDB's register `name` (its x86-64 names are the
/// psABI's), or of `reg(N)`.
fn register_number(name: &str, target: &Target) -> Option<u64> {
    if let Some(n) = name.strip_prefix("reg(").and_then(|n| n.strip_suffix(')')) {
        return n.parse().ok();
    }
    target.register_by_name(name).map(|r| r.number)
}

/// A CFA rule as LLDB prints it: `REG +N` (register plus offset; the
/// offset printed `%+3d`), or a disassembled expression (`DW_OP_...`,
/// compared by kind only).
fn parse_cfa(s: &str, target: &Target) -> Result<CfaRule, Option<String>> {
    if s.starts_with("DW_OP") || s.starts_with(DECODING_ERROR) {
        return Ok(CfaRule::Expression { expr: Vec::new() });
    }
    let Some(at) = s.find(['+', '-']) else { return Err(Some(format!("CFA rule `{s}` has no normal form"))) };
    let (name, off) = s.split_at(at);
    let register = register_number(name.trim(), target).ok_or_else(|| Some(format!("CFA rule `{s}`")))?;
    let offset = signed(off.trim()).ok_or(None)?;
    Ok(CfaRule::RegOffset { register, offset, aspace: 0 })
}

/// A register rule as LLDB prints it: `!` unspecified (no rule: `None`),
/// `?` undefined, `<same>`, `[CFA+N]`, `CFA+N`, another register's name,
/// or a disassembled expression, `[...]` (expression) or bare
/// (value expression), compared by kind only.
fn parse_rule(s: &str, target: &Target) -> Result<Option<RegisterRule>, Option<String>> {
    let s = s.trim();
    let cfa_offset = |t: &str| t.strip_prefix("CFA").and_then(signed);
    Ok(Some(match s {
        "!" => return Ok(None),
        "?" => RegisterRule::Undefined,
        "<same>" => RegisterRule::SameValue,
        _ if s.contains("AFA") => return Err(Some(format!("register rule `{s}` has no normal form"))),
        _ => {
            if let Some(inner) = s.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                match cfa_offset(inner) {
                    Some(offset) => RegisterRule::Offset { offset },
                    None => RegisterRule::Expression { expr: Vec::new() },
                }
            } else if let Some(offset) = cfa_offset(s) {
                RegisterRule::ValOffset { offset }
            } else if let Some(register) = register_number(s, target) {
                RegisterRule::Register { register }
            } else if s.starts_with("DW_OP") || s.starts_with(DECODING_ERROR) {
                RegisterRule::ValExpression { expr: Vec::new() }
            } else {
                return Err(None);
            }
        }
    }))
}

/// What LLDB can show of a row table: expressions as their kind only (LLDB
/// prints them disassembled), and no AArch64 RA_SIGN_STATE.
pub fn view(t: &RowTable) -> RowTable {
    let mut t = t.clone();
    for r in &mut t.rows {
        if let CfaRule::Expression { expr } = &mut r.cfa {
            expr.clear();
        }
        r.registers.retain(|_, rule| !matches!(rule, RegisterRule::RaSigned { .. }));
        for rule in r.registers.values_mut() {
            if let RegisterRule::Expression { expr } | RegisterRule::ValExpression { expr } = rule {
                expr.clear();
            }
        }
    }
    t.normalize()
}

impl Consumer for LldbRows {
    fn name(&self) -> &str {
        NAME
    }

    /// CFI cases (row tables), DWARF 5 and GNU input.
    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu], expr: false, cfi: true }
    }

    fn evaluate(&self, _case: &ExprCase) -> Outcome {
        Outcome::Failed(Failure::Unsupported { what: format!("{NAME} builds row tables only") })
    }

    fn prepare(&self, cases: &[Case]) {
        let support = self.supports();
        let todo: Vec<&CfiCase> = cases
            .iter()
            .filter_map(|c| match c {
                Case::Cfi(c) if support.editions.contains(&crate::edition::of_cfi_case(c)) => Some(c),
                _ => None,
            })
            .collect();
        if todo.is_empty() {
            return;
        }
        let answers = self.run_all(&todo);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        for (c, a) in todo.iter().zip(answers) {
            cache.insert(key(c), a);
        }
    }

    /// The prepared answer, or a run of its own; a case not run because
    /// LLDB is down gives a `ConsumerFault`.
    fn frame_table(&self, case: &CfiCase) -> CfiOutcome {
        let cached = self.cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key(case)).cloned();
        let answer = match cached {
            Some(a) => a,
            None => self.run_batch(&[case]).pop().flatten(),
        };
        answer.unwrap_or_else(|| fault(format!("{NAME}: not run, LLDB is down")))
    }

    fn cfi_view(&self, _case: &CfiCase, table: &RowTable) -> Option<RowTable> {
        Some(view(table))
    }

    fn health(&self) -> Option<HealthReport> {
        Some(self.runs.health())
    }

    fn version(&self) -> Option<String> {
        let (kind, program) = self.runs.program();
        Some(kind.version(program))
    }

    fn failure_class(&self, case: &Case, reference: Answer<'_>, answer: Answer<'_>) -> Option<FailureClass> {
        let Case::Cfi(c) = case else { return None };
        classify(c, reference, answer)
    }
}

/// The known class of a disagreement on `c` (docs/debuggers.md,
/// "lldb-rows"), recognised from the FDE's CIE and instructions: LR1 a
/// `DW_CFA_val_offset(_sf)` rule, LR2 `DW_CFA_GNU_negative_offset_extended`,
/// LR3 `DW_CFA_restore(_extended)` (when LLDB showed rows), and, when
/// LLDB showed no plan from the section, LR4 64-bit DWARF, LR5 an
/// augmentation string longer than 7 bytes, LR6 aligned `.eh_frame`
/// pointers, LR7 a version 4 CIE whose
/// address size is not 8 or that has a segment selector.
fn classify(c: &CfiCase, _reference: Answer<'_>, answer: Answer<'_>) -> Option<FailureClass> {
    let class = |id: &str, explanation: &str| FailureClass {
        id: id.into(),
        explanation: explanation.into(),
        docs: Some("docs/debuggers.md#lldb-rows-lldbs-own-row-tables".into()),
        report: None,
    };
    let cie = crate::consumer::fde_cie(&c.section, c.fde_offset)?;
    let shown = matches!(answer, Answer::Cfi(CfiOutcome::Table(_)));
    if !shown {
        if cie.format == dwarfcheck_core::encoding::Format::Dwarf64 {
            return Some(class("LR4", "does not read 64-bit DWARF CFI (it takes the 64-bit CIE id for an offset)"));
        }
        if cie.augmentation.len() > 7 {
            return Some(class("LR5", "refuses a CIE whose augmentation string is longer than 7 bytes"));
        }
        if c.section.kind == FrameKind::EhFrame && cie.fde_encoding & 0x70 == 0x50 {
            return Some(class("LR6", "does not decode aligned .eh_frame pointers (DW_EH_PE_aligned)"));
        }
        if cie.version == 4 && (cie.address_size != 8 || cie.segment_selector_size != 0) {
            return Some(class(
                "LR7",
                "ignores a version 4 CIE's address size and segment selector size (reads 8-byte addresses)",
            ));
        }
        return None;
    }
    let text = crate::consumer::unwinding::instructions_text(&c.section, c.fde_offset)?;
    if text.contains("DW_CFA_val_offset") {
        let mut k = class("LR1", "drops a DW_CFA_val_offset rule (the caller's value CFA+N): no rule in its row");
        k.report = Some("https://github.com/llvm/llvm-project/pull/150732".into());
        return Some(k);
    }
    if text.contains("DW_CFA_GNU_negative_offset_extended") {
        return Some(class("LR2", "drops a DW_CFA_GNU_negative_offset_extended rule"));
    }
    if text.contains("DW_CFA_restore:") || text.contains("DW_CFA_restore_extended") {
        return Some(class(
            "LR3",
            "DW_CFA_restore restores the rule of the plan's first row (the CIE's and the FDE's instructions \
             before the first advance), not the CIE's initial rule",
        ));
    }
    None
}
