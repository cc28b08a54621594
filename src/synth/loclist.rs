//! A case's location list, re-written with gimli's writer: the case's
//! `.debug_loclists` (unit version 5) or `.debug_loc` (version 4 and
//! earlier) bytes are read with gimli's reader entry by entry (DWARF 5
//! §2.6.2, §7.7.3) and each entry becomes the same entry of a
//! `gimli::write::LocationList`, its expression passed through the same
//! DIE re-pointing as the variable's.

use super::{Rewrite, Unrepresentable};
use dwarfcheck_core::context::{AttrForm, CompUnit};
use gimli::write::{Address, Expression, Location, LocationList};
use gimli::{LittleEndian, RawLocListEntry};

/// The entries of the list `form` names in `cu`, with each expression
/// rewritten by `rewrite`.
///
/// Errors: [`Unrepresentable`] for entries that index `.debug_addr`
/// (`DW_LLE_base_addressx`, `startx_endx`, `startx_length`), a list gimli's
/// reader cannot read, or an expression `rewrite` refuses.
pub fn entries(cu: &CompUnit, form: &AttrForm, rewrite: &Rewrite<'_>) -> Result<LocationList, Unrepresentable> {
    let bad = |e: gimli::Error| Unrepresentable(format!("location list: {e}"));
    let format = match cu.format {
        dwarfcheck_core::encoding::Format::Dwarf32 => gimli::Format::Dwarf32,
        dwarfcheck_core::encoding::Format::Dwarf64 => gimli::Format::Dwarf64,
    };
    let encoding = gimli::Encoding { format, version: cu.version, address_size: cu.address_size };
    let lists = gimli::LocationLists::new(
        gimli::DebugLoc::new(&cu.debug_loc, LittleEndian),
        gimli::DebugLocLists::new(&cu.debug_loclists, LittleEndian),
    );
    let offset = match form {
        AttrForm::LocList { offset } => gimli::LocationListsOffset(*offset as usize),
        AttrForm::LocListX { index } => lists
            .get_offset(
                encoding,
                gimli::DebugLocListsBase(cu.loclists_base as usize),
                gimli::DebugLocListsIndex(*index as usize),
            )
            .map_err(bad)?,
        _ => return Err(Unrepresentable("not a location list".into())),
    };
    let mut raw = lists.raw_locations(offset, encoding).map_err(bad)?;
    let mut out = Vec::new();
    let expr =
        |d: gimli::read::Expression<gimli::EndianSlice<'_, LittleEndian>>| rewrite(d.0.slice()).map(Expression::raw);
    // A list longer than this is not a case anyone writes by hand.
    const MAX_ENTRIES: usize = 4096;
    while let Some(e) = raw.next().map_err(bad)? {
        if out.len() == MAX_ENTRIES {
            return Err(Unrepresentable(format!("a location list of more than {MAX_ENTRIES} entries")));
        }
        out.push(match e {
            RawLocListEntry::AddressOrOffsetPair { begin, end, data }
            | RawLocListEntry::OffsetPair { begin, end, data } => {
                Location::OffsetPair { begin, end, data: expr(data)? }
            }
            RawLocListEntry::BaseAddress { addr } => Location::BaseAddress { address: Address::Constant(addr) },
            RawLocListEntry::DefaultLocation { data } => Location::DefaultLocation { data: expr(data)? },
            RawLocListEntry::StartEnd { begin, end, data } => {
                Location::StartEnd { begin: Address::Constant(begin), end: Address::Constant(end), data: expr(data)? }
            }
            RawLocListEntry::StartLength { begin, length, data } => {
                Location::StartLength { begin: Address::Constant(begin), length, data: expr(data)? }
            }
            RawLocListEntry::BaseAddressx { .. }
            | RawLocListEntry::StartxEndx { .. }
            | RawLocListEntry::StartxLength { .. } => {
                return Err(Unrepresentable("a location list entry that indexes .debug_addr".into()))
            }
        });
    }
    Ok(LocationList(out))
}
