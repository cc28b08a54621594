//! Small text helpers shared by the command line and the loaders.

pub mod number;
pub mod suggest;
