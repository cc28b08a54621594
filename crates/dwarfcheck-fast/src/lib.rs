//! The fast evaluator: decodes once, evaluates without allocating per
//! operation on the common path. Written apart from the reference.

pub mod cfi;
pub mod expr;
pub mod unwind;
