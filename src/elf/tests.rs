//! Extraction tests on real files of this machine and on garbage.

use super::largest_debug_file;
use super::{extract, extract_bytes, Options};
use dwarfcheck_core::outcome::Failure;
use std::path::{Path, PathBuf};

const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

/// Number of FDEs `readelf --debug-dump=frames` lists for `path`, if
/// readelf is installed (an independent oracle).
fn readelf_fdes(path: &Path) -> Option<usize> {
    let out = std::process::Command::new("readelf").arg("--debug-dump=frames").arg(path).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().filter(|l| l.contains(" FDE cie=")).count())
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let opts = Options::default();
    assert!(extract_bytes(b"", "empty", &opts).is_err());
    assert!(extract_bytes(b"this is not an ELF file at all", "text", &opts).is_err());
    let mut fake = b"\x7fELF\x02\x01\x01".to_vec();
    fake.resize(200, 0xff);
    assert!(extract_bytes(&fake, "bad header", &opts).is_err());
    assert!(extract(Path::new("/nonexistent/file"), &opts).is_err());
}

#[test]
fn truncated_and_corrupted_real_file_never_panics() {
    let Ok(data) = std::fs::read(LIBC) else { return };
    let opts = Options::default();
    for len in [64usize, 1000, 5000, data.len() / 2] {
        let _ = extract_bytes(&data[..len.min(data.len())], "truncated", &opts);
    }
    // Flip bytes across the file, including section headers and .eh_frame.
    let mut bad = data.clone();
    for i in (0..bad.len()).step_by(977) {
        bad[i] ^= 0x5a;
    }
    let _ = extract_bytes(&bad, "corrupted", &opts);
}

#[test]
fn corrupted_debug_info_never_panics() {
    // Bytes flipped inside the DWARF sections of a split debug file: the
    // walk must end with cases and warnings or an error, never a panic.
    let Some(path) = crate::testing::needed("libc6-dbg", largest_debug_file()) else { return };
    let data = std::fs::read(&path).unwrap();
    let rounds: u64 = std::env::var("DWARFCHECK_CORRUPT_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    for round in 0..rounds {
        let mut bad = data.clone();
        let mut z = round;
        for _ in 0..200 {
            z = dwarfcheck_core::context::synthetic::mix(z);
            // Leave the ELF header and program headers alone.
            let i = 0x1000 + (z as usize) % (bad.len() - 0x1000);
            bad[i] = (z >> 32) as u8;
        }
        let _ = extract_bytes(&bad, "corrupted", &Options::default());
    }
}

#[test]
fn libc_eh_frame_fdes_match_readelf() {
    let path = Path::new(LIBC);
    if !path.exists() {
        return;
    }
    let x = extract(path, &Options::default()).expect("libc.so.6 extracts");
    assert_eq!(x.counts.expr_cases(), 0, "libc.so.6 has no .debug_info");
    assert!(x.counts.eh_frame_fdes > 1000, "{:?}", x.counts);
    assert_eq!(x.cfi.len(), x.counts.fdes());
    assert!(x.warnings.is_empty(), "{:?}", x.warnings);
    if let Some(n) = readelf_fdes(path) {
        assert_eq!(x.counts.fdes(), n);
    }
    // Shared section, datarel base = .got.
    let s = &x.cfi[0].section;
    assert!(x.cfi.iter().all(|c| std::sync::Arc::ptr_eq(&c.section, s)));
    assert!(s.data_base.is_some() && s.text_base.is_some());
}

#[test]
fn own_test_executable_has_locations() {
    let exe = std::env::current_exe().expect("current exe");
    let x = extract(&exe, &Options { frames: false, ..Options::default() }).expect("own executable extracts");
    assert!(x.counts.units > 0);
    assert!(x.counts.expr_cases() > 100, "{:?}", x.counts);
    assert_eq!(x.exprs.len(), x.counts.expr_cases());
    // rustc emits DWARF 4 with .debug_loc for this optimised test build.
    assert!(x.counts.loclist_entries > 0, "no .debug_loc entries: {:?}", x.counts);
    for c in &x.exprs {
        let cu = c.ctx.cu.as_ref().expect("every case has its unit");
        assert!(cu.address_size == 8 && (2..=5).contains(&cu.version));
        assert_eq!(c.ctx.synthetic, Some(super::DEFAULT_SEED));
    }
}

#[test]
fn compressed_sections_give_the_same_cases() {
    // Oracle: objcopy's zlib compression must not change what is extracted.
    let Some(path) = crate::testing::needed("libc6-dbg", largest_debug_file()) else { return };
    let dir = std::env::temp_dir().join(format!("dwarfcheck-elf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let z = dir.join("z.debug");
    let ok = std::process::Command::new("objcopy")
        .arg("--compress-debug-sections=zlib")
        .arg(&path)
        .arg(&z)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return; // objcopy not installed
    }
    let opts = Options::default();
    let a = extract(&path, &opts).unwrap();
    let b = extract(&z, &opts).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(std::fs::metadata(&path).unwrap().len() > 0);
    assert_eq!(a.counts, b.counts);
    assert!(a.exprs.iter().zip(&b.exprs).all(|(x, y)| x.expr == y.expr && x.name == y.name));
}

#[test]
fn split_debug_file_has_loclists_and_base_types() {
    let Some(path) = crate::testing::needed("libc6-dbg", largest_debug_file()) else { return };
    let x = extract(&path, &Options::default()).expect("split debug file extracts");
    assert!(x.counts.loclist_entries > 1000, "{:?}", x.counts);
    assert!(x.counts.expressions > 1000, "{:?}", x.counts);
    assert_eq!(x.counts.eh_frame_fdes, 0, ".eh_frame is NOBITS in a split debug file");
    // Every DW_OP_const_type / regval_type / deref_type / convert operand
    // must be answerable by the case's context.
    let mut typed = 0;
    for c in &x.exprs {
        let cu = c.ctx.cu.as_ref().unwrap();
        if c.expr.iter().any(|b| (0xa4..=0xa6).contains(b)) && !cu.base_types.is_empty() {
            typed += 1;
        }
    }
    assert!(typed > 0, "no typed expressions found");
}

#[test]
#[ignore = "survey: prints counts for the files of this machine"]
fn survey() {
    let mut files: Vec<PathBuf> = vec![LIBC.into(), "/usr/lib/x86_64-linux-gnu/libstdc++.so.6".into()];
    let mut dbg = Vec::new();
    for dir in std::fs::read_dir("/usr/lib/debug/.build-id").into_iter().flatten().flatten() {
        for f in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|e| e == "debug") {
                dbg.push(f.path());
            }
        }
    }
    dbg.sort();
    let t = std::time::Instant::now();
    let mut total = super::Counts::default();
    let mut warnings = 0;
    for p in &dbg {
        match extract(p, &Options::default()) {
            Ok(x) => {
                total += x.counts;
                warnings += x.warnings.len();
                for w in x.warnings.iter().take(2) {
                    println!("warning: {w}");
                }
            }
            Err(e) => println!("error: {e:#}"),
        }
    }
    println!("{} libc6-dbg files: {total:?}, {warnings} warnings, {:?}", dbg.len(), t.elapsed());
    files.extend(largest_debug_file());
    files.extend(std::env::current_exe().ok());
    for p in files {
        let t = std::time::Instant::now();
        match extract(&p, &Options::default()) {
            Ok(x) => {
                let el = t.elapsed();
                let ctxs: std::collections::HashSet<*const dwarfcheck_core::context::Context> =
                    x.exprs.iter().map(|c| std::sync::Arc::as_ptr(&c.ctx)).collect();
                println!(
                    "{}: {:?} warnings {:?} in {el:?}, {} distinct contexts",
                    p.display(),
                    x.counts,
                    x.warnings,
                    ctxs.len()
                );
            }
            Err(e) => println!("{}: error {e:#}", p.display()),
        }
    }
}

#[test]
#[ignore = "survey: gimli outcome kinds over the largest debug file, libc.so.6 and libstdc++.so.6"]
fn gimli_survey() {
    use crate::consumer::{gimli::Gimli, Consumer};
    use std::collections::BTreeMap;
    let Some(path) = crate::testing::needed("libc6-dbg", largest_debug_file()) else { return };
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
    use crate::consumer::{gimli::Gimli, Consumer};
    use dwarfcheck_core::outcome::Outcome;
    use std::collections::BTreeMap;
    let Some(path) = std::env::var_os("DWARFCHECK_SURVEY_FILE").map(PathBuf::from).or_else(largest_debug_file) else {
        return;
    };
    let x = extract(&path, &Options::default()).unwrap();
    let mut cats: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for c in &x.exprs {
        let g = Gimli.evaluate(c);
        let r = crate::consumer::builtin::with_reference_state(&c.ctx, |state| {
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
    use crate::consumer::{gimli::Gimli, Consumer};
    use dwarfcheck_core::outcome::CfiOutcome;
    use std::collections::BTreeMap;
    for lib in [LIBC, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1"] {
        let Ok(x) = extract(Path::new(lib), &Options { expressions: false, ..Options::default() }) else { continue };
        let mut cats: BTreeMap<String, (usize, String)> = BTreeMap::new();
        for c in &x.cfi {
            let g = Gimli.frame_table(c);
            let r = crate::consumer::builtin::reference_table(c);
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
    use crate::consumer::{gimli::Gimli, Consumer};
    use dwarfcheck_core::outcome::{CfaRule, CfiOutcome, RegisterRule};
    use std::collections::BTreeMap;
    let mc = Path::new("/usr/lib/llvm-19/bin/llvm-mc");
    if crate::testing::needed("llvm-19 (llvm-mc)", mc.exists().then_some(())).is_none() {
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
