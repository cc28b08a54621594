//! The oracles and generators on fixed and pseudo-random inputs: the rich
//! context loads, generated inputs agree, and most generated expressions
//! reach a value or a location (the depth goal of issue 5).

use super::*;
use arbitrary::Unstructured;

/// Deterministic pseudo-random bytes, `n` of them from `seed`.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    export::pseudo_random(seed, n)
}

#[test]
fn rich_context_has_what_the_generators_use() {
    let c = rich_context();
    // rsp (7) = 0x7ffc0f00 little-endian; the unit has the four base types.
    assert_eq!(c.registers[&7], 0x7ffc0f00u64.to_le_bytes().to_vec());
    let cu = c.cu.as_ref().expect("unit");
    assert_eq!(cu.base_types.keys().copied().collect::<Vec<_>>(), vec![0x10, 0x18, 0x20, 0x28]);
    assert!(c.caller.is_some() && c.object.is_some());
}

#[test]
fn known_expression_checks() {
    let ctx = rich_context();
    // DW_OP_breg7 +8 DW_OP_deref: rsp 0x7ffc0f00 + 8 = 0x7ffc0f08, whose
    // 8 bytes in context.yaml are 01 10 00 .. 00: the generic value 0x1001.
    let e = [0x77, 0x08, 0x06];
    check_expr(&e, &ctx).unwrap();
    let (r, _) = crate::consumer::builtin::reference_outcome(&expr_case(&e, &ctx));
    match r {
        dwarfcheck_core::outcome::Outcome::Value(v) => assert_eq!(v.to_u128(), 0x1001),
        other => panic!("{other}"),
    }
    // Undecodable and truncated input is fine too (both evaluators agree).
    check_expr(&[0x0c, 0x01], &ctx).unwrap();
    check_expr(&[0xff, 0xff], &ctx).unwrap();
}

/// Generated contexts and expressions (the `expr_ops` input): both
/// evaluators agree, and at least half reach a value or a location (issue
/// 5 asks for that share rather than errors), on x86-64 and AMDGPU alike.
#[test]
fn generated_expressions_agree_and_mostly_reach_a_result() {
    let (mut deep, mut gimli_disagrees, n) = (std::collections::BTreeMap::new(), Vec::new(), 600);
    let mut why = std::collections::BTreeMap::new();
    for seed in 0..n {
        let data = bytes(seed, 512);
        let (fc, case) = gen::fuzz_case(&mut Unstructured::new(&data)).unwrap();
        check_expr_case(&case).unwrap_or_else(|m| panic!("seed {seed}: {m}"));
        if let Some((crate::runner::compare::Verdict::Disagree, class, m)) = gimli_verdict(&case) {
            gimli_disagrees.push((class, m));
        }
        let (r, _) = crate::consumer::builtin::reference_outcome(&case);
        let d = deep.entry(fc.target.clone()).or_insert((0usize, 0usize));
        d.0 += usize::from(matches!(
            r,
            dwarfcheck_core::outcome::Outcome::Value(_) | dwarfcheck_core::outcome::Outcome::Location(_)
        ));
        d.1 += 1;
        let k = format!("{} {}", fc.target, r.rule().map_or(r.kind().to_string(), |x| x.to_string()));
        *why.entry(k).or_insert(0usize) += 1;
    }
    for (t, (d, all)) in &deep {
        assert!(d * 2 >= *all, "{t}: {d} of {all} reach a value or location: {why:?}");
    }
    assert_eq!(deep.len(), 2, "both targets generated: {deep:?}");
    eprintln!("deep per target {deep:?}; gimli disagrees on {}: {gimli_disagrees:?}", gimli_disagrees.len());
    // Every gimli disagreement on generated input is of a known class.
    let unknown: Vec<_> = gimli_disagrees.iter().filter(|d| d.0.is_none()).collect();
    assert!(unknown.is_empty(), "gimli disagreements of no known class: {unknown:?}");
}

#[test]
fn generated_cfi_agrees() {
    for seed in 0..200 {
        let data = bytes(seed, 256);
        let mut u = Unstructured::new(&data);
        let t = Arc::new(dwarfcheck_core::target::presets::x86_64());
        if let Some(sec) = gen::cfi_section(&mut u, &t).unwrap() {
            check_cfi(sec.kind, &sec.bytes, t).unwrap_or_else(|m| panic!("seed {seed}: {m}"));
        }
    }
}

#[test]
fn case_yaml_never_panics_on_damaged_text() {
    let text = case::FuzzCase::rich(vec![0x77, 0x08, 0x06]).to_yaml("rich", "the rich context");
    check_case_yaml(&text).unwrap();
    for seed in 0..200u64 {
        let mut t = text.as_bytes().to_vec();
        for (i, b) in bytes(seed, 6).chunks(2).enumerate() {
            let at = (usize::from(b[0]) * 7 + i * 131) % t.len();
            t[at] = b[1] % 0x7f;
        }
        let _ = check_case_yaml(&String::from_utf8_lossy(&t));
    }
}

/// ddmin keeps exactly the items the failure needs (hand-derived: the
/// predicate needs 3 and 17, so the minimum is [3, 17]).
#[test]
fn ddmin_finds_the_two_needed_items() {
    let mut budget = 10_000;
    let got = minimize::ddmin((0..20).collect(), &mut budget, &mut |v: &[u32]| v.contains(&3) && v.contains(&17));
    assert_eq!(got, vec![3, 17]);
    assert!(budget < 10_000);
}

/// Minimising over operations and context entries: a rich case with one
/// entry that cannot load (register 999, which x86-64 does not have)
/// fails as `load`; the minimum is that entry alone and no operation.
#[test]
fn minimize_drops_operations_and_entries_not_needed() {
    let mut fc = case::FuzzCase::rich(vec![0x77, 0x08, 0x06, 0x31]);
    let bad = case::Entry::Register(999, case::RegValue::Int(1));
    fc.entries.insert(5, bad.clone());
    let m = minimize::minimize(targets::Input::Expr(fc), 5_000).unwrap();
    assert_eq!(m.failure.kind, "load");
    let targets::Input::Expr(small) = m.input else { panic!("an expression input") };
    assert_eq!(small.expr, Vec::<u8>::new());
    assert_eq!(small.entries, vec![bad]);
}

/// The context a fuzz case builds from its entries is the one the case
/// loader reads from the case's YAML (the form minimised findings are
/// written in), on the rich context and on generated x86-64 and AMDGPU
/// contexts of every profile the generator picks: the two are compared
/// field by field through their debug text.
#[test]
fn built_contexts_are_what_their_yaml_loads_to() {
    let mut seen = std::collections::BTreeSet::new();
    let mut cases = vec![case::FuzzCase::rich(vec![0x77, 0x08, 0x06])];
    for seed in 0..300 {
        let data = bytes(seed, 512);
        if let Ok((fc, _)) = gen::fuzz_case(&mut Unstructured::new(&data)) {
            cases.push(fc);
        }
    }
    for fc in cases {
        seen.insert((fc.target.clone(), fc.vendor.clone()));
        let built = fc.load().unwrap();
        let text = fc.to_yaml("c", "");
        let loaded = match crate::case::yaml::load_str("c.yaml", &text) {
            Ok(mut v) if v.len() == 1 => match v.remove(0) {
                crate::case::Case::Expr(e) => e,
                crate::case::Case::Cfi(_) => panic!("a CFI case from\n{text}"),
            },
            other => panic!("{other:?} from\n{text}"),
        };
        assert_eq!(format!("{:?}", built.ctx), format!("{:?}", loaded.ctx), "{text}");
        assert_eq!(built.expr, loaded.expr);
    }
    assert!(seen.len() >= 4, "targets and profiles generated: {seen:?}");
}

/// The expressions the fuzz contexts hold are given as text and bytes:
/// the assembler turns each text into those bytes on every target and
/// profile the generator uses.
#[test]
fn context_expressions_assemble_to_their_bytes() {
    for t in ["x86_64", "amdgpu-wave64"] {
        let target = case::preset(t).unwrap();
        for v in dwarfcheck_core::encoding::VendorProfile::NAMES {
            let vendor = dwarfcheck_core::encoding::VendorProfile::by_name(v).unwrap();
            for e in case::rich::EXPRESSIONS {
                let b = crate::asm::expr::assemble(e.text, &target, &vendor, Default::default(), 8).unwrap();
                assert_eq!(b, e.bytes, "{} on {t} {v}", e.text);
            }
        }
    }
}

/// The AMDGPU register numbers the generator uses are those of the names
/// it means (dwarfcheck_core::target::amdgpu).
#[test]
fn amdgpu_register_numbers_name_the_registers_meant() {
    let t = case::preset("amdgpu-wave64").unwrap();
    let n = |name: &str| t.register_by_name(name).map(|r| r.number);
    assert_eq!(n("exec_mask_64"), Some(gen::EXEC_MASK_64));
    assert_eq!(n("sgpr0"), Some(gen::SGPR0));
    assert_eq!(n("sgpr3"), Some(gen::SGPR0 + 3));
    assert_eq!(n("vgpr0"), Some(gen::VGPR0));
}

/// What `minimize::write` writes loads as a case file and replays.
#[test]
fn written_regressions_load_and_replay() {
    let dir = std::env::temp_dir().join(format!("dwarfcheck-regr-{}", std::process::id()));
    let m = minimize::Minimized {
        input: targets::Input::Expr(case::FuzzCase::rich(vec![0x77, 0x08, 0x06])),
        failure: minimize::Failure { kind: "differ", message: "example".into() },
        tries: 1,
    };
    let p = minimize::write(&m, targets::Target::ExprBytes, &dir).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.starts_with("# Found by the expr_bytes fuzz target"));
    let results = replay::replay(&dir);
    assert_eq!(results.len(), 1);
    assert!(results[0].1.is_ok(), "{results:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// fuzz-stats on three hand-picked `expr_bytes` inputs in the rich
/// context (hetero-2020): `DW_OP_lit1` (0x31) reaches a result;
/// `DW_OP_lit1 DW_OP_lit0 DW_OP_div` (0x31 0x30 0x1b) stops at the
/// division by zero, which counts as reached; 0xff is no opcode, a
/// decoding error at which nothing is reached. The profile decodes the
/// DWARF 5, GNU and hetero-2020 direct operations.
#[test]
fn stats_count_results_and_reached_operations() {
    let mut s = stats::Stats::default();
    s.add(targets::Target::ExprBytes, &[0x31]);
    s.add(targets::Target::ExprBytes, &[0x31, 0x30, 0x1b]);
    s.add(targets::Target::ExprBytes, &[0x31, 0xff]);
    assert_eq!((s.inputs, s.evaluated, s.results), (3, 3, 1));
    let g = &s.groups["hetero-2020"];
    assert_eq!(g.reached.get("DW_OP_lit"), Some(&2));
    assert_eq!(g.reached.get("DW_OP_div"), Some(&1));
    assert_eq!(g.reached.len(), 2, "{:?}", g.reached);
    assert!(g.known.contains("DW_OP_LLVM_form_aspace_address") && g.known.contains("DW_OP_GNU_entry_value"));
    assert!(!g.known.contains("DW_OP_LLVM_user"));
    assert!(g.missing().contains(&"DW_OP_piece"));
}

/// The operations each profile decodes, counted by hand from
/// `dwarfcheck_core::encoding::op`: DWARF 5 has 0x03, 0x06, 0x08-0x2f
/// (40), 0x90-0xa9 (26) and the lit/reg/breg families (3): 71; GNU adds
/// 13; hetero-2020 adds the 12 direct extension opcodes; llvm-user adds
/// the 11 `DW_OP_LLVM_user` sub-operations (no aspace_implicit_pointer);
/// intel is GNU plus IGC's five `DW_OP_INTEL_*` (0xeb-0xef).
#[test]
fn profiles_decode_the_operations_of_their_tables() {
    let n = |p: &str| stats::profile_ops(&dwarfcheck_core::encoding::VendorProfile::by_name(p).unwrap()).len();
    assert_eq!(n("dwarf5"), 71);
    assert_eq!(n("gnu"), 84);
    assert_eq!(n("hetero-2020"), 96);
    assert_eq!(n("hetero-2020-uleb"), 96);
    assert_eq!(n("llvm-user"), 95);
    assert_eq!(n("intel"), 89);
}

/// The `expr_ops` generator reaches every operation of every vendor
/// profile (the reference executes it or stops at it) within 6,000
/// inputs of 512 pseudo-random bytes (fixed seeds), and generates every
/// profile.
#[test]
fn generator_reaches_every_operation_of_every_profile() {
    let mut s = stats::Stats::default();
    for seed in 0..6000 {
        s.add(targets::Target::ExprOps, &bytes(seed, 512));
    }
    let names: Vec<&str> = s.groups.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        dwarfcheck_core::encoding::VendorProfile::NAMES
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    for (p, g) in &s.groups {
        assert!(g.missing().is_empty(), "{p}: {} inputs never reach {:?}", g.evaluated, g.missing());
    }
}

/// The byte strings of a libFuzzer dictionary, checking its syntax: each
/// line is a comment or `name="..."` with only printable characters and
/// `\xNN` escapes inside the quotes.
fn dict_entries(text: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (name, rest) = line.split_once("=\"").unwrap_or_else(|| panic!("no `=\"` in {line:?}"));
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{line:?}");
        let body = rest.strip_suffix('"').unwrap_or_else(|| panic!("no closing quote in {line:?}"));
        let (mut v, b) = (Vec::new(), body.as_bytes());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\\' {
                assert_eq!(b[i + 1], b'x', "{line:?}");
                v.push(u8::from_str_radix(&body[i + 2..i + 4], 16).unwrap());
                i += 4;
            } else {
                assert!(b[i] != b'"' && (0x20..0x7f).contains(&b[i]), "{line:?}");
                v.push(b[i]);
                i += 1;
            }
        }
        out.push(v);
    }
    out
}

/// The dictionaries hold hand-checked encodings: `DW_OP_call_frame_cfa`
/// (0x9c), `DW_OP_breg7 -8` (0x77 0x78), `DW_OP_LLVM_user` +
/// `DW_OP_LLVM_extend` (0xe9 0x0b), hetero-2020's direct extend (0xeb),
/// `DW_OP_GNU_entry_value` (0xf3); `DW_CFA_def_cfa r7 1` (0x0c 0x07 0x01)
/// and `DW_CFA_offset r16 1` (0x90 0x01); the case-file key `expr: `.
#[test]
fn dictionaries_hold_known_encodings() {
    let expr = dict_entries(&dict::expr_dict());
    for want in [&[0x9c][..], &[0x77, 0x78], &[0xe9, 0x0b], &[0xeb], &[0xf3]] {
        assert!(expr.iter().any(|e| e == want), "expr.dict lacks {want:02x?}");
    }
    let cfi = dict_entries(&dict::cfi_dict());
    for want in [&[0x0c, 0x07, 0x01][..], &[0x90, 0x01]] {
        assert!(cfi.iter().any(|e| e == want), "cfi.dict lacks {want:02x?}");
    }
    assert!(dict_entries(&dict::case_yaml_dict()).iter().any(|e| e == b"expr: "));
}

/// `fuzz/dict/` holds what `fuzzing::dict` writes from the opcode tables.
/// After a change to the tables, `DWARFCHECK_BLESS=1 cargo test --release
/// --lib dictionaries_are_up_to_date` rewrites the files.
#[test]
fn dictionaries_are_up_to_date() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/dict");
    for (file, text) in dict::all() {
        let path = dir.join(file);
        if std::env::var_os("DWARFCHECK_BLESS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == text,
            "fuzz/dict/{file} differs from the opcode tables: run `DWARFCHECK_BLESS=1 cargo test --release --lib dictionaries_are_up_to_date`"
        );
    }
}

/// Coverage marks, derived by hand in the rich context (hetero-2020, the
/// third profile of `VendorProfile::NAMES`): `DW_OP_lit1 DW_OP_lit0
/// DW_OP_div` stops at the division (offset 2), after both literals ran;
/// `DW_OP_lit1 DW_OP_skip 0 DW_OP_lit2` gives a value, but past the skip
/// nothing is marked; 0xff does not decode, so nothing ran.
#[test]
fn marks_name_the_operations_the_reference_ran() {
    let ctx = rich_context();
    let marked = |e: &[u8]| {
        let case = expr_case(e, &ctx);
        let (r, _) = crate::consumer::builtin::reference_outcome(&case);
        let mut got = Vec::new();
        marks::executed(&case, &r, &mut |m| got.push(m));
        got
    };
    let h = 2 * 256;
    assert_eq!(marked(&[0x31, 0x30, 0x1b]), vec![h + 0x31, h + 0x30, h + 0x1b]);
    assert_eq!(marked(&[0x31, 0x2f, 0, 0, 0x32]), vec![h + 0x31, h + 0x2f]);
    assert_eq!(marked(&[0xff]), Vec::<usize>::new());
    // DW_OP_LLVM_user DW_OP_LLVM_extend under llvm-user (the fifth profile).
    assert_eq!(marks::mark_of(4, 0xe9, Some(0x0b)), 4 * 256 + 0xcb);
    assert_eq!(marks::MARKS, dwarfcheck_core::encoding::VendorProfile::NAMES.len() * 256);
}

/// `gen::shared_case` gives the case `gen::fuzz_case` does, also when its
/// context comes from the recent contexts: inputs that share their context
/// bytes (the same prefix, another tail) and repeated inputs.
#[test]
fn shared_cases_are_the_generated_cases() {
    for seed in 0..200u64 {
        let mut data = bytes(seed, 300);
        for round in 0..3 {
            if round == 2 {
                let n = data.len();
                data[n - 40..].copy_from_slice(&bytes(seed + 1000, 40));
            }
            let Ok((_, want)) = gen::fuzz_case(&mut Unstructured::new(&data)) else { continue };
            let got = gen::shared_case(&data).unwrap();
            assert_eq!(format!("{:?}", got.ctx), format!("{:?}", want.ctx), "seed {seed} round {round}");
            assert_eq!(got.expr, want.expr, "seed {seed} round {round}");
        }
    }
}

/// A `spirv_expr` input as a case file: the `spirv:` mapping in spirv-dis
/// spelling (a code the seed does not define as `#N`, so that it does not
/// read back as an operand), the variable's size and the initial entry.
#[test]
fn spirv_fuzz_case_writes_a_spirv_case() {
    use dwarfcheck_core::encoding::spirv::{code, Applies, DebugOperation, SpirvExpression};
    let op = |c, o: &[u32]| DebugOperation { code: c, operands: o.to_vec() };
    let mut fc = case::FuzzCase::rich(Vec::new());
    fc.spirv = Some(case::SpirvPart {
        expression: SpirvExpression {
            applies: Applies::Value,
            operations: vec![op(code::PLUS_UCONST, &[1]), op(34, &[7]), op(code::STACK_VALUE, &[])],
            variable_bits: Some(64),
        },
        entry: 0x41,
    });
    let text = fc.to_yaml("s", "");
    assert!(
        text.ends_with("    spirv:\n      value: \"PlusUconst 1, #34 7, StackValue\"\n      variable_bits: 64\n      entry: 0x41\n"),
        "{text}"
    );
    assert!(!text.contains("expr_bytes"), "{text}");
    let cases = crate::case::yaml::load_str("s.yaml", &text).unwrap();
    let crate::case::Case::Expr(e) = &cases[0] else { panic!("not an expression case") };
    assert_eq!(e.spirv.as_deref(), fc.spirv.as_ref().map(|p| &p.expression));
    assert_eq!(e.ctx.initial_stack, fc.load().unwrap().ctx.initial_stack);
}

/// Generated `spirv_expr` inputs survive the trip through a case file
/// (`FuzzCase::to_yaml`, then the case loader): the same SPIR-V
/// expression, lowering, initial stack, and the same reference outcome
/// as the generated case, and the oracles agree on both; some of them
/// hold codes the seed does not define.
#[test]
fn spirv_fuzz_cases_round_trip_through_yaml() {
    let mut unknown = 0;
    for seed in 0..300 {
        let data = bytes(seed, 512);
        let Some(targets::Input::Expr(fc)) = targets::Target::SpirvExpr.decode(&data) else { continue };
        let direct = gen::spirv_case(&mut Unstructured::new(&data)).unwrap();
        let loaded = fc.load().unwrap();
        assert_eq!(loaded.spirv, direct.spirv, "seed {seed}");
        let text = fc.to_yaml("s", "");
        let cases =
            crate::case::yaml::load_str("s.yaml", &text).unwrap_or_else(|e| panic!("seed {seed}: {e:?}\n{text}"));
        let crate::case::Case::Expr(e) = &cases[0] else { panic!("seed {seed}: not an expression case") };
        assert_eq!(e.spirv, direct.spirv, "seed {seed}\n{text}");
        assert_eq!(e.expr, direct.expr, "seed {seed}");
        assert_eq!(e.ctx.initial_stack, direct.ctx.initial_stack, "seed {seed}");
        let (r, _) = crate::consumer::builtin::reference_outcome(&direct);
        let (y, _) = crate::consumer::builtin::reference_outcome(e);
        assert_eq!(r, y, "seed {seed}\n{text}");
        assert_eq!(check_spirv_oracles(e).is_ok(), check_spirv_oracles(&direct).is_ok(), "seed {seed}");
        unknown += usize::from(text.contains('#'));
    }
    assert!(unknown > 0, "no generated case has an unknown code");
}

/// What `minimize::write` writes for a `spirv_expr` input is a `spirv:`
/// case file named by its SPIR-V text, and replays.
#[test]
fn written_spirv_regressions_load_and_replay() {
    let dir = std::env::temp_dir().join(format!("dwarfcheck-regr-spirv-{}", std::process::id()));
    let Some(input) = targets::Target::SpirvExpr.decode(&bytes(3, 512)) else { panic!("seed 3 does not decode") };
    let m = minimize::Minimized {
        input,
        failure: minimize::Failure { kind: "differ", message: "example".into() },
        tries: 1,
    };
    let p = minimize::write(&m, targets::Target::SpirvExpr, &dir).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.starts_with("# Found by the spirv_expr fuzz target"));
    assert!(text.contains("    spirv:\n"), "{text}");
    let results = replay::replay(&dir);
    assert_eq!(results.len(), 1);
    assert!(results[0].1.is_ok(), "{results:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The minimiser shrinks a `spirv_expr` input by its SPIR-V operations:
/// a case whose target preset does not exist fails to load whatever its
/// operations and entries (hand-derived: every one of them can go).
#[test]
fn minimizer_drops_spirv_operations() {
    let Some(targets::Input::Expr(mut fc)) = targets::Target::SpirvExpr.decode(&bytes(5, 512)) else {
        panic!("seed 5 does not decode")
    };
    fc.target = "no-such-target".into();
    let part = fc.spirv.as_mut().unwrap();
    part.expression.operations = vec![
        dwarfcheck_core::encoding::spirv::DebugOperation { code: 8, operands: vec![0] },
        dwarfcheck_core::encoding::spirv::DebugOperation { code: 5, operands: vec![] },
    ];
    let m = minimize::minimize(targets::Input::Expr(fc), 1000).unwrap();
    assert_eq!(m.failure.kind, "load");
    let targets::Input::Expr(small) = &m.input else { panic!("not an expression input") };
    assert_eq!(small.spirv.as_ref().unwrap().expression.operations, []);
    assert!(small.entries.is_empty(), "{:?}", small.entries);
}

/// Every bundled SPIR-V case (hand-derived expectations, specs/cases/spirv/)
/// meets the SPIR-V oracles: reference == fast, and the direct
/// interpretation == the reference's evaluation of the lowering.
#[test]
fn bundled_spirv_cases_agree_with_their_lowering() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("specs/cases/spirv");
    let files = crate::case::yaml::find_case_files(&[dir]).expect("case files");
    let mut lowered = 0;
    for f in files {
        for c in crate::case::yaml::load_file(&f).expect("loads") {
            let Case::Expr(e) = c else { continue };
            assert_eq!(check_spirv_oracles(&e), Ok(()), "{}", e.name);
            lowered += usize::from(!e.expr.is_empty());
        }
    }
    assert!(lowered > 60, "only {lowered} bundled SPIR-V cases have a lowering");
}
