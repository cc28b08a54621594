//! Serde's type errors retold in the case format's terms: "a `context:`
//! mapping with keys ...", "a non-negative integer of at most 64 bits",
//! never the name of the Rust type that reads the text.
//!
//! The keys of each mapping and the names of each choice are asked of the
//! types themselves ([`shape_of`]), so they cannot drift from the schema.

use crate::text::suggest::did_you_mean;
use serde::de::{self, Deserializer, Visitor};
use std::fmt;

/// A type's serde name and its keys (a mapping) or names (a choice), as its
/// `Deserialize` implementation announces them.
type Shape = (&'static str, &'static [&'static str]);

/// The mapping or choice types a case file is read into, each with what the
/// format calls it. A type that is missing here is still never named: it
/// reads as "a mapping" or "one of its names".
fn known() -> Vec<(Option<Shape>, &'static str)> {
    use super::cfi::{CfiExpect, CfiSpec, CieSpec, FdeSpec, PersonalitySpec, RowSpec};
    use super::schema::*;
    use super::target::{AddressSpaceSpec, RegisterSpec, TargetSpec};
    use dwarfcheck_core::context::{Attribute, Budgets, ResultKind};
    vec![
        (shape_of::<FileSpec>(), "a case file mapping"),
        (shape_of::<CaseSpec>(), "a case mapping"),
        (shape_of::<ContextSpec>(), "a `context:` mapping"),
        (shape_of::<CallerSpec>(), "a `caller:` mapping"),
        (shape_of::<MemorySpec>(), "a memory segment mapping"),
        (shape_of::<CuSpec>(), "a `cu:` mapping"),
        (shape_of::<DieSpec>(), "a DIE mapping"),
        (shape_of::<BaseTypeSpec>(), "a base type mapping"),
        (shape_of::<LleSpec>(), "a location list entry mapping"),
        (shape_of::<SpirvSpec>(), "a `spirv:` mapping"),
        (shape_of::<UnwindSpec>(), "an `unwind:` mapping"),
        (shape_of::<UnwindExpectSpec>(), "an `unwind.expect:` mapping"),
        (shape_of::<StepSpec>(), "an unwinding step mapping"),
        (shape_of::<Budgets>(), "a `budgets:` mapping"),
        (shape_of::<TargetSpec>(), "a target mapping"),
        (shape_of::<AddressSpaceSpec>(), "an address space mapping"),
        (shape_of::<RegisterSpec>(), "a register range mapping"),
        (shape_of::<CfiSpec>(), "a `cfi:` mapping"),
        (shape_of::<CieSpec>(), "a `cie:` mapping"),
        (shape_of::<FdeSpec>(), "an `fde:` mapping"),
        (shape_of::<PersonalitySpec>(), "a personality mapping"),
        (shape_of::<RowSpec>(), "a row mapping"),
        (shape_of::<CfiExpect>(), "a CFI `expect:` mapping"),
        (shape_of::<ResultKind>(), "a result kind"),
        (shape_of::<Attribute>(), "an attribute name"),
        (shape_of::<dwarfcheck_core::encoding::Format>(), "a DWARF format"),
        (shape_of::<dwarfcheck_core::target::Endian>(), "a byte order"),
    ]
}

/// What serde's message `msg` says, in the case format's terms: its
/// "invalid type: X, expected Y" becomes "expected Y', found X'", Rust
/// type names become what the format calls them, and an unknown key or
/// name gets a "did you mean". The path serde puts before it
/// (`cases[0].context.pc: `) is kept.
pub fn humanize(msg: &str) -> String {
    let (path, body) = split_path(msg);
    let told = if let Some(rest) = strip_either(body, &["invalid type: ", "invalid value: "]) {
        match rest.split_once(", expected ") {
            Some((found, expected)) if expected.starts_with("a YAML tag") => {
                format!("expected {}, found {}", tagged_text(path), found_text(found))
            }
            Some((found, expected)) => format!("expected {}, found {}", expected_text(expected), found_text(found)),
            None => rest.to_string(),
        }
    } else if let Some(rest) = body.strip_prefix("invalid length ") {
        match rest.split_once(", expected ") {
            Some((n, expected)) => format!("expected {}, found {n} items", expected_text(expected)),
            None => body.to_string(),
        }
    } else if let Some(rest) = body.strip_prefix("missing field ") {
        format!("the required key {rest} is missing")
    } else if let Some(rest) = body.strip_prefix("unknown field ") {
        format!("unknown key {}", with_suggestion(rest))
    } else if let Some(rest) = body.strip_prefix("unknown variant ") {
        format!("unknown name {}", with_suggestion(rest))
    } else if let Some(name) = body.strip_prefix("data did not match any variant of untagged enum ") {
        format!("expected {}", untagged_text(name))
    } else if let Some(what) = EXPECTING.iter().find(|e| body.ends_with(*e)) {
        // A choice's own description of what it takes, alone.
        format!("{}expected {what}", &body[..body.len() - what.len()])
    } else {
        body.to_string()
    };
    format!("{path}{}", scrub(&told))
}

/// The `expecting` texts of the schema's untagged choices: serde's whole
/// message when no form matches.
const EXPECTING: [&str; 1] = ["a register number or a register name"];

/// `("cases[0].context: ", "invalid type: ...")`: serde's path, if any, and
/// the message after it.
fn split_path(msg: &str) -> (&str, &str) {
    const STARTS: [&str; 7] = [
        "invalid type: ",
        "invalid value: ",
        "invalid length ",
        "missing field ",
        "unknown field ",
        "unknown variant ",
        "data did not match",
    ];
    let at = STARTS.iter().filter_map(|s| msg.find(s)).min().unwrap_or(0);
    msg.split_at(at)
}

fn strip_either<'a>(s: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|p| s.strip_prefix(p))
}

/// "`contxt`, expected one of `a`, `b`" with a "did you mean" for the
/// word among the names listed.
fn with_suggestion(rest: &str) -> String {
    let Some((word, listed)) = rest.split_once(", expected ") else { return rest.to_string() };
    let names: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
    let hint = did_you_mean(word.trim_matches('`'), &names);
    format!("{word}; expected {listed}{hint}")
}

/// What the text found was, in YAML's terms.
fn found_text(found: &str) -> String {
    match found {
        "sequence" => "a list".into(),
        "map" => "a mapping".into(),
        "unit value" => "nothing (null)".into(),
        other => other.replace("floating point", "number"),
    }
}

/// What serde's "expected" phrase asks for, in the format's terms.
fn expected_text(e: &str) -> String {
    if let Some(name) = e.strip_prefix("struct ").or_else(|| e.strip_prefix("struct variant ")) {
        return mapping_text(name.trim());
    }
    if let Some(name) = e.strip_prefix("enum ") {
        return choice_text(name.trim());
    }
    if let Some(bits) = integer_bits(e, 'u') {
        return format!("a non-negative integer of at most {bits} bits");
    }
    if let Some(bits) = integer_bits(e, 'i') {
        return format!("an integer of at most {bits} bits (two's complement)");
    }
    if let Some(n) = e.strip_prefix("an array of length ").or_else(|| e.strip_prefix("a tuple of size ")) {
        return format!("a list of {n} items");
    }
    if let Some(n) = e.strip_prefix("sequence of ").and_then(|r| r.strip_suffix(" elements")) {
        return format!("a list of {n} items");
    }
    match e {
        "f32" | "f64" => "a number".into(),
        "a sequence" => "a list".into(),
        "a map" => "a mapping".into(),
        "a boolean" => "true or false".into(),
        "a borrowed string" | "a string" => "a string".into(),
        "option" => "a value or nothing".into(),
        other => other.to_string(),
    }
}

/// The width of `u64`, `i32`, `usize` (64), for the letter `sign`.
fn integer_bits(e: &str, sign: char) -> Option<u32> {
    let rest = e.strip_prefix(sign)?;
    if rest == "size" {
        return Some(usize::BITS);
    }
    rest.parse().ok().filter(|b| [8, 16, 32, 64, 128].contains(b))
}

/// "a `context:` mapping with keys result, registers, ..." for the type
/// serde names `name`.
fn mapping_text(name: &str) -> String {
    match known().into_iter().find(|(s, _)| s.is_some_and(|s| s.0 == name)) {
        Some((Some((_, keys)), what)) => format!("{what} with keys {}", keys.join(", ")),
        _ => "a mapping".into(),
    }
}

/// "a result kind: `location` or `value`" for the type serde names `name`.
fn choice_text(name: &str) -> String {
    match known().into_iter().find(|(s, _)| s.is_some_and(|s| s.0 == name)) {
        Some((Some((_, names)), what)) => {
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("{what}: one of {}", names.join(", "))
        }
        _ => "one of the names this key takes".into(),
    }
}

/// What a key that takes one of a set of names (read by yaml_serde as an
/// enum, which asks for "a YAML tag" when it finds a collection) takes,
/// found by the last key of serde's `path` (`cases[0].context.result: `).
fn tagged_text(path: &str) -> String {
    use dwarfcheck_core::context::{Attribute, ResultKind};
    let leaf = path.trim_end_matches([':', ' ']).rsplit('.').next().unwrap_or("");
    let shape = match leaf {
        "result" => shape_of::<ResultKind>(),
        "attribute" => shape_of::<Attribute>(),
        "format" => shape_of::<dwarfcheck_core::encoding::Format>(),
        "endian" => shape_of::<dwarfcheck_core::target::Endian>(),
        _ => None,
    };
    match shape {
        Some((name, _)) => choice_text(name),
        None => "a name".into(),
    }
}

/// What an untagged choice of the schema accepts.
fn untagged_text(name: &str) -> String {
    match name.trim() {
        "RegRef" | "NumberOrName" => "a number or a name".into(),
        "EncodingSpec" => "a pointer encoding: a number or DW_EH_PE_ names joined by `|`".into(),
        _ => "one of the forms this key takes".into(),
    }
}

/// Last resort: a Rust type name that slipped through some other phrase
/// (`struct X`, `enum X`, `u64`, `Option<`, `Vec<`) is replaced by what it
/// reads.
fn scrub(s: &str) -> String {
    let mut out = Vec::new();
    let mut words = s.split(' ').peekable();
    while let Some(w) = words.next() {
        let bare = w.trim_end_matches([',', ';', ')']);
        let tail = &w[bare.len()..];
        if bare == "struct" || bare == "enum" {
            let next = words.next().unwrap_or("");
            let name = next.trim_end_matches([',', ';', ')']);
            let t = if bare == "struct" { mapping_text(name) } else { choice_text(name) };
            out.push(format!("{t}{}", &next[name.len()..]));
        } else if integer_bits(bare, 'u').is_some() || integer_bits(bare, 'i').is_some() {
            out.push(format!("{}{tail}", expected_text(bare)));
        } else if bare.starts_with("Option<") || bare.starts_with("Vec<") {
            out.push(format!("a value{tail}"));
        } else {
            out.push(w.to_string());
        }
    }
    out.join(" ")
}

/// A type's serde name and keys or names, found by letting it read from a
/// deserializer that holds nothing ([`Probe`]). `None` for a type that
/// reads neither a struct nor an enum.
fn shape_of<T: de::DeserializeOwned>() -> Option<Shape> {
    T::deserialize(Probe).err().and_then(|e| e.0)
}

/// A deserializer that only records what a type asks it for.
struct Probe;

/// [`Probe`]'s answer: the shape a type asked for, if it asked for one.
#[derive(Debug)]
struct Asked(Option<Shape>);

impl fmt::Display for Asked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probe")
    }
}

impl std::error::Error for Asked {}

impl de::Error for Asked {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Asked(None)
    }
}

impl<'de> Deserializer<'de> for Probe {
    type Error = Asked;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Asked> {
        Err(Asked(None))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Asked> {
        Err(Asked(Some((name, fields))))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Asked> {
        Err(Asked(Some((name, variants))))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_names_become_the_mapping_and_its_keys() {
        let m = humanize("cases[0].context: invalid type: sequence, expected struct ContextSpec");
        assert!(
            m.starts_with("cases[0].context: expected a `context:` mapping with keys result, registers, memory, pc,")
        );
        assert!(m.ends_with(", found a list"), "{m}");
        assert!(!m.contains("ContextSpec") && !m.contains("struct"), "{m}");
    }

    #[test]
    fn integer_types_become_widths() {
        assert_eq!(
            humanize("cases[0].context.lane: invalid type: integer `-1`, expected u32"),
            "cases[0].context.lane: expected a non-negative integer of at most 32 bits, found integer `-1`"
        );
        assert_eq!(
            humanize("x: invalid value: integer `300`, expected u8"),
            "x: expected a non-negative integer of at most 8 bits, found integer `300`"
        );
        assert_eq!(
            scrub("fits no u128, nor i64"),
            "fits no a non-negative integer of at most 128 bits, nor an integer of at most 64 bits (two's complement)"
        );
    }

    #[test]
    fn unknown_keys_and_names_get_a_suggestion() {
        assert_eq!(
            humanize("cases[0]: unknown field `contxt`, expected one of `name`, `rules`, `context`"),
            "cases[0]: unknown key `contxt`; expected one of `name`, `rules`, `context`; did you mean `context`?"
        );
        assert_eq!(
            humanize("r: unknown variant `valu`, expected `location` or `value`"),
            "r: unknown name `valu`; expected `location` or `value`; did you mean `value`?"
        );
        assert_eq!(humanize("missing field `bytes`"), "the required key `bytes` is missing");
    }

    #[test]
    fn enums_list_their_names() {
        let m = humanize("cases[0].context.result: invalid type: sequence, expected enum ResultKind");
        assert_eq!(m, "cases[0].context.result: expected a result kind: one of `location`, `value`, found a list");
    }

    #[test]
    fn a_collection_for_a_name_says_which_names() {
        let m = humanize("cases[0].context.result: invalid type: sequence, expected a YAML tag starting with '!'");
        assert_eq!(m, "cases[0].context.result: expected a result kind: one of `location`, `value`, found a list");
        assert_eq!(
            humanize("x.y: invalid type: map, expected a YAML tag starting with '!'"),
            "x.y: expected a name, found a mapping"
        );
        assert_eq!(
            humanize("o: invalid length 3, expected sequence of 2 elements"),
            "o: expected a list of 2 items, found 3 items"
        );
    }

    #[test]
    fn a_bare_description_says_it_is_what_was_expected() {
        assert_eq!(
            humanize("target: a register number or a register name"),
            "target: expected a register number or a register name"
        );
    }

    #[test]
    fn unknown_types_are_still_not_named() {
        let m = humanize("a: invalid type: integer `5`, expected struct Nowhere");
        assert_eq!(m, "a: expected a mapping, found integer `5`");
        assert_eq!(
            humanize("data did not match any variant of untagged enum Mystery"),
            "expected one of the forms this key takes"
        );
    }
}
