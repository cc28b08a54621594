//! Third-party consumers on real binaries: gimli against the reference on
//! libc6-dbg and system libraries (surveys, run with `--ignored`), and gimli's
//! row table of an AArch64 object assembled by llvm-mc, derived by hand.

use dwarfcheck::elf::{extract, largest_debug_file, Options};
use dwarfcheck_core::outcome::Failure;
use std::path::{Path, PathBuf};

const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

#[test]
#[ignore = "survey: gimli outcome kinds over the largest debug file, libc.so.6 and libstdc++.so.6"]
fn gimli_survey() {
    use dwarfcheck::consumer::{gimli::Gimli, Consumer};
    use std::collections::BTreeMap;
    let Some(path) = dwarfcheck::testing::needed("libc6-dbg", largest_debug_file()) else { return };
    let x = extract(&path, &Options::default()).unwrap();
    let t = std::time::Instant::now();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for c in &x.exprs {
        let o = Gimli.evaluate(c);
        let k = match &o {
            dwarfcheck_core::outcome::Outcome::Failed(Failure::Unsupported { what }) => format!("unsupported: {what}"),
            o => match o.rule() {
                Some(r) => format!("{} {r}", o.kind()),
                None => o.kind().to_string(),
            },
        };
        if std::env::var("PROBE").is_ok_and(|p| k.contains(&p)) {
            println!("{k}: {} {:02x?}", c.origin, &c.expr[..]);
        }
        *kinds.entry(k).or_default() += 1;
    }
    let el = t.elapsed();
    println!("{} exprs in {el:?} ({:?}/expr)", x.exprs.len(), el / x.exprs.len() as u32);
    for (k, n) in kinds {
        println!("  {n:8} {k}");
    }
    for lib in [LIBC, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"] {
        let x = extract(Path::new(lib), &Options::default()).unwrap();
        let t = std::time::Instant::now();
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        let mut rows = 0;
        for c in &x.cfi {
            let o = Gimli.frame_table(c);
            if let dwarfcheck_core::outcome::CfiOutcome::Table(t) = &o {
                rows += t.rows.len();
            }
            *kinds.entry(format!("{} {:?}", o.kind(), o.rule())).or_default() += 1;
        }
        println!("{lib}: {} FDEs, {rows} rows in {:?}: {kinds:?}", x.cfi.len(), t.elapsed());
    }
}

#[test]
#[ignore = "survey: gimli against the reference over the largest debug file"]
fn gimli_vs_reference_survey() {
    use dwarfcheck::consumer::{gimli::Gimli, Consumer};
    use dwarfcheck_core::outcome::Outcome;
    use std::collections::BTreeMap;
    let Some(path) = std::env::var_os("DWARFCHECK_SURVEY_FILE").map(PathBuf::from).or_else(largest_debug_file) else {
        return;
    };
    let x = extract(&path, &Options::default()).unwrap();
    let mut cats: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for c in &x.exprs {
        let g = Gimli.evaluate(c);
        let r = dwarfcheck::consumer::builtin::with_reference_state(&c.ctx, |state| {
            dwarfcheck_reference::expr::evaluate(&c.expr, state)
        });
        let same = match (&g, &r) {
            (Outcome::Value(_) | Outcome::Location(_), _) => g == r,
            _ => g.kind() == r.kind(),
        };
        let key = if same {
            format!("agree {}", r.kind())
        } else {
            let gk = match &g {
                Outcome::Failed(Failure::Unsupported { what }) => format!("unsupported({what})"),
                o => format!("{} {}", o.kind(), o.rule().map(|r| r.to_string()).unwrap_or_default()),
            };
            format!("gimli {gk} / reference {} {}", r.kind(), r.rule().map(|r| r.to_string()).unwrap_or_default())
        };
        let e = cats.entry(key).or_insert((0, String::new()));
        if e.0 == 0 {
            e.1 = format!("{} {:02x?}\n      gimli {g}\n      ref   {r}", c.origin, &c.expr[..]);
        }
        e.0 += 1;
    }
    for (k, (n, ex)) in cats {
        println!("{n:8} {k}\n      e.g. {ex}");
    }
}

#[test]
#[ignore = "survey: gimli against the reference on the FDEs of libc.so.6, libstdc++.so.6 and libLLVM"]
fn gimli_vs_reference_cfi_survey() {
    use dwarfcheck::consumer::{gimli::Gimli, Consumer};
    use dwarfcheck_core::outcome::CfiOutcome;
    use std::collections::BTreeMap;
    for lib in [LIBC, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1"] {
        let Ok(x) = extract(Path::new(lib), &Options { expressions: false, ..Options::default() }) else { continue };
        let mut cats: BTreeMap<String, (usize, String)> = BTreeMap::new();
        for c in &x.cfi {
            let g = Gimli.frame_table(c);
            let r = dwarfcheck::consumer::builtin::reference_table(c);
            let key = match (&g, &r) {
                (CfiOutcome::Table(a), CfiOutcome::Table(b)) if a == b => "agree table".to_string(),
                (CfiOutcome::Table(_), CfiOutcome::Table(_)) => "tables differ".to_string(),
                _ if g.kind() == r.kind() => format!("agree {}", g.kind()),
                _ => format!("gimli {} {:?} / reference {} {:?}", g.kind(), g.rule(), r.kind(), r.rule()),
            };
            let e = cats.entry(key).or_insert((0, String::new()));
            if e.0 == 0 {
                e.1 = format!("{}\n      gimli {g:?}\n      ref   {r:?}", c.origin);
            }
            e.0 += 1;
        }
        println!("{lib}: {} FDEs", x.cfi.len());
        for (k, (n, ex)) in cats {
            let ex: String = ex.chars().take(1500).collect();
            println!("{n:8} {k}\n      e.g. {ex}");
        }
    }
}

#[test]
fn aarch64_object_negate_ra_state() {
    // An AArch64 object assembled by llvm-mc (skipped if not installed):
    // paciasp; stp x29, x30, [sp, #-16]!; ... with the CFI directives below.
    use dwarfcheck::consumer::{gimli::Gimli, Consumer};
    use dwarfcheck_core::outcome::{CfaRule, CfiOutcome, RegisterRule};
    use std::collections::BTreeMap;
    let mc = Path::new("/usr/lib/llvm-19/bin/llvm-mc");
    if dwarfcheck::testing::needed("llvm-19 (llvm-mc)", mc.exists().then_some(())).is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dwarfcheck-a64-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("a.s");
    let obj = dir.join("a.o");
    std::fs::write(
        &src,
        "\t.text\nf:\n\t.cfi_startproc\n\tpaciasp\n\t.cfi_negate_ra_state\n\tstp x29, x30, [sp, #-16]!\n\
         \t.cfi_def_cfa_offset 16\n\t.cfi_offset w30, -8\n\t.cfi_offset w29, -16\n\tmov x29, sp\n\
         \tldp x29, x30, [sp], #16\n\tautiasp\n\tret\n\t.cfi_endproc\n",
    )
    .unwrap();
    let ok = std::process::Command::new(mc)
        .args(["-triple=aarch64-linux-gnu", "-filetype=obj", "-o"])
        .arg(&obj)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "llvm-mc could not assemble the test input");
    let x = extract(&obj, &Options::default()).expect("aarch64 object extracts");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(x.counts.eh_frame_fdes, 1);
    assert_eq!(x.cfi[0].section.target.name, "aarch64");
    let CfiOutcome::Table(t) = Gimli.frame_table(&x.cfi[0]) else { panic!("no table") };
    // Hand-derived from the directives: CIE CFA = sp+0 (reg 31); after 4
    // bytes the RA is signed (RA_SIGN_STATE, reg 34); after 8 bytes CFA =
    // sp+16, x30 at CFA-8, x29 at CFA-16; the function is 0x18 bytes.
    let s = t.rows[0].start;
    let rel: Vec<(u64, u64, CfaRule, BTreeMap<u64, RegisterRule>)> =
        t.rows.iter().map(|r| (r.start - s, r.end - s, r.cfa.clone(), r.registers.clone())).collect();
    let cfa = |o| CfaRule::RegOffset { register: 31, offset: o, aspace: 0 };
    let signed = (34, RegisterRule::RaSigned { signed: true });
    assert_eq!(
        rel,
        vec![
            (0, 4, cfa(0), BTreeMap::new()),
            (4, 8, cfa(0), BTreeMap::from([signed.clone()])),
            (
                8,
                0x18,
                cfa(16),
                BTreeMap::from([
                    signed,
                    (30, RegisterRule::Offset { offset: -8 }),
                    (29, RegisterRule::Offset { offset: -16 })
                ])
            ),
        ]
    );
}
