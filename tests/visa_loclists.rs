//! vISA variables as location lists over Gen ranges (src/visa/loclist.rs):
//! the ranges of a scheduled index map derived by hand, and for every
//! committed blob and every blob `.ci/fixtures-intel` dumps, every point of
//! every list evaluated by the reference and the fast evaluator, which must
//! agree and, where one entry covers the point, give the place the decoded
//! location names (an oracle from the model alone, not the expression).

use dwarfcheck::consumer::builtin::{fast_outcome, reference_outcome};
use dwarfcheck::visa::detect::detect;
use dwarfcheck::visa::loclist::{code_end, covering, gen_ranges, lower_lists, point_case, points};
use dwarfcheck::visa::lower::BE_FP_VALUE;
use dwarfcheck::visa::model::{Blob, Interval, Location, MapEntry, RegFile};
use dwarfcheck::visa::Platform;
use dwarfcheck_core::outcome::location::SingleLocation;
use dwarfcheck_core::outcome::{Outcome, Source};
use std::collections::BTreeSet;
use std::path::Path;

fn blob(path: &Path) -> Blob {
    detect(&std::fs::read(path).unwrap()).chosen().unwrap_or_else(|f| panic!("{}: {f:?}", path.display()))
}

fn committed(name: &str) -> Blob {
    blob(&Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/fixtures/intel").join(name))
}

/// Where the decoded location says the variable is: IGC's DWARF numbering
/// (r N is 16 + N, a0 272, f N 288 + N) and the sub-register's bits, or the
/// scratch byte (absolute, or BE_FP's value in the state plus the offset).
fn expected(location: &Location, platform: Platform) -> Source {
    match *location {
        Location::Register { file, reg, sub } => {
            let base = match file {
                RegFile::Grf => 16,
                RegFile::Address => 272,
                RegFile::Flag => 288,
            };
            Source::Register { regno: base + u64::from(reg), bit_offset: u64::from(sub) * 8 }
        }
        Location::Memory { absolute, offset, .. } => {
            let base = if absolute { 0 } else { i64::from(BE_FP_VALUE) * i64::from(platform.be_fp_unit()) };
            let byte = u128::try_from(base + i64::from(offset)).expect("a scratch address");
            Source::Memory { aspace: 1, bit_addr: byte * 8, thread: None, lane: None }
        }
    }
}

/// (lists, ranges, points, points checked against the decoded location).
fn check(name: &str, blob: &Blob, platform: Platform) -> (usize, usize, usize, usize) {
    let lists = lower_lists(blob, platform);
    let (mut ranges, mut n, mut oracle) = (0, 0, 0);
    for l in &lists.lists {
        ranges += l.entries.len();
        for pc in points(l) {
            let case = point_case(&lists, l, pc, platform);
            let (r, _) = reference_outcome(&case);
            assert_eq!(r, fast_outcome(&case), "{name}: {} at {pc:#x}", l.variable);
            n += 1;
            let cover: Vec<_> = covering(l, pc).collect();
            if let [one] = &cover[..] {
                let Outcome::Location(loc) = &r else { panic!("{name}: {} at {pc:#x}: {r:?}", l.variable) };
                assert_eq!(
                    loc.places,
                    vec![SingleLocation::Simple(expected(&one.decoded.location, platform))],
                    "{name}: {} at {pc:#x}",
                    l.variable
                );
                oracle += 1;
            }
        }
    }
    eprintln!(
        "{name}: {} lists, {ranges} ranges, {n} points, {oracle} against the decoded location",
        lists.lists.len()
    );
    (lists.lists.len(), ranges, n, oracle)
}

#[test]
fn scheduled_index_map_gives_one_block_per_mapped_index() {
    // vISA 0 -> Gen 0, 1 -> 16, 2 -> 48, 3 -> 32 (3 scheduled before 2);
    // code ends at 64. Interval 1 ..= 2: vISA 1 owns Gen 16 up to the next
    // mapped offset, 32; vISA 2 owns 48 up to the code end, 64.
    let mut b = committed("stackcall-tgllp-O0.dbg");
    b.objects.truncate(1);
    let o = &mut b.objects[0];
    o.index_map = [(0, 0), (1, 16), (2, 48), (3, 32)].map(|(visa, gen)| MapEntry { at: 0, visa, gen }).to_vec();
    o.frame.befp = None;
    let gens: BTreeSet<u32> = o.index_map.iter().map(|e| e.gen).collect();
    let loc = Location::Register { file: RegFile::Grf, reg: 2, sub: 0 };
    let iv = |start, end| Interval { at: 0, start, end, virtual_type: 2, physical_type: 2, location: loc };
    assert_eq!(code_end(&b, 0), 64);
    let o = &b.objects[0];
    assert_eq!(gen_ranges(o, &gens, &iv(1, 2), 64), vec![(16, 32), (48, 64)]);
    // 0 ..= 3 covers all four blocks, merged into one.
    assert_eq!(gen_ranges(o, &gens, &iv(0, 3), 64), vec![(0, 64)]);
    // vISA 5 ..= 9 has no Gen code; 3 > 1 is empty.
    assert!(gen_ranges(o, &gens, &iv(5, 9), 64).is_empty());
    assert!(gen_ranges(o, &gens, &iv(3, 1), 64).is_empty());
}

#[test]
fn stackcall_o0_v33_covers_the_kernel() {
    // V33 (interval at 6b8: vISA 0 ..= 219 in r127.0) is live over every
    // mapped index of the kernel, whose code ends where blend starts
    // (relocation offset 4160): one range [0, 4160), regx 143.
    let b = committed("stackcall-tgllp-O0.dbg");
    assert_eq!(code_end(&b, 0), 4160);
    let lists = lower_lists(&b, Platform::Tgllp);
    let v33 = lists.lists.iter().find(|l| l.object == 0 && l.variable == "V33").unwrap();
    assert_eq!(v33.entries.len(), 1);
    assert_eq!(v33.entries[0].range, (0, 4160));
    assert_eq!(v33.entries[0].expr, [0x90, 0x8f, 0x01]);
    // Points every 8 bytes: 520 of them.
    assert_eq!(points(v33).count(), 520);
}

#[test]
fn every_committed_blob_agrees_at_every_point() {
    for n in ["stackcall-tgllp-O0.dbg", "stackcall-tgllp-O2.dbg", "lanes-tgllp-O2.dbg"] {
        let (lists, ranges, points, oracle) = check(n, &committed(n), Platform::Tgllp);
        assert!(lists > 0 && ranges > 0 && points > 0 && oracle > 0, "{n}");
    }
}

#[test]
fn every_dumped_blob_agrees_at_every_point() {
    let Some(list) = dwarfcheck::testing::intel_fixture_blobs() else { return };
    let mut total = (0, 0, 0, 0);
    for (path, platform) in list {
        let name = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&path).display().to_string();
        let (a, b, c, d) = check(&name, &blob(&path), platform);
        total = (total.0 + a, total.1 + b, total.2 + c, total.3 + d);
    }
    eprintln!(
        "total: {} lists, {} ranges, {} points, {} against the decoded location",
        total.0, total.1, total.2, total.3
    );
    assert!(total.2 > 0 && total.3 > 0);
}
