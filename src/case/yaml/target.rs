//! Case-file target descriptions: a preset name or a friendly inline
//! mapping (docs/architecture.md §6), turned into a validated [`Target`].
//!
//! ```yaml
//! target: x86_64                # a preset name, or:
//! target:
//!   name: toy-gpu
//!   base: amdgpu-gfx90a         # optional: start from a preset, then override
//!   arch: other                 # x86_64 | aarch64 | amdgpu | other (default other)
//!   endian: little              # little | big (default little)
//!   address_size: 8             # bytes of a default-address-space address, or:
//!   address_spaces:
//!     - { number: 0, name: global, address_bits: 64 }
//!     - { number: 3, name: local, address_size: 4, per_thread: true }
//!   registers:
//!     - { number: 16, name: pc, bits: 64 }
//!     - { numbers: [32, 95], name: "s{i}", bits: 32 }   # {i} counts from `first` (default 0), {n} is the number
//!   lanes: 64                   # default 1
//!   vendor: hetero-2020         # a vendor profile name (default gnu)
//!   return_address_register: pc # a number or a register name
//! ```

use dwarfcheck_core::encoding::VendorProfile;
use dwarfcheck_core::target::{presets, AddressSpace, Arch, Endian, Register, Target, TargetError};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// Upper bound on the number of registers one range may create, so that a
/// typo cannot allocate without bound.
pub const MAX_RANGE_REGISTERS: u64 = 65_536;

/// The `target:` key of a case file: a preset name or an inline mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum TargetRef {
    /// A preset name accepted by [`presets::by_name`].
    Preset(String),
    /// An inline description.
    Inline(Box<TargetSpec>),
}

impl<'de> Deserialize<'de> for TargetRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TargetRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a preset name ({}) or a target mapping", presets::NAMES.join(", "))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TargetRef, E> {
                Ok(TargetRef::Preset(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<TargetRef, A::Error> {
                TargetSpec::deserialize(de::value::MapAccessDeserializer::new(m))
                    .map(|s| TargetRef::Inline(Box::new(s)))
            }
        }
        d.deserialize_any(V)
    }
}

/// Why a case file's `target:` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetSpecError {
    /// A preset name that is not a preset.
    #[error("unknown target preset `{0}`; expected one of {names} or an inline mapping", names = presets::NAMES.join(", "))]
    UnknownPreset(String),
    /// An error inside the inline target mapping named `target`.
    #[error("target `{target}`: {source}")]
    Inline {
        /// The mapping's `name`.
        target: String,
        /// What is wrong with it.
        source: InlineTargetError,
    },
}

/// What is wrong inside an inline target mapping.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InlineTargetError {
    /// `base:` names no preset.
    #[error("unknown base preset `{0}`; expected one of {names}", names = presets::NAMES.join(", "))]
    UnknownBase(String),
    /// `vendor:` names no vendor profile.
    #[error("unknown vendor profile `{0}`; expected one of {names}", names = VendorProfile::NAMES.join(", "))]
    UnknownVendor(String),
    /// Both `address_size` and `address_spaces`.
    #[error("give `address_size` or `address_spaces`, not both")]
    SizeAndSpaces,
    /// An address space with neither or both of its size keys.
    #[error("address space {0}: expected exactly one of `address_bits` or `address_size` (bytes)")]
    AddressSpaceSize(u64),
    /// A register range whose first number is above its last.
    #[error("register range [{0}, {1}]: expected first <= last")]
    RangeOrder(u64, u64),
    /// A register range of more than [`MAX_RANGE_REGISTERS`] registers.
    #[error("register range [{0}, {1}]: expected at most {MAX_RANGE_REGISTERS} registers")]
    RangeSize(u64, u64),
    /// A register range whose name has no `{{i}}` or `{{n}}`.
    #[error("register range [{lo}, {hi}]: expected a name template containing {{i}} or {{n}}, found `{name}`")]
    RangeName {
        /// First number.
        lo: u64,
        /// Last number.
        hi: u64,
        /// The name given.
        name: String,
    },
    /// A register with neither or both of `number` and `numbers`.
    #[error("register `{0}`: expected exactly one of `number` or `numbers: [first, last]`")]
    RegisterShape(String),
    /// One register number given twice in the mapping.
    #[error("register number {0} is listed twice")]
    RegisterTwice(u64),
    /// A return address register name that is not a register.
    #[error("return_address_register `{0}` is not one of the target's registers")]
    ReturnAddress(String),
    /// The resulting target fails [`Target::validate`].
    #[error(transparent)]
    Invalid(#[from] TargetError),
}

impl TargetRef {
    /// The validated target.
    ///
    /// Errors: [`TargetSpecError::UnknownPreset`] (its message lists the
    /// known ones), or any error of [`TargetSpec::build`].
    pub fn resolve(&self) -> Result<Target, TargetSpecError> {
        match self {
            TargetRef::Preset(name) => {
                presets::by_name(name).ok_or_else(|| TargetSpecError::UnknownPreset(name.clone()))
            }
            TargetRef::Inline(spec) => spec.build(),
        }
    }
}

/// An inline target mapping (see the module documentation).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// Target name used in reports.
    pub name: String,
    /// A preset to start from; the other keys override or extend it.
    #[serde(default)]
    pub base: Option<String>,
    /// Architecture family (default `other`, or the base's).
    #[serde(default)]
    pub arch: Option<Arch>,
    /// Byte order (default little, or the base's).
    #[serde(default)]
    pub endian: Option<Endian>,
    /// Size in **bytes** of an address in address space 0; shorthand for a
    /// single flat address space. Not together with `address_spaces`.
    #[serde(default)]
    pub address_size: Option<u8>,
    /// All address spaces (must include number 0).
    #[serde(default)]
    pub address_spaces: Option<Vec<AddressSpaceSpec>>,
    /// Registers; with `base`, an entry replaces the base register with the
    /// same number.
    #[serde(default)]
    pub registers: Vec<RegisterSpec>,
    /// Lanes per thread (default 1, or the base's).
    #[serde(default)]
    pub lanes: Option<u32>,
    /// Vendor profile name (default `gnu`, or the base's).
    #[serde(default)]
    pub vendor: Option<String>,
    /// Return address column: a register number or name (default: the
    /// base's, else 0).
    #[serde(default)]
    pub return_address_register: Option<NumberOrName>,
}

/// A register number or a register name.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged, expecting = "a register number or a register name")]
pub enum NumberOrName {
    /// A DWARF register number.
    Number(u64),
    /// A register name of the target.
    Name(String),
}

/// One address space entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddressSpaceSpec {
    /// DWARF address space identifier.
    pub number: u64,
    /// Name (default `aspace<number>`).
    #[serde(default)]
    pub name: Option<String>,
    /// Address size in **bits**; give this or `address_size`.
    #[serde(default)]
    pub address_bits: Option<u32>,
    /// Address size in **bytes**; give this or `address_bits`.
    #[serde(default)]
    pub address_size: Option<u32>,
    /// Whether each thread has its own storage.
    #[serde(default)]
    pub per_thread: bool,
    /// Whether each lane has its own storage.
    #[serde(default)]
    pub per_lane: bool,
}

/// One register, or a run of registers with consecutive numbers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegisterSpec {
    /// A single register's DWARF number; give this or `numbers`.
    #[serde(default)]
    pub number: Option<u64>,
    /// An inclusive range `[first, last]` of DWARF numbers.
    #[serde(default)]
    pub numbers: Option<[u64; 2]>,
    /// The name; for a range a template where `{i}` is `first` plus the
    /// position in the range and `{n}` the DWARF number.
    pub name: String,
    /// Size in **bits** (a positive multiple of 8).
    pub bits: u32,
    /// Start value of `{i}` (default 0).
    #[serde(default)]
    pub first: u64,
}

impl TargetSpec {
    /// Builds and validates the target.
    ///
    /// Errors (each says what was expected): an unknown `base` or `vendor`,
    /// both or neither of `number`/`numbers` in a register entry, a reversed
    /// or oversized range, a range name without `{i}`/`{n}`, both
    /// `address_size` and `address_spaces`, an address space without a
    /// size, an unknown return address register name, and every check of
    /// [`Target::validate`] (duplicate numbers, sizes, address space 0,
    /// lanes).
    pub fn build(&self) -> Result<Target, TargetSpecError> {
        self.build_inline().map_err(|source| TargetSpecError::Inline { target: self.name.clone(), source })
    }

    fn build_inline(&self) -> Result<Target, InlineTargetError> {
        let mut t = match &self.base {
            Some(b) => presets::by_name(b).ok_or_else(|| InlineTargetError::UnknownBase(b.clone()))?,
            None => Target {
                name: String::new(),
                arch: Arch::Other,
                endian: Endian::Little,
                registers: vec![],
                address_spaces: vec![flat(8 * 8)],
                lanes: 1,
                vendor: VendorProfile::gnu(),
                return_address_register: 0,
            },
        };
        t.name = self.name.clone();
        if let Some(a) = self.arch {
            t.arch = a;
        }
        if let Some(e) = self.endian {
            t.endian = e;
        }
        if let Some(l) = self.lanes {
            t.lanes = l;
        }
        if let Some(v) = &self.vendor {
            t.vendor = VendorProfile::by_name(v).ok_or_else(|| InlineTargetError::UnknownVendor(v.clone()))?;
        }
        match (self.address_size, &self.address_spaces) {
            (Some(_), Some(_)) => return Err(InlineTargetError::SizeAndSpaces),
            (Some(bytes), None) => t.address_spaces = vec![flat(u32::from(bytes) * 8)],
            (None, Some(list)) => {
                t.address_spaces = list.iter().map(|a| a.build()).collect::<Result<_, _>>()?;
            }
            (None, None) => {}
        }
        let mut listed = std::collections::BTreeSet::new();
        for r in &self.registers {
            for reg in r.build()? {
                if !listed.insert(reg.number) {
                    return Err(InlineTargetError::RegisterTwice(reg.number));
                }
                t.registers.retain(|x| x.number != reg.number);
                t.registers.push(reg);
            }
        }
        t.registers.sort_by_key(|r| r.number);
        if let Some(ra) = &self.return_address_register {
            t.return_address_register = match ra {
                NumberOrName::Number(n) => *n,
                NumberOrName::Name(n) => t
                    .register_by_name(n)
                    .map(|r| r.number)
                    .ok_or_else(|| InlineTargetError::ReturnAddress(n.clone()))?,
            };
        }
        Ok(t.validate()?)
    }
}

fn flat(bits: u32) -> AddressSpace {
    AddressSpace { number: 0, name: "memory".into(), address_bits: bits, per_thread: false, per_lane: false }
}

impl AddressSpaceSpec {
    fn build(&self) -> Result<AddressSpace, InlineTargetError> {
        let bits = match (self.address_bits, self.address_size) {
            (Some(b), None) => b,
            (None, Some(s)) => s.saturating_mul(8),
            _ => return Err(InlineTargetError::AddressSpaceSize(self.number)),
        };
        Ok(AddressSpace {
            number: self.number,
            name: self.name.clone().unwrap_or_else(|| format!("aspace{}", self.number)),
            address_bits: bits,
            per_thread: self.per_thread,
            per_lane: self.per_lane,
        })
    }
}

impl RegisterSpec {
    fn build(&self) -> Result<Vec<Register>, InlineTargetError> {
        match (self.number, self.numbers) {
            (Some(n), None) => Ok(vec![Register { number: n, name: self.name.clone(), bits: self.bits }]),
            (None, Some([lo, hi])) => {
                if lo > hi {
                    return Err(InlineTargetError::RangeOrder(lo, hi));
                }
                if hi - lo >= MAX_RANGE_REGISTERS {
                    return Err(InlineTargetError::RangeSize(lo, hi));
                }
                if !self.name.contains("{i}") && !self.name.contains("{n}") {
                    return Err(InlineTargetError::RangeName { lo, hi, name: self.name.clone() });
                }
                Ok((lo..=hi)
                    .map(|n| Register {
                        number: n,
                        name: self
                            .name
                            .replace("{i}", &(self.first.saturating_add(n - lo)).to_string())
                            .replace("{n}", &n.to_string()),
                        bits: self.bits,
                    })
                    .collect())
            }
            _ => Err(InlineTargetError::RegisterShape(self.name.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Target, String> {
        #[derive(Deserialize)]
        struct File {
            target: TargetRef,
        }
        let f: File = yaml_serde::from_str(text).map_err(|e| e.to_string())?;
        f.target.resolve().map_err(|e| e.to_string())
    }

    #[test]
    fn preset_by_name() {
        assert_eq!(parse("target: x86_64").unwrap(), presets::x86_64());
        let e = parse("target: z80").unwrap_err();
        assert!(e.contains("x86_64, aarch64, amdgpu-gfx90a"), "{e}");
    }

    #[test]
    fn inline_mapping_with_ranges_and_spaces() {
        let t = parse(
            "target:
  name: toy
  arch: amdgpu
  endian: big
  address_spaces:
    - { number: 0, name: global, address_bits: 64 }
    - { number: 3, address_size: 4, per_thread: true }
  registers:
    - { number: 16, name: pc, bits: 64 }
    - { numbers: [32, 35], name: \"s{i}\", bits: 32 }
    - { numbers: [40, 41], name: \"v{i}\", first: 8, bits: 2048 }
  lanes: 64
  vendor: hetero-2020
  return_address_register: pc",
        )
        .unwrap();
        assert_eq!(t.arch, Arch::Amdgpu);
        assert_eq!(t.endian, Endian::Big);
        assert_eq!(t.register_by_name("s3").map(|r| (r.number, r.bits)), Some((35, 32)));
        assert_eq!(t.register_by_name("v9").map(|r| r.number), Some(41));
        assert_eq!(t.address_space(3).map(|a| (a.address_bits, a.name.as_str())), Some((32, "aspace3")));
        assert_eq!((t.lanes, t.return_address_register, t.vendor.name.as_str()), (64, 16, "hetero-2020"));
    }

    #[test]
    fn defaults_and_base() {
        let t =
            parse("target: { name: tiny, address_size: 4, registers: [ { number: 0, name: r0, bits: 32 } ] }").unwrap();
        assert_eq!((t.generic_bits(), t.lanes, t.arch, t.vendor.name.as_str()), (32, 1, Arch::Other, "gnu"));
        let t = parse("target: { name: x, base: x86_64, registers: [ { number: 7, name: sp, bits: 32 } ] }").unwrap();
        assert_eq!(t.register(7).map(|r| r.name.as_str()), Some("sp"));
        assert_eq!(t.register(6).map(|r| r.name.as_str()), Some("rbp"));
        assert_eq!(t.return_address_register, 16);
    }

    #[test]
    fn validation_errors_say_what_was_expected() {
        let cases = [
            ("target: { name: a, regs: [] }", "unknown field `regs`"),
            ("target: { name: a, registers: [ { name: r, bits: 8 } ] }", "exactly one of `number` or `numbers"),
            ("target: { name: a, registers: [ { numbers: [5, 1], name: \"r{i}\", bits: 8 } ] }", "first <= last"),
            ("target: { name: a, registers: [ { numbers: [1, 5], name: r, bits: 8 } ] }", "template"),
            ("target: { name: a, registers: [ { numbers: [0, 100000000], name: \"r{i}\", bits: 8 } ] }", "at most"),
            ("target: { name: a, registers: [ { number: 1, name: r, bits: 12 } ] }", "multiple of 8"),
            (
                "target: { name: a, registers: [ { number: 1, name: r, bits: 8 }, { number: 1, name: q, bits: 8 } ] }",
                "twice",
            ),
            ("target: { name: a, address_size: 3 }", "expected 8, 16, 32 or 64"),
            ("target: { name: a, address_size: 8, address_spaces: [] }", "not both"),
            ("target: { name: a, address_spaces: [ { number: 1, address_bits: 32 } ] }", "no address space 0"),
            ("target: { name: a, address_spaces: [ { number: 0 } ] }", "exactly one of `address_bits`"),
            ("target: { name: a, vendor: hp }", "expected one of dwarf5, gnu"),
            ("target: { name: a, lanes: 0 }", "at least one lane"),
            (
                "target: { name: a, registers: [ { number: 1, name: r, bits: 8 }, { number: 2, name: R, bits: 8 } ] }",
                "name",
            ),
            ("target: { name: a, return_address_register: lr }", "`lr` is not one of"),
            ("target: { name: a, base: vax }", "unknown base preset"),
            ("target: 5", "a preset name"),
        ];
        for (text, want) in cases {
            let e = parse(text).expect_err(text);
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
