//! What can go wrong with a process-protocol consumer: starting it, the
//! handshake, one request and its reply. Each becomes the `ConsumerFault`
//! of the case that asked (or, at start-up, an error of the run).

use super::wire::Version;

/// A protocol consumer that could not be started or did not answer a
/// request as docs/protocol.md says.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// A consumer spec that is not `cmd:COMMAND`.
    #[error("consumer spec `{spec}`: expected `{}COMMAND`", super::SPEC_PREFIX)]
    BadSpec {
        /// The spec as given.
        spec: String,
    },
    /// `cmd:` with nothing after it.
    #[error("consumer spec `cmd:`: the command is empty")]
    EmptyCommand,
    /// The first child of `command` did not start or failed the handshake.
    #[error("consumer `{command}`: {source}")]
    Start {
        /// The command.
        command: String,
        /// Why.
        source: Box<ProtocolError>,
    },
    /// The shell could not be started.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        /// The command.
        command: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The child was started without pipes to its stdin and stdout.
    #[error("no pipes to the child")]
    NoPipes,
    /// The child's stdin is closed: it cannot take a request.
    #[error("its stdin is closed{status}")]
    StdinClosed {
        /// ` (exit status ...)` if the child has ended, else empty.
        status: String,
    },
    /// The child closed its stdout before replying.
    #[error("closed its stdout without a reply{status}")]
    NoReply {
        /// ` (exit status ...)` if the child has ended, else empty.
        status: String,
    },
    /// The child's main process exited before replying (whether or not
    /// something it started still holds its stdout).
    #[error("exited without a reply{status}")]
    Exited {
        /// ` (exit status ...)`.
        status: String,
    },
    /// The child did not reply within the request's time budget.
    #[error("no reply within {ms} ms")]
    Timeout {
        /// The budget in milliseconds.
        ms: u128,
    },
    /// A reply line over the length cap, not UTF-8, or unreadable.
    #[error("{0}")]
    BadLine(String),
    /// A restarted child introduced itself unlike the first one.
    #[error("a restarted child introduced itself as `{name}` {supports}, unlike the first one")]
    Restarted {
        /// The name it gave.
        name: String,
        /// What it said it supports, as text.
        supports: String,
    },
    /// A `hello` reply that is not the JSON object docs/protocol.md gives.
    #[error("bad hello reply ({detail}): {excerpt}")]
    BadHello {
        /// The JSON error.
        detail: String,
        /// The line's first 200 characters.
        excerpt: String,
    },
    /// A `hello` reply of another protocol version.
    #[error("speaks protocol `{found}`, expected `dwarfcheck/1` or `dwarfcheck/2`")]
    HelloVersion {
        /// The version it speaks.
        found: String,
    },
    /// A reply to `hello` of another message type.
    #[error("answered hello with a message of type `{found}`")]
    HelloType {
        /// The type it sent.
        found: String,
    },
    /// A `hello` reply with an empty name.
    #[error("hello reply has an empty name")]
    EmptyName,
    /// A reply to `evaluate` that is not a JSON result message.
    #[error("bad reply ({detail}): {excerpt}")]
    BadReply {
        /// The JSON error.
        detail: String,
        /// The line's first 200 characters.
        excerpt: String,
    },
    /// A reply of another protocol version.
    #[error("replied with protocol `{found}`, expected `{expected}`")]
    ReplyVersion {
        /// The version it used.
        found: String,
        /// The version its handshake picked.
        expected: Version,
    },
    /// A reply to `evaluate` of another message type.
    #[error("replied with a message of type `{found}`, expected `result`")]
    ReplyType {
        /// The type it sent.
        found: String,
    },
    /// A reply to another request.
    #[error("replied to request {got} while request {asked} was asked")]
    WrongId {
        /// The id it answered.
        got: u64,
        /// The id asked.
        asked: u64,
    },
    /// A result whose outcome is not one of the documented forms.
    #[error("bad outcome: {0}")]
    BadOutcome(#[from] OutcomeFormError),
}

/// An `outcome` object that is not one of the forms docs/protocol.md gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutcomeFormError {
    /// A key the form requires is missing.
    #[error("`{form}` needs `{key}`")]
    MissingKey {
        /// The form (outcome kind or storage).
        form: String,
        /// The key.
        key: &'static str,
    },
    /// Bytes that are not hex with two digits per byte.
    #[error("`{0}` is not hex with two digits per byte")]
    NotHex(String),
    /// A value whose bytes do not match its type's size.
    #[error("a value of {bits} bits needs {need} bytes, not {got}")]
    ValueSize {
        /// The type's size in bits.
        bits: u32,
        /// Bytes the type needs.
        need: usize,
        /// Bytes given.
        got: usize,
    },
    /// An unknown outcome kind.
    #[error("unknown outcome kind `{0}`")]
    UnknownKind(String),
    /// A location with no place.
    #[error("a location needs at least one place")]
    NoPlace,
    /// A composite part with no source.
    #[error("a composite part needs at least one source")]
    NoSource,
    /// An unknown storage kind.
    #[error("unknown storage `{0}`")]
    UnknownStorage(String),
    /// A row table or unwinding whose keys do not have the documented
    /// shape (the JSON error, or what is wrong).
    #[error("{0}")]
    Shape(String),
}
