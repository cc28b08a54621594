//! Helpers shared by integration tests.

pub mod tru64;
