//! The reference interpreter: the spec text, executable. Slow and obvious;
//! every ill-formed and evaluation-error branch names its rule ID.

pub mod cfi;
pub mod expr;
pub mod unwind;
