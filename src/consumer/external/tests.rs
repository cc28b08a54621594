use super::*;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::Row;
use dwarfcheck_core::target::presets;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[test]
fn readelf_view_drops_what_readelf_cannot_print() {
    // A row with an explicit undefined rule, a sign state, an expression
    // and a CFA expression: readelf shows `u` (= no rule), nothing for
    // register 34, `exp` without bytes.
    let row = Row {
        start: 0x10,
        end: 0x20,
        cfa: CfaRule::Expression { expr: vec![0x77, 0x08] },
        registers: BTreeMap::from([
            (3, RegisterRule::Undefined),
            (34, RegisterRule::RaSigned { signed: true }),
            (6, RegisterRule::Expression { expr: vec![0x77, 0x08] }),
            (16, RegisterRule::Offset { offset: -8 }),
        ]),
    };
    let mut next = row.clone();
    (next.start, next.end) = (0x20, 0x30);
    next.registers.remove(&3);
    let v = readelf_view(&RowTable { fde_offset: 0, rows: vec![row, next] });
    // The two rows differ only in what readelf cannot show: merged.
    assert_eq!(v.rows.len(), 1);
    assert_eq!((v.rows[0].start, v.rows[0].end), (0x10, 0x30));
    assert_eq!(v.rows[0].cfa, CfaRule::Expression { expr: vec![] });
    assert_eq!(
        v.rows[0].registers,
        BTreeMap::from([(6, RegisterRule::Expression { expr: vec![] }), (16, RegisterRule::Offset { offset: -8 })])
    );
}

#[test]
fn llvm_view_reencodes_expressions_minimally() {
    // DW_OP_breg7 with the displacement 8 as a padded SLEB128 (88 80 00)
    // prints as `DW_OP_breg7 RSP+8` and re-assembles to 77 08.
    let t = presets::x86_64();
    let row = Row {
        start: 0,
        end: 1,
        cfa: CfaRule::Expression { expr: vec![0x77, 0x88, 0x80, 0x00] },
        registers: BTreeMap::new(),
    };
    let v = llvm_view(&t, &RowTable { fde_offset: 0, rows: vec![row] });
    assert_eq!(v.rows[0].cfa, CfaRule::Expression { expr: vec![0x77, 0x08] });
}

#[test]
fn calibration_cies_name_one_register_each() {
    // x86-64 preset: highest register 154 (AMX tiles), so 155 CIEs of 24
    // bytes. CIE 0: length 20, id, version 4, "", address size 8, segment
    // size 0, code alignment 1, data alignment -8 (0x78), ra 1, then
    // DW_CFA_same_value 0 (08 00). CIE 130: ra 0, same_value ULEB(130) =
    // 82 01.
    let s = CfiSection::new(dwarfcheck_core::cfi::FrameKind::DebugFrame, vec![], 0, Arc::new(presets::x86_64()));
    let c = calibration_section(&s);
    let b = &c.bytes;
    assert_eq!(b.len(), 155 * 24);
    assert_eq!(&b[0..16], &[20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 4, 0, 8, 0, 1, 0x78, 1, 0x08]);
    assert_eq!(b[16], 0);
    let k = 130 * 24;
    assert_eq!(&b[k + 14..k + 18], &[0, 0x08, 0x82, 0x01]);
    assert_eq!(calibration_register("00000c30 00000014 ffffffff CIE"), Some(130));
}

/// Runs the real tools when installed (the integration test
/// tests/external_cfi.rs covers the whole suite).
#[test]
fn both_tools_learn_x86_64_names_when_installed() {
    let s = CfiSection::new(dwarfcheck_core::cfi::FrameKind::DebugFrame, vec![], 0, Arc::new(presets::x86_64()));
    for (tool, rsp, rip) in [(Tool::LlvmDwarfdump, "RSP", "RIP"), (Tool::Readelf, "rsp", "rip")] {
        let Ok(e) = External::new(tool, RunBudget::default()) else { continue };
        let n = e.names(&s).unwrap();
        // psABI DWARF numbers: rsp 7, rip 16.
        assert_eq!(n.number(rsp, "-"), Some(7), "{tool:?}");
        assert_eq!(n.number(rip, "-"), Some(16), "{tool:?}");
    }
}

/// A CFI case over a small x86-64 `.debug_frame` (one CIE, one FDE at
/// offset 0x18) whose content does not matter to a fake tool.
fn some_case() -> CfiCase {
    let s =
        CfiSection::new(dwarfcheck_core::cfi::FrameKind::DebugFrame, vec![0u8; 0x30], 0, Arc::new(presets::x86_64()));
    CfiCase {
        name: "fake".into(),
        origin: "test".into(),
        section: Arc::new(s),
        fde_offset: 0x18,
        rules: vec![],
        expect: None,
        unwind: None,
    }
}

/// An executable shell script in a fresh directory.
fn script(dir: &process::TempDir, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.path().join("tool.sh");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn a_hanging_crashing_or_babbling_tool_is_a_consumer_fault() {
    let dir = process::TempDir::new().unwrap();
    let quick = RunBudget { time: std::time::Duration::from_millis(300), output_bytes: 1 << 16 };
    for (body, expect) in [
        ("sleep 5", "time budget"),
        ("kill -9 $$", "ended abnormally"),
        ("head -c 50000000 /dev/zero; sleep 5", "bytes of output"),
        ("exit 1", "exited with status 1"),
        ("echo 'this is not a frame listing'", "unparsable output line"),
    ] {
        let tool = External::with_program(Tool::LlvmDwarfdump, script(&dir, body), quick);
        match tool.frame_table(&some_case()) {
            CfiOutcome::Failed(Failure::ConsumerFault { what }) => assert!(what.contains(expect), "{body}: {what}"),
            other => panic!("{body}: {other:?}"),
        }
    }
}

#[test]
fn a_listing_without_the_fde_says_it_is_not_shown_and_is_cached() {
    // A fake llvm-dwarfdump that prints only a section header and counts
    // its runs: the FDE is not shown (ill-formed kind), and the second case
    // of the same section is answered from the cache (still one data run,
    // after the one calibration run: two in all).
    let dir = process::TempDir::new().unwrap();
    let count = dir.path().join("runs");
    let body = format!("echo x >> {}\necho '.debug_frame contents:'", count.display());
    let tool = External::with_program(Tool::LlvmDwarfdump, script(&dir, &body), RunBudget::default());
    let case = some_case();
    for _ in 0..2 {
        let o = tool.frame_table(&case);
        assert_eq!(o.rule().map(|r| r.as_str().to_string()), Some("llvm-dwarfdump:not-shown".into()));
    }
    assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 2);
}

#[test]
fn a_target_without_an_elf_machine_is_unsupported_not_a_fault() {
    // An inline target of another architecture: no ELF file can name its
    // machine, so the tool is never run and the answer is Unsupported.
    let mut t = presets::x86_64();
    t.arch = dwarfcheck_core::target::Arch::Other;
    let mut case = some_case();
    case.section =
        Arc::new(CfiSection::new(dwarfcheck_core::cfi::FrameKind::DebugFrame, vec![0u8; 0x30], 0, Arc::new(t)));
    let tool = External::with_program(Tool::Readelf, PathBuf::from("/nonexistent/readelf"), RunBudget::default());
    assert_eq!(tool.frame_table(&case).kind(), "unsupported");
}
