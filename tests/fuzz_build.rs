//! `fuzz/build.sh` as OSS-Fuzz and ClusterFuzzLite run it, with `OUT` a
//! temporary folder (Docker is not needed): every fuzz target's binary, a
//! valid non-empty seed corpus zip, its dictionary and its `.options` file
//! must be there, and each binary must run as a libFuzzer fuzzer.
//!
//! Ignored by default: it needs cargo-fuzz and builds every fuzzer twice
//! over (minutes). `.ci/run` runs it with `--ignored`. The sanitizer is
//! `none` unless `DWARFCHECK_FUZZ_SANITIZER` says otherwise (`address`
//! needs the nightly toolchain); `DWARFCHECK_FUZZ_TARGET_DIR` keeps the
//! fuzz build between runs (default: `fuzz-build` in cargo's target
//! folder).

use dwarfcheck::fuzzing::targets::ALL;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The entries of a zip archive: every central directory record, each
/// checked against the local header it points at. Errors name what is
/// wrong.
fn zip_entries(bytes: &[u8]) -> Result<Vec<String>, String> {
    let u16_at = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    // End of central directory: signature PK\5\6, at least 22 bytes from
    // the end (a comment may follow).
    let eocd = (0..=bytes.len().saturating_sub(22))
        .rev()
        .find(|&i| bytes[i..].starts_with(b"PK\x05\x06"))
        .ok_or("no end-of-central-directory record")?;
    let count = u16_at(eocd + 10).ok_or("truncated record")?;
    let mut at = u32_at(eocd + 16).ok_or("truncated record")?;
    let mut names = Vec::new();
    for _ in 0..count {
        if !bytes.get(at..).is_some_and(|b| b.starts_with(b"PK\x01\x02")) {
            return Err(format!("no central directory header at {at}"));
        }
        let (name_len, extra, comment) = (u16_at(at + 28), u16_at(at + 30), u16_at(at + 32));
        let (Some(name_len), Some(extra), Some(comment)) = (name_len, extra, comment) else {
            return Err("truncated central directory".into());
        };
        let local = u32_at(at + 42).ok_or("truncated central directory")?;
        if !bytes.get(local..).is_some_and(|b| b.starts_with(b"PK\x03\x04")) {
            return Err(format!("no local header at {local}"));
        }
        let name = bytes.get(at + 46..at + 46 + name_len).ok_or("truncated name")?;
        names.push(String::from_utf8_lossy(name).into_owned());
        at += 46 + name_len + extra + comment;
    }
    Ok(names)
}

/// A hand-assembled archive holding one stored file `a` (the layout of
/// PKWARE's APPNOTE: local header, central directory, end record): the
/// reader finds its one entry, and refuses the same bytes cut short; and
/// an archive of two files made by the `zip` tool, where it is installed.
#[test]
fn zip_reader_reads_known_archives() {
    let mut z = Vec::new();
    let crc = 0x7a7a_0b1cu32.to_le_bytes(); // not checked by the reader
    z.extend(b"PK\x03\x04\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00");
    z.extend(crc);
    z.extend([3, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0]);
    z.extend(b"ahi\n");
    let central = z.len() as u32;
    z.extend(b"PK\x01\x02\x14\x03\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00");
    z.extend(crc);
    // Sizes, name length 1, no extra or comment, disk 0, attributes 0,
    // local header at 0.
    z.extend([3, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    z.extend(b"a");
    let size = z.len() as u32 - central;
    z.extend(b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00");
    z.extend(size.to_le_bytes());
    z.extend(central.to_le_bytes());
    z.extend([0, 0]);
    assert_eq!(zip_entries(&z), Ok(vec!["a".to_string()]));
    assert!(zip_entries(&z[..z.len() - 30]).is_err());

    let dir = std::env::temp_dir().join(format!("dwarfcheck-zip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("one"), b"1").unwrap();
    std::fs::write(dir.join("two"), vec![7u8; 5000]).unwrap();
    let made = Command::new("zip").current_dir(&dir).args(["-q", "-r", "seeds.zip", "one", "two"]).status();
    if made.is_ok_and(|s| s.success()) {
        let mut names = zip_entries(&std::fs::read(dir.join("seeds.zip")).unwrap()).unwrap();
        names.sort();
        assert_eq!(names, ["one", "two"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn fuzz_target_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("DWARFCHECK_FUZZ_TARGET_DIR") {
        return PathBuf::from(d);
    }
    let cargo_target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    cargo_target.join("fuzz-build")
}

#[test]
#[ignore = "needs cargo-fuzz and builds every fuzzer (minutes); .ci/run runs it with --ignored"]
fn build_sh_puts_every_fuzzer_with_seeds_dictionary_and_options_in_out() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("dwarfcheck-fuzz-out-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let sanitizer = std::env::var("DWARFCHECK_FUZZ_SANITIZER").unwrap_or_else(|_| "none".into());
    let status = Command::new("bash")
        .arg(root.join("fuzz/build.sh"))
        .env("OUT", &out)
        .env("SRC", root.parent().unwrap_or(root))
        .env("SANITIZER", &sanitizer)
        .env("FUZZING_ENGINE", "libfuzzer")
        .env("CARGO_BUILD_TARGET_DIR", fuzz_target_dir())
        .env("DWARFCHECK_CLI", env!("CARGO_BIN_EXE_dwarfcheck"))
        .status()
        .expect("bash runs fuzz/build.sh");
    assert!(status.success(), "fuzz/build.sh failed: {status}");
    for t in ALL {
        let name = t.name();
        let bin = out.join(name);
        let meta = std::fs::metadata(&bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        assert!(meta.len() > 0 && std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0);

        let zip = std::fs::read(out.join(format!("{name}_seed_corpus.zip"))).expect("seed corpus zip");
        let entries = zip_entries(&zip).unwrap_or_else(|e| panic!("{name}_seed_corpus.zip: {e}"));
        assert!(!entries.is_empty(), "{name}_seed_corpus.zip is empty");

        let dict = std::fs::read_to_string(out.join(format!("{name}.dict"))).expect("dictionary");
        let source = dwarfcheck::fuzzing::dict::file_of(t);
        assert_eq!(dict, std::fs::read_to_string(root.join("fuzz/dict").join(source)).unwrap(), "{name}.dict");

        let options = std::fs::read_to_string(out.join(format!("{name}.options"))).expect("options");
        let lines: Vec<&str> = options.lines().map(str::trim).collect();
        assert_eq!(lines.first(), Some(&"[libfuzzer]"), "{options}");
        assert!(lines.contains(&format!("dict = {name}.dict").as_str()), "{options}");
        for key in ["max_len", "timeout", "rss_limit_mb"] {
            let v = lines.iter().find_map(|l| l.strip_prefix(key).and_then(|r| r.trim().strip_prefix('=')));
            let n: u64 = v.and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("{name}.options: {key}"));
            assert!(n > 0, "{name}.options: {key} = {n}");
        }

        // The binary is a libFuzzer fuzzer: 200 runs from nothing, with
        // its dictionary, end cleanly.
        let run = Command::new(&bin)
            .args(["-runs=200", "-seed=1"])
            .arg(format!("-dict={}", out.join(format!("{name}.dict")).display()))
            .output()
            .expect("the fuzzer runs");
        let log = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success() && log.contains("Done 200 runs"), "{name}: {}\n{log}", run.status);
    }
    let _ = std::fs::remove_dir_all(&out);
}
