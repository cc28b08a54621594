//! Retrieving bits from a location description, as `DW_OP_deref_type`
//! describes it (hetero-2020 "Special Value Operations > DW_OP_deref_type"),
//! including the special case of implicit pointer storage ("Implicit
//! Location Description Operations > DW_OP_implicit_pointer").

use super::entry::Loc;
use super::stop::Stop;
use super::window::raw_cut;
use dwarfcheck_core::context::{ContextError, MachineState, MemoryStorage};
use dwarfcheck_core::outcome::{SingleLocation, Source};
use dwarfcheck_core::rules::id;

/// What a read produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// The bits, in storage order: bit `j` of the result is bit `j` after
    /// the start position; packed least significant bit first into bytes.
    Bits(Vec<u8>),
    /// The whole contents of an implicit pointer storage (the source, with
    /// bit offset 0).
    ImplicitPointer(Source),
}

/// Reads `nbits` bits from `loc`.
///
/// Every single location description of `loc` is read (rule
/// `expr.loc.places-must-agree`: they must hold the same value); a part
/// with several places is read from each place, likewise. Errors, in the
/// order the bits are visited: `op.deref.undefined-storage`,
/// `op.deref.past-storage-end`, `op.deref.memory-unreadable`,
/// `ctx.register-unavailable`, `reg.unknown-register-read`; then, judged on
/// the read as a whole, `op.implicit-pointer.partial-read`;
/// `expr.loc.places-must-agree` (ill-formed) when places differ.
pub fn read_bits(ctx: &dyn MachineState, loc: &Loc, nbits: u64) -> Result<Read, Stop> {
    let norm = raw_cut(loc, nbits).normalize();
    let mut result: Option<Read> = None;
    for place in &norm.places {
        // The segments of storage the read covers, each a (bits, places) pair.
        let segs: Vec<(u64, Vec<Source>)> = match place {
            SingleLocation::Simple(s) => vec![(nbits, vec![s.clone()])],
            SingleLocation::Composite(pieces) => {
                let mut segs = Vec::new();
                let mut left = nbits;
                for p in pieces {
                    if left == 0 {
                        break;
                    }
                    let take = p.bits.min(left);
                    segs.push((take, p.sources.iter().cloned().collect()));
                    left -= take;
                }
                if left > 0 {
                    // The composite ends before all bits are retrieved.
                    return Err(Stop::Eval(id::OP_DEREF_PAST_STORAGE_END));
                }
                segs
            }
        };
        let this = read_segments(ctx, &segs, nbits)?;
        match &result {
            None => result = Some(this),
            Some(prev) if *prev == this => {}
            Some(_) => return Err(Stop::Ill(id::EXPR_LOC_PLACES_MUST_AGREE)),
        }
    }
    Ok(result.unwrap_or(Read::Bits(vec![0; bytes_for(nbits)])))
}

fn bytes_for(nbits: u64) -> usize {
    nbits.div_ceil(8) as usize
}

/// Reads the segments in order. A segment of implicit pointer storage is
/// judged after every other segment has been read: the rule
/// (`op.implicit-pointer.partial-read`) is about the read as a whole (the
/// complete contents of one implicit pointer storage, nothing else), while
/// undefined storage, storage ends and unreadable memory are errors of the
/// bits where they are met. So a read of half a pointer and then of
/// undefined storage is `op.deref.undefined-storage` (fuzz finding
/// expr_ops-ae88ba6cd7bb8ee5: a `DW_OP_LLVM_select_bit_piece` of an
/// implicit pointer and undefined storage, then `DW_OP_deref`).
fn read_segments(ctx: &dyn MachineState, segs: &[(u64, Vec<Source>)], nbits: u64) -> Result<Read, Stop> {
    let is_ip = |p: &Source| matches!(p, Source::ImplicitPointer { .. });
    let touches_ip = segs.iter().any(|(_, ps)| ps.iter().any(is_ip));
    if touches_ip {
        for (bits, places) in segs {
            for p in places.iter().filter(|p| !is_ip(p)) {
                read_source(ctx, p, *bits)?;
            }
        }
        // Only a read of the complete contents of one implicit pointer
        // storage, in ascending order from offset 0, is allowed.
        if let [(bits, places)] = segs {
            if let [Source::ImplicitPointer { bit_offset: 0, aspace, .. }] = &places[..] {
                let whole = u64::from(super::entry::implicit_pointer_bits(ctx, aspace.unwrap_or(0)));
                if *bits == whole && nbits == whole {
                    return Ok(Read::ImplicitPointer(places[0].clone()));
                }
            }
        }
        return Err(Stop::Eval(id::OP_IMPLICIT_POINTER_PARTIAL_READ));
    }
    let mut out = vec![0u8; bytes_for(nbits)];
    let mut pos = 0u64;
    for (bits, places) in segs {
        let mut first: Option<Vec<u8>> = None;
        for p in places {
            let got = read_source(ctx, p, *bits)?;
            match &first {
                None => first = Some(got),
                Some(f) if *f == got => {}
                Some(_) => return Err(Stop::Ill(id::EXPR_LOC_PLACES_MUST_AGREE)),
            }
        }
        let got = first.unwrap_or_default();
        copy_bits(&got, 0, &mut out, pos, *bits);
        pos += bits;
    }
    Ok(Read::Bits(out))
}

/// Copies `n` bits from `src` (starting at bit `s`) to `dst` (starting at
/// bit `d`); bit `i` of a byte string is bit `i % 8` of byte `i / 8`.
/// When both starts are on a byte boundary the whole bytes are copied as
/// bytes (the same bits), and only the bits after them one by one.
pub fn copy_bits(src: &[u8], s: u64, dst: &mut [u8], d: u64, n: u64) {
    let mut done = 0;
    if s.is_multiple_of(8) && d.is_multiple_of(8) {
        let (from, to, whole) = ((s / 8) as usize, (d / 8) as usize, (n / 8) as usize);
        dst[to..to + whole].copy_from_slice(&src[from..from + whole]);
        done = n - n % 8;
    }
    for j in done..n {
        let si = s + j;
        let bit = (src[(si / 8) as usize] >> (si % 8)) & 1;
        let di = d + j;
        let byte = &mut dst[(di / 8) as usize];
        *byte = (*byte & !(1 << (di % 8))) | (bit << (di % 8));
    }
}

/// Reads `n` bits of one non-composite storage from the source's bit
/// position.
fn read_source(ctx: &dyn MachineState, src: &Source, n: u64) -> Result<Vec<u8>, Stop> {
    let mut out = vec![0u8; bytes_for(n)];
    match src {
        Source::Undefined => return Err(Stop::Eval(id::OP_DEREF_UNDEFINED_STORAGE)),
        Source::Memory { aspace, bit_addr, thread, lane } => {
            let abits = ctx.target().address_space(*aspace).map(|a| a.address_bits).unwrap_or(64);
            let size = super::entry::memory_bits(abits);
            let end = bit_addr.checked_add(u128::from(n)).ok_or(Stop::Eval(id::OP_DEREF_PAST_STORAGE_END))?;
            if end > size {
                return Err(Stop::Eval(id::OP_DEREF_PAST_STORAGE_END));
            }
            let first = bit_addr / 8;
            let len = end.div_ceil(8) - first; // bytes touched (end may be 2^64 bytes)
            let mut buf = vec![0u8; len as usize];
            // The storage bound when the location was created
            // (loc.memory.bound-at-creation), not the current thread/lane.
            let storage = MemoryStorage { aspace: *aspace, thread: *thread, lane: *lane };
            ctx.read_memory(storage, first as u64, &mut buf).map_err(ctx_stop)?;
            copy_bits(&buf, (bit_addr % 8) as u64, &mut out, 0, n);
        }
        Source::Register { regno, bit_offset } => {
            let reg = ctx.target().register(*regno).ok_or(Stop::Eval(id::REG_UNKNOWN_REGISTER_READ))?;
            if u128::from(*bit_offset) + u128::from(n) > u128::from(reg.bits) {
                return Err(Stop::Eval(id::OP_DEREF_PAST_STORAGE_END));
            }
            let mut buf = vec![0u8; reg.bits.div_ceil(8) as usize];
            ctx.read_register(*regno, 0, &mut buf).map_err(ctx_stop)?;
            // Register bit offsets count from the least significant end of
            // the register (DWARF 5 §2.6.1.2 DW_OP_bit_piece; rule
            // reg.storage-size). Put the contents in significance order,
            // take the bits, and give whole bytes back in memory order so
            // the caller's byte-order handling applies as for memory.
            let big = ctx.target().endian == dwarfcheck_core::target::Endian::Big;
            if big {
                buf.reverse();
            }
            copy_bits(&buf, *bit_offset, &mut out, 0, n);
            if big && n.is_multiple_of(8) {
                out.reverse();
            }
        }
        Source::Implicit { bytes, bit_offset } => {
            if u128::from(*bit_offset) + u128::from(n) > bytes.len() as u128 * 8 {
                return Err(Stop::Eval(id::OP_DEREF_PAST_STORAGE_END));
            }
            // Implicit storage holds a value (DW_OP_stack_value) or a
            // literal in the target's representation (DW_OP_implicit_value),
            // and a piece of it is that value's least significant bits
            // (DWARF 5 §2.6.1.2 DW_OP_bit_piece; rule
            // implicit.storage-bit-numbering): its bit offsets count from the
            // least significant end, as a register's do. On a big-endian
            // target put the bytes in significance order, take the bits,
            // and give whole bytes back in memory order.
            let big = ctx.target().endian == dwarfcheck_core::target::Endian::Big;
            if big {
                let mut lsb_first = bytes.clone();
                lsb_first.reverse();
                copy_bits(&lsb_first, *bit_offset, &mut out, 0, n);
                if n.is_multiple_of(8) {
                    out.reverse();
                }
            } else {
                copy_bits(bytes, *bit_offset, &mut out, 0, n);
            }
        }
        Source::ImplicitPointer { .. } => return Err(Stop::Eval(id::OP_IMPLICIT_POINTER_PARTIAL_READ)),
    }
    Ok(out)
}

/// Maps a context failure to the evaluation error rule that names it.
pub fn ctx_stop(e: ContextError) -> Stop {
    Stop::Eval(match e {
        ContextError::Missing(_) => id::CTX_CU_MISSING,
        ContextError::NoSuchRegister(_) => id::REG_UNKNOWN_REGISTER_READ,
        ContextError::RegisterUnavailable(_) => id::CTX_REGISTER_UNAVAILABLE,
        ContextError::MemoryUnreadable { .. } => id::OP_DEREF_MEMORY_UNREADABLE,
        ContextError::Unwinding(f) => return Stop::of_failure(f),
    })
}
