//! The rule catalogue: every normative statement of the editions, with its
//! section, kind and wording, loaded from the `specs/rules/*.yaml` text
//! embedded at build time. The rule ID constants the evaluators cite are
//! `dwarfcheck_core::rules::id`, generated from the same files.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

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

impl RuleKind {
    /// The kind as the catalogue's YAML spells it (`ill-formed`,
    /// `evaluation-error`, ...).
    pub fn name(self) -> &'static str {
        match self {
            RuleKind::Semantics => "semantics",
            RuleKind::IllFormed => "ill-formed",
            RuleKind::EvaluationError => "evaluation-error",
            RuleKind::Context => "context",
            RuleKind::Unspecified => "unspecified",
        }
    }
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

include!(concat!(env!("OUT_DIR"), "/rule_sources.rs"));

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
            for (file, text) in SOURCES {
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

    /// `"; did you mean `a`?"` naming the catalogue's IDs nearest to
    /// `id` (at most three, [`crate::text::suggest::did_you_mean`]), or
    /// the empty string when none is near.
    pub fn did_you_mean(&self, id: &str) -> String {
        crate::text::suggest::did_you_mean(id, self.rules.keys())
    }

    /// The error for a rule ID that is not in the catalogue: "rule `x` is
    /// not in specs/rules/", with a "did you mean" when one is near.
    pub fn unknown(&self, id: &str) -> String {
        format!("rule `{id}` is not in specs/rules/{}", self.did_you_mean(id))
    }
}
