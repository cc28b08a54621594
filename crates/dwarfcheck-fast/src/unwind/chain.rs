//! Expression contexts completed by unwinding (`unwind.context-from-cfi`):
//! the top frame's CFA and the chain of calling frames of a context that
//! gives CFI (`Context::cfi`) instead of `cfa`/`caller`.

use super::{Stepped, Unwinder};
use crate::expr::unwind_frame::fail_of;
use crate::expr::Fail;
use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::context::{CallerFrame, Context};
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::unwind::UnwindEnd;
use std::sync::Arc;

/// `ctx` with its missing CFA and caller chain taken from unwinding
/// through `ctx.cfi` from its machine state, and without `cfi` (so nested
/// contexts do not unwind again). `None` when `ctx` has no CFI, needs
/// nothing, or the top frame cannot be unwound: then the operations that
/// need the CFA or the caller report [`frame0_fault`].
///
/// Frame k+1 (k >= 0) is a [`CallerFrame`] whenever step k was made and
/// unwinding goes on after it (neither the base of the stack nor an
/// unreadable return address): its rules are frame k's row rules (with the
/// ABI stack pointer rule, `unwind.sp-is-cfa`), its pc step k's caller pc,
/// its CFA step k+1's (when that step was made). When step 0 itself ends
/// with a fault, the result keeps `cfi` so that operations needing the
/// caller report that fault ([`frame0_fault`]).
pub fn derive(ctx: &Context) -> Option<Context> {
    let cfi = ctx.cfi.as_ref()?;
    if ctx.cfa.is_some() && ctx.caller.is_some() {
        return None;
    }
    let mut u = Unwinder::new(cfi);
    let top = u.start(ctx).ok()?;
    let (mut pc, mut lookup) = (top.pc, top.lookup);
    let mut made: Vec<(Stepped, Vec<(u64, RegisterRule)>)> = Vec::new();
    while (made.len() as u64) < u64::from(ctx.budgets.frames) {
        let frame = super::Frame { pc, lookup, callee: made.last().map(|(s, _)| &s.step) };
        let Ok(st) = u.step(&frame) else { break };
        let rules = u.frame.rules().to_vec();
        let next = st.caller().map(|f| (f.pc, f.lookup));
        made.push((st, rules));
        let Some(n) = next else { break };
        (pc, lookup) = n;
    }
    let first = made.first()?;
    let (cfa0, aspace0) = (first.0.cfa_address, first.0.cfa_aspace);
    let mut next: Option<Arc<CallerFrame>> = None;
    for k in (0..made.len()).rev() {
        let (st, rules) = &made[k];
        if st.end.is_some() {
            next = None;
            continue;
        }
        let up = made.get(k + 1).map(|(s, _)| (s.cfa_address, s.cfa_aspace));
        next = Some(Arc::new(CallerFrame {
            pc: st.step.caller_pc,
            cfa: up.map(|c| c.0),
            cfa_aspace: up.map_or(0, |c| c.1),
            frame_base: None,
            rules: rules.iter().cloned().collect(),
            default_rule: RegisterRule::Undefined,
            caller: next.take(),
            unwound: true,
        }));
    }
    let (cfa, cfa_aspace) = match ctx.cfa {
        Some(c) => (Some(c), ctx.cfa_aspace),
        None => (Some(cfa0), aspace0),
    };
    let keep = matches!(first.0.end, Some(UnwindEnd::Fault { .. })) && ctx.caller.is_none();
    let cfi = if keep { ctx.cfi.clone() } else { None };
    Some(Context { cfa, cfa_aspace, caller: ctx.caller.clone().or(next), cfi, ..ctx.clone() })
}

/// The fault that kept [`derive`] from unwinding the top frame of `ctx`
/// through `cfi` (`ctx.pc-missing`, `unwind.no-fde`, a table or CFA
/// fault), as the failure of the operation that needed it; with
/// `caller`, also the fault that ended unwinding right after the top
/// frame's step (`unwind.return-address-unreadable` or the return address
/// rule's own fault: frame 1 is not found). `None` if there is none.
pub fn frame0_fault(cfi: &CfiSection, ctx: &Context, caller: bool) -> Option<Fail> {
    let mut u = Unwinder::new(cfi);
    match u.start(ctx).and_then(|f| u.step(&f)) {
        Err(o) => Some(fail_of(&o)),
        Ok(st) => match st.end {
            Some(UnwindEnd::Fault { outcome }) if caller => Some(fail_of(&outcome)),
            _ => None,
        },
    }
}
