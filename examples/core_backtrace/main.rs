//! `core_backtrace`: a small debugger that prints the backtrace of every
//! thread of an x86-64 Linux core file, with the values of each frame's
//! variables and parameters, built on `dwarfcheck-fast` and `object` only.
//!
//! ```text
//! cargo run --release --example core_backtrace -- EXECUTABLE CORE
//! ```
//!
//! How it works:
//! - [`core_file`]: threads (`NT_PRSTATUS`, `NT_FPREGSET`), mapped files
//!   (`NT_FILE`) and memory (`PT_LOAD`, else the mapped file's bytes), read
//!   from the files when asked;
//! - [`module`]: the executable and every mapped ELF file the core names
//!   (libc, the dynamic loader), with their load bias, `.eh_frame` /
//!   `.debug_frame` and function symbols;
//! - [`reader`], [`die`], [`ranges`], [`scope`], [`types`]: the
//!   executable's DWARF (versions 2-5 as gcc writes them): units, DIEs,
//!   subprograms and lexical blocks with their ranges, variables and
//!   parameters with their locations, call sites, types;
//! - [`state`]: each frame's machine state behind the fast crate's
//!   `MachineState` interface: registers from the notes or from
//!   unwinding, memory from the core, pc, CFA, frame base, calling frame,
//!   unit facts, base types, location list sections;
//! - [`fast`]: the fast crate's unwinder (one step per frame, with the CFI
//!   of the file the pc is in) and evaluator;
//! - [`backtrace`]: frames and values of every thread.
//!
//! Limitations: the executable's DWARF is used only when it is loaded at
//! its link-time addresses (built with `-no-pie`): the evaluator does not
//! relocate `DW_OP_addr` operands or location list addresses by a load
//! bias, so a PIE executable gets function names from its symbols and no
//! variables. Shared libraries are unwound through (their `.eh_frame` is
//! placed at its run-time address) but their DWARF is not read. Inlined
//! subroutines are not shown as frames of their own; arrays are shown in
//! one dimension; bit fields and values of more than 4096 bytes are not
//! read.

#![warn(missing_docs)]

mod backtrace;
mod core_file;
mod die;
mod fast;
mod module;
mod process;
mod ranges;
mod reader;
mod scope;
mod state;
mod types;

use std::path::PathBuf;

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [exe, core] = args.as_slice() else {
        eprintln!("usage: core_backtrace EXECUTABLE CORE");
        std::process::exit(2);
    };
    let process = match process::Process::open(exe, core) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("core_backtrace: {e}");
            std::process::exit(1);
        }
    };
    for note in &process.notes {
        eprintln!("note: {note}");
    }
    print!("{}", backtrace::render(&backtrace::backtrace(&process)));
}
