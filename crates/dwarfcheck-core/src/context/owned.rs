//! [`Context`]: a machine state held in memory, as case files and real
//! binaries give it (registers and memory segments, optionally synthetic),
//! and its [`MachineState`] answers.

use super::{
    synthetic, Budgets, CallerFrame, Cfa, CompUnit, ContextError, DebugSection, Die, Element, Entry, MachineState,
    MemoryStorage, ResultKind, UnitInfo,
};
use crate::encoding::VendorProfile;
use crate::outcome::BaseType;
use crate::target::{Endian, Target};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One contiguous run of known memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemorySegment {
    /// Address space identifier.
    pub aspace: u64,
    /// Byte address of `bytes[0]`.
    pub address: u64,
    /// Contents.
    pub bytes: Vec<u8>,
    /// For a per-thread address space: the thread whose storage this is
    /// (`None`: shared storage, or the only thread).
    pub thread: Option<u64>,
    /// For a per-lane address space: the lane whose storage this is
    /// (`None`: storage not per lane).
    pub lane: Option<u32>,
}

impl MemorySegment {
    /// Shared (not per-thread, not per-lane) memory of `aspace` holding
    /// `bytes` from byte address `address`.
    pub fn shared(aspace: u64, address: u64, bytes: Vec<u8>) -> Self {
        MemorySegment { aspace, address, bytes, thread: None, lane: None }
    }
}

/// The whole evaluation context of one case.
///
/// Every element is optional, as in the spec; an operation that needs an
/// absent element gets [`ContextError::Missing`].
#[derive(Debug, Clone)]
pub struct Context {
    /// The current target architecture.
    pub target: Arc<Target>,
    /// Vendor profile for the 0xe0–0xff range (defaults to the target's).
    pub vendor: VendorProfile,
    /// The current result kind, if specified.
    pub result_kind: Option<ResultKind>,
    /// The current thread identifier.
    pub thread: Option<u64>,
    /// The current lane identifier.
    pub lane: Option<u32>,
    /// The current program location (PC of the current call frame).
    pub pc: Option<u64>,
    /// The CFA of the current call frame: a byte address in address space
    /// `cfa_aspace` (`DW_OP_call_frame_cfa` pushes that memory location
    /// description; `offset(N)` rules and CFI expressions start from it).
    pub cfa: Option<u64>,
    /// The address space of `cfa` (0, the default, unless the frame's CFA
    /// rule came from `DW_CFA_LLVM_def_aspace_cfa`).
    pub cfa_aspace: u64,
    /// `DW_AT_frame_base` of the current subprogram: an expression.
    pub frame_base: Option<Vec<u8>>,
    /// The current object (`DW_OP_push_object_address`).
    pub object: Option<Entry>,
    /// Entries pushed before evaluation starts, bottom first.
    pub initial_stack: Vec<Entry>,
    /// Base address of the current thread's TLS block
    /// (`DW_OP_form_tls_address` adds its operand to this).
    pub tls_base: Option<u64>,
    /// Register contents of the current frame, by DWARF number, in target
    /// byte order, each exactly the register's size.
    pub registers: BTreeMap<u64, Vec<u8>>,
    /// Known memory.
    pub memory: Vec<MemorySegment>,
    /// When set, registers and memory not listed above read as a
    /// deterministic function of this seed (used for real binaries).
    pub synthetic: Option<u64>,
    /// The current compilation unit.
    pub cu: Option<CompUnit>,
    /// The frame that called the current frame (for
    /// `DW_OP_LLVM_call_frame_entry_reg`, `DW_OP_entry_value`, and registers
    /// of non-top frames), if known.
    pub caller: Option<Arc<CallerFrame>>,
    /// The program's call frame information (`.debug_frame` or
    /// `.eh_frame`), when the calling frames are to be found by virtually
    /// unwinding from this context's machine state (`unwind.*` rules)
    /// instead of being given in `caller`. With it, each evaluator unwinds
    /// with its own row builder: the CFA of the current frame (when `cfa`
    /// is `None`) and the caller chain (when `caller` is `None`) come from
    /// the CFI row at `pc` (`unwind.context-from-cfi`).
    pub cfi: Option<Arc<crate::cfi::CfiSection>>,
    /// Explicit limits that keep bad input from hanging or exhausting memory.
    pub budgets: Budgets,
}

impl Context {
    /// Whether `self` and `other` give the same machine state except, at
    /// most, the pc: every other element equal, the shared ones (target,
    /// calling frame, call frame information) the very same `Arc`. An
    /// evaluation that never asks for the pc (`MachineState::pc`) has the
    /// same outcome in both.
    pub fn same_except_pc(&self, other: &Context) -> bool {
        // Destructured so that a new element cannot be left out.
        let Context {
            target,
            vendor,
            result_kind,
            thread,
            lane,
            pc: _,
            cfa,
            cfa_aspace,
            frame_base,
            object,
            initial_stack,
            tls_base,
            registers,
            memory,
            synthetic,
            cu,
            caller,
            cfi,
            budgets,
        } = self;
        fn same<T>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
        }
        Arc::ptr_eq(target, &other.target)
            && same(caller, &other.caller)
            && same(cfi, &other.cfi)
            && (*result_kind, *thread, *lane, *cfa, *cfa_aspace, *tls_base, *synthetic, *budgets)
                == (
                    other.result_kind,
                    other.thread,
                    other.lane,
                    other.cfa,
                    other.cfa_aspace,
                    other.tls_base,
                    other.synthetic,
                    other.budgets,
                )
            && *frame_base == other.frame_base
            && *vendor == other.vendor
            && *object == other.object
            && *initial_stack == other.initial_stack
            && *registers == other.registers
            && *memory == other.memory
            && *cu == other.cu
    }
}

impl Context {
    /// An empty context on `target`: no element specified, nothing readable.
    pub fn new(target: Arc<Target>) -> Self {
        Context {
            vendor: target.vendor.clone(),
            target,
            result_kind: None,
            thread: None,
            lane: None,
            pc: None,
            cfa: None,
            cfa_aspace: 0,
            frame_base: None,
            object: None,
            initial_stack: Vec::new(),
            tls_base: None,
            registers: BTreeMap::new(),
            memory: Vec::new(),
            synthetic: None,
            cu: None,
            caller: None,
            cfi: None,
            budgets: Budgets::default(),
        }
    }
}

/// The context's own elements, as given; registers and memory from
/// [`Context::registers`] and [`Context::memory`], and for what they do
/// not hold, the synthetic state of [`Context::synthetic`] when set.
impl MachineState for Context {
    fn target(&self) -> &Target {
        &self.target
    }

    /// Reading past the register's end reports `RegisterUnavailable`.
    fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError> {
        let reg = self.target.register(regno).ok_or(ContextError::NoSuchRegister(regno))?;
        let size = (reg.bits / 8) as usize;
        if offset.checked_add(out.len()).is_none_or(|end| end > size) {
            return Err(ContextError::RegisterUnavailable(regno));
        }
        if let Some(bytes) = self.registers.get(&regno) {
            out.copy_from_slice(&bytes[offset..offset + out.len()]);
            return Ok(());
        }
        match self.synthetic {
            Some(seed) => {
                synthetic::register_bytes(seed, regno, offset, out);
                Ok(())
            }
            None => Err(ContextError::RegisterUnavailable(regno)),
        }
    }

    /// Segments match only with the same address space, thread and lane
    /// binding; in a synthetic context, per-thread and per-lane storage
    /// reads differ by thread and lane.
    fn read_memory(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
        let MemoryStorage { aspace, thread, lane } = storage;
        let mine = |seg: &MemorySegment| seg.aspace == aspace && seg.thread == thread && seg.lane == lane;
        // Common case: one segment holds the whole range.
        for seg in self.memory.iter().filter(|s| mine(s)) {
            if address >= seg.address {
                let start = (address - seg.address) as usize;
                if let Some(src) = seg.bytes.get(start..).and_then(|s| s.get(..out.len())) {
                    out.copy_from_slice(src);
                    return Ok(());
                }
            }
        }
        for (i, b) in out.iter_mut().enumerate() {
            let a = address.wrapping_add(i as u64);
            let found = self.memory.iter().find_map(|seg| {
                (mine(seg) && a >= seg.address).then(|| seg.bytes.get((a - seg.address) as usize)).flatten()
            });
            *b = match (found, self.synthetic) {
                (Some(v), _) => *v,
                (None, Some(seed)) => {
                    let bound = match (thread, lane) {
                        (None, None) => seed,
                        _ => {
                            seed ^ synthetic::mix(
                                thread.map_or(0, |t| t + 1) ^ (u64::from(lane.map_or(0, |l| l + 1)) << 40),
                            )
                        }
                    };
                    synthetic::memory_byte(bound, aspace, a)
                }
                (None, None) => return Err(ContextError::MemoryUnreadable { aspace, address: a }),
            };
        }
        Ok(())
    }

    fn vendor(&self) -> &VendorProfile {
        &self.vendor
    }

    fn result_kind(&self) -> Option<ResultKind> {
        self.result_kind
    }

    fn initial_stack(&self) -> &[Entry] {
        &self.initial_stack
    }

    fn object(&self) -> Option<&Entry> {
        self.object.as_ref()
    }

    fn budgets(&self) -> Budgets {
        self.budgets
    }

    fn thread(&self) -> Option<u64> {
        self.thread
    }

    fn lane(&self) -> Option<u32> {
        self.lane
    }

    fn pc(&self) -> Option<u64> {
        self.pc
    }

    fn cfa(&self) -> Result<Cfa, ContextError> {
        match self.cfa {
            Some(address) => Ok(Cfa { address, aspace: self.cfa_aspace }),
            None => Err(ContextError::Missing(Element::Cfa)),
        }
    }

    fn frame_base(&self) -> Option<&[u8]> {
        self.frame_base.as_deref()
    }

    fn tls_base(&self) -> Option<u64> {
        self.tls_base
    }

    fn caller(&self) -> Result<Arc<CallerFrame>, ContextError> {
        self.caller.clone().ok_or(ContextError::Missing(Element::Caller))
    }

    fn unit(&self) -> Option<UnitInfo> {
        self.cu.as_ref().map(CompUnit::info)
    }

    fn base_type(&self, die: u64) -> Result<BaseType, ContextError> {
        self.cu
            .as_ref()
            .ok_or(ContextError::Missing(Element::Unit))?
            .base_types
            .get(&die)
            .copied()
            .ok_or(ContextError::Missing(Element::BaseType))
    }

    fn die(&self, offset: u64) -> Option<Cow<'_, Die>> {
        self.cu.as_ref()?.dies.get(&offset).map(Cow::Borrowed)
    }

    /// Entries are the unit's `address_size` bytes, read in the target's
    /// byte order; an entry wider than 8 bytes is not an address.
    fn debug_addr(&self, index: u64) -> Result<u64, ContextError> {
        let cu = self.cu.as_ref().ok_or(ContextError::Missing(Element::Unit))?;
        let missing = ContextError::Missing(Element::DebugAddrEntry);
        let size = u64::from(cu.address_size);
        if size > 8 {
            return Err(missing);
        }
        let start = index.checked_mul(size).and_then(|o| o.checked_add(cu.addr_base)).ok_or(missing.clone())?;
        let end = start.checked_add(size).ok_or(missing.clone())?;
        let bytes = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| cu.debug_addr.get(s..e))
            .ok_or(missing)?;
        let mut v = [0u8; 8];
        if self.target.endian == Endian::Big {
            v[8 - bytes.len()..].copy_from_slice(bytes);
            Ok(u64::from_be_bytes(v))
        } else {
            v[..bytes.len()].copy_from_slice(bytes);
            Ok(u64::from_le_bytes(v))
        }
    }

    fn section(&self, section: DebugSection) -> &[u8] {
        match (&self.cu, section) {
            (Some(cu), DebugSection::DebugLoclists) => &cu.debug_loclists,
            (Some(cu), DebugSection::DebugLoc) => &cu.debug_loc,
            (None, _) => &[],
        }
    }
}

#[cfg(test)]
mod same_except_pc_tests {
    use super::*;

    #[test]
    fn only_the_pc_may_differ() {
        let t = Arc::new(crate::target::presets::x86_64());
        let mut a = Context::new(t.clone());
        a.pc = Some(0x10);
        a.frame_base = Some(vec![0x76, 0]);
        a.synthetic = Some(1);
        let mut b = a.clone();
        b.pc = Some(0x20);
        assert!(a.same_except_pc(&b));
        let changes: [fn(&mut Context); 6] = [
            |c| c.frame_base = Some(vec![0x77, 0]),
            |c| c.cfa = Some(0x1000),
            |c| c.synthetic = Some(2),
            |c| {
                c.registers.insert(6, vec![0; 8]);
            },
            |c| c.budgets.steps = 3,
            |c| c.target = Arc::new(crate::target::presets::x86_64()),
        ];
        for change in changes {
            let mut c = b.clone();
            change(&mut c);
            assert!(!a.same_except_pc(&c) && !c.same_except_pc(&a));
        }
    }
}
