//! Attribute contexts and location lists for the gimli adapter: what a
//! debugger built on gimli 0.34 does with an attribute's value before and
//! after `gimli::Evaluation` (docs/consumers.md, "Attributes and location
//! lists").
//!
//! - Location lists go through gimli's own `LocListIter` (base address, every
//!   `DW_LLE_*` kind, `.debug_loc` for units before version 5); the entries
//!   whose range holds `ctx.pc` are evaluated and their places united; no
//!   matching entry gives the undefined location.
//! - Attribute contexts set what gimli can take: one initial stack entry
//!   (`set_initial_value`) and an object address. `DW_AT_use_location` needs
//!   two entries and is unsupported; `DW_AT_LLVM_*` attributes are outside
//!   gimli's DWARF 5.

use super::expr::evaluate;
use crate::case::ExprCase;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::context::{AttrForm, Attribute, Context, ResultKind};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{NormalLocation, Outcome, SingleLocation, Source};
use dwarfcheck_core::rules::RuleId;

fn unsupported(what: &str) -> Outcome {
    Outcome::Failed(Failure::Unsupported { what: what.to_string() })
}

/// Evaluates a case that names an attribute or a non-exprloc form.
pub fn evaluate_case(case: &ExprCase) -> Outcome {
    let mut ctx = (*case.ctx).clone();
    match case.attribute {
        None => {}
        Some(Attribute::UseLocation) => {
            return unsupported("gimli's Evaluation takes one initial stack entry; DW_AT_use_location needs two")
        }
        Some(Attribute::LlvmLanes | Attribute::LlvmLanePc | Attribute::LlvmActiveLane) => {
            return unsupported("DW_AT_LLVM_* attributes are not DWARF 5")
        }
        Some(a) => {
            let one_entry = matches!(a, Attribute::DataMemberLocation | Attribute::VtableElemLocation);
            ctx.result_kind = Some(match a {
                Attribute::CallValue | Attribute::CallDataValue => ResultKind::Value,
                _ => ResultKind::Location,
            });
            if one_entry {
                // The containing object's location: the top of the given stack.
                let Some(top) = ctx.initial_stack.last().cloned() else {
                    return Outcome::Failed(Failure::EvalError {
                        rule: RuleId::new("gimli:NoContainingObject"),
                        at: None,
                    });
                };
                ctx.initial_stack = vec![top];
            } else {
                ctx.initial_stack.clear();
            }
            if a != Attribute::DataLocation {
                ctx.object = None;
            }
        }
    }
    let out = match &case.form {
        None => evaluate(&case.expr, &ctx),
        Some(AttrForm::Exprloc(e)) => evaluate(e, &ctx),
        Some(AttrForm::Constant(b)) => constant_member(*b, &ctx),
        Some(form @ (AttrForm::LocList { .. } | AttrForm::LocListX { .. })) => location_list(form, &ctx),
    };
    if case.attribute == Some(Attribute::FrameBase) {
        return frame_base_register(out, &ctx);
    }
    out
}

/// `DW_AT_data_member_location` as a constant: the containing object's
/// address plus the constant (what gimli users do by hand; gimli has no
/// helper). Only a memory address in the default address space can be
/// moved this way.
fn constant_member(b: u64, ctx: &Context) -> Outcome {
    use dwarfcheck_core::context::Entry;
    match ctx.initial_stack.last() {
        Some(Entry::Location(l)) => match l.places.as_slice() {
            [SingleLocation::Simple(Source::Memory { aspace: 0, bit_addr, thread: None, lane: None })]
                if bit_addr % 8 == 0 =>
            {
                let a = ((bit_addr / 8) as u64).wrapping_add(b);
                Outcome::Location(NormalLocation {
                    places: vec![SingleLocation::Simple(Source::memory(0, u128::from(a) * 8))],
                })
            }
            _ => unsupported("a member offset applied to a location that is not a byte address"),
        },
        Some(Entry::Value(v)) => {
            let a = (v.to_u128() as u64).wrapping_add(b);
            Outcome::Location(NormalLocation {
                places: vec![SingleLocation::Simple(Source::memory(0, u128::from(a) * 8))],
            })
        }
        None => Outcome::Failed(Failure::EvalError { rule: RuleId::new("gimli:NoContainingObject"), at: None }),
    }
}

/// A frame base that is a register means the address the register holds.
fn frame_base_register(out: Outcome, ctx: &Context) -> Outcome {
    let Outcome::Location(l) = &out else { return out };
    let [SingleLocation::Simple(Source::Register { regno, bit_offset: 0 })] = l.places.as_slice() else {
        return out;
    };
    let mut buf = vec![0u8; usize::from(ctx.address_bytes())];
    match ctx.read_register(*regno, 0, &mut buf) {
        Ok(()) => {
            let mut v = [0u8; 8];
            if ctx.target.endian == dwarfcheck_core::target::Endian::Big {
                v[8 - buf.len()..].copy_from_slice(&buf);
            } else {
                v[..buf.len()].copy_from_slice(&buf);
            }
            let a = if ctx.target.endian == dwarfcheck_core::target::Endian::Big {
                u64::from_be_bytes(v)
            } else {
                u64::from_le_bytes(v)
            };
            Outcome::Location(NormalLocation {
                places: vec![SingleLocation::Simple(Source::memory(0, u128::from(a) * 8))],
            })
        }
        Err(_) => Outcome::Failed(Failure::EvalError { rule: RuleId::new("gimli:RegisterUnavailable"), at: None }),
    }
}

/// Every entry of the list whose range holds `ctx.pc`, evaluated and united.
fn location_list(form: &AttrForm, ctx: &Context) -> Outcome {
    let Some(cu) = ctx.cu.as_ref() else {
        return Outcome::Failed(Failure::EvalError { rule: RuleId::new("gimli:NoUnit"), at: None });
    };
    let endian = if ctx.target.endian == dwarfcheck_core::target::Endian::Big {
        gimli::RunTimeEndian::Big
    } else {
        gimli::RunTimeEndian::Little
    };
    let format = if cu.format == dwarfcheck_core::encoding::Format::Dwarf64 {
        gimli::Format::Dwarf64
    } else {
        gimli::Format::Dwarf32
    };
    let encoding = gimli::Encoding { address_size: cu.address_size, format, version: cu.version };
    let lists = gimli::LocationLists::new(
        gimli::DebugLoc::new(&cu.debug_loc, endian),
        gimli::DebugLocLists::new(&cu.debug_loclists, endian),
    );
    let ill =
        |e: gimli::Error| Outcome::Failed(Failure::IllFormed { rule: RuleId::new(format!("gimli:{e:?}")), at: None });
    let offset = match form {
        AttrForm::LocList { offset } => gimli::LocationListsOffset(*offset as usize),
        AttrForm::LocListX { index } => match lists.get_offset(
            encoding,
            gimli::DebugLocListsBase(cu.loclists_base as usize),
            gimli::DebugLocListsIndex(*index as usize),
        ) {
            Ok(o) => o,
            Err(e) => return ill(e),
        },
        _ => return unsupported("not a location list"),
    };
    let debug_addr = gimli::DebugAddr::from(gimli::EndianSlice::new(&cu.debug_addr, endian));
    let mut iter = match lists.locations(
        offset,
        encoding,
        cu.base_address.unwrap_or(0),
        &debug_addr,
        gimli::DebugAddrBase(cu.addr_base as usize),
    ) {
        Ok(i) => i,
        Err(e) => return ill(e),
    };
    let Some(pc) = ctx.pc else {
        return Outcome::Failed(Failure::EvalError { rule: RuleId::new("gimli:NoProgramLocation"), at: None });
    };
    // Each entry's expression runs with result kind location, no object and
    // an empty initial stack (hetero-2020 "Location List Expressions";
    // rule loclist.union), whatever the attribute gave the list.
    let mut entry_ctx = ctx.clone();
    entry_ctx.result_kind = Some(ResultKind::Location);
    entry_ctx.object = None;
    entry_ctx.initial_stack.clear();
    let ctx = &entry_ctx;
    // Bounded entries first; a default entry (DWARF 5 §2.6.2) applies only
    // when none of them holds pc. Decoding errors are ill-formed lists;
    // addresses that cannot be resolved (`.debug_addr`) are evaluation
    // errors.
    let mut places: Vec<SingleLocation> = Vec::new();
    let mut defaults: Vec<&[u8]> = Vec::new();
    let mut matched = false;
    let mut entries = 0usize;
    loop {
        let raw = match iter.next_raw() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return ill(e),
        };
        entries += 1;
        if entries > cu.debug_loclists.len() + cu.debug_loc.len() + 1 {
            return ill(gimli::Error::UnexpectedEof(gimli::ReaderOffsetId(0)));
        }
        if let gimli::RawLocListEntry::DefaultLocation { data } = &raw {
            defaults.push(data.0.slice());
            continue;
        }
        let entry = match iter.convert_raw(raw) {
            Ok(Some(e)) => e,
            Ok(None) => continue,
            Err(e) => {
                return Outcome::Failed(Failure::EvalError { rule: RuleId::new(format!("gimli:{e:?}")), at: None })
            }
        };
        if !(entry.range.begin <= pc && pc < entry.range.end) {
            continue;
        }
        matched = true;
        match evaluate(entry.data.0.slice(), ctx) {
            Outcome::Location(l) => places.extend(l.places),
            other => return other,
        }
    }
    if !matched {
        for d in defaults {
            match evaluate(d, ctx) {
                Outcome::Location(l) => places.extend(l.places),
                other => return other,
            }
        }
    }
    if places.is_empty() {
        places.push(SingleLocation::Simple(Source::Undefined));
    }
    places.sort();
    places.dedup();
    Outcome::Location(NormalLocation { places })
}
