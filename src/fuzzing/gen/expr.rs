//! Mostly well-formed expressions for a generated context, written
//! straight to bytes: a model of what each stack entry is decides which
//! operations fit, forward branches jump over balanced blocks, and
//! registers, address spaces and DIEs come from the context.

use super::encode::{Arg, Encoder};
use super::palette::{base_type, Palette};
use super::{int, rare};
use arbitrary::{Result, Unstructured};
use dwarfcheck_core::context::Context;
use dwarfcheck_core::encoding::Op as O;

/// What the generator's stack model knows of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A value of the generic type (or a memory location, which converts
    /// to its address).
    Generic,
    /// A value of a base type.
    Typed,
    /// A location that does not convert to a value (register, implicit,
    /// undefined or composite).
    Loc,
}

/// What an operation needs of the entries it pops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// Anything: stack shuffles, pieces, extensions.
    Any,
    /// A generic value on top, anything below: offsets of locations, the
    /// mask of a selection.
    GenericOnTop,
    /// Values of any type: conversions, `DW_OP_stack_value`.
    Value,
    /// Generic values: addresses, arithmetic, branches.
    Generic,
}

/// How an operation changes the stack model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moves {
    /// Pops `pops` entries, pushes `pushes` of the operation's kind.
    Plain,
    /// `DW_OP_dup`, `DW_OP_over`, `DW_OP_pick n`: pushes a copy of the
    /// entry this far below the top.
    Copy(usize),
    /// `DW_OP_swap`.
    Swap,
    /// `DW_OP_rot`.
    Rot,
    /// An offset of the top entry, which keeps its kind.
    Keep,
    /// An offset popped from the top, applied to the entry below it.
    OffsetBelow,
}

/// One generated operation (or a short sequence): its bytes (`None`
/// when the context's profile cannot encode it), what it pops and pushes
/// in the model, and what it needs.
struct Gen {
    bytes: Option<Vec<u8>>,
    pops: usize,
    pushes: usize,
    kind: Kind,
    need: Need,
    moves: Moves,
}

impl Gen {
    fn new(bytes: Option<Vec<u8>>, pops: usize, pushes: usize, kind: Kind) -> Gen {
        Gen { bytes, pops, pushes, kind, need: Need::Generic, moves: Moves::Plain }
    }

    fn need(mut self, need: Need) -> Gen {
        self.need = need;
        self
    }

    fn moves(mut self, moves: Moves) -> Gen {
        self.moves = moves;
        self
    }
}

/// Operations in sequence, each with its arguments: `None` unless the
/// profile encodes every one.
fn seq(e: &Encoder, ops: &[(O, &[Arg])]) -> Option<Vec<u8>> {
    let mut v = Vec::with_capacity(8);
    ops.iter().all(|(o, a)| e.op(&mut v, *o, a)).then_some(v)
}

/// A generic value: `pops` popped, `pushes` pushed.
fn val(bytes: Option<Vec<u8>>, pops: usize, pushes: usize) -> Gen {
    Gen::new(bytes, pops, pushes, Kind::Generic)
}

/// A location that is not a memory byte address, pushed.
fn loc(bytes: Option<Vec<u8>>) -> Gen {
    Gen::new(bytes, 0, 1, Kind::Loc)
}

/// A memory location in address space `aspace` (a generic value in space
/// 0, else a location), `pops` popped.
fn in_space(aspace: u64, bytes: Option<Vec<u8>>, pops: usize) -> Gen {
    Gen::new(bytes, pops, 1, if aspace == 0 { Kind::Generic } else { Kind::Loc })
}

/// A value of a base type, `pops` popped.
fn typed(bytes: Option<Vec<u8>>, pops: usize) -> Gen {
    Gen::new(bytes, pops, 1, Kind::Typed)
}

/// Raw bytes, whatever the profile makes of them (the GNU forms decode as
/// GNU operations under the profiles that have them, and not at all
/// under `dwarf5`).
fn raw(b: &[u8]) -> Option<Vec<u8>> {
    Some(b.to_vec())
}

/// One operation that needs at most the entries `stack` holds, of the
/// kinds it needs (an underflow or a kind mismatch now and then, to reach
/// those rules too).
fn one(u: &mut Unstructured, stack: &[Kind], p: &Palette) -> Result<Gen> {
    // About one expression in ten has an operation that does not fit.
    let sloppy = rare(u, 200)?;
    let want = if sloppy { usize::MAX } else { stack.len() };
    let e = &p.enc;
    let cfa_space = u64::from(p.cfa_is_loc);
    loop {
        let o = match u.int_in_range(0u8..=67)? {
            0..=3 => val(e.one(O::Lit(u.int_in_range(0u8..=31)?), &[]), 0, 1),
            4 => val(e.one(O::Constu, &[Arg::U(int(u)?.unsigned_abs())]), 0, 1),
            5 => val(e.one(O::Consts, &[Arg::S(int(u)?)]), 0, 1),
            6 => val(e.one(O::Const8u, &[Arg::U(u.arbitrary()?)]), 0, 1),
            7..=8 => {
                let (r, off) = (p.addr_reg(u)?, int(u)?);
                let mut b = Vec::new();
                val(e.breg(&mut b, r, off).then_some(b), 0, 1)
            }
            9 => val(e.one(O::Bregx, &[Arg::U(p.addr_reg(u)?), Arg::S(int(u)?)]), 0, 1),
            10..=11 => {
                let mut b = Vec::new();
                loc(e.reg(&mut b, p.reg(u)?).then_some(b))
            }
            12 => loc(e.one(O::Regx, &[Arg::U(p.reg(u)?)])),
            13 => in_space(cfa_space, e.one(O::Fbreg, &[Arg::S(int(u)?)]), 0),
            14 => in_space(cfa_space, e.one(O::CallFrameCfa, &[]), 0),
            15 => val(e.one(O::PushObjectAddress, &[]), 0, 1),
            16 => {
                let a = *u.choose(&[0x601000u64, 0x7ffc0f00, 0x7ffc0fe0, 0x1000, 0])?;
                val(e.one(O::Addr, &[Arg::U(a)]), 0, 1)
            }
            17..=19 => {
                let o = *u.choose(&[
                    O::Plus,
                    O::Minus,
                    O::Mul,
                    O::Div,
                    O::Mod,
                    O::And,
                    O::Or,
                    O::Xor,
                    O::Shl,
                    O::Shr,
                    O::Shra,
                    O::Eq,
                    O::Ne,
                    O::Lt,
                    O::Gt,
                    O::Le,
                    O::Ge,
                ])?;
                val(e.one(o, &[]), 2, 1)
            }
            20 => val(e.one(*u.choose(&[O::Neg, O::Not, O::Abs])?, &[]), 1, 1),
            21 => val(e.one(O::PlusUconst, &[Arg::U(int(u)?.unsigned_abs())]), 1, 1),
            22 => val(e.one(O::Dup, &[]), 1, 2).need(Need::Any).moves(Moves::Copy(0)),
            23 => val(e.one(O::Drop, &[]), 1, 0).need(Need::Any),
            24 => val(e.one(O::Swap, &[]), 2, 2).need(Need::Any).moves(Moves::Swap),
            25 => val(e.one(O::Over, &[]), 2, 3).need(Need::Any).moves(Moves::Copy(1)),
            26 => {
                let n = u.int_in_range(0u8..=2)?;
                val(e.one(O::Pick, &[Arg::U(n.into())]), 3, 4).need(Need::Any).moves(Moves::Copy(n.into()))
            }
            27 => val(e.one(O::Rot, &[]), 3, 3).need(Need::Any).moves(Moves::Rot),
            28 => val(e.one(O::Deref, &[]), 1, 1),
            29 => val(e.one(O::DerefSize, &[Arg::U(u.int_in_range(0u64..=9)?)]), 1, 1),
            30 => {
                let (t, size) = base_type(u)?;
                typed(e.one(O::DerefType, &[Arg::U(size.into()), Arg::U(t)]), 1)
            }
            31 => {
                let r = p.reg(u)?;
                typed(e.one(O::RegvalType, &[Arg::U(r), Arg::U(base_type(u)?.0)]), 0)
            }
            32 => match *u.choose(&[0u64, 0, 0x10, 0x18, 0x20, 0x28])? {
                0 => val(e.one(O::Convert, &[Arg::U(0)]), 1, 1).need(Need::Value),
                t => typed(e.one(O::Convert, &[Arg::U(t)]), 1).need(Need::Value),
            },
            33 => val(e.one(O::StackValue, &[]), 1, 1).need(Need::Value),
            34..=35 => val(e.one(O::DerefSize, &[Arg::U(*u.choose(&[1u64, 2, 4, 8])?)]), 1, 1),
            36 => {
                let (t, size) = base_type(u)?;
                let bytes: Vec<u8> = (0..size).map(|_| u.arbitrary::<u8>()).collect::<Result<_>>()?;
                typed(e.one(O::ConstType, &[Arg::U(t), Arg::B(&bytes)]), 0)
            }
            37 => loc(e.one(O::ImplicitValue, &[Arg::B(&[u.arbitrary::<u8>()?, 0, 0, 0])])),
            // The standard unit's DIEs 0x40 and 0x60 push one value, 0x50
            // and 0x70 have no location (fuzzing::case::standard_unit).
            38 => {
                let call = if rare(u, 3)? { O::Call4 } else { O::Call2 };
                match *u.choose(&[0x40u64, 0x50, 0x60, 0x70])? {
                    d @ (0x40 | 0x60) => val(e.one(call, &[Arg::U(d)]), 0, 1),
                    d => val(e.one(call, &[Arg::U(d)]), 0, 0),
                }
            }
            39 => {
                let d = *u.choose(&[0x40u64, 0x50])?;
                loc(e.one(O::ImplicitPointer, &[Arg::U(d), Arg::S(int(u)?)]))
            }
            40 => {
                let mut block = Vec::new();
                let ok = e.reg(&mut block, p.addr_reg(u)?);
                val(if ok { e.one(O::EntryValue, &[Arg::B(&block)]) } else { None }, 0, 1)
            }
            41 => {
                let n = u.int_in_range(0u64..=16)?;
                val(e.one(O::LlvmOffsetUconst, &[Arg::U(n)]), 1, 1).need(Need::Any).moves(Moves::Keep)
            }
            42 => val(e.one(O::LlvmOffset, &[]), 2, 1).need(Need::GenericOnTop).moves(Moves::OffsetBelow),
            43 => loc(e.one(O::LlvmUndefined, &[])),
            44 => val(e.one(O::LlvmBitOffset, &[]), 2, 1).need(Need::GenericOnTop).moves(Moves::OffsetBelow),
            45 => loc(e.one(O::LlvmCallFrameEntryReg, &[Arg::U(p.addr_reg(u)?)])),
            // Address spaces: an address converted into one, a register
            // based address in one, dereferences through one.
            46..=47 => {
                let a = p.aspace(u)?;
                in_space(a, seq(e, &[(O::Constu, &[Arg::U(a)]), (O::LlvmFormAspaceAddress, &[])]), 1)
            }
            48 => {
                let a = p.aspace(u)?;
                let (r, off) = (p.addr_reg(u)?, int(u)?);
                in_space(a, seq(e, &[(O::Constu, &[Arg::U(a)]), (O::LlvmAspaceBregx, &[Arg::U(r), Arg::S(off)])]), 0)
            }
            49 => {
                let size = *u.choose(&[1u64, 2, 4, 8])?;
                let a = p.aspace(u)?;
                val(seq(e, &[(O::Constu, &[Arg::U(a)]), (O::Swap, &[]), (O::XderefSize, &[Arg::U(size)])]), 1, 1)
            }
            50 => val(e.one(O::LlvmPushLane, &[]), 0, 1),
            51 => {
                let a = p.aspace(u)?;
                let d = *u.choose(&[0x40u64, 0x50])?;
                let off = int(u)?;
                loc(seq(e, &[(O::Constu, &[Arg::U(a)]), (O::LlvmAspaceImplicitPointer, &[Arg::U(d), Arg::S(off)])]))
            }
            // Vector composites: a location extended to lanes, a selection
            // by a mask value.
            52 => {
                let (bits, n) = (*u.choose(&[8u64, 32, 64])?, *u.choose(&[1u64, 2, 4, 64])?);
                Gen::new(e.one(O::LlvmExtend, &[Arg::U(bits), Arg::U(n)]), 1, 1, Kind::Loc).need(Need::Any)
            }
            53 => {
                let (bits, n) = (*u.choose(&[8u64, 32])?, *u.choose(&[1u64, 2, 4])?);
                Gen::new(e.one(O::LlvmSelectBitPiece, &[Arg::U(bits), Arg::U(n)]), 3, 1, Kind::Loc)
                    .need(Need::GenericOnTop)
            }
            // (DWARF 5 pieces leave an incomplete composite that only
            // more pieces may touch: they come at the end, below.)
            54 => {
                let n = u.int_in_range(0u64..=4)?;
                val(e.one(O::LlvmOffsetUconst, &[Arg::U(n)]), 1, 1).need(Need::Any).moves(Moves::Keep)
            }
            55 => {
                let (o, v) = *u.choose(&[
                    (O::Const1u, 200i64),
                    (O::Const1s, -100),
                    (O::Const2u, 0x1234),
                    (O::Const2s, -0x1234),
                    (O::Const4u, 0x7ffc0f00),
                    (O::Const4s, -8),
                    (O::Const8s, -0x1000),
                ])?;
                val(e.one(o, &[Arg::S(v)]), 0, 1)
            }
            56 => val(e.one(O::Nop, &[]), 0, 0),
            57 => {
                let a = p.aspace(u)?;
                val(seq(e, &[(O::Constu, &[Arg::U(a)]), (O::Swap, &[]), (O::Xderef, &[])]), 1, 1)
            }
            // xderef_type through an address space, call_ref, the unit's
            // .debug_addr, reinterpret, and the GNU forms as raw bytes.
            58 => {
                let a = p.aspace(u)?.min(0x7f) as u8;
                typed(raw(&[0x10, a, 0x16, 0xa7, 0x08, 0x18]), 1)
            }
            59 => val(raw(&[0x9a, 0x40, 0, 0, 0]), 0, 1),
            60 => {
                let o = *u.choose(&[O::Addrx, O::Constx])?;
                val(e.one(o, &[Arg::U(u.int_in_range(0u64..=1)?)]), 0, 1)
            }
            61 => val(e.one(O::FormTlsAddress, &[]), 1, 1),
            62 => val(raw(&[0xa9, 0x00]), 1, 1),
            63 => match u.int_in_range(0u8..=12)? {
                0 => val(raw(&[0xe0]), 1, 1),
                12 => val(raw(&[0xf0]), 0, 0),
                1 => loc(raw(&[0xf2, 0x50, 0, 0, 0, u.int_in_range(0u8..=0x3f)?])),
                2 => val(raw(&[0xf3, 0x01, 0x50]), 0, 1),
                3 => {
                    let mut b = vec![0xf4, 0x10, 0x04];
                    b.extend(u.arbitrary::<u32>()?.to_be_bytes());
                    typed(Some(b), 0)
                }
                4 => typed(raw(&[0xf5, p.addr_reg(u)?.min(0x7f) as u8, 0x18]), 0),
                5 => typed(raw(&[0xf6, 0x04, 0x10]), 1),
                6 => val(raw(&[0xf7, 0x00]), 1, 1),
                7 => val(raw(&[0xf9, 0x00]), 1, 1),
                8 => val(raw(&[0xfa, 0x40, 0, 0, 0]), 0, 1),
                9 => val(raw(&[0xfb, u.int_in_range(0u8..=1)?]), 0, 1),
                10 => val(raw(&[0xfc, u.int_in_range(0u8..=1)?]), 0, 1),
                _ => val(raw(&[0xfd, 0x40, 0, 0, 0]), 0, 1),
            },
            // IGC's one-byte operations (the `intel` profile; no other
            // profile encodes them). Their semantics are undefined, so
            // the reference stops at the first one.
            64 => {
                let o = *u.choose(&[
                    O::IntelRegs,
                    O::IntelPushBitPieceStack,
                    O::IntelPushSimdLane,
                    O::IntelPieceStack,
                    O::IntelBitPieceStack,
                ])?;
                val(e.one(o, &[]), 0, 1).need(Need::Any)
            }
            _ => val(e.one(O::Lit(u.int_in_range(0u8..=31)?), &[]), 0, 1),
        };
        let top = stack.iter().rev().take(o.pops);
        let fits = match o.need {
            Need::Any => true,
            Need::GenericOnTop => stack.last().is_none_or(|k| *k == Kind::Generic),
            Need::Value => top.into_iter().all(|k| *k != Kind::Loc),
            Need::Generic => top.into_iter().all(|k| *k == Kind::Generic),
        };
        if o.pops <= want && (sloppy || fits) {
            return Ok(o);
        }
        if u.is_empty() {
            return Ok(val(e.one(O::Lit(0), &[]), 0, 1));
        }
    }
}

/// The stack model after `o`: shuffles move kinds, offsets keep their
/// location's kind, everything else pops and pushes `o.kind`.
fn apply(stack: &mut Vec<Kind>, o: &Gen) {
    let n = stack.len();
    let at = |i: usize| n.checked_sub(i + 1).map(|j| stack[j]).unwrap_or(Kind::Generic);
    match o.moves {
        Moves::Copy(i) => stack.push(at(i)),
        Moves::Swap if n >= 2 => stack.swap(n - 1, n - 2),
        Moves::Rot if n >= 3 => stack[n - 3..].rotate_right(1),
        Moves::Keep => {}
        Moves::OffsetBelow => {
            let l = at(1);
            stack.truncate(n.saturating_sub(2));
            stack.push(l);
        }
        _ => {
            stack.truncate(n.saturating_sub(o.pops));
            stack.extend(std::iter::repeat_n(o.kind, o.pushes));
        }
    }
}

/// A mostly well-formed expression for `ctx` (its target and vendor
/// profile): up to 24 operations, each only when the stack holds what it
/// pops, with now and then a forward `DW_OP_skip`/`DW_OP_bra` to the start
/// of a later operation. Operations the profile cannot encode are left
/// out. Returns the expression bytes.
pub fn expression(u: &mut Unstructured, ctx: &Context) -> Result<Vec<u8>> {
    expression_in(u, &Palette::of(ctx))
}

/// [`expression`] for the context `palette` describes.
pub(super) fn expression_in(u: &mut Unstructured, palette: &Palette) -> Result<Vec<u8>> {
    let n = u.int_in_range(1usize..=24)?;
    let mut parts: Vec<Vec<u8>> = Vec::with_capacity(n + 4);
    let mut branches: Vec<(usize, bool, usize)> = Vec::new(); // (index, bra, ops skipped)
    let mut stack: Vec<Kind> = Vec::new();
    let e = &palette.enc;
    for _ in 0..n {
        if u.is_empty() {
            break;
        }
        // A forward branch over a block that leaves the stack as it found
        // it (operations that push, each then dropped), so that the model
        // holds whichever way it goes.
        if stack.last() == Some(&Kind::Generic) && rare(u, 12)? {
            let bra = u.arbitrary::<bool>()?;
            let at = parts.len();
            parts.push(Vec::new());
            if bra {
                stack.pop();
            }
            let mut block = 0;
            for _ in 0..u.int_in_range(0usize..=2)? {
                let o = one(u, &[], palette)?;
                if let (Some(b), Some(d)) = (o.bytes, e.one(O::Drop, &[])) {
                    if o.pushes == 1 {
                        parts.extend([b, d]);
                        block += 2;
                    }
                }
            }
            branches.push((at, bra, block));
            continue;
        }
        let o = one(u, &stack, palette)?;
        if let Some(b) = &o.bytes {
            parts.push(b.clone());
            apply(&mut stack, &o);
        }
    }
    // Now and then a composite: the top entry as a piece, then another
    // location as the next piece (DWARF 5 pieces, completed with
    // hetero-2020's DW_OP_LLVM_piece_end where the profile has it).
    if !stack.is_empty() && rare(u, 4)? {
        let piece = |n: u64| (O::Piece, vec![Arg::U(n)]);
        let bit_piece = |n: u64, off: u64| (O::BitPiece, vec![Arg::U(n), Arg::U(off)]);
        let first = u.choose(&[piece(1), piece(2), piece(4), bit_piece(8, 0), bit_piece(5, 3)])?.clone();
        let mut bytes = Vec::new();
        let mut ok = e.op(&mut bytes, first.0, &first.1);
        ok &= match u.int_in_range(0u8..=3)? {
            0 => e.reg(&mut bytes, palette.reg(u)?),
            1 => e.breg(&mut bytes, palette.addr_reg(u)?, 0),
            2 => e.op(&mut bytes, O::LlvmUndefined, &[]),
            _ => e.op(&mut bytes, O::Lit(5), &[]) && e.op(&mut bytes, O::StackValue, &[]),
        };
        let last = u.choose(&[piece(1), piece(2), piece(4), bit_piece(12, 4)])?.clone();
        ok &= e.op(&mut bytes, last.0, &last.1);
        if ok {
            parts.push(bytes);
            parts.extend(e.one(O::LlvmPieceEnd, &[]));
        }
    }
    // Branch displacements: the bytes of the operations skipped, so the
    // target is an operation start (or the end of the expression).
    for &(i, bra, skip) in &branches {
        let d: usize = parts[i + 1..].iter().take(skip).map(|p| p.len()).sum();
        let d = u16::try_from(d).unwrap_or(0);
        parts[i] = e.one(if bra { O::Bra } else { O::Skip }, &[Arg::U(d.into())]).unwrap_or_default();
    }
    Ok(parts.concat())
}
