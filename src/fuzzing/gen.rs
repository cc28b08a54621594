//! Structured generators driven by `arbitrary::Unstructured`: mostly
//! well-formed DWARF expressions (stack-depth aware, forward branches to
//! operation starts, operands the rich context can answer) and CFI
//! programs (a CIE and FDEs of CFA and register-rule instructions), so that
//! evaluation goes deep instead of stopping at decoding. The same bytes
//! drive the fuzz targets and the property tests.

use crate::asm::cfi::CfiAsmParams;
use crate::cfi::write::{build, CieLayout, FdeLayout, SectionLayout};
use crate::cfi::{CfiSection, FrameKind};
use crate::context::{Context, Format};
use crate::encoding::eh_pe;
use crate::target::Target;
use arbitrary::{Result, Unstructured};
use std::sync::Arc;

/// One generated operation: its text, entries popped and pushed, and
/// whether what it pushes is a location that does not convert to a value
/// (a register, implicit, undefined or composite location).
struct Op {
    text: String,
    pops: usize,
    pushes: usize,
    loc: bool,
}

fn op(text: impl Into<String>, pops: usize, pushes: usize) -> Op {
    Op { text: text.into(), pops, pushes, loc: false }
}

/// An operation that pushes a location that is not a memory byte address.
fn loc_op(text: impl Into<String>) -> Op {
    Op { text: text.into(), pops: 0, pushes: 1, loc: true }
}

/// Whether the operation `text` needs its operands to be values (the
/// arithmetic, dereferencing and conversion operations).
fn wants_values(text: &str) -> bool {
    !["DW_OP_drop", "DW_OP_dup", "DW_OP_swap", "DW_OP_over", "DW_OP_pick", "DW_OP_rot", "DW_OP_LLVM_offset"]
        .iter()
        .any(|p| text.starts_with(p))
}

/// Small integers, with now and then an extreme one.
fn int(u: &mut Unstructured) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => u.arbitrary()?,
        1 => -(u.int_in_range(1i64..=64)?),
        _ => u.int_in_range(0i64..=64)?,
    })
}

/// A register the x86-64 rich context gives (0..=16), sometimes another.
fn reg(u: &mut Unstructured) -> Result<u64> {
    Ok(if u.ratio(1u8, 16)? { u.int_in_range(17u64..=80)? } else { u.int_in_range(0u64..=16)? })
}

/// A base type DIE of the rich context (`src/fuzzing/context.yaml`).
fn base_type(u: &mut Unstructured) -> Result<u64> {
    Ok(*u.choose(&[0x10u64, 0x18, 0x20, 0x28])?)
}

/// One operation that needs at most the entries `stack` holds (`true`: a
/// location that is not a value), and values where it computes (an
/// underflow or a kind mismatch now and then, to reach those rules too).
fn one(u: &mut Unstructured, stack: &[bool]) -> Result<Op> {
    let sloppy = u.ratio(1u8, 40)?;
    let want = if sloppy { usize::MAX } else { stack.len() };
    loop {
        let o = match u.int_in_range(0u8..=45)? {
            0..=3 => op(format!("DW_OP_lit{}", u.int_in_range(0u8..=31)?), 0, 1),
            4 => op(format!("DW_OP_constu {}", int(u)?.unsigned_abs()), 0, 1),
            5 => op(format!("DW_OP_consts {}", int(u)?), 0, 1),
            6 => op(format!("DW_OP_const8u {}", u.arbitrary::<u64>()?), 0, 1),
            7..=8 => op(format!("DW_OP_breg{} {:+}", u.int_in_range(0u8..=16)?, int(u)?), 0, 1),
            9 => op(format!("DW_OP_bregx {} {}", reg(u)?, int(u)?), 0, 1),
            10..=11 => loc_op(format!("DW_OP_reg{}", u.int_in_range(0u8..=16)?)),
            12 => loc_op(format!("DW_OP_regx {}", reg(u)?)),
            13 => op(format!("DW_OP_fbreg {}", int(u)?), 0, 1),
            14 => op("DW_OP_call_frame_cfa", 0, 1),
            15 => op("DW_OP_push_object_address", 0, 1),
            16 => op(format!("DW_OP_addr {:#x}", *u.choose(&[0x601000u64, 0x7ffc0f00, 0x7ffc0fe0, 0])?), 0, 1),
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
            30 => op(format!("DW_OP_deref_type {} {:#x}", *u.choose(&[1u8, 4, 8])?, base_type(u)?), 1, 1),
            31 => op(format!("DW_OP_regval_type {} {:#x}", reg(u)?, base_type(u)?), 0, 1),
            32 => op(format!("DW_OP_convert {:#x}", *u.choose(&[0u64, 0x10, 0x18, 0x20, 0x28])?), 1, 1),
            33 => op("DW_OP_stack_value", 1, 1),
            34..=36 => op(format!("DW_OP_deref_size {}", *u.choose(&[1u8, 2, 4, 8])?), 1, 1),
            37 => loc_op(format!("DW_OP_implicit_value 4 {:#x} 0 0 0", u.arbitrary::<u8>()?)),
            38 => op(format!("DW_OP_call2 {:#x}", *u.choose(&[0x40u64, 0x50, 0x60, 0x70])?), 0, 0),
            39 => loc_op(format!("DW_OP_implicit_pointer {:#x} {}", *u.choose(&[0x40u64, 0x50])?, int(u)?)),
            40 => op(format!("DW_OP_entry_value(DW_OP_reg{})", u.int_in_range(0u8..=16)?), 0, 1),
            41 => op(format!("DW_OP_LLVM_offset_uconst {}", u.int_in_range(0u8..=16)?), 1, 1),
            42 => op("DW_OP_LLVM_offset", 2, 1),
            43 => loc_op("DW_OP_LLVM_undefined"),
            44 => op(*u.choose(&["DW_OP_LLVM_form_aspace_address", "DW_OP_LLVM_bit_offset"])?, 2, 1),
            _ => loc_op(format!("DW_OP_LLVM_call_frame_entry_reg {}", u.int_in_range(0u8..=16)?)),
        };
        let top_values = stack.iter().rev().take(o.pops).all(|l| !l);
        if o.pops <= want && (sloppy || top_values || !wants_values(&o.text)) {
            return Ok(o);
        }
        if u.is_empty() {
            return Ok(op("DW_OP_lit0", 0, 1));
        }
    }
}

/// The stack model after `o`: shuffles move kinds, offsets keep their
/// location's kind, everything else pops and pushes `o.loc`.
fn apply(stack: &mut Vec<bool>, o: &Op) {
    let n = stack.len();
    let at = |i: usize| n.checked_sub(i + 1).map(|j| stack[j]).unwrap_or(false);
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
            stack.extend(std::iter::repeat_n(o.loc, o.pushes));
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
    let mut stack: Vec<bool> = Vec::new();
    let format = ctx.cu.as_ref().map(|c| c.format).unwrap_or_default();
    let asm = |t: &str| crate::asm::expr::assemble(t, &ctx.target, &ctx.vendor, format, ctx.address_bytes());
    for _ in 0..n {
        if u.is_empty() {
            break;
        }
        if stack.last() == Some(&false) && u.ratio(1u8, 12)? {
            let bra = u.arbitrary::<bool>()?;
            branches.push((parts.len(), bra, u.int_in_range(0usize..=3)?));
            parts.push(Vec::new());
            if bra {
                stack.pop();
            }
            continue;
        }
        let o = one(u, &stack)?;
        if let Ok(b) = asm(&o.text) {
            parts.push(b);
            apply(&mut stack, &o);
        }
    }
    // Now and then a composite: the top entry as a piece, then another
    // location as the next piece (DWARF 5 pieces, completed with
    // hetero-2020's DW_OP_LLVM_piece_end where the profile has it).
    if !stack.is_empty() && u.ratio(1u8, 4)? {
        let (a, b) = (*u.choose(&[1u64, 2, 4, 8])?, *u.choose(&[1u64, 2, 4, 8])?);
        let second =
            *u.choose(&["DW_OP_reg0", "DW_OP_breg7 +0", "DW_OP_LLVM_undefined", "DW_OP_lit5 DW_OP_stack_value"])?;
        let text = format!("DW_OP_piece {a} {second} DW_OP_piece {b}");
        if let Ok(bytes) = asm(&text) {
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

/// One call frame instruction as text: CFA definitions (including the
/// address-space forms), register rules with small expressions,
/// remember/restore, advances (not in a CIE).
fn cfi_insn(u: &mut Unstructured, cie: bool) -> Result<String> {
    let r = u.int_in_range(0u8..=17)?;
    let off = u.int_in_range(-8i64..=8)? * 8;
    let hi = if cie { 11 } else { 15 };
    Ok(match u.int_in_range(0u8..=hi)? {
        0 => format!("DW_CFA_def_cfa: reg{r} {off:+}"),
        1 => format!("DW_CFA_def_cfa_offset: {:+}", off.unsigned_abs()),
        2 => format!("DW_CFA_def_cfa_register: reg{r}"),
        3 => format!("DW_CFA_offset: reg{r} {:+}", -(off.abs())),
        4 => format!("DW_CFA_val_offset: reg{r} {off:+}"),
        5 => format!("DW_CFA_register: reg{r} reg{}", u.int_in_range(0u8..=17)?),
        6 => format!("DW_CFA_same_value: reg{r}"),
        7 => format!("DW_CFA_undefined: reg{r}"),
        8 => format!("DW_CFA_expression: reg{r} {{{}}}", block(u)?),
        9 => format!("DW_CFA_val_expression: reg{r} {{{}}}", block(u)?),
        10 => format!("DW_CFA_def_cfa_expression: {{{}}}", block(u)?),
        11 => "DW_CFA_nop".to_string(),
        12 => format!("DW_CFA_advance_loc: {}", u.int_in_range(1u8..=8)?),
        13 => "DW_CFA_remember_state".to_string(),
        14 => "DW_CFA_restore_state".to_string(),
        _ => format!("DW_CFA_restore: reg{r}"),
    })
}

/// A small CFI expression block as hex: the CFA or a register plus an
/// offset, sometimes dereferenced.
fn block(u: &mut Unstructured) -> Result<String> {
    let b: &[&str] = &["77 08", "77 10 06", "70 00", "9c", "08 10 22", "77 00 23 08", "53", "e6 03", "e3"];
    Ok(u.choose(b)?.to_string())
}

/// A frame section for `target`: one CIE (a CFA definition and a return
/// address rule, then up to 4 instructions) and 1 to 4 FDEs covering
/// [0x1000 * (i + 1), + 0x100) with up to 12 instructions each.
/// `.debug_frame` or `.eh_frame`. `None` if the layout cannot be written.
pub fn cfi_section(u: &mut Unstructured, target: &Arc<Target>) -> Result<Option<Arc<CfiSection>>> {
    let eh = u.arbitrary::<bool>()?;
    let p = CfiAsmParams {
        code_align: 1,
        data_align: -8,
        address_size: target.address_bytes(),
        segment_selector_size: 0,
        pointer_encoding: if eh { eh_pe::UDATA8 } else { eh_pe::ABSPTR },
    };
    let ra = target.return_address_register;
    let mut cie = vec![format!("DW_CFA_def_cfa: reg7 +8"), format!("DW_CFA_offset: reg{ra} -8")];
    for _ in 0..u.int_in_range(0u8..=4)? {
        cie.push(cfi_insn(u, true)?);
    }
    let asm = |v: &[String]| crate::asm::cfi::assemble(&v.join("; "), target, &p).unwrap_or_default();
    let mut fdes = Vec::new();
    for i in 0..u.int_in_range(1u64..=4)? {
        let mut f = Vec::new();
        for _ in 0..u.int_in_range(0u8..=12)? {
            f.push(cfi_insn(u, false)?);
        }
        fdes.push(FdeLayout {
            segment: 0,
            pc_begin: 0x1000 * (i + 1),
            pc_range: 0x100,
            lsda: None,
            augmentation_data: None,
            instructions: asm(&f),
        });
    }
    let layout = SectionLayout {
        kind: if eh { FrameKind::EhFrame } else { FrameKind::DebugFrame },
        format: Format::Dwarf32,
        address: 0x4000,
        text_base: None,
        data_base: None,
        pad: true,
        cie: CieLayout {
            version: if eh { 1 } else { 4 },
            augmentation: if eh { b"zR".to_vec() } else { Vec::new() },
            address_size: None,
            segment_selector_size: 0,
            code_align: 1,
            data_align: -8,
            return_address_register: ra,
            eh_ptr: 0,
            fde_encoding: eh.then_some(eh_pe::UDATA8),
            lsda_encoding: None,
            personality: None,
            augmentation_data: None,
            instructions: asm(&cie),
        },
        fdes,
    };
    Ok(build(&layout, target)
        .ok()
        .map(|(bytes, _)| Arc::new(CfiSection::new(layout.kind, bytes, 0x4000, target.clone()))))
}
