//! Structured generators driven by `arbitrary::Unstructured`: mostly
//! well-formed DWARF expressions (stack-depth aware, forward branches to
//! operation starts, operands the context can answer), the contexts they
//! run in, and CFI programs, so that evaluation goes deep instead of
//! stopping at decoding. The same bytes drive the fuzz targets and the
//! property tests.

mod cfi;
mod context;

pub use cfi::cfi_section;
pub use context::context;

use crate::case::ExprCase;
use crate::fuzzing::case::FuzzCase;
use arbitrary::{Result, Unstructured};
use dwarfcheck_core::context::Context;
use dwarfcheck_core::context::MachineState;

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

/// One generated operation: its text, entries popped and pushed, and the
/// kind of what it pushes.
struct Op {
    text: String,
    pops: usize,
    pushes: usize,
    kind: Kind,
}

fn op(text: impl Into<String>, pops: usize, pushes: usize) -> Op {
    Op { text: text.into(), pops, pushes, kind: Kind::Generic }
}

/// An operation that pushes a location that is not a memory byte address.
fn loc_op(text: impl Into<String>) -> Op {
    Op { text: text.into(), pops: 0, pushes: 1, kind: Kind::Loc }
}

/// An operation that pops `pops` and pushes a memory location in address
/// space `aspace`: a generic value in space 0, else a location.
fn in_space(aspace: u64, text: impl Into<String>, pops: usize) -> Op {
    let kind = if aspace == 0 { Kind::Generic } else { Kind::Loc };
    Op { text: text.into(), pops, pushes: 1, kind }
}

/// An operation that pushes a memory location in the CFA's address space.
fn in_cfa_space(text: impl Into<String>, pops: usize, p: &Palette) -> Op {
    in_space(u64::from(p.cfa_is_loc), text, pops)
}

/// An operation that pops `pops` entries and pushes a value of a base type.
fn typed_op(text: impl Into<String>, pops: usize) -> Op {
    Op { text: text.into(), pops, pushes: 1, kind: Kind::Typed }
}

/// What the operation `text` needs of its operands.
fn need(text: &str) -> Need {
    let any = [
        "DW_OP_drop",
        "DW_OP_dup",
        "DW_OP_swap",
        "DW_OP_over",
        "DW_OP_pick",
        "DW_OP_rot",
        "DW_OP_LLVM_offset_uconst",
        "DW_OP_LLVM_extend",
    ];
    let on_top = ["DW_OP_LLVM_offset", "DW_OP_LLVM_bit_offset", "DW_OP_LLVM_select_bit_piece"];
    if any.iter().any(|p| text.starts_with(p)) {
        Need::Any
    } else if on_top.iter().any(|p| text.starts_with(p)) {
        Need::GenericOnTop
    } else if ["DW_OP_convert", "DW_OP_stack_value"].iter().any(|p| text.starts_with(p)) {
        Need::Value
    } else {
        Need::Generic
    }
}

/// An operation that pops `pops` entries and pushes a composite location.
fn composite_op(text: impl Into<String>, pops: usize) -> Op {
    Op { text: text.into(), pops, pushes: 1, kind: Kind::Loc }
}

/// True one time in `n`, and never once the bytes run out (`arbitrary`'s
/// `ratio` then says true every time, which would make every exhausted
/// input sloppy).
pub(crate) fn rare(u: &mut Unstructured, n: u8) -> Result<bool> {
    Ok(!u.is_empty() && u.ratio(1u8, n)?)
}

/// Small integers, with now and then an extreme one.
fn int(u: &mut Unstructured) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => u.arbitrary()?,
        1 => -(u.int_in_range(1i64..=64)?),
        _ => u.int_in_range(0i64..=64)?,
    })
}

/// What the context offers the generator: the registers it gives values
/// for (and a few more of the target), and the target's address spaces.
struct Palette {
    regs: Vec<u64>,
    /// Registers at least an address wide, for register-based addresses.
    addr_regs: Vec<u64>,
    aspaces: Vec<u64>,
    /// The CFA is in an address space other than 0, so it (and the frame
    /// base) is a location that does not convert to a generic value.
    cfa_is_loc: bool,
}

impl Palette {
    fn of(ctx: &Context) -> Palette {
        let mut regs: Vec<u64> = ctx.registers.keys().copied().collect();
        regs.extend(ctx.target.registers.iter().take(17).map(|r| r.number));
        regs.sort_unstable();
        regs.dedup();
        if regs.is_empty() {
            regs.push(0);
        }
        let wide = |r: &u64| ctx.target.register(*r).is_some_and(|x| x.bits >= 8 * u32::from(ctx.address_bytes()));
        let mut addr_regs: Vec<u64> = regs.iter().copied().filter(wide).collect();
        if addr_regs.is_empty() {
            addr_regs.push(regs[0]);
        }
        let aspaces = ctx.target.address_spaces.iter().map(|a| a.number).collect();
        Palette { regs, addr_regs, aspaces, cfa_is_loc: ctx.cfa_aspace != 0 }
    }

    /// A register of the palette, now and then one the target may not have.
    fn reg(&self, u: &mut Unstructured) -> Result<u64> {
        Ok(if rare(u, 64)? { u.int_in_range(17u64..=80)? } else { *u.choose(&self.regs)? })
    }

    /// A register that holds an address (for `DW_OP_breg*`), now and then
    /// any register.
    fn addr_reg(&self, u: &mut Unstructured) -> Result<u64> {
        if rare(u, 64)? {
            self.reg(u)
        } else {
            Ok(*u.choose(&self.addr_regs)?)
        }
    }

    /// An address space of the target, now and then an undefined one.
    fn aspace(&self, u: &mut Unstructured) -> Result<u64> {
        Ok(if rare(u, 64)? || self.aspaces.is_empty() { u.int_in_range(0u64..=9)? } else { *u.choose(&self.aspaces)? })
    }
}

/// `DW_OP_regN`/`DW_OP_bregN` when `r` has a short form, else the `x` form.
fn reg_op(short: &str, r: u64, operand: Option<i64>) -> String {
    let off = operand.map(|o| format!(" {o}")).unwrap_or_default();
    if r < 32 {
        format!("DW_OP_{short}{r}{off}")
    } else {
        format!("DW_OP_{short}x {r}{off}")
    }
}

/// A base type DIE of the standard unit (`fuzzing::case::standard_unit`)
/// and its size in bytes.
fn base_type(u: &mut Unstructured) -> Result<(u64, u8)> {
    Ok(*u.choose(&[(0x10u64, 4u8), (0x18, 8), (0x20, 8), (0x28, 1)])?)
}

/// One operation that needs at most the entries `stack` holds, of the
/// kinds it needs (an underflow or a kind mismatch now and then, to reach
/// those rules too).
fn one(u: &mut Unstructured, stack: &[Kind], p: &Palette) -> Result<Op> {
    // About one expression in ten has an operation that does not fit.
    let sloppy = rare(u, 200)?;
    let want = if sloppy { usize::MAX } else { stack.len() };
    loop {
        let o = match u.int_in_range(0u8..=66)? {
            0..=3 => op(format!("DW_OP_lit{}", u.int_in_range(0u8..=31)?), 0, 1),
            4 => op(format!("DW_OP_constu {}", int(u)?.unsigned_abs()), 0, 1),
            5 => op(format!("DW_OP_consts {}", int(u)?), 0, 1),
            6 => op(format!("DW_OP_const8u {}", u.arbitrary::<u64>()?), 0, 1),
            7..=8 => op(reg_op("breg", p.addr_reg(u)?, Some(int(u)?)), 0, 1),
            9 => op(format!("DW_OP_bregx {} {}", p.addr_reg(u)?, int(u)?), 0, 1),
            10..=11 => loc_op(reg_op("reg", p.reg(u)?, None)),
            12 => loc_op(format!("DW_OP_regx {}", p.reg(u)?)),
            13 => in_cfa_space(format!("DW_OP_fbreg {}", int(u)?), 0, p),
            14 => in_cfa_space("DW_OP_call_frame_cfa", 0, p),
            15 => op("DW_OP_push_object_address", 0, 1),
            16 => op(format!("DW_OP_addr {:#x}", *u.choose(&[0x601000u64, 0x7ffc0f00, 0x7ffc0fe0, 0x1000, 0])?), 0, 1),
            17..=19 => {
                let name = *u.choose(&[
                    "plus", "minus", "mul", "div", "mod", "and", "or", "xor", "shl", "shr", "shra", "eq", "ne", "lt",
                    "gt", "le", "ge",
                ])?;
                op(format!("DW_OP_{name}"), 2, 1)
            }
            20 => op(format!("DW_OP_{}", u.choose(&["neg", "not", "abs"])?), 1, 1),
            21 => op(format!("DW_OP_plus_uconst {}", int(u)?.unsigned_abs()), 1, 1),
            22 => op("DW_OP_dup", 1, 2),
            23 => op("DW_OP_drop", 1, 0),
            24 => op("DW_OP_swap", 2, 2),
            25 => op("DW_OP_over", 2, 3),
            26 => op(format!("DW_OP_pick {}", u.int_in_range(0u8..=2)?), 3, 4),
            27 => op("DW_OP_rot", 3, 3),
            28 => op("DW_OP_deref", 1, 1),
            29 => op(format!("DW_OP_deref_size {}", u.int_in_range(0u8..=9)?), 1, 1),
            30 => {
                let (t, size) = base_type(u)?;
                typed_op(format!("DW_OP_deref_type {size} {t:#x}"), 1)
            }
            31 => typed_op(format!("DW_OP_regval_type {} {:#x}", p.reg(u)?, base_type(u)?.0), 0),
            32 => match *u.choose(&[0u64, 0, 0x10, 0x18, 0x20, 0x28])? {
                0 => op("DW_OP_convert 0x0", 1, 1),
                t => typed_op(format!("DW_OP_convert {t:#x}"), 1),
            },
            33 => op("DW_OP_stack_value", 1, 1),
            34..=35 => op(format!("DW_OP_deref_size {}", *u.choose(&[1u8, 2, 4, 8])?), 1, 1),
            36 => {
                let (t, size) = base_type(u)?;
                let bytes: Vec<String> =
                    (0..size).map(|_| u.arbitrary::<u8>().map(|b| format!("{b:#x}"))).collect::<Result<_>>()?;
                typed_op(format!("DW_OP_const_type {t:#x} {size} {}", bytes.join(" ")), 0)
            }
            37 => loc_op(format!("DW_OP_implicit_value 4 {:#x} 0 0 0", u.arbitrary::<u8>()?)),
            // The standard unit's DIEs 0x40 and 0x60 push one value, 0x50
            // and 0x70 have no location (fuzzing::case::standard_unit).
            38 => match *u.choose(&[0x40u64, 0x50, 0x60, 0x70])? {
                d @ (0x40 | 0x60) => op(format!("DW_OP_call2 {d:#x}"), 0, 1),
                d => op(format!("DW_OP_call2 {d:#x}"), 0, 0),
            },
            39 => loc_op(format!("DW_OP_implicit_pointer {:#x} {}", *u.choose(&[0x40u64, 0x50])?, int(u)?)),
            40 => op(format!("DW_OP_entry_value({})", reg_op("reg", p.addr_reg(u)?, None)), 0, 1),
            41 => op(format!("DW_OP_LLVM_offset_uconst {}", u.int_in_range(0u8..=16)?), 1, 1),
            42 => op("DW_OP_LLVM_offset", 2, 1),
            43 => loc_op("DW_OP_LLVM_undefined"),
            44 => op("DW_OP_LLVM_bit_offset", 2, 1),
            45 => loc_op(format!("DW_OP_LLVM_call_frame_entry_reg {}", p.addr_reg(u)?)),
            // Address spaces: an address converted into one, a register
            // based address in one, dereferences through one.
            46..=47 => {
                let a = p.aspace(u)?;
                in_space(a, format!("DW_OP_constu {a} DW_OP_LLVM_form_aspace_address"), 1)
            }
            48 => {
                let a = p.aspace(u)?;
                in_space(a, format!("DW_OP_constu {a} DW_OP_LLVM_aspace_bregx {} {}", p.addr_reg(u)?, int(u)?), 0)
            }
            49 => {
                let size = *u.choose(&[1u8, 2, 4, 8])?;
                op(format!("DW_OP_constu {} DW_OP_swap DW_OP_xderef_size {size}", p.aspace(u)?), 1, 1)
            }
            50 => op("DW_OP_LLVM_push_lane", 0, 1),
            51 => loc_op(format!(
                "DW_OP_constu {} DW_OP_LLVM_aspace_implicit_pointer {:#x} {:+}",
                p.aspace(u)?,
                *u.choose(&[0x40u64, 0x50])?,
                int(u)?
            )),
            // Vector composites: a location extended to lanes, a selection
            // by a mask value.
            52 => composite_op(
                format!("DW_OP_LLVM_extend {} {}", *u.choose(&[8u8, 32, 64])?, *u.choose(&[1u8, 2, 4, 64])?),
                1,
            ),
            53 => composite_op(
                format!("DW_OP_LLVM_select_bit_piece {} {}", *u.choose(&[8u8, 32])?, *u.choose(&[1u8, 2, 4])?),
                3,
            ),
            // (DWARF 5 pieces leave an incomplete composite that only
            // more pieces may touch: they come at the end, below.)
            54 => op(format!("DW_OP_LLVM_offset_uconst {}", u.int_in_range(0u8..=4)?), 1, 1),
            55 => {
                let (name, v) = *u.choose(&[
                    ("const1u", 200i64),
                    ("const1s", -100),
                    ("const2u", 0x1234),
                    ("const2s", -0x1234),
                    ("const4u", 0x7ffc0f00),
                    ("const4s", -8),
                    ("const8s", -0x1000),
                ])?;
                op(format!("DW_OP_{name} {v}"), 0, 1)
            }
            56 => op("DW_OP_nop", 0, 0),
            57 => op(format!("DW_OP_constu {} DW_OP_swap DW_OP_xderef", p.aspace(u)?), 1, 1),
            // Raw encodings (`raw:` hex) where the text form takes more
            // than the generator knows: xderef_type, call_ref, the
            // unit's .debug_addr, reinterpret, and the GNU forms (which
            // decode as GNU operations under the gnu profile only).
            58 => typed_op(format!("raw:10 {:02x} 16 a7 08 18", p.aspace(u)?.min(0x7f)), 1),
            59 => op("raw:9a 40 00 00 00", 0, 1),
            60 => op(format!("DW_OP_{} {}", u.choose(&["addrx", "constx"])?, u.int_in_range(0u8..=1)?), 0, 1),
            61 => op("DW_OP_form_tls_address", 1, 1),
            62 => op("raw:a9 00", 1, 1),
            63 => match u.int_in_range(0u8..=12)? {
                0 => op("raw:e0", 1, 1),
                12 => op("raw:f0", 0, 0),
                1 => loc_op(format!("raw:f2 50 00 00 00 {:02x}", u.int_in_range(0u8..=0x3f)?)),
                2 => op("raw:f3 01 50", 0, 1),
                3 => typed_op(format!("raw:f4 10 04 {:08x}", u.arbitrary::<u32>()?), 0),
                4 => typed_op(format!("raw:f5 {:02x} 18", p.addr_reg(u)?.min(0x7f)), 0),
                5 => typed_op("raw:f6 04 10", 1),
                6 => op("raw:f7 00", 1, 1),
                7 => op("raw:f9 00", 1, 1),
                8 => op("raw:fa 40 00 00 00", 0, 1),
                9 => op(format!("raw:fb {:02x}", u.int_in_range(0u8..=1)?), 0, 1),
                10 => op(format!("raw:fc {:02x}", u.int_in_range(0u8..=1)?), 0, 1),
                _ => op("raw:fd 40 00 00 00", 0, 1),
            },
            _ => op(format!("DW_OP_lit{}", u.int_in_range(0u8..=31)?), 0, 1),
        };
        let top = stack.iter().rev().take(o.pops);
        let fits = match need(&o.text) {
            Need::Any => true,
            Need::GenericOnTop => stack.last().is_none_or(|k| *k == Kind::Generic),
            Need::Value => top.into_iter().all(|k| *k != Kind::Loc),
            Need::Generic => top.into_iter().all(|k| *k == Kind::Generic),
        };
        if o.pops <= want && (sloppy || fits) {
            return Ok(o);
        }
        if u.is_empty() {
            return Ok(op("DW_OP_lit0", 0, 1));
        }
    }
}

/// The stack model after `o`: shuffles move kinds, offsets keep their
/// location's kind, everything else pops and pushes `o.kind`.
fn apply(stack: &mut Vec<Kind>, o: &Op) {
    let n = stack.len();
    let at = |i: usize| n.checked_sub(i + 1).map(|j| stack[j]).unwrap_or(Kind::Generic);
    let word = o.text.split_whitespace().next().unwrap_or("");
    match word {
        "DW_OP_dup" => stack.push(at(0)),
        "DW_OP_over" => stack.push(at(1)),
        "DW_OP_pick" => {
            let i = o.text.split_whitespace().nth(1).and_then(|x| x.parse().ok()).unwrap_or(0);
            stack.push(at(i));
        }
        "DW_OP_swap" if n >= 2 => stack.swap(n - 1, n - 2),
        "DW_OP_rot" if n >= 3 => stack[n - 3..].rotate_right(1),
        "DW_OP_LLVM_offset_uconst" => {}
        "DW_OP_LLVM_offset" | "DW_OP_LLVM_bit_offset" => {
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

/// A mostly well-formed expression for `ctx` (the rich context's target
/// and vendor profile): up to 24 operations, each only when the stack holds
/// what it pops, with now and then a forward `DW_OP_skip`/`DW_OP_bra` to
/// the start of a later operation. Operations the assembler refuses are
/// left out. Returns the expression bytes.
pub fn expression(u: &mut Unstructured, ctx: &Context) -> Result<Vec<u8>> {
    let n = u.int_in_range(1usize..=24)?;
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut branches: Vec<(usize, bool, usize)> = Vec::new(); // (index, bra, ops skipped)
    let mut stack: Vec<Kind> = Vec::new();
    let format = ctx.cu.as_ref().map(|c| c.format).unwrap_or_default();
    let asm = |t: &str| -> std::result::Result<Vec<u8>, ()> {
        match t.strip_prefix("raw:") {
            Some(h) => crate::asm::cfi::parse_block(&format!("{{{h}}}")).ok_or(()),
            None => {
                crate::asm::expr::assemble(t, &ctx.target, &ctx.vendor, format, ctx.address_bytes()).map_err(|_| ())
            }
        }
    };
    let palette = Palette::of(ctx);
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
                let o = one(u, &[], &palette)?;
                if let (Ok(b), Ok(d)) = (asm(&o.text), asm("DW_OP_drop")) {
                    if o.pushes == 1 {
                        parts.extend([b, d]);
                        block += 2;
                    }
                }
            }
            branches.push((at, bra, block));
            continue;
        }
        let o = one(u, &stack, &palette)?;
        if let Ok(b) = asm(&o.text) {
            parts.push(b);
            apply(&mut stack, &o);
        }
    }
    // Now and then a composite: the top entry as a piece, then another
    // location as the next piece (DWARF 5 pieces, completed with
    // hetero-2020's DW_OP_LLVM_piece_end where the profile has it).
    if !stack.is_empty() && rare(u, 4)? {
        let first = *u.choose(&[
            "DW_OP_piece 1",
            "DW_OP_piece 2",
            "DW_OP_piece 4",
            "DW_OP_bit_piece 8 0",
            "DW_OP_bit_piece 5 3",
        ])?;
        let second = match u.int_in_range(0u8..=3)? {
            0 => reg_op("reg", palette.reg(u)?, None),
            1 => reg_op("breg", palette.addr_reg(u)?, Some(0)),
            2 => "DW_OP_LLVM_undefined".to_string(),
            _ => "DW_OP_lit5 DW_OP_stack_value".to_string(),
        };
        let last = *u.choose(&["DW_OP_piece 1", "DW_OP_piece 2", "DW_OP_piece 4", "DW_OP_bit_piece 12 4"])?;
        if let Ok(bytes) = asm(&format!("{first} {second} {last}")) {
            parts.push(bytes);
            if let Ok(end) = asm("DW_OP_LLVM_piece_end") {
                parts.push(end);
            }
        }
    }
    // Branch displacements: the bytes of the operations skipped, so the
    // target is an operation start (or the end of the expression).
    for &(i, bra, skip) in &branches {
        let d: usize = parts[i + 1..].iter().take(skip).map(|p| p.len()).sum();
        let d = u16::try_from(d).unwrap_or(0);
        let mut b = vec![if bra { 0x28 } else { 0x2f }];
        b.extend(d.to_le_bytes());
        parts[i] = b;
    }
    Ok(parts.concat())
}

/// A generated context ([`context`]) and an expression for it
/// ([`expression`]): the input of the `expr_ops` target. Returns the case
/// (for minimising and writing) and its loaded form (to evaluate).
///
/// Errors: `arbitrary`'s, when the bytes run out early. A context that
/// does not load is a generator bug and panics (the fuzzer reports it).
pub fn fuzz_case(u: &mut Unstructured) -> Result<(FuzzCase, ExprCase)> {
    let mut fc = context(u)?;
    let mut case = fc.load().unwrap_or_else(|e| panic!("a generated context does not load: {e}"));
    fc.expr = expression(u, &case.ctx)?;
    case.expr = fc.expr.clone().into();
    Ok((fc, case))
}
