//! [`UnwoundFrames`]: a machine state whose CFA and calling frames, when it
//! does not give them, come from virtually unwinding it through a frame
//! section (`unwind.context-from-cfi`).

use super::{repeats, walk_state, Frame, Stepped, Unwinder};
use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::context::{
    Budgets, CallerFrame, Cfa, ContextError, DebugSection, Die, Element, Entry, MachineState, MemoryStorage,
    ResultKind, UnitInfo,
};
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::unwind::UnwindEnd;
use dwarfcheck_core::outcome::{BaseType, Failure, Outcome};
use dwarfcheck_core::target::Target;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::Arc;

/// `state` with the CFA of its frame and the chain of calling frames found
/// by virtually unwinding it through `cfi` with the fast unwinder, where
/// `state` itself does not give them (its `cfa()` or `caller()` reports
/// [`ContextError::Missing`]). Every other question goes to `state`;
/// registers and memory are never copied.
///
/// The unwinding runs once, the first time the CFA or the caller is asked
/// for, from `state`'s program location, registers and memory, at most
/// `state.budgets().clamped().frames` steps:
/// - the CFA is step 0's;
/// - frame k+1 (k >= 0) is a [`CallerFrame`] whenever step k was made and
///   unwinding goes on after it (neither the base of the stack nor a
///   fault): its rules are frame k's row rules (with the ABI stack pointer
///   rule, `unwind.sp-is-cfa`), its pc step k's caller pc, its CFA step
///   k+1's when that step was made; it is marked
///   [`CallerFrame::unwound`], so that computing one of its registers
///   while that computation is under way is `unwind.cyclic`.
///
/// Errors: [`ContextError::Unwinding`] with the fault of unwinding the top
/// frame (`ctx.pc-missing`, `unwind.no-fde`, a table or CFA fault) for
/// both; for the caller also the fault that ended unwinding right after
/// the top frame's step (`unwind.return-address-unreadable` or the return
/// address rule's own fault). [`ContextError::Missing`] when unwinding
/// gives no answer without a fault: the base of the stack right after the
/// top frame (caller), a `frames` budget of 0 (both).
pub struct UnwoundFrames<'a> {
    state: &'a dyn MachineState,
    cfi: &'a CfiSection,
    found: OnceCell<Found>,
}

/// What the unwinding found for the top frame.
struct Found {
    cfa: Result<Cfa, ContextError>,
    caller: Result<Arc<CallerFrame>, ContextError>,
}

impl<'a> UnwoundFrames<'a> {
    /// `state`, its missing CFA and calling frames to be found by
    /// unwinding through `cfi` (a `.debug_frame` or `.eh_frame` section
    /// of the program `state` runs).
    pub fn new(state: &'a dyn MachineState, cfi: &'a CfiSection) -> Self {
        UnwoundFrames { state, cfi, found: OnceCell::new() }
    }

    fn found(&self) -> &Found {
        self.found.get_or_init(|| unwinding(self.state, self.cfi))
    }
}

/// The failure an unwinding fault stands for.
fn failure(o: Outcome) -> ContextError {
    ContextError::Unwinding(match o {
        Outcome::Failed(f) => f,
        other => Failure::Unsupported { what: format!("register location {other}") },
    })
}

/// Unwinds `state` through `cfi` (see [`UnwoundFrames`]).
fn unwinding(state: &dyn MachineState, cfi: &CfiSection) -> Found {
    let mut u = Unwinder::new(cfi);
    let top = match u.start(state) {
        Ok(top) => top,
        Err(o) => {
            let e = failure(o);
            return Found { cfa: Err(e.clone()), caller: Err(e) };
        }
    };
    let walk = walk_state(state);
    let (mut pc, mut lookup) = (top.pc, top.lookup);
    let mut made: Vec<(Stepped, Vec<(u64, RegisterRule)>)> = Vec::new();
    let mut fault0 = None;
    while (made.len() as u64) < u64::from(state.budgets().clamped().frames) {
        let frame = Frame { pc, lookup, callee: made.last().map(|(s, _)| &s.step) };
        let st = match u.step_from(&walk, &frame) {
            Ok(st) => st,
            Err(o) => {
                if made.is_empty() {
                    fault0 = Some(o);
                }
                break;
            }
        };
        if repeats(made.iter().map(|(m, _)| &m.step), &st.step) {
            break;
        }
        let rules = u.frame.rules().to_vec();
        let next = st.caller().map(|f| (f.pc, f.lookup));
        made.push((st, rules));
        let Some(n) = next else { break };
        (pc, lookup) = n;
    }
    let Some((first, _)) = made.first() else {
        // No step made: the fault of the top frame's step, else (a
        // `frames` budget of 0) neither element, the caller failing with
        // the fault that ends unwinding after step 0.
        let step0 = match fault0 {
            Some(o) => Err(o),
            None => u.step_from(&walk, &top),
        };
        return match step0 {
            Err(o) => {
                let e = failure(o);
                Found { cfa: Err(e.clone()), caller: Err(e) }
            }
            Ok(st) => Found {
                cfa: Err(ContextError::Missing(Element::Cfa)),
                caller: Err(match st.end {
                    Some(UnwindEnd::Fault { outcome }) => failure(outcome),
                    _ => ContextError::Missing(Element::Caller),
                }),
            },
        };
    };
    let cfa = Ok(Cfa { address: first.cfa_address, aspace: first.cfa_aspace });
    let caller = match &first.end {
        Some(UnwindEnd::Fault { outcome }) => Err(failure(outcome.clone())),
        Some(_) => Err(ContextError::Missing(Element::Caller)),
        None => {
            let mut next: Option<Arc<CallerFrame>> = None;
            for k in (0..made.len()).rev() {
                let (st, rules) = &made[k];
                if st.end.is_some() {
                    next = None;
                    continue;
                }
                let above = made.get(k + 1).map(|(s, _)| (s.cfa_address, s.cfa_aspace));
                next = Some(Arc::new(CallerFrame {
                    pc: st.step.caller_pc,
                    cfa: above.map(|c| c.0),
                    cfa_aspace: above.map_or(0, |c| c.1),
                    frame_base: None,
                    rules: rules.iter().cloned().collect(),
                    default_rule: RegisterRule::Undefined,
                    caller: next.take(),
                    unwound: true,
                }));
            }
            next.ok_or(ContextError::Missing(Element::Caller))
        }
    };
    Found { cfa, caller }
}

/// `state`'s answers, except the CFA and the caller where `state` has none.
impl MachineState for UnwoundFrames<'_> {
    fn target(&self) -> &Target {
        self.state.target()
    }

    fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError> {
        self.state.read_register(regno, offset, out)
    }

    fn read_memory(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
        self.state.read_memory(storage, address, out)
    }

    fn vendor(&self) -> &VendorProfile {
        self.state.vendor()
    }

    fn result_kind(&self) -> Option<ResultKind> {
        self.state.result_kind()
    }

    fn initial_stack(&self) -> &[Entry] {
        self.state.initial_stack()
    }

    fn object(&self) -> Option<&Entry> {
        self.state.object()
    }

    fn budgets(&self) -> Budgets {
        self.state.budgets()
    }

    fn thread(&self) -> Option<u64> {
        self.state.thread()
    }

    fn lane(&self) -> Option<u32> {
        self.state.lane()
    }

    fn pc(&self) -> Option<u64> {
        self.state.pc()
    }

    fn cfa(&self) -> Result<Cfa, ContextError> {
        match self.state.cfa() {
            Err(ContextError::Missing(_)) => self.found().cfa.clone(),
            given => given,
        }
    }

    fn frame_base(&self) -> Option<&[u8]> {
        self.state.frame_base()
    }

    fn tls_base(&self) -> Option<u64> {
        self.state.tls_base()
    }

    fn caller(&self) -> Result<Arc<CallerFrame>, ContextError> {
        match self.state.caller() {
            Err(ContextError::Missing(_)) => self.found().caller.clone(),
            given => given,
        }
    }

    fn unit(&self) -> Option<UnitInfo> {
        self.state.unit()
    }

    fn base_type(&self, die: u64) -> Result<BaseType, ContextError> {
        self.state.base_type(die)
    }

    fn die(&self, offset: u64) -> Option<Cow<'_, Die>> {
        self.state.die(offset)
    }

    fn debug_addr(&self, index: u64) -> Result<u64, ContextError> {
        self.state.debug_addr(index)
    }

    fn section(&self, section: DebugSection) -> &[u8] {
        self.state.section(section)
    }

    fn generic_type(&self) -> BaseType {
        self.state.generic_type()
    }

    fn address_bytes(&self) -> u8 {
        self.state.address_bytes()
    }
}
