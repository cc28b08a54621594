//! The evaluation context: the machine state and debug-information state an
//! expression is evaluated against (hetero-2020 "DWARF Expression
//! Evaluation Context").
//!
//! This is the second thing both evaluators share (DESIGN §2). It only
//! answers questions ("what bytes are at this address?"); it never decides
//! what an operation means.

pub mod synthetic;

use crate::encoding::VendorProfile;
use crate::outcome::{BaseType, NormalLocation, Value};
use crate::target::{Endian, Target};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The result kind the caller asks for (hetero-2020 "current result kind").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultKind {
    /// A location description is required.
    Location,
    /// A value is required.
    Value,
}

/// An entry given by the context: a value or a location description
/// (initial stack entries and the current object).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Entry {
    /// A value.
    Value(Value),
    /// A location description.
    Location(NormalLocation),
}

/// 32-bit or 64-bit DWARF format (DWARF 5 §7.4): sets the size of
/// section-offset operands such as `DW_OP_call_ref`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Offsets are 4 bytes.
    #[default]
    Dwarf32,
    /// Offsets are 8 bytes.
    Dwarf64,
}

impl Format {
    /// Size of a section offset in **bytes**.
    pub fn offset_bytes(self) -> usize {
        match self {
            Format::Dwarf32 => 4,
            Format::Dwarf64 => 8,
        }
    }
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
    /// The CFA of the current call frame, in the default address space.
    pub cfa: Option<u64>,
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
///   **bits**).
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
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets { steps: 100_000, stack: 1024, depth: 16, size_bytes: 1 << 20 }
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
            frame_base: None,
            object: None,
            initial_stack: Vec::new(),
            tls_base: None,
            registers: BTreeMap::new(),
            memory: Vec::new(),
            synthetic: None,
            cu: None,
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
        // Common case: one segment holds the whole range.
        for seg in &self.memory {
            if seg.aspace == aspace && address >= seg.address {
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
                (seg.aspace == aspace && a >= seg.address).then(|| seg.bytes.get((a - seg.address) as usize)).flatten()
            });
            *b = match (found, self.synthetic) {
                (Some(v), _) => *v,
                (None, Some(seed)) => synthetic::memory_byte(seed, aspace, a),
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
