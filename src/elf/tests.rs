//! Extraction tests on real files of this machine and on garbage.

use super::largest_debug_file;
use super::{extract, extract_bytes, Options};
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
    let dbg = super::debug_files();
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
fn intel_gpu_machines_choose_the_intel_profile() {
    // 0xb6: ocloc's INTC-container kernels; 205: EM_INTELGT (zebin).
    for m in [0xb6u16, 205] {
        let v = super::vendor_for_machine(m).expect("an Intel GPU machine");
        assert_eq!(v.name, "intel");
        assert!(v.intel && !v.hetero_2020);
    }
    // x86-64 (62), AArch64 (183), AMDGPU (224) keep their preset's profile.
    for m in [62u16, 183, 224] {
        assert_eq!(super::vendor_for_machine(m), None, "machine {m}");
    }
}
