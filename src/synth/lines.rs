//! The line table of a synthesised executable: one source line per code
//! range, written with gimli's writer (DWARF 5 §6.2), so that consumers
//! which insist on a `.debug_line` (Delve) load the file.

use gimli::write::{Address, LineProgram, LineString};
use gimli::{Encoding, LineEncoding};

/// The name of the source file the line table names (it does not exist).
pub const SOURCE_FILE: &str = "dwarfcheck-case.c";

/// A line program for a unit of `encoding`: for each `(start, length)` of
/// `ranges` (addresses and lengths in **bytes**), one sequence whose single
/// row maps the whole range to line `index + 1` of [`SOURCE_FILE`].
/// Ranges of length 0 are skipped.
pub fn program(encoding: Encoding, ranges: &[(u64, u64)]) -> LineProgram {
    let mut lines = LineProgram::new(
        encoding,
        LineEncoding::default(),
        LineString::String(b"/".to_vec()),
        None,
        LineString::String(SOURCE_FILE.as_bytes().to_vec()),
        None,
    );
    let dir = lines.default_directory();
    let file = lines.add_file(LineString::String(SOURCE_FILE.as_bytes().to_vec()), dir, None);
    for (i, &(start, len)) in ranges.iter().enumerate().filter(|(_, r)| r.1 > 0) {
        lines.begin_sequence(Some(Address::Constant(start)));
        let row = lines.row();
        row.file = file;
        row.line = i as u64 + 1;
        row.is_statement = true;
        lines.generate_row();
        lines.end_sequence(len);
    }
    lines
}
