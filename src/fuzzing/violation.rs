//! What a fuzz oracle found: the ways an input can fail the targets'
//! checks (reference and fast disagree, gimli disagrees in no known class,
//! a generated case does not load, a regression file cannot be read).

use crate::case::yaml::CaseFileError;

/// An input that fails an oracle.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    /// The reference and the fast evaluator disagree (the outcomes, or the
    /// row tables or unwindings, as text).
    #[error("{0}")]
    Differ(String),
    /// gimli disagrees with the reference in no class docs/consumers.md
    /// knows.
    #[error("gimli disagreement of no known class: {0}")]
    Gimli(String),
    /// A generated case (`FuzzCase`) that the case loader refuses: a
    /// generator bug.
    #[error("the generated case does not load: {0}")]
    Load(#[from] LoadError),
    /// A regression file that cannot be read or loaded.
    #[error("{path}: {why}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
}

impl Violation {
    /// The oracle that failed: `differ`, `gimli` or `load` (minimisation
    /// keeps it the same; `load` also for unreadable files).
    pub fn kind(&self) -> &'static str {
        match self {
            Violation::Differ(_) => "differ",
            Violation::Gimli(_) => "gimli",
            Violation::Load(_) | Violation::Unreadable { .. } => "load",
        }
    }
}

/// Why a `FuzzCase` did not load as one expression case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The loader's located diagnostics, with the YAML text it was given.
    #[error("{}\n{text}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    CaseFile {
        /// The diagnostics.
        errors: Vec<CaseFileError>,
        /// The case file text.
        text: String,
    },
    /// The file held something other than exactly one expression case.
    #[error("the file holds {0}, not one expression case")]
    NotOneExpression(&'static str),
}
