//! Target architecture descriptions: registers, address spaces, endianity, lanes.
//!
//! A [`Target`] is the "current target architecture" context element of
//! hetero-2020 "DWARF Expression Evaluation Context". Presets live in
//! [`presets`]; case files may also describe a target inline.

pub mod amdgpu;
pub mod intel;
pub mod presets;

use crate::encoding::VendorProfile;

pub use crate::encoding::Arch;

/// Byte order of memory and registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Endian {
    /// Least significant byte at the lowest address.
    #[default]
    Little,
    /// Most significant byte at the lowest address.
    Big,
}

/// One DWARF register of the target.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Register {
    /// DWARF register number.
    pub number: u64,
    /// Name as llvm-dwarfdump and the psABI spell it (lowercase).
    pub name: String,
    /// Size of the register's location storage in **bits**.
    pub bits: u32,
}

/// One DWARF address space of the target.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct AddressSpace {
    /// DWARF address space identifier (`DW_ASPACE_*` value).
    pub number: u64,
    /// Human name, e.g. `global` or `private_lane`.
    pub name: String,
    /// Size of an address in this space, in **bits**.
    pub address_bits: u32,
    /// Whether each thread has its own storage for this space.
    #[cfg_attr(feature = "serde", serde(default))]
    pub per_thread: bool,
    /// Whether each lane has its own storage for this space.
    #[cfg_attr(feature = "serde", serde(default))]
    pub per_lane: bool,
}

/// A target architecture: the facts an evaluator needs about the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Target {
    /// Preset or inline name.
    pub name: String,
    /// Architecture family.
    pub arch: Arch,
    /// Byte order.
    pub endian: Endian,
    /// DWARF registers, sorted by number.
    pub registers: Vec<Register>,
    /// Address spaces, sorted by number. The default address space is
    /// number 0 (hetero-2020 "Memory Location Description Operations").
    pub address_spaces: Vec<AddressSpace>,
    /// Lanes per thread (wavefront size on AMDGPU; 1 on CPUs).
    pub lanes: u32,
    /// Vendor profile for the opcode range 0xe0–0xff.
    pub vendor: VendorProfile,
    /// DWARF register number of the return address column used by CIEs on
    /// this target.
    pub return_address_register: u64,
}

impl Target {
    /// The DWARF number of the stack pointer whose value in the calling
    /// frame is the CFA by the ABI's definition of the CFA (x86-64 psABI
    /// "DWARF Register Number Mapping" RSP = 7; AADWARF64 "Canonical frame
    /// address", SP = 31), or `None` where the ABI gives no such rule
    /// (AMDGPU, inline targets). Rule `unwind.sp-is-cfa`.
    pub fn stack_pointer(&self) -> Option<u64> {
        match self.arch {
            Arch::X86_64 => Some(7),
            Arch::Aarch64 => Some(31),
            Arch::Amdgpu | Arch::Other => None,
        }
    }

    /// The register with DWARF number `number`.
    pub fn register(&self, number: u64) -> Option<&Register> {
        // (Numbering is dense from 0 on most targets: try the index first.)
        if let Some(r) = usize::try_from(number).ok().and_then(|i| self.registers.get(i)) {
            if r.number == number {
                return Some(r);
            }
        }
        self.registers.binary_search_by_key(&number, |r| r.number).ok().map(|i| &self.registers[i])
    }

    /// The register called `name`, ignoring ASCII case and treating `.` and
    /// `_` alike (the psABI's `fs.base` is llvm-dwarfdump's `FS_BASE`).
    pub fn register_by_name(&self, name: &str) -> Option<&Register> {
        self.registers.iter().find(|r| same_name(&r.name, name))
    }

    /// The address space with identifier `number`.
    pub fn address_space(&self, number: u64) -> Option<&AddressSpace> {
        self.address_spaces.iter().find(|a| a.number == number)
    }

    /// Size in **bits** of an address in the default address space; this is
    /// also the size of the generic type (hetero-2020 "DWARF Expression
    /// Value").
    pub fn generic_bits(&self) -> u32 {
        self.address_space(0).map(|a| a.address_bits).unwrap_or(64)
    }

    /// Size in **bytes** of an address in the default address space.
    pub fn address_bytes(&self) -> u8 {
        (self.generic_bits() / 8) as u8
    }

    /// Sorts registers and address spaces and checks the description is
    /// usable: unique register numbers and names, an address space 0, sizes
    /// that are whole bytes up to 64 bits for addresses, at least one lane.
    ///
    /// Errors: the first [`TargetError`] found, in that order.
    pub fn validate(mut self) -> Result<Self, TargetError> {
        self.registers.sort_by_key(|r| r.number);
        self.address_spaces.sort_by_key(|a| a.number);
        for w in self.registers.windows(2) {
            if w[0].number == w[1].number {
                return Err(TargetError::RegisterNumberTwice(w[0].number));
            }
        }
        let mut names = std::collections::BTreeSet::new();
        for r in &self.registers {
            if !names.insert(r.name.to_ascii_lowercase().replace('.', "_")) {
                return Err(TargetError::RegisterNameTwice(r.name.clone()));
            }
        }
        for r in &self.registers {
            if r.bits == 0 || r.bits % 8 != 0 {
                return Err(TargetError::RegisterSize { name: r.name.clone(), bits: r.bits });
            }
        }
        if self.address_space(0).is_none() {
            return Err(TargetError::NoDefaultAddressSpace);
        }
        for a in &self.address_spaces {
            if !matches!(a.address_bits, 8 | 16 | 32 | 64) {
                return Err(TargetError::AddressSize { aspace: a.number, bits: a.address_bits });
            }
        }
        if self.lanes == 0 {
            return Err(TargetError::NoLanes);
        }
        Ok(self)
    }
}

/// Why a target description is not usable ([`Target::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Two registers with one DWARF number.
    #[error("register number {0} is listed twice")]
    RegisterNumberTwice(u64),
    /// Two registers with one name (ASCII case and `.`/`_` ignored).
    #[error("register name `{0}` is used twice (names are compared ignoring case)")]
    RegisterNameTwice(String),
    /// A register whose size is not a positive whole number of bytes.
    #[error("register {name} has size {bits} bits, not a positive multiple of 8")]
    RegisterSize {
        /// The register's name.
        name: String,
        /// Its size in **bits**.
        bits: u32,
    },
    /// No address space 0.
    #[error("no address space 0 (the default address space)")]
    NoDefaultAddressSpace,
    /// An address space whose addresses are not 8, 16, 32 or 64 bits.
    #[error("address space {aspace} has {bits}-bit addresses; expected 8, 16, 32 or 64")]
    AddressSize {
        /// The address space.
        aspace: u64,
        /// Its address size in **bits**.
        bits: u32,
    },
    /// Zero lanes.
    #[error("a target has at least one lane")]
    NoLanes,
}

/// Register name equality: ASCII case-insensitive, `.` and `_` alike.
fn same_name(a: &str, b: &str) -> bool {
    let norm = |c: u8| if c == b'.' { b'_' } else { c.to_ascii_lowercase() };
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| norm(x) == norm(y))
}
