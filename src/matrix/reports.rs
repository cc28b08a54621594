//! Known public reports (issue tracker threads) of consumer failure
//! classes: the one place the matrix takes such links from.
//!
//! An entry is added only for a report actually found that describes the
//! class's behaviour, never guessed. Searched so far (issue trackers of
//! gimli, LLVM, binutils, for each class of docs/consumers.md): gimli's
//! convert of negative signed values (G1), `neg` of unsigned types (G9),
//! pieces over leftover entries (G8, G10), indirect FDE pointers (G2);
//! llvm-dwarfdump's augmentation strings (X4) and textrel/datarel pointers
//! (X3); readelf's segment selectors (X3). None matched: nearby threads
//! concern other behaviour (gimli #418, relocations of `pcrel` pointers in
//! object files; gimli #398, `funcrel` bases; LLVM #209099, LLDB's
//! zero-sized `DW_OP_piece`), so the table is empty.

/// A public report of one consumer's failure class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownReport {
    /// Consumer name (`gimli`, `llvm-dwarfdump`, `readelf`, ...).
    pub consumer: &'static str,
    /// The class ID the consumer gives ([`crate::consumer::FailureClass::id`]).
    pub class: &'static str,
    /// The report's URL.
    pub url: &'static str,
}

/// Every known report (see the module docs for what was searched).
pub const KNOWN_REPORTS: &[KnownReport] = &[];

/// The report of `class` of `consumer` in `table`, if any.
pub fn report_for<'a>(table: &'a [KnownReport], consumer: &str, class: &str) -> Option<&'a KnownReport> {
    table.iter().find(|r| r.consumer == consumer && r.class == class)
}
