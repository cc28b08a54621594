//! Builds the row table of one FDE with gimli's `UnwindTable` and maps it to
//! a normalised [`RowTable`].

use super::{kind_of, rule_of, unsupported_text, ErrorKind};
use crate::case::CfiCase;
use dwarfcheck_core::cfi::FrameKind;
use dwarfcheck_core::encoding::cfa;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{CfaRule, CfiOutcome, RegisterRule, Row, RowTable};
use dwarfcheck_core::target::{Arch, Endian};
use gimli::{
    BaseAddresses, DebugFrame, DebugFrameOffset, EhFrame, EhFrameOffset, EndianSlice, RunTimeEndian, UnwindContext,
    UnwindSection,
};
use std::collections::BTreeMap;

type R<'a> = EndianSlice<'a, RunTimeEndian>;

/// AArch64's `RA_SIGN_STATE` pseudo-register, where gimli records
/// `DW_CFA_AARCH64_negate_ra_state` as a constant rule (AADWARF64).
const AARCH64_RA_SIGN_STATE: u16 = 34;

/// Builds the row table of the FDE at `case.fde_offset` with gimli (no
/// `catch_unwind` here; [`super::Gimli`] adds it).
///
/// The section is parsed as `.debug_frame` or `.eh_frame` with the target's
/// byte order and address size; pointer bases come from the section's
/// address and its text/data bases (`DW_EH_PE_datarel` uses the data base,
/// the GOT on x86-64). Returns the normalised table; gimli errors as
/// `IllFormed`/`EvalError` (`gimli:<ErrorVariant>`, no offset); gimli's
/// fixed limits (192 rules, `remember_state` depth 4, augmentation letters
/// z L P R S only) as `Unsupported`.
pub fn frame_table(case: &CfiCase) -> CfiOutcome {
    let s = &case.section;
    let endian = if s.target.endian == Endian::Big { RunTimeEndian::Big } else { RunTimeEndian::Little };
    let vendor = if s.target.arch == Arch::Aarch64 { gimli::Vendor::AArch64 } else { gimli::Vendor::Default };
    let address_size = s.target.address_bytes();
    let mut bases = BaseAddresses::default().set_eh_frame(s.address);
    if let Some(t) = s.text_base {
        bases = bases.set_text(t);
    }
    if let Some(d) = s.data_base {
        bases = bases.set_got(d);
    }
    let Ok(offset) = usize::try_from(case.fde_offset) else {
        return CfiOutcome::Failed(Failure::IllFormed {
            rule: dwarfcheck_core::rules::RuleId::new("gimli:OffsetOutOfBounds"),
            at: None,
        });
    };
    let result = match s.kind {
        FrameKind::DebugFrame => {
            let mut sec = DebugFrame::new(&s.bytes, endian);
            sec.set_address_size(address_size);
            sec.set_vendor(vendor);
            rows(&sec, &bases, DebugFrameOffset(offset))
        }
        FrameKind::EhFrame => {
            let mut sec = EhFrame::new(&s.bytes, endian);
            sec.set_address_size(address_size);
            sec.set_vendor(vendor);
            rows(&sec, &bases, EhFrameOffset(offset))
        }
    };
    match result {
        Ok(rows) => CfiOutcome::Table(RowTable { fde_offset: case.fde_offset, rows }.normalize()),
        // An instruction the project's DW_CFA table defines (e.g.
        // DW_CFA_GNU_negative_offset_extended) that gimli does not decode.
        Err(Fail::Gimli(gimli::Error::UnknownCallFrameInstruction(op)))
            if cfa::lookup(s.target.arch, op.0).is_some() =>
        {
            let name = cfa::lookup(s.target.arch, op.0).map_or("?", |c| c.name);
            CfiOutcome::Failed(Failure::Unsupported { what: format!("gimli does not implement {name}") })
        }
        Err(Fail::Gimli(e)) => match kind_of(&e) {
            ErrorKind::IllFormed => CfiOutcome::Failed(Failure::IllFormed { rule: rule_of(&e), at: None }),
            ErrorKind::EvalError => CfiOutcome::Failed(Failure::EvalError { rule: rule_of(&e), at: None }),
            ErrorKind::Unsupported => CfiOutcome::Failed(Failure::Unsupported { what: unsupported_text(&e) }),
        },
        Err(Fail::Unsupported(what)) => CfiOutcome::Failed(Failure::Unsupported { what }),
    }
}

/// Why a table could not be built.
enum Fail {
    Gimli(gimli::Error),
    Unsupported(String),
}

impl From<gimli::Error> for Fail {
    fn from(e: gimli::Error) -> Self {
        Fail::Gimli(e)
    }
}

/// Parses the FDE and its CIE, and collects every row gimli produces.
fn rows<'a, S>(sec: &S, bases: &BaseAddresses, offset: S::Offset) -> Result<Vec<Row>, Fail>
where
    S: UnwindSection<R<'a>>,
{
    let fde = sec.fde_from_offset(bases, offset, S::cie_from_offset)?;
    // gimli's context is large (fixed-size rule arrays); reuse one per
    // thread. `rows` resets it before use.
    thread_local! {
        static UNWIND: std::cell::RefCell<Box<UnwindContext<usize>>> = std::cell::RefCell::new(Box::new(UnwindContext::new()));
    }
    UNWIND.with(|cell| match cell.try_borrow_mut() {
        Ok(mut uctx) => collect(sec, bases, &fde, &mut uctx),
        // Re-entered (cannot happen unless a panic left it borrowed): use a fresh one.
        Err(_) => collect(sec, bases, &fde, &mut Box::new(UnwindContext::new())),
    })
}

fn collect<'a, S>(
    sec: &S,
    bases: &BaseAddresses,
    fde: &gimli::FrameDescriptionEntry<R<'a>>,
    uctx: &mut UnwindContext<usize>,
) -> Result<Vec<Row>, Fail>
where
    S: UnwindSection<R<'a>>,
{
    let mut table = fde.rows(sec, bases, uctx)?;
    let mut out = Vec::new();
    while let Some(row) = table.next_row()? {
        let cfa = match row.cfa() {
            gimli::CfaRule::RegisterAndOffset { register, offset } => {
                CfaRule::RegOffset { register: u64::from(register.0), offset: *offset, aspace: 0 }
            }
            gimli::CfaRule::Expression(e) => CfaRule::Expression { expr: expr_bytes(sec, e)? },
        };
        let mut registers = BTreeMap::new();
        for (reg, rule) in row.registers() {
            let r = match rule {
                gimli::RegisterRule::Undefined => RegisterRule::Undefined,
                gimli::RegisterRule::SameValue => RegisterRule::SameValue,
                gimli::RegisterRule::Offset(o) => RegisterRule::Offset { offset: *o },
                gimli::RegisterRule::ValOffset(o) => RegisterRule::ValOffset { offset: *o },
                gimli::RegisterRule::Register(r) => RegisterRule::Register { register: u64::from(r.0) },
                gimli::RegisterRule::Expression(e) => RegisterRule::Expression { expr: expr_bytes(sec, e)? },
                gimli::RegisterRule::ValExpression(e) => RegisterRule::ValExpression { expr: expr_bytes(sec, e)? },
                gimli::RegisterRule::Constant(c) if reg.0 == AARCH64_RA_SIGN_STATE => {
                    RegisterRule::RaSigned { signed: c & 1 == 1 }
                }
                other => return Err(Fail::Unsupported(format!("gimli register rule {other:?}"))),
            };
            registers.insert(u64::from(reg.0), r);
        }
        out.push(Row { start: row.start_address(), end: row.end_address(), cfa, registers });
    }
    Ok(out)
}

/// The bytes of an expression held in the section.
fn expr_bytes<'a, S: UnwindSection<R<'a>>>(sec: &S, e: &gimli::UnwindExpression<usize>) -> Result<Vec<u8>, Fail> {
    Ok(e.get(sec)?.0.slice().to_vec())
}
