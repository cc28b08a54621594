//! The published crates carry what their build scripts read: `cargo
//! package` (without verification; `.ci/run` verifies) of the workspace
//! gives a `dwarfcheck` crate with every `specs/rules/*.yaml` and
//! `specs/cases/**` file and a `dwarfcheck-core` crate with every rule
//! file under `rules/`, each listed by `tar` from the `.crate` archives
//! and compared with the checkout.

use dwarfcheck::consumer::external::process::{run, RunBudget, TempDir};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The paths of the files in the `.crate` archive `file`, without the
/// `NAME-VERSION/` directory they sit in.
fn crate_files(dir: &Path, file: &Path) -> Vec<String> {
    let budget = RunBudget { time: Duration::from_secs(60), output_bytes: 16 << 20 };
    let out = run(Path::new("tar"), &[OsStr::new("-tzf"), file.as_os_str()], dir, budget).expect("tar runs");
    assert_eq!(out.code, 0, "{}", out.text);
    out.text.lines().filter_map(|l| l.split_once('/').map(|(_, p)| p.to_string())).collect()
}

/// Every file under `dir` of the checkout (recursively), relative to
/// `strip`, with `/` separators.
fn checkout_files(dir: &Path, strip: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(strip).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

#[test]
fn packages_carry_the_rules_and_the_case_suite() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = TempDir::new().unwrap();
    let cargo = PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    let manifest = root.join("Cargo.toml");
    let target = tmp.path().join("target");
    let args: Vec<&OsStr> = [
        OsStr::new("package"),
        OsStr::new("--workspace"),
        OsStr::new("--exclude"),
        OsStr::new("toy_consumer"),
        OsStr::new("--no-verify"),
        OsStr::new("--allow-dirty"),
        OsStr::new("--manifest-path"),
        manifest.as_os_str(),
        OsStr::new("--target-dir"),
        target.as_os_str(),
    ]
    .to_vec();
    let budget = RunBudget { time: Duration::from_secs(300), output_bytes: 16 << 20 };
    let out = run(&cargo, &args, tmp.path(), budget).expect("cargo runs");
    assert_eq!(out.code, 0, "cargo package failed:\n{}", out.text);

    let harness = crate_files(tmp.path(), &target.join("package/dwarfcheck-0.1.0.crate"));
    let mut wanted = checkout_files(&root.join("specs/rules"), &root);
    wanted.extend(checkout_files(&root.join("specs/cases"), &root));
    wanted.extend(["build.rs", "Cargo.lock", "src/conformance/mod.rs"].map(String::from));
    let missing: Vec<&String> = wanted.iter().filter(|w| !harness.contains(w)).collect();
    assert!(missing.is_empty(), "the dwarfcheck package lacks {missing:?}");
    // The case suite the library embeds is what the package carries.
    for (path, _) in dwarfcheck::conformance::suite::bundled_sources() {
        assert!(harness.contains(&format!("specs/cases/{path}")), "{path}");
    }
    // Only what the published crate needs: no fixtures, corpus or docs.
    let extra: Vec<&String> = harness
        .iter()
        .filter(|f| ["specs/fixtures/", "corpus/", "docs/", "tests/"].iter().any(|p| f.starts_with(p)))
        .collect();
    assert!(extra.is_empty(), "{extra:?}");

    let core = crate_files(tmp.path(), &target.join("package/dwarfcheck-core-0.1.0.crate"));
    let rules = checkout_files(&root.join("specs/rules"), &root.join("specs"));
    assert!(rules.len() > 10);
    let missing: Vec<&String> = rules.iter().filter(|r| !core.contains(r)).collect();
    assert!(missing.is_empty(), "the dwarfcheck-core package lacks {missing:?}");
}
