//! Producer findings, driven through the binary as a user would (issue 19
//! item 4): `elf --findings` (text, JSON, SARIF, `--confirm`) and
//! `dwarfcheck producers`, on an executable whose one variable has a
//! location expression written by hand in a case file, so that every
//! expected field is known from the case text.

use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dwarfcheck-producers-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn dwarfcheck(args: &[&str], dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_dwarfcheck")).args(args).current_dir(dir).output().unwrap()
}

/// The case file of rustc's 16-byte piece of an 8-byte stack value:
/// `DW_OP_lit1 DW_OP_stack_value DW_OP_piece 16` (bytes 31 9f 93 10),
/// ill-formed by composite.part-exceeds-storage at byte 2.
const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/specs/cases/producers/llvm-rustc-dwarfcheck.yaml");
const CASE: &str = "llvm-piece-wider-than-stack-value";

/// `dwarfcheck synth` writes an executable whose variable `v` (in
/// `dwarfcheck_case`) has the case's expression as its DW_AT_location.
fn executable(dir: &Path) -> PathBuf {
    let out = dwarfcheck(&["synth", "--case", CASE, CASES, "--out", "."], dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir.join(CASE)
}

/// In JSON: one finding, with the file, DIE name, function, producer,
/// attribute, bytes, rule, offset and trace the case and the synthesiser
/// give.
#[test]
fn json_findings_carry_the_die_and_the_rule() {
    let dir = scratch("json");
    let exe = executable(&dir);
    let out = dwarfcheck(&["elf", "--quiet", "--findings", "--json", "--unwind-samples", "0", CASE], &dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = v["findings"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let f = &found[0];
    assert_eq!(f["file"], CASE);
    assert_eq!(f["attribute"], "DW_AT_location");
    assert_eq!(f["producer"], "dwarfcheck synth");
    assert_eq!(f["described"]["name"], "v");
    assert_eq!(f["described"]["function"], "dwarfcheck_case");
    assert_eq!(f["described"]["tag"], "DW_TAG_variable");
    assert_eq!(f["found"]["kind"], "ill-formed");
    assert_eq!(f["found"]["rule"], "composite.part-exceeds-storage");
    assert_eq!(f["found"]["at"], 2);
    assert_eq!(f["found"]["bytes"], "31 9f 93 10");
    // The trace runs through the two operations before the failing one.
    assert_eq!(f["found"]["trace"].as_array().unwrap().len(), 2, "{f}");
    assert!(f["pc_range"].as_str().unwrap().starts_with('['), "{f}");
    assert!(exe.exists());
    assert_eq!(v["summary"]["producer_finding_count"], 1);
}

/// In text: the count table by producer and rule, then the finding with
/// its rule's statement and trace.
#[test]
fn text_findings_group_by_producer_and_rule() {
    let dir = scratch("text");
    executable(&dir);
    let out = dwarfcheck(&["elf", "--quiet", "--findings", "--unwind-samples", "0", CASE], &dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("producer findings: 1 (ill-formed 1, evaluation errors 0, unsupported 0)"), "{text}");
    assert!(
        text.lines().any(|l| l.contains("dwarfcheck synth")
            && l.contains("composite.part-exceeds-storage")
            && l.trim_end().ends_with(" 1")),
        "{text}"
    );
    assert!(text.contains("DIE 0x") && text.contains("(DW_TAG_variable `v` in `dwarfcheck_case`)"), "{text}");
    assert!(text.contains("ill-formed [composite.part-exceeds-storage] at byte 2: "), "{text}");
    assert!(text.contains("DW_OP_stack_value"), "{text}");
}

/// SARIF 2.1.0: one result at level `error`, its rule in the driver's rule
/// list at `ruleIndex`, the binary as artifact and the variable as logical
/// location.
#[test]
fn sarif_has_one_result_per_finding() {
    let dir = scratch("sarif");
    executable(&dir);
    let out = dwarfcheck(&["elf", "--quiet", "--sarif", "f.sarif", "--unwind-samples", "0", CASE], &dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("f.sarif")).unwrap()).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let run = &v["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(r["ruleId"], "composite.part-exceeds-storage");
    assert_eq!(r["level"], "error");
    let i = r["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(run["tool"]["driver"]["rules"][i]["id"], "composite.part-exceeds-storage");
    assert_eq!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], CASE);
    assert_eq!(r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"], "dwarfcheck_case::v");
}

/// `--confirm`: llvm-dwarfdump reads the same DIE, name and operations,
/// and the reference gives the same rule on its reading.
#[test]
fn llvm_dwarfdump_confirms_the_finding() {
    if !dwarfcheck::testing::have_tool("llvm-dwarfdump-19") {
        eprintln!("llvm-dwarfdump-19 is not installed; skipped");
        return;
    }
    let dir = scratch("confirm");
    executable(&dir);
    let out = dwarfcheck(&["elf", "--quiet", "--findings", "--confirm", "--json", "--unwind-samples", "0", CASE], &dir);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v["findings"][0]["confirmation"];
    assert_eq!(c["verdict"], "confirmed", "{c}");
    assert_eq!(c["name"], "v");
    assert_eq!(c["producer"], "dwarfcheck synth");
    assert_eq!(c["operations"], "DW_OP_lit1, DW_OP_stack_value, DW_OP_piece 0x10");
    assert_eq!(c["rule"], "composite.part-exceeds-storage");
}

/// `dwarfcheck producers` on a manifest of that one executable: with the
/// class written up it writes the report (counts, reading, minimal case
/// re-run) and exits 0; without the write-up it exits 1 and says which
/// class lacks one.
#[test]
fn producers_report_needs_a_write_up_per_class() {
    let dir = scratch("report");
    let exe = executable(&dir);
    std::fs::write(
        dir.join("p.yaml"),
        format!("- label: synthesised\n  built_by: dwarfcheck synth\n  files: [{:?}]\n", exe.display().to_string()),
    )
    .unwrap();
    std::fs::write(
        dir.join("c.yaml"),
        format!(
            "- rule: composite.part-exceeds-storage\n  case: specs/cases/producers/llvm-rustc-dwarfcheck.yaml#{CASE}\n  reading: A 16-byte piece of an 8-byte value.\n"
        ),
    )
    .unwrap();
    let out =
        dwarfcheck(&["producers", "--quiet", "--manifest", "p.yaml", "--classes", "c.yaml", "--out", "r.md"], &dir);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(dir.join("r.md")).unwrap();
    assert!(md.contains("| synthesised | dwarfcheck synth | `dwarfcheck synth` (1) | 1 |"), "{md}");
    assert!(md.contains("### `composite.part-exceeds-storage`"), "{md}");
    assert!(md.contains("A 16-byte piece of an 8-byte value."), "{md}");
    assert!(md.contains("the reference gives `composite.part-exceeds-storage` on it"), "{md}");
    std::fs::write(dir.join("empty.yaml"), "[]\n").unwrap();
    let out = dwarfcheck(
        &["producers", "--quiet", "--manifest", "p.yaml", "--classes", "empty.yaml", "--out", "r2.md"],
        &dir,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("class `composite.part-exceeds-storage` has no write-up"));
}
