//! Rule IDs: stable names for every normative statement of the rule
//! catalogue `specs/rules/*.yaml`. The build script turns each rule into a
//! constant in [`id`], so an evaluator that cites a rule missing from the
//! catalogue does not compile. Loading the catalogue's text (sections,
//! kinds, wording) is the harness's job.

use std::borrow::Cow;

/// A rule ID such as `op.piece.top-incomplete-appends`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
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
