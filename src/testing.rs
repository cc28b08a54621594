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
