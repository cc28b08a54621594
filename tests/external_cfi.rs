//! llvm-dwarfdump and readelf as CFI consumers, judged against the
//! reference on the bundled CFI cases (specs/cases/cfi/) and on
//! dwarfcheck's own executable. Each tool's disagreements must all be in
//! its documented list below (docs/consumers.md, "llvm-dwarfdump and
//! readelf"); the own executable must give none. Skipped with a message
//! when a tool is missing, unless `CI` is set (then it fails).

use dwarfcheck::case::Case;
use dwarfcheck::consumer::builtin::{Fast, Reference};
use dwarfcheck::consumer::external::{External, RunBudget, Tool};
use dwarfcheck::consumer::Consumer;
use dwarfcheck::runner::{self, Finding, Options};
use dwarfcheck_core::outcome::{CfiOutcome, RegisterRule};
use std::path::PathBuf;

/// Bundled cases each tool answers differently from the reference, with
/// the reason (the classes X1-X6 of docs/consumers.md, "Disagreement
/// classes").
const KNOWN: &[(&str, &str, &str)] = &[
    // X1 "silent skip": readelf prints nothing for the section and says
    // nothing; judged as ill-formed (`readelf:not-shown`).
    ("readelf", "version-1-return-address-is-one-byte", "silent skip"),
    ("readelf", "version-3-return-address-is-uleb128", "silent skip"),
    ("readelf", "cie-version-3", "silent skip"),
    // X2: a rule for a register past readelf's x86-64 name table is dropped.
    ("readelf", "offset-extended", "register 200 past the name table"),
    // X3: pointer and header encodings a tool decodes otherwise.
    ("readelf", "segment-selector", "segment selector not skipped"),
    ("readelf", "segment-selector-hand-encoded", "segment selector not skipped"),
    ("llvm-dwarfdump", "segment-selector", "segment selector not skipped"),
    ("llvm-dwarfdump", "segment-selector-hand-encoded", "segment selector not skipped"),
    ("readelf", "dwarf64-eh-frame", "DWARF64 .eh_frame CIE pointer"),
    ("readelf", "dwarf64-eh-frame-hand-encoded", "DWARF64 .eh_frame CIE pointer"),
    ("readelf", "uleb128-pointers", "pointer encoding"),
    ("readelf", "sleb128-pcrel-pointers", "pointer encoding"),
    ("readelf", "textrel-with-base", "pointer encoding: no text base"),
    ("readelf", "textrel-without-base", "pointer encoding: no text base"),
    ("readelf", "datarel-with-base", "pointer encoding: no data base"),
    ("readelf", "datarel-without-base", "pointer encoding: no data base"),
    ("readelf", "aligned-pointer", "pointer encoding: aligned"),
    ("readelf", "aligned-pointer-hand-encoded", "pointer encoding: aligned"),
    ("readelf", "indirect-initial-location", "pointer encoding: indirect not dereferenced"),
    ("llvm-dwarfdump", "textrel-with-base", "pointer encoding: textrel unsupported"),
    ("llvm-dwarfdump", "textrel-without-base", "pointer encoding: textrel unsupported"),
    ("llvm-dwarfdump", "datarel-with-base", "pointer encoding: datarel unsupported"),
    ("llvm-dwarfdump", "datarel-without-base", "pointer encoding: datarel unsupported"),
    ("llvm-dwarfdump", "aligned-pointer", "pointer encoding: aligned"),
    ("llvm-dwarfdump", "aligned-pointer-hand-encoded", "pointer encoding: aligned"),
    ("llvm-dwarfdump", "indirect-initial-location", "pointer encoding: indirect not dereferenced"),
    ("llvm-dwarfdump", "set-loc-pcrel", "pointer encoding: DW_CFA_set_loc operand"),
    ("llvm-dwarfdump", "funcrel-lsda", "pointer encoding: funcrel LSDA"),
    // X4: LLVM rejects augmentations the LSB lets a reader skip.
    ("llvm-dwarfdump", "unknown-letter-after-z-is-skipped", "augmentation"),
    ("llvm-dwarfdump", "legacy-eh-augmentation", "augmentation"),
    // X5: LLVM does not decode the GNU instruction 0x2f.
    ("llvm-dwarfdump", "gnu-negative-offset-extended", "GNU instruction"),
    // X6: readelf misplaces the instructions of an FDE whose CIE has
    // address size 4 in an ELF64 file.
    ("readelf", "appendix-d6-foo", "address size 4"),
    ("readelf", "address-size-4-in-version-4", "address size 4"),
    ("readelf", "address-size-4-hand-encoded", "address size 4"),
];

fn tool(t: Tool) -> Option<External> {
    dwarfcheck::testing::needed(t.programs()[0], External::new(t, RunBudget::default()).ok())
}

/// `(consumer, case)` of every disagreement of a third party.
fn disagreements(cases: &[Case], others: &[Box<dyn Consumer>]) -> Vec<(String, String, String)> {
    let s = runner::run(cases, &Reference, &Fast, others, &Options { keep_details: 0, ..Default::default() });
    s.failures
        .iter()
        .filter_map(|f| match &f.finding {
            Finding::Consumer { consumer, .. } => Some((
                consumer.clone(),
                f.case.clone(),
                f.outcomes.iter().map(|(n, o)| format!("{n}: {o}")).collect::<Vec<_>>().join(" | "),
            )),
            _ => None,
        })
        .collect()
}

/// llvm-dwarfdump and readelf as consumers, those that are installed.
fn installed_tools() -> Vec<Box<dyn Consumer>> {
    [Tool::LlvmDwarfdump, Tool::Readelf]
        .into_iter()
        .filter_map(|t| tool(t).map(|e| Box::new(e) as Box<dyn Consumer>))
        .collect()
}

#[test]
fn bundled_cfi_cases_disagree_only_in_documented_classes() {
    let others = installed_tools();
    if others.is_empty() {
        return;
    }
    let cases = dwarfcheck::testing::bundled_cfi_cases();
    assert!(cases.len() > 100, "the bundled CFI suite has {} cases", cases.len());
    let unexpected: Vec<String> = disagreements(&cases, &others)
        .into_iter()
        .filter(|(c, n, _)| !KNOWN.iter().any(|(kc, kn, _)| kc == c && kn == n))
        .map(|(c, n, o)| format!("{c} on {n}: {o}"))
        .collect();
    assert!(unexpected.is_empty(), "undocumented disagreements:\n{}", unexpected.join("\n"));
}

#[test]
fn own_executable_agrees_fde_for_fde() {
    let others = installed_tools();
    if others.is_empty() {
        return;
    }
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_dwarfcheck"));
    let opts = dwarfcheck::elf::Options { expressions: false, ..Default::default() };
    let x = dwarfcheck::elf::extract(&exe, &opts).unwrap();
    assert!(x.cfi.len() > 1000, "{} FDEs", x.cfi.len());
    let cases: Vec<Case> = x.cfi.into_iter().map(Case::Cfi).collect();
    let s = runner::run(&cases, &Reference, &Fast, &others, &Options::default());
    for o in &others {
        let v = &s.verdicts[o.name()];
        // Every FDE is a table the tool prints exactly as the reference
        // builds it (within what it shows).
        assert_eq!(v.get(&runner::compare::Verdict::Agree).copied().unwrap_or(0), cases.len(), "{}: {v:?}", o.name());
    }
}

#[test]
fn asking_for_a_missing_tool_is_a_usage_error() {
    // With an empty PATH neither tool can be found: exit status 2 and a
    // message naming the package, before any case runs.
    let empty = std::env::temp_dir().join(format!("dwarfcheck-empty-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    for (consumer, package) in [("readelf", "binutils"), ("llvm-dwarfdump", "llvm-19")] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_dwarfcheck"))
            .args(["run", "--consumers", &format!("gimli,{consumer}")])
            .env("PATH", &empty)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(package) && err.contains(consumer), "{err}");
    }
    let _ = std::fs::remove_dir(&empty);
}

/// A C file whose AArch64 code saves registers, keeps a big frame and
/// signs its return address (`-mbranch-protection=pac-ret`), so that its
/// CFI uses `DW_CFA_AARCH64_negate_ra_state`, x29/x30 and register 34.
const AARCH64_SOURCE: &str = "\
extern int g(int, ...);
extern void h(double*);
int f1(int a, int b) { int x[64]; for (int i = 0; i < 64; i++) x[i] = g(a + i, b); return x[a & 63] + g(x[b & 63]); }
double f2(double a) { double v[8] = {a}; h(v); return v[3] * a; }
";

#[test]
fn aarch64_pac_ret_objects_agree_fde_for_fde() {
    let others = installed_tools();
    let clang = dwarfcheck::testing::needed("clang-19", dwarfcheck::testing::have_tool("clang-19").then_some(()));
    if others.is_empty() || clang.is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dwarfcheck-a64-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("t.c");
    std::fs::write(&src, AARCH64_SOURCE).unwrap();
    let mut cases = Vec::new();
    // .eh_frame (asynchronous unwind tables) and .debug_frame (-g only).
    for (name, flags) in [
        ("eh.o", &["-O2", "-fasynchronous-unwind-tables"][..]),
        ("debug.o", &["-O0", "-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"][..]),
    ] {
        let obj = dir.join(name);
        let st = std::process::Command::new("clang-19")
            .args(["-target", "aarch64-linux-gnu", "-mbranch-protection=pac-ret", "-c"])
            .args(flags)
            .arg(&src)
            .arg("-o")
            .arg(&obj)
            .status()
            .unwrap();
        assert!(st.success());
        let opts = dwarfcheck::elf::Options { expressions: false, ..Default::default() };
        cases.extend(dwarfcheck::elf::extract(&obj, &opts).unwrap().cfi.into_iter().map(Case::Cfi));
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(cases.len() >= 4, "{} FDEs", cases.len());
    // The reference sees the return address signed in some row (the
    // instruction is really exercised).
    let signed = cases
        .iter()
        .filter_map(|c| if let Case::Cfi(c) = c { Some(Reference.frame_table(c)) } else { None })
        .any(|o| match o {
            CfiOutcome::Table(t) => {
                t.rows.iter().any(|r| r.registers.get(&34) == Some(&RegisterRule::RaSigned { signed: true }))
            }
            _ => false,
        });
    assert!(signed);
    let s = runner::run(&cases, &Reference, &Fast, &others, &Options::default());
    for o in &others {
        let v = &s.verdicts[o.name()];
        assert_eq!(v.get(&runner::compare::Verdict::Agree).copied().unwrap_or(0), cases.len(), "{}: {v:?}", o.name());
    }
}
