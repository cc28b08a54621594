//! The direct reading of a procedure's split lifetimes and discontiguous
//! scopes as the seed states it (§12.3.2.3, §12.3.2.2, §12.3.3): relative
//! ranges resolved to instruction indices and addresses, and for a pc the
//! location of a variable ([`View::location_at`]) and the scopes that hold
//! it ([`View::scopes_at`]). This is the reference the DWARF lowering is
//! judged against; it reads the instruction counts as instructions of
//! [`codes::INSN_BYTES`] bytes (docs/ambiguities.md for the worked example,
//! whose addresses read them as bytes).

use super::codes;
use super::model::{Child, Location, Optrndx, Procedure, RawRange, Record, Scheme, SplitDesc, Symbols, Target};

/// A range resolved: `first` is an instruction index from the procedure's
/// base (possibly negative or past its end), `len` instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Span {
    /// First instruction (index from the procedure base).
    pub first: i128,
    /// Instructions in it.
    pub len: u64,
}

impl Span {
    /// Whether instruction `i` is in the span.
    pub fn holds(&self, i: i128) -> bool {
        i >= self.first && i < self.first + i128::from(self.len)
    }

    /// The highest instruction of the span (`first - 1` when empty).
    pub fn highest(&self) -> i128 {
        self.first + i128::from(self.len) - 1
    }

    /// Whether the span lies inside a procedure of `insns` instructions
    /// (`None`: only the lower bound is checked).
    pub fn inside(&self, insns: Option<u64>) -> bool {
        self.first >= 0 && insns.is_none_or(|n| self.first + i128::from(self.len) <= i128::from(n))
    }
}

/// A split child resolved.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResolvedChild {
    /// Its location.
    pub location: Location,
    /// Its range.
    pub span: Span,
    /// Its definition points (instruction indices).
    pub defs: Vec<i128>,
}

/// Resolves a split description's children (§12.3.2.3): the first range
/// starts at its SLEB from the procedure base, each later one at its SLEB
/// from the instruction after the highest of the previous range; the
/// first definition point is its SLEB from the instruction before its
/// child's range, each later one from the previous point.
pub fn resolve_children(children: &[Child]) -> Vec<ResolvedChild> {
    let mut next_base: i128 = 0;
    children
        .iter()
        .map(|c| {
            let span = Span { first: next_base + i128::from(c.range.start), len: c.range.len };
            next_base = span.highest() + 1;
            let mut at = span.first - 1;
            let defs = c
                .defs
                .iter()
                .map(|d| {
                    at += i128::from(*d);
                    at
                })
                .collect();
            ResolvedChild { location: c.location, span, defs }
        })
        .collect()
}

/// Resolves a discontiguous scope's ranges (§12.3.3): the first starts at
/// its SLEB from `begin` (the scope's first instruction), each later one
/// at its SLEB from the second instruction after the highest of the
/// previous range.
pub fn resolve_scope(begin: i128, ranges: &[RawRange]) -> Vec<Span> {
    let mut base = begin;
    ranges
        .iter()
        .map(|r| {
            let s = Span { first: base + i128::from(r.start), len: r.len };
            base = s.highest() + 2;
            s
        })
        .collect()
}

/// Where a variable is at one pc.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "WhereRepr", into = "WhereRepr")]
pub enum Where {
    /// The children whose ranges hold the pc, in description order (more
    /// than one where ranges overlap: all are active, §12.3.2.3).
    Children(Vec<Location>),
    /// No child applies; the target's default location does.
    Default(Location),
    /// No child applies and there is no default location (promoted
    /// scheme, `scUnallocated`, an unknown symbol, or a duplicate whose
    /// description is missing).
    Nowhere,
}

/// [`Where`] in YAML and JSON: `nowhere`, `{children: [...]}` or
/// `{default: location}`.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum WhereRepr {
    Word(String),
    Map {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        children: Option<Vec<Location>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<Location>,
    },
}

impl TryFrom<WhereRepr> for Where {
    type Error = String;
    fn try_from(r: WhereRepr) -> Result<Where, String> {
        match r {
            WhereRepr::Word(w) if w == "nowhere" => Ok(Where::Nowhere),
            WhereRepr::Map { children: Some(c), default: None } => Ok(Where::Children(c)),
            WhereRepr::Map { children: None, default: Some(d) } => Ok(Where::Default(d)),
            _ => Err("a location is `nowhere`, `{children: [...]}` or `{default: location}`".into()),
        }
    }
}

impl From<Where> for WhereRepr {
    fn from(w: Where) -> WhereRepr {
        match w {
            Where::Nowhere => WhereRepr::Word("nowhere".into()),
            Where::Children(c) => WhereRepr::Map { children: Some(c), default: None },
            Where::Default(d) => WhereRepr::Map { children: None, default: Some(d) },
        }
    }
}

/// One procedure's data as the reading sees it.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The procedure.
    pub procedure: Procedure,
    /// The symbols the data refers to.
    pub symbols: &'a Symbols,
    /// The records.
    pub records: &'a [Record],
}

impl<'a> View<'a> {
    /// Every split description, in stream order.
    pub fn splits(&self) -> impl Iterator<Item = &'a SplitDesc> {
        self.records.iter().flat_map(|r| match r {
            Record::Split { descs, .. } => descs.as_slice(),
            _ => &[],
        })
    }

    /// The instruction index of `pc` (the instruction holding it).
    pub fn insn_of(&self, pc: u64) -> i128 {
        (i128::from(pc) - i128::from(self.procedure.base)).div_euclid(i128::from(codes::INSN_BYTES))
    }

    /// The address of instruction index `i` (`None` outside 64 bits).
    pub fn pc_of(&self, i: i128) -> Option<u64> {
        u64::try_from(i128::from(self.procedure.base) + i * i128::from(codes::INSN_BYTES)).ok()
    }

    /// The first description of `t`.
    pub fn split_of(&self, t: &Target) -> Option<&'a SplitDesc> {
        self.splits().find(|s| &s.target == t)
    }

    /// The description a duplicate-scheme OPTRNDX refers to: the first
    /// normal or promoted description of that local target.
    pub fn referred(&self, o: Optrndx) -> Option<&'a SplitDesc> {
        self.splits().find(|s| s.target == Target::Local(o) && s.scheme != Scheme::Duplicate)
    }

    /// Where variable `t` is at `pc`, read as the seed states it: a
    /// duplicate reads the description it refers to; the children whose
    /// ranges hold the pc apply; else, under the normal scheme, the
    /// target's own location unless `scUnallocated` (under the promoted
    /// scheme, none). A variable without a description is at its own
    /// location everywhere.
    pub fn location_at(&self, t: &Target, pc: u64) -> Where {
        let own = |t: &Target| self.symbols.find(t).and_then(|s| s.location).filter(|l| l.sc != codes::SC_UNALLOCATED);
        let Some(mut desc) = self.split_of(t) else {
            return own(t).map_or(Where::Nowhere, Where::Default);
        };
        if desc.scheme == Scheme::Duplicate {
            match desc.duplicate_of.and_then(|o| self.referred(o)) {
                Some(d) => desc = d,
                None => return Where::Nowhere,
            }
        }
        let i = self.insn_of(pc);
        let active: Vec<Location> =
            resolve_children(&desc.children).into_iter().filter(|c| c.span.holds(i)).map(|c| c.location).collect();
        if !active.is_empty() {
            return Where::Children(active);
        }
        match desc.scheme {
            Scheme::Normal => own(&desc.target).map_or(Where::Nowhere, Where::Default),
            _ => Where::Nowhere,
        }
    }

    /// The first instruction of scope `o`: its symbol's `begin`, else the
    /// procedure's base (docs/ambiguities.md).
    pub fn scope_begin(&self, o: Optrndx) -> i128 {
        self.symbols.find(&Target::Local(o)).and_then(|s| s.begin).map_or(0, |b| self.insn_of(b))
    }

    /// The discontiguous scopes one of whose ranges holds `pc`, in stream
    /// order.
    pub fn scopes_at(&self, pc: u64) -> Vec<Optrndx> {
        let i = self.insn_of(pc);
        self.records
            .iter()
            .flat_map(|r| match r {
                Record::DiscontigScope { scopes, .. } => scopes.as_slice(),
                _ => &[],
            })
            .filter(|s| resolve_scope(self.scope_begin(s.scope), &s.ranges).iter().any(|sp| sp.holds(i)))
            .map(|s| s.scope)
            .collect()
    }
}
