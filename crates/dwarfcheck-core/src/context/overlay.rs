//! [`Overlay`]: another machine state with some of its answers replaced,
//! without copying the rest (registers, memory, DIEs are still asked of the
//! state underneath). An evaluator builds one for each context that differs
//! from the one it was given: a calling frame's, an attribute's, a CFI
//! expression rule's. Which answers change is the evaluator's decision; the
//! overlay only carries it out.

use super::{
    Budgets, CallerFrame, Cfa, ContextError, DebugSection, Die, Element, Entry, MachineState, MemoryStorage,
    ResultKind, UnitInfo,
};
use crate::encoding::VendorProfile;
use crate::outcome::BaseType;
use crate::target::Target;
use std::borrow::Cow;
use std::sync::Arc;

/// `base` with the answers set through the builder methods replaced; every
/// other question goes to `base`.
///
/// ```
/// use dwarfcheck_core::context::{Context, MachineState, Overlay, ResultKind};
/// use dwarfcheck_core::target::presets;
/// use std::sync::Arc;
///
/// let mut ctx = Context::new(Arc::new(presets::x86_64()));
/// ctx.pc = Some(0x1000);
/// let view = Overlay::new(&ctx).with_result_kind(Some(ResultKind::Value)).with_pc(None);
/// assert_eq!(view.result_kind(), Some(ResultKind::Value));
/// assert_eq!(view.pc(), None);
/// assert_eq!(view.target().name, "x86_64");
/// ```
#[derive(Clone)]
pub struct Overlay<'a> {
    base: &'a dyn MachineState,
    result_kind: Option<Option<ResultKind>>,
    initial_stack: Option<&'a [Entry]>,
    object: Option<Option<&'a Entry>>,
    budgets: Option<Budgets>,
    pc: Option<Option<u64>>,
    cfa: Option<Result<Cfa, ContextError>>,
    frame_base: Option<Option<&'a [u8]>>,
    caller: Option<Result<Arc<CallerFrame>, ContextError>>,
    no_unit: bool,
}

impl<'a> Overlay<'a> {
    /// `base` with nothing changed yet.
    #[inline]
    pub fn new(base: &'a dyn MachineState) -> Self {
        Overlay {
            base,
            result_kind: None,
            initial_stack: None,
            object: None,
            budgets: None,
            pc: None,
            cfa: None,
            frame_base: None,
            caller: None,
            no_unit: false,
        }
    }

    /// The required result kind becomes `kind`.
    #[inline]
    pub fn with_result_kind(mut self, kind: Option<ResultKind>) -> Self {
        self.result_kind = Some(kind);
        self
    }

    /// The initial stack becomes `entries` (bottom first).
    #[inline]
    pub fn with_initial_stack(mut self, entries: &'a [Entry]) -> Self {
        self.initial_stack = Some(entries);
        self
    }

    /// The current object becomes `object`.
    #[inline]
    pub fn with_object(mut self, object: Option<&'a Entry>) -> Self {
        self.object = Some(object);
        self
    }

    /// The budgets become `budgets`.
    #[inline]
    pub fn with_budgets(mut self, budgets: Budgets) -> Self {
        self.budgets = Some(budgets);
        self
    }

    /// The program location becomes `pc`.
    #[inline]
    pub fn with_pc(mut self, pc: Option<u64>) -> Self {
        self.pc = Some(pc);
        self
    }

    /// The CFA becomes `cfa` (an error: why it is not known).
    #[inline]
    pub fn with_cfa(mut self, cfa: Result<Cfa, ContextError>) -> Self {
        self.cfa = Some(cfa);
        self
    }

    /// The frame base expression becomes `frame_base`.
    #[inline]
    pub fn with_frame_base(mut self, frame_base: Option<&'a [u8]>) -> Self {
        self.frame_base = Some(frame_base);
        self
    }

    /// The calling frame becomes `caller` (an error: why it is not known).
    #[inline]
    pub fn with_caller(mut self, caller: Result<Arc<CallerFrame>, ContextError>) -> Self {
        self.caller = Some(caller);
        self
    }

    /// There is no current compilation unit: no unit facts, base types,
    /// DIEs, `.debug_addr` entries or location list sections (the address
    /// size becomes the target's).
    #[inline]
    pub fn without_unit(mut self) -> Self {
        self.no_unit = true;
        self
    }
}

impl MachineState for Overlay<'_> {
    fn target(&self) -> &Target {
        self.base.target()
    }

    fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError> {
        self.base.read_register(regno, offset, out)
    }

    fn read_memory(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
        self.base.read_memory(storage, address, out)
    }

    fn vendor(&self) -> &VendorProfile {
        self.base.vendor()
    }

    fn result_kind(&self) -> Option<ResultKind> {
        self.result_kind.unwrap_or_else(|| self.base.result_kind())
    }

    fn initial_stack(&self) -> &[Entry] {
        self.initial_stack.unwrap_or_else(|| self.base.initial_stack())
    }

    fn object(&self) -> Option<&Entry> {
        self.object.unwrap_or_else(|| self.base.object())
    }

    fn budgets(&self) -> Budgets {
        self.budgets.unwrap_or_else(|| self.base.budgets())
    }

    fn thread(&self) -> Option<u64> {
        self.base.thread()
    }

    fn lane(&self) -> Option<u32> {
        self.base.lane()
    }

    fn pc(&self) -> Option<u64> {
        self.pc.unwrap_or_else(|| self.base.pc())
    }

    fn cfa(&self) -> Result<Cfa, ContextError> {
        self.cfa.clone().unwrap_or_else(|| self.base.cfa())
    }

    fn frame_base(&self) -> Option<&[u8]> {
        self.frame_base.unwrap_or_else(|| self.base.frame_base())
    }

    fn tls_base(&self) -> Option<u64> {
        self.base.tls_base()
    }

    fn caller(&self) -> Result<Arc<CallerFrame>, ContextError> {
        self.caller.clone().unwrap_or_else(|| self.base.caller())
    }

    fn unit(&self) -> Option<UnitInfo> {
        if self.no_unit {
            return None;
        }
        self.base.unit()
    }

    fn base_type(&self, die: u64) -> Result<BaseType, ContextError> {
        if self.no_unit {
            return Err(ContextError::Missing(Element::Unit));
        }
        self.base.base_type(die)
    }

    fn die(&self, offset: u64) -> Option<Cow<'_, Die>> {
        if self.no_unit {
            return None;
        }
        self.base.die(offset)
    }

    fn debug_addr(&self, index: u64) -> Result<u64, ContextError> {
        if self.no_unit {
            return Err(ContextError::Missing(Element::Unit));
        }
        self.base.debug_addr(index)
    }

    fn section(&self, section: DebugSection) -> &[u8] {
        if self.no_unit {
            return &[];
        }
        self.base.section(section)
    }

    fn generic_type(&self) -> BaseType {
        self.base.generic_type()
    }

    /// The base state's, or the target's when the unit is hidden.
    fn address_bytes(&self) -> u8 {
        if self.no_unit {
            return self.base.target().address_bytes();
        }
        self.base.address_bytes()
    }
}
