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

/// A consumer's verdict counts over `cases` (the runner's, against the
/// reference and fast) and each case it disagrees with or gives no answer
/// to (a fault), by name, with the class
/// [`crate::consumer::Consumer::failure_class`] gives it (`None`:
/// unclassified), in failure order.
pub type Judged = (std::collections::BTreeMap<crate::runner::compare::Verdict, usize>, Vec<(String, Option<String>)>);

/// Runs `consumer` over `cases` as `dwarfcheck run` does and returns its
/// [`Judged`] verdicts and disagreement classes.
pub fn judged(consumer: Box<dyn crate::consumer::Consumer>, cases: &[crate::case::Case]) -> Judged {
    use crate::case::Case;
    use crate::consumer::builtin::{reference_table, Fast, Reference};
    use crate::consumer::Answer;
    use crate::runner::{Finding, Options};
    let name = consumer.name().to_string();
    let others = vec![consumer];
    let s = crate::runner::run(cases, &Reference, &Fast, &others, &Options { keep_details: 0, ..Default::default() });
    let k = &others[0];
    let classes = s
        .failures
        .iter()
        .filter(|f| matches!(f.finding, Finding::Consumer { .. } | Finding::ConsumerFault { .. }))
        .map(|f| {
            let class = match cases.iter().find(|c| c.name() == f.case) {
                Some(case @ Case::Cfi(c)) => {
                    let (r, a) = (reference_table(c), k.frame_table(c));
                    k.failure_class(case, Answer::Cfi(&r), Answer::Cfi(&a))
                }
                Some(case @ Case::Expr(c)) => {
                    let (r, a) = (crate::consumer::builtin::reference_outcome(c).0, k.evaluate(c));
                    k.failure_class(case, Answer::Expr(&r), Answer::Expr(&a))
                }
                None => None,
            };
            (f.case.clone(), class.map(|x| x.id))
        })
        .collect();
    (s.verdicts.get(&name).cloned().unwrap_or_default(), classes)
}

/// The SPIR-V fixture modules (`target/fixtures/spirv/*.spv`, from the
/// kernels of `specs/fixtures/spirv/` at -O0, -O2 and -O2 for 32-bit
/// `spir`), built by `.ci/fixtures-spirv` when one is missing or older than
/// its source; `None` (skip, or a panic under `CI`) without clang-15 and
/// llvm-spirv-15.
pub fn spirv_fixture_modules() -> Option<Vec<std::path::PathBuf>> {
    use std::path::Path;
    let tools = ["clang-15", "llvm-spirv-15"].iter().all(|t| have_tool(t));
    needed("clang-15 and llvm-spirv-15 (SPIR-V fixtures)", tools.then_some(()))?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (src, out) = (root.join("specs/fixtures/spirv"), root.join("target/fixtures/spirv"));
    let mut list = Vec::new();
    for e in std::fs::read_dir(&src).expect("specs/fixtures/spirv").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "cl") {
            let stem = p.file_stem().unwrap_or_default().to_string_lossy().to_string();
            for v in ["O0", "O2", "O2-32"] {
                list.push((p.clone(), out.join(format!("{stem}-{v}.spv"))));
            }
        }
    }
    list.sort();
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if list.iter().any(|(s, o)| modified(o).is_none() || modified(o) < modified(s)) {
        let st = std::process::Command::new("bash").arg(root.join(".ci/fixtures-spirv")).output();
        let st = st.expect("bash runs .ci/fixtures-spirv");
        assert!(st.status.success(), ".ci/fixtures-spirv failed: {}", String::from_utf8_lossy(&st.stderr));
    }
    assert!(list.len() >= 9, "expected at least 3 kernels, found {list:?}");
    Some(list.into_iter().map(|(_, o)| o).collect())
}

/// Every `spirv:` case of the `*.yaml` files under `dirs` (paths from the
/// crate root, e.g. `specs/cases/spirv`), as `(file stem/case name,
/// expression)`, in file then case order. Panics on a case file that does
/// not load (the bundled suite must).
pub fn spirv_expressions(dirs: &[&str]) -> Vec<(String, dwarfcheck_core::encoding::spirv::SpirvExpression)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths: Vec<std::path::PathBuf> = dirs.iter().map(|d| root.join(d)).collect();
    let mut all = Vec::new();
    for f in crate::case::files::with_extension(&paths, "yaml") {
        let cases = crate::case::yaml::load_file(&f).unwrap_or_else(|e| panic!("{}: {e:?}", f.display()));
        let stem = f.file_stem().unwrap_or_default().to_string_lossy().to_string();
        for c in cases {
            if let crate::case::Case::Expr(c) = c {
                if let Some(s) = &c.spirv {
                    all.push((format!("{stem}/{}", c.name), (**s).clone()));
                }
            }
        }
    }
    all
}

/// The raw vISA debug info blobs `.ci/fixtures-intel` dumps under
/// `target/fixtures/intel/*/dump/` (running it when fewer than 24 are
/// there), each with the platform of its directory (`dg2` or `tgllp`),
/// sorted by path; `None` (skip) without ocloc, a panic when `CI` is set.
pub fn intel_fixture_blobs() -> Option<Vec<(std::path::PathBuf, crate::visa::Platform)>> {
    use crate::visa::Platform;
    use std::path::{Path, PathBuf};
    needed("ocloc (intel-opencl-icd)", crate::consumer::external::process::find_program(&["ocloc"]))?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join("target/fixtures/intel");
    let list = |out: &Path| -> Vec<(PathBuf, Platform)> {
        let mut v = Vec::new();
        for d in std::fs::read_dir(out).into_iter().flatten().flatten() {
            let p = if d.file_name().to_string_lossy().contains("dg2") { Platform::Dg2 } else { Platform::Tgllp };
            for f in std::fs::read_dir(d.path().join("dump")).into_iter().flatten().flatten() {
                if f.path().extension().is_some_and(|x| x == "dbg") {
                    v.push((f.path(), p));
                }
            }
        }
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    if list(&out).len() < 24 {
        let st = std::process::Command::new("bash").arg(root.join(".ci/fixtures-intel")).output().expect("bash");
        assert!(st.status.success(), ".ci/fixtures-intel failed: {}", String::from_utf8_lossy(&st.stderr));
    }
    let v = list(&out);
    assert!(v.len() >= 24, "3 kernels x 2 devices x 2 levels x 2 formats, found {}", v.len());
    Some(v)
}
