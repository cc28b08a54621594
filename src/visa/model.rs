//! What a decoded vISA debug info blob holds (seed "Appendix: Debug
//! Information"): per compiled object its maps, variables, subroutines and
//! call frame information. Every element keeps the byte offset it was read
//! at, so that validation faults point into the blob.

use super::layout::Layout;
use serde::Serialize;

/// A whole blob.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Blob {
    /// The layout it was decoded under.
    pub layout: Layout,
    /// The compiled objects: the kernel first, then stack-call functions.
    pub objects: Vec<Object>,
}

/// One compiled object: a kernel or a stack-call function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Object {
    /// Byte offset of the object (its name length field).
    pub at: usize,
    /// The object's name.
    pub name: String,
    /// Byte offset of its first instruction in the binary: 0 for a kernel.
    pub reloc_offset: u32,
    /// vISA byte offset to Gen byte offset (may be empty).
    pub offset_map: Vec<MapEntry>,
    /// vISA instruction index to Gen byte offset.
    pub index_map: Vec<MapEntry>,
    /// Variables with their live intervals (vISA index bounds).
    pub variables: Vec<Variable>,
    /// Subroutines of the object.
    pub subroutines: Vec<Subroutine>,
    /// Call frame information.
    pub frame: Frame,
}

/// One mapping table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MapEntry {
    /// Byte offset of the entry.
    pub at: usize,
    /// vISA byte offset or vISA instruction index.
    pub visa: u32,
    /// Gen byte offset (from the object's first instruction).
    pub gen: u32,
}

/// A variable and its live intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Variable {
    /// Byte offset of the variable (its name length field).
    pub at: usize,
    /// Its vISA name (`V33`, `P1`, ...).
    pub name: String,
    /// Live intervals in vISA indices.
    pub intervals: Vec<Interval>,
}

/// Which register file a type code names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegFile {
    /// Code 0: address register (a0).
    Address,
    /// Code 1: flag register (f0, f1, ...).
    Flag,
    /// Code 2: general register file (r0 ..).
    Grf,
}

impl RegFile {
    /// The register file of a type code 0..=2.
    pub fn from_code(code: u8) -> Option<RegFile> {
        match code {
            0 => Some(RegFile::Address),
            1 => Some(RegFile::Flag),
            2 => Some(RegFile::Grf),
            _ => None,
        }
    }
}

/// Where a variable lives during an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Location {
    /// A register: number and sub-register in bytes.
    Register {
        /// Register file.
        file: RegFile,
        /// Register number.
        reg: u16,
        /// Sub-register, in bytes.
        sub: u16,
    },
    /// Memory: off BE_FP, or absolute in scratch space.
    Memory {
        /// Absolute offset in scratch space (else relative to BE_FP).
        absolute: bool,
        /// Signed offset in bytes (the layout's reading of `raw`).
        offset: i32,
        /// The 32-bit word as stored.
        raw: u32,
    },
}

/// A live interval with its location.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Interval {
    /// Byte offset of the interval.
    pub at: usize,
    /// First vISA index or Gen offset where the variable is live.
    pub start: u32,
    /// vISA index or Gen offset where it no longer is.
    pub end: u32,
    /// Virtual type code (0 address, 1 flag, 2 general).
    pub virtual_type: u8,
    /// Physical type code (0 address, 1 flag, 2 general, 3 memory).
    pub physical_type: u8,
    /// The location the physical type selects.
    pub location: Location,
}

/// A subroutine of an object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subroutine {
    /// Byte offset of the subroutine (its name length field).
    pub at: usize,
    /// Its name.
    pub name: String,
    /// Index of its first vISA instruction.
    pub start: u32,
    /// Index of its last vISA instruction.
    pub end: u32,
    /// Whether `retval`'s bounds are vISA indices (else Gen offsets).
    pub retval_visa: bool,
    /// Live intervals of the variable holding the return address.
    pub retval: Vec<Interval>,
}

/// Call frame information of an object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    /// Byte offset of the frame information.
    pub at: usize,
    /// Bytes of the frame.
    pub size: u16,
    /// BE_FP's live intervals (Gen offsets), when valid.
    pub befp: Option<Vec<Interval>>,
    /// Where the caller's BE_FP is, when valid.
    pub caller_befp: Option<Vec<Interval>>,
    /// Where the return address is, when valid.
    pub ret_addr: Option<Vec<Interval>>,
    /// Byte offset of the retAddrValid flag.
    pub ret_addr_flag_at: usize,
    /// `igc-current` only: the "CE" save slot (offset from BE_FP, 0xffff
    /// when not saved) and the IP it is saved from.
    pub ce: Option<(u16, u16)>,
    /// Callee-save entries per Gen IP.
    pub callee_save: Vec<SaveAtIp>,
    /// Caller-save entries per Gen IP.
    pub caller_save: Vec<SaveAtIp>,
}

/// The registers saved at one Gen IP.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SaveAtIp {
    /// Byte offset of the entry.
    pub at: usize,
    /// The Gen IP (byte offset) of the saves.
    pub gen_ip: u32,
    /// The saves.
    pub entries: Vec<RegSave>,
}

/// One saved range of general registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RegSave {
    /// Byte offset of the entry.
    pub at: usize,
    /// First byte saved, counted from r0.0 (GRF width times the register).
    pub src_reg_off: u16,
    /// Bytes saved.
    pub num_bytes: u16,
    /// Where they are.
    pub dst: SaveDst,
}

/// Where saved registers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum SaveDst {
    /// In a general register.
    Register {
        /// Register number.
        reg: u16,
        /// Sub-register in bytes.
        sub: u16,
    },
    /// In memory (same word as an interval's memory location).
    Memory {
        /// Absolute in scratch space (else off BE_FP).
        absolute: bool,
        /// Signed byte offset.
        offset: i32,
        /// The word as stored.
        raw: u32,
    },
}

/// Counts of what a blob holds (the `visa` command's summary line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// Compiled objects.
    pub objects: usize,
    /// Variables over all objects.
    pub variables: usize,
    /// Variable live intervals over all objects.
    pub intervals: usize,
    /// Subroutines.
    pub subroutines: usize,
    /// Call frame information entries: valid BE_FP / caller BE_FP / return
    /// address interval lists, plus callee- and caller-save IP entries.
    pub cfi_entries: usize,
}

impl Blob {
    /// The blob's counts.
    pub fn counts(&self) -> Counts {
        let mut c = Counts { objects: self.objects.len(), ..Counts::default() };
        for o in &self.objects {
            c.variables += o.variables.len();
            c.intervals += o.variables.iter().map(|v| v.intervals.len()).sum::<usize>();
            c.subroutines += o.subroutines.len();
            let f = &o.frame;
            c.cfi_entries += [&f.befp, &f.caller_befp, &f.ret_addr].iter().filter(|x| x.is_some()).count()
                + f.callee_save.len()
                + f.caller_save.len();
        }
        c
    }
}
