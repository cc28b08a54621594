//! The result of an evaluation: the final stack's top entry as the result
//! kind asks (hetero-2020 "DWARF Operation Expressions", result of the
//! evaluation; rules `expr.result.*`), and its outcome.

use super::evaluation::{fail_outcome, Evaluation, Fail, Result};
use super::machine::{complete_top, Entry, Location, Scratch};
use dwarfcheck_core::context::ResultKind;
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::rules::{id as R, RuleId};

impl Evaluation<'_> {
    /// The result of the final stack (hetero-2020 "DWARF Operation
    /// Expressions", result of the evaluation; rules `expr.result.*`): the
    /// top entry as the result kind asks, an incomplete composite on top
    /// completed, no entry a location in undefined storage; an implicit
    /// pointer value is misused.
    pub fn result(&self, s: &mut Scratch) -> Result<Entry> {
        let top = self.top(s);
        if let Some(e) = &top {
            complete_top(s, e);
        }
        self.result_of(s, top, self.result_kind())
    }

    /// The result kind: location for a location description attribute
    /// ([`Evaluation::location_attribute`]), else the state's.
    #[inline]
    pub(super) fn result_kind(&self) -> Option<ResultKind> {
        if self.location_attribute {
            Some(ResultKind::Location)
        } else {
            self.state.result_kind()
        }
    }

    /// [`Evaluation::result`] of a final stack whose top entry is `top`
    /// (`None`: empty), a composite on top already completed, for result
    /// kind `kind` ([`Evaluation::result_kind`]).
    #[inline]
    pub(super) fn result_of(&self, s: &mut Scratch, top: Option<Entry>, kind: Option<ResultKind>) -> Result<Entry> {
        let r = match (kind, top) {
            (Some(ResultKind::Value), None) => Err(Fail::IllFormed(R::EXPR_RESULT_VALUE_EMPTY_STACK)),
            (_, None) => Ok(Entry::Location(Location::Undefined)),
            (Some(ResultKind::Location), Some(e)) => {
                self.to_location_as(s, e, R::EXPR_RESULT_LOCATION_NOT_CONVERTIBLE).map(Entry::Location)
            }
            (Some(ResultKind::Value), Some(e)) => self
                .to_value(s, e)
                .map(Entry::Value)
                .map_err(|f| remap(f, &R::LOC_CONVERT_LOCATION_NOT_VALUE, R::EXPR_RESULT_VALUE_NOT_CONVERTIBLE)),
            (None, Some(Entry::ImplicitPointer(_))) => Err(Fail::EvalError(R::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            (None, Some(e)) => Ok(e),
        };
        match r {
            Ok(Entry::ImplicitPointer(_)) => Err(Fail::EvalError(R::OP_IMPLICIT_POINTER_VALUE_MISUSE)),
            r => r,
        }
    }

    /// The outcome of a result ([`Self::result`]): a location result's
    /// normal form once its walk is charged (rule `expr.budget.work`, no
    /// offset).
    pub fn outcome_of(&self, s: &mut Scratch, e: Entry) -> Outcome {
        match e {
            Entry::Value(v) => Outcome::Value(s.export_value(&v)),
            Entry::Location(l) => match self.export(s, &l) {
                Ok(n) => Outcome::Location(n),
                Err(f) => fail_outcome(f, None),
            },
            Entry::ImplicitPointer(_) => fail_outcome(Fail::EvalError(R::OP_IMPLICIT_POINTER_VALUE_MISUSE), None),
        }
    }
}

fn remap(f: Fail, from: &RuleId, to: RuleId) -> Fail {
    match f {
        Fail::IllFormed(r) if r == *from => Fail::IllFormed(to),
        f => f,
    }
}
