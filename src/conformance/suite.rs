//! The case suite a conformance check runs: the bundled `specs/cases`
//! (embedded in the library at build time, so a dependent crate needs no
//! checkout) or case files on disk, narrowed by file, case name and rule.

use crate::case::{yaml, Case};
use std::path::PathBuf;

mod embedded {
    //! `SOURCES`: every `specs/cases/**/*.yaml` file, written by build.rs.
    include!(concat!(env!("OUT_DIR"), "/case_sources.rs"));
}

/// Every bundled case file: `(path under specs/cases/, YAML text)`, sorted
/// by path (`expr/arithmetic.yaml`, ...).
pub fn bundled_sources() -> &'static [(&'static str, &'static str)] {
    embedded::SOURCES
}

/// Where the cases come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Source {
    /// The suite embedded in the library (`specs/cases/**/*.yaml` as
    /// built); origins read `specs/cases/FILE:LINE`.
    #[default]
    Bundled,
    /// The `.yaml` case files under these paths (files, or directories
    /// walked recursively).
    Paths(Vec<PathBuf>),
}

/// Which of the source's cases to run. Every empty list selects all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Case files whose path contains one of these (`expr/arithmetic.yaml`,
    /// `cfi/`).
    pub files: Vec<String>,
    /// Cases with one of these names.
    pub names: Vec<String>,
    /// Cases exercising one of these rules or a rule under it: `op.minus`
    /// selects `op.minus.subtracts` (a whole dotted component, not a
    /// string prefix).
    pub rules: Vec<String>,
}

/// Whether `rule` is `wanted` or under it (`wanted` followed by a dot).
pub fn rule_under(rule: &str, wanted: &str) -> bool {
    rule.strip_prefix(wanted).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

impl Selection {
    /// Whether `case`, from the file `file`, is selected.
    pub fn selects(&self, file: &str, case: &Case) -> bool {
        (self.files.is_empty() || self.files.iter().any(|f| file.contains(f.as_str())))
            && (self.names.is_empty() || self.names.iter().any(|n| n == case.name()))
            && (self.rules.is_empty() || case.rules().iter().any(|r| self.rules.iter().any(|w| rule_under(r, w))))
    }
}

/// The selected cases of `source`, in file then case order, and one
/// message per case file that does not load (`file:line:column: what`)
/// or cannot be found.
pub fn load(source: &Source, selection: &Selection) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut take = |file: &str, loaded: Result<Vec<Case>, Vec<yaml::CaseFileError>>| match loaded {
        Ok(v) => cases.extend(v.into_iter().filter(|c| selection.selects(file, c))),
        Err(e) => errors.extend(e.iter().map(ToString::to_string)),
    };
    match source {
        Source::Bundled => {
            for (path, text) in bundled_sources() {
                let file = format!("specs/cases/{path}");
                if selection.files.is_empty() || selection.files.iter().any(|f| file.contains(f.as_str())) {
                    take(&file, yaml::load_str(&file, text));
                }
            }
        }
        Source::Paths(paths) => match yaml::find_case_files(paths) {
            Ok(files) => {
                for f in files {
                    let file = f.display().to_string();
                    if selection.files.is_empty() || selection.files.iter().any(|s| file.contains(s.as_str())) {
                        take(&file, yaml::load_file(&f));
                    }
                }
            }
            Err(e) => errors.push(format!("cannot list the case files: {e}")),
        },
    }
    (cases, errors)
}
