//! Tests of the reference's virtual unwinding and row-table trace on
//! sections written in the case files' `cfi:` notation (moved out of
//! `dwarfcheck-reference`, which does not read YAML). Expectations are
//! derived by hand in the comments.

use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::context::Context;
use dwarfcheck_core::outcome::unwind::{Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BudgetKind, CfiOutcome, Outcome};
use dwarfcheck_core::rules::id;
use dwarfcheck_reference::cfi::frame_table_traced;
use dwarfcheck_reference::unwind::unwind;
use std::sync::Arc;

mod unwinding {
    use super::*;
    use dwarfcheck::case::yaml::cfi::CfiSpec;
    use dwarfcheck_core::context::{Budgets, MemorySegment};
    use dwarfcheck_core::outcome::{SingleLocation, Source};
    use dwarfcheck_core::target::presets;

    /// The section of `yaml` (a `cfi:` mapping) on x86-64 and a context on
    /// it with rsp = `rsp` and `memory` at `at`.
    fn setup(yaml: &str, pc: Option<u64>, rsp: u64, at: u64, memory: &[u8]) -> (Arc<CfiSection>, Context) {
        let t = Arc::new(presets::x86_64());
        let spec: CfiSpec = yaml_serde::from_str(yaml).unwrap();
        let (section, _) = spec.build_all(&t).unwrap();
        let mut ctx = Context::new(t);
        ctx.pc = pc;
        ctx.registers.insert(7, rsp.to_le_bytes().to_vec());
        ctx.memory.push(MemorySegment::shared(0, at, memory.to_vec()));
        (section, ctx)
    }

    /// CIE: CFA = rsp+8, rip at CFA-8. FDE [0x1000, 0x1010) and an
    /// outermost FDE [0x2000, 0x2010) with rip undefined.
    const TWO: &str = "cie: { version: 4, data_align: -8, ra: 16, instructions: 'DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8' }\n\
         fde: { pc_begin: 0x1000, pc_range: 0x10 }\n\
         fdes: [ { pc_begin: 0x2000, pc_range: 0x10, instructions: 'DW_CFA_undefined: reg16' } ]";

    fn memory_at(u: &Step) -> Option<u64> {
        match &u.cfa.places[..] {
            [SingleLocation::Simple(Source::Memory { bit_addr, .. })] => Some((*bit_addr / 8) as u64),
            _ => None,
        }
    }

    /// rsp 0x8000 -> CFA0 0x8008, rip = [0x8000] = 0x2005; frame 1 at
    /// 0x2005 (lookup 0x2004): CFA1 = frame 1's rsp (= CFA0) + 8 = 0x8010,
    /// rip undefined: two steps, base.
    #[test]
    fn two_frames_to_the_base() {
        let (s, ctx) = setup(TWO, Some(0x1000), 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        let u = unwind(&s, &ctx, None);
        assert_eq!(u.end, UnwindEnd::Base);
        assert_eq!(u.steps.len(), 2);
        assert_eq!(
            (u.steps[0].lookup, memory_at(&u.steps[0]), u.steps[0].caller_pc),
            (0x1000, Some(0x8008), Some(0x2005))
        );
        assert_eq!((u.steps[1].lookup, memory_at(&u.steps[1]), u.steps[1].caller_pc), (0x2004, Some(0x8010), None));
        // rsp of frame 2 is reported although no row has a column for it.
        assert_eq!(u.steps[1].registers[&7].bytes, Some(0x8010u64.to_le_bytes().to_vec()));
    }

    /// Step 1 of the algorithm: the case's limit comes before the frames
    /// budget and before the pc is looked at; the frames budget before the
    /// pc too.
    #[test]
    fn limit_then_budget_then_pc() {
        let (s, mut ctx) = setup(TWO, None, 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        ctx.budgets = Budgets { frames: 0, ..Budgets::default() };
        assert_eq!(unwind(&s, &ctx, Some(0)).end, UnwindEnd::Limit);
        let budget = Outcome::Failed(Failure::Budget { budget: BudgetKind::Frames, at: None });
        assert_eq!(unwind(&s, &ctx, None).end, UnwindEnd::Fault { outcome: budget });
        ctx.budgets = Budgets::default();
        let missing = Outcome::Failed(Failure::EvalError { rule: id::CTX_PC_MISSING, at: None });
        assert_eq!(unwind(&s, &ctx, None), Unwind::fault(missing));
    }

    /// The frames budget counts steps: with budget 1 the first step is made
    /// and gives a caller pc, so the second needs the budget.
    #[test]
    fn frames_budget_after_a_step() {
        let (s, mut ctx) = setup(TWO, Some(0x1000), 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        ctx.budgets = Budgets { frames: 1, ..Budgets::default() };
        let u = unwind(&s, &ctx, None);
        assert_eq!(u.steps.len(), 1);
        assert_eq!(
            u.end,
            UnwindEnd::Fault { outcome: Outcome::Failed(Failure::Budget { budget: BudgetKind::Frames, at: None }) }
        );
    }

    /// A return address of 0 makes the next lookup wrap to 2^64 - 1, which
    /// no FDE covers (no overflow in the range test either).
    #[test]
    fn lookup_wraps() {
        let (s, ctx) = setup(TWO, Some(0x1000), 0x8000, 0x8000, &0u64.to_le_bytes());
        let u = unwind(&s, &ctx, None);
        assert_eq!(u.steps.len(), 1);
        assert_eq!(
            u.end,
            UnwindEnd::Fault { outcome: Outcome::Failed(Failure::EvalError { rule: id::UNWIND_NO_FDE, at: None }) }
        );
    }

    /// An x86-64 context under the hetero-2020 profile (0xe6 is
    /// DW_OP_LLVM_call_frame_entry_reg) with the section of `fde_insns`
    /// (CIE: CFA = rsp+8, rip = [CFA-8]; FDE [0x1000, 0x1010)), pc 0x1000,
    /// rsp 0x8000.
    fn hetero(fde_insns: &str) -> (Arc<CfiSection>, Context) {
        let yaml = format!(
            "cie: {{ version: 4, data_align: -8, ra: 16, instructions: 'DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8' }}\n\
             fde: {{ pc_begin: 0x1000, pc_range: 0x10, instructions: '{fde_insns}' }}"
        );
        let mut target = presets::x86_64();
        target.vendor = dwarfcheck_core::encoding::VendorProfile::hetero_2020();
        let t = Arc::new(target);
        let spec: CfiSpec = yaml_serde::from_str(&yaml).unwrap();
        let (s, _) = spec.build_all(&t).unwrap();
        let mut ctx = Context::new(t);
        ctx.pc = Some(0x1000);
        ctx.registers.insert(7, 0x8000u64.to_le_bytes().to_vec());
        (s, ctx)
    }

    /// CFA = {e6 10}: frame 1's rip, whose rule offset(-8) needs the CFA
    /// being computed: unwind.cyclic with no at, no step.
    #[test]
    fn cyclic_cfa() {
        let (s, ctx) = hetero("DW_CFA_def_cfa_expression: {e6 10}");
        assert_eq!(
            unwind(&s, &ctx, None),
            Unwind::fault(Outcome::Failed(Failure::IllFormed { rule: id::UNWIND_CYCLIC, at: None }))
        );
    }

    /// rbx = val_expression {e6 06} (frame 1's rbp) and rbp = expression
    /// {e6 03} (frame 1's rbx): each needs the other. In the step both are
    /// unwind.cyclic (no at) and rip still gives the caller; in an
    /// expression wired to the CFI, DW_OP_LLVM_call_frame_entry_reg rbx
    /// (at 0) gets unwind.cyclic at 0. rsp (same chain shape, but
    /// val_offset(0)) is not flagged.
    #[test]
    fn cyclic_registers() {
        let (s, mut ctx) = hetero("DW_CFA_val_expression: reg3 {e6 06}; DW_CFA_expression: reg6 {e6 03}");
        ctx.memory.push(MemorySegment::shared(0, 0x8000, 0x2000u64.to_le_bytes().to_vec()));
        let u = unwind(&s, &ctx, Some(1));
        let cyclic = Outcome::Failed(Failure::IllFormed { rule: id::UNWIND_CYCLIC, at: None });
        assert_eq!(u.steps[0].registers[&3].location, cyclic);
        assert_eq!(u.steps[0].registers[&6].location, cyclic);
        assert_eq!(u.steps[0].registers[&7].bytes, Some(0x8008u64.to_le_bytes().to_vec()));
        assert_eq!((u.steps[0].caller_pc, u.end), (Some(0x2000), UnwindEnd::Limit));
        ctx.result_kind = Some(dwarfcheck_core::context::ResultKind::Location);
        let wired = dwarfcheck_reference::unwind::unwound_frames(&ctx, &s);
        let e = dwarfcheck_reference::expr::evaluate(&[0xe6, 0x03], &wired);
        assert_eq!(e, Outcome::Failed(Failure::IllFormed { rule: id::UNWIND_CYCLIC, at: Some(0) }));
    }

    /// `unwound_frames` of the two-frame section: rsp 0x8000 -> frame 0's
    /// CFA 0x8008 and frame 1 at pc 0x2005 (rip = [0x8000]) with CFA
    /// 0x8010, its rip rule offset(-8) from the CIE, and no caller of its
    /// own (its rip is undefined: the base of the stack). Every other answer
    /// is the context's; a CFA or caller the context gives is kept.
    #[test]
    fn unwound_frames_give_cfa_and_caller() {
        use dwarfcheck_core::context::{CallerFrame, Cfa, MachineState};
        use dwarfcheck_core::outcome::cfi::RegisterRule;
        use dwarfcheck_reference::unwind::unwound_frames;
        let (s, mut ctx) = setup(TWO, Some(0x1000), 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        let w = unwound_frames(&ctx, &s);
        assert_eq!(w.cfa(), Ok(Cfa { address: 0x8008, aspace: 0 }));
        let f = w.caller().unwrap();
        assert_eq!((f.pc, f.cfa, f.cfa_aspace, f.unwound), (Some(0x2005), Some(0x8010), 0, true));
        assert_eq!(f.rule(16), &RegisterRule::Offset { offset: -8 });
        assert!(f.caller.is_none());
        assert_eq!(w.pc(), Some(0x1000));
        let mut rsp = [0u8; 8];
        w.read_register(7, 0, &mut rsp).unwrap();
        assert_eq!(rsp, 0x8000u64.to_le_bytes());
        // A CFA the context gives is kept; the caller still comes from
        // unwinding.
        ctx.cfa = Some(0x4000);
        let w = unwound_frames(&ctx, &s);
        assert_eq!(w.cfa(), Ok(Cfa { address: 0x4000, aspace: 0 }));
        assert_eq!(w.caller().unwrap().pc, Some(0x2005));
        // Both given: nothing is unwound.
        let given = Arc::new(CallerFrame { pc: Some(0x3000), ..CallerFrame::default() });
        ctx.caller = Some(given.clone());
        let w = unwound_frames(&ctx, &s);
        assert_eq!((w.cfa(), w.caller()), (Ok(Cfa { address: 0x4000, aspace: 0 }), Ok(given)));
    }

    /// At the base of the stack (pc 0x2000: rip undefined) the CFA is
    /// known and there is no caller (frame.caller-missing); where no FDE
    /// covers the pc (0x3000) both are the unwinding's fault
    /// (unwind.no-fde), which DW_OP_call_frame_cfa (0x9c) then reports at
    /// its own offset, where the bare context reports ctx.cfa-missing.
    #[test]
    fn unwound_frames_at_the_base_and_on_a_fault() {
        use dwarfcheck_core::context::{Cfa, ContextError, Element, MachineState};
        use dwarfcheck_reference::unwind::unwound_frames;
        let (s, ctx) = setup(TWO, Some(0x2000), 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        let w = unwound_frames(&ctx, &s);
        assert_eq!(w.cfa(), Ok(Cfa { address: 0x8008, aspace: 0 }));
        assert_eq!(w.caller(), Err(ContextError::Missing(Element::Caller)));
        let (s, ctx) = setup(TWO, Some(0x3000), 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        let w = unwound_frames(&ctx, &s);
        let no_fde = Failure::EvalError { rule: id::UNWIND_NO_FDE, at: None };
        assert_eq!(w.cfa(), Err(ContextError::Unwinding(no_fde.clone())));
        assert_eq!(w.caller(), Err(ContextError::Unwinding(no_fde)));
        assert_eq!(
            dwarfcheck_reference::expr::evaluate(&[0x9c], &w),
            Outcome::Failed(Failure::EvalError { rule: id::UNWIND_NO_FDE, at: Some(0) })
        );
        assert_eq!(
            dwarfcheck_reference::expr::evaluate(&[0x9c], &ctx),
            Outcome::Failed(Failure::EvalError { rule: id::CTX_CFA_MISSING, at: Some(0) })
        );
    }
}

mod robustness {
    use super::*;
    use dwarfcheck::case::yaml::cfi::CfiSpec;
    use dwarfcheck_core::context::MemorySegment;
    use dwarfcheck_core::target::presets;

    /// Random FDE instruction bytes (a small LCG; fixed seed) over sections
    /// of two FDEs whose frames return into each other through random
    /// memory: unwinding and wired expressions must end (budgets) and
    /// never panic, and a made step always has the return address column.
    #[test]
    fn random_tables_never_panic() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as u8
        };
        // Opcodes worth mixing: def_cfa*, offsets, registers, expressions
        // with DW_OP_breg7 / call_frame_entry_reg, undefined, same value.
        let pieces: &[&[u8]] = &[
            &[0x0c, 0x07, 0x08],
            &[0x0e, 0x10],
            &[0x86, 0x02],
            &[0x90, 0x01],
            &[0x14, 0x03, 0x01],
            &[0x09, 0x03, 0x06],
            &[0x07, 0x10],
            &[0x08, 0x06],
            &[0x0f, 0x02, 0x77, 0x10],
            &[0x10, 0x06, 0x02, 0xe6, 0x03],
            &[0x16, 0x03, 0x02, 0xe6, 0x06],
            &[0x0f, 0x02, 0xe6, 0x10],
            &[0x10, 0x10, 0x01, 0x1c],
            &[0x41],
        ];
        let mut target = presets::x86_64();
        target.vendor = dwarfcheck_core::encoding::VendorProfile::hetero_2020();
        let t = Arc::new(target);
        for _ in 0..300 {
            let mut insns = || -> String {
                let mut b = Vec::new();
                for _ in 0..(next() % 5) {
                    b.extend_from_slice(pieces[usize::from(next()) % pieces.len()]);
                }
                b.iter().map(|x| format!("{x:02x}")).collect()
            };
            let (a, b) = (insns(), insns());
            let yaml = format!(
                "cie: {{ version: 4, data_align: -8, ra: 16, instructions: 'DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8' }}\n\
                 fde: {{ pc_begin: 0x1000, pc_range: 0x10, instructions_bytes: '{a}' }}\n\
                 fdes: [ {{ pc_begin: 0x1010, pc_range: 0x10, instructions_bytes: '{b}' }} ]"
            );
            let spec: CfiSpec = yaml_serde::from_str(&yaml).unwrap();
            let (s, _) = spec.build_all(&t).unwrap();
            let mut ctx = Context::new(t.clone());
            ctx.pc = Some(0x1000 + u64::from(next() % 0x20));
            ctx.registers.insert(7, 0x8000u64.to_le_bytes().to_vec());
            ctx.registers.insert(6, 0x8040u64.to_le_bytes().to_vec());
            // Return addresses inside the two FDEs, so the walk can go on.
            let mem: Vec<u8> = (0..0x100)
                .map(|i| {
                    if i % 8 == 0 {
                        0x10
                    } else if i % 8 == 1 {
                        next() % 2 + 0x10
                    } else {
                        0
                    }
                })
                .collect();
            ctx.memory.push(MemorySegment::shared(0, 0x7f80, mem));
            let u = unwind(&s, &ctx, None);
            assert!(u.steps.len() <= ctx.budgets.frames as usize);
            for st in &u.steps {
                assert!(st.registers.contains_key(&16));
            }
            ctx.result_kind = Some(dwarfcheck_core::context::ResultKind::Location);
            let wired = dwarfcheck_reference::unwind::unwound_frames(&ctx, &s);
            for e in [&[0x9c][..], &[0xe6, 0x03], &[0xa3, 0x02, 0x77, 0x00], &[0xa3, 0x03, 0xa3, 0x01, 0x56]] {
                let _ = dwarfcheck_reference::expr::evaluate(e, &wired);
            }
        }
    }
}

mod row_table_trace {
    use super::*;
    use dwarfcheck::asm::cfi::{decode, CfiAsmParams};
    use dwarfcheck::case::yaml::cfi::CfiSpec;
    use dwarfcheck_core::target::presets;

    /// The trace, derived by hand: each instruction with the rules after
    /// it; the text of each instruction is the assembler's disassembly of
    /// the bytes `at..end` the trace names.
    #[test]
    fn trace_steps() {
        let spec: CfiSpec = yaml_serde::from_str(
            "cie: { version: 4, instructions: 'DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8' }\n\
             fde: { pc_begin: 0x1000, pc_range: 0x10, instructions: 'DW_CFA_advance_loc: 1; DW_CFA_def_cfa_offset: +16; DW_CFA_restore_state' }",
        )
        .unwrap();
        let (sec, fde_offset) = spec.build(&Arc::new(presets::x86_64())).unwrap();
        let (o, t) = frame_table_traced(&sec, fde_offset);
        // advance_loc at 48 (1 byte), def_cfa_offset at 49 (2 bytes), restore_state at 51.
        assert_eq!(o, CfiOutcome::Failed(Failure::IllFormed { rule: id::CFI_RESTORE_STATE_EMPTY_STACK, at: Some(51) }));
        let (_, cie) = sec.parse_fde(fde_offset).unwrap();
        let params = CfiAsmParams::from_cie(&cie);
        let text =
            |at: u64, end: u64| decode(&sec.bytes[at as usize..end as usize], &sec.target, &params).remove(0).text;
        let steps: Vec<(u64, String, u64, &str)> = t
            .iter()
            .map(|s| (s.at, text(s.at, s.end), s.location, s.rules.as_str()))
            .filter(|s| s.1 != "DW_CFA_nop:")
            .collect();
        let want = |at, insn: &str, location, rules| (at, insn.to_string(), location, rules);
        assert_eq!(
            steps,
            vec![
                want(15, "DW_CFA_def_cfa: reg7 +8", 0x1000, "CFA=reg7+8: "),
                want(18, "DW_CFA_offset: reg16 -8", 0x1000, "CFA=reg7+8: reg16=[CFA-8]"),
                want(48, "DW_CFA_advance_loc: 1", 0x1001, "CFA=reg7+8: reg16=[CFA-8]"),
                want(49, "DW_CFA_def_cfa_offset: +16", 0x1001, "CFA=reg7+16: reg16=[CFA-8]"),
                want(51, "DW_CFA_restore_state:", 0x1001, "CFA=reg7+16: reg16=[CFA-8]"),
            ]
        );
    }
}
