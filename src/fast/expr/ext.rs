//! The hetero-2020 extension operations on location descriptions:
//! `DW_OP_LLVM_offset`, `_offset_uconst`, `_bit_offset`, `_undefined`,
//! `_piece_end`, `_extend`, `_select_bit_piece`, and the dispatch of the
//! address-space ones (hetero-2020 "General", "Undefined" and "Composite
//! Location Description Operations").

use super::arith::sext;
use super::decode::{Insn, Kind};
use super::exec::{Ev, Fail};
use super::machine::{Ent, Loc, Scratch, Val, NONE};
use crate::encoding::ate;
use crate::outcome::{BudgetKind, TypeEncoding};
use crate::rules::{id as R, RuleId};

type Res<T> = Result<T, Fail>;

/// Rule: a displacement, address space or mask popped by an extension
/// operation is not an integral value.
const REQUIRES_INTEGRAL: RuleId = R::OP_XDEREF_REQUIRES_INTEGRAL;
/// Rule: `DW_OP_LLVM_offset`/`_offset_uconst` moved a location out of its storage.
const OFFSET_OUT: RuleId = R::OP_BIT_PIECE_OFFSET_PAST_STORAGE;
/// Rule: `DW_OP_LLVM_bit_offset` (and the parts of
/// `DW_OP_LLVM_select_bit_piece`) moved a location out of its storage.
const BIT_OFFSET_OUT: RuleId = R::OP_BIT_PIECE_OFFSET_PAST_STORAGE;
/// Rule: `DW_OP_LLVM_piece_end` without an incomplete composite on top.
const PIECE_END_NOT_INCOMPLETE: RuleId = R::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION;
/// Rule: `DW_OP_LLVM_extend` / `_select_bit_piece` with element size or count 0.
const ZERO_SIZE_OR_COUNT: RuleId = R::COMPOSITE_TOO_LARGE;
/// Rule: `DW_OP_LLVM_select_bit_piece` with a mask of fewer than C bits.
const MASK_TOO_SMALL: RuleId = R::COMPOSITE_TOO_LARGE;

impl Ev<'_> {
    /// Executes one extension operation.
    pub(super) fn ext(&self, ins: &Insn, s: &mut Scratch) -> Res<()> {
        match ins.kind {
            Kind::FormAspaceAddress => self.form_aspace_address(s, REQUIRES_INTEGRAL)?,
            Kind::AspaceBregx => {
                self.need(s, 1)?;
                self.aspace_bregx(s, ins.a, ins.b, REQUIRES_INTEGRAL)?
            }
            Kind::PushLane => self.push_lane(s)?,
            Kind::Offset => self.offset(s, None, 8, OFFSET_OUT)?,
            Kind::OffsetUconst => self.offset(s, Some(ins.a), 8, OFFSET_OUT)?,
            Kind::BitOffset => self.offset(s, None, 1, BIT_OFFSET_OUT)?,
            Kind::Undefined => self.push(s, Ent::Loc(Loc::Undef)),
            Kind::PieceEnd => self.piece_end(s)?,
            Kind::Extend => self.extend(s, ins.a, ins.b)?,
            Kind::SelectBitPiece => self.select_bit_piece(s, ins.a, ins.b)?,
            _ => unreachable!("not an extension operation"),
        }
        Ok(())
    }

    /// `DW_OP_LLVM_offset` (`uconst: None`, displacement popped) and
    /// `DW_OP_LLVM_offset_uconst B` (as `DW_OP_constu B; DW_OP_LLVM_offset`),
    /// `DW_OP_LLVM_bit_offset` (`scale` 1): moves every single location of
    /// L by B × `scale` **bits**; out of the storage is the evaluation
    /// error `rule`, undefined locations stay as they are.
    fn offset(&self, s: &mut Scratch, uconst: Option<u64>, scale: i128, rule: RuleId) -> Res<()> {
        let b = match uconst {
            Some(b) => {
                self.need(s, 1)?;
                self.generic(u128::from(b))
            }
            None => {
                self.need(s, 2)?;
                self.pop_integral(s, REQUIRES_INTEGRAL)?
            }
        };
        let l = self.pop_loc(s)?;
        let bits = displacement(s, &b).saturating_mul(scale);
        let moved = self.move_loc(s, l, bits, rule)?;
        self.push(s, Ent::Loc(moved));
        Ok(())
    }

    /// `DW_OP_LLVM_piece_end`: the incomplete composite on top becomes complete.
    fn piece_end(&self, s: &mut Scratch) -> Res<()> {
        self.need(s, 1)?;
        match self.top(s) {
            Some(Ent::Loc(Loc::Comp { idx, .. })) if !s.comps[idx as usize].complete => {
                s.comps[idx as usize].complete = true;
                Ok(())
            }
            _ => Err(Fail::Ill(PIECE_END_NOT_INCOMPLETE)),
        }
    }

    /// Operand checks shared by `DW_OP_LLVM_extend` and
    /// `DW_OP_LLVM_select_bit_piece`: neither S (**bits**) nor C may be 0,
    /// and the S × C bit composite must fit (rules `composite.too-large`,
    /// size budget).
    fn check_elements(&self, size: u64, count: u64) -> Res<()> {
        if size == 0 || count == 0 {
            return Err(Fail::Ill(ZERO_SIZE_OR_COUNT));
        }
        if size > self.ctx.budgets.size_bytes.saturating_mul(8) {
            return Err(Fail::Budget(BudgetKind::Size));
        }
        self.check_comp_size(u128::from(size) * u128::from(count))
    }

    /// `DW_OP_LLVM_extend S C`: a complete composite of C parts of S bits,
    /// each the popped location PL.
    fn extend(&self, s: &mut Scratch, size: u64, count: u64) -> Res<()> {
        self.check_elements(size, count)?;
        let pl = self.pop_loc(s)?;
        self.check_part_fits(s, &pl, size)?;
        let idx = s.new_comp();
        for _ in 0..count {
            s.append_part(idx, size, pl);
        }
        s.comps[idx as usize].complete = true;
        self.push(s, Ent::Loc(Loc::Comp { idx, bit: 0 }));
        Ok(())
    }

    /// `DW_OP_LLVM_select_bit_piece S C`: pops mask M, L1, L0; part N (S
    /// bits) is L1 if bit N of M is set, else L0, moved N × S bits.
    fn select_bit_piece(&self, s: &mut Scratch, size: u64, count: u64) -> Res<()> {
        self.check_elements(size, count)?;
        self.need(s, 3)?;
        let m = self.pop_integral(s, REQUIRES_INTEGRAL)?;
        let l1 = self.pop_loc(s)?;
        let l0 = self.pop_loc(s)?;
        if u64::from(m.ty.bits) < count {
            return Err(Fail::Ill(MASK_TOO_SMALL));
        }
        let idx = s.new_comp();
        for n in 0..count {
            let plx = if mask_bit(s, &m, n) { l1 } else { l0 };
            let pl = self.move_loc(s, plx, i128::from(n) * i128::from(size), BIT_OFFSET_OUT)?;
            self.check_part_fits(s, &pl, size)?;
            s.append_part(idx, size, pl);
        }
        s.comps[idx as usize].complete = true;
        self.push(s, Ent::Loc(Loc::Comp { idx, bit: 0 }));
        Ok(())
    }
}

/// Bit `n` of value `v` (least significant first).
fn mask_bit(s: &Scratch, v: &Val, n: u64) -> bool {
    if v.wide == NONE {
        n < 128 && (v.lo >> n) & 1 == 1
    } else {
        s.bytes[v.wide as usize + (n / 8) as usize] >> (n % 8) & 1 == 1
    }
}

/// The displacement an integral value stands for: signed for the generic
/// type and signed base types, unsigned for the others; values too large
/// for `i128` saturate (they move any sized location out of its storage
/// and leave undefined locations unchanged).
fn displacement(s: &Scratch, v: &Val) -> i128 {
    let signed = match v.ty.encoding {
        TypeEncoding::Generic => true,
        TypeEncoding::Ate(e) => ate::is_signed(e),
    };
    if v.wide == NONE {
        return if signed { sext(v.lo, v.ty.bits) } else { i128::try_from(v.lo).unwrap_or(i128::MAX) };
    }
    let bytes = &s.bytes[v.wide as usize..v.wide as usize + v.ty.bytes()];
    let negative = signed && bytes[bytes.len() - 1] >> ((v.ty.bits - 1) % 8) & 1 == 1;
    let fill = if negative { 0xff } else { 0 };
    let low = s.low128(v) as i128;
    if bytes[16..].iter().enumerate().all(|(i, &b)| {
        // The top byte may have bits above `ty.bits` that are always 0.
        if 16 + i == bytes.len() - 1 && !v.ty.bits.is_multiple_of(8) {
            let used = (1u8 << (v.ty.bits % 8)) - 1;
            b & used == fill & used
        } else {
            b == fill
        }
    }) && (low < 0) == negative
    {
        low
    } else if negative {
        i128::MIN
    } else {
        i128::MAX
    }
}
