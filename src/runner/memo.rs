//! The reference's and fast's evaluations shared by expression cases that
//! differ only in their context's pc (the location-list entries and
//! variables of one function that `elf` extracts, for instance): each is
//! evaluated once, watching whether the pc is asked, and reused only where
//! it was not.

use crate::case::ExprCase;
use crate::consumer::Consumer;
use dwarfcheck_core::context::{
    Budgets, CallerFrame, Cfa, ContextError, DebugSection, Die, Entry, MachineState, MemoryStorage, ResultKind,
    UnitInfo,
};
use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::outcome::{BaseType, Outcome};
use dwarfcheck_core::rules::RuleId;
use dwarfcheck_core::target::Target;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

/// What the two evaluators said about one case.
#[derive(Debug)]
pub(super) struct Evaluated {
    /// The reference's outcome.
    pub reference: Outcome,
    /// The `unspecified` rules the reference's answer rests on.
    pub relied: Vec<RuleId>,
    /// Fast's outcome.
    pub fast: Outcome,
}

/// The evaluations of one run, by a hint of what they depend on other than
/// the pc; each with the case it was made for.
#[derive(Default)]
pub(super) struct Memo<'a> {
    made: Mutex<Made<'a>>,
}

/// Evaluations by hint ([`hint`]), each with the case it was made for.
type Made<'a> = HashMap<u64, Vec<(&'a ExprCase, Arc<Evaluated>)>>;

/// The most evaluations kept per hint, so that a lookup compares a case
/// with at most this many others however many cases share a hint (cases
/// with the same expression and frame base but other registers, say).
const CANDIDATES: usize = 8;

impl<'a> Memo<'a> {
    /// The reference's and `fast`'s evaluations of `case`: those of an
    /// earlier case of the run with the same expression, attribute, form
    /// and context except the pc ([`Context::same_except_pc`]) when neither
    /// evaluator asked that case's state for the pc; otherwise made now.
    /// A case whose context gives CFI, or a `fast` that cannot evaluate in
    /// a given state ([`Consumer::evaluate_in`]), is evaluated on its own.
    ///
    /// [`Context::same_except_pc`]: dwarfcheck_core::context::Context::same_except_pc
    pub(super) fn evaluate(&self, case: &'a ExprCase, fast: &dyn Consumer) -> Arc<Evaluated> {
        if case.ctx.cfi.is_some() {
            return Arc::new(alone(case, fast));
        }
        let key = hint(case);
        if let Some(made) = self.lock().get(&key) {
            if let Some((_, e)) = made.iter().find(|(c, _)| same_but_pc(c, case)) {
                return e.clone();
            }
        }
        let (reference_state, fast_state) = (Watch::new(&*case.ctx), Watch::new(&*case.ctx));
        let (reference, relied) = crate::consumer::builtin::reference_outcome_in(case, &reference_state);
        let Some(fast) = fast.evaluate_in(case, &fast_state) else {
            return Arc::new(Evaluated { reference, relied, fast: fast.evaluate(case) });
        };
        let e = Arc::new(Evaluated { reference, relied, fast });
        if !reference_state.asked_pc.get() && !fast_state.asked_pc.get() {
            let mut made = self.lock();
            let kept = made.entry(key).or_default();
            if kept.len() < CANDIDATES {
                kept.push((case, e.clone()));
            }
        }
        e
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Made<'a>> {
        // A panic elsewhere while the lock was held leaves a map that is
        // still consistent (entries are pushed whole).
        self.made.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Both evaluators on the case's own context.
fn alone(case: &ExprCase, fast: &dyn Consumer) -> Evaluated {
    let (reference, relied) = crate::consumer::builtin::reference_outcome(case);
    Evaluated { reference, relied, fast: fast.evaluate(case) }
}

/// Whether `a` and `b` have the same expression, attribute, form, and
/// context except the pc.
fn same_but_pc(a: &ExprCase, b: &ExprCase) -> bool {
    a.expr == b.expr
        && a.attribute == b.attribute
        && a.form == b.form
        && a.spirv == b.spirv
        && (Arc::ptr_eq(&a.ctx, &b.ctx) || a.ctx.same_except_pc(&b.ctx))
}

/// A hash of some of what [`same_but_pc`] compares: cases it calls the same
/// have the same hint (different ones seldom do, and are told apart by
/// [`same_but_pc`] itself).
fn hint(case: &ExprCase) -> u64 {
    let c = &*case.ctx;
    let unit = c.cu.as_ref().map(|u| u.offset);
    let spirv = case.spirv.as_deref();
    foldhash::fast::FixedState::default().hash_one((&*case.expr, c.frame_base.as_deref(), unit, case.attribute, spirv))
}

/// A machine state answering as `inner` does, noting whether the pc was
/// asked for.
struct Watch<'s> {
    inner: &'s dyn MachineState,
    asked_pc: Cell<bool>,
}

impl<'s> Watch<'s> {
    fn new(inner: &'s dyn MachineState) -> Self {
        Watch { inner, asked_pc: Cell::new(false) }
    }
}

/// Every question passed on to the watched state, so that none falls to a
/// default answer the watched state overrides.
impl MachineState for Watch<'_> {
    fn target(&self) -> &Target {
        self.inner.target()
    }
    fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError> {
        self.inner.read_register(regno, offset, out)
    }
    fn read_memory(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
        self.inner.read_memory(storage, address, out)
    }
    fn vendor(&self) -> &VendorProfile {
        self.inner.vendor()
    }
    fn result_kind(&self) -> Option<ResultKind> {
        self.inner.result_kind()
    }
    fn initial_stack(&self) -> &[Entry] {
        self.inner.initial_stack()
    }
    fn object(&self) -> Option<&Entry> {
        self.inner.object()
    }
    fn budgets(&self) -> Budgets {
        self.inner.budgets()
    }
    fn thread(&self) -> Option<u64> {
        self.inner.thread()
    }
    fn lane(&self) -> Option<u32> {
        self.inner.lane()
    }
    fn pc(&self) -> Option<u64> {
        self.asked_pc.set(true);
        self.inner.pc()
    }
    fn cfa(&self) -> Result<Cfa, ContextError> {
        self.inner.cfa()
    }
    fn frame_base(&self) -> Option<&[u8]> {
        self.inner.frame_base()
    }
    fn tls_base(&self) -> Option<u64> {
        self.inner.tls_base()
    }
    fn caller(&self) -> Result<Arc<CallerFrame>, ContextError> {
        self.inner.caller()
    }
    fn unit(&self) -> Option<UnitInfo> {
        self.inner.unit()
    }
    fn base_type(&self, die: u64) -> Result<BaseType, ContextError> {
        self.inner.base_type(die)
    }
    fn die(&self, offset: u64) -> Option<Cow<'_, Die>> {
        self.inner.die(offset)
    }
    fn debug_addr(&self, index: u64) -> Result<u64, ContextError> {
        self.inner.debug_addr(index)
    }
    fn section(&self, section: DebugSection) -> &[u8] {
        self.inner.section(section)
    }
    fn generic_type(&self) -> BaseType {
        self.inner.generic_type()
    }
    fn address_bytes(&self) -> u8 {
        self.inner.address_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumer::builtin::{fast_outcome, reference_outcome, Fast};
    use dwarfcheck_core::context::Context;

    /// An exprloc case of `expr` in `ctx`.
    fn case(expr: &[u8], ctx: &Arc<Context>) -> ExprCase {
        ExprCase {
            name: "c".into(),
            origin: "test".into(),
            expr: Arc::from(expr),
            attribute: None,
            form: None,
            spirv: None,
            ctx: ctx.clone(),
            rules: Vec::new(),
            expect: None,
        }
    }

    /// A synthetic x86-64 context at `pc` with frame base `fb`.
    fn context(pc: u64, fb: &[u8], target: &Arc<dwarfcheck_core::target::Target>) -> Arc<Context> {
        let mut c = Context::new(target.clone());
        c.synthetic = Some(7);
        c.pc = Some(pc);
        c.cfa = Some(0x7000);
        c.frame_base = Some(fb.to_vec());
        Arc::new(c)
    }

    /// Fast, asking the state for its pc before evaluating.
    struct AsksPc;
    impl Consumer for AsksPc {
        fn name(&self) -> &str {
            "asks-pc"
        }
        fn supports(&self) -> crate::consumer::Support {
            Fast.supports()
        }
        fn evaluate(&self, case: &ExprCase) -> Outcome {
            fast_outcome(case)
        }
        fn evaluate_in(&self, case: &ExprCase, state: &dyn MachineState) -> Option<Outcome> {
            let _ = state.pc();
            Fast.evaluate_in(case, state)
        }
        fn frame_table(&self, case: &crate::case::CfiCase) -> dwarfcheck_core::outcome::CfiOutcome {
            Fast.frame_table(case)
        }
    }

    #[test]
    fn cases_differing_only_in_pc_share_one_evaluation() {
        let t = Arc::new(dwarfcheck_core::target::presets::x86_64());
        // DW_OP_fbreg -8 with frame base DW_OP_breg6 0 (rbp), at two pcs,
        // at a third pc with another frame base, and another expression.
        let (a, b) =
            (case(&[0x91, 0x78], &context(0x10, &[0x76, 0], &t)), case(&[0x91, 0x78], &context(0x20, &[0x76, 0], &t)));
        let other_fb = case(&[0x91, 0x78], &context(0x30, &[0x77, 0], &t));
        let other_expr = case(&[0x91, 0x70], &context(0x10, &[0x76, 0], &t));
        let memo = Memo::default();
        let ea = memo.evaluate(&a, &Fast);
        assert!(Arc::ptr_eq(&ea, &memo.evaluate(&b, &Fast)), "same but the pc: one evaluation");
        assert!(!Arc::ptr_eq(&ea, &memo.evaluate(&other_fb, &Fast)));
        assert!(!Arc::ptr_eq(&ea, &memo.evaluate(&other_expr, &Fast)));
        // Each shared outcome is what the evaluators say of the case alone.
        for c in [&a, &b, &other_fb, &other_expr] {
            let e = memo.evaluate(c, &Fast);
            assert_eq!((e.reference.clone(), e.relied.clone()), reference_outcome(c));
            assert_eq!(e.fast, fast_outcome(c));
        }
        // Rbp differs from r8: the frame bases' outcomes differ.
        assert_ne!(memo.evaluate(&other_fb, &Fast).reference, ea.reference);
    }

    #[test]
    fn spirv_cases_with_one_lowering_are_not_shared() {
        // `#10` and `Constu` (no operand) are both ill-formed before they
        // run, so both lower to nothing; they fail on different rules
        // (found by the bundled SPIR-V suite: the memo gave the second the
        // first's outcome).
        use dwarfcheck_core::encoding::spirv::{Applies, DebugOperation, SpirvExpression};
        let t = Arc::new(dwarfcheck_core::target::presets::x86_64());
        let ctx = context(0x10, &[], &t);
        let spirv = |code| {
            let e = SpirvExpression {
                applies: Applies::Value,
                operations: vec![DebugOperation { code, operands: vec![] }],
                variable_bits: None,
            };
            ExprCase { spirv: Some(Arc::new(e)), ..case(&[], &ctx) }
        };
        let (a, b) = (spirv(10), spirv(8));
        let memo = Memo::default();
        let (ea, eb) = (memo.evaluate(&a, &Fast), memo.evaluate(&b, &Fast));
        assert!(!Arc::ptr_eq(&ea, &eb));
        assert_eq!(ea.reference.rule().map(|r| r.as_str()), Some("spirv.op.unknown-code"));
        assert_eq!(eb.reference.rule().map(|r| r.as_str()), Some("spirv.op.operand-count"));
    }

    #[test]
    fn an_evaluation_that_asks_the_pc_is_not_shared() {
        let t = Arc::new(dwarfcheck_core::target::presets::x86_64());
        let (a, b) = (case(&[0x50], &context(0x10, &[], &t)), case(&[0x50], &context(0x20, &[], &t)));
        let memo = Memo::default();
        let ea = memo.evaluate(&a, &AsksPc);
        let eb = memo.evaluate(&b, &AsksPc);
        assert!(!Arc::ptr_eq(&ea, &eb));
        assert_eq!(ea.fast, fast_outcome(&b));
    }

    #[test]
    fn a_hint_keeps_a_bounded_number_of_evaluations() {
        let t = Arc::new(dwarfcheck_core::target::presets::x86_64());
        // One expression and frame base, contexts differing in a register.
        let cases: Vec<ExprCase> = (0..3 * CANDIDATES as u8)
            .map(|k| {
                let mut c = (*context(0x10, &[], &t)).clone();
                c.registers.insert(0, vec![k; 8]);
                case(&[0x70, 0], &Arc::new(c))
            })
            .collect();
        let memo = Memo::default();
        for c in &cases {
            let e = memo.evaluate(c, &Fast);
            assert_eq!(e.fast, fast_outcome(c));
        }
        let made = memo.lock();
        assert_eq!(made.len(), 1, "one hint");
        assert_eq!(made.values().next().unwrap().len(), CANDIDATES);
    }

    /// On every case extracted from this test executable, the shared
    /// evaluations are those of each case alone.
    #[test]
    fn shared_evaluations_of_a_real_file_are_those_of_each_case() {
        let exe = std::env::current_exe().expect("current exe");
        let x =
            crate::elf::extract(&exe, &crate::elf::Options { frames: false, ..Default::default() }).expect("extracts");
        let memo = Memo::default();
        let mut made = std::collections::HashSet::new();
        for c in &x.exprs {
            let e = memo.evaluate(c, &Fast);
            made.insert(Arc::as_ptr(&e) as usize);
            assert_eq!((e.reference.clone(), e.relied.clone()), reference_outcome(c), "{}", c.origin);
            assert_eq!(e.fast, fast_outcome(c), "{}", c.origin);
        }
        let shared = x.exprs.len() - made.len();
        assert!(shared > 0, "no case shares an evaluation");
    }
}
