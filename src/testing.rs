//! Support for tests whose oracle is an installed file or tool (libc6-dbg,
//! llvm-19): skipped on a developer machine without it, a failure in CI.

/// Returns `found`, or, when it is `None`: panics if the `CI` environment
/// variable is set (CI installs every such input, see `.ci/setup`), else
/// prints that the test is skipped for want of `what`.
pub fn needed<T>(what: &str, found: Option<T>) -> Option<T> {
    if found.is_none() {
        if std::env::var_os("CI").is_some() {
            panic!("{what} is required in CI (install it with .ci/setup)");
        }
        eprintln!("skipped: {what} is not installed");
    }
    found
}

/// Whether the command `tool --version` runs successfully.
pub fn have_tool(tool: &str) -> bool {
    std::process::Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Every CFI case of the bundled suite (`specs/cases/cfi/`).
pub fn bundled_cfi_cases() -> Vec<crate::case::Case> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/cfi");
    let files = crate::case::yaml::find_case_files(&[dir]).expect("the bundled CFI cases are there");
    files
        .iter()
        .flat_map(|f| crate::case::yaml::load_file(f).expect("the bundled CFI cases load"))
        .filter(|c| matches!(c, crate::case::Case::Cfi(_)))
        .collect()
}
