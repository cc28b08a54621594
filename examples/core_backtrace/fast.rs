//! The fast crate's entry points this debugger uses: one unwinding step
//! of a frame with the CFI of the file its pc lies in (an indexed
//! [`Unwinder`] kept per frame section), and the evaluation of an
//! attribute's expression or location list.

use crate::process::Process;
use crate::state::FrameState;
use dwarfcheck_fast::cfi::CfiSection;
use dwarfcheck_fast::context::{AttrValue, Attribute};
use dwarfcheck_fast::outcome::unwind::{Step, UnwindEnd};
use dwarfcheck_fast::outcome::Outcome;
use dwarfcheck_fast::unwind::Unwinder;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Evaluates `value`, the value of `attribute`, in the frame `state`
/// describes (rules `attr.*`, `loclist.*`).
pub fn evaluate(attribute: Attribute, value: AttrValue<'_>, state: &FrameState<'_>) -> Outcome {
    dwarfcheck_fast::expr::evaluate_attribute(Some(attribute), value, state)
}

/// The fast unwinder over each module's frame sections, `.debug_frame`
/// tried before `.eh_frame`, each indexed once.
pub struct Unwinders<'p> {
    process: &'p Process,
    by_module: BTreeMap<usize, Vec<Unwinder<'p>>>,
}

impl<'p> Unwinders<'p> {
    /// No section indexed yet.
    pub fn new(process: &'p Process) -> Self {
        Unwinders { process, by_module: BTreeMap::new() }
    }

    /// One unwinding step (rule `unwind.step`) of the frame `state`
    /// describes, as the top frame of its own state, with the CFI of the
    /// module holding its lookup pc.
    ///
    /// Errors: why no step could be made (no module, no CFI, the fault's
    /// outcome with its rule ID).
    pub fn step(&mut self, state: &FrameState<'_>) -> Result<Step, String> {
        let pc = state.lookup_pc;
        let Some(m) = self.process.modules.iter().position(|m| m.contains(pc)) else {
            return Err(format!("no file is mapped at {pc:#x}"));
        };
        let module = &self.process.modules[m];
        let unwinders = self.by_module.entry(m).or_insert_with(|| {
            let sections: Vec<&'p Arc<CfiSection>> = module.debug_frame.iter().chain(module.eh_frame.iter()).collect();
            sections.into_iter().map(|s| Unwinder::new(s)).collect()
        });
        let mut last = format!("{} has no call frame information", module.path.display());
        for u in unwinders.iter_mut() {
            let un = u.unwind(state, Some(1));
            if let Some(step) = un.steps.into_iter().next() {
                return Ok(step);
            }
            if let UnwindEnd::Fault { outcome } = un.end {
                last = outcome.to_string();
            }
        }
        Err(last)
    }
}
