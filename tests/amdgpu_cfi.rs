//! AMDGPU CFI fixtures (`specs/fixtures/amdgpu/cfi-*.s`): hand-derived row tables, reference = fast, and llvm-dwarfdump-19's rows.
//!
//! The objects are built by `.ci/fixtures` (llvm-mc-19, gfx90a); the test
//! runs it when an object is missing or older than its source, and skips
//! when the LLVM 19 tools are not installed. Each source has one function
//! whose FDE is written to both `.debug_frame` and `.eh_frame`:
//! `cfi-direct.s` with the direct hetero-2020 opcodes, `cfi-user.s` with
//! `DW_OP_LLVM_user` (read with the `llvm-user` vendor profile, as
//! `dwarfcheck elf --vendor llvm-user` does). Checks, per FDE:
//! - the reference row table equals the one worked out by hand from the
//!   assembly (rules `cfi.llvm-def-aspace-cfa`, `cfi.expression`,
//!   `cfi.val-expression`, `cfi.def-cfa-expression`, `cfi.remember-state`,
//!   `cfi.remember-state.includes-cfa`);
//! - the fast evaluator gives the same outcome;
//! - llvm-dwarfdump-19 (`--debug-frame`, `--eh-frame`) shows rows at the
//!   same offsets from the function start, the same register + offset CFA
//!   rules with their address spaces, and the same registers in each row;
//! - `dwarfcheck elf` reports no disagreements for the object.

use dwarfcheck::elf::{extract, Options};
use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::outcome::cfi::{CfaRule, CfiOutcome, RegisterRule, Row};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// DWARF register numbers (AMDGPUUsage mapping, wave64): SGPRn = 32 + n,
/// EXEC_MASK_64 = 17, VGPRn = 2560 + n.
const SGPR32: u64 = 64;
const SGPR33: u64 = 65;
const SGPR34: u64 = 66;
const EXEC: u64 = 17;
const VGPR40: u64 = 2600;
/// `DW_ASPACE_AMDGPU_private_wave`.
const PRIVATE_WAVE: u64 = 6;

/// The expression blocks of one fixture, as written in its `.cfi_escape`s.
struct Blocks {
    sgpr33: &'static [u8],
    sgpr34: &'static [u8],
    exec: &'static [u8],
    vgpr40: &'static [u8],
    cfa: &'static [u8],
}

const DIRECT: Blocks = Blocks {
    // DW_OP_lit8, DW_OP_LLVM_offset
    sgpr33: &[0x38, 0xe3],
    // DW_OP_lit6, DW_OP_LLVM_aspace_bregx SGPR32 +12
    sgpr34: &[0x36, 0xe8, 0x40, 0x0c],
    // DW_OP_LLVM_call_frame_entry_reg EXEC
    exec: &[0xe6, 0x11],
    // DW_OP_LLVM_undefined
    vgpr40: &[0xe7],
    // DW_OP_bregx SGPR32 0, DW_OP_lit6, DW_OP_LLVM_form_aspace_address, DW_OP_LLVM_offset_uconst 32
    cfa: &[0x92, 0x40, 0x00, 0x36, 0xe1, 0xe4, 0x20],
};

const USER: Blocks = Blocks {
    sgpr33: &[0x38, 0xe9, 0x04],
    sgpr34: &[0x36, 0xe9, 0x09, 0x40, 0x0c],
    exec: &[0xe9, 0x07, 0x11],
    vgpr40: &[0xe9, 0x08],
    cfa: &[0x92, 0x40, 0x00, 0x36, 0xe9, 0x02, 0xe9, 0x05, 0x20],
};

/// The row table of the fixture function, worked out from the assembly
/// (code alignment factor 4, each `s_nop`/`s_setpc` 4 bytes; offsets from
/// the function start):
/// - [0x0, 0x4): `.cfi_llvm_def_aspace_cfa 64, 0, 6` → CFA = SGPR32 + 0 in
///   private_wave; no register rules (the CIE gives none).
/// - [0x4, 0x8): CFA = SGPR32 + 16 in private_wave; SGPR33 and SGPR34 get
///   expression rules.
/// - [0x8, 0xc): EXEC a val_expression rule, VGPR40 an expression rule;
///   remember_state; then the CFA becomes the expression.
/// - [0xc, 0x10): restore_state brings back everything remembered: the CFA
///   rule SGPR32 + 16 in private_wave (not the expression) and all four
///   register rules (they were set before remember_state).
fn expected(b: &Blocks) -> Vec<Row> {
    let e = |x: &[u8]| RegisterRule::Expression { expr: x.to_vec() };
    let aspace_cfa = |offset| CfaRule::RegOffset { register: SGPR32, offset, aspace: PRIVATE_WAVE };
    let two = BTreeMap::from([(SGPR33, e(b.sgpr33)), (SGPR34, e(b.sgpr34))]);
    let mut four = two.clone();
    four.insert(EXEC, RegisterRule::ValExpression { expr: b.exec.to_vec() });
    four.insert(VGPR40, e(b.vgpr40));
    vec![
        Row { start: 0x0, end: 0x4, cfa: aspace_cfa(0), registers: BTreeMap::new() },
        Row { start: 0x4, end: 0x8, cfa: aspace_cfa(16), registers: two },
        Row { start: 0x8, end: 0xc, cfa: CfaRule::Expression { expr: b.cfa.to_vec() }, registers: four.clone() },
        Row { start: 0xc, end: 0x10, cfa: aspace_cfa(16), registers: four },
    ]
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The object for `name` (built by `.ci/fixtures` when missing or stale);
/// `None` when the tools are not installed.
fn object(name: &str) -> Option<PathBuf> {
    let tools = ["llvm-mc-19", "llvm-dwarfdump-19", "clang-19"].iter().all(|t| dwarfcheck::testing::have_tool(t));
    dwarfcheck::testing::needed("llvm-mc-19 and llvm-dwarfdump-19 (AMDGPU CFI fixtures)", tools.then_some(()))?;
    let src = root().join(format!("specs/fixtures/amdgpu/{name}.s"));
    let obj = root().join(format!("target/fixtures/amdgpu/{name}.o"));
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&obj).is_none() || modified(&obj) < modified(&src) {
        let st = Command::new("bash").arg(root().join(".ci/fixtures")).output().unwrap();
        assert!(st.status.success(), ".ci/fixtures failed: {}", String::from_utf8_lossy(&st.stderr));
    }
    Some(obj)
}

/// llvm-dwarfdump-19's row lines of each FDE in `--debug-frame` or
/// `--eh-frame` output, in order: (address, CFA text, register count).
fn llvm_rows(obj: &Path, what: &str) -> Vec<Vec<(u64, String, usize)>> {
    let o = Command::new("llvm-dwarfdump-19").arg(what).arg(obj).output().unwrap();
    assert!(o.status.success(), "llvm-dwarfdump-19 {what}: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let mut fdes: Vec<Vec<(u64, String, usize)>> = Vec::new();
    // Either option prints both frame sections: keep the one asked for.
    let section = what.trim_start_matches('-').replace('-', "_");
    let mut inside = false;
    for line in text.lines() {
        if let Some(name) = line.strip_suffix(" contents:") {
            inside = name.trim_start_matches('.') == section;
            continue;
        }
        if !inside {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() >= 4 && w[3] == "FDE" {
            fdes.push(Vec::new());
            continue;
        }
        // "  0x4: CFA=SGPR32_LO16+16 in addrspace6: SGPR33_LO16=[...], ..."
        let Some(rest) = line.trim_start().strip_prefix("0x") else { continue };
        let Some((addr, rest)) = rest.split_once(": CFA=") else { continue };
        let Some(cur) = fdes.last_mut() else { continue };
        // The CFA text ends at the first ": " (register rules follow);
        // an expression CFA has none inside it in these fixtures.
        let (cfa, regs) = rest.split_once(": ").unwrap_or((rest, ""));
        // Register rules are "NAME=rule" separated by ", " at the top level;
        // the rules themselves contain ", " only inside [..].
        let n = if regs.is_empty() { 0 } else { top_level_items(regs) };
        cur.push((u64::from_str_radix(addr, 16).unwrap(), cfa.to_string(), n));
    }
    fdes
}

/// Items of a ", "-separated list, not counting separators inside [..].
fn top_level_items(s: &str) -> usize {
    let (mut depth, mut n) = (0i32, 1);
    let b = s.as_bytes();
    for (i, c) in b.iter().enumerate() {
        match c {
            b'[' => depth += 1,
            b']' => depth -= 1,
            // ", NAME=" starts a new rule; ", DW_OP_" continues an expression.
            b',' if depth == 0
                && b.get(i + 1) == Some(&b' ')
                && s[i + 2..].split_once('=').is_some_and(|(name, _)| !name.contains(' ')) =>
            {
                n += 1
            }
            _ => {}
        }
    }
    n
}

fn check(name: &str, vendor: VendorProfile, vendor_flag: Option<&str>, blocks: &Blocks) {
    let Some(obj) = object(name) else { return };
    let x = extract(&obj, &Options { vendor: Some(vendor), ..Options::default() }).unwrap();
    assert!(x.warnings.is_empty(), "{name}: {:?}", x.warnings);
    let want = expected(blocks);
    let mut kinds = Vec::new();
    for c in &x.cfi {
        let r = dwarfcheck::consumer::builtin::reference_table(c);
        let f = dwarfcheck::consumer::builtin::fast_table(c);
        assert_eq!(r, f, "{name}: FDE {:#x}: reference and fast differ", c.fde_offset);
        let CfiOutcome::Table(t) = r else { panic!("{name}: FDE {:#x}: no row table: {r:?}", c.fde_offset) };
        // Rows relative to the function start (in .eh_frame of a relocatable
        // object the pc-relative initial location is not the symbol's 0).
        let base = t.rows[0].start;
        let rel: Vec<Row> =
            t.rows.iter().map(|w| Row { start: w.start - base, end: w.end - base, ..w.clone() }).collect();
        assert_eq!(rel, want, "{name}: FDE {:#x} ({:?})", c.fde_offset, c.section.kind);
        // llvm-dwarfdump-19's rows of the same FDE.
        let what = if c.section.kind == FrameKind::EhFrame { "--eh-frame" } else { "--debug-frame" };
        let llvm = llvm_rows(&obj, what);
        assert_eq!(llvm.len(), 1, "{name} {what}: one FDE expected");
        let l = &llvm[0];
        assert_eq!(l.len(), want.len(), "{name} {what}: rows {l:?}");
        for (row, (addr, cfa, nregs)) in want.iter().zip(l) {
            assert_eq!(addr - l[0].0, row.start, "{name} {what}");
            assert_eq!(*nregs, row.registers.len(), "{name} {what} at {addr:#x}: {l:?}");
            match &row.cfa {
                CfaRule::RegOffset { offset, aspace, .. } => {
                    assert_eq!(*cfa, format!("SGPR32_LO16{offset:+} in addrspace{aspace}"), "{name} {what}")
                }
                // llvm cannot decode the extension operations; it starts the
                // expression with the standard DW_OP_bregx.
                _ => assert!(cfa.starts_with("DW_OP_bregx SGPR32_LO16+0, DW_OP_lit6, "), "{name} {what}: {cfa}"),
            }
        }
        kinds.push(c.section.kind);
    }
    kinds.sort_by_key(|k| *k == FrameKind::EhFrame);
    assert_eq!(kinds, [FrameKind::DebugFrame, FrameKind::EhFrame], "{name}: one FDE in each frame section");
    // The CLI (as .ci/run runs it) sees no disagreement.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dwarfcheck"));
    cmd.arg("elf");
    if let Some(v) = vendor_flag {
        cmd.args(["--vendor", v]);
    }
    let out = cmd.arg(&obj).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{name}: {text} {}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("2 FDEs") && text.contains("table 2"), "{name}: {text}");
    assert!(text.contains("no disagreements"), "{name}: {text}");
}

#[test]
fn cfi_direct_row_tables() {
    check("cfi-direct", VendorProfile::hetero_2020(), None, &DIRECT);
}

#[test]
fn cfi_user_row_tables() {
    check("cfi-user", VendorProfile::llvm_user(), Some("llvm-user"), &USER);
}

#[test]
fn top_level_items_counts_rules_not_operations() {
    // Two rules, the first an expression with two operations.
    assert_eq!(top_level_items("A=[DW_OP_lit8, <decoding error> e3], B=undefined"), 2);
    assert_eq!(top_level_items("EXEC=<decoding error> e6 11"), 1);
}
