//! IGC's own DWARF against the lowering of the vISA blob of the same
//! compile, and third-party tools on it (issue 17 item 6), on the compiles
//! `.ci/fixtures-intel` makes (skipped without ocloc; a tool's assertions
//! are skipped when the tool is missing).

use dwarfcheck::consumer::external::process::find_program;
use dwarfcheck::consumer::external::RunBudget;
use dwarfcheck::visa::igc_dwarf::{classes, compare, fixture, frame, place, read, tools};
use dwarfcheck::visa::Platform;
use std::path::Path;

fn compiles() -> Option<Vec<fixture::Compile>> {
    dwarfcheck::testing::intel_fixture_blobs()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fixtures/intel");
    Some(fixture::compiles(&root))
}

fn one(name: &str) -> Option<fixture::Compile> {
    dwarfcheck::testing::intel_fixture_blobs()?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fixtures/intel").join(name);
    Some(fixture::compile(&dir))
}

/// Every difference between IGC's DWARF and the blob is classified, on
/// every DWARF ELF of every compile; every compile has its DWARF twice
/// (INTC-embedded or zebin, and the dump) and both copies give the same
/// comparison (the zebin's only once its relocations are applied).
#[test]
fn every_difference_classified() {
    let Some(all) = compiles() else { return };
    assert!(all.len() >= 24);
    let mut points = 0;
    for c in &all {
        assert!(c.elfs.len() >= 2, "{}: {} DWARF ELFs", c.name, c.elfs.len());
        let mut by_blob = std::collections::BTreeMap::new();
        for e in &c.elfs {
            let dwarf = read::read(&e.bytes).unwrap_or_else(|m| panic!("{}: {m}", e.origin));
            let blob = fixture::blob(&e.blob).unwrap();
            let r = compare::compare(&dwarf, &blob, c.platform);
            assert!(r.variables > 0 && r.points > 0, "{}: nothing compared", e.origin);
            for d in &r.differences {
                assert!(classes::class(d.class).is_some(), "{}: unclassified {d:?}", e.origin);
            }
            // IG10 is about the dump's label, not its contents.
            let mut per = r.per_class();
            per.remove("IG10");
            let key = (r.variables, r.points, r.agree, per);
            let prev = by_blob.entry(e.blob.clone()).or_insert_with(|| key.clone());
            assert_eq!(*prev, key, "{}: differs from the other copy of the same compile", e.origin);
            points += r.points;
        }
    }
    assert!(points > 0);
}

/// By hand: lanes-tgllp-O2's `gid` is at `ed 33 25 23 17 eb ...`:
/// plus_uconst 0x17 = DWARF register 23 = r7 (IGC: rN = 16 + N) at lane 0,
/// bit 0; the `.asm` dump declares `V0044 ... (r7.0)` and GenX_IR prints
/// `V44 ... r7.0`: the comparison must find it agreeing at every point.
#[test]
fn hand_derived_gid_in_r7() {
    let Some(c) = one("lanes-tgllp-O2-intc") else { return };
    let asm = std::fs::read_dir(Path::new(&c.elfs[0].blob).parent().unwrap())
        .unwrap()
        .flatten()
        .find(|f| f.path().extension().is_some_and(|x| x == "asm"))
        .map(|f| std::fs::read_to_string(f.path()).unwrap())
        .unwrap();
    assert!(asm.contains("//.declare V0044 (52)  rf=r size=64 type=d align=16 words (r7.0)"));
    for e in &c.elfs {
        let dwarf = read::read(&e.bytes).unwrap();
        let gid = dwarf.variables.iter().find(|v| v.name == "gid").unwrap();
        assert_eq!(gid.subprogram, "lanes");
        let want = [0xed, 0x33, 0x25, 0x23, 0x17, 0xeb, 0xed, 0x37, 0x1a, 0x08, 0x20, 0x1e, 0x08, 0x20, 0xec, 0x9f];
        assert_eq!(gid.entries.len(), 1, "{}", e.origin);
        assert_eq!(gid.entries[0].expr, want);
        assert_eq!((gid.entries[0].lo, gid.entries[0].hi), (0x30, 0x2b8));
        let place::Place::Registers { pieces } = place::read(&gid.entries[0].expr) else { panic!() };
        assert_eq!((pieces[0].regno, pieces[0].bit_offset), (16 + 7, 0));
        let blob = fixture::blob(&e.blob).unwrap();
        let v44 = blob.objects[0].variables.iter().find(|v| v.name == "V44").unwrap();
        assert!(matches!(
            v44.intervals[0].location,
            dwarfcheck::visa::model::Location::Register { reg: 7, sub: 0, .. }
        ));
        let only_gid = read::IgcDwarf { variables: vec![gid.clone()], ..dwarf.clone() };
        let r = compare::compare(&only_gid, &blob, c.platform);
        assert!(r.points > 0);
        assert_eq!((r.agree, r.differences.len()), (r.points, 0), "{}", e.origin);
    }
}

/// By hand: spill-tgllp-O0's `a10` is 16 pieces on DWARF registers 0x78,
/// 0x7a, ... 0x96 (its last piece: `23 96 01`, ULEB 150 = r134), of which
/// 144..150 (r128..r134) are past TGLLP's 128 GRFs: IG9 for each of the
/// four.
#[test]
fn register_past_the_grf_is_ig9() {
    let Some(c) = one("spill-tgllp-O0-intc") else { return };
    let e = &c.elfs[0];
    let dwarf = read::read(&e.bytes).unwrap();
    let a10 = dwarf.variables.iter().find(|v| v.name == "a10").unwrap();
    let place::Place::Registers { pieces } = place::read(&a10.entries[0].expr) else { panic!() };
    let regs: Vec<u64> = pieces.iter().map(|p| p.regno).collect();
    assert_eq!(regs, (0x78..=0x96).step_by(2).collect::<Vec<u64>>());
    let only = read::IgcDwarf { variables: vec![a10.clone()], ..dwarf.clone() };
    let r = compare::compare(&only, &fixture::blob(&e.blob).unwrap(), c.platform);
    let ig9: Vec<&str> = r.differences.iter().filter(|d| d.class == "IG9").map(|d| d.detail.as_str()).collect();
    assert_eq!(ig9, ["DWARF register 144", "DWARF register 146", "DWARF register 148", "DWARF register 150"]);
}

fn tool_classes(tool: tools::Tool, program: &str, bytes: &[u8], dwarf: &read::IgcDwarf) -> Option<tools::ToolReport> {
    if tool != tools::Tool::Gimli && find_program(&[program]).is_none() {
        eprintln!("skipped: {program} is not installed");
        return None;
    }
    let r = tools::run(tool, bytes, dwarf, RunBudget::default());
    assert_eq!(r.error, None);
    for id in r.classes.keys() {
        assert!(classes::class(id).is_some_and(|c| c.1 == classes::Kind::ToolFailure), "{id}");
    }
    Some(r)
}

/// GDB on stackcall-tgllp-O0's dump: the first local of each of the three
/// subprograms is `DW_OP_regx 141` (r125, IGC's %fp) then
/// DW_OP_INTEL_push_bit_piece_stack: IT8 once per `info scope`.
#[test]
fn gdb_bad_register_is_it8() {
    let Some(c) = one("stackcall-tgllp-O0-intc") else { return };
    let e = c.elfs.iter().find(|e| e.origin.ends_with(".elf")).unwrap();
    let d = read::read(&e.bytes).unwrap();
    assert!(d.variables[0].entries[0].expr.starts_with(&[0x90, 0x8d, 0x01, 0x08, 0x80, 0x08, 0x40, 0xec]));
    if let Some(r) = tool_classes(tools::Tool::Gdb, "gdb", &e.bytes, &d) {
        assert_eq!(r.classes.get("IT8"), Some(&3), "{r:?}");
    }
}

/// The third parties on lanes-tgllp-O2 (zebin): the dump ELF (relocations
/// x86-64's) and the zebin itself (e_machine 205). Expected from the
/// expressions: 3 of its 13 location entries use DW_OP_INTEL_* (`gid`,
/// `lane`, `v`: one entry each); the other 10 are DW_OP_implicit_value or
/// DW_OP_reg19 + DW_OP_bit_piece.
#[test]
fn third_parties_classified() {
    let Some(c) = one("lanes-tgllp-O2-zebin") else { return };
    let dump = c.elfs.iter().find(|e| e.origin.ends_with(".elf")).unwrap();
    let zebin = c.elfs.iter().find(|e| e.origin.ends_with(".bin")).unwrap();
    let dd = read::read(&dump.bytes).unwrap();
    let zd = read::read(&zebin.bytes).unwrap();
    assert_eq!(dd.variables.iter().map(|v| v.entries.len()).sum::<usize>(), 13);
    use tools::Tool::*;
    // gimli: the 3 INTEL entries fail (IT5), the 10 others decode.
    let g = tool_classes(Gimli, "", &dump.bytes, &dd).unwrap();
    assert_eq!((g.classes.get("IT5"), g.decoded), (Some(&3), (10, 13)));
    assert!(g.ops.0 < g.ops.1);
    if let Some(r) = tool_classes(LlvmDwarfdump, "llvm-dwarfdump", &dump.bytes, &dd) {
        assert_eq!(r.classes.get("IT1"), Some(&3), "{r:?}");
        assert_eq!(r.classes.get("IT2"), None);
    }
    if let Some(r) = tool_classes(LlvmDwarfdump, "llvm-dwarfdump", &zebin.bytes, &zd) {
        // No relocation: every location list reads offset 0, the first
        // list (`gid`'s, INTEL), once per variable with a list.
        assert!(r.classes.get("IT2").is_some_and(|&n| n > 0), "{r:?}");
        assert!(r.classes.get("IT1").is_some_and(|&n| n >= 3), "{r:?}");
    }
    if let Some(r) = tool_classes(Readelf, "readelf", &dump.bytes, &dd) {
        assert_eq!(r.classes.get("IT3"), Some(&3), "{r:?}");
        assert_eq!(r.classes.get("IT4"), None);
    }
    if let Some(r) = tool_classes(Readelf, "readelf", &zebin.bytes, &zd) {
        assert!(r.classes.get("IT4").is_some_and(|&n| n > 0), "{r:?}");
    }
    if let Some(r) = tool_classes(Gdb, "gdb", &dump.bytes, &dd) {
        // `out` and `in` (optimised out) and `gid` before the stop.
        assert_eq!(r.classes.get("IT7"), Some(&1), "{r:?}");
        assert!(r.locals < dd.variables.len() + dd.without_location, "{r:?}");
    }
    if let Some(r) = tool_classes(Gdb, "gdb", &zebin.bytes, &zd) {
        assert_eq!((r.classes.get("IT6"), r.locals), (Some(&1), 0), "{r:?}");
    }
}

/// IGC's `.debug_frame` against the blob's CallFrameInfo on the stack-call
/// compiles: the return address and caller-BE_FP slots IGC's rows give
/// are the blob's at every point inside a BE_FP interval (no IG13), the
/// kernel's CFA is the frame base, the functions' is the caller's frame
/// base (IG11), and the pcs outside the blob's BE_FP intervals are IG12.
/// Read with the other family's BE_FP unit (16 bytes against 1), the
/// slots no longer agree: the comparison pins the unit per platform.
#[test]
fn frames_agree_with_the_blob_on_every_slot() {
    for name in ["stackcall-tgllp-O0-zebin", "stackcall-dg2-g10-O0-intc"] {
        let Some(c) = one(name) else { return };
        for e in &c.elfs {
            let section = read::debug_frame(&e.bytes).expect("IGC writes a .debug_frame");
            let blob = fixture::blob(&e.blob).unwrap();
            let r = frame::compare_frames(&section, &blob, c.platform);
            let per = r.per_class();
            assert_eq!(r.fdes, 3, "{}: one FDE per object", e.origin);
            for d in &r.differences {
                assert!(classes::class(d.class).is_some(), "{}: unclassified {d:?}", e.origin);
                assert!(["IG11", "IG12"].contains(&d.class), "{}: {d:?}", e.origin);
            }
            // Two functions: each point inside their BE_FP interval has an
            // IG11 CFA; the kernel's CFA agrees.
            assert!(per.get("IG11").copied().unwrap_or(0) > 0, "{}: {per:?}", e.origin);
            assert!(r.agree > r.points / 2, "{}: {} of {}", e.origin, r.agree, r.points);
            let other = if c.platform == Platform::Tgllp { Platform::Dg2 } else { Platform::Tgllp };
            let wrong = frame::compare_frames(&section, &blob, other);
            assert!(wrong.per_class().get("IG13").copied().unwrap_or(0) > 0, "{}: {:?}", e.origin, wrong.per_class());
        }
    }
}
