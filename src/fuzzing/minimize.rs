//! Delta debugging of a failing fuzz input (Zeller's ddmin): the fewest
//! operations, context entries, section bytes or lines that still fail
//! the same way, written to `corpus/regressions/` for replay.

use super::case::FuzzCase;
use super::targets::{Input, Target};
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::encoding::spirv::DebugOperation;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// An input given to [`minimize`] that fails no oracle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the input does not fail any oracle: nothing to minimise")]
pub struct NothingToMinimize;

/// How an input fails: the oracle that failed, and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `panic`, `gimli` (a gimli disagreement of no known class), `load`
    /// (a generated case that does not load) or `differ` (reference and
    /// fast disagree). Minimising keeps this the same.
    pub kind: &'static str,
    /// The oracle's message (a panic's payload).
    pub message: String,
}

/// Runs `input`'s oracles with panics caught; `None` if it passes. The
/// process's panic hook is silenced while it runs (a panic is an answer
/// here, not news), so other threads' panics go unprinted meanwhile.
pub fn failure(input: &Input) -> Option<Failure> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(|| input.check()));
    std::panic::set_hook(hook);
    match r {
        Ok(Ok(())) => None,
        Ok(Err(v)) => Some(Failure { kind: v.kind(), message: v.to_string() }),
        Err(p) => {
            let message = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Some(Failure { kind: "panic", message })
        }
    }
}

/// ddmin over `items`: repeatedly leaves out one of `n` chunks while
/// `still_fails` holds, refining the chunks when none can go. At most
/// `budget` calls of `still_fails`.
pub fn ddmin<T: Clone>(mut items: Vec<T>, budget: &mut usize, still_fails: &mut dyn FnMut(&[T]) -> bool) -> Vec<T> {
    let mut n = 2usize;
    while items.len() >= 2 && *budget > 0 {
        let chunk = items.len().div_ceil(n);
        let mut reduced = None;
        for i in 0..n {
            let lo = i * chunk;
            if lo >= items.len() || *budget == 0 {
                break;
            }
            let hi = (lo + chunk).min(items.len());
            let candidate: Vec<T> = items[..lo].iter().chain(&items[hi..]).cloned().collect();
            *budget -= 1;
            if still_fails(&candidate) {
                reduced = Some(candidate);
                break;
            }
        }
        if let Some(c) = reduced {
            items = c;
            n = (n - 1).max(2);
        } else {
            if n >= items.len() {
                break;
            }
            n = (n * 2).min(items.len());
        }
    }
    if items.len() == 1 && *budget > 0 {
        *budget -= 1;
        if still_fails(&[]) {
            items.clear();
        }
    }
    items
}

/// The operations of an expression as byte ranges (a tail that does not
/// decode is one range), for the target and profile of `fc`.
fn op_chunks(fc: &FuzzCase) -> Vec<Vec<u8>> {
    let Ok(case) = FuzzCase { expr: Vec::new(), ..fc.clone() }.load() else {
        return fc.expr.iter().map(|b| vec![*b]).collect();
    };
    let c = &case.ctx;
    let format = c.cu.as_ref().map(|u| u.format).unwrap_or_default();
    crate::asm::expr::disassemble_ops(&fc.expr, &c.target, &c.vendor, format, c.address_bytes())
        .iter()
        .map(|o| fc.expr[o.offset..(o.offset + o.length).min(fc.expr.len())].to_vec())
        .collect()
}

/// `fc` with its SPIR-V expression's operations replaced by `ops`.
fn with_operations(fc: &FuzzCase, ops: &[DebugOperation]) -> FuzzCase {
    let mut fc = fc.clone();
    if let Some(p) = &mut fc.spirv {
        p.expression.operations = ops.to_vec();
    }
    fc
}

/// A minimised input and how it fails.
#[derive(Debug, Clone)]
pub struct Minimized {
    /// The smallest input found that fails like the original.
    pub input: Input,
    /// Its failure.
    pub failure: Failure,
    /// Oracle runs spent.
    pub tries: usize,
}

/// Minimises `input`, which must fail: expression operations (DWARF, or
/// SPIR-V for a `spirv_expr` case) then context entries, section bytes,
/// text lines, or a vISA blob's or PPODE stream's bytes, keeping the
/// failure's kind. At most `budget` oracle
/// runs.
///
/// Errors: [`NothingToMinimize`] when the input does not fail.
pub fn minimize(input: Input, budget: usize) -> Result<Minimized, NothingToMinimize> {
    let Some(original) = failure(&input) else {
        return Err(NothingToMinimize);
    };
    let kind = original.kind;
    let mut left = budget;
    let same = |i: &Input| failure(i).is_some_and(|f| f.kind == kind);
    let input = match input {
        Input::Expr(fc) => {
            let fc = match &fc.spirv {
                Some(part) => {
                    let ops = ddmin(part.expression.operations.clone(), &mut left, &mut |o| {
                        same(&Input::Expr(with_operations(&fc, o)))
                    });
                    with_operations(&fc, &ops)
                }
                None => {
                    let ops = op_chunks(&fc);
                    let ops =
                        ddmin(ops, &mut left, &mut |o| same(&Input::Expr(FuzzCase { expr: o.concat(), ..fc.clone() })));
                    FuzzCase { expr: ops.concat(), ..fc }
                }
            };
            let entries = ddmin(fc.entries.clone(), &mut left, &mut |e| {
                same(&Input::Expr(FuzzCase { entries: e.to_vec(), ..fc.clone() }))
            });
            Input::Expr(FuzzCase { entries, ..fc })
        }
        Input::Cfi { kind: k, bytes, target } => {
            let bytes = ddmin(bytes, &mut left, &mut |b| {
                same(&Input::Cfi { kind: k, bytes: b.to_vec(), target: target.clone() })
            });
            Input::Cfi { kind: k, bytes, target }
        }
        Input::Yaml(text) => {
            let lines: Vec<String> = text.lines().map(str::to_string).collect();
            let lines = ddmin(lines, &mut left, &mut |l| same(&Input::Yaml(l.join("\n"))));
            Input::Yaml(lines.join("\n"))
        }
        Input::Visa(bytes) => Input::Visa(ddmin(bytes, &mut left, &mut |b| same(&Input::Visa(b.to_vec())))),
        Input::Tru64(bytes) => Input::Tru64(ddmin(bytes, &mut left, &mut |b| same(&Input::Tru64(b.to_vec())))),
    };
    let failure = failure(&input).unwrap_or(original);
    Ok(Minimized { input, failure, tries: budget - left })
}

/// A short stable name for `bytes` (FNV-1a, 64 bits, 16 hex digits).
pub fn digest(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
    format!("{h:016x}")
}

/// Writes `m`, found by `target`, under `dir` (`corpus/regressions/`):
/// an expression case as `<target>-<digest>.yaml` (a differential case:
/// no `expect` until someone derives one), a frame section as
/// `cfi_bytes/<digest>` (the `cfi_bytes` input encoding), case-file
/// text as `case_yaml/<digest>.txt`, a vISA blob as
/// `visa_bytes/<digest>` and a PPODE stream as `tru64_bytes/<digest>`.
/// Returns the path.
///
/// Errors: the file cannot be written.
pub fn write(m: &Minimized, target: Target, dir: &Path) -> std::io::Result<PathBuf> {
    let first_line = m.failure.message.lines().next().unwrap_or("");
    let comment = format!(
        "Found by the {} fuzz target; minimised by `dwarfcheck minimize` ({} oracle runs).\n\
         It failed ({}): {first_line}\n\
         Replayed by `dwarfcheck run` and tests/regressions.rs: reference and fast must agree,\n\
         and gimli may differ only in a known class. Add `expect:` once the answer is derived by hand.",
        target.name(),
        m.tries,
        m.failure.kind
    );
    let (path, bytes) = match &m.input {
        Input::Expr(fc) => {
            // A SPIR-V case's `expr` is its lowering, often empty: name it
            // by its `spirv:` text instead.
            let key = fc.spirv.as_ref().map_or_else(|| fc.expr.clone(), |p| p.yaml("").into_bytes());
            let name = format!("{}-{}", target.name(), digest(&key));
            (dir.join(format!("{name}.yaml")), fc.to_yaml(&name, &comment).into_bytes())
        }
        other => {
            let (t, raw) = other.raw().ok_or_else(|| std::io::Error::other("no raw encoding for this machine"))?;
            let ext = if t == Target::CaseYaml { ".txt" } else { "" };
            (dir.join(t.name()).join(format!("{}{ext}", digest(&raw))), raw)
        }
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, bytes)?;
    Ok(path)
}
