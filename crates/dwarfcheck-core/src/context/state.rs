//! The pull interface to machine state: every question an evaluator may ask
//! about the context it evaluates in, answered on demand, so that a
//! debugger evaluates against a live process or a core file without copying
//! registers or memory in first (hetero-2020 "DWARF Expression Evaluation
//! Context").

use super::{
    Budgets, CallerFrame, Cfa, ContextError, DebugSection, Die, Element, Entry, MemoryStorage, ResultKind, UnitInfo,
};
use crate::encoding::VendorProfile;
use crate::outcome::BaseType;
use crate::target::{Endian, Target};
use std::borrow::Cow;
use std::sync::Arc;

/// The evaluation context an expression, a CFI program or an unwinding
/// step runs in, asked for piece by piece.
///
/// Only [`MachineState::target`], [`MachineState::read_register`] and
/// [`MachineState::read_memory`] must be written; every other element
/// defaults to "not specified", which is what the spec allows for each of
/// them. An operation that needs an element that is not specified gets the
/// rule the catalogue gives for it (`ctx.cfa-missing`,
/// `ctx.frame-base-missing`, `ctx.cu-missing`, `ctx.register-unavailable`,
/// `op.deref.memory-unreadable`, ...), never a panic.
///
/// The state describes one frame, the *current* frame: its registers,
/// program location, CFA and frame base. The registers of the frames that
/// called it are not asked for by number: [`MachineState::caller`] gives the
/// CFI register rules that recover them from the current frame's state,
/// which each evaluator applies itself (`frame.registers-through-cfi`).
///
/// This interface answers questions; it never decides what an operation
/// means. It is shared by both evaluators as context, never as evaluation
/// logic. [`Context`](super::Context) is an in-memory implementation;
/// [`Overlay`](super::Overlay) changes some answers of another state.
pub trait MachineState {
    /// The current target architecture: registers and their sizes, address
    /// spaces, lanes, byte order, the generic type's size.
    fn target(&self) -> &Target;

    /// Reads `out.len()` bytes of register `regno` of the current frame,
    /// starting at byte `offset` of the register, in target byte order.
    ///
    /// Errors: [`ContextError::NoSuchRegister`] when the target has no
    /// such register; [`ContextError::RegisterUnavailable`] when its value
    /// is not known (or the range runs past the register's size, which the
    /// evaluators never ask for).
    fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError>;

    /// Reads `out.len()` bytes at byte address `address` of one memory
    /// location storage: an address space, bound to a thread and a lane
    /// for per-thread and per-lane spaces ([`MemoryStorage`]).
    ///
    /// Errors: [`ContextError::MemoryUnreadable`] naming the first byte
    /// that cannot be read.
    fn read_memory(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError>;

    /// The vendor profile that decodes opcodes 0xe0-0xff (default: the
    /// target's).
    fn vendor(&self) -> &VendorProfile {
        &self.target().vendor
    }

    /// The result kind the caller requires, if it requires one
    /// (hetero-2020 "required result kind").
    fn result_kind(&self) -> Option<ResultKind> {
        None
    }

    /// Entries on the stack before evaluation starts, bottom first
    /// (hetero-2020 "initial stack").
    fn initial_stack(&self) -> &[Entry] {
        &[]
    }

    /// The current object (`DW_OP_push_object_address`), if there is one.
    fn object(&self) -> Option<&Entry> {
        None
    }

    /// Explicit limits on work and memory (steps, stack entries, nesting
    /// depth, bytes per value, frames per unwinding).
    fn budgets(&self) -> Budgets {
        Budgets::default()
    }

    /// The current thread identifier, if specified.
    fn thread(&self) -> Option<u64> {
        None
    }

    /// The current lane identifier, if specified.
    fn lane(&self) -> Option<u32> {
        None
    }

    /// The current program location: the pc of the current frame, if
    /// specified.
    fn pc(&self) -> Option<u64> {
        None
    }

    /// The canonical frame address of the current frame.
    ///
    /// Errors: [`ContextError::Missing`]`(`[`Element::Cfa`]`)` when it is
    /// not specified; [`ContextError::Unwinding`] when it was to be found by
    /// virtually unwinding and that failed.
    fn cfa(&self) -> Result<Cfa, ContextError> {
        Err(ContextError::Missing(Element::Cfa))
    }

    /// The `DW_AT_frame_base` expression of the current subprogram, if
    /// specified.
    fn frame_base(&self) -> Option<&[u8]> {
        None
    }

    /// The byte address of the current thread's TLS block
    /// (`DW_OP_form_tls_address` adds its operand to it), if specified.
    fn tls_base(&self) -> Option<u64> {
        None
    }

    /// The frame that called the current frame: its program location,
    /// CFA, frame base, the CFI rules that recover its registers from the
    /// current frame, and its own caller.
    ///
    /// Errors: [`ContextError::Missing`]`(`[`Element::Caller`]`)` when it is
    /// not known; [`ContextError::Unwinding`] when it was to be found by
    /// virtually unwinding and that failed.
    fn caller(&self) -> Result<Arc<CallerFrame>, ContextError> {
        Err(ContextError::Missing(Element::Caller))
    }

    /// The current compilation unit's header facts, if there is a unit.
    fn unit(&self) -> Option<UnitInfo> {
        None
    }

    /// The base type DIE at unit offset `die` (the operand of
    /// `DW_OP_const_type`, `DW_OP_regval_type`, `DW_OP_deref_type`,
    /// `DW_OP_convert`, `DW_OP_reinterpret`).
    ///
    /// Errors: [`ContextError::Missing`] with [`Element::Unit`] when there
    /// is no unit, [`Element::BaseType`] when the DIE is not a base type.
    fn base_type(&self, die: u64) -> Result<BaseType, ContextError> {
        let _ = die;
        Err(ContextError::Missing(if self.unit().is_some() { Element::BaseType } else { Element::Unit }))
    }

    /// The DIE at `.debug_info` offset `offset` as far as expressions need
    /// it (`DW_OP_call*` targets, implicit pointer targets), if there is
    /// one.
    fn die(&self, offset: u64) -> Option<Cow<'_, Die>> {
        let _ = offset;
        None
    }

    /// Entry `index` of the current unit's `.debug_addr` table
    /// (`DW_OP_addrx`, `DW_OP_constx`, `DW_LLE_*x`), as an unsigned
    /// integer of the unit's address size.
    ///
    /// Errors: [`ContextError::Missing`] with [`Element::Unit`] when there
    /// is no unit, [`Element::DebugAddrEntry`] when the entry is outside
    /// the section.
    fn debug_addr(&self, index: u64) -> Result<u64, ContextError> {
        let _ = index;
        Err(ContextError::Missing(if self.unit().is_some() { Element::DebugAddrEntry } else { Element::Unit }))
    }

    /// The whole contents of a section the evaluators read with their own
    /// readers (location lists); empty if unknown.
    fn section(&self, section: DebugSection) -> &[u8] {
        let _ = section;
        &[]
    }

    /// The generic type: an unsigned integer the size of an address of the
    /// target's default address space, in the target's byte order.
    fn generic_type(&self) -> BaseType {
        BaseType::generic(self.target().generic_bits(), self.target().endian == Endian::Big)
    }

    /// Address size of the default address space in **bytes**: the unit's
    /// `address_size` when there is a unit that gives one, else the
    /// target's.
    fn address_bytes(&self) -> u8 {
        self.unit().map(|u| u.address_size).filter(|&a| a != 0).unwrap_or(self.target().address_bytes())
    }
}
