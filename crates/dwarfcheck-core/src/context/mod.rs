//! The evaluation context: the machine state and debug-information state an
//! expression is evaluated against (hetero-2020 "DWARF Expression
//! Evaluation Context").
//!
//! This is the second thing both evaluators share (DESIGN §2). It only
//! answers questions ("what bytes are at this address?"); it never decides
//! what an operation means.

pub mod attribute;
pub mod synthetic;

pub use attribute::Attribute;

use crate::encoding::{Format, VendorProfile};
use crate::outcome::{BaseType, NormalLocation, Value};
use crate::target::{Endian, Target};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The result kind the caller asks for (hetero-2020 "current result kind").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ResultKind {
    /// A location description is required.
    Location,
    /// A value is required.
    Value,
}

/// An entry given by the context: a value or a location description
/// (initial stack entries and the current object).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Entry {
    /// A value.
    Value(Value),
    /// A location description.
    Location(NormalLocation),
}

/// The current compilation unit (hetero-2020 "A current compilation unit").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompUnit {
    /// DWARF version of the unit header.
    pub version: u16,
    /// 32- or 64-bit DWARF.
    pub format: Format,
    /// `address_size` of the unit header, in **bytes**.
    pub address_size: u8,
    /// Contents of `.debug_addr` (whole section).
    pub debug_addr: Arc<[u8]>,
    /// `DW_AT_addr_base`: byte offset of this unit's entries in `.debug_addr`.
    pub addr_base: u64,
    /// Base type DIEs, by offset relative to the unit (the operand of
    /// `DW_OP_const_type`, `DW_OP_regval_type`, `DW_OP_deref_type`,
    /// `DW_OP_convert`, `DW_OP_reinterpret`).
    pub base_types: BTreeMap<u64, BaseType>,
    /// `.debug_info` offset of the unit header: `DW_OP_call2`/`call4`
    /// operands are relative to it.
    pub offset: u64,
    /// DIEs by `.debug_info` offset (`DW_OP_call_ref` and implicit pointer
    /// operands; a `call2`/`call4` operand plus [`CompUnit::offset`]).
    pub dies: BTreeMap<u64, Die>,
    /// Contents of `.debug_loclists` (whole section; unit version 5).
    pub debug_loclists: Arc<[u8]>,
    /// `DW_AT_loclists_base`: byte offset of this unit's offsets table in
    /// `.debug_loclists` (for `DW_FORM_loclistx` and `DW_LLE_*x` forms).
    pub loclists_base: u64,
    /// Contents of `.debug_loc` (whole section; unit version 4 and earlier).
    pub debug_loc: Arc<[u8]>,
    /// The unit's base address (`DW_AT_low_pc` of the unit DIE), the
    /// initial base of location list entries; `None` if it has none.
    pub base_address: Option<u64>,
}

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

/// Which memory location storage of an address space is meant: the space,
/// and for per-thread / per-lane spaces the thread and lane it is bound to
/// (hetero-2020 "Memory Location Description Operations": the storage is
/// selected when the location description is created).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemoryStorage {
    /// DWARF address space identifier.
    pub aspace: u64,
    /// Thread of per-thread storage, else `None`.
    pub thread: Option<u64>,
    /// Lane of per-lane storage, else `None`.
    pub lane: Option<u32>,
}

impl MemoryStorage {
    /// Shared storage of `aspace`.
    pub fn shared(aspace: u64) -> Self {
        MemoryStorage { aspace, thread: None, lane: None }
    }
}

/// How an attribute gives its DWARF expression (DWARF 5 §7.5.5 classes
/// `exprloc` and `loclist`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrForm {
    /// `DW_FORM_exprloc` (or a DWARF 2/3 block): one operation expression.
    Exprloc(Vec<u8>),
    /// `DW_FORM_sec_offset` of class loclist: a byte offset into
    /// `.debug_loclists` (unit version 5) or `.debug_loc` (version 4 and
    /// earlier).
    LocList {
        /// Byte offset of the list in its section.
        offset: u64,
    },
    /// `DW_FORM_loclistx` (DWARF 5 §7.29): an index into the offsets
    /// table that starts at the unit's `DW_AT_loclists_base`.
    LocListX {
        /// Index into the offsets table.
        index: u64,
    },
    /// A constant of class `constant` (only `DW_AT_data_member_location`
    /// takes one: a byte offset from the start of the containing object).
    Constant(u64),
}

impl AttrForm {
    /// The value borrowed, as the evaluators take it.
    pub fn as_value(&self) -> AttrValue<'_> {
        match self {
            AttrForm::Exprloc(e) => AttrValue::Exprloc(e),
            AttrForm::LocList { offset } => AttrValue::LocList { offset: *offset },
            AttrForm::LocListX { index } => AttrValue::LocListX { index: *index },
            AttrForm::Constant(c) => AttrValue::Constant(*c),
        }
    }
}

/// An attribute's value as the evaluators take it: [`AttrForm`] with the
/// expression borrowed (DWARF 5 §7.5.5 classes `exprloc`, `loclist`,
/// `constant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrValue<'a> {
    /// `DW_FORM_exprloc` (or a DWARF 2/3 block): one operation expression.
    Exprloc(&'a [u8]),
    /// `DW_FORM_sec_offset` of class loclist: a byte offset into
    /// `.debug_loclists` (unit version 5) or `.debug_loc` (version 4 and
    /// earlier).
    LocList {
        /// Byte offset of the list in its section.
        offset: u64,
    },
    /// `DW_FORM_loclistx`: an index into the unit's offsets table.
    LocListX {
        /// Index into the offsets table.
        index: u64,
    },
    /// A constant of class `constant`.
    Constant(u64),
}

/// A debugging information entry as far as expressions need it: the
/// targets of `DW_OP_call2`/`call4`/`call_ref`, `DW_OP_implicit_pointer`
/// and `DW_OP_LLVM_aspace_implicit_pointer`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Die {
    /// `DW_AT_location`, if present.
    pub location: Option<AttrForm>,
    /// `DW_AT_const_value` as bytes in target memory order, if present.
    pub const_value: Option<Vec<u8>>,
    /// Size of the object in **bytes** (`DW_AT_byte_size` of its type), if
    /// known: the size of the implicit storage an implicit pointer refers to
    /// when it comes from `const_value`.
    pub byte_size: Option<u64>,
}

/// The calling frame of a frame, found by virtually unwinding it with its
/// call frame information (hetero-2020 "Call Frame Information"; DWARF 5
/// §6.4). This is the simple frame chain of issue 3: the callee's CFI row
/// at the current program location is given directly as register rules.
///
/// `rules` says how each register of this (calling) frame is recovered
/// from the state of the frame it called: for the first `CallerFrame` of a
/// [`Context`], from the context's registers, memory and CFA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerFrame {
    /// The program location in the calling frame (the call site).
    pub pc: Option<u64>,
    /// The calling frame's CFA: a byte address in address space
    /// `cfa_aspace`.
    pub cfa: Option<u64>,
    /// The address space of `cfa` (0, the default, unless the calling
    /// frame's CFA rule came from `DW_CFA_LLVM_def_aspace_cfa`).
    pub cfa_aspace: u64,
    /// The calling subprogram's `DW_AT_frame_base` expression.
    pub frame_base: Option<Vec<u8>>,
    /// Register rules of the called frame's CFI row, by DWARF register
    /// number. `Offset`/`ValOffset`/`Expression`/`ValExpression` use the
    /// *called* frame's CFA; `Register(R)` names a register of the called
    /// frame.
    pub rules: BTreeMap<u64, crate::outcome::cfi::RegisterRule>,
    /// The rule of registers not in `rules` (the target's default rule,
    /// DWARF 5 §6.4.1; `SameValue` or `Undefined`).
    pub default_rule: crate::outcome::cfi::RegisterRule,
    /// The frame that called this one, if known.
    pub caller: Option<Arc<CallerFrame>>,
    /// Whether this frame was found by virtually unwinding from the
    /// context (`unwind.context-from-cfi`) rather than given: then
    /// computing one of its registers while that same computation is under
    /// way is `unwind.cyclic` (explicitly given frames rely on the depth
    /// budget instead).
    pub unwound: bool,
}

impl Default for CallerFrame {
    /// Nothing known; registers without a rule are undefined.
    fn default() -> Self {
        CallerFrame {
            pc: None,
            cfa: None,
            cfa_aspace: 0,
            frame_base: None,
            rules: BTreeMap::new(),
            default_rule: crate::outcome::cfi::RegisterRule::Undefined,
            caller: None,
            unwound: false,
        }
    }
}

impl CallerFrame {
    /// The rule for register `regno`: its own, else the default.
    pub fn rule(&self, regno: u64) -> &crate::outcome::cfi::RegisterRule {
        self.rules.get(&regno).unwrap_or(&self.default_rule)
    }
}

/// Why the context could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// A context element the operation requires was not specified.
    #[error("context element not specified: {0}")]
    Missing(&'static str),
    /// The target has no register with this number.
    #[error("register {0} does not exist on the target")]
    NoSuchRegister(u64),
    /// The register exists but its value is not available.
    #[error("register {0} has no value in this context")]
    RegisterUnavailable(u64),
    /// Memory at this address cannot be read.
    #[error("memory in address space {aspace} at {address:#x} cannot be read")]
    MemoryUnreadable {
        /// Address space.
        aspace: u64,
        /// First unreadable byte address.
        address: u64,
    },
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

/// Explicit evaluation budgets (DESIGN §9). Exceeding one yields
/// `Outcome::Budget`, never a panic. Both evaluators apply them at the same
/// points so that they agree on the outcome:
/// - `steps`: checked before each operation is executed; executing
///   operation number `steps + 1` (1-based, nested evaluations included)
///   reports `Budget { Steps, at: <its offset> }`;
/// - `stack`: checked after an operation; more than `stack` entries
///   reports `Budget { Stack, at }`;
/// - `depth`: nested evaluations (frame base, `DW_OP_call*`,
///   `DW_OP_entry_value`, implicit pointers) deeper than `depth`;
/// - `size_bytes`: any single value, implicit storage or composite larger
///   than this many **bytes** (or a piece/part of more than `8 * size_bytes`
///   **bits**);
/// - `frames`: virtual unwinding that would make step number `frames + 1`
///   reports `Budget { Frames }` (`unwind.frames-budget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// Maximum operations executed per evaluation.
    pub steps: u64,
    /// Maximum stack entries.
    pub stack: usize,
    /// Maximum nesting depth of evaluations.
    pub depth: u32,
    /// Maximum size of one value or storage, in **bytes**.
    pub size_bytes: u64,
    /// Maximum frames one virtual unwinding steps through.
    pub frames: u32,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets { steps: 100_000, stack: 1024, depth: 16, size_bytes: 1 << 20, frames: 256 }
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

    /// The generic type of this context's target.
    pub fn generic_type(&self) -> BaseType {
        BaseType::generic(self.target.generic_bits(), self.target.endian == Endian::Big)
    }

    /// Address size of the default address space in **bytes**: the unit's
    /// `address_size` when a unit is given, else the target's.
    pub fn address_bytes(&self) -> u8 {
        self.cu.as_ref().map(|c| c.address_size).filter(|&a| a != 0).unwrap_or(self.target.address_bytes())
    }

    /// Reads `out.len()` bytes of register `regno` starting at byte
    /// `offset`, in target byte order.
    ///
    /// Errors: [`ContextError::NoSuchRegister`] if the target lacks it,
    /// [`ContextError::RegisterUnavailable`] if no value is given and the
    /// context is not synthetic. Reading past the register's end is the
    /// caller's bug and also reports `RegisterUnavailable`.
    pub fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError> {
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

    /// Reads `out.len()` bytes of memory at `address` in `aspace`.
    ///
    /// Errors: [`ContextError::MemoryUnreadable`] naming the first byte
    /// that no segment covers (unless the context is synthetic).
    pub fn read_memory(&self, aspace: u64, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
        self.read_storage(MemoryStorage::shared(aspace), address, out)
    }

    /// Reads `out.len()` bytes at byte `address` of one memory location
    /// storage: segments match only with the same address space, thread
    /// and lane binding.
    ///
    /// Errors: [`ContextError::MemoryUnreadable`] naming the first byte
    /// that no segment covers (unless the context is synthetic, where
    /// per-thread/per-lane storage reads differ by thread and lane).
    pub fn read_storage(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
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

    /// The entry of `.debug_addr` at `index` for the current unit
    /// (`DW_OP_addrx`, `DW_OP_constx`), as an unsigned integer.
    pub fn debug_addr(&self, index: u64) -> Result<u64, ContextError> {
        let cu = self.cu.as_ref().ok_or(ContextError::Missing("compilation unit"))?;
        let size = u64::from(cu.address_size);
        let start = index
            .checked_mul(size)
            .and_then(|o| o.checked_add(cu.addr_base))
            .ok_or(ContextError::Missing(".debug_addr entry"))?;
        let end = start.checked_add(size).ok_or(ContextError::Missing(".debug_addr entry"))?;
        let bytes = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| cu.debug_addr.get(s..e))
            .ok_or(ContextError::Missing(".debug_addr entry"))?;
        let mut v = [0u8; 8];
        if self.target.endian == Endian::Big {
            v[8 - bytes.len()..].copy_from_slice(bytes);
            Ok(u64::from_be_bytes(v))
        } else {
            v[..bytes.len()].copy_from_slice(bytes);
            Ok(u64::from_le_bytes(v))
        }
    }

    /// The base type DIE at unit offset `die`.
    pub fn base_type(&self, die: u64) -> Result<BaseType, ContextError> {
        self.cu
            .as_ref()
            .ok_or(ContextError::Missing("compilation unit"))?
            .base_types
            .get(&die)
            .copied()
            .ok_or(ContextError::Missing("base type DIE"))
    }
}
