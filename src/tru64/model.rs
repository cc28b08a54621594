//! What one procedure's optimization data holds, in the shape of the bytes
//! (relative ranges as written): the records of its PPODE stream, with the
//! procedure and symbols they refer to. The same types are the YAML
//! description the encoder reads (docs/case-format.md, "Tru64 optimization
//! data cases") and what the decoder gives back.

use super::codes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One PPODE: its kind, `ppode_val`, and its data. `ppode_len` is not kept:
/// it is the size of the data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Record {
    /// `PPODE_STAMP` (tag 1); `version` is its `ppode_val`.
    Stamp {
        /// `ppode_val` (default [`codes::PPOD_VERSION`]).
        #[serde(default = "version")]
        version: u64,
        /// Data bytes (none expected).
        #[serde(default, with = "hex", skip_serializing_if = "Vec::is_empty")]
        data: Vec<u8>,
    },
    /// `PPODE_END` (tag 2).
    End {
        /// `ppode_val`.
        #[serde(default)]
        val: u64,
        /// Data bytes (none expected).
        #[serde(default, with = "hex", skip_serializing_if = "Vec::is_empty")]
        data: Vec<u8>,
    },
    /// `PPODE_SEM_EVENT` (tag 4): one byte per entry (seed §12.3.1).
    SemEvent {
        /// `ppode_val`.
        #[serde(default)]
        val: u64,
        /// The entries in order.
        events: Vec<SemEvent>,
    },
    /// `PPODE_SPLIT` (tag 5): split lifetime descriptions (seed §12.3.2).
    Split {
        /// `ppode_val`.
        #[serde(default)]
        val: u64,
        /// The descriptions in order.
        descs: Vec<SplitDesc>,
    },
    /// `PPODE_DISCONTIG_SCOPE` (tag 6): discontiguous scopes (seed §12.3.3).
    DiscontigScope {
        /// `ppode_val`.
        #[serde(default)]
        val: u64,
        /// The scope descriptions in order.
        scopes: Vec<ScopeDesc>,
    },
    /// Any other tag, `PPODE_EXT_SRC` (3) and `PPODE_INLINED_CALL` (7)
    /// among them: the seed gives no layout for their data, kept as bytes.
    Opaque {
        /// `ppode_tag`.
        tag: u32,
        /// `ppode_val`.
        #[serde(default)]
        val: u64,
        /// The data.
        #[serde(default, with = "hex")]
        data: Vec<u8>,
    },
}

fn version() -> u64 {
    codes::PPOD_VERSION
}

impl Record {
    /// The record's `ppode_tag`.
    pub fn tag(&self) -> u32 {
        match self {
            Record::Stamp { .. } => codes::TAG_STAMP,
            Record::End { .. } => codes::TAG_END,
            Record::SemEvent { .. } => codes::TAG_SEM_EVENT,
            Record::Split { .. } => codes::TAG_SPLIT,
            Record::DiscontigScope { .. } => codes::TAG_DISCONTIG_SCOPE,
            Record::Opaque { tag, .. } => *tag,
        }
    }

    /// The name of a tag (`PPODE_` dropped, lowercase), or `tag N`.
    pub fn tag_name(tag: u32) -> String {
        match tag {
            codes::TAG_STAMP => "stamp".into(),
            codes::TAG_END => "end".into(),
            codes::TAG_EXT_SRC => "ext_src".into(),
            codes::TAG_SEM_EVENT => "sem_event".into(),
            codes::TAG_SPLIT => "split".into(),
            codes::TAG_DISCONTIG_SCOPE => "discontig_scope".into(),
            codes::TAG_INLINED_CALL => "inlined_call".into(),
            t => format!("tag {t}"),
        }
    }
}

/// One semantic event entry (`PPODSE`): `count` instructions after the
/// previous event (0..=15), the `event` code (Table 12-1; a name or a
/// number in YAML).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemEvent {
    /// Instructions since the previous event (low nibble).
    pub count: u8,
    /// Event code (high nibble).
    #[serde(deserialize_with = "event_code")]
    pub event: u8,
}

/// A pointer into the local symbol table (`OPTRNDX`, seed §12.2.1): a
/// relative file descriptor and a symbol index, both LEB128.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Optrndx {
    /// Relative file descriptor.
    pub rfd: u64,
    /// Symbol index in that file.
    pub index: u64,
}

impl std::fmt::Display for Optrndx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.rfd, self.index)
    }
}

/// A split target (seed §12.3.2.1): a name in the external symbol table
/// (type 1) or an OPTRNDX into the local one (type 2).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "TargetRepr", into = "TargetRepr")]
pub enum Target {
    /// `PPODE_SPLIT_TYPE_EXT`: a null-terminated (mangled) name.
    External(String),
    /// `PPODE_SPLIT_TYPE_LCL`: an OPTRNDX.
    Local(Optrndx),
}

/// [`Target`] in YAML and JSON: a map with one of `local` and `external`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    local: Option<Optrndx>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    external: Option<String>,
}

impl TryFrom<TargetRepr> for Target {
    type Error = String;
    fn try_from(r: TargetRepr) -> Result<Target, String> {
        match (r.local, r.external) {
            (Some(o), None) => Ok(Target::Local(o)),
            (None, Some(n)) => Ok(Target::External(n)),
            _ => Err("a target is `local: {rfd, index}` or `external: name`, one of them".into()),
        }
    }
}

impl From<Target> for TargetRepr {
    fn from(t: Target) -> TargetRepr {
        match t {
            Target::Local(o) => TargetRepr { local: Some(o), external: None },
            Target::External(n) => TargetRepr { local: None, external: Some(n) },
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::External(n) => write!(f, "external `{n}`"),
            Target::Local(o) => write!(f, "local {o}"),
        }
    }
}

/// A child description scheme (Table 12-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// `PPODE_SPLIT_SCHEME_DEF` (1): the target's own location applies
    /// where no child does, unless it is `scUnallocated`.
    Normal,
    /// `PPODE_SPLIT_SCHEME_DEF_PROMOTED` (2): no default location.
    Promoted,
    /// `PPODE_SPLIT_SCHEME_DUP` (3): shares another target's description.
    Duplicate,
}

impl Scheme {
    /// The 4-bit code.
    pub fn code(self) -> u8 {
        match self {
            Scheme::Normal => codes::SCHEME_DEF,
            Scheme::Promoted => codes::SCHEME_PROMOTED,
            Scheme::Duplicate => codes::SCHEME_DUP,
        }
    }
}

/// One split lifetime description. For [`Scheme::Duplicate`],
/// `duplicate_of` is set and `children` empty; otherwise the reverse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitDesc {
    /// The variable described.
    pub target: Target,
    /// How to read the children and the default location.
    pub scheme: Scheme,
    /// The children (normal and promoted schemes), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Child>,
    /// The first symbol of the set (duplicate scheme).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<Optrndx>,
}

/// A location as a symbol table entry would hold it: symbol type (LEB128),
/// storage class (LEB128), value (SLEB128). Names or numbers in YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Location {
    /// Symbol type (Table 11-1).
    #[serde(deserialize_with = "symbol_type")]
    pub st: u64,
    /// Storage class (Table 11-2).
    #[serde(deserialize_with = "storage_class")]
    pub sc: u64,
    /// Register number, frame offset or address, per the class.
    pub value: i64,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = codes::name_of(codes::SYMBOL_TYPES, self.st).map_or_else(|| format!("st{}", self.st), String::from);
        let sc = codes::name_of(codes::STORAGE_CLASSES, self.sc).map_or_else(|| format!("sc{}", self.sc), String::from);
        write!(f, "{st} {sc} {:#x}", self.value)
    }
}

/// A range as written: `start` (SLEB128) relative to a base the context
/// gives, `len` (LEB128) instructions. Both in instructions, not bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRange {
    /// Start, relative (instructions).
    pub start: i64,
    /// Instructions in the range.
    pub len: u64,
}

/// One split child: its location, its range, its definition points (each
/// an SLEB128 instruction delta, seed §12.3.2.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Child {
    /// Where the variable lives in the range.
    pub location: Location,
    /// The range, relative as written.
    pub range: RawRange,
    /// Definition point deltas as written.
    #[serde(default)]
    pub defs: Vec<i64>,
}

/// One discontiguous scope: the scope's OPTRNDX and its ranges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeDesc {
    /// The scope (an `stBlock` symbol).
    pub scope: Optrndx,
    /// The ranges, relative as written.
    pub ranges: Vec<RawRange>,
}

/// The procedure the data belongs to: the base address from its procedure
/// descriptor and its size in instructions (`None`: unknown, no upper
/// bound is checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Procedure {
    /// Address of the first instruction (bytes).
    pub base: u64,
    /// Instructions in the procedure.
    #[serde(default)]
    pub insns: Option<u64>,
}

/// A symbol the data refers to: a local (`rfd`, `index`) or external
/// (`external`) one, with its own location, and for a scope its beginning
/// address (`begin`, bytes; the stBegin symbol's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Symbol {
    /// A name for reports.
    #[serde(default)]
    pub name: Option<String>,
    /// Local symbol: its OPTRNDX.
    #[serde(default)]
    pub local: Option<Optrndx>,
    /// External symbol: its name.
    #[serde(default)]
    pub external: Option<String>,
    /// The symbol's own location (a variable's), the default of a
    /// normal-scheme split.
    #[serde(default)]
    pub location: Option<Location>,
    /// A scope's first address (bytes).
    #[serde(default)]
    pub begin: Option<u64>,
}

impl Symbol {
    /// Whether this symbol is `t`.
    pub fn is(&self, t: &Target) -> bool {
        match t {
            Target::External(n) => self.external.as_deref() == Some(n.as_str()),
            Target::Local(o) => self.local == Some(*o),
        }
    }
}

/// The symbols a procedure's optimization data refers to (the part of the
/// local and external symbol tables a case gives).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Symbols {
    /// The symbols.
    pub symbols: Vec<Symbol>,
}

impl Symbols {
    /// The symbol `t` names, if given.
    pub fn find(&self, t: &Target) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.is(t))
    }
}

fn code_from<'de, D: Deserializer<'de>, T>(d: D, table: &[(T, &str)], what: &str) -> Result<T, D::Error>
where
    T: Copy + TryFrom<u64>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NameOrNumber {
        Number(u64),
        Name(String),
    }
    match NameOrNumber::deserialize(d)? {
        NameOrNumber::Number(n) => {
            T::try_from(n).map_err(|_| serde::de::Error::custom(format!("{what} {n} too large")))
        }
        NameOrNumber::Name(s) => table
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(&s))
            .map(|(c, _)| *c)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown {what} `{s}`"))),
    }
}

fn event_code<'de, D: Deserializer<'de>>(d: D) -> Result<u8, D::Error> {
    code_from(d, codes::EVENTS, "event")
}

fn symbol_type<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    code_from(d, codes::SYMBOL_TYPES, "symbol type")
}

fn storage_class<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    code_from(d, codes::STORAGE_CLASSES, "storage class")
}

/// Byte strings as hex text in YAML and JSON (whitespace allowed, `#`
/// comments to the end of a line).
pub mod hex {
    use super::*;

    /// Writes `b` as lowercase hex pairs separated by spaces.
    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&to_text(b))
    }

    /// Reads hex text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        parse(&s).map_err(serde::de::Error::custom)
    }

    /// `b` as lowercase hex pairs separated by spaces.
    pub fn to_text(b: &[u8]) -> String {
        dwarfcheck_core::encoding::hex::to_hex_spaced(b)
    }

    /// Parses hex text: what core's `parse_hex` reads, with `#` starting
    /// a comment to the end of each line. Errors: core's, in words.
    pub fn parse(text: &str) -> Result<Vec<u8>, String> {
        crate::case::blob::parse_hex(text)
    }
}
