//! The rule catalogue (DESIGN §5): stable IDs for every normative statement.
//!
//! `specs/rules/*.yaml` is the single source. `build.rs` turns each rule into
//! a constant in [`id`], so evaluators cite rules by constant and a rule
//! missing from the catalogue does not compile.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// A rule ID such as `op.piece.top-incomplete-appends`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RuleId(Cow<'static, str>);

impl RuleId {
    /// A rule ID from a string constant.
    pub const fn from_static(s: &'static str) -> Self {
        RuleId(Cow::Borrowed(s))
    }
    /// A rule ID from text (e.g. a case file or an external consumer).
    pub fn new(s: impl Into<String>) -> Self {
        RuleId(Cow::Owned(s.into()))
    }
    /// The ID text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Rule ID constants generated from `specs/rules/*.yaml`.
pub mod id {
    use super::RuleId;
    include!(concat!(env!("OUT_DIR"), "/rule_ids.rs"));
}

/// What kind of statement a rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleKind {
    /// What a well-formed operation does.
    Semantics,
    /// Input the spec calls ill-formed: the result is undefined.
    IllFormed,
    /// Input that evaluates to an evaluation error.
    EvaluationError,
    /// A requirement on the evaluation context.
    Context,
    /// The spec is silent; the project's documented choice.
    Unspecified,
}

/// One catalogue entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable dotted ID.
    pub id: String,
    /// Where the statement is, as "Section > Subsection".
    pub section: String,
    /// Kind.
    pub kind: RuleKind,
    /// The statement in the project's own words.
    pub says: String,
    /// For `unspecified` rules: what the project chose and why.
    #[serde(default)]
    pub decision: Option<String>,
    /// Anything else worth knowing (conflicts, consumer differences).
    #[serde(default)]
    pub note: Option<String>,
}

/// The whole catalogue, loaded once from the embedded YAML.
pub struct Catalogue {
    /// Rules by ID.
    pub rules: BTreeMap<String, Rule>,
}

impl Catalogue {
    /// The catalogue compiled into this binary.
    pub fn get() -> &'static Catalogue {
        static CAT: OnceLock<Catalogue> = OnceLock::new();
        CAT.get_or_init(|| {
            let mut rules = BTreeMap::new();
            for (file, text) in id::SOURCES {
                // build.rs has already parsed and validated each file.
                let list: Vec<Rule> = yaml_serde::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
                for r in list {
                    rules.insert(r.id.clone(), r);
                }
            }
            Catalogue { rules }
        })
    }

    /// The kind of a rule, or `None` if the ID is not in the catalogue.
    pub fn kind(&self, id: &str) -> Option<RuleKind> {
        self.rules.get(id).map(|r| r.kind)
    }
}
