//! Bounds on the work one case file may cost the YAML parser: flow nesting
//! is measured before parsing, alias expansion is counted before the file
//! is turned into values.
//!
//! Why a pre-scan: yaml_serde stops at 128 nested collections, but only
//! once its parser (libyaml) has read the whole file into events, and that
//! parser spends time proportional to the flow nesting depth on every
//! token: 100,000 nested `[` take about 50 s, a million take hours. So
//! [`flow_nesting`] follows the YAML token rules that decide the flow depth
//! (flow indicators, quoted scalars, comments, plain scalars, block scalars
//! and the indentation that ends them) in one linear pass, and stops at
//! [`MAX_NESTING`]. Where it cannot tell two readings apart it takes the
//! deeper one.
//!
//! Aliases (`*name`) repeat their anchor's node: a 50 KB file of aliases to
//! an anchor of 10,000 items asks for 10^8 nodes. [`alias_expansion`] walks
//! the document as the deserializer will, counting nodes without keeping
//! them, and stops at a budget proportional to the file's size.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::cell::Cell;

/// The deepest nesting of collections a case file may have: yaml_serde's
/// own recursion limit, which also bounds block nesting.
pub const MAX_NESTING: usize = 128;

/// Nodes a file may expand to beyond one per byte of its text (aliases
/// included): see [`alias_expansion`].
pub const EXTRA_ALIAS_NODES: usize = 100_000;

/// Where a limit was passed: 1-based line and column, and what was passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What was passed.
    pub message: String,
}

/// Fails at the first `[` or `{` that opens a flow collection nested more
/// than [`MAX_NESTING`] deep. Linear in the length of `text`.
pub fn flow_nesting(text: &str) -> Result<(), LimitError> {
    let mut s = Scanner { b: text.as_bytes(), i: 0, line: 1, line_start: 0 };
    s.block()
}

/// Fails when deserializing `text` would visit more than `text.len()` +
/// [`EXTRA_ALIAS_NODES`] nodes, counting every repetition an alias makes.
/// Files without a `*` cannot hold an alias and are not walked. The walk
/// keeps nothing; its depth is bounded by yaml_serde's recursion limit.
pub fn alias_expansion(text: &str) -> Result<(), LimitError> {
    if !text.contains('*') {
        return Ok(());
    }
    let budget = Cell::new(text.len().saturating_add(EXTRA_ALIAS_NODES));
    match yaml_serde::Deserializer::from_str(text).next().map(|d| Count(&budget).deserialize(d)) {
        Some(Err(e)) if budget.get() == 0 => {
            let (line, column) = e.location().map(|l| (l.line(), l.column())).unwrap_or((1, 1));
            Err(LimitError {
                line,
                column,
                message: format!(
                    "aliases expand this file to more than {} nodes (one per byte of the file plus {EXTRA_ALIAS_NODES})",
                    text.len().saturating_add(EXTRA_ALIAS_NODES)
                ),
            })
        }
        // Other errors are reported by the real load, with its wording.
        _ => Ok(()),
    }
}

/// Counts nodes against a shared budget, keeping none of them.
#[derive(Clone, Copy)]
struct Count<'b>(&'b Cell<usize>);

impl Count<'_> {
    /// Takes one node from the budget.
    fn take<E: de::Error>(&self) -> Result<(), E> {
        match self.0.get().checked_sub(1) {
            Some(n) => {
                self.0.set(n);
                Ok(())
            }
            None => Err(E::custom("alias expansion budget exhausted")),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Count<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Count<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any YAML node")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.take()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.take()
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        self.take()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.take()
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        self.take()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.take()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.take()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.take()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.take()
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        // A tagged node (`!tag value`): count the tag, then its value.
        self.take()?;
        let ((), v) = data.variant_seed(self)?;
        de::VariantAccess::newtype_variant_seed(v, self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.take()?;
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.take()?;
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// What is open at the end of a line in block context.
#[derive(Clone, Copy, Debug)]
enum Open {
    /// Nothing: the next line starts with a token.
    Nothing,
    /// The line ended after an indicator (`-`, `?`, `:`) whose node is on
    /// a later line; `owner` is the column of the collection it belongs to.
    Indicator { owner: isize },
    /// A plain scalar may go on: lines indented past `owner` continue it.
    Plain { owner: isize },
    /// A block scalar (`|`, `>`) starts on the next non-blank line: its
    /// indentation is at least `owner + 1`, or `owner + explicit`.
    BlockHeader { owner: isize, explicit: Option<usize>, blank_max: usize },
    /// Inside a block scalar: lines indented at least this much (and blank
    /// lines) are its content.
    BlockScalar { indent: usize },
}

/// A cursor over the text that knows its line and column.
struct Scanner<'t> {
    b: &'t [u8],
    i: usize,
    line: usize,
    line_start: usize,
}

/// A space, tab, line break or the end of the text.
fn blankz(c: u8) -> bool {
    matches!(c, 0 | b' ' | b'\t' | b'\n' | b'\r')
}

/// A flow indicator: ends plain scalars in flow context.
fn flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

impl Scanner<'_> {
    /// The byte `k` ahead, 0 past the end.
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }
    fn eof(&self) -> bool {
        self.i >= self.b.len()
    }
    /// 0-based column of the cursor.
    fn col(&self) -> usize {
        self.i - self.line_start
    }
    fn bump(&mut self) {
        if self.at(0) == b'\n' {
            self.line += 1;
            self.line_start = self.i + 1;
        }
        self.i += 1;
    }
    fn skip_to_eol(&mut self) {
        while !self.eof() && self.at(0) != b'\n' {
            self.i += 1;
        }
    }
    /// Skips spaces, tabs and carriage returns on this line.
    fn skip_blanks(&mut self) {
        while matches!(self.at(0), b' ' | b'\t' | b'\r') {
            self.i += 1;
        }
    }
    /// Skips anything up to a blank or, in flow context, a flow indicator
    /// (anchors, aliases, tags).
    fn skip_word(&mut self, flow: bool) {
        while !blankz(self.at(0)) && (!flow || !flow_indicator(self.at(0))) {
            self.bump();
        }
    }
    /// Skips a quoted scalar starting at the cursor (either kind, across
    /// lines): `''` is a quote inside single quotes, `\` escapes the next
    /// byte inside double quotes.
    fn skip_quoted(&mut self) {
        let q = self.at(0);
        self.bump();
        while !self.eof() {
            match self.at(0) {
                b'\\' if q == b'"' => {
                    self.bump();
                    self.bump();
                }
                b'\'' if q == b'\'' && self.at(1) == b'\'' => {
                    self.bump();
                    self.bump();
                }
                c if c == q => {
                    self.bump();
                    return;
                }
                _ => self.bump(),
            }
        }
    }

    /// Block context, line by line, until the end of the text.
    fn block(&mut self) -> Result<(), LimitError> {
        let mut open = Open::Nothing;
        while !self.eof() {
            let start = self.i;
            self.skip_blanks();
            let indent = self.i - start;
            if matches!(self.at(0), 0 | b'\n' | b'\r') {
                if let Open::BlockHeader { blank_max, .. } = &mut open {
                    *blank_max = (*blank_max).max(indent);
                }
                self.skip_to_eol();
                self.bump();
                continue;
            }
            if let Open::BlockHeader { owner, explicit, blank_max } = open {
                let least = (owner + 1).max(1) as usize;
                let indent = match explicit {
                    Some(n) => (owner.max(0) as usize) + n,
                    None => blank_max.max(indent).max(least),
                };
                open = Open::BlockScalar { indent };
            }
            open = match open {
                Open::BlockScalar { indent: need } if indent >= need => {
                    self.skip_to_eol();
                    self.bump();
                    open
                }
                Open::Plain { owner } if self.at(0) != b'#' && indent as isize > owner => self.plain_line(owner)?,
                Open::Indicator { owner } => self.tokens(Some(owner))?,
                _ => self.tokens(None)?,
            };
        }
        Ok(())
    }

    /// The rest of a line that continues a plain scalar: content up to a
    /// `: ` (tokens follow) or ` #` (a comment).
    fn plain_line(&mut self, owner: isize) -> Result<Open, LimitError> {
        loop {
            match self.at(0) {
                0 | b'\n' => {
                    self.bump();
                    return Ok(Open::Plain { owner });
                }
                b':' if blankz(self.at(1)) => return self.tokens(Some(owner)),
                b' ' | b'\t' | b'\r' => {
                    self.skip_blanks();
                    if self.at(0) == b'#' {
                        self.skip_to_eol();
                        self.bump();
                        return Ok(Open::Nothing);
                    }
                }
                _ => self.bump(),
            }
        }
    }

    /// The tokens of one line in block context, from the cursor; `carried`
    /// is the owner column an indicator on an earlier line left open.
    /// Returns what is open at the end of the line.
    ///
    /// The owner of a node (the indentation of the block collection it
    /// belongs to, which decides where a multi-line plain or block scalar
    /// ends) is the column of the last `-` or `?` before it, or of the key
    /// before its `:`; a key starts at its first anchor, tag or node.
    fn tokens(&mut self, carried: Option<isize>) -> Result<Open, LimitError> {
        // The indicator whose node has not appeared yet, by owner column.
        let mut pending = carried;
        let mut owner = carried;
        // Where the node now being read began (its anchor or tag first).
        let mut node_start: Option<isize> = None;
        loop {
            self.skip_blanks();
            let c = self.at(0);
            let col = self.col() as isize;
            match c {
                0 | b'\n' | b'#' => {
                    self.skip_to_eol();
                    self.bump();
                    return Ok(pending.map_or(Open::Nothing, |owner| Open::Indicator { owner }));
                }
                b'-' | b'?' | b':' if blankz(self.at(1)) => {
                    let o = if c == b':' { node_start.unwrap_or(col) } else { col };
                    (owner, pending, node_start) = (Some(o), Some(o), None);
                    self.bump();
                }
                b'&' | b'!' => {
                    node_start.get_or_insert(col);
                    self.skip_word(false);
                }
                b'*' => {
                    (node_start, pending) = (Some(node_start.unwrap_or(col)), None);
                    self.skip_word(false);
                }
                b'[' | b'{' => {
                    (node_start, pending) = (Some(node_start.unwrap_or(col)), None);
                    self.flow()?;
                }
                b'\'' | b'"' => {
                    (node_start, pending) = (Some(node_start.unwrap_or(col)), None);
                    self.skip_quoted();
                }
                b'|' | b'>' => {
                    self.bump();
                    let explicit = match (self.at(0), self.at(1)) {
                        (d @ b'1'..=b'9', _) | (b'+' | b'-', d @ b'1'..=b'9') => Some((d - b'0') as usize),
                        _ => None,
                    };
                    self.skip_to_eol();
                    self.bump();
                    return Ok(Open::BlockHeader { owner: owner.unwrap_or(col - 1), explicit, blank_max: 0 });
                }
                b'%' if col == 0 => {
                    self.skip_to_eol();
                    self.bump();
                    return Ok(Open::Nothing);
                }
                _ => {
                    (node_start, pending) = (Some(node_start.unwrap_or(col)), None);
                    let owner = owner.unwrap_or(col - 1);
                    match self.plain_rest() {
                        PlainEnd::Colon => {}
                        PlainEnd::Comment => return Ok(Open::Nothing),
                        PlainEnd::Eol => return Ok(Open::Plain { owner }),
                    }
                }
            }
        }
    }

    /// A plain scalar in block context, to where it ends on this line.
    fn plain_rest(&mut self) -> PlainEnd {
        loop {
            match self.at(0) {
                0 | b'\n' => {
                    self.bump();
                    return PlainEnd::Eol;
                }
                b':' if blankz(self.at(1)) => return PlainEnd::Colon,
                b' ' | b'\t' | b'\r' => {
                    self.skip_blanks();
                    if self.at(0) == b'#' {
                        self.skip_to_eol();
                        self.bump();
                        return PlainEnd::Comment;
                    }
                }
                _ => self.bump(),
            }
        }
    }

    /// A flow collection opening at the cursor, through its closing
    /// bracket (or the end of the text). Fails when it nests more than
    /// [`MAX_NESTING`] deep.
    fn flow(&mut self) -> Result<(), LimitError> {
        let mut depth = 0usize;
        loop {
            // A token starts here: skip blanks, line breaks and comments.
            while matches!(self.at(0), b' ' | b'\t' | b'\n' | b'\r') {
                self.bump();
            }
            if self.eof() {
                return Ok(());
            }
            match self.at(0) {
                b'#' => self.skip_to_eol(),
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(LimitError {
                            line: self.line,
                            column: self.col() + 1,
                            message: format!(
                                "collections nested more than {MAX_NESTING} deep (the loader's limit on nesting)"
                            ),
                        });
                    }
                    self.bump();
                }
                b']' | b'}' => {
                    self.bump();
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                }
                b',' | b':' | b'?' => self.bump(),
                b'-' if blankz(self.at(1)) => self.bump(),
                b'\'' | b'"' => self.skip_quoted(),
                b'&' | b'!' | b'*' => self.skip_word(true),
                _ => self.flow_plain(),
            }
        }
    }

    /// A plain scalar in flow context (it may span lines), up to a flow
    /// indicator, a `:` that ends it, or a comment.
    fn flow_plain(&mut self) {
        self.bump();
        loop {
            let c = self.at(0);
            if c == 0 || flow_indicator(c) {
                return;
            }
            if c == b':' && (blankz(self.at(1)) || flow_indicator(self.at(1)) || self.at(1) == b'?') {
                return;
            }
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                while matches!(self.at(0), b' ' | b'\t' | b'\n' | b'\r') {
                    self.bump();
                }
                if self.at(0) == b'#' {
                    return;
                }
                continue;
            }
            self.bump();
        }
    }
}

/// How a plain scalar in block context ends on its line.
enum PlainEnd {
    /// At `: `: a mapping value follows.
    Colon,
    /// At a comment.
    Comment,
    /// At the end of the line: it may go on.
    Eol,
}
