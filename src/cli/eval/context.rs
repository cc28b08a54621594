//! `eval`'s context as a case file's `context:` mapping: from `--context
//! FILE.yaml` and the options, loaded through the case loader.

use super::args::{EvalArgs, MAX_CONTEXT_FILE, MAX_MEM_BYTES};
use dwarfcheck::case::yaml::{self, CaseFileError};
use dwarfcheck::case::{Case, ExprCase};
use dwarfcheck_core::encoding::hex::parse_hex;
use std::io::Read as _;
use yaml_serde::{Mapping, Value as Yaml};

/// The name of the case `eval` evaluates and `--emit-case` writes.
pub const CASE_NAME: &str = "from-eval";

/// Lines of [`case_file`]'s text above the `context:` mapping's first line,
/// and the mapping's indentation in columns: where a `--context` file's
/// lines land in the text the loader reads.
const HEADER_LINES: usize = 6;
const INDENT: usize = 6;

/// Whether every white-space separated word of `s` is a pair of hex
/// digits (and there is at least one): the expression is given as bytes.
pub fn is_hex_pairs(s: &str) -> bool {
    let mut words = s.split_whitespace().peekable();
    words.peek().is_some() && words.all(|w| w.len() == 2 && w.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A scalar option's text as YAML reads it in a case file (`0x10` and
/// `-8` are integers, other text a string).
fn scalar(text: &str) -> Yaml {
    match yaml_serde::from_str::<Yaml>(text) {
        Ok(v @ (Yaml::Number(_) | Yaml::String(_) | Yaml::Bool(_))) => v,
        _ => Yaml::String(text.to_string()),
    }
}

/// The `context:` mapping: `--context`'s, with the options on top.
///
/// Errors: an unreadable or oversized file, a file that is no valid
/// `context:` mapping (located in the file), a malformed option.
pub fn mapping(a: &EvalArgs, target: &str) -> Result<Mapping, Vec<String>> {
    let mut m = match &a.context {
        Some(path) => file_mapping(path, target, a.vendor.as_deref())?,
        None => Mapping::new(),
    };
    let one = |s: String| vec![s];
    let mut set = |k: &str, v: Yaml| {
        m.insert(k.into(), v);
    };
    if let Some(r) = &a.result {
        set("result", Yaml::String(r.clone()));
    }
    for (key, v) in [("pc", &a.pc), ("cfa", &a.cfa), ("tls_base", &a.tls)] {
        if let Some(v) = v {
            set(key, scalar(v));
        }
    }
    if let (Some(s), Some(_)) = (a.aspace, &a.cfa) {
        set("cfa_aspace", s.into());
    }
    for (key, v) in [("thread", a.thread), ("synthetic", a.synthetic)] {
        if let Some(v) = v {
            set(key, v.into());
        }
    }
    if let Some(l) = a.lane {
        set("lane", u64::from(l).into());
    }
    if let Some(o) = &a.object {
        let entry = match scalar(o) {
            n @ Yaml::Number(_) => {
                let mut e = Mapping::new();
                e.insert("memory".into(), n);
                Yaml::Mapping(e)
            }
            _ => yaml_serde::from_str(o).map_err(|e| one(format!("--object {o}: not an entry: {e}")))?,
        };
        set("object", entry);
    }
    if let Some(fb) = &a.frame_base {
        m.remove("frame_base");
        m.remove("frame_base_bytes");
        let key = if is_hex_pairs(fb) { "frame_base_bytes" } else { "frame_base" };
        m.insert(key.into(), Yaml::String(fb.clone()));
    }
    if !a.regs.is_empty() {
        let mut regs = match m.remove("registers") {
            Some(Yaml::Mapping(r)) => r,
            _ => Mapping::new(),
        };
        for r in &a.regs {
            let (name, val) = r.split_once('=').ok_or_else(|| one(format!("--reg {r}: expected NAME=VALUE")))?;
            regs.insert(scalar(name), scalar(val));
        }
        m.insert("registers".into(), Yaml::Mapping(regs));
    }
    if !a.mem.is_empty() {
        let mut segs = match m.remove("memory") {
            Some(Yaml::Sequence(s)) => s,
            _ => Vec::new(),
        };
        let mut total = 0usize;
        for s in &a.mem {
            let (addr, hex) = s.split_once('=').ok_or_else(|| one(format!("--mem {s}: expected ADDR=HEX")))?;
            let n = parse_hex(hex).map_err(|e| one(format!("--mem {s}: {e}")))?.len();
            total = total.saturating_add(n);
            if total > MAX_MEM_BYTES {
                return Err(one(format!("--mem: more than {MAX_MEM_BYTES} bytes in all (the limit of eval)")));
            }
            let mut seg = Mapping::new();
            seg.insert("aspace".into(), a.aspace.unwrap_or(0).into());
            seg.insert("at".into(), scalar(addr));
            seg.insert("bytes".into(), Yaml::String(hex.to_string()));
            segs.push(Yaml::Mapping(seg));
        }
        m.insert("memory".into(), Yaml::Sequence(segs));
    }
    Ok(m)
}

/// The mapping a `--context` file holds, checked by the case loader with
/// errors located in the file itself.
fn file_mapping(path: &std::path::Path, target: &str, vendor: Option<&str>) -> Result<Mapping, Vec<String>> {
    let shown = path.display().to_string();
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CONTEXT_FILE + 1).read_to_string(&mut text))
        .map_err(|e| vec![format!("--context {shown}: cannot read: {e}")])?;
    if text.len() as u64 > MAX_CONTEXT_FILE {
        return Err(vec![format!("--context {shown}: larger than {MAX_CONTEXT_FILE} bytes (the limit of eval)")]);
    }
    // Nothing but comments: an empty mapping (read as text: the loader's
    // limits on nesting and aliases come before any YAML parsing).
    if text.lines().map(str::trim).all(|l| l.is_empty() || l.starts_with('#') || l == "---") {
        return Ok(Mapping::new());
    }
    let indented: String = text.lines().map(|l| format!("{:INDENT$}{l}\n", "")).collect();
    let whole = format!("{}{indented}{}", header(target, vendor, "[expr.eval.runs-to-end]"), tail("\"\""));
    let relocate = |e: &CaseFileError| {
        let message = own_terms(&e.message);
        if e.line > HEADER_LINES && e.line <= HEADER_LINES + text.lines().count() {
            format!("{shown}:{}:{}: {message}", e.line - HEADER_LINES, e.column.saturating_sub(INDENT).max(1))
        } else {
            format!("{shown}: {message}")
        }
    };
    yaml::load_str(&shown, &whole).map_err(|errs| errs.iter().map(relocate).collect::<Vec<_>>())?;
    match yaml_serde::from_str::<Yaml>(&text) {
        Ok(Yaml::Mapping(m)) => Ok(m),
        _ => Err(vec![format!("{shown}: expected a `context:` mapping (docs/case-format.md)")]),
    }
}

/// The case file's lines down to `context:` (exactly [`HEADER_LINES`]).
fn header(target: &str, vendor: Option<&str>, rules: &str) -> String {
    let vendor = vendor.map(|v| format!("vendor: {v}")).unwrap_or_else(|| "# vendor: the target's".into());
    format!("target: {target}\n{vendor}\ncases:\n  - name: {CASE_NAME}\n    rules: {rules}\n    context:\n")
}

fn tail(expr_bytes: &str) -> String {
    format!("    expr_bytes: {expr_bytes}\n")
}

/// A case file of one expression case named [`CASE_NAME`]: `context` as
/// the `context:` mapping, `expr` the `expr:`/`expr_bytes:` line (key and
/// value), `rule` its only rule, and `expect` (flow YAML) if given.
pub fn case_file(
    target: &str,
    vendor: Option<&str>,
    context: &Mapping,
    rule: &str,
    expr: &str,
    expect: Option<&str>,
) -> String {
    let body = if context.is_empty() {
        format!("{:INDENT$}{{}}\n", "")
    } else {
        let text = yaml_serde::to_string(&Yaml::Mapping(context.clone())).unwrap_or_default();
        text.lines().map(|l| format!("{:INDENT$}{l}\n", "")).collect()
    };
    let mut s = format!("{}{body}    {expr}\n", header(target, vendor, &format!("[{rule}]")));
    if let Some(e) = expect {
        s.push_str(&format!("    expect: {e}\n"));
    }
    s
}

/// The case the context gives, with no expression yet.
///
/// Errors: the loader's messages (the options' values are checked there).
pub fn load(target: &str, vendor: Option<&str>, context: &Mapping) -> Result<ExprCase, Vec<String>> {
    let text = case_file(target, vendor, context, "expr.eval.runs-to-end", "expr_bytes: \"\"", None);
    let cases = yaml::load_str("the command line", &text)
        .map_err(|errs| errs.iter().map(|e| format!("context: {}", own_terms(&e.message))).collect::<Vec<_>>())?;
    match cases.into_iter().next() {
        Some(Case::Expr(c)) => Ok(c),
        _ => Err(vec!["context: no expression case".into()]),
    }
}

/// A loader message about the one case `eval` builds, without the path to
/// it (`cases[0].context.pc: ...` reads `pc: ...`).
fn own_terms(message: &str) -> String {
    message.replace("cases[0].context.", "")
}
