//! A synthetic machine state made concrete, so that a core file can hold
//! it: the registers and memory the reference's unwinding actually reads,
//! with their synthetic values, and nothing else (issue 15: `elf`'s
//! unwinding samples judged by the debugger unwinders).
//!
//! `dwarfcheck elf` unwinds real CFI from a synthetic state
//! ([`Context::synthetic`]): every register and byte of memory is a
//! function of a seed, so the whole 64-bit address space is readable. A core
//! file holds finitely many bytes. The reference's unwinding reads only a
//! few registers and memory words (the CFA's register, the saved registers'
//! slots, an expression's operands), so those are recorded while the
//! reference unwinds, written into a context without the synthetic state,
//! and the reference unwinds that context again: only when both unwindings
//! are equal is the concrete state used. Everything the second unwinding
//! reads is then in the core, and a debugger that reads what the CFI says
//! sees the same values the reference saw.

use super::Unrepresentable;
use crate::case::UnwindCase;
use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::context::{
    Budgets, CallerFrame, Cfa, Context, ContextError, Entry, MachineState, MemorySegment, MemoryStorage,
};
use dwarfcheck_core::target::Target;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Most distinct memory bytes a concrete state may hold (the reference's
/// frames budget bounds the reads already; this bounds the core).
pub const MAX_MEMORY_BYTES: usize = 64 * 1024;

/// A concrete state and what the reference's unwinding visited in it.
#[derive(Debug, Clone)]
pub struct Concrete {
    /// The unwinding case with the concrete context (no synthetic state;
    /// the same pc, section, budgets and limit).
    pub case: UnwindCase,
    /// Section offsets of the FDEs the reference's steps used, in step
    /// order (the synthesised text need cover only these).
    pub fdes: Vec<u64>,
}

/// `u` with its synthetic state replaced by the registers and memory bytes
/// the reference reads while unwinding it through `section`.
///
/// Errors: [`Unrepresentable`] when `u`'s context is not synthetic, when a
/// read is of storage a core file cannot hold (an address space other
/// than 0, per-thread or per-lane storage), when more than
/// [`MAX_MEMORY_BYTES`] are read, or when the reference's unwinding of the
/// concrete state differs from that of the synthetic one.
pub fn concretise(section: &CfiSection, u: &UnwindCase) -> Result<Concrete, Unrepresentable> {
    let ctx = &*u.ctx;
    if ctx.synthetic.is_none() {
        return Err(Unrepresentable("not a synthetic machine state".into()));
    }
    let rec = Recorder { inner: ctx, registers: RefCell::default(), memory: RefCell::default() };
    let synthetic = dwarfcheck_reference::unwind::unwind(section, &rec, u.limit);
    let Recorder { registers, memory, .. } = rec;
    let (registers, memory) = (registers.into_inner(), memory.into_inner());
    if let Some((s, _)) = memory.iter().find(|(s, _)| *s != MemoryStorage::shared(0)) {
        return Err(Unrepresentable(format!(
            "reads of address space {}, thread {:?}, lane {:?}",
            s.aspace, s.thread, s.lane
        )));
    }
    let bytes: BTreeSet<u64> = memory.into_iter().map(|(_, a)| a).collect();
    if bytes.len() > MAX_MEMORY_BYTES {
        return Err(Unrepresentable(format!("more than {MAX_MEMORY_BYTES} bytes of memory read")));
    }
    let mut c = Context::new(ctx.target.clone());
    c.vendor = ctx.vendor.clone();
    c.pc = ctx.pc;
    c.cfi = ctx.cfi.clone();
    c.budgets = ctx.budgets;
    for regno in registers {
        let size = ctx.target.register(regno).map_or(0, |r| (r.bits / 8) as usize);
        let mut b = vec![0; size];
        ctx.read_register(regno, 0, &mut b).map_err(|e| Unrepresentable(format!("register {regno}: {e}")))?;
        c.registers.insert(regno, b);
    }
    c.memory = segments(ctx, &bytes)?;
    let again = dwarfcheck_reference::unwind::unwind(section, &c, u.limit);
    // The recorder shows no thread or lane, as the concrete state has none:
    // the original state must unwind the same way too.
    let original = dwarfcheck_reference::unwind::unwind(section, ctx, u.limit);
    if again != synthetic || original != synthetic {
        return Err(Unrepresentable("the concrete state unwinds differently from the synthetic one".into()));
    }
    let fdes = synthetic.steps.iter().map(|s| s.fde_offset).collect();
    Ok(Concrete { case: UnwindCase { ctx: Arc::new(c), limit: u.limit, expect: u.expect.clone() }, fdes })
}

/// The bytes at `addresses` (address space 0) of `ctx`, as one segment per
/// run of consecutive addresses.
fn segments(ctx: &Context, addresses: &BTreeSet<u64>) -> Result<Vec<MemorySegment>, Unrepresentable> {
    let mut out: Vec<MemorySegment> = Vec::new();
    for &a in addresses {
        let mut b = [0u8];
        ctx.read_memory(MemoryStorage::shared(0), a, &mut b)
            .map_err(|e| Unrepresentable(format!("memory at {a:#x}: {e}")))?;
        match out.last_mut() {
            Some(s) if s.address.wrapping_add(s.bytes.len() as u64) == a => s.bytes.push(b[0]),
            _ => out.push(MemorySegment { aspace: 0, address: a, bytes: b.to_vec(), thread: None, lane: None }),
        }
    }
    Ok(out)
}

/// A machine state that answers as `inner` and records which registers
/// and memory bytes were read successfully.
struct Recorder<'a> {
    inner: &'a Context,
    /// Register numbers read.
    registers: RefCell<BTreeSet<u64>>,
    /// (storage, byte address) of every byte read.
    memory: RefCell<BTreeSet<(MemoryStorage, u64)>>,
}

impl MachineState for Recorder<'_> {
    fn target(&self) -> &Target {
        self.inner.target()
    }

    fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError> {
        self.inner.read_register(regno, offset, out)?;
        self.registers.borrow_mut().insert(regno);
        Ok(())
    }

    /// Records at most [`MAX_MEMORY_BYTES`] + 1 bytes (enough to refuse).
    fn read_memory(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
        self.inner.read_memory(storage, address, out)?;
        let mut m = self.memory.borrow_mut();
        for i in 0..out.len() as u64 {
            if m.len() > MAX_MEMORY_BYTES {
                break;
            }
            m.insert((storage, address.wrapping_add(i)));
        }
        Ok(())
    }

    fn vendor(&self) -> &dwarfcheck_core::encoding::VendorProfile {
        self.inner.vendor()
    }

    fn budgets(&self) -> Budgets {
        self.inner.budgets()
    }

    fn pc(&self) -> Option<u64> {
        self.inner.pc()
    }

    /// Unwinding does not use the state's own CFA or calling frames; the
    /// concrete state has neither, so neither does this one.
    fn cfa(&self) -> Result<Cfa, ContextError> {
        Err(ContextError::Missing(dwarfcheck_core::context::Element::Cfa))
    }

    fn caller(&self) -> Result<Arc<CallerFrame>, ContextError> {
        Err(ContextError::Missing(dwarfcheck_core::context::Element::Caller))
    }

    fn initial_stack(&self) -> &[Entry] {
        &[]
    }
}
