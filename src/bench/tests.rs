//! The contenders compute the same things: on libc's `.eh_frame` (skipped
//! when absent) gimli's and fast's passes count the same rows and register
//! rules, and both unwinders (fast's lean step and its general one alike)
//! find the same CFA and return address at every sample; on expressions with a known answer gimli's resume loop answers
//! from the machine state as fast does.

use super::{expr, frame_sections, rows, unwind, LIBC};
use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_core::context::{Context, MemorySegment};
use dwarfcheck_core::outcome::{NormalLocation, Outcome, SingleLocation, Source};
use dwarfcheck_core::target::presets;
use std::path::Path;

#[test]
fn gimli_and_fast_build_the_same_rows_and_unwind_to_the_same_frames_on_libc() {
    if !Path::new(LIBC).exists() {
        eprintln!("{LIBC} not found: skipped");
        return;
    }
    let secs = frame_sections(Path::new(LIBC));
    let (sec, fdes) = secs.iter().find(|(s, _)| s.kind == FrameKind::EhFrame).expect("libc has an .eh_frame");
    assert!(*fdes > 1000, "{fdes} FDEs");
    let mut builder = dwarfcheck_fast::cfi::Builder::new();
    let fast = rows::fast_pass(&mut builder, sec);
    let gimli = rows::GimliRows::default().pass(sec);
    assert!(fast > 10_000, "{fast}");
    assert_eq!(fast, gimli, "rows + register rules: fast {fast}, gimli {gimli}");

    let samples = unwind::Samples::new(sec, 16);
    let mut fu = dwarfcheck_fast::unwind::Unwinder::new(sec);
    let mut gu = unwind::GimliUnwinder::new(sec).expect(".eh_frame");
    let mut both = 0;
    for &pc in &samples.pcs {
        let frame = dwarfcheck_fast::unwind::Frame { pc, lookup: pc, callee: None };
        let lean = fu.step_summary(&samples.state, &frame).map(|s| (s.cfa_address, s.caller_pc.unwrap_or(0)));
        let f = fu.step(&samples.state, &frame);
        let g = gu.step(&samples.state, pc);
        let whole = f.as_ref().map(|f| (f.cfa_address, f.step.caller_pc.unwrap_or(0))).map_err(Clone::clone);
        assert_eq!(lean, whole, "pc {pc:#x}: the lean step and the general one");
        if let (Ok(f), Some((cfa, ra))) = (f, g) {
            assert_eq!((f.cfa_address, f.step.caller_pc.unwrap_or(0)), (cfa, ra), "pc {pc:#x}");
            both += 1;
        }
    }
    assert!(both * 10 >= samples.pcs.len() * 9, "{both} of {} samples unwound by both", samples.pcs.len());
}

#[test]
fn gimli_answers_registers_memory_and_the_frame_base_from_the_state() {
    // x86-64: rsp (7) = 0x1000, rbp (6) = 0x2000, memory at 0x1008 holds 0x1234.
    let mut ctx = Context::new(std::sync::Arc::new(presets::x86_64()));
    ctx.registers.insert(7, 0x1000u64.to_le_bytes().to_vec());
    ctx.registers.insert(6, 0x2000u64.to_le_bytes().to_vec());
    ctx.memory.push(MemorySegment {
        aspace: 0,
        address: 0x1008,
        bytes: 0x1234u64.to_le_bytes().to_vec(),
        thread: None,
        lane: None,
    });
    ctx.frame_base = Some(vec![0x56]); // DW_OP_reg6: the frame base is rbp's contents
                                       // DW_OP_breg7 8: the address 0x1008 (one piece, digest = the address).
    assert_eq!(expr::gimli_eval(&[0x77, 0x08], &ctx), 1u64.wrapping_mul(31).wrapping_add(0x1008));
    // DW_OP_breg7 8; DW_OP_deref; DW_OP_stack_value: the value 0x1234.
    assert_eq!(expr::gimli_eval(&[0x77, 0x08, 0x06, 0x9f], &ctx), 31 + 0x1234);
    // DW_OP_fbreg -16: 0x2000 - 16.
    assert_eq!(expr::gimli_eval(&[0x91, 0x70], &ctx), 31 + 0x1ff0);
    // fast agrees on the last one.
    let want =
        Outcome::Location(NormalLocation { places: vec![SingleLocation::Simple(Source::memory(0, 0x1ff0 * 8))] });
    assert_eq!(dwarfcheck_fast::expr::evaluate(&[0x91, 0x70], &ctx), want);
}

#[test]
fn fast_evaluates_a_location_attribute_as_its_state_would() {
    // `run_location` (the caller says: no initial stack, location result
    // kind) gives what `run_with` gives asking the state, on every case of
    // a real debug file whose state says so; the others keep `run_with`.
    let Some(file) = crate::elf::debug_files().into_iter().nth(7) else {
        eprintln!("no libc6-dbg files: skipped");
        return;
    };
    let (cases, _) = super::expr_cases(&[file]);
    let p = expr::Prepared::new(&cases);
    let (mut program, mut scratch) = (dwarfcheck_fast::expr::Program::new(), dwarfcheck_fast::expr::Scratch::new());
    let mut located = 0;
    for (i, c) in cases.iter().enumerate() {
        let facts = dwarfcheck_fast::expr::Facts::of(&*c.ctx);
        program.recompile(&c.expr, &*c.ctx);
        let asked = program.run_with(&facts, &*c.ctx, &mut scratch);
        assert_eq!(p.fast_run(i, &program, &mut scratch), asked, "case {}", c.name);
        located += usize::from(
            c.ctx.initial_stack.is_empty() && c.ctx.result_kind == Some(dwarfcheck_core::context::ResultKind::Location),
        );
    }
    assert!(located * 2 > cases.len(), "{located} of {} cases are location attributes", cases.len());
}
