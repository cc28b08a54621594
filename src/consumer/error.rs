//! Why a consumer named on the command line cannot take part in a run.

use super::protocol::ProtocolError;

/// A consumer that cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ConsumerError {
    /// No consumer has this name.
    #[error("unknown consumer `{name}`; expected one of {} or none", super::by_name::KNOWN.join(", "))]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// The consumer's program is not installed.
    #[error("consumer {consumer}: none of {} is on PATH (install {package})", programs.join(", "))]
    NotInstalled {
        /// The consumer's name.
        consumer: &'static str,
        /// The programs looked for, in order.
        programs: &'static [&'static str],
        /// The Debian package that has them.
        package: &'static str,
    },
    /// A process-protocol consumer that did not start.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// Two consumers of one run with the same name.
    #[error("--consumer {spec}: a consumer named `{name}` is already in this run")]
    Duplicate {
        /// The spec of the second one.
        spec: String,
        /// The name they share.
        name: String,
    },
}
