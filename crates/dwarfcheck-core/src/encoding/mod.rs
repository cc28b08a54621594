//! Byte-level encodings shared by every evaluator: opcode tables, LEB128, pointer encodings.
//!
//! This is one of the things the reference interpreter and the fast
//! evaluator are allowed to share (docs/architecture.md, "What the
//! evaluators share"): constants and encodings. Nothing here interprets an
//! operation; it only names bytes.

pub mod arch;
pub mod ate;
pub mod cfa;
pub mod eh_pe;
pub mod format;
pub mod hex;
pub mod leb128;
pub mod op;
pub mod spirv;
pub mod vendor;

pub use arch::Arch;
pub use format::Format;
pub use op::{Op, OpSpec, Operand};
pub use vendor::VendorProfile;
