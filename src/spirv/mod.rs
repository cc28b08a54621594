//! SPIR-V OpenCL.DebugInfo.100 debug operations as the harness handles
//! them: their text (spirv-dis spelling) and their lowering to DWARF
//! operations. Below `case` in the harness's layers (it needs only the core
//! crate); the module reader that finds expressions in real modules is
//! `module`, beside `elf`.

pub mod lower;
/// The module reader: expressions, variables and module rules of real
/// SPIR-V modules, and cases from them. It sits beside `elf` in the
/// harness's layers (above `case`), while `lower` and `text` sit below
/// `case`.
pub mod module;
pub mod text;
