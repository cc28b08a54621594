//! The hetero-2020 extension operations on location descriptions:
//! `DW_OP_LLVM_offset`, `_offset_uconst`, `_bit_offset`, `_undefined`,
//! `_piece_end`, `_extend`, `_select_bit_piece`, and the address-space
//! ones: `DW_OP_LLVM_form_aspace_address`, `_aspace_bregx`, `_push_lane`
//! (hetero-2020 "General", "Undefined", "Memory" and "Composite Location
//! Description Operations", "Literal Operations").

use super::arith::sext;
use super::decode::{Insn, Kind};
use super::evaluation::{Evaluation, Fail, Result};
use super::machine::{mask, Entry, Location, Scratch, Value, NONE};
use dwarfcheck_core::context::Budgets;
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, TypeEncoding};
use dwarfcheck_core::rules::{id as R, RuleId};

impl Evaluation<'_> {
    /// Executes one extension operation.
    pub(super) fn ext(&self, ins: &Insn, s: &mut Scratch) -> Result<()> {
        match ins.kind {
            Kind::FormAspaceAddress => self.form_aspace_address(s)?,
            Kind::AspaceBregx => self.aspace_bregx(s, ins.a, ins.b)?,
            Kind::PushLane => self.push_lane(s)?,
            Kind::Offset => self.offset(s, None, 8)?,
            Kind::OffsetUconst => self.offset(s, Some(ins.a), 8)?,
            Kind::BitOffset => self.offset(s, None, 1)?,
            Kind::Undefined => self.push(s, Entry::Location(Location::Undefined)),
            Kind::PieceEnd => self.piece_end(s)?,
            Kind::Extend => self.extend(s, ins.a, ins.b)?,
            Kind::SelectBitPiece => self.select_bit_piece(s, ins.a, ins.b)?,
            // (Only the kinds above are dispatched here.)
            _ => return Err(Fail::Unsupported(dwarfcheck_core::encoding::op::name_of(ins.op))),
        }
        Ok(())
    }

    /// `DW_OP_LLVM_offset` (`uconst: None`, displacement popped; rules
    /// `op.offset.*`), `DW_OP_LLVM_offset_uconst B` (as `DW_OP_constu B;
    /// DW_OP_LLVM_offset`, rule `op.offset-uconst.same-as-offset`) and
    /// `DW_OP_LLVM_bit_offset` (`scale` 1; rules `op.bit-offset.*`): moves
    /// every single location of L by B × `scale` **bits**
    /// (`loc.offset.multiple-places`); undefined locations stay as they are.
    fn offset(&self, s: &mut Scratch, uconst: Option<u64>, scale: i128) -> Result<()> {
        let (integral, out) = if scale == 1 {
            (R::OP_BIT_OFFSET_REQUIRES_INTEGRAL, R::OP_BIT_OFFSET_OUT_OF_STORAGE)
        } else {
            (R::OP_OFFSET_REQUIRES_INTEGRAL, R::OP_OFFSET_OUT_OF_STORAGE)
        };
        let b = match uconst {
            Some(b) => {
                self.need(s, 1)?;
                self.generic(u128::from(b))
            }
            None => {
                self.need(s, 2)?;
                self.pop_integral(s, integral)?
            }
        };
        let l = self.pop_location(s)?;
        let bits = displacement(&b)?.saturating_mul(scale);
        let moved = self.move_location(s, l, bits, out)?;
        self.push(s, Entry::Location(moved));
        Ok(())
    }

    /// `DW_OP_LLVM_piece_end`: the incomplete composite on top becomes complete.
    fn piece_end(&self, s: &mut Scratch) -> Result<()> {
        self.need(s, 1)?;
        match self.top(s) {
            Some(Entry::Location(Location::Composite { idx, .. })) if !s.composites[idx as usize].complete => {
                s.composites[idx as usize].complete = true;
                Ok(())
            }
            _ => Err(Fail::IllFormed(R::OP_PIECE_END_NOT_INCOMPLETE)),
        }
    }

    /// Operand checks shared by `DW_OP_LLVM_extend` and
    /// `DW_OP_LLVM_select_bit_piece` (rule `op.extend.size-limits`): S
    /// (**bits**) or C zero is the ill-formed `zero`, then the S × C bit
    /// composite must fit (`composite.too-large`, then the size budget),
    /// then C parts at 8 bytes each must fit the size budget.
    fn check_elements(&self, size: u64, count: u64, zero: RuleId) -> Result<()> {
        if size == 0 || count == 0 {
            return Err(Fail::IllFormed(zero));
        }
        self.check_composite_size(u128::from(size) * u128::from(count))?;
        // Every part is charged 8 bytes, so memory stays bounded for 1-bit elements.
        if u128::from(count) * u128::from(Budgets::PART_BYTES) > u128::from(self.budgets.size_bytes) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        Ok(())
    }

    /// Parts of total weight `weight` are charged
    /// [`Budgets::PART_BYTES`] of the size budget each (rule
    /// `op.extend.size-limits`).
    fn charge(&self, weight: u128) -> Result<()> {
        if weight.saturating_mul(u128::from(Budgets::PART_BYTES)) > u128::from(self.budgets.size_bytes) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        Ok(())
    }

    /// `DW_OP_LLVM_extend S C`: a complete composite of C parts of S bits,
    /// each the popped location PL.
    fn extend(&self, s: &mut Scratch, size: u64, count: u64) -> Result<()> {
        self.check_elements(size, count, R::OP_EXTEND_ZERO)?;
        let part = self.pop_location(s)?;
        self.check_part_fits(s, &part, size)?;
        // One walk of the part's bits (expr.budget.work): the C parts share
        // one part location.
        self.charge_walk(s, &part, size)?;
        let w = s.part_weight(&part, size);
        self.charge(w.saturating_mul(u128::from(count)))?;
        self.charge_memory(
            s,
            w.saturating_mul(u128::from(count)).saturating_mul(u128::from(Budgets::PART_MEMORY_BYTES)),
        )?;
        // (Flattened once if it nests too deep, then shared by the C parts.)
        let part = s.shallow(part, size);
        let idx = s.new_composite();
        for _ in 0..count {
            s.append_part(idx, size, part);
        }
        s.composites[idx as usize].complete = true;
        self.push(s, Entry::Location(Location::Composite { idx, bit: 0 }));
        Ok(())
    }

    /// `DW_OP_LLVM_select_bit_piece S C`: pops mask M, L1, L0; part N (S
    /// bits) is L1 if bit N of M is set, else L0, moved N × S bits.
    fn select_bit_piece(&self, s: &mut Scratch, size: u64, count: u64) -> Result<()> {
        self.check_elements(size, count, R::OP_SELECT_BIT_PIECE_ZERO)?;
        self.need(s, 3)?;
        let m = self.pop_integral(s, R::OP_SELECT_BIT_PIECE_REQUIRES_INTEGRAL)?;
        let l1 = self.pop_location(s)?;
        let l0 = self.pop_location(s)?;
        if u64::from(m.ty.bits) < count {
            return Err(Fail::IllFormed(R::OP_SELECT_BIT_PIECE_MASK_TOO_SMALL));
        }
        let mut weight = 0u128;
        let idx = s.new_composite();
        for n in 0..count {
            let one = mask_bit(s, &m, n);
            let selected = if one { l1 } else { l0 };
            let part =
                self.move_location(s, selected, i128::from(n) * i128::from(size), R::OP_BIT_OFFSET_OUT_OF_STORAGE)?;
            self.check_part_fits(s, &part, size)?;
            self.charge_walk(s, &part, size)?;
            weight += s.part_weight(&part, size);
            self.charge(weight)?;
            s.append_part(idx, size, part);
        }
        self.charge_memory(s, weight.saturating_mul(u128::from(Budgets::PART_MEMORY_BYTES)))?;
        s.composites[idx as usize].complete = true;
        self.push(s, Entry::Location(Location::Composite { idx, bit: 0 }));
        Ok(())
    }

    /// `DW_OP_LLVM_form_aspace_address`: pops AS (top) and A, both
    /// integral, and pushes the memory location of A in AS (rules
    /// `op.form-aspace-address.*`).
    /// An implicit pointer value as A is turned back into its DIE's location
    /// when AS is its own address space, and is misused otherwise (rule
    /// `op.form-aspace-address.implicit-pointer-value`).
    pub(super) fn form_aspace_address(&self, s: &mut Scratch) -> Result<()> {
        self.need(s, 2)?;
        let asp = self.pop_integral(s, R::OP_FORM_ASPACE_ADDRESS_REQUIRES_INTEGRAL)?;
        if let Some(&Entry::ImplicitPointer(p)) = s.stack.last() {
            s.stack.pop();
            let (id, _) = self.known_aspace(s, &asp, R::OP_FORM_ASPACE_ADDRESS_UNKNOWN_ADDRESS_SPACE)?;
            if p.aspace.unwrap_or(0) != id {
                return Err(Fail::EvalError(R::OP_IMPLICIT_POINTER_VALUE_MISUSE));
            }
            let l = self.implicit_pointer_target(s, p)?;
            self.push(s, Entry::Location(l));
            return Ok(());
        }
        let a = self.pop_integral(s, R::OP_FORM_ASPACE_ADDRESS_REQUIRES_INTEGRAL)?;
        let l = self.aspace_address(s, &asp, &a, R::OP_FORM_ASPACE_ADDRESS_UNKNOWN_ADDRESS_SPACE)?;
        self.push(s, Entry::Location(l));
        Ok(())
    }

    /// `DW_OP_LLVM_aspace_bregx R B`: pops an integral AS; reads register
    /// `regno` as an unsigned integer of AS's address size S **bits**, adds
    /// the byte displacement `disp` (as the vendor profile decoded it,
    /// modulo 2^S) and pushes the memory location of that address in AS
    /// (rules `op.aspace-bregx.*`).
    pub(super) fn aspace_bregx(&self, s: &mut Scratch, regno: u64, disp: u64) -> Result<()> {
        self.need(s, 1)?;
        let asp = self.pop_integral(s, R::OP_ASPACE_BREGX_REQUIRES_INTEGRAL)?;
        let (id, bits) = self.known_aspace(s, &asp, R::OP_ASPACE_BREGX_UNKNOWN_ADDRESS_SPACE)?;
        let t = BaseType::ate(ate::UNSIGNED, bits, self.generic_type.big_endian);
        let r = match self.deref(s, &Location::Register { regno, bit: 0 }, t)? {
            Entry::Value(v) => v.lo,
            _ => 0,
        };
        let addr = mask(r.wrapping_add(disp as i64 as i128 as u128), bits);
        let l = self.bound_memory(id, addr)?;
        self.push(s, Entry::Location(l));
        Ok(())
    }

    /// `DW_OP_LLVM_push_lane`: the current lane as a generic value (rule
    /// `op.push-lane.pushes-generic`).
    pub(super) fn push_lane(&self, s: &mut Scratch) -> Result<()> {
        let lane = self.current_lane()?;
        let v = self.generic(u128::from(lane));
        self.push(s, Entry::Value(v));
        Ok(())
    }
}

/// Bit `n` of value `v` (least significant first).
fn mask_bit(s: &Scratch, v: &Value, n: u64) -> bool {
    if v.wide == NONE {
        n < 128 && (v.lo >> n) & 1 == 1
    } else {
        s.bytes[v.wide as usize + (n / 8) as usize] >> (n % 8) & 1 == 1
    }
}

/// The displacement an integral value stands for (rule
/// `op.offset.displacement-signed`): signed for the generic type and signed
/// base types, unsigned for the others. Values wider than 128 bits are not
/// computed (`Unsupported`, as for arithmetic).
fn displacement(v: &Value) -> Result<i128> {
    if v.wide != NONE {
        return Err(Fail::Unsupported("a displacement wider than 128 bits".into()));
    }
    let signed = match v.ty.encoding {
        TypeEncoding::Generic => true,
        TypeEncoding::Ate(e) => ate::is_signed(e),
    };
    // An unsigned 128-bit value above i128::MAX moves any sized location
    // out of its storage, as its exact value would.
    Ok(if signed { sext(v.lo, v.ty.bits) } else { i128::try_from(v.lo).unwrap_or(i128::MAX) })
}
