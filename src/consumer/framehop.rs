//! framehop, the unwinder of the samply profiler, as a consumer judged on
//! virtual unwinding (docs/consumers.md, "framehop"): in process, on x86-64
//! and AArch64, from the case's top-frame state through the case's frame
//! section.
//!
//! framehop keeps three registers per frame (instruction pointer or link
//! register, stack pointer, frame pointer), so what it is judged on is, per
//! step: the frame's pc, its CFA (framehop's caller stack pointer), the
//! caller pc, and the caller's frame pointer (rbp, x29) where the row gives
//! it a rule; and how unwinding ends (base of the stack, the frame limit,
//! or a fault of any kind). [`Framehop::unwind_view`] reduces the
//! reference's unwinding to that. One unwinding loop serves both
//! architectures; [`FramehopArch`] is what differs.

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
use framehop::aarch64::{CacheAarch64, PtrAuthMask, UnwindRegsAarch64, UnwinderAarch64};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, FrameAddress, Module, Unwinder};

/// The CFA both sides give the frame at the base of the stack, which
/// framehop does not report (it updates no register there).
const BASE_CFA: u64 = 0;

/// Most steps framehop is asked for when the case sets no limit (the
/// reference's own frames budget applies to it as well).
const MAX_STEPS: u32 = 64;

/// The pointer-authentication mask framehop strips AArch64 return
/// addresses with: the low 48 bits, the 48-bit virtual address space of
/// the reference's rule `unwind.aarch64.ra-sign-state` (which clears bits
/// 63..48 of a signed return address whose bit 55 is 0). framehop applies
/// one fixed mask to every return address, signed or not, and cannot set
/// the high bits when bit 55 is 1; that is class F3.
pub const AARCH64_PAC_MASK: u64 = 0x0000_ffff_ffff_ffff;

/// What differs between the architectures framehop unwinds: its unwinder
/// and register types, the DWARF numbers of the registers it keeps, and
/// how the top frame's registers are given to it.
trait FramehopArch {
    /// framehop's unwinder for this architecture.
    type Unwinder: Unwinder<Module = Module<Vec<u8>>, UnwindRegs = Self::Regs, Cache = Self::Cache> + Default;
    /// framehop's register set.
    type Regs;
    /// framehop's rule cache.
    type Cache: Default;
    /// DWARF number of the stack pointer (whose caller value is the CFA).
    const SP: u64;
    /// DWARF number of the frame pointer framehop keeps.
    const FP: u64;
    /// The top frame's registers: pc, stack pointer, frame pointer, and
    /// whatever else `state` gives that framehop keeps.
    fn top(state: &dyn MachineState, pc: u64, sp: u64, fp: u64) -> Self::Regs;
    /// The stack pointer in `regs`.
    fn sp(regs: &Self::Regs) -> u64;
    /// The frame pointer in `regs`.
    fn fp(regs: &Self::Regs) -> u64;
    /// Moves `regs` to the caller, whose pc is `ra`.
    fn enter_caller(regs: &mut Self::Regs, ra: u64);
}

/// x86-64 (psABI DWARF numbers rsp 7, rbp 6).
struct X86_64;

impl FramehopArch for X86_64 {
    type Unwinder = UnwinderX86_64<Vec<u8>>;
    type Regs = UnwindRegsX86_64;
    type Cache = CacheX86_64;
    const SP: u64 = 7;
    const FP: u64 = 6;
    fn top(_: &dyn MachineState, pc: u64, sp: u64, fp: u64) -> UnwindRegsX86_64 {
        UnwindRegsX86_64::new(pc, sp, fp)
    }
    fn sp(regs: &UnwindRegsX86_64) -> u64 {
        regs.sp()
    }
    fn fp(regs: &UnwindRegsX86_64) -> u64 {
        regs.bp()
    }
    fn enter_caller(regs: &mut UnwindRegsX86_64, ra: u64) {
        regs.set_ip(ra);
    }
}

/// AArch64 (AADWARF64 numbers sp 31, x29 29, x30 30). The link register is
/// the state's x30 (0 when not given), stripped by [`AARCH64_PAC_MASK`].
struct Aarch64;

/// AADWARF64 DWARF number of x30, the link register.
const X30: u64 = 30;

impl FramehopArch for Aarch64 {
    type Unwinder = UnwinderAarch64<Vec<u8>>;
    type Regs = UnwindRegsAarch64;
    type Cache = CacheAarch64;
    const SP: u64 = 31;
    const FP: u64 = 29;
    fn top(state: &dyn MachineState, _pc: u64, sp: u64, fp: u64) -> UnwindRegsAarch64 {
        let lr = register(state, X30).unwrap_or(0);
        UnwindRegsAarch64::new_with_ptr_auth_mask(PtrAuthMask(AARCH64_PAC_MASK), lr, sp, fp)
    }
    fn sp(regs: &UnwindRegsAarch64) -> u64 {
        regs.sp()
    }
    fn fp(regs: &UnwindRegsAarch64) -> u64 {
        regs.fp()
    }
    /// framehop has already set lr to the caller's; the pc is not a register.
    fn enter_caller(_: &mut UnwindRegsAarch64, _: u64) {}
}

/// DWARF numbers of the stack and frame pointers framehop keeps on `arch`;
/// `None` for an architecture it is not judged on.
fn kept(arch: Arch) -> Option<(u64, u64)> {
    match arch {
        Arch::X86_64 => Some((X86_64::SP, X86_64::FP)),
        Arch::Aarch64 => Some((Aarch64::SP, Aarch64::FP)),
        Arch::Amdgpu | Arch::Other => None,
    }
}

/// framehop 0.16 (the crate), in process.
#[derive(Debug, Default, Clone, Copy)]
pub struct Framehop;

impl Framehop {
    /// The steps of one unwinding, as framehop makes them.
    fn steps(case: &CfiCase, u: &UnwindCase) -> Result<Unwind, Outcome> {
        match case.section.target.arch {
            Arch::X86_64 => Self::steps_on::<X86_64>(case, u),
            Arch::Aarch64 => Self::steps_on::<Aarch64>(case, u),
            Arch::Amdgpu | Arch::Other => Err(Outcome::Failed(Failure::Unsupported {
                what: "framehop is judged on x86-64 and AArch64 only".into(),
            })),
        }
    }

    /// The steps of one unwinding on architecture `A`.
    fn steps_on<A: FramehopArch>(case: &CfiCase, u: &UnwindCase) -> Result<Unwind, Outcome> {
        let sec = &case.section;
        let state: &dyn MachineState = &*u.ctx;
        let unsupported = |what: &str| Outcome::Failed(Failure::Unsupported { what: what.into() });
        let pc = state.pc().ok_or_else(|| unsupported("no pc"))?;
        let Some(sp) = register(state, A::SP) else {
            return Err(unsupported("the top frame's stack pointer is not given"));
        };
        // framehop needs a frame pointer: a state that does not give it is
        // asked with 0 (a CFA from the frame pointer then differs from the
        // reference's fault, and shows).
        let fp = register(state, A::FP).unwrap_or(0);
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
        let mut unwinder = A::Unwinder::default();
        unwinder.add_module(Module::new("case".into(), 0..u64::MAX, 0, info));
        let mut cache = A::Cache::default();
        let mut regs = A::top(state, pc, sp, fp);
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
                    let cfa = if caller.is_some() { memory(A::sp(&regs)) } else { memory(BASE_CFA) };
                    let fp = by_value("framehop", Some(A::fp(&regs).to_le_bytes().to_vec()));
                    let step = Step {
                        pc: frame_pc,
                        lookup: 0,
                        fde_offset: 0,
                        cfa,
                        registers: [(A::FP, fp)].into_iter().collect(),
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
                    A::enter_caller(&mut regs, ra);
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

/// Whether the row the reference used for `step` gives the CFA as the
/// stack pointer plus an offset that is not a multiple of the unit
/// framehop's fast path keeps it in (8 bytes on x86-64, 16 on AArch64;
/// class F5).
fn cfa_offset_truncated(sec: &dwarfcheck_core::cfi::CfiSection, step: &Step) -> bool {
    let (sp, unit) = match sec.target.arch {
        Arch::X86_64 => (X86_64::SP, 8),
        Arch::Aarch64 => (Aarch64::SP, 16),
        Arch::Amdgpu | Arch::Other => return false,
    };
    let CfiOutcome::Table(t) = dwarfcheck_reference::cfi::frame_table(sec, step.fde_offset) else { return false };
    t.rows.iter().filter(|r| (r.start..r.end).contains(&step.lookup)).any(|r| {
        matches!(r.cfa, dwarfcheck_core::outcome::cfi::CfaRule::RegOffset { register, offset, .. }
            if register == sp && offset % unit != 0)
    })
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

    /// F1 to F5 of docs/consumers.md ("framehop"): F1 when the CIE's or
    /// FDE's instructions hold a DWARF expression (`DW_CFA_def_cfa_expression`,
    /// `DW_CFA_expression`, `DW_CFA_val_expression`); F4 on AArch64 when
    /// they hold `DW_CFA_AARCH64_negate_ra_state`; F3 on AArch64 when a
    /// reference caller pc has bits above 47 (rule
    /// `unwind.aarch64.ra-sign-state` left them, [`AARCH64_PAC_MASK`]
    /// clears them); F5 when a step's row gives the CFA as the stack pointer
    /// plus an offset framehop's fast path truncates
    /// ([`cfa_offset_truncated`]); F2 when framehop refuses the first step as moving the
    /// stack backwards and the reference's CFA for it is below the frame's
    /// stack pointer.
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
        let u = c.unwind.as_ref()?;
        let reference = dwarfcheck_reference::unwind::unwind(sec, &*u.ctx, u.limit);
        // F4: framehop reads the section without gimli's AArch64 vendor,
        // so DW_CFA_AARCH64_negate_ra_state makes the FDE unreadable.
        if sec.target.arch == Arch::Aarch64 && text.contains("negate_ra_state") {
            return Some(class(
                "F4",
                "cannot read an AArch64 FDE holding DW_CFA_AARCH64_negate_ra_state (gimli's AArch64 vendor is not \
                 set): it falls back to the link register or frame pointers",
            ));
        }
        // F3: a caller pc with any of bits 63..48 set, which framehop's
        // fixed pointer-authentication mask always clears.
        if sec.target.arch == Arch::Aarch64
            && reference.steps.iter().any(|s| s.caller_pc.is_some_and(|pc| pc & !AARCH64_PAC_MASK != 0))
        {
            return Some(class(
                "F3",
                "strips every AArch64 return address with one fixed mask, whatever RA_SIGN_STATE and bit 55 say",
            ));
        }
        // F5: a step's row has a CFA of the stack pointer plus an offset
        // that framehop's fast path cannot hold (it keeps it in units).
        if reference.steps.iter().any(|s| cfa_offset_truncated(sec, s)) {
            return Some(class(
                "F5",
                "keeps a stack-pointer CFA offset in units of 8 bytes (x86-64) or 16 (AArch64): another offset is \
                 truncated",
            ));
        }
        // F2: framehop refused the first step as moving the stack
        // backwards, and the reference's CFA for it is indeed below the
        // frame's stack pointer (random synthetic registers).
        let refused = matches!(
            &Framehop::steps(c, u).ok()?.end,
            UnwindEnd::Fault { outcome: Outcome::Failed(Failure::EvalError { rule, .. }) }
                if rule.as_str() == "framehop:FramepointerUnwindingMovedBackwards"
        );
        let (sp_regno, _) = kept(sec.target.arch)?;
        let sp = register(&*u.ctx, sp_regno)?;
        let below = reference.steps.first().is_some_and(|s| s.cfa < memory(sp));
        (refused && below).then(|| {
            class(
                "F2",
                "refuses a step whose CFA is below the frame's stack pointer (a sanity check a real stack passes; \
                 random synthetic registers can fail it)",
            )
        })
    }

    /// Per step: pc, CFA, caller pc, and the frame pointer's value (rbp,
    /// x29) where the row gives it a rule (framehop carries it through
    /// unchanged otherwise, the ABIs' callee-saved reading); no lookup address, FDE offset or
    /// other register. A fault ends it whatever its kind; a last step the
    /// fault cut short (no caller pc) is not counted, and the CFA of the
    /// frame at the base of the stack is not compared (framehop does not
    /// report it).
    fn unwind_view(&self, case: &CfiCase, reference: &Unwind) -> Option<Unwind> {
        let (_, fp) = kept(case.section.target.arch)?;
        let mut view = values_view(reference, "framehop", |n, c| n == fp && c.bytes.is_some());
        if view.end == UnwindEnd::Base {
            if let Some(last) = view.steps.last_mut() {
                last.cfa = memory(BASE_CFA);
            }
        }
        Some(view)
    }
}
