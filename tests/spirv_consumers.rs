//! The SPIR-V tools as consumers (issue 16 item 6): spirv-as, spirv-dis,
//! spirv-val and `llvm-spirv-15 -r` judged on every bundled `spirv:` case
//! through the runner, as `dwarfcheck run --consumers ...` judges them.
//!
//! Oracles: the reference's direct evaluation of each case (whose
//! expectation is hand-derived, `specs/cases/spirv/`), and, for the named
//! cases below, verdicts and classes worked out by hand from the case text
//! and the tools' documented behaviour (docs/consumers.md "SPIR-V tools as
//! consumers"). Without spirv-tools, llvm-spirv-15 or llvm-dis-15 the tests
//! are skipped, or fail when `CI` is set.

use dwarfcheck::case::Case;
use dwarfcheck::consumer::spirv::{SpirvTool, Tool};
use dwarfcheck::consumer::Consumer;
use dwarfcheck::runner::compare::Verdict;
use std::collections::BTreeMap;

fn bundled() -> Vec<Case> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/spirv");
    let files = dwarfcheck::case::yaml::find_case_files(&[dir]).unwrap();
    files.iter().flat_map(|f| dwarfcheck::case::yaml::load_file(f).unwrap()).collect()
}

fn consumer(tool: Tool) -> Option<Box<dyn Consumer>> {
    let c = SpirvTool::new(tool).ok().map(|c| Box::new(c) as Box<dyn Consumer>);
    dwarfcheck::testing::needed(tool.name(), c)
}

fn count(v: &BTreeMap<Verdict, usize>, k: Verdict) -> usize {
    v.get(&k).copied().unwrap_or(0)
}

fn answer(tool: Tool, name: &str) -> dwarfcheck_core::outcome::Outcome {
    let cases = bundled();
    let Some(Case::Expr(c)) = cases.iter().find(|c| c.name() == name) else { panic!("no case {name}") };
    SpirvTool::new(tool).unwrap().evaluate(c)
}

/// spirv-as (names) and spirv-dis (words) read every operation as
/// dwarfcheck does: no disagreement and no fault. Each refuses the
/// modules whose operations it cannot spell: an undefined code (6 cases)
/// and, for spirv-as, a wrong operand count.
#[test]
fn spirv_as_and_spirv_dis_read_every_operation_as_dwarfcheck_does() {
    for tool in [Tool::SpirvAs, Tool::SpirvDis] {
        let Some(c) = consumer(tool) else { return };
        let cases = bundled();
        let (v, failures) = dwarfcheck::testing::judged(c, &cases);
        println!("{}: {v:?}", tool.name());
        assert_eq!(failures, [], "{}", tool.name());
        assert!(count(&v, Verdict::Agree) >= 50, "{}: {v:?}", tool.name());
        assert_eq!(count(&v, Verdict::IllFormedAccepted), 0, "{}: {v:?}", tool.name());
    }
    let refused = |tool, name| {
        let o = answer(tool, name);
        assert!(o.rule().is_some_and(|r| r.as_str().starts_with(&format!("{}:", Tool::name(tool)))), "{name}: {o}");
    };
    refused(Tool::SpirvAs, "unknown-code-10");
    refused(Tool::SpirvDis, "unknown-code-10");
    // `Constu` with no literal: spirv-as counts the operands of a named
    // operation.
    refused(Tool::SpirvAs, "operand-count-constu-none");
}

/// spirv-val checks only that each operand of a DebugExpression is a
/// DebugOperation, and the instruction's own shape: it refuses undefined
/// codes and missing literals, and accepts stack underflows, misplaced
/// StackValues and Fragments outside the variable.
#[test]
fn spirv_val_accepts_ill_formed_expressions_it_does_not_check() {
    let Some(c) = consumer(Tool::SpirvVal) else { return };
    let cases = bundled();
    let (v, failures) = dwarfcheck::testing::judged(c, &cases);
    println!("spirv-val: {v:?}");
    assert_eq!(failures, []);
    assert!(count(&v, Verdict::IllFormedAccepted) >= 20, "{v:?}");
    let accepted = dwarfcheck::consumer::spirv::val::accepted();
    for name in ["underflow-plus", "fragment-past-variable-end", "stack-value-before-plus-uconst"] {
        assert_eq!(answer(Tool::SpirvVal, name), accepted, "{name}");
    }
    for name in ["unknown-code-10", "operand-count-constu-none"] {
        let o = answer(Tool::SpirvVal, name);
        assert!(o.rule().is_some_and(|r| r.as_str().starts_with("spirv-val:")), "{name}: {o}");
    }
}

/// llvm-spirv-15 -r: every disagreement and fault has a class, and the
/// classes fall where the case text says (worked out by hand).
#[test]
fn llvm_spirv_failures_are_classified() {
    let Some(c) = consumer(Tool::LlvmSpirv) else { return };
    let cases = bundled();
    let (v, failures) = dwarfcheck::testing::judged(c, &cases);
    println!("llvm-spirv: {v:?}");
    for (case, class) in &failures {
        println!("  {case}: {class:?}");
    }
    let unclassified: Vec<_> = failures.iter().filter(|(_, c)| c.is_none()).collect();
    assert_eq!(unclassified, Vec::<&(String, Option<String>)>::new());
    let class_of = |name: &str| failures.iter().find(|(c, _)| c == name).and_then(|(_, k)| k.clone());
    assert_eq!(class_of("llvm-spirv-bit-piece-0-16-declare").as_deref(), Some("LS1"));
    assert_eq!(class_of("bit-piece-memory").as_deref(), Some("LS1"));
    assert_eq!(class_of("fragment-whole-variable").as_deref(), Some("LS2"));
    assert_eq!(class_of("llvm-spirv-bit-piece-0-16-value").as_deref(), Some("LS3"));
    assert_eq!(class_of("unknown-code-10").as_deref(), Some("LS4"));
    assert_eq!(class_of("operand-count-constu-none").as_deref(), Some("LS4"));
    // The -O2 shape translates to DWARF that means the same location.
    assert!(failures.iter().all(|(c, _)| !c.starts_with("fragment-low-half")));
    assert!(count(&v, Verdict::Agree) >= 30, "{v:?}");
}

/// Every expression of the real fixture modules, built into its own
/// module: the four tools agree with the reference on each they are judged
/// on (the -O2 Fragment shapes included), with no fault. Module cases give
/// the evaluators the target's own vendor profile, so this also checks that
/// the translated DIExpression is evaluated under hetero-2020's operations.
#[test]
fn fixture_expressions_agree_through_every_tool() {
    let Some(modules) = dwarfcheck::testing::spirv_fixture_modules() else { return };
    let mut cases = Vec::new();
    for m in modules.iter().filter(|m| m.to_string_lossy().contains("-O2")) {
        let read = dwarfcheck::spirv::module::read_file(m).unwrap();
        cases.extend(
            dwarfcheck::spirv::module::cases::cases(&read, &m.to_string_lossy(), 1).into_iter().map(Case::Expr),
        );
    }
    assert!(cases.len() >= 50, "{}", cases.len());
    for tool in Tool::ALL {
        let Some(c) = consumer(tool) else { return };
        let (v, failures) = dwarfcheck::testing::judged(c, &cases);
        println!("{}: {v:?}", tool.name());
        assert_eq!(failures, [], "{}", tool.name());
        assert!(count(&v, Verdict::Agree) >= 10, "{}: {v:?}", tool.name());
    }
}
