//! Build script: turns the rule catalogue `specs/rules/*.yaml` (at the
//! workspace root, read through the symbolic link `rules`, which
//! `cargo package` follows: the published crate carries the files) into
//! Rust constants, so a rule ID used in code that is
//! not in the catalogue is a compile error. It also checks each rule's
//! shape: a known kind, a dotted lowercase ID, no ID defined twice.

use serde::Deserialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Rule {
    id: String,
    section: String,
    kind: String,
    says: String,
    #[serde(default)]
    decision: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

const KINDS: &[&str] = &["semantics", "ill-formed", "evaluation-error", "context", "unspecified"];

fn main() {
    let dir = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("rules");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut consts = String::new();
    let mut seen = BTreeSet::new();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let text = std::fs::read_to_string(f).unwrap();
        let rules: Vec<Rule> = yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for r in rules {
            assert!(KINDS.contains(&r.kind.as_str()), "{}: rule {} has unknown kind {}", f.display(), r.id, r.kind);
            assert!(
                r.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-'),
                "{}: rule id {} must be dotted lowercase",
                f.display(),
                r.id
            );
            assert!(seen.insert(r.id.clone()), "{}: rule {} defined twice", f.display(), r.id);
            let name: String =
                r.id.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
            let says = r.says.replace('\n', " ");
            writeln!(
                consts,
                "/// `{}` ({}): {}\npub const {}: RuleId = RuleId::from_static(\"{}\");",
                r.id,
                r.kind,
                says.replace('`', "'").replace('<', "&lt;").replace('>', "&gt;"),
                name,
                r.id
            )
            .unwrap();
        }
    }
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("rule_ids.rs");
    std::fs::write(out, consts).unwrap();
}
