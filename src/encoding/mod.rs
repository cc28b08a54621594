//! Byte-level encodings shared by every evaluator: opcode tables, LEB128, pointer encodings.
//!
//! This is one of the three things the reference interpreter and the fast
//! evaluator are allowed to share (DESIGN §2): constants and encodings. Nothing
//! here interprets an operation; it only names bytes.

pub mod ate;
pub mod cfa;
pub mod eh_pe;
pub mod leb128;
pub mod op;
pub mod vendor;

pub use op::{Op, OpSpec, Operand};
pub use vendor::VendorProfile;
