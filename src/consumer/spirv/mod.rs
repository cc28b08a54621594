//! SPIR-V tools as consumers of OpenCL.DebugInfo.100 expressions (issue 16
//! item 6; docs/consumers.md "SPIR-V tools"): each case's expression is
//! built into a minimal module (`spirv::module::build`) and handed to the
//! tool.

pub mod chain;
pub mod tools;
