//! Intel vISA debug information (issue 17): the binary that IGC's vISA
//! finaliser emits beside a kernel (magic 0xdeadd010), decoded under a
//! named layout, validated against `specs/rules/visa-debuginfo.yaml`, found
//! inside ocloc's containers, and compared with IGC's own decoder.
//!
//! Modules, bottom first: [`platform`] (register files per GPU family),
//! [`layout`] (the three layout variants), [`read`] (the bounded byte
//! reader and its faults), [`model`] (what a blob holds), [`decode`]
//! (bytes to model under one layout), [`detect`] (which layout a blob is
//! in), [`validate`] (the rules that are not about framing), [`container`]
//! (INTC containers and zebin), [`genx`] (the `GenX_IR -decodedbg`
//! oracle), [`cases`] (the case files of `specs/cases/visa/`), [`target`]
//! (the Intel GPU target preset), [`lower`] (intervals to DWARF location
//! expressions), [`loclist`] (variables to location lists over Gen
//! ranges), [`frame`] (CallFrameInfo to CFI), [`check`] (both evaluators
//! on the lowering).

pub mod cases;
pub mod check;
pub mod container;
pub mod decode;
pub mod detect;
pub mod frame;
pub mod genx;
pub mod igc_dwarf;
pub mod layout;
pub mod loclist;
pub mod lower;
pub mod model;
pub mod platform;
pub mod read;
pub mod target;
pub mod validate;

pub use layout::Layout;
pub use platform::Platform;
pub use read::Fault;
