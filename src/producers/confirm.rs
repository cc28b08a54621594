//! Each ill-formed finding read again by llvm-dwarfdump, apart from
//! dwarfcheck's extraction: the same DIE's name and producer, the same
//! operations, and the same rule from an evaluation built only from the
//! tool's text.
//!
//! A defect shared by the extraction and both evaluators (a wrong base
//! type, a wrong address size, a misread location list) would make correct
//! expressions look ill-formed to every evaluator at once. So for each
//! finding `llvm-dwarfdump --show-parents --debug-info=DIE FILE` is run
//! (contained: time and output budgets), and:
//! 1. the operations it prints for the attribute (for a location-list
//!    entry, the entry with the same range) are assembled back to bytes by
//!    dwarfcheck's assembler, which must give the finding's bytes;
//! 2. a context is built from the tool's text alone: the target from its
//!    `file format` line, the base types from its `"DW_ATE_<encoding>_<bits>"`
//!    annotations of typed operations, the frame base from the enclosing
//!    subprogram's `DW_AT_frame_base`, the pc from the entry's range, DWARF
//!    4 when the list is a `.debug_loc` one (else 5); the machine state is
//!    the synthetic one of real input (`elf::dwarf`);
//! 3. the reference evaluates the tool's bytes in that context, and must
//!    cite the finding's rule.

use super::Finding;
use crate::case::ExprCase;
use crate::consumer::external::process::{self, RunBudget, TempDir};
use dwarfcheck_core::context::{CompUnit, Context, ResultKind};
use dwarfcheck_core::outcome::value::BaseType;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The most runs of llvm-dwarfdump one confirmation makes (a finding's DIE,
/// or a base type's DIE its text does not annotate); findings past them
/// are left unconfirmed (each run takes 0.1–1 s).
pub const MAX_DIES: usize = 400;

/// llvm-dwarfdump as the confirmation runs it: the program, how many runs
/// are left of [`MAX_DIES`], and the base types already read, by file,
/// unit DIE and unit offset.
struct Tool {
    program: Option<std::path::PathBuf>,
    runs_left: usize,
    types: BTreeMap<(String, u64, u64), Option<BaseType>>,
}

impl Tool {
    /// One run on the DIE at `die` of `file`, if the budget allows.
    fn read(&mut self, file: &Path, die: u64) -> Result<Reading, String> {
        let Some(program) = &self.program else { return Err("llvm-dwarfdump is not installed".to_string()) };
        if self.runs_left == 0 {
            return Err(format!("past the first {MAX_DIES} runs of llvm-dwarfdump"));
        }
        self.runs_left -= 1;
        read_die(program, file, die)
    }

    /// The base type at unit offset `off` of the unit whose DIE is at
    /// `unit_die`, as llvm-dwarfdump reads its `DW_TAG_base_type` DIE; read
    /// once per file, unit and offset. The unit header is 12 bytes before
    /// its DIE in DWARF 5, 11 in DWARF 4 (32-bit DWARF): the wrong guess
    /// lands inside a DIE, where llvm-dwarfdump shows none.
    fn base_type(&mut self, file: &str, unit_die: u64, off: u64) -> Option<BaseType> {
        let key = (file.to_string(), unit_die, off);
        if let Some(t) = self.types.get(&key) {
            return *t;
        }
        let t = [12u64, 11].iter().find_map(|header| {
            let at = unit_die.checked_sub(*header)? + off;
            let (enc, bits) = self.read(Path::new(file), at).ok()?.base_type?;
            ate_code(&enc).filter(|_| bits > 0).map(|code| BaseType::ate(code, bits, false))
        });
        self.types.insert(key, t);
        t
    }
}

/// The code of a `DW_ATE_*` name (`DW_ATE_float` → 4).
fn ate_code(name: &str) -> Option<u8> {
    (0..=u8::MAX).find(|c| gimli::DwAte(*c).static_string() == Some(name))
}

/// How llvm-dwarfdump's reading compares with the finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "verdict", content = "detail")]
pub enum Verdict {
    /// Same operations, and the reference cites the same rule on them.
    Confirmed,
    /// The tool's reading differs: its operations, or the rule the
    /// reference gives on them (with what differs).
    Differs(String),
    /// Not checked: the tool is missing, failed, or the DIE was past
    /// [`MAX_DIES`] (why).
    NotChecked(String),
}

/// llvm-dwarfdump's reading of a finding's DIE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Confirmation {
    /// The tool and its version line.
    pub tool: String,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The DIE's name as the tool prints it.
    pub name: Option<String>,
    /// The unit's `DW_AT_producer` as the tool prints it.
    pub producer: Option<String>,
    /// The operations as the tool prints them.
    pub operations: Option<String>,
    /// The rule the reference gives on the tool's reading.
    pub rule: Option<String>,
}

/// Confirms the ill-formed findings of `findings` with llvm-dwarfdump
/// (installed as `llvm-dwarfdump-19` or `llvm-dwarfdump`), one run per
/// DIE, at most [`MAX_DIES`] runs. Other findings are left as they are.
pub fn confirm_all(findings: &mut [Finding]) {
    let program = process::find_program(&["llvm-dwarfdump-19", "llvm-dwarfdump"]);
    let version = program.as_deref().and_then(process::version_line).unwrap_or_default();
    let mut tool = Tool { program, runs_left: MAX_DIES, types: BTreeMap::new() };
    let mut readings: BTreeMap<(String, u64), Result<Reading, String>> = BTreeMap::new();
    for f in findings.iter_mut().filter(|f| f.found.kind == "ill-formed") {
        let Some(die) = f.die.filter(|_| f.described.is_some()) else { continue };
        let key = (f.file.clone(), die);
        if !readings.contains_key(&key) {
            let r = tool.read(Path::new(&f.file), die);
            readings.insert(key.clone(), r);
        }
        f.confirmation = Some(match &readings[&key] {
            Err(why) => Confirmation {
                tool: version.clone(),
                verdict: Verdict::NotChecked(why.clone()),
                name: None,
                producer: None,
                operations: None,
                rule: None,
            },
            Ok(reading) => judge(f, reading, &mut tool, &version),
        });
    }
}

/// An attribute's expressions as llvm-dwarfdump prints them: each with
/// its location-list entry's range `[begin, end)` (`None` for an exprloc).
pub type Entries = Vec<(Option<(u64, u64)>, String)>;

/// What llvm-dwarfdump printed about one DIE.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    /// From the `file format` line: `elf64-x86-64`, ...
    pub format: String,
    /// The unit's producer.
    pub producer: Option<String>,
    /// The DIE's `DW_AT_name`.
    pub name: Option<String>,
    /// The innermost enclosing `DW_AT_frame_base`'s operations.
    pub frame_base: Option<String>,
    /// Per attribute (`DW_AT_location`, ...): its single expression
    /// (range `None`) or its location-list entries with their ranges.
    pub attributes: BTreeMap<String, Entries>,
    /// Whether the attribute's list is a DWARF 4 `.debug_loc` one.
    pub debug_loc: bool,
    /// The `.debug_info` offset of the unit's DIE (`DW_TAG_compile_unit`).
    pub unit_die: Option<u64>,
    /// For a `DW_TAG_base_type` DIE: its `DW_AT_encoding` and size in
    /// **bits** (`DW_AT_byte_size` × 8 or `DW_AT_bit_size`).
    pub base_type: Option<(String, u32)>,
}

/// Runs llvm-dwarfdump on one DIE and reads its output.
fn read_die(tool: &Path, file: &Path, die: u64) -> Result<Reading, String> {
    let dir = TempDir::new().map_err(|e| e.to_string())?;
    let file = std::fs::canonicalize(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let args = [
        std::ffi::OsString::from("--show-parents"),
        format!("--debug-info={die:#x}").into(),
        file.clone().into_os_string(),
    ];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let out =
        process::run(tool, &args, dir.path(), RunBudget { time: Duration::from_secs(60), output_bytes: 16 << 20 })
            .map_err(|e| format!("llvm-dwarfdump {e}"))?;
    if out.code != 0 {
        return Err(format!("llvm-dwarfdump exited with {}", out.code));
    }
    Ok(parse(&out.text, die))
}

/// Reads `--show-parents --debug-info=DIE` output: the parents' blocks,
/// then the DIE's own (the one whose offset is `die`).
pub fn parse(text: &str, die: u64) -> Reading {
    let mut r = Reading::default();
    let mut in_target = false;
    let mut open: Option<(String, Entries)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some((_, f)) = line.split_once("file format ") {
            r.format = f.trim().to_string();
            continue;
        }
        if let Some((off, rest)) = t.split_once(": ") {
            let tag = rest.trim_start();
            if tag.starts_with("DW_TAG_") {
                let off = off.strip_prefix("0x").and_then(|h| u64::from_str_radix(h, 16).ok());
                in_target = off == Some(die);
                if tag.starts_with("DW_TAG_compile_unit") || tag.starts_with("DW_TAG_partial_unit") {
                    r.unit_die = off;
                }
                if in_target && tag.starts_with("DW_TAG_base_type") {
                    r.base_type = Some((String::new(), 0));
                }
                continue;
            }
        }
        if let Some((_, list)) = open.as_mut() {
            // A location-list entry: `[b, e): OPS`, the last one followed
            // by the attribute's closing parenthesis.
            if let Some((range, ops)) = t.strip_prefix('[').and_then(|r| r.split_once("): ")) {
                let range = range.split_once(", ").and_then(|(b, e)| Some((hex(b)?, hex(e)?)));
                let kept = balance(ops);
                let closed = kept.len() < ops.trim_end().len();
                list.push((range, kept.to_string()));
                if !closed {
                    continue;
                }
            }
            if let Some((a, l)) = open.take() {
                r.attributes.insert(a, l);
            }
            if t.starts_with('[') {
                continue;
            }
        }
        let Some((attr, value)) = t.split_once('\t') else { continue };
        let value = value.strip_prefix('(').unwrap_or(value);
        match attr {
            "DW_AT_producer" => r.producer = Some(quoted(value)),
            "DW_AT_frame_base" if !in_target && value.starts_with("DW_OP") => {
                r.frame_base = Some(balance(value).to_string())
            }
            "DW_AT_name" if in_target => r.name = Some(quoted(value)),
            "DW_AT_encoding" if in_target => {
                if let Some(t) = r.base_type.as_mut() {
                    t.0 = balance(value).to_string();
                }
            }
            "DW_AT_byte_size" | "DW_AT_bit_size" if in_target => {
                let n = hex(balance(value)).or_else(|| balance(value).parse().ok()).unwrap_or(0);
                let bits = if attr == "DW_AT_byte_size" { n.saturating_mul(8) } else { n };
                if let Some(t) = r.base_type.as_mut() {
                    t.1 = u32::try_from(bits).unwrap_or(0);
                }
            }
            "DW_AT_abstract_origin" | "DW_AT_specification" if in_target && r.name.is_none() && value.contains('"') => {
                r.name = Some(quoted(value))
            }
            "DW_AT_location" | "DW_AT_frame_base" if in_target => {
                if value.starts_with("DW_OP") {
                    r.attributes.insert(attr.to_string(), vec![(None, balance(value).to_string())]);
                } else {
                    r.debug_loc = !value.starts_with("indexed");
                    open = Some((attr.to_string(), Vec::new()));
                }
            }
            _ => {}
        }
    }
    if let Some((a, l)) = open {
        r.attributes.insert(a, l);
    }
    r
}

/// `text` without the closing parentheses that close nothing inside it
/// (the attribute's own, printed after the last operation).
fn balance(text: &str) -> &str {
    let mut depth = 0i64;
    let mut quoted = false;
    for (i, ch) in text.char_indices() {
        match ch {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                if depth == 0 {
                    return text[..i].trim_end();
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    text.trim_end()
}

/// The text between the first pair of double quotes (or the whole value
/// without its closing parenthesis).
fn quoted(value: &str) -> String {
    match value.split_once('"').and_then(|(_, r)| r.rsplit_once('"')) {
        Some((s, _)) => s.to_string(),
        None => balance(value).to_string(),
    }
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim().strip_prefix("0x")?, 16).ok()
}

/// The base types llvm-dwarfdump names in `ops`: `(0x0000002c)
/// "DW_ATE_unsigned_8"` gives unit offset 0x2c, unsigned, 8 bits.
pub fn annotated_types(ops: &str) -> BTreeMap<u64, BaseType> {
    let mut out = BTreeMap::new();
    let mut rest = ops;
    while let Some(i) = rest.find("(0x") {
        rest = &rest[i + 1..];
        let Some((off, after)) = rest.split_once(')') else { break };
        let Some(ann) = after.trim_start().strip_prefix("\"DW_ATE_") else { continue };
        let Some((ann, _)) = ann.split_once('"') else { continue };
        let Some((enc, bits)) = ann.rsplit_once('_') else { continue };
        let (Some(off), Ok(bits)) = (hex(off), bits.parse::<u32>()) else { continue };
        let Some(code) = ate_code(&format!("DW_ATE_{enc}")) else { continue };
        out.insert(off, BaseType::ate(code, bits, false));
    }
    out
}

/// Compares `reading` with the finding `f`.
fn judge(f: &Finding, reading: &Reading, dwarfdump: &mut Tool, tool: &str) -> Confirmation {
    let mut c = Confirmation {
        tool: tool.to_string(),
        verdict: Verdict::Confirmed,
        name: reading.name.clone(),
        producer: reading.producer.clone(),
        operations: None,
        rule: None,
    };
    let want_range = f.pc_range.strip_prefix('[').and_then(|r| r.strip_suffix(')')).and_then(|r| {
        let (b, e) = r.split_once(", ")?;
        Some((hex(b)?, hex(e)?))
    });
    let Some(list) = reading.attributes.get(&f.attribute) else {
        c.verdict =
            Verdict::Differs(format!("llvm-dwarfdump shows no {} on DIE {:#x}", f.attribute, f.die.unwrap_or(0)));
        return c;
    };
    let ops = match f.entry {
        None => list.first().map(|(_, o)| o),
        Some(i) => list
            .iter()
            .find(|(r, _)| want_range.is_some() && *r == want_range)
            .or_else(|| want_range.is_none().then(|| list.get(i)).flatten())
            .map(|(_, o)| o),
    };
    let Some(ops) = ops else {
        c.verdict = Verdict::Differs(format!("llvm-dwarfdump shows no entry for {}", f.pc_range));
        return c;
    };
    c.operations = Some(ops.clone());
    let Some(target) = target_of_format(&reading.format) else {
        c.verdict = Verdict::NotChecked(format!("no target for file format `{}`", reading.format));
        return c;
    };
    let target = Arc::new(target);
    let format = dwarfcheck_core::encoding::Format::Dwarf32;
    let size = target.address_bytes();
    // llvm-dwarfdump prints the bytes it cannot decode (`<decoding error>
    // a9 2e 9f`; llvm-dwarfdump 19 has no DW_OP_reinterpret): its reading
    // is then the operations before them and those bytes.
    let (text, raw) = match ops.split_once("<decoding error>") {
        Some((t, r)) => (t.trim_end().trim_end_matches(',').trim_end(), found_bytes(r)),
        None => (ops.as_str(), Vec::new()),
    };
    // The unit header's size is not in the tool's text: 12 bytes (DWARF
    // 5) or 11 (DWARF 4), for the regval_type operands; the first that
    // reads back as the finding's operations is kept.
    let mut bytes = Vec::new();
    for header_size in [12, 11] {
        let text = unit_relative_regval_types(text, reading, header_size);
        bytes = match crate::asm::expr::assemble(&text, &target, &target.vendor, format, size) {
            Ok(b) => b,
            Err(e) => {
                c.verdict = Verdict::NotChecked(format!("dwarfcheck cannot assemble llvm-dwarfdump's text: {e}"));
                return c;
            }
        };
        bytes.extend(&raw);
        if crate::asm::expr::disassemble(&bytes, &target, &target.vendor, format, size)
            == crate::asm::expr::disassemble(&found_bytes(&f.found.bytes), &target, &target.vendor, format, size)
        {
            break;
        }
    }
    // Operations, not bytes: a relocatable object's producer may pad a
    // ULEB128 operand (LLVM writes DW_OP_convert's type offset in 4 bytes
    // so that it can be patched), which the assembler writes minimal.
    let theirs = crate::asm::expr::disassemble(&bytes, &target, &target.vendor, format, size);
    let ours = crate::asm::expr::disassemble(&found_bytes(&f.found.bytes), &target, &target.vendor, format, size);
    if theirs != ours {
        c.verdict = Verdict::Differs(format!("llvm-dwarfdump's operations are {theirs}, not {ours}"));
        return c;
    }
    let mut ctx = Context::new(target.clone());
    ctx.result_kind = Some(ResultKind::Location);
    ctx.pc = want_range.map(|r| r.0);
    ctx.synthetic = Some(crate::elf::DEFAULT_SEED);
    ctx.cfa = Some(crate::elf::dwarf::SYNTHETIC_CFA);
    ctx.tls_base = Some(crate::elf::dwarf::SYNTHETIC_TLS_BASE);
    ctx.caller = Some(Arc::new(crate::elf::dwarf::synthetic_caller()));
    if f.attribute == "DW_AT_location" {
        ctx.frame_base = reading
            .frame_base
            .as_deref()
            .and_then(|fb| crate::asm::expr::assemble(fb, &target, &target.vendor, format, size).ok());
    }
    let mut types = annotated_types(ops);
    if let Some(fb) = &reading.frame_base {
        types.extend(annotated_types(fb));
    }
    // Types the text does not annotate (in undecoded bytes): their DIEs,
    // read by llvm-dwarfdump too.
    let version = if reading.debug_loc { 4 } else { 5 };
    let encoding = gimli::Encoding { format: gimli::Format::Dwarf32, version, address_size: size };
    let mut named = Vec::new();
    crate::elf::dwarf::referenced_types(&bytes, encoding, target.endian, &mut named);
    for off in named {
        if types.contains_key(&off) {
            continue;
        }
        let Some(unit_die) = reading.unit_die else {
            c.verdict = Verdict::NotChecked(format!("no unit known for the base type at {off:#x}"));
            return c;
        };
        match dwarfdump.base_type(&f.file, unit_die, off) {
            Some(t) => {
                types.insert(off, t);
            }
            None => {
                c.verdict = Verdict::NotChecked(format!("llvm-dwarfdump shows no base type at unit offset {off:#x}"));
                return c;
            }
        }
    }
    ctx.cu = Some(CompUnit { version, format, address_size: size, base_types: types, ..CompUnit::default() });
    let case = ExprCase::plain("llvm-dwarfdump reading", "llvm-dwarfdump", &bytes, Arc::new(ctx));
    let (outcome, _) = crate::consumer::builtin::reference_outcome(&case);
    c.rule = outcome.rule().map(|r| r.to_string());
    if c.rule.as_deref() != Some(f.found.rule.as_str()) {
        c.verdict = Verdict::Differs(format!("on llvm-dwarfdump's reading the reference gives {outcome}"));
    } else if f.described.as_ref().is_some_and(|d| d.name != reading.name) {
        c.verdict = Verdict::Differs(format!("llvm-dwarfdump names the DIE {:?}", reading.name));
    }
    c
}

/// `text` with each `DW_OP_regval_type` type operand made unit-relative,
/// taking the unit header to be `header_size` bytes before the unit's DIE.
/// llvm-dwarfdump 19 prints that operand as a `.debug_info` offset (the
/// unit's offset added, no `DW_ATE_` annotation), unlike the other typed
/// operations' unit-relative operands.
fn unit_relative_regval_types(text: &str, reading: &Reading, header_size: u64) -> String {
    let Some(unit_die) = reading.unit_die else { return text.to_string() };
    let header = unit_die.saturating_sub(header_size);
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("DW_OP_regval_type") {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        let Some(open) = after.find("(0x") else { break };
        let Some(close) = after[open..].find(')').map(|c| open + c) else { break };
        match hex(&after[open + 1..close]) {
            Some(v) if v >= header && header > 0 => {
                out.push_str(&after[..open]);
                out.push_str(&format!("({:#x})", v - header));
            }
            _ => out.push_str(&after[..=close]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A finding's bytes back from their hexadecimal text.
fn found_bytes(hex: &str) -> Vec<u8> {
    hex.split_whitespace().filter_map(|b| u8::from_str_radix(b, 16).ok()).collect()
}

/// The target of llvm-dwarfdump's `file format` name.
fn target_of_format(format: &str) -> Option<dwarfcheck_core::target::Target> {
    use dwarfcheck_core::target::presets;
    if format.contains("x86-64") {
        Some(presets::x86_64())
    } else if format.contains("aarch64") {
        Some(presets::aarch64())
    } else if format.contains("amdgpu") {
        Some(presets::amdgpu_wave64())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// llvm-dwarfdump 19's output for a clang-19 DIE (sqlite3, `-O2 -g`),
    /// shortened: parents, the DIE, a location list of three entries, the
    /// last with the attribute's closing parenthesis.
    const OUTPUT: &str = "x.o:\tfile format elf64-x86-64\n\n.debug_info contents:\n\n\
0x0000000c: DW_TAG_compile_unit\n              DW_AT_producer\t(\"Debian clang version 19.1.7 (3~deb12u1)\")\n\n\
0x00009e65:   DW_TAG_subprogram\n                DW_AT_frame_base\t(DW_OP_reg7 RSP)\n                DW_AT_name\t(\"sqlite3VdbeExec\")\n\n\
0x0000b098:       DW_TAG_variable\n                    DW_AT_location\t(indexed (0x1807) loclist = 0x0004e34a: \n\
                       [0x00000000000381dc, 0x00000000000381fe): DW_OP_breg0 RAX+0, DW_OP_convert (0x0000002c) \"DW_ATE_unsigned_8\", DW_OP_lit1, DW_OP_minus, DW_OP_stack_value\n\
                       [0x000000000003cd8e, 0x000000000003ce66): DW_OP_entry_value(DW_OP_reg5 RDI), DW_OP_stack_value\n\
                       [0x000000000003ce79, 0x000000000003ce86): DW_OP_entry_value(DW_OP_reg4 RSI))\n\
                    DW_AT_name\t(\"i\")\n";

    /// Every part of the output is read, by hand: names, frame base, the
    /// three entries with their ranges, and the attribute's closing
    /// parenthesis dropped but not the operation's own.
    #[test]
    fn reads_show_parents_output() {
        let r = parse(OUTPUT, 0xb098);
        assert_eq!(r.format, "elf64-x86-64");
        assert_eq!(r.producer.as_deref(), Some("Debian clang version 19.1.7 (3~deb12u1)"));
        assert_eq!(r.name.as_deref(), Some("i"));
        assert_eq!(r.frame_base.as_deref(), Some("DW_OP_reg7 RSP"));
        assert!(!r.debug_loc);
        let l = &r.attributes["DW_AT_location"];
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].0, Some((0x381dc, 0x381fe)));
        assert_eq!(l[1].1, "DW_OP_entry_value(DW_OP_reg5 RDI), DW_OP_stack_value");
        assert_eq!(l[2].1, "DW_OP_entry_value(DW_OP_reg4 RSI)");
        let t = annotated_types(&l[0].1);
        assert_eq!(t.len(), 1);
        assert_eq!(t[&0x2c], BaseType::ate(gimli::DW_ATE_unsigned.0, 8, false));
    }

    /// An exprloc attribute is one expression with no range.
    #[test]
    fn reads_an_exprloc() {
        let out = "f:\tfile format elf64-littleaarch64\n0x0000002a: DW_TAG_variable\n  DW_AT_location\t(DW_OP_fbreg -20)\n  DW_AT_name\t(\"x\")\n";
        let r = parse(out, 0x2a);
        assert_eq!(r.attributes["DW_AT_location"], vec![(None, "DW_OP_fbreg -20".to_string())]);
        assert_eq!(r.name.as_deref(), Some("x"));
    }
}
