//! GDB and LLDB on Tru64 lowerings (issue 18 item 4): a procedure's x86-64 stand-in ([`crate::tru64::standin`]) loaded with a core stopped at each chosen pc; the variables' values and the innermost block, judged against the direct reading.
//!
//! A job is one (procedure, pc). The probes (`probe_gdb.py`,
//! `probe_lldb.py`, beside this file) read every variable of the lowering in frame 0
//! and the frame's innermost block; [`judge`] compares each answer with
//! [`standin::expected_variables`] and [`standin::expected_blocks`], fact
//! by fact, and classes each disagreement ([`class`]). Runs go through
//! [`Batches`]: contained, timed, re-run job by job after a crash.

use super::lower::variable_name;
use super::standin::{self, Program, Shown, Value};
use crate::consumer::debugger::{gdb, lldb, Batches, Kind, Limits};
use crate::consumer::health::HealthReport;
use crate::consumer::ConsumerError;
use rayon::prelude::*;
use std::path::Path;

/// The GDB probe (run after [`gdb::INFERIOR`], which gives each job a
/// fresh inferior).
const PROBE_GDB: &str = include_str!("probe_gdb.py");
/// The LLDB probe.
const PROBE_LLDB: &str = include_str!("probe_lldb.py");

/// What a debugger showed for one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarAnswer {
    /// A value and, in memory, its address.
    Value(Value),
    /// `<optimized out>` (GDB).
    OptimizedOut,
    /// An error, in the debugger's words.
    Error(String),
}

/// The innermost block a debugger found at the pc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockAnswer {
    /// The subprogram's own block.
    Subprogram,
    /// A lexical block with these byte ranges (GDB 13: its extent only).
    Lexical(Vec<(u64, u64)>),
    /// An error, in the debugger's words.
    Error(String),
}

/// One job's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// What frame 0 showed.
    Shown {
        /// Frame 0's pc.
        pc: u64,
        /// Each variable, in [`crate::tru64::lower::Lowered::lists`] order.
        vars: Vec<VarAnswer>,
        /// The innermost block.
        block: BlockAnswer,
    },
    /// The debuggee could not be loaded, or the run faulted (timeout,
    /// crash, output cap), in words.
    Fault(String),
    /// The job could not be prepared (the core not written), in words.
    NotRun(String),
}

/// One job: the stand-in of a procedure and a pc inside it.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// Names the job in logs (`file#case@pc`).
    pub label: &'a str,
    /// The stand-in.
    pub program: &'a Program,
    /// Where the core's thread stops (bytes).
    pub pc: u64,
}

/// GDB or LLDB over Tru64 jobs.
pub struct Tru64Debugger {
    runs: Batches,
}

impl Tru64Debugger {
    /// The debugger `kind` found on `PATH`.
    ///
    /// Errors: [`ConsumerError::NotInstalled`]; [`ConsumerError::Unknown`]
    /// for Delve, which is judged on expression cases only.
    pub fn find(kind: Kind, limits: Limits) -> Result<Self, ConsumerError> {
        if kind == Kind::Delve {
            return Err(ConsumerError::Unknown { name: "delve (Tru64 lowerings are asked of gdb and lldb)".into() });
        }
        Ok(Tru64Debugger { runs: Batches::find(kind, limits, kind.name())? })
    }

    /// The debugger and its executable.
    pub fn program(&self) -> (Kind, &Path) {
        self.runs.program()
    }

    /// Faults, whether and why it went down.
    pub fn health(&self) -> HealthReport {
        self.runs.health()
    }

    /// Asks every job, in batches of [`Limits::batch`] on rayon's pool;
    /// `None`: not asked (the debugger went down).
    pub fn ask(&self, jobs: &[Job<'_>]) -> Vec<Option<Answer>> {
        let chunks: Vec<&[Job<'_>]> = jobs.chunks(self.runs.limits().batch.max(1)).collect();
        chunks.par_iter().flat_map_iter(|c| self.batch(c)).collect()
    }

    fn batch(&self, jobs: &[Job<'_>]) -> Vec<Option<Answer>> {
        let probe = match self.program().0 {
            Kind::Lldb => format!("{}{PROBE_LLDB}", lldb::CORE_LOOP),
            _ => format!("{}{PROBE_GDB}", gdb::INFERIOR),
        };
        self.runs.run(
            jobs.len(),
            &|i| jobs[i].label.to_string(),
            &|i, dir| prepare(&jobs[i], i, dir),
            &probe,
            &answer,
            &Answer::Fault,
        )
    }
}

/// Writes job `i`'s executable and core into `dir` and describes it.
fn prepare(job: &Job<'_>, i: usize, dir: &Path) -> Result<serde_json::Value, Answer> {
    let core = job.program.core(job.pc).map_err(|e| Answer::NotRun(e.to_string()))?;
    let (exe_path, core_path) = (dir.join(format!("job{i}")), dir.join(format!("job{i}.core")));
    std::fs::write(&exe_path, &job.program.executable)
        .and_then(|_| std::fs::write(&core_path, core))
        .map_err(|e| Answer::NotRun(format!("writing the debuggee: {e}")))?;
    let variables: Vec<String> = (0..job.program.targets.len()).map(variable_name).collect();
    Ok(serde_json::json!({ "id": i, "executable": exe_path, "core": core_path, "variables": variables }))
}

/// One probe line as an answer.
fn answer(v: &serde_json::Value) -> Answer {
    let error = |v: &serde_json::Value| {
        v.get("error").and_then(|e| e.as_str()).map(|e| e.lines().next().unwrap_or("").to_string())
    };
    if let Some(e) = error(v) {
        return Answer::Fault(e);
    }
    let var = |x: &serde_json::Value| {
        if let Some(e) = error(x) {
            return VarAnswer::Error(e);
        }
        if x.get("optimized").and_then(|o| o.as_bool()) == Some(true) {
            return VarAnswer::OptimizedOut;
        }
        let mut bytes = [0u8; 8];
        let got: Vec<u64> = x
            .get("bytes")
            .and_then(|b| b.as_array())
            .map(|b| b.iter().filter_map(|n| n.as_u64()).collect())
            .unwrap_or_default();
        if got.len() != 8 {
            return VarAnswer::Error(format!("probe: {} bytes", got.len()));
        }
        for (b, g) in bytes.iter_mut().zip(got) {
            *b = g as u8;
        }
        VarAnswer::Value(Value { bytes, address: x.get("address").and_then(|a| a.as_u64()) })
    };
    let empty = Vec::new();
    let vars = v.get("vars").and_then(|x| x.as_array()).unwrap_or(&empty).iter().map(var).collect();
    let b = v.get("block").cloned().unwrap_or_default();
    let block = if let Some(e) = error(&b) {
        BlockAnswer::Error(e)
    } else if b.get("lexical").and_then(|l| l.as_bool()) == Some(true) {
        let ranges = b
            .get("ranges")
            .and_then(|r| r.as_array())
            .unwrap_or(&empty)
            .iter()
            .filter_map(|r| Some((r.get(0)?.as_u64()?, r.get(1)?.as_u64()?)))
            .collect();
        BlockAnswer::Lexical(ranges)
    } else {
        BlockAnswer::Subprogram
    };
    Answer::Shown { pc: v.get("pc").and_then(|p| p.as_u64()).unwrap_or(0), vars, block }
}

/// The failure classes of a debugger on a Tru64 lowering.
pub mod class {
    /// The debugger shows a value where no location applies (the
    /// variable is optimized out there).
    pub const VALUE_WHERE_NONE: &str = "tru64-dbg.value-where-none";
    /// The debugger shows the variable optimized out (or not available)
    /// where a location applies.
    pub const NONE_WHERE_VALUE: &str = "tru64-dbg.none-where-value";
    /// LLDB shows the variable unavailable where one location list entry
    /// holds the pc and another, overlapping it, begins after it and ends
    /// before the pc: its lookup (`RangeDataVector::FindEntryThatContains`,
    /// lldb/include/lldb/Utility/RangeMap.h) binary-searches the entries by
    /// begin address and checks only the last one beginning at or before
    /// the pc, which assumes entries do not overlap. DWARF 5 §2.6.2 lets
    /// them overlap (the object is then in every such place).
    pub const OVERLAP_MISSED: &str = "tru64-dbg.overlapping-entry-missed";
    /// The debugger shows a value none of the applicable locations holds.
    pub const WRONG_VALUE: &str = "tru64-dbg.wrong-value";
    /// The debugger gives the variable an address no applicable location
    /// has.
    pub const WRONG_ADDRESS: &str = "tru64-dbg.wrong-address";
    /// The debugger raises an error reading the variable.
    pub const VARIABLE_ERROR: &str = "tru64-dbg.variable-error";
    /// The pc lies in a scope's range, and the debugger's innermost block
    /// is the subprogram's.
    pub const BLOCK_MISSED: &str = "tru64-dbg.block-missed";
    /// The pc lies in no scope's range, and the debugger puts it in a
    /// lexical block.
    pub const BLOCK_EXTRA: &str = "tru64-dbg.block-extra";
    /// The debugger's block at the pc has other ranges than the scope
    /// holding it.
    pub const BLOCK_RANGES: &str = "tru64-dbg.block-ranges";
    /// The debugger raises an error finding the block.
    pub const BLOCK_ERROR: &str = "tru64-dbg.block-error";
    /// The debugger's frame 0 is not at the core's pc.
    pub const WRONG_PC: &str = "tru64-dbg.wrong-pc";
    /// The debugger could not load the stand-in or its run faulted.
    pub const FAULT: &str = "tru64-dbg.fault";

    /// Every class with a sentence for reports.
    pub const ALL: [(&str, &str); 12] = [
        (VALUE_WHERE_NONE, "shows a value where no location applies"),
        (NONE_WHERE_VALUE, "shows the variable optimized out or unavailable where a location applies"),
        (OVERLAP_MISSED, "misses a location list entry that an overlapping later entry hides from its lookup"),
        (WRONG_VALUE, "shows a value no applicable location holds"),
        (WRONG_ADDRESS, "gives the variable an address no applicable location has"),
        (VARIABLE_ERROR, "raises an error reading the variable"),
        (BLOCK_MISSED, "finds the subprogram's block where the pc lies in a scope's range"),
        (BLOCK_EXTRA, "finds a lexical block where the pc lies in no scope's range"),
        (BLOCK_RANGES, "finds a block with other ranges than the scope's"),
        (BLOCK_ERROR, "raises an error finding the block at the pc"),
        (WRONG_PC, "stops frame 0 elsewhere than the core's pc"),
        (FAULT, "cannot load the stand-in, or its run faults"),
    ];
}

/// One fact a debugger got wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The pc (bytes).
    pub pc: u64,
    /// What: `tru64_var_<i>`, `block` or `frame`.
    pub what: String,
    /// The variable's index in the lowering's lists, for a variable.
    pub variable: Option<usize>,
    /// Its class ([`class`]).
    pub class: &'static str,
    /// The direct reading's expectation, in words.
    pub expected: String,
    /// What the debugger showed, in words.
    pub shown: String,
}

/// The facts of one job judged: how many were compared, and those that
/// disagree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Judged {
    /// Facts compared (variables asked, and the block).
    pub facts: usize,
    /// Facts not asked ([`Shown::NotRepresentable`]).
    pub skipped: usize,
    /// The disagreements.
    pub findings: Vec<Finding>,
}

/// Whether a block answer shows `ranges` (ascending): the same ranges, or
/// their extent alone (lowest start, highest end), all GDB 13's Python
/// shows of a block.
fn same_ranges(shown: &[(u64, u64)], ranges: &[(u64, u64)]) -> bool {
    let mut s = shown.to_vec();
    s.sort_unstable();
    if s == ranges {
        return true;
    }
    let extent = ranges.first().map(|f| f.0).zip(ranges.iter().map(|r| r.1).max());
    s.len() == 1 && extent == Some(s[0])
}

fn words(v: &Value) -> String {
    let at = v.address.map_or("a register".to_string(), |a| format!("{a:#x}"));
    format!("{:#018x} in {at}", u64::from_le_bytes(v.bytes))
}

/// Judges `answer` at `pc` against what the direct reading gives there:
/// `vars` per variable, `blocks` the ranges of each scope holding `pc`.
pub fn judge(pc: u64, vars: &[Shown], blocks: &[Vec<(u64, u64)>], answer: &Answer) -> Judged {
    let mut out = Judged::default();
    let push = |out: &mut Judged, at: (String, Option<usize>), class: &'static str, expected: String, shown: String| {
        out.findings.push(Finding { pc, what: at.0, variable: at.1, class, expected, shown });
    };
    let (shown_pc, answers, block) = match answer {
        Answer::Shown { pc, vars, block } => (*pc, vars, block),
        Answer::Fault(e) | Answer::NotRun(e) => {
            out.facts = 1;
            push(&mut out, ("frame".into(), None), class::FAULT, "the stand-in loaded".into(), e.clone());
            return out;
        }
    };
    out.facts += 1;
    if shown_pc != pc {
        push(&mut out, ("frame".into(), None), class::WRONG_PC, format!("{pc:#x}"), format!("{shown_pc:#x}"));
    }
    for (i, want) in vars.iter().enumerate() {
        let what = variable_name(i);
        let got = answers.get(i).cloned().unwrap_or(VarAnswer::Error("not reported".into()));
        let expected = match want {
            Shown::NotRepresentable => {
                out.skipped += 1;
                continue;
            }
            Shown::OptimizedOut => "optimized out".to_string(),
            Shown::Values(v) => v.iter().map(words).collect::<Vec<_>>().join(" or "),
        };
        out.facts += 1;
        let class = match (want, &got) {
            (Shown::OptimizedOut, VarAnswer::OptimizedOut) => None,
            (Shown::OptimizedOut, VarAnswer::Error(e)) if unavailable(e) => None,
            (Shown::OptimizedOut, VarAnswer::Value(_)) => Some(class::VALUE_WHERE_NONE),
            (Shown::Values(_), VarAnswer::OptimizedOut) => Some(class::NONE_WHERE_VALUE),
            (Shown::Values(_), VarAnswer::Error(e)) if unavailable(e) => Some(class::NONE_WHERE_VALUE),
            (_, VarAnswer::Error(_)) => Some(class::VARIABLE_ERROR),
            (Shown::Values(v), VarAnswer::Value(g)) => {
                if v.contains(g) {
                    None
                } else if v.iter().any(|w| w.bytes == g.bytes) {
                    Some(class::WRONG_ADDRESS)
                } else {
                    Some(class::WRONG_VALUE)
                }
            }
            (Shown::NotRepresentable, _) => None,
        };
        if let Some(c) = class {
            let shown = match &got {
                VarAnswer::Value(v) => words(v),
                VarAnswer::OptimizedOut => "optimized out".into(),
                VarAnswer::Error(e) => format!("error: {e}"),
            };
            push(&mut out, (what, Some(i)), c, expected, shown);
        }
    }
    out.facts += 1;
    let expected = if blocks.is_empty() {
        "the subprogram's block".to_string()
    } else {
        blocks.iter().map(|r| ranges_words(r)).collect::<Vec<_>>().join(" or ")
    };
    let class = match block {
        BlockAnswer::Subprogram if blocks.is_empty() => None,
        BlockAnswer::Subprogram => Some(class::BLOCK_MISSED),
        BlockAnswer::Lexical(_) if blocks.is_empty() => Some(class::BLOCK_EXTRA),
        BlockAnswer::Lexical(r) => (!blocks.iter().any(|b| same_ranges(r, b))).then_some(class::BLOCK_RANGES),
        BlockAnswer::Error(_) => Some(class::BLOCK_ERROR),
    };
    if let Some(c) = class {
        let shown = match block {
            BlockAnswer::Subprogram => "the subprogram's block".into(),
            BlockAnswer::Lexical(r) => ranges_words(r),
            BlockAnswer::Error(e) => format!("error: {e}"),
        };
        push(&mut out, ("block".into(), None), c, expected, shown);
    }
    out
}

/// Whether a debugger's error says the variable has no location at the
/// pc (LLDB: "variable not available"; GDB never says it this way).
fn unavailable(e: &str) -> bool {
    e.contains("not available") || e.contains("optimized out")
}

fn ranges_words(r: &[(u64, u64)]) -> String {
    r.iter().map(|(a, b)| format!("[{a:#x}, {b:#x})")).collect::<Vec<_>>().join(" ")
}

/// [`judge`] for `job`, the expectation read from `view`; a variable
/// shown unavailable where its list has an entry for the pc is
/// [`class::OVERLAP_MISSED`] when [`overlap_hides`] says why.
pub fn judge_job(view: &super::resolve::View<'_>, job: &Job<'_>, answer: &Answer) -> Judged {
    let vars = standin::expected_variables(view, job.program, job.pc);
    let blocks = standin::expected_blocks(view, job.program, job.pc);
    let mut j = judge(job.pc, &vars, &blocks, answer);
    for f in &mut j.findings {
        let entries = f.variable.and_then(|i| job.program.lowered.lists.get(i)).map_or(&[][..], |l| &l.entries[..]);
        let spans: Vec<(u64, u64)> = entries.iter().map(|e| (e.begin, e.end)).collect();
        if f.class == class::NONE_WHERE_VALUE && overlap_hides(&spans, job.pc) {
            f.class = class::OVERLAP_MISSED;
        }
    }
    j
}

/// Whether a lookup that looks only at the last entry beginning at or
/// before `pc` (and the one after it) misses the entry holding `pc`:
/// some `[begin, end)` of `spans` holds `pc`, and another begins after it
/// but no later than `pc` and ends at or before `pc`.
pub fn overlap_hides(spans: &[(u64, u64)], pc: u64) -> bool {
    spans
        .iter()
        .filter(|(b, e)| (*b..*e).contains(&pc))
        .any(|(b, _)| spans.iter().any(|(b2, e2)| b2 > b && *b2 <= pc && *e2 <= pc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(n: u64, address: Option<u64>) -> Value {
        Value { bytes: n.to_le_bytes(), address }
    }

    fn shown(vars: Vec<VarAnswer>, block: BlockAnswer) -> Answer {
        Answer::Shown { pc: 0x1000, vars, block }
    }

    fn classes(j: &Judged) -> Vec<(&str, &'static str)> {
        j.findings.iter().map(|f| (f.what.as_str(), f.class)).collect()
    }

    /// Only a lookup that checks the last entry beginning at or before
    /// the pc misses: [4, 8) holds 7, and [5, 7) begins after it and ends
    /// at 7; at 6 that lookup finds [5, 7) itself; without overlap
    /// nothing hides.
    #[test]
    fn overlap_hides_only_behind_a_later_shorter_entry() {
        let spans = [(4, 8), (5, 7)];
        assert!(overlap_hides(&spans, 7));
        assert!(!overlap_hides(&spans, 6));
        assert!(!overlap_hides(&spans, 4));
        assert!(!overlap_hides(&[(0, 4), (4, 8)], 7));
        assert!(!overlap_hides(&spans, 8));
    }

    /// Each kind of disagreement gets its class, and the agreements none:
    /// expectations and answers written by hand.
    #[test]
    fn judge_classes_each_disagreement() {
        let reg = value(0x7000_0001_0000, None);
        let mem = value(0x1122_3344_5566_7788, Some(0x7000_0002_0000));
        let vars = vec![
            Shown::Values(vec![reg]),
            Shown::OptimizedOut,
            Shown::Values(vec![mem]),
            Shown::Values(vec![reg, mem]),
            Shown::NotRepresentable,
            Shown::OptimizedOut,
        ];
        let blocks = vec![vec![(0x1000, 0x1004), (0x1010, 0x1020)]];
        // Everything agrees: the second of two overlapping places, LLDB's
        // "not available" for no location, GDB's extent for the block.
        let good = shown(
            vec![
                VarAnswer::Value(reg),
                VarAnswer::OptimizedOut,
                VarAnswer::Value(mem),
                VarAnswer::Value(mem),
                VarAnswer::Error("anything: not asked".into()),
                VarAnswer::Error("variable not available".into()),
            ],
            BlockAnswer::Lexical(vec![(0x1000, 0x1020)]),
        );
        let j = judge(0x1000, &vars, &blocks, &good);
        assert_eq!(classes(&j), vec![]);
        assert_eq!((j.facts, j.skipped), (1 + 5 + 1, 1));
        let bad = shown(
            vec![
                VarAnswer::Value(value(0x7000_0001_0001, None)),
                VarAnswer::Value(reg),
                VarAnswer::Value(Value { address: Some(0x7000_0003_0000), ..mem }),
                VarAnswer::OptimizedOut,
                VarAnswer::Value(reg),
                VarAnswer::Error("no variable tru64_var_5 in frame 0".into()),
            ],
            BlockAnswer::Lexical(vec![(0x1000, 0x1004)]),
        );
        let j = judge(0x1000, &vars, &blocks, &bad);
        assert_eq!(
            classes(&j),
            vec![
                ("tru64_var_0", class::WRONG_VALUE),
                ("tru64_var_1", class::VALUE_WHERE_NONE),
                ("tru64_var_2", class::WRONG_ADDRESS),
                ("tru64_var_3", class::NONE_WHERE_VALUE),
                ("tru64_var_5", class::VARIABLE_ERROR),
                ("block", class::BLOCK_RANGES),
            ]
        );
        // The block: missed, and found where no scope holds the pc.
        let none: Vec<VarAnswer> = Vec::new();
        let j = judge(0x1000, &[], &blocks, &shown(none.clone(), BlockAnswer::Subprogram));
        assert_eq!(classes(&j), vec![("block", class::BLOCK_MISSED)]);
        let j = judge(0x1000, &[], &[], &shown(none.clone(), BlockAnswer::Lexical(vec![(0x1000, 0x1004)])));
        assert_eq!(classes(&j), vec![("block", class::BLOCK_EXTRA)]);
        // Frame 0 elsewhere, and a run that faulted.
        let elsewhere = Answer::Shown { pc: 0x1004, vars: none, block: BlockAnswer::Subprogram };
        assert_eq!(classes(&judge(0x1000, &[], &[], &elsewhere)), vec![("frame", class::WRONG_PC)]);
        let j = judge(0x1000, &vars, &blocks, &Answer::Fault("gdb timed out".into()));
        assert_eq!((classes(&j), j.facts), (vec![("frame", class::FAULT)], 1));
    }

    /// Every class has a sentence, once.
    #[test]
    fn every_class_is_described_once() {
        let ids: std::collections::BTreeSet<&str> = class::ALL.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), class::ALL.len());
        assert!(class::ALL.iter().all(|(id, what)| id.starts_with("tru64-dbg.") && !what.is_empty()));
    }
}
