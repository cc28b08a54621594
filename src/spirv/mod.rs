//! SPIR-V OpenCL.DebugInfo.100 debug operations as the harness handles
//! them: their text (spirv-dis spelling) and their lowering to DWARF
//! operations. Below `case` in the harness's layers (it needs only the core
//! crate); the module reader that finds expressions in real modules is
//! `module`, beside `elf`.

pub mod lower;
pub mod text;
