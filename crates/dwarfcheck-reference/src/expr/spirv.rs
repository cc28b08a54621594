//! Reference interpretation of SPIR-V OpenCL.DebugInfo.100 `DebugExpression`s
//! (seed `opencl-debuginfo-100.txt` §3.6; rules `spirv.*` of
//! specs/rules/spirv-expressions.yaml). Placeholder until written.

use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::encoding::spirv::SpirvExpression;
use dwarfcheck_core::outcome::{Failure, Outcome};
use dwarfcheck_core::rules::RuleId;

/// The outcome of `expr` in `state`, and the `unspecified` rules it rests on.
pub(super) fn evaluate(expr: &SpirvExpression, state: &dyn MachineState) -> (Outcome, Vec<RuleId>) {
    let _ = (expr, state);
    (Outcome::Failed(Failure::Unsupported { what: "SPIR-V debug operations".into() }), Vec::new())
}
