//! What a fuzz oracle found: the ways an input can fail the targets'
//! checks (reference and fast disagree, gimli disagrees in no known class,
//! a generated case does not load, a regression file cannot be read).

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
    /// A generated case (`FuzzCase`) whose context cannot be built: a
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

/// Why a `FuzzCase`'s context could not be built (the case loader
/// refuses the same case file for the same reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// No target preset has this name.
    #[error("no target preset `{0}`")]
    UnknownTarget(String),
    /// No vendor profile has this name.
    #[error("no vendor profile `{0}`")]
    UnknownVendor(String),
    /// A register entry names a DWARF register number the target lacks.
    #[error("register {regno} is not a register of target {target}")]
    NoSuchRegister {
        /// The DWARF register number.
        regno: u64,
        /// The target's name.
        target: String,
    },
    /// A register entry's bytes are not the register's size.
    #[error("register {name} holds {size} bytes; {given} given")]
    RegisterSize {
        /// The register's name.
        name: String,
        /// Its size in **bytes**.
        size: usize,
        /// The bytes given.
        given: usize,
    },
}
