//! framehop, the unwinder of the samply profiler, as a consumer judged on
//! virtual unwinding (docs/consumers.md, "framehop"): in process, on x86-64,
//! from the case's top-frame state through the case's frame section.
//!
//! framehop keeps three registers per frame (instruction pointer, stack
//! pointer, frame pointer), so what it is judged on is, per step: the
//! frame's pc, its CFA (framehop's caller stack pointer), the caller pc,
//! and the caller's rbp where the row gives rbp a rule; and how unwinding
//! ends (base of the stack, the frame limit, or a fault of any kind).
//! [`Framehop::unwind_view`] reduces the reference's unwinding to that.

use super::unwinding::{by_value, memory, register, values_view};
use super::{Consumer, Support};
use crate::case::{CfiCase, ExprCase, UnwindCase};
use crate::edition::Edition;
use crate::synth::cfi::{covered, fde_ranges};
use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_core::context::{MachineState, MemoryStorage};
use dwarfcheck_core::outcome::unwind::{Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::{CfiOutcome, Failure, Outcome};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Arch;
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, FrameAddress, Module, Unwinder};

/// x86-64 DWARF register numbers framehop keeps.
const RBP: u64 = 6;
const RSP: u64 = 7;

/// The CFA both sides give the frame at the base of the stack, which
/// framehop does not report (it updates no register there).
const BASE_CFA: u64 = 0;

/// Most steps framehop is asked for when the case sets no limit (the
/// reference's own frames budget applies to it as well).
const MAX_STEPS: u32 = 64;

/// framehop 0.16 (the crate), in process.
#[derive(Debug, Default, Clone, Copy)]
pub struct Framehop;

impl Framehop {
    /// The steps of one unwinding, as framehop makes them.
    fn steps(case: &CfiCase, u: &UnwindCase) -> Result<Unwind, Outcome> {
        let sec = &case.section;
        let state: &dyn MachineState = &*u.ctx;
        let unsupported = |what: &str| Outcome::Failed(Failure::Unsupported { what: what.into() });
        if sec.target.arch != Arch::X86_64 {
            return Err(unsupported("framehop is judged on x86-64 only"));
        }
        let pc = state.pc().ok_or_else(|| unsupported("no pc"))?;
        let Some(sp) = register(state, RSP) else { return Err(unsupported("the top frame's rsp is not given")) };
        // framehop needs a frame pointer: a state that does not give rbp
        // is asked with 0 (a CFA from rbp then differs from the reference's
        // fault, and shows).
        let bp = register(state, RBP).unwrap_or(0);
        // One module covering every address: the section at its address,
        // no text bytes (framehop analyses instructions on macOS only).
        let bytes = sec.bytes.to_vec();
        let svma = sec.address..sec.address + bytes.len() as u64;
        let mut info = ExplicitModuleSectionInfo { base_svma: 0, text_svma: Some(0..u64::MAX), ..Default::default() };
        match sec.kind {
            FrameKind::EhFrame => {
                info.eh_frame_svma = Some(svma);
                info.eh_frame = Some(bytes);
            }
            FrameKind::DebugFrame => info.debug_frame = Some(bytes),
        }
        let mut unwinder: UnwinderX86_64<Vec<u8>> = UnwinderX86_64::new();
        unwinder.add_module(Module::new("case".into(), 0..u64::MAX, 0, info));
        let mut cache = CacheX86_64::<_>::new();
        let mut regs = UnwindRegsX86_64::new(pc, sp, bp);
        let mut read = |addr: u64| -> Result<u64, ()> {
            let mut b = [0u8; 8];
            state.read_memory(MemoryStorage::shared(0), addr, &mut b).map_err(|_| ())?;
            Ok(u64::from_le_bytes(b))
        };
        let limit = u.limit.unwrap_or(MAX_STEPS).min(u.ctx.budgets.frames).min(MAX_STEPS);
        let mut steps = Vec::new();
        let mut ranges = None;
        let mut address = FrameAddress::from_instruction_pointer(pc);
        let mut frame_pc = pc;
        loop {
            if steps.len() as u32 >= limit {
                return Ok(Unwind { steps, end: UnwindEnd::Limit });
            }
            match unwinder.unwind_frame(address, &mut regs, &mut cache, &mut read) {
                Ok(caller) => {
                    // At the base of the stack framehop updates no
                    // register, so that frame's CFA is not known.
                    let cfa = if caller.is_some() { memory(regs.sp()) } else { memory(BASE_CFA) };
                    let step = Step {
                        pc: frame_pc,
                        lookup: 0,
                        fde_offset: 0,
                        cfa,
                        registers: [(RBP, by_value("framehop", Some(regs.bp().to_le_bytes().to_vec())))]
                            .into_iter()
                            .collect(),
                        caller_pc: caller,
                    };
                    steps.push(step);
                    let Some(ra) = caller else { return Ok(Unwind { steps, end: UnwindEnd::Base }) };
                    let Some(next) = FrameAddress::from_return_address(ra) else {
                        return Ok(Unwind { steps, end: UnwindEnd::Base });
                    };
                    // Past the frames the section's CFI covers framehop goes
                    // on with frame pointers; that is not CFI, so the
                    // adapter stops there, as the reference does
                    // (unwind.no-fde).
                    if !covered(ranges.get_or_insert_with(|| fde_ranges(sec)), ra.wrapping_sub(1)) {
                        let outcome =
                            Outcome::Failed(Failure::EvalError { rule: RuleId::new("framehop:no-fde"), at: None });
                        return Ok(Unwind { steps, end: UnwindEnd::Fault { outcome } });
                    }
                    regs.set_ip(ra);
                    (address, frame_pc) = (next, ra);
                }
                Err(e) => {
                    let rule = RuleId::new(format!("framehop:{e:?}"));
                    let outcome = Outcome::Failed(Failure::EvalError { rule, at: None });
                    return Ok(Unwind { steps, end: UnwindEnd::Fault { outcome } });
                }
            }
        }
    }
}

impl Consumer for Framehop {
    fn name(&self) -> &str {
        "framehop"
    }

    fn version(&self) -> Option<String> {
        Some("framehop 0.16 (crate)".into())
    }

    /// CFI cases (judged on their unwinding only: framehop builds no row
    /// tables), DWARF 5 and GNU input.
    fn supports(&self) -> Support {
        Support { editions: vec![Edition::Dwarf5, Edition::Dwarf5Gnu], expr: false, cfi: true }
    }

    fn evaluate(&self, _case: &ExprCase) -> Outcome {
        Outcome::Failed(Failure::Unsupported { what: "framehop does not evaluate expressions".into() })
    }

    fn frame_table(&self, _case: &CfiCase) -> CfiOutcome {
        CfiOutcome::Failed(Failure::Unsupported { what: "framehop builds no row tables; it unwinds".into() })
    }

    fn unwind(&self, case: &CfiCase, u: &UnwindCase) -> Option<Unwind> {
        Some(Framehop::steps(case, u).unwrap_or_else(Unwind::fault))
    }

    /// F1 and F2 of docs/consumers.md ("framehop"): F1 when the CIE's or
    /// FDE's instructions hold a DWARF expression (`DW_CFA_def_cfa_expression`,
    /// `DW_CFA_expression`, `DW_CFA_val_expression`); F2 when framehop
    /// refuses the first step as moving the stack backwards and the
    /// reference's CFA for it is below the frame's stack pointer.
    fn failure_class(
        &self,
        case: &crate::case::Case,
        _reference: super::Answer<'_>,
        _answer: super::Answer<'_>,
    ) -> Option<super::FailureClass> {
        let crate::case::Case::Cfi(c) = case else { return None };
        let sec = &c.section;
        let text = super::unwinding::instructions_text(sec, c.fde_offset)?;
        let class = |id: &str, explanation: &str| super::FailureClass {
            id: id.into(),
            explanation: explanation.into(),
            docs: Some("docs/consumers.md#framehop---consumers-framehop".into()),
            report: None,
        };
        if text.contains("_expression") {
            return Some(class(
                "F1",
                "does not evaluate CFI expressions: it falls back to frame-pointer unwinding instead",
            ));
        }
        // F2: framehop refused the first step as moving the stack
        // backwards, and the reference's CFA for it is indeed below the
        // frame's stack pointer (random synthetic registers).
        let u = c.unwind.as_ref()?;
        let refused = matches!(
            &Framehop::steps(c, u).ok()?.end,
            UnwindEnd::Fault { outcome: Outcome::Failed(Failure::EvalError { rule, .. }) }
                if rule.as_str() == "framehop:FramepointerUnwindingMovedBackwards"
        );
        let sp = register(&*u.ctx, RSP)?;
        let reference = dwarfcheck_reference::unwind::unwind(sec, &*u.ctx, u.limit);
        let below = reference.steps.first().is_some_and(|s| s.cfa < memory(sp));
        (refused && below).then(|| {
            class(
                "F2",
                "refuses a step whose CFA is below the frame's stack pointer (a sanity check a real stack passes; \
                 random synthetic registers can fail it)",
            )
        })
    }

    /// Per step: pc, CFA, caller pc, and rbp's value where the row gives
    /// rbp a rule (framehop carries rbp through unchanged otherwise, the
    /// psABI's callee-saved reading); no lookup address, FDE offset or
    /// other register. A fault ends it whatever its kind; a last step the
    /// fault cut short (no caller pc) is not counted, and the CFA of the
    /// frame at the base of the stack is not compared (framehop does not
    /// report it).
    fn unwind_view(&self, _case: &CfiCase, reference: &Unwind) -> Option<Unwind> {
        let mut view = values_view(reference, "framehop", |n, c| n == RBP && c.bytes.is_some());
        if view.end == UnwindEnd::Base {
            if let Some(last) = view.steps.last_mut() {
                last.cfa = memory(BASE_CFA);
            }
        }
        Some(view)
    }
}
