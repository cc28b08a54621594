//! AMDGPU fixtures: dwarfcheck decodes every location expression and CFI expression of the built objects as llvm-dwarfdump-19 does.
//!
//! The fixtures are built from `specs/fixtures/amdgpu/` by `.ci/fixtures`
//! (clang-19 for the OpenCL kernels, llvm-mc-19 for the hand-written
//! assembly); this test runs that script when an object is missing. Two
//! oracles:
//! - llvm-dwarfdump-19 (`--debug-info`, `--debug-frame`, `--eh-frame`): same operations,
//!   same operands, for every `DW_AT_location`/`DW_AT_frame_base` exprloc,
//!   every location-list entry and every CFA/register-rule expression. It
//!   does not know the heterogeneous-debugging operations (neither the
//!   direct 0xe1–0xec opcodes nor the `DW_OP_LLVM_user` sub-opcodes it
//!   prints a `<decoding error>` and the remaining bytes). There the check
//!   is: the operations before it agree, our next operation starts exactly
//!   at the first byte it could not decode and is an extension operation,
//!   and the rest decodes as whole operations.
//! - the hand-written `; expect:` lines of the assembly sources, which give
//!   the intended disassembly of each block (derived from the encoding
//!   tables, not from our output).

use dwarfcheck::asm::cfi::{decode as cfi_decode, parse_block, CfiAsmParams};
use dwarfcheck::asm::expr::{disassemble_ops, DisOp};
use dwarfcheck::elf::{extract, Options};
use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_core::encoding::Format;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::target::Target;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture objects, built by `.ci/fixtures` if any is missing or older
/// than its source. `None` (skip) when the tools are not installed.
fn fixtures() -> Option<Vec<(PathBuf, PathBuf)>> {
    let tools = ["clang-19", "llvm-mc-19", "llvm-dwarfdump-19"].iter().all(|t| dwarfcheck::testing::have_tool(t));
    dwarfcheck::testing::needed("clang-19 and llvm-19 (AMDGPU fixtures)", tools.then_some(()))?;
    let src = root().join("specs/fixtures/amdgpu");
    let out = root().join("target/fixtures/amdgpu");
    let mut list = Vec::new();
    for e in std::fs::read_dir(&src).unwrap().flatten() {
        let p = e.path();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        match p.extension().and_then(|x| x.to_str()) {
            Some("cl") => {
                for o in ["O0", "O2"] {
                    list.push((p.clone(), out.join(format!("{stem}-{o}.o"))));
                }
            }
            Some("s") => list.push((p.clone(), out.join(format!("{stem}.o")))),
            _ => {}
        }
    }
    list.sort();
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if list.iter().any(|(s, o)| modified(o).is_none() || modified(o) < modified(s)) {
        let st = Command::new("bash").arg(root().join(".ci/fixtures")).output().unwrap();
        assert!(st.status.success(), ".ci/fixtures failed: {}", String::from_utf8_lossy(&st.stderr));
    }
    assert!(list.len() >= 4, "expected at least 2 kernels and 1 assembly source, found {list:?}");
    Some(list)
}

/// llvm-dwarfdump-19's register names -> ours (AMDGPUUsage names in upper
/// case, see `asm::expr`). Normalisations, each seen in the fixtures:
/// - LLVM names a 32-bit register's DWARF number after its low 16-bit
///   half: `SGPR33_LO16`, `VGPR8_LO16`, `AGPR0_LO16` are our `SGPR33`,
///   `VGPR8`, `AGPR0` (the `_LO16` suffix is dropped);
/// - `EXEC` is DWARF register 17, our `EXEC_MASK_64` (wave64);
/// - `PC_REG` is DWARF register 16, our `PC_64`.
fn normalise_llvm(text: &str) -> String {
    let t = text.replace("_LO16", "");
    let mut out = String::new();
    let mut word = String::new();
    let flush = |w: &mut String, out: &mut String| {
        out.push_str(match w.as_str() {
            "EXEC" => "EXEC_MASK_64",
            "PC_REG" => "PC_64",
            other => other,
        });
        w.clear();
    };
    for c in t.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn join(ops: &[DisOp]) -> String {
    ops.iter().map(|o| o.text.as_str()).collect::<Vec<_>>().join(", ")
}

fn is_extension(o: &DisOp) -> bool {
    o.text.starts_with("DW_OP_LLVM_")
}

/// What was compared, for the summary.
#[derive(Default, Debug)]
struct Stats {
    exprs: usize,
    with_direct: usize,
    with_user: usize,
    llvm_decoding_errors: usize,
}

/// Compares our decoding of `bytes` with llvm-dwarfdump-19's `llvm` text.
fn compare(llvm: &str, bytes: &[u8], target: &Target, vendor: &VendorProfile, stats: &mut Stats) -> Result<(), String> {
    let ops = disassemble_ops(bytes, target, vendor, Format::Dwarf32, 8);
    stats.exprs += 1;
    if ops.iter().any(|o| is_extension(o) && o.subop.is_none()) {
        stats.with_direct += 1;
    }
    if ops.iter().any(|o| o.subop.is_some()) {
        stats.with_user += 1;
    }
    let ours = join(&ops);
    if ops.iter().any(|o| o.op.is_none()) {
        return Err(format!("we do not decode {bytes:02x?}: {ours}"));
    }
    let llvm = normalise_llvm(llvm.trim());
    let Some((prefix, tail)) = llvm.split_once("<decoding error>") else {
        return if ours == llvm { Ok(()) } else { Err(format!("ours `{ours}`, llvm `{llvm}`")) };
    };
    stats.llvm_decoding_errors += 1;
    let prefix = prefix.trim_end().trim_end_matches(',');
    let k = if prefix.is_empty() { 0 } else { prefix.split(", ").count() };
    let Some(first) = ops.get(k) else { return Err(format!("llvm stops after {k} operations, ours `{ours}`")) };
    let tail_ours: Vec<String> = bytes[first.offset..].iter().map(|b| format!("{b:02x}")).collect();
    if join(&ops[..k]) != prefix || !is_extension(first) || tail_ours.join(" ") != tail.trim() {
        return Err(format!("ours `{ours}`, llvm `{llvm}` (undecoded by llvm from operation {k})"));
    }
    Ok(())
}

/// DW_AT_location / DW_AT_frame_base texts from `--debug-info`, keyed by
/// (DIE offset, `loc`/`fb`), each a list: one exprloc, or the location-list
/// entries as (begin, end, text).
type Attrs = HashMap<(u64, &'static str), Vec<(Option<(u64, u64)>, String)>>;

fn parse_debug_info(text: &str) -> Attrs {
    let mut out: Attrs = HashMap::new();
    let mut die = 0u64;
    let mut open: Option<(u64, &'static str)> = None;
    for line in text.lines() {
        let l = line.trim_start();
        if let Some(key) = open {
            if let Some(rest) = l.strip_prefix('[') {
                let (range, expr) = rest.split_once("): ").unwrap();
                let (b, e) = range.split_once(", ").unwrap();
                let p = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
                let last = expr.ends_with(')') && !l.is_empty();
                let expr = if last { &expr[..expr.len() - 1] } else { expr };
                out.entry(key).or_default().push((Some((p(b), p(e))), expr.to_string()));
                continue;
            }
            open = None;
        }
        if let Some((off, rest)) = l.split_once(':') {
            if off.starts_with("0x") && rest.trim_start().starts_with("DW_TAG_") {
                die = u64::from_str_radix(off.trim_start_matches("0x"), 16).unwrap_or(die);
            }
        }
        for (attr, short) in [("DW_AT_location\t(", "loc"), ("DW_AT_frame_base\t(", "fb")] {
            if let Some(rest) = l.strip_prefix(attr) {
                if rest.starts_with("0x") && rest.trim_end().ends_with(':') || rest.starts_with("indexed (") {
                    open = Some((die, short));
                } else {
                    let e = rest.strip_suffix(')').unwrap_or(rest);
                    out.entry((die, short)).or_default().push((None, e.to_string()));
                }
            }
        }
    }
    out
}

/// Expression-bearing CFA instructions from `--debug-frame`, by FDE
/// offset: (instruction name, register text or "", expression text).
/// Only the lines of `section` (".debug_frame" or ".eh_frame"):
/// llvm-dwarfdump-19 prints both frame sections for either option.
fn parse_debug_frame(text: &str, section: &str) -> HashMap<u64, Vec<(String, String, String)>> {
    let mut out: HashMap<u64, Vec<_>> = HashMap::new();
    let mut fde = None;
    let mut inside = false;
    for line in text.lines() {
        if let Some(name) = line.strip_suffix(" contents:") {
            inside = name == section;
            fde = None;
            continue;
        }
        if !inside {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() >= 4 && (w[3] == "FDE" || w[3] == "CIE") {
            fde = (w[3] == "FDE").then(|| u64::from_str_radix(w[0], 16).unwrap());
            continue;
        }
        let Some(f) = fde else { continue };
        let l = line.trim_start();
        if let Some(rest) = l.strip_prefix("DW_CFA_def_cfa_expression: ") {
            out.entry(f).or_default().push(("DW_CFA_def_cfa_expression".into(), String::new(), rest.into()));
        }
        for insn in ["DW_CFA_expression", "DW_CFA_val_expression"] {
            if let Some(rest) = l.strip_prefix(&format!("{insn}: ")) {
                let (reg, e) = rest.split_once(' ').unwrap_or((rest, ""));
                out.entry(f).or_default().push((insn.into(), normalise_llvm(reg), e.into()));
            }
        }
    }
    out
}

fn dwarfdump(obj: &Path, what: &str) -> String {
    let o = Command::new("llvm-dwarfdump-19").arg(what).arg(obj).output().unwrap();
    assert!(o.status.success(), "llvm-dwarfdump-19 {what} {}: {}", obj.display(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Our register name for DWARF number `n` (as `asm::expr` prints it).
fn reg_name(t: &Target, n: u64) -> String {
    t.register(n).map(|r| r.name.to_uppercase()).unwrap_or_else(|| format!("reg{n}"))
}

#[test]
fn amdgpu_fixtures_decode_as_llvm_dwarfdump_19_does() {
    let Some(list) = fixtures() else { return };
    let mut stats = Stats::default();
    let mut failures = Vec::new();
    let (mut loclist_entries, mut fdes, mut cfi_exprs) = (0, 0, 0);
    for (src, obj) in &list {
        let x = extract(obj, &Options::default()).unwrap();
        assert!(x.warnings.is_empty(), "{}: {:?}", obj.display(), x.warnings);
        let attrs = parse_debug_info(&dwarfdump(obj, "--debug-info"));
        // Our cases, matched to llvm's by DIE offset, attribute and range.
        let mut used: HashMap<(u64, &'static str), usize> = HashMap::new();
        let mut ours_in_order = Vec::new();
        for c in &x.exprs {
            let mut parts = c.name.split('.');
            let die = u64::from_str_radix(parts.next().unwrap().trim_start_matches("die0x"), 16).unwrap();
            let short: &'static str = if parts.next() == Some("fb") { "fb" } else { "loc" };
            let list = attrs.get(&(die, short)).unwrap_or_else(|| panic!("{}: llvm has no {}", obj.display(), c.name));
            let found = if parts.next().is_some() {
                loclist_entries += 1;
                // The case origin ends with `[begin, end)`.
                let r = c.origin.rsplit_once('[').unwrap().1.trim_end_matches(')');
                let (b, e) = r.split_once(", ").unwrap();
                let p = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
                let i = used.entry((die, short)).or_default();
                let pos = list[*i..].iter().position(|(rg, _)| *rg == Some((p(b), p(e)))).map(|j| j + *i);
                let pos = pos.unwrap_or_else(|| panic!("{}: llvm has no entry for {}", obj.display(), c.origin));
                *i = pos + 1;
                &list[pos].1
            } else {
                &list[0].1
            };
            if let Err(e) = compare(found, &c.expr, &c.ctx.target, &c.ctx.vendor, &mut stats) {
                failures.push(format!("{}: {}: {e}", obj.display(), c.origin));
            }
            ours_in_order.push(join(&disassemble_ops(&c.expr, &c.ctx.target, &c.ctx.vendor, Format::Dwarf32, 8)));
        }
        // The file's vendor profile for CFI: the units' (augmentation), else
        // the target's. dwarfcheck's CFI evaluation itself uses the target's.
        let target = x.exprs.first().map(|c| c.ctx.target.clone());
        let vendor = x.exprs.first().map(|c| c.ctx.vendor.clone()).unwrap_or_else(VendorProfile::hetero_2020);
        // Both frame sections (FDE offsets are per section).
        let frames = parse_debug_frame(&dwarfdump(obj, "--debug-frame"), ".debug_frame");
        let eh_frames = parse_debug_frame(&dwarfdump(obj, "--eh-frame"), ".eh_frame");
        let (mut cfi_in_order, mut eh_in_order) = (Vec::new(), Vec::new());
        for c in &x.cfi {
            let eh = c.section.kind == FrameKind::EhFrame;
            fdes += 1;
            let t = target.clone().unwrap_or_else(|| c.section.target.clone());
            let (fde, cie) = c.section.parse_fde(c.fde_offset).unwrap();
            let r = fde.instructions.start as usize..fde.instructions.end as usize;
            let insns = cfi_decode(&c.section.bytes[r], &t, &CfiAsmParams::from_cie(&cie));
            let llvm = if eh { &eh_frames } else { &frames }.get(&c.fde_offset).cloned().unwrap_or_default();
            let mut k = 0;
            for i in &insns {
                let Some((name, rest)) = i.text.split_once(": ") else { continue };
                if !matches!(name, "DW_CFA_def_cfa_expression" | "DW_CFA_expression" | "DW_CFA_val_expression") {
                    continue;
                }
                let (reg, block) = match rest.split_once(' ') {
                    Some((r, b)) if r.starts_with("reg") => (reg_name(&t, r[3..].parse().unwrap()), b),
                    _ => (String::new(), rest),
                };
                let bytes = parse_block(block).unwrap();
                cfi_exprs += 1;
                let Some((lname, lreg, ltext)) = llvm.get(k) else {
                    failures.push(format!("{}: FDE {:#x}: llvm lacks {}", obj.display(), c.fde_offset, i.text));
                    continue;
                };
                k += 1;
                if *lname != name || *lreg != reg {
                    failures.push(format!(
                        "{}: FDE {:#x}: ours {name} {reg}, llvm {lname} {lreg}",
                        obj.display(),
                        c.fde_offset
                    ));
                }
                if let Err(e) = compare(ltext, &bytes, &t, &vendor, &mut stats) {
                    failures.push(format!("{}: FDE {:#x} {name}: {e}", obj.display(), c.fde_offset));
                }
                let text = join(&disassemble_ops(&bytes, &t, &vendor, Format::Dwarf32, 8));
                let entry = if reg.is_empty() { (true, text) } else { (false, format!("{name} {reg}: {text}")) };
                if eh { &mut eh_in_order } else { &mut cfi_in_order }.push(entry);
            }
            if k != llvm.len() {
                failures.push(format!(
                    "{}: FDE {:#x}: llvm shows {} expressions, we {k}",
                    obj.display(),
                    c.fde_offset,
                    llvm.len()
                ));
            }
        }
        // Hand-written expectations of the assembly sources.
        if src.extension().is_some_and(|e| e == "s") {
            let s = std::fs::read_to_string(src).unwrap();
            let want = |tag: &str| -> Vec<String> {
                s.lines().filter_map(|l| l.strip_prefix(tag)).map(|t| t.trim().to_string()).collect()
            };
            assert_eq!(ours_in_order, want("; expect: "), "{}", src.display());
            let cfa: Vec<String> = cfi_in_order.iter().filter(|c| c.0).map(|c| c.1.clone()).collect();
            let regs: Vec<String> = cfi_in_order.iter().filter(|c| !c.0).map(|c| c.1.clone()).collect();
            assert_eq!(cfa, want("; expect-cfa: "), "{}", src.display());
            assert_eq!(regs, want("; expect-cfi: "), "{}", src.display());
            // A source that also asks for .eh_frame (.cfi_sections) has the
            // same expressions there.
            assert!(eh_in_order.is_empty() || eh_in_order == cfi_in_order, "{}: .eh_frame differs", src.display());
        }
    }
    eprintln!(
        "amdgpu fixtures: {} objects, {} expressions compared ({} location-list entries, {} CFI expressions in {} FDEs); \
         with direct hetero-2020 opcodes {}, with DW_OP_LLVM_user {}; llvm-dwarfdump-19 could not decode {}",
        list.len(),
        stats.exprs,
        loclist_entries,
        cfi_exprs,
        fdes,
        stats.with_direct,
        stats.with_user,
        stats.llvm_decoding_errors
    );
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
    assert!(stats.with_direct >= 10 && stats.with_user >= 9, "{stats:?}");
}
