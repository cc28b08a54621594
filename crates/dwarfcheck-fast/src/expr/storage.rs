//! Sizes of location storages and positions within them: moving a
//! location description (`DW_OP_LLVM_offset` and its uses), whether a part
//! fits its storage, the size of a composite, implicit storage holding a
//! value (hetero-2020 "DWARF Location Description", "Composite Location
//! Description Operations").

use super::evaluation::{Evaluation, Fail, Result};
use super::machine::{ImplicitPointer, Location, Scratch, Value, NONE};
use dwarfcheck_core::context::Budgets;
use dwarfcheck_core::outcome::BudgetKind;
use dwarfcheck_core::rules::{id as R, RuleId};

impl Evaluation<'_> {
    /// Size in **bits** of the memory storage of address space `aspace`.
    #[inline]
    pub(super) fn memory_storage_bits(&self, aspace: u64) -> u128 {
        let abits = if aspace == 0 {
            self.generic_bits()
        } else {
            self.target.address_space(aspace).map(|a| a.address_bits).unwrap_or(64)
        };
        1u128 << (abits.min(120) + 3)
    }

    /// Size in **bits** of implicit pointer storage: the address size of its space.
    pub(super) fn implicit_pointer_bits(&self, pointer: &ImplicitPointer) -> u64 {
        match pointer.aspace {
            None => u64::from(self.generic_bits()),
            Some(a) => u64::from(self.target.address_space(a).map(|x| x.address_bits).unwrap_or(self.generic_bits())),
        }
    }

    /// Size in **bits** of the storage of a non-composite single location
    /// (`None`: unbounded/undefined).
    pub(super) fn storage_bits(&self, s: &Scratch, l: &Location) -> Option<u128> {
        match *l {
            Location::Undefined | Location::Multi { .. } => None,
            Location::Memory { aspace, .. } => Some(self.memory_storage_bits(aspace)),
            Location::Register { regno, .. } => self.target.register(regno).map(|r| u128::from(r.bits)),
            Location::Implicit { len, .. } => Some(u128::from(len) * 8),
            Location::ImplicitPointer { die, disp, aspace, .. } => {
                Some(u128::from(self.implicit_pointer_bits(&ImplicitPointer { die, disp, aspace })))
            }
            Location::Composite { idx, .. } => Some(u128::from(s.composites[idx as usize].total_bits)),
        }
    }

    /// `l` moved by `bits` bits (as `DW_OP_LLVM_bit_offset`): an evaluation
    /// error `rule` if the new offset is negative or at/after the end of the
    /// storage; undefined stays undefined (rule `loc.undefined.no-size`).
    pub(super) fn move_location(&self, s: &mut Scratch, l: Location, bits: i128, rule: RuleId) -> Result<Location> {
        if let Location::Multi { start, len } = l {
            let first = s.multi.len() as u32;
            for i in start..start + len {
                let m = self.move_location(s, s.multi[i as usize], bits, rule.clone())?;
                s.multi.push(m);
            }
            return Ok(Location::Multi { start: first, len });
        }
        let size = self.storage_bits(s, &l);
        let cur: i128 = match l {
            Location::Undefined => return Ok(l),
            Location::Memory { bit, .. } => bit as i128,
            Location::Register { bit, .. }
            | Location::Implicit { bit, .. }
            | Location::ImplicitPointer { bit, .. }
            | Location::Composite { bit, .. } => i128::from(bit),
            Location::Multi { .. } => 0,
        };
        let nb = cur.checked_add(bits).ok_or(Fail::EvalError(rule.clone()))?;
        // (A register the target does not define has no known size, but its
        // bit offset still cannot leave 0..2^64.)
        let limit = if matches!(l, Location::Memory { .. }) { i128::MAX } else { i128::from(u64::MAX) };
        if nb < 0 || nb > limit || size.is_some_and(|sz| nb as u128 >= sz) {
            return Err(Fail::EvalError(rule));
        }
        Ok(match l {
            Location::Memory { aspace, thread, lane, .. } => Location::Memory { aspace, bit: nb as u128, thread, lane },
            Location::Register { regno, .. } => Location::Register { regno, bit: nb as u64 },
            Location::Implicit { start, len, .. } => Location::Implicit { start, len, bit: nb as u64 },
            Location::ImplicitPointer { die, disp, aspace, .. } => {
                Location::ImplicitPointer { die, disp, aspace, bit: nb as u64 }
            }
            Location::Composite { idx, .. } => Location::Composite { idx, bit: nb as u64 },
            other => other,
        })
    }

    /// Every bit of a part must lie within each place's storage (rule
    /// `composite.part-exceeds-storage`).
    pub(super) fn check_part_fits(&self, s: &Scratch, l: &Location, bits: u64) -> Result<()> {
        let fits = match *l {
            Location::Undefined => true,
            Location::Multi { start, len } => {
                for i in start..start + len {
                    self.check_part_fits(s, &s.multi[i as usize], bits)?;
                }
                true
            }
            Location::Memory { aspace, bit, .. } => bit + u128::from(bits) <= self.memory_storage_bits(aspace),
            // A register the target does not define has no known size.
            Location::Register { regno, bit } => {
                self.target.register(regno).is_none_or(|r| u128::from(bit) + u128::from(bits) <= u128::from(r.bits))
            }
            Location::Implicit { bit, .. }
            | Location::ImplicitPointer { bit, .. }
            | Location::Composite { bit, .. } => {
                self.storage_bits(s, l).is_none_or(|size| u128::from(bit) + u128::from(bits) <= size)
            }
        };
        if fits {
            Ok(())
        } else {
            Err(Fail::IllFormed(R::COMPOSITE_PART_EXCEEDS_STORAGE))
        }
    }

    /// Appends a part, checking the composite's total size against the
    /// largest address space (rule `composite.too-large`) and the size budget.
    pub(super) fn add_part(
        &self,
        s: &mut Scratch,
        idx: u32,
        bits: u64,
        location: Location,
        weight: u128,
    ) -> Result<()> {
        let total = s.composites[idx as usize].total_bits.saturating_add(bits);
        self.check_composite_size(u128::from(total))?;
        self.charge_memory(s, weight.saturating_mul(u128::from(Budgets::PART_MEMORY_BYTES)))?;
        s.append_part(idx, bits, location);
        Ok(())
    }

    /// A composite of `total` **bits** must fit the memory storage of the
    /// target's largest address space (rule `composite.too-large`, checked
    /// first) and the size budget.
    pub(super) fn check_composite_size(&self, total: u128) -> Result<()> {
        let max_abits = self.target.address_spaces.iter().map(|a| a.address_bits).max().unwrap_or(64);
        if total > 1u128 << (max_abits.min(120) + 3) {
            return Err(Fail::IllFormed(R::COMPOSITE_TOO_LARGE));
        }
        if total > u128::from(self.budgets.size_bytes.saturating_mul(8)) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        Ok(())
    }

    /// Implicit storage holding `v` in target memory order (as
    /// `DW_OP_stack_value` makes it).
    pub(super) fn implicit_of(&self, s: &mut Scratch, v: &Value) -> Location {
        let n = v.ty.bytes();
        let start = s.bytes.len();
        // Written in place: a value of at most 16 bytes straight from its
        // low 128 bits, a wider one through the temporary buffer.
        if v.wide == NONE && n <= 16 {
            s.bytes.extend_from_slice(&v.lo.to_le_bytes()[..n]);
        } else {
            let mut tmp = std::mem::take(&mut s.tmp);
            s.value_bytes(v, &mut tmp);
            s.bytes.extend_from_slice(&tmp);
            s.tmp = tmp;
        }
        if v.ty.big_endian {
            s.bytes[start..].reverse();
        }
        Location::Implicit { start: start as u32, len: n as u32, bit: 0 }
    }
}
