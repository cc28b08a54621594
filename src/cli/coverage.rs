//! `dwarfcheck coverage`: which cases exercise which rule, and the gaps.

use super::load_cases;
use dwarfcheck::case::blob::RuleCase;
use dwarfcheck::case::Case;
use dwarfcheck::catalogue::{Catalogue, RuleKind};
use dwarfcheck_core::outcome::unwind::UnwindEnd;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// The rules a case's expectations name as errors: its own expectation's,
/// and for an unwinding case every caller register fault and the end's.
fn negative_rules(c: &Case) -> Vec<String> {
    let rule = |o: &Outcome| match o {
        Outcome::Failed(Failure::IllFormed { rule, .. }) | Outcome::Failed(Failure::EvalError { rule, .. }) => {
            Some(rule.to_string())
        }
        _ => None,
    };
    match c {
        Case::Expr(e) => e.expect.as_ref().and_then(rule).into_iter().collect(),
        Case::Cfi(f) => {
            let mut out: Vec<String> = match &f.expect {
                Some(
                    CfiOutcome::Failed(Failure::IllFormed { rule, .. })
                    | CfiOutcome::Failed(Failure::EvalError { rule, .. }),
                ) => vec![rule.to_string()],
                _ => Vec::new(),
            };
            if let Some(u) = f.unwind.as_ref().and_then(|u| u.expect.as_ref()) {
                for s in &u.steps {
                    out.extend(s.registers.values().filter_map(|r| rule(&r.location)));
                }
                if let UnwindEnd::Fault { outcome } = &u.end {
                    out.extend(rule(outcome));
                }
            }
            out
        }
    }
}

/// Adds the rules `cases` name to `names` (rule to case names) and the
/// rules whose fault one of them expects to `negative`.
fn tally<'a, C: RuleCase>(
    cat: &'a Catalogue,
    cases: &'a [C],
    names: &mut BTreeMap<&'a str, Vec<&'a str>>,
    negative: &mut BTreeMap<&'a str, bool>,
) {
    for c in cases {
        for r in c.rules() {
            if let Some((k, _)) = cat.rules.get_key_value(r.as_str()) {
                names.entry(k.as_str()).or_default().push(c.name());
            }
        }
        for f in c.expected_faults() {
            if let Some((k, _)) = cat.rules.get_key_value(f.rule.as_str()) {
                negative.insert(k.as_str(), true);
            }
        }
    }
}

fn has_expect(c: &Case) -> bool {
    match c {
        Case::Expr(e) => e.expect.is_some(),
        Case::Cfi(f) => f.expect.is_some() || f.unwind.as_ref().is_some_and(|u| u.expect.is_some()),
    }
}

pub fn coverage(paths: Vec<PathBuf>, fail_uncovered: bool) -> ExitCode {
    let paths = if paths.is_empty() { super::default_case_paths() } else { paths };
    let module_cases = dwarfcheck::spirv::module::suite::module_case_files(&paths);
    let visa_paths = paths.clone();
    let cases = match load_cases(paths) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let cat = Catalogue::get();
    let mut by_rule: BTreeMap<&str, Vec<&Case>> = cat.rules.keys().map(|k| (k.as_str(), Vec::new())).collect();
    // SPIR-V module cases (specs/cases/spirv-modules/*.spvasm): the rule
    // each file is named after is exercised, its `expect-rules` are negative.
    let mut module_names: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut module_negative: BTreeMap<&str, bool> = BTreeMap::new();
    for m in &module_cases {
        let rules: std::collections::BTreeSet<&String> = std::iter::once(&m.rule).chain(&m.expect_rules).collect();
        for r in rules {
            if let Some((k, _)) = cat.rules.get_key_value(r.as_str()) {
                module_names.entry(k.as_str()).or_default().push(m.name.as_str());
            }
        }
        for r in &m.expect_rules {
            if let Some((k, _)) = cat.rules.get_key_value(r.as_str()) {
                module_negative.insert(k.as_str(), true);
            }
        }
    }
    // vISA and Tru64 cases (specs/cases/visa/*.visa, specs/cases/tru64/
    // *.tru64): the rules each names are exercised; a rule whose fault a
    // case expects has a negative case.
    let visa_cases: Vec<dwarfcheck::visa::cases::VisaCase> = dwarfcheck::visa::cases::case_files(&visa_paths)
        .iter()
        .filter_map(|f| dwarfcheck::visa::cases::load(f).map_err(|e| eprintln!("{e}")).ok())
        .flat_map(|f| f.cases)
        .collect();
    let tru64_cases: Vec<dwarfcheck::tru64::cases::Tru64Case> = dwarfcheck::tru64::cases::case_files(&visa_paths)
        .iter()
        .filter_map(|f| dwarfcheck::tru64::cases::load(f).map_err(|e| eprintln!("{e}")).ok())
        .flat_map(|f| f.cases)
        .collect();
    tally(cat, &visa_cases, &mut module_names, &mut module_negative);
    tally(cat, &tru64_cases, &mut module_names, &mut module_negative);
    for c in &cases {
        for r in c.rules() {
            if let Some(v) = by_rule.get_mut(r.as_str()) {
                v.push(c);
            }
        }
        for r in negative_rules(c) {
            if let Some(v) = by_rule.get_mut(r.as_str()) {
                if !v.iter().any(|x| std::ptr::eq(*x, c)) {
                    v.push(c);
                }
            }
        }
    }
    let (mut uncovered, mut no_negative) = (0, 0);
    let mut negatives = 0;
    for (id, list) in &by_rule {
        let kind = cat.rules[*id].kind;
        let needs_negative = matches!(kind, RuleKind::IllFormed | RuleKind::EvaluationError | RuleKind::Unspecified);
        let negative = module_negative.contains_key(id)
            || list.iter().any(|c| match kind {
                RuleKind::Unspecified => has_expect(c),
                _ => negative_rules(c).iter().any(|r| r == id),
            });
        let modules = module_names.get(id).map_or(&[][..], Vec::as_slice);
        let status = if list.is_empty() && modules.is_empty() {
            uncovered += 1;
            "UNCOVERED"
        } else if needs_negative && !negative {
            no_negative += 1;
            "NO-NEGATIVE-CASE"
        } else {
            "ok"
        };
        if needs_negative && negative {
            negatives += 1;
        }
        let all: Vec<&str> = list.iter().map(|c| c.name()).chain(modules.iter().copied()).collect();
        let names = &all[..all.len().min(4)];
        let more = if all.len() > 4 { format!(" +{}", all.len() - 4) } else { String::new() };
        println!("{status:<17} {id:<55} {:<17} {:>3}  {}{more}", format!("{kind:?}"), all.len(), names.join(", "));
    }
    println!(
        "{} rules, {} cases; {} rules uncovered, {} error/unspecified rules without a negative case, {} with one",
        by_rule.len(),
        cases.len() + module_cases.len() + visa_cases.len() + tru64_cases.len(),
        uncovered,
        no_negative,
        negatives
    );
    if fail_uncovered && (uncovered > 0 || no_negative > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
