//! The bundled module cases, `specs/cases/spirv-modules/*.spvasm`: module
//! text that spirv-as assembles after `_prelude.spvasm`, each about the
//! rule of `specs/rules/spirv-module.yaml` its file is named after, with
//! the rules the reader must report on its `; expect-rules:` line (empty
//! for a module that breaks none) and the applications it must find on
//! its `; expect:` lines.

use std::path::{Path, PathBuf};

/// One module case file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleCase {
    /// The file.
    pub path: PathBuf,
    /// Its file name.
    pub name: String,
    /// The rule it is about: `spirv.module.` and its file stem.
    pub rule: String,
    /// The rules the reader must report, in the file's order.
    pub expect_rules: Vec<String>,
    /// The applications the reader must find, as
    /// `DebugDeclare [Constu 0, Swap, Xderef] 'x' line 7, 32 bits`.
    pub expect: Vec<String>,
    /// The text (without the prelude).
    pub text: String,
}

/// The module case of `text` in file `path`, or `None` when it has no
/// `; expect-rules:` line (not a case: the prelude, another file).
pub fn parse(path: &Path, text: &str) -> Option<ModuleCase> {
    let rules = text.lines().find_map(|l| l.strip_prefix("; expect-rules:"))?;
    let stem = path.file_stem()?.to_string_lossy().to_string();
    Some(ModuleCase {
        path: path.to_path_buf(),
        name: path.file_name()?.to_string_lossy().to_string(),
        rule: format!("spirv.module.{stem}"),
        expect_rules: rules.split(',').map(str::trim).filter(|r| !r.is_empty()).map(str::to_string).collect(),
        expect: text.lines().filter_map(|l| l.strip_prefix("; expect: ")).map(str::to_string).collect(),
        text: text.to_string(),
    })
}

/// Every module case under `paths` (files, or folders searched to any
/// depth), sorted by path. Files that cannot be read or are no case are
/// left out.
pub fn module_case_files(paths: &[PathBuf]) -> Vec<ModuleCase> {
    let files = crate::case::files::with_extension(paths, "spvasm");
    files.iter().filter_map(|f| parse(f, &std::fs::read_to_string(f).ok()?)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_cases_name_every_module_rule() {
        let cases = module_case_files(&[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases")]);
        let rules: Vec<&str> = cases.iter().map(|c| c.rule.as_str()).collect();
        let cat = crate::catalogue::Catalogue::get();
        for id in cat.rules.keys().filter(|k| k.starts_with("spirv.module.")) {
            assert!(rules.contains(&id.as_str()), "no module case for {id}");
        }
        let dp = cases.iter().find(|c| c.name == "declare-pointer.spvasm").expect("declare-pointer case");
        assert_eq!(dp.expect_rules, ["spirv.module.declare-pointer"]);
    }
}
