//! The oracle: IGC's own decoder, `GenX_IR -decodedbg FILE -platform P`
//! (libigc-tools), run contained, its text parsed into a [`Dump`], and
//! compared field by field with the [`Dump`] our decoding renders.
//! GenX_IR's printer is `DbgDecoder::ddDbg` in IGC's `visa/DebugInfo.cpp`;
//! the text shapes below are those Debian's 1.0.12504 prints.

use super::model::{Blob, Interval, Location, RegFile, SaveAtIp, SaveDst};
use super::platform::Platform;
use crate::consumer::external::process::{self, RunBudget, RunFault, TempDir};
use std::path::Path;

/// A decoding in the shape GenX_IR prints it: numbers as numbers, every
/// location and save entry as the text GenX_IR writes for it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Dump {
    /// The magic number.
    pub magic: u32,
    /// The object count the header gives.
    pub object_count: u32,
    /// The objects printed.
    pub objects: Vec<DumpObject>,
    /// Whether the end marker was printed (GenX_IR stops early, silently,
    /// when a read fails).
    pub complete: bool,
}

/// One object as printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DumpObject {
    /// Name.
    pub name: String,
    /// Relocation offset (0: "(kernel)").
    pub reloc: u32,
    /// vISA byte offset map.
    pub offset_map: Vec<(u32, u32)>,
    /// vISA index map.
    pub index_map: Vec<(u32, u32)>,
    /// Variables: name and intervals.
    pub variables: Vec<(String, Vec<DumpInterval>)>,
    /// Subroutines.
    pub subroutines: Vec<DumpSub>,
    /// Frame size in bytes.
    pub frame_size: u32,
    /// BE_FP intervals when printed.
    pub befp: Option<Vec<DumpInterval>>,
    /// Caller BE_FP intervals when printed.
    pub caller_befp: Option<Vec<DumpInterval>>,
    /// Return address intervals when printed.
    pub ret_addr: Option<Vec<DumpInterval>>,
    /// Callee-save entries: Gen IP and one text per saved range.
    pub callee_save: Vec<(u32, Vec<String>)>,
    /// Caller-save entries.
    pub caller_save: Vec<(u32, Vec<String>)>,
}

/// A subroutine as printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DumpSub {
    /// Name.
    pub name: String,
    /// First vISA index.
    pub start: u32,
    /// Last vISA index.
    pub end: u32,
    /// Return value intervals.
    pub retval: Vec<DumpInterval>,
}

/// An interval as printed: bounds and the location text.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DumpInterval {
    /// Start.
    pub start: u32,
    /// End.
    pub end: u32,
    /// `r5.8:ub`, `f0.0`, `a0.0`, `Spilled (offset = 12 bytes) (off be_fp)`.
    pub location: String,
}

/// Why GenX_IR gave no dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenxError {
    /// GenX_IR is not on PATH.
    Missing,
    /// The run failed (timeout, output cap, signal, spawn).
    Run(String),
    /// It exited non-zero; its output's last line.
    Exit(i32, String),
}

impl std::fmt::Display for GenxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenxError::Missing => f.write_str("GenX_IR is not on PATH (install libigc-tools)"),
            GenxError::Run(s) => write!(f, "GenX_IR: {s}"),
            GenxError::Exit(c, s) => write!(f, "GenX_IR exited {c}: {s}"),
        }
    }
}

/// Bytes of address space GenX_IR may map (`ulimit -v`, in KiB).
const ADDRESS_SPACE_KIB: u64 = 8_000_000;

/// Runs `GenX_IR -decodedbg file -platform P` under `budget` and an
/// address-space limit, and parses what it prints.
///
/// Errors: see [`GenxError`].
pub fn run(file: &Path, platform: Platform, budget: RunBudget) -> Result<Dump, GenxError> {
    let program = process::find_program(&["GenX_IR"]).ok_or(GenxError::Missing)?;
    let file = std::fs::canonicalize(file).map_err(|e| GenxError::Run(format!("{}: {e}", file.display())))?;
    let dir = TempDir::new().map_err(|e| GenxError::Run(e.to_string()))?;
    let script = format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\"");
    let args: Vec<&std::ffi::OsStr> = vec![
        "-c".as_ref(),
        script.as_ref(),
        program.as_os_str(),
        "-decodedbg".as_ref(),
        file.as_os_str(),
        "-platform".as_ref(),
        platform.genx_name().as_ref(),
    ];
    let out = process::run(Path::new("/bin/sh"), &args, dir.path(), budget).map_err(|e| match e {
        RunFault::Spawn(s) => GenxError::Run(s),
        other => GenxError::Run(format!("{other:?}")),
    })?;
    if out.code != 0 {
        let last = out.text.lines().last().unwrap_or("").to_string();
        return Err(GenxError::Exit(out.code, last));
    }
    Ok(parse(&out.text))
}

/// The installed `libigc-tools` package version (GenX_IR prints none of
/// its own), from `dpkg-query`, run contained; `None` where that fails.
pub fn version() -> Option<String> {
    let dpkg = process::find_program(&["dpkg-query"])?;
    let dir = TempDir::new().ok()?;
    let args: Vec<&std::ffi::OsStr> = vec!["-W".as_ref(), "-f=${Version}".as_ref(), "libigc-tools".as_ref()];
    let budget = RunBudget { time: std::time::Duration::from_secs(10), output_bytes: 1 << 16 };
    let out = process::run(&dpkg, &args, dir.path(), budget).ok()?;
    let v = out.text.trim();
    (out.code == 0 && !v.is_empty()).then(|| v.to_string())
}

#[derive(Clone, Copy, PartialEq)]
enum Part {
    None,
    OffsetMap,
    IndexMap,
    Vars,
    Retval,
    Befp,
    CallerBefp,
    RetAddr,
    Callee,
    Caller,
}

/// Parses GenX_IR's text. Lines it does not know are ignored; a dump cut
/// short has `complete == false`.
pub fn parse(text: &str) -> Dump {
    let mut d = Dump::default();
    let mut part = Part::None;
    for raw in text.lines() {
        let line = raw.trim_end();
        let t = line.trim_start();
        if t.is_empty() || t == "Live intervals:" {
            continue;
        }
        if let Some(v) = t.strip_prefix("Magic: 0x") {
            d.magic = u32::from_str_radix(v, 16).unwrap_or(0);
        } else if let Some(v) = t.strip_prefix("Number of compiled objects: ") {
            d.object_count = v.parse().unwrap_or(0);
        } else if t.starts_with("Current compiled object index: ") {
            d.objects.push(DumpObject::default());
            part = Part::None;
        } else if t == "=== End of Debug Dump ===" {
            d.complete = true;
        } else if let Some(o) = d.objects.last_mut() {
            part = object_line(o, part, line, t);
        }
    }
    d
}

/// One line inside an object; returns the part the next line is in.
fn object_line(o: &mut DumpObject, part: Part, line: &str, t: &str) -> Part {
    let num = |s: &str| s.trim().parse::<u32>().unwrap_or(0);
    if let Some(v) = t.strip_prefix("Kernel name: ") {
        o.name = v.to_string();
    } else if t == "Kernel name:" {
        o.name.clear();
    } else if t == "(kernel)" {
        o.reloc = 0;
    } else if let Some(v) = t.strip_prefix("(function binary @ gen offset ") {
        o.reloc = num(v.trim_end_matches(" bytes)"));
    } else if t == "CISA byte offset -> Gen byte offset mapping" {
        return Part::OffsetMap;
    } else if t == "CISA index -> Gen byte offset mapping" {
        return Part::IndexMap;
    } else if t == "Virtual Register -> Physical Register mapping" {
        return Part::Vars;
    } else if t.starts_with("Number of subroutines: ") {
        return Part::None;
    } else if let Some(v) = t.strip_prefix("Subroutine name: ") {
        o.subroutines.push(DumpSub { name: v.to_string(), ..DumpSub::default() });
    } else if t == "Subroutine name:" {
        o.subroutines.push(DumpSub::default());
    } else if let Some(v) = t.strip_prefix("Start VISA: ") {
        if let (Some(s), Some((_, e))) = (o.subroutines.last_mut(), v.split_once(", end VISA: ")) {
            s.start = num(v.split(',').next().unwrap_or(""));
            s.end = num(e);
        }
    } else if t == "Retval:" {
        return Part::Retval;
    } else if let Some(v) = t.strip_prefix("Frame size: ") {
        o.frame_size = num(v.trim_end_matches(" bytes"));
        return Part::None;
    } else if t == "BE_FP:" {
        o.befp = Some(Vec::new());
        return Part::Befp;
    } else if t == "Caller BE_FP saved at:" {
        o.caller_befp = Some(Vec::new());
        return Part::CallerBefp;
    } else if t == "Return addr saved at:" {
        o.ret_addr = Some(Vec::new());
        return Part::RetAddr;
    } else if matches!(t, "BE_FP not found" | "Caller BE_FP not saved" | "Return addr not stored") {
        return Part::None;
    } else if t == "Callee save:" {
        return Part::Callee;
    } else if t == "Caller save:" {
        return Part::Caller;
    } else if let Some(iv) = interval_line(t) {
        let list = match part {
            Part::Vars => o.variables.last_mut().map(|v| &mut v.1),
            Part::Retval => o.subroutines.last_mut().map(|s| &mut s.retval),
            Part::Befp => o.befp.as_mut(),
            Part::CallerBefp => o.caller_befp.as_mut(),
            Part::RetAddr => o.ret_addr.as_mut(),
            _ => None,
        };
        if let Some(l) = list {
            l.push(iv);
        }
    } else if let Some(v) = t.strip_prefix("Gen ISA offset: ") {
        let e = (num(v), Vec::new());
        match part {
            Part::Callee => o.callee_save.push(e),
            Part::Caller => o.caller_save.push(e),
            _ => {}
        }
    } else if line.starts_with('\t') && matches!(part, Part::Callee | Part::Caller) {
        let list = if part == Part::Callee { &mut o.callee_save } else { &mut o.caller_save };
        if let Some(e) = list.last_mut() {
            e.1.push(t.to_string());
        }
    } else if matches!(part, Part::OffsetMap | Part::IndexMap) {
        if let Some((a, b)) = t.split_once('\t') {
            let map = if part == Part::OffsetMap { &mut o.offset_map } else { &mut o.index_map };
            map.push((num(a), num(b)));
        }
    } else if part == Part::Vars {
        if let Some(name) = line.strip_suffix("\tLive intervals:") {
            o.variables.push((name.to_string(), Vec::new()));
        }
    }
    part
}

/// `(s, e) @ \tLOCATION`.
fn interval_line(t: &str) -> Option<DumpInterval> {
    let rest = t.strip_prefix('(')?;
    let (bounds, loc) = rest.split_once(") @ ")?;
    let (s, e) = bounds.split_once(", ")?;
    Some(DumpInterval { start: s.parse().ok()?, end: e.parse().ok()?, location: loc.trim().to_string() })
}

/// The text GenX_IR prints for a location.
fn location_text(l: &Location) -> String {
    match *l {
        Location::Register { file: RegFile::Grf, reg, sub } => format!("r{reg}.{sub}:ub"),
        Location::Register { file: RegFile::Flag, reg, sub } => format!("f{reg}.{sub}"),
        Location::Register { file: RegFile::Address, reg, sub } => format!("a{reg}.{sub}"),
        Location::Memory { absolute, offset, .. } => {
            format!("Spilled (offset = {offset} bytes) {}", if absolute { "(absolute offset)" } else { "(off be_fp)" })
        }
    }
}

fn intervals(v: &[Interval]) -> Vec<DumpInterval> {
    v.iter().map(|i| DumpInterval { start: i.start, end: i.end, location: location_text(&i.location) }).collect()
}

fn saves(v: &[SaveAtIp], p: Platform) -> Vec<(u32, Vec<String>)> {
    let w = p.grf_bytes();
    v.iter()
        .map(|ip| {
            let e = ip
                .entries
                .iter()
                .map(|e| {
                    let src = u32::from(e.src_reg_off);
                    let dst = match e.dst {
                        SaveDst::Register { reg, sub } => format!("r{reg}.{sub}:ub"),
                        SaveDst::Memory { absolute: true, offset, .. } => format!("{offset} bytes"),
                        SaveDst::Memory { raw, .. } => format!("BE_FP + {raw} bytes"),
                    };
                    format!("r{}.{}:ub ({} bytes) -> {dst}", src / w, src % w, e.num_bytes)
                })
                .collect();
            (ip.gen_ip, e)
        })
        .collect()
}

/// Our decoding rendered as GenX_IR would print it.
pub fn render(b: &Blob, p: Platform) -> Dump {
    let objects = b
        .objects
        .iter()
        .map(|o| DumpObject {
            name: o.name.clone(),
            reloc: o.reloc_offset,
            offset_map: o.offset_map.iter().map(|e| (e.visa, e.gen)).collect(),
            index_map: o.index_map.iter().map(|e| (e.visa, e.gen)).collect(),
            variables: o.variables.iter().map(|v| (v.name.clone(), intervals(&v.intervals))).collect(),
            subroutines: o
                .subroutines
                .iter()
                .map(|s| DumpSub { name: s.name.clone(), start: s.start, end: s.end, retval: intervals(&s.retval) })
                .collect(),
            frame_size: u32::from(o.frame.size),
            befp: o.frame.befp.as_deref().map(intervals),
            caller_befp: o.frame.caller_befp.as_deref().map(intervals),
            ret_addr: o.frame.ret_addr.as_deref().map(intervals),
            callee_save: saves(&o.frame.callee_save, p),
            caller_save: saves(&o.frame.caller_save, p),
        })
        .collect();
    Dump { magic: super::decode::MAGIC, object_count: b.objects.len() as u32, objects, complete: true }
}

/// One field on which the two dumps differ.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Disagreement {
    /// Where: `object[1].variables[3].intervals[0]`.
    pub field: String,
    /// Our value.
    pub ours: String,
    /// GenX_IR's.
    pub genx: String,
}

/// The most disagreements [`compare`] lists.
pub const MAX_DISAGREEMENTS: usize = 1000;

/// Compares two dumps field by field (ours first); at most
/// [`MAX_DISAGREEMENTS`] are listed.
pub fn compare(ours: &Dump, genx: &Dump) -> Vec<Disagreement> {
    let mut out = Vec::new();
    let mut put = |field: String, a: String, b: String| {
        if a != b && out.len() < MAX_DISAGREEMENTS {
            out.push(Disagreement { field, ours: a, genx: b });
        }
    };
    put("magic".into(), format!("{:#x}", ours.magic), format!("{:#x}", genx.magic));
    put("object_count".into(), ours.object_count.to_string(), genx.object_count.to_string());
    put("complete".into(), ours.complete.to_string(), genx.complete.to_string());
    put("objects.len".into(), ours.objects.len().to_string(), genx.objects.len().to_string());
    let s = |x: &dyn std::fmt::Debug| format!("{x:?}");
    for (i, (a, b)) in ours.objects.iter().zip(&genx.objects).enumerate() {
        let f = |n: &str| format!("object[{i}].{n}");
        put(f("name"), a.name.clone(), b.name.clone());
        put(f("reloc"), a.reloc.to_string(), b.reloc.to_string());
        list(&mut put, &f("offset_map"), &a.offset_map, &b.offset_map, &s);
        list(&mut put, &f("index_map"), &a.index_map, &b.index_map, &s);
        put(f("variables.len"), a.variables.len().to_string(), b.variables.len().to_string());
        for (j, (va, vb)) in a.variables.iter().zip(&b.variables).enumerate() {
            put(f(&format!("variables[{j}].name")), va.0.clone(), vb.0.clone());
            list(&mut put, &f(&format!("variables[{j}].intervals")), &va.1, &vb.1, &s);
        }
        put(f("subroutines.len"), a.subroutines.len().to_string(), b.subroutines.len().to_string());
        for (j, (sa, sb)) in a.subroutines.iter().zip(&b.subroutines).enumerate() {
            put(f(&format!("subroutines[{j}].name")), sa.name.clone(), sb.name.clone());
            put(f(&format!("subroutines[{j}].start")), sa.start.to_string(), sb.start.to_string());
            put(f(&format!("subroutines[{j}].end")), sa.end.to_string(), sb.end.to_string());
            list(&mut put, &f(&format!("subroutines[{j}].retval")), &sa.retval, &sb.retval, &s);
        }
        put(f("frame_size"), a.frame_size.to_string(), b.frame_size.to_string());
        for (n, x, y) in [
            ("befp", &a.befp, &b.befp),
            ("caller_befp", &a.caller_befp, &b.caller_befp),
            ("ret_addr", &a.ret_addr, &b.ret_addr),
        ] {
            put(f(&format!("{n}.valid")), x.is_some().to_string(), y.is_some().to_string());
            if let (Some(x), Some(y)) = (x, y) {
                list(&mut put, &f(n), x, y, &s);
            }
        }
        list(&mut put, &f("callee_save"), &a.callee_save, &b.callee_save, &s);
        list(&mut put, &f("caller_save"), &a.caller_save, &b.caller_save, &s);
    }
    out
}

/// Compares two lists element by element, and their lengths.
fn list<T>(
    put: &mut impl FnMut(String, String, String),
    field: &str,
    a: &[T],
    b: &[T],
    s: &dyn Fn(&dyn std::fmt::Debug) -> String,
) where
    T: std::fmt::Debug,
{
    put(format!("{field}.len"), a.len().to_string(), b.len().to_string());
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        put(format!("{field}[{k}]"), s(x), s(y));
    }
}

/// How GenX_IR behaves on a blob that breaks a rule: class IDs
/// (docs/consumers.md, "GenX_IR"). It exits 0 in every class.
pub mod class {
    /// An unknown virtual or physical type code: it prints a diagnostic in
    /// the middle of the interval's line and goes on reading.
    pub const UNKNOWN_TYPE_CONTINUES: &str = "genx.unknown-type-continues";
    /// A blob that ends early (or a count or name longer than the rest):
    /// the dump stops where a read fails, with no end marker and no error.
    pub const TRUNCATED_SILENT: &str = "genx.truncated-silent";
    /// A blob cut short within its last fields: the dump is complete, the
    /// missing fields printed as zero (it reads past the end of what the
    /// file holds without noticing).
    pub const READS_PAST_END: &str = "genx.reads-past-end";
    /// A name with a zero byte: printed up to the zero byte, no complaint.
    pub const NAME_CUT_AT_NUL: &str = "genx.name-cut-at-nul";
    /// Bytes after the last object: not read, not reported.
    pub const TRAILING_IGNORED: &str = "genx.trailing-ignored";
    /// A wrong magic number: reported in the text, the dump stops, and the
    /// exit status is still 0.
    pub const MAGIC_REPORTED_EXIT_0: &str = "genx.magic-reported-exit-0";
    /// A blob that reads completely but breaks a rule of the catalogue
    /// that needs more than reading (an object count of zero, a valid flag
    /// other than 0/1, interval and subroutine bounds, map order, register
    /// numbers, save entries against the frame): printed as read, with no
    /// diagnostic. GenX_IR is a dumper, not a validator.
    pub const NO_VALIDATION: &str = "genx.no-validation";
}

/// Rules a blob can break while still reading completely (the ones
/// [`super::validate::validate`] checks, and the decoder's value checks).
const VALUE_RULES: [&str; 9] = [
    "visa.header.object-count",
    "visa.frame.valid-flag",
    "visa.interval.order",
    "visa.interval.visa-index",
    "visa.map.gen-order",
    "visa.register.grf",
    "visa.subroutine.range",
    "visa.save.fits-frame",
    "visa.name.length",
];

/// The class of GenX_IR's behaviour on a blob our decoder or validation
/// refused with `fault`, given the dump it printed; `None` when it is none
/// of [`class`]'s.
pub fn classify(fault: &super::read::Fault, dump: &Dump) -> Option<&'static str> {
    let rule = fault.rule.as_str();
    match rule {
        "visa.interval.type-codes" => Some(class::UNKNOWN_TYPE_CONTINUES),
        "visa.truncated" | "visa.name.length" | "visa.header.object-count" if !dump.complete => {
            Some(class::TRUNCATED_SILENT)
        }
        "visa.truncated" => Some(class::READS_PAST_END),
        "visa.name.length" => Some(class::NAME_CUT_AT_NUL),
        "visa.trailing-bytes" if dump.complete => Some(class::TRAILING_IGNORED),
        "visa.header.magic" if !dump.complete && dump.objects.is_empty() => Some(class::MAGIC_REPORTED_EXIT_0),
        _ if dump.complete && VALUE_RULES.contains(&rule) => Some(class::NO_VALIDATION),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_part_of_a_dump() {
        let text = "=== Start of Debug Dump ===\nMagic: 0xdeadd010\nNumber of compiled objects: 1\n\n\
Current compiled object index: 0\nKernel name: k\n(function binary @ gen offset 64 bytes)\n\
CISA byte offset -> Gen byte offset mapping\n\nCISA index -> Gen byte offset mapping\n3\t16\n\n\
Virtual Register -> Physical Register mapping\nV1\tLive intervals: \n(0, 5) @ \tr5.8:ub\n\nP2\tLive intervals: \n\n\n\
Number of subroutines: 1\nSubroutine name: s\nStart VISA: 1, end VISA: 4\nRetval: \n\tLive intervals: \n(1, 4) @ \tf0.0\n\n\n\
Frame size: 64 bytes\nBE_FP not found\nCaller BE_FP saved at:\n\tLive intervals: \n(64, 96) @ \tSpilled (offset = 12 bytes) (off be_fp)\n\n\n\
Return addr not stored\nCallee save:\nGen ISA offset: 8\n\tr4.0:ub (32 bytes) -> BE_FP + 16 bytes\n\nCaller save:\n\n=== End of Debug Dump ===\n";
        let d = parse(text);
        assert!(d.complete);
        assert_eq!((d.magic, d.object_count), (0xdeadd010, 1));
        let o = &d.objects[0];
        assert_eq!((o.name.as_str(), o.reloc, o.index_map.as_slice()), ("k", 64, &[(3, 16)][..]));
        assert_eq!(o.variables.len(), 2);
        assert_eq!(o.variables[0].1, vec![DumpInterval { start: 0, end: 5, location: "r5.8:ub".into() }]);
        assert!(o.variables[1].1.is_empty());
        assert_eq!(
            (o.subroutines[0].start, o.subroutines[0].end, o.subroutines[0].retval[0].location.as_str()),
            (1, 4, "f0.0")
        );
        assert_eq!(o.frame_size, 64);
        assert_eq!(o.befp, None);
        assert_eq!(o.caller_befp.as_ref().unwrap()[0].location, "Spilled (offset = 12 bytes) (off be_fp)");
        assert_eq!(o.ret_addr, None);
        assert_eq!(o.callee_save, vec![(8, vec!["r4.0:ub (32 bytes) -> BE_FP + 16 bytes".to_string()])]);
        assert!(o.caller_save.is_empty());
    }
}
