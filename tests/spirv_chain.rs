//! The chain `llvm-spirv-15 -r` → retarget → `llc-15` (x86_64, amdgcn
//! gfx900) → DWARF → `elf`'s extraction (issue 16 item 6, "the whole
//! chain"; item 7's module generator), judged as
//! `consumer::spirv::chain` defines: each variable's DWARF location
//! against the SPIR-V expression evaluated directly in the corresponding
//! context, with the harness's comparison (`runner::compare`), both
//! evaluators.
//!
//! Oracles: the evaluators on the SPIR-V side (the seed's semantics), and
//! hand-derived DWARF bytes for a few expressions (from the case text and
//! LLVM's documented lowering of a `DIExpression`). Every outcome must be
//! agree or a known class (`chain::classes`). Per-input counts are printed
//! (`--nocapture`). Without the tools the tests are skipped, or fail when
//! `CI` is set.

use dwarfcheck::case::ExprCase;
use dwarfcheck::consumer::external::process::TempDir;
use dwarfcheck::consumer::spirv::chain::{self, classes, compile, dies, judge, Arch};
use dwarfcheck::consumer::spirv::tools;
use dwarfcheck::runner::compare::{judge as compare, same_evaluator_outcome, Verdict};
use dwarfcheck::spirv::module::{self, build};
use dwarfcheck_core::encoding::spirv::{Applies, DebugOperation, SpirvExpression};
use dwarfcheck_core::outcome::Outcome;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tools_present() -> Option<()> {
    dwarfcheck::testing::needed(
        "spirv-as, llvm-spirv-15, llvm-dis-15, llvm-as-15 and llc-15",
        compile::installed().then_some(()),
    )
}

const COMPARE: judge::Compare = judge::Compare {
    same_evaluator: same_evaluator_outcome,
    // The SPIR-V outcome is the reference: agree, or both ill-formed (the
    // chain carried an ill-formed expression through and DWARF diagnoses it).
    agree: |dwarf: &Outcome, spirv: &Outcome| {
        matches!(compare(spirv, dwarf, false), Verdict::Agree | Verdict::IllFormedDiagnosed)
    },
};

/// What the chain gave for one module on one target.
#[derive(Debug)]
enum Ran {
    /// A stage failed.
    Failed(compile::StageFailure),
    /// The object's DWARF expressions and its variables, judged.
    Judged(Vec<ExprCase>, Vec<judge::Variable>),
}

/// Counts for one input on one target.
#[derive(Debug, Default, Clone)]
struct Counts {
    modules: usize,
    variables: usize,
    judged: usize,
    agree: usize,
    not_judged: usize,
    per_class: BTreeMap<String, usize>,
    unclassified: Vec<String>,
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "modules {} variables {} judged {} agree {} not-judged {}",
            self.modules, self.variables, self.judged, self.agree, self.not_judged
        )?;
        for (c, n) in &self.per_class {
            write!(f, " {c} {n}")?;
        }
        if !self.unclassified.is_empty() {
            write!(f, " UNCLASSIFIED {}", self.unclassified.len())?;
        }
        Ok(())
    }
}

/// The module's applications as the chain matches them.
fn applied(m: &module::Module) -> Vec<judge::Applied> {
    m.applications
        .iter()
        .filter_map(|a| {
            Some(judge::Applied {
                name: a.variable.as_ref().and_then(|v| v.name.clone()),
                line: a.variable.as_ref().and_then(|v| v.line).map(u64::from),
                expression: a.expression.clone()?,
            })
        })
        .collect()
}

/// `dir/name.spv` through the chain for each target.
fn run(dir: &Path, name: &str, m: &module::Module) -> Vec<(Arch, Ran)> {
    let ir = compile::reverse(dir, name);
    let applied = applied(m);
    Arch::ALL
        .iter()
        .map(|&arch| {
            let ran = match ir.as_ref().map_err(Clone::clone).and_then(|ir| compile::object(dir, name, ir, arch)) {
                Err(f) => Ran::Failed(f),
                Ok(obj) => {
                    let opts = dwarfcheck::elf::Options { frames: false, ..Default::default() };
                    let x = dwarfcheck::elf::extract_bytes(&obj, name, &opts).expect("elf reads the chain's object");
                    let vars = dies::variables(&obj).expect("gimli reads the chain's object");
                    let judged = judge::judge(&x.exprs, &vars, &applied, &COMPARE);
                    Ran::Judged(x.exprs, judged)
                }
            };
            (arch, ran)
        })
        .collect()
}

/// Adds one module's result on one target to `c`.
fn count(c: &mut Counts, what: &str, arch: Arch, ran: &Ran, exprs: &[&SpirvExpression]) {
    c.modules += 1;
    match ran {
        Ran::Failed(f) => match classes::classify_failure(arch, f, exprs) {
            Some(id) => *c.per_class.entry(format!("{id}(module)")).or_default() += 1,
            None => c.unclassified.push(format!("{what} {}: {f}", arch.name())),
        },
        Ran::Judged(_, vars) => {
            for v in vars {
                c.variables += 1;
                match &v.judgement {
                    judge::Judgement::Agree => {
                        c.judged += 1;
                        c.agree += 1
                    }
                    judge::Judgement::NotJudged(_) => c.not_judged += 1,
                    j => {
                        c.judged += 1;
                        match classes::classify(j) {
                            Some(id) => *c.per_class.entry(id.to_string()).or_default() += 1,
                            None => c.unclassified.push(format!("{what} {} {:?}: {j:?}", arch.name(), v.die.name)),
                        }
                    }
                }
            }
        }
    }
}

fn expr(applies: Applies, ops: &[(u32, &[u32])], bits: Option<u64>) -> SpirvExpression {
    SpirvExpression {
        applies,
        operations: ops.iter().map(|(c, w)| DebugOperation { code: *c, operands: w.to_vec() }).collect(),
        variable_bits: bits,
    }
}

/// One expression's module through the chain.
fn chain_of(e: &SpirvExpression) -> (TempDir, Vec<(Arch, Ran)>, module::Module) {
    let dir = TempDir::new().unwrap();
    let text = chain::module_text(&build::module_text(e));
    let spv = tools::assemble(dir.path(), "k", &text).unwrap_or_else(|f| panic!("spirv-as: {f}\n{text}"));
    let m = module::read_file(&spv).unwrap();
    let ran = run(dir.path(), "k", &m);
    (dir, ran, m)
}

/// Every `spirv:` case of `specs/cases/spirv/*.yaml` and
/// `specs/cases/spirv-chain/*.yaml`: (file/name, expression).
fn bundled() -> Vec<(String, SpirvExpression)> {
    dwarfcheck::testing::spirv_expressions(&["specs/cases/spirv", "specs/cases/spirv-chain"])
}

fn report(title: &str, per: &BTreeMap<Arch, Counts>) {
    for (arch, c) in per {
        println!("{title} [{}]: {c}", arch.name());
        for u in &c.unclassified {
            println!("  unclassified: {u}");
        }
    }
}

fn assert_classified(per: &BTreeMap<Arch, Counts>) {
    for (arch, c) in per {
        assert!(c.unclassified.is_empty(), "{}: unclassified outcomes:\n{}", arch.name(), c.unclassified.join("\n"));
    }
}

#[test]
fn every_bundled_case_through_the_chain() {
    if tools_present().is_none() {
        return;
    }
    let cases = bundled();
    assert!(cases.len() >= 50, "expected the bundled SPIR-V cases, found {}", cases.len());
    let mut per: BTreeMap<Arch, Counts> = BTreeMap::new();
    for (name, e) in &cases {
        let (_dir, ran, _) = chain_of(e);
        for (arch, r) in &ran {
            let c = per.entry(*arch).or_default();
            count(c, name, *arch, r, &[e]);
            let line = match r {
                Ran::Failed(f) => format!("{f}"),
                Ran::Judged(x, v) => format!(
                    "{} | {}",
                    x.iter()
                        .filter(|c| c.name.ends_with(".loc") || c.name.contains(".loc."))
                        .map(|c| format!("{:02x?}", &c.expr[..]))
                        .collect::<Vec<_>>()
                        .join(" "),
                    v.iter().map(|v| format!("{:?}", v.judgement)).collect::<Vec<_>>().join("; ")
                ),
            };
            println!("{name}\t{e}\t{}\t{line}", arch.name());
        }
    }
    report("bundled spirv: cases", &per);
    assert_classified(&per);
}

#[test]
fn every_fixture_module_through_the_chain() {
    if tools_present().is_none() {
        return;
    }
    let Some(files) = dwarfcheck::testing::spirv_fixture_modules() else { return };
    let mut all: BTreeMap<Arch, Counts> = BTreeMap::new();
    for f in &files {
        let m = module::read_file(f).unwrap();
        let dir = TempDir::new().unwrap();
        std::fs::copy(f, dir.path().join("k.spv")).unwrap();
        let exprs: Vec<&SpirvExpression> = m.applications.iter().filter_map(|a| a.expression.as_ref()).collect();
        let shapes: std::collections::BTreeSet<String> = exprs.iter().map(|e| e.to_string()).collect();
        let ran = run(dir.path(), "k", &m);
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let mut per: BTreeMap<Arch, Counts> = BTreeMap::new();
        for (arch, r) in &ran {
            count(per.entry(*arch).or_default(), &name, *arch, r, &exprs);
            count(all.entry(*arch).or_default(), &name, *arch, r, &exprs);
            if let Ran::Judged(_, vars) = r {
                for v in vars.iter().filter(|v| !matches!(v.judgement, judge::Judgement::Agree)) {
                    println!("  {name} {} {:?} line {:?}: {:?}", arch.name(), v.die.name, v.die.line, v.judgement);
                }
            }
        }
        report(&format!("{name} ({} expressions, {} shapes)", exprs.len(), shapes.len()), &per);
    }
    report("all fixtures", &all);
    assert_classified(&all);
}

/// The DWARF expressions of the chain's one variable `v` on `arch`: the
/// exprloc bytes, or `const:N` for a `DW_AT_const_value`.
fn dwarf_of(e: &SpirvExpression, arch: Arch) -> Result<String, String> {
    let (_dir, ran, _) = chain_of(e);
    match &ran.iter().find(|(a, _)| *a == arch).unwrap().1 {
        Ran::Failed(f) => Err(f.to_string()),
        Ran::Judged(x, vars) => {
            let v = vars.iter().find(|v| v.die.name.as_deref() == Some("v")).expect("a DIE for v");
            if let Some(n) = v.die.const_value {
                return Ok(format!("const:{n}"));
            }
            let c = x.iter().find(|c| judge::die_of(&c.name) == Some((v.die.offset, "loc"))).expect("a location");
            Ok(c.expr.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" "))
        }
    }
}

/// Hand-derived from the case text and LLVM's lowering of a DIExpression:
/// a declared variable is at its alloca's slot (`DW_OP_fbreg N`, 0x91 and
/// an SLEB128 N) followed by the operations; a `Fragment O S` becomes an
/// empty `DW_OP_piece O/8` (0x93) before and `DW_OP_piece S/8` after; a
/// `DebugValue` of the constant 5 starts with `DW_OP_lit5` (0x35), ends
/// with `DW_OP_stack_value` (0x9f), and with no operations is
/// `DW_AT_const_value 5`.
#[test]
fn hand_checked_expressions() {
    use dwarfcheck_core::encoding::spirv::code::*;
    if tools_present().is_none() {
        return;
    }
    let fbreg = |s: &str, tail: &str| {
        let mut parts = s.split(' ');
        let prefix: Vec<&str> = parts.by_ref().take_while(|b| *b != "91").collect();
        let slot = parts.next().expect("an fbreg operand");
        let rest: Vec<&str> = parts.collect();
        (
            prefix.join(" "),
            i8::from_str_radix(slot, 16).is_ok() || u8::from_str_radix(slot, 16).is_ok(),
            rest.join(" "),
            tail.to_string(),
        )
    };
    for arch in Arch::ALL {
        // [Fragment 0 32] declared, 64-bit variable: DW_OP_fbreg N; DW_OP_piece 4.
        let d = dwarf_of(&expr(Applies::Declare, &[(FRAGMENT, &[0, 32])], Some(64)), arch).unwrap();
        let (pre, ok, rest, _) = fbreg(&d, "");
        assert!(pre.is_empty() && ok && rest == "93 04", "{}: {d}", arch.name());
        // [Fragment 32 32] declared: DW_OP_piece 4; DW_OP_fbreg N; DW_OP_piece 4.
        let d = dwarf_of(&expr(Applies::Declare, &[(FRAGMENT, &[32, 32])], Some(64)), arch).unwrap();
        let (pre, ok, rest, _) = fbreg(&d, "");
        assert!(pre == "93 04" && ok && rest == "93 04", "{}: {d}", arch.name());
        // -O0's [Constu 0, Swap, Xderef]: DW_OP_fbreg N; DW_OP_lit0; DW_OP_swap; DW_OP_xderef.
        let d =
            dwarf_of(&expr(Applies::Declare, &[(CONSTU, &[0]), (SWAP, &[]), (XDEREF, &[])], Some(32)), arch).unwrap();
        let (pre, ok, rest, _) = fbreg(&d, "");
        assert!(pre.is_empty() && ok && rest == "30 16 18", "{}: {d}", arch.name());
        // DebugValue [] of 5: DW_AT_const_value 5.
        assert_eq!(dwarf_of(&expr(Applies::Value, &[], Some(64)), arch).unwrap(), "const:5");
        // DebugValue [PlusUconst 1, StackValue]: lit5 plus_uconst 1 stack_value.
        let e = expr(Applies::Value, &[(PLUS_UCONST, &[1]), (STACK_VALUE, &[])], Some(64));
        assert_eq!(dwarf_of(&e, arch).unwrap(), "35 23 01 9f");
        // DebugValue [StackValue, Fragment 32 32]: piece 4; lit5 stack_value piece 4.
        let e = expr(Applies::Value, &[(STACK_VALUE, &[]), (FRAGMENT, &[32, 32])], Some(64));
        assert_eq!(dwarf_of(&e, arch).unwrap(), "93 04 35 9f 93 04");
        // SC3: DebugValue [PlusUconst 8] gets a DW_OP_stack_value it did not have.
        let e = expr(Applies::Value, &[(PLUS_UCONST, &[8])], None);
        assert_eq!(dwarf_of(&e, arch).unwrap(), "35 23 08 9f");
        // SC13: DebugValue [Deref] of 5 loses its Deref: DW_OP_lit5 alone.
        assert_eq!(dwarf_of(&expr(Applies::Value, &[(DEREF, &[])], Some(64)), arch).unwrap(), "35");
        // LS3: BitPiece after StackValue crashes llvm-spirv-15 -r.
        let e = expr(Applies::Value, &[(STACK_VALUE, &[]), (BIT_PIECE, &[0, 16])], Some(32));
        let f = dwarf_of(&e, arch).unwrap_err();
        assert!(f.starts_with("llvm-spirv-15 -r: ") && f.contains("SIGSEGV"), "{f}");
        // LS1: a declared BitPiece fails the verifier instead.
        let f = dwarf_of(&expr(Applies::Declare, &[(BIT_PIECE, &[0, 16])], Some(32)), arch).unwrap_err();
        assert!(f.contains("Fails to verify module: invalid expression"), "{f}");
        // LS2: a Fragment of the whole variable is rejected by LLVM's verifier.
        let f = dwarf_of(&expr(Applies::Declare, &[(FRAGMENT, &[0, 64])], Some(64)), arch).unwrap_err();
        assert!(f.contains("fragment covers entire variable"), "{f}");
    }
}

/// SC4's minimal module: llc-15 for amdgcn dies on an escaping alloca of
/// address space 0.
#[test]
fn sc4_minimal_module_crashes_llc() {
    if tools_present().is_none() {
        return;
    }
    // In a scratch directory: the contained run writes its output file there.
    let tmp = TempDir::new().unwrap();
    let name = "sc4-escaping-alloca-amdgcn.ll";
    std::fs::copy(root().join("specs/cases/spirv-chain").join(name), tmp.path().join(name)).unwrap();
    let out = tools::run(tmp.path(), "llc-15", &["-O0", "-filetype=obj", "-mcpu=gfx900", name, "-o", "k.o"]);
    let f = compile::StageFailure {
        stage: compile::Stage::Llc,
        failure: match out {
            Ok(o) => tools::Failure::Refused(o.code, o.text),
            Err(f) => tools::Failure::Fault(f),
        },
    };
    assert!(f.to_string().contains("SIGSEGV"), "{f}");
    assert_eq!(classes::classify_failure(Arch::Amdgcn, &f, &[]), Some("SC4"));
}

mod generated {
    //! Item 7's module generator: well-formed expressions llvm-spirv
    //! carries (`classes::carried`) from `fuzzing::gen::spirv`, each in
    //! the chain's module, through the chain for both targets.
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // A fixed seed unless PROPTEST_RNG_SEED says otherwise: the
        // verdicts are third-party behaviour, so CI judges the same 24
        // modules every run; set the variable to explore other shapes.
        #![proptest_config(ProptestConfig {
            cases: 24,
            failure_persistence: None,
            rng_seed: match ProptestConfig::default().rng_seed {
                proptest::test_runner::RngSeed::Random => proptest::test_runner::RngSeed::Fixed(0x5eed_0016),
                chosen => chosen,
            },
            ..ProptestConfig::default()
        })]
        #[test]
        fn generated_modules_agree_or_are_classified(bytes in proptest::collection::vec(any::<u8>(), 256..1024)) {
            if tools_present().is_none() {
                return Ok(());
            }
            let mut u = arbitrary::Unstructured::new(&bytes);
            let Ok(case) = dwarfcheck::fuzzing::gen::spirv_case(&mut u) else { return Ok(()) };
            let e = (**case.spirv.as_ref().unwrap()).clone();
            prop_assume!(classes::carried(&e));
            let (_dir, ran, _) = chain_of(&e);
            let mut per: BTreeMap<Arch, Counts> = BTreeMap::new();
            for (arch, r) in &ran {
                count(per.entry(*arch).or_default(), &e.to_string(), *arch, r, &[&e]);
            }
            report(&format!("generated {e}"), &per);
            for (arch, c) in &per {
                prop_assert!(c.unclassified.is_empty(), "{}: {}", arch.name(), c.unclassified.join("\n"));
            }
        }
    }
}
