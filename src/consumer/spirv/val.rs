//! spirv-val judged on which modules it accepts: a validator says nothing
//! of a location, so the reference's outcome is shown as spirv-val can
//! show it ([`view`]): ill-formed stays ill-formed, and every other answer
//! (a value, a location, an evaluation error, which depends on the machine
//! state no validator sees) becomes [`accepted`]. The matrix then records,
//! per rule, the ill-formed modules spirv-val accepts, as for gimli's
//! accepted ill-formed input.

use super::{failed, fault, tools, Tool};
use crate::consumer::external::process::TempDir;
use crate::spirv::module::build::module_text;
use dwarfcheck_core::encoding::spirv::SpirvExpression;
use dwarfcheck_core::outcome::{BaseType, Failure, Outcome, Value};

/// The answer "spirv-val accepts the module": the 8-bit boolean value 1.
pub fn accepted() -> Outcome {
    Outcome::Value(Value::from_u128(BaseType::ate(dwarfcheck_core::encoding::ate::BOOLEAN, 8, false), 1))
}

/// The reference's `outcome` as a validator can show it (see the module
/// docs): ill-formed, budget and unsupported outcomes unchanged, all else
/// [`accepted`].
pub fn view(outcome: &Outcome) -> Outcome {
    match outcome {
        Outcome::Failed(Failure::IllFormed { .. } | Failure::Budget { .. } | Failure::Unsupported { .. }) => {
            outcome.clone()
        }
        _ => accepted(),
    }
}

/// spirv-val's answer on the module of `e` (assembled word for word):
/// [`accepted`] on exit code 0, else ill-formed with its first line
/// ([`super::refused`]).
pub fn answer(e: &SpirvExpression) -> Outcome {
    let tool = Tool::SpirvVal;
    let dir = match TempDir::new() {
        Ok(d) => d,
        Err(err) => return fault(tool, format!("temporary directory: {err}")),
    };
    if let Err(f) = tools::assemble(dir.path(), "k", &module_text(e)) {
        return fault(tool, format!("the module does not assemble word for word: {f}"));
    }
    match tools::run(dir.path(), "spirv-val", &["k.spv"]) {
        Ok(o) if o.code == 0 => accepted(),
        Ok(o) => failed(tool, tools::Failure::Refused(o.code, o.text)),
        Err(f) => fault(tool, f),
    }
}
