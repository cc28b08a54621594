//! Reading bits from location descriptions: `DW_OP_deref*`,
//! `DW_OP_regval_type`, register contents for `DW_OP_breg*` (hetero-2020
//! "Special Value Operations", rules `op.deref*`, `op.implicit-pointer.*`).

use super::evaluation::{Evaluation, Fail, Result};
use super::machine::{Entry, ImplicitPointer, Location, Scratch, Value, NONE};
use dwarfcheck_core::context::{ContextError, MemoryStorage};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::BaseType;
use dwarfcheck_core::rules::id as R;

/// Tracks reads of implicit pointer storage during one `DW_OP_deref*`
/// (rules `op.implicit-pointer.deref-whole`, `op.implicit-pointer.partial-read`).
#[derive(Default)]
struct ImplicitPointerTrack {
    pointer: Option<ImplicitPointer>,
    consistent: bool,
    other: bool,
}

impl Evaluation<'_> {
    /// A value of `t` from bytes in the type's memory byte order.
    pub(super) fn value_from_memory_order(&self, s: &mut Scratch, t: BaseType, b: &[u8]) -> Value {
        let n = t.bytes();
        if n <= 16 {
            let mut le = [0u8; 16];
            le[..n].copy_from_slice(&b[..n]);
            if t.big_endian {
                le[..n].reverse();
            }
            s.make_value(t, &le)
        } else {
            let mut le = b[..n].to_vec();
            if t.big_endian {
                le.reverse();
            }
            s.make_value(t, &le)
        }
    }

    /// `DW_OP_deref_size` (rules `op.deref-size.zero-extends`, `op.deref-size.zero`).
    pub(super) fn deref_size(&self, s: &mut Scratch, l: &Location, size: u64) -> Result<Entry> {
        if size == 0 {
            return Ok(Entry::Value(self.generic(0)));
        }
        let g = self.generic_bits();
        let ts = (size.saturating_mul(8)).min(u64::from(g)) as u32;
        let t = if ts < g { BaseType::ate(ate::UNSIGNED, ts, self.generic_type.big_endian) } else { self.generic_type };
        match self.deref(s, l, t)? {
            Entry::Value(v) => Ok(Entry::Value(self.generic(v.lo))),
            other => Ok(other),
        }
    }

    /// Retrieves `t.bits` bits from `l`: a value of type `t`, or an
    /// implicit pointer value (rule `op.deref-type.reads-location`).
    pub fn deref(&self, s: &mut Scratch, l: &Location, t: BaseType) -> Result<Entry> {
        // Typed operations check their type against the size budget with
        // their operands (`within_size`); the untyped reads (generic,
        // deref_size, a register's address) are at most generic-sized.
        let n = t.bytes();
        if let Some(r) = self.deref_fast(l, t) {
            return r;
        }
        // expr.budget.work: the walk of the bits read, before any is read.
        if t.bits > 0 {
            self.charge_walk(s, l, u64::from(t.bits))?;
        }
        let mut buf = std::mem::take(&mut s.tmp);
        buf.clear();
        buf.resize(n, 0);
        let mut track = ImplicitPointerTrack::default();
        let r = self.read_bits(s, l, 0, u64::from(t.bits), &mut buf, 0, &mut track);
        let out = r.and_then(|()| match track.pointer {
            // Retrieved bits are in storage order; a big-endian type of whole
            // bytes is then byte-reversed, others are taken as they are.
            None if t.bits.is_multiple_of(8) => Ok(Entry::Value(self.value_from_memory_order(s, t, &buf))),
            None => Ok(Entry::Value(s.make_value(t, &buf))),
            Some(pointer) => {
                let whole = self.implicit_pointer_bits(&pointer);
                if track.consistent && !track.other && u64::from(t.bits) == whole {
                    Ok(Entry::ImplicitPointer(pointer))
                } else {
                    Err(Fail::EvalError(R::OP_IMPLICIT_POINTER_PARTIAL_READ))
                }
            }
        });
        s.tmp = buf;
        out
    }

    /// The common reads without the general bit machinery: whole bytes (at
    /// most 16) from a byte-aligned memory or register location. `None`
    /// when the general path must be taken. Same checks, same order.
    #[inline]
    pub(super) fn deref_fast(&self, l: &Location, t: BaseType) -> Option<Result<Entry>> {
        if t.bits == 0 || t.bits > 128 || !t.bits.is_multiple_of(8) {
            return None;
        }
        let n = (t.bits / 8) as usize;
        let mut b = [0u8; 16];
        let r = match *l {
            Location::Memory { aspace, bit, thread, lane } if bit % 8 == 0 => {
                let size_bits = self.memory_storage_bits(aspace);
                if bit.checked_add(u128::from(t.bits)).is_none_or(|e| e > size_bits) {
                    return Some(Err(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END)));
                }
                self.state
                    .read_memory(MemoryStorage { aspace, thread, lane }, (bit / 8) as u64, &mut b[..n])
                    .map_err(|_| Fail::EvalError(R::OP_DEREF_MEMORY_UNREADABLE))
            }
            Location::Register { regno, bit } if bit % 8 == 0 && !self.big_endian_target() => {
                let Some(reg) = self.target.register(regno) else {
                    return Some(Err(Fail::EvalError(R::REG_UNKNOWN_REGISTER_READ)));
                };
                if bit.checked_add(u64::from(t.bits)).is_none_or(|e| e > u64::from(reg.bits)) {
                    return Some(Err(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END)));
                }
                self.state.read_register(regno, (bit / 8) as usize, &mut b[..n]).map_err(|e| match e {
                    ContextError::NoSuchRegister(_) => Fail::EvalError(R::REG_UNKNOWN_REGISTER_READ),
                    _ => Fail::EvalError(R::CTX_REGISTER_UNAVAILABLE),
                })
            }
            _ => return None,
        };
        Some(r.map(|()| {
            if t.big_endian {
                b[..n].reverse();
            }
            Entry::Value(Value { ty: t, lo: u128::from_le_bytes(b), wide: NONE })
        }))
    }

    /// Whether the target stores multi-byte values most significant byte first.
    #[inline]
    fn big_endian_target(&self) -> bool {
        self.target.endian == dwarfcheck_core::target::Endian::Big
    }

    /// Copies `n` bits starting `extra` bits after `l`'s position into
    /// `dst` at bit `dst_bit` (storage order: bit k of byte k/8).
    #[allow(clippy::too_many_arguments)]
    fn read_bits(
        &self,
        s: &mut Scratch,
        l: &Location,
        extra: u64,
        n: u64,
        dst: &mut [u8],
        dst_bit: u64,
        track: &mut ImplicitPointerTrack,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        match *l {
            Location::Undefined => Err(Fail::EvalError(R::OP_DEREF_UNDEFINED_STORAGE)),
            Location::Memory { aspace, bit, thread, lane } => {
                track.other = true;
                let size_bits = self.storage_bits(s, l).unwrap_or(u128::MAX);
                let start = bit.checked_add(u128::from(extra)).ok_or(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END))?;
                if start.checked_add(u128::from(n)).is_none_or(|e| e > size_bits) {
                    return Err(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END));
                }
                let first = (start / 8) as u64;
                let sub = (start % 8) as u64;
                let count = (sub + n).div_ceil(8) as usize;
                with_buf(count, |buf| {
                    self.state
                        .read_memory(MemoryStorage { aspace, thread, lane }, first, buf)
                        .map_err(|_| Fail::EvalError(R::OP_DEREF_MEMORY_UNREADABLE))?;
                    copy_bits(buf, sub, dst, dst_bit, n);
                    Ok(())
                })
            }
            Location::Register { regno, bit } => {
                track.other = true;
                let reg = self.target.register(regno).ok_or(Fail::EvalError(R::REG_UNKNOWN_REGISTER_READ))?;
                let start = bit.checked_add(extra).ok_or(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END))?;
                if start.checked_add(n).is_none_or(|e| e > u64::from(reg.bits)) {
                    return Err(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END));
                }
                let reg_err = |e| match e {
                    ContextError::NoSuchRegister(_) => Fail::EvalError(R::REG_UNKNOWN_REGISTER_READ),
                    _ => Fail::EvalError(R::CTX_REGISTER_UNAVAILABLE),
                };
                if !self.big_endian_target() {
                    // Little-endian: target byte order is significance order.
                    let first = (start / 8) as usize;
                    let sub = start % 8;
                    let count = (sub + n).div_ceil(8) as usize;
                    return with_buf(count, |buf| {
                        self.state.read_register(regno, first, buf).map_err(reg_err)?;
                        copy_bits(buf, sub, dst, dst_bit, n);
                        Ok(())
                    });
                }
                // Big-endian: bit offsets count from the least significant
                // end of the register's value (rule `reg.storage-size`); the
                // bits read are laid out as the target stores a value of that
                // size (whole bytes: most significant byte first).
                let size = (reg.bits / 8) as usize;
                let mut whole = vec![0u8; size];
                self.state.read_register(regno, 0, &mut whole).map_err(reg_err)?;
                copy_from_lsb(&whole, start, n, dst, dst_bit);
                Ok(())
            }
            Location::Implicit { start, len, bit } => {
                track.other = true;
                let st = bit.checked_add(extra).ok_or(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END))?;
                if st.checked_add(n).is_none_or(|e| e > u64::from(len) * 8) {
                    return Err(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END));
                }
                let src = &s.bytes[start as usize..(start + len) as usize];
                if !self.big_endian_target() {
                    copy_bits(src, st, dst, dst_bit, n);
                    return Ok(());
                }
                // Big-endian: a piece of implicit storage is the least
                // significant bits of the value it holds (DWARF 5 §2.6.1.2;
                // rule `implicit.storage-bit-numbering`), laid out as for a
                // register.
                copy_from_lsb(src, st, n, dst, dst_bit);
                Ok(())
            }
            Location::ImplicitPointer { die, disp, aspace, bit } => {
                let pointer = ImplicitPointer { die, disp, aspace };
                // Reading past its end is also a read that is not the whole storage.
                let st = bit.checked_add(extra).ok_or(Fail::EvalError(R::OP_IMPLICIT_POINTER_PARTIAL_READ))?;
                if st.checked_add(n).is_none_or(|e| e > self.implicit_pointer_bits(&pointer)) {
                    return Err(Fail::EvalError(R::OP_IMPLICIT_POINTER_PARTIAL_READ));
                }
                match track.pointer {
                    None => {
                        track.pointer = Some(pointer);
                        track.consistent = st == dst_bit;
                    }
                    Some(prev) => track.consistent &= prev == pointer && st == dst_bit,
                }
                Ok(())
            }
            Location::Multi { start, len } => self.read_multi(s, start, len, extra, n, dst, dst_bit, track),
            Location::Composite { idx, bit } => {
                let c = s.composites[idx as usize];
                let st = bit.checked_add(extra).ok_or(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END))?;
                if st.checked_add(n).is_none_or(|e| e > c.total_bits) {
                    return Err(Fail::EvalError(R::OP_DEREF_PAST_STORAGE_END));
                }
                let end = st + n;
                let (mut pos, mut p) = (0u64, c.first);
                // Parts of one size at consecutive indices: the part
                // holding bit `st` is number st / stride.
                if let Some(k) = st.checked_div(c.stride) {
                    (pos, p) = (k * c.stride, c.first + k as u32);
                }
                while p != NONE && pos < end {
                    let part = s.parts[p as usize];
                    let pend = pos + part.bits;
                    let lo = pos.max(st);
                    let hi = pend.min(end);
                    if lo < hi {
                        self.read_bits(s, &part.location, lo - pos, hi - lo, dst, dst_bit + (lo - st), track)?;
                    }
                    pos = pend;
                    p = part.next;
                }
                Ok(())
            }
        }
    }

    /// Reads every single location of a multi-place location; they must
    /// agree (rule `expr.loc.places-must-agree`).
    #[allow(clippy::too_many_arguments)]
    fn read_multi(
        &self,
        s: &mut Scratch,
        start: u32,
        len: u32,
        extra: u64,
        n: u64,
        dst: &mut [u8],
        dst_bit: u64,
        track: &mut ImplicitPointerTrack,
    ) -> Result<()> {
        let mut first: Option<Vec<u8>> = None;
        for i in start..start + len {
            let single = s.multi[i as usize];
            let mut tmp = dst.to_vec();
            self.read_bits(s, &single, extra, n, &mut tmp, dst_bit, track)?;
            match &first {
                None => first = Some(tmp),
                Some(f) => {
                    if (0..n).any(|k| get_bit(f, dst_bit + k) != get_bit(&tmp, dst_bit + k)) {
                        return Err(Fail::IllFormed(R::EXPR_LOC_PLACES_MUST_AGREE));
                    }
                }
            }
        }
        if let Some(f) = first {
            dst.copy_from_slice(&f);
        }
        Ok(())
    }
}

/// Runs `f` on a zeroed buffer of `count` bytes (on the stack when small).
fn with_buf<T>(count: usize, f: impl FnOnce(&mut [u8]) -> T) -> T {
    if count <= 64 {
        let mut tmp = [0u8; 64];
        f(&mut tmp[..count])
    } else {
        let mut v = vec![0u8; count];
        f(&mut v)
    }
}

/// Copies `n` bits from `src` at bit `sb` to `dst` at bit `db`
/// (bit k of a buffer is bit k % 8 of byte k / 8).
pub(super) fn copy_bits(src: &[u8], sb: u64, dst: &mut [u8], db: u64, n: u64) {
    if sb.is_multiple_of(8) && db.is_multiple_of(8) {
        let whole = (n / 8) as usize;
        let (s0, d0) = ((sb / 8) as usize, (db / 8) as usize);
        dst[d0..d0 + whole].copy_from_slice(&src[s0..s0 + whole]);
        for k in (whole as u64 * 8)..n {
            set_bit(dst, db + k, get_bit(src, sb + k));
        }
        return;
    }
    for k in 0..n {
        set_bit(dst, db + k, get_bit(src, sb + k));
    }
}

#[inline]
pub(super) fn get_bit(b: &[u8], k: u64) -> bool {
    b[(k / 8) as usize] >> (k % 8) & 1 == 1
}

#[inline]
fn set_bit(b: &mut [u8], k: u64, v: bool) {
    let m = 1u8 << (k % 8);
    let byte = &mut b[(k / 8) as usize];
    if v {
        *byte |= m;
    } else {
        *byte &= !m;
    }
}

/// Copies `n` bits from `start` of a big-endian value held in `whole`
/// (memory order), counting bit offsets from its least significant end
/// (rules `reg.storage-size`, `implicit.storage-bit-numbering`), into
/// `dst` at `dst_bit`, laid out as the target stores a value of that size
/// (whole bytes: most significant first).
fn copy_from_lsb(whole: &[u8], start: u64, n: u64, dst: &mut [u8], dst_bit: u64) {
    let lsb_first: Vec<u8> = whole.iter().rev().copied().collect();
    let mut part = vec![0u8; n.div_ceil(8) as usize];
    copy_bits(&lsb_first, start, &mut part, 0, n);
    if n.is_multiple_of(8) {
        part.reverse();
    }
    copy_bits(&part, 0, dst, dst_bit, n);
}
