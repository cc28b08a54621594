//! Attribute evaluation contexts and value forms for the fast evaluator
//! (hetero-2020 "Debugging Information Entry Attributes"; rules `attr.*`).

use super::evaluation::{Fail, Stop};
use super::exec::{evaluate, top_level};
use super::machine::{Entry, Location, Scratch};
use super::program::Program;
use dwarfcheck_core::context::{AttrValue, Attribute, MachineState, Overlay, ResultKind};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{self, Outcome};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_core::rules::RuleId;

/// An attribute's value, by form.
#[derive(Clone, Copy)]
enum Form<'a> {
    /// An operation expression (exprloc).
    Expr(&'a [u8]),
    /// A location list (loclist offset or loclistx index).
    List(AttrValue<'a>),
    /// An integer constant.
    Const(u64),
}

fn ill(rule: RuleId) -> Outcome {
    Outcome::Failed(Failure::IllFormed { rule, at: None })
}

/// Whether `attr` takes a value of `form` (rule `attr.form-not-allowed`).
fn form_allowed(attr: Attribute, form: Form<'_>) -> bool {
    use Attribute as A;
    match form {
        Form::Const(_) => matches!(attr, A::DataMemberLocation | A::LlvmLanes),
        Form::List(_) => !matches!(
            attr,
            A::DataLocation | A::CallValue | A::CallDataLocation | A::CallDataValue | A::LlvmActiveLane | A::LlvmLanes
        ),
        Form::Expr(_) => attr != A::LlvmLanes,
    }
}

/// The state the attribute's value is evaluated in: `state` with the
/// attribute's result kind, object and initial stack (rules
/// `attr.*.context`; entries the attribute takes come from the top of
/// `state`'s initial stack, which has at least `entries`).
fn attribute_state(attr: Attribute, state: &dyn MachineState, entries: usize) -> Overlay<'_> {
    use Attribute as A;
    let kind = match attr {
        A::CallValue | A::CallDataValue | A::LlvmActiveLane => ResultKind::Value,
        _ => ResultKind::Location,
    };
    let stack = state.initial_stack();
    Overlay::new(state)
        .with_result_kind(Some(kind))
        .with_object(if attr == A::DataLocation { state.object() } else { None })
        .with_initial_stack(&stack[stack.len() - entries..])
}

/// Evaluates the value `value` of `attribute` (`None`: no attribute, the
/// state as given) in `state` (rules `attr.*`, `loclist.*`).
///
/// The CFA and the calling frames are the ones `state` gives; to find them
/// by virtually unwinding through a frame section, wrap `state` in
/// [`crate::unwind::UnwoundFrames`].
pub fn evaluate_attribute(attribute: Option<Attribute>, value: AttrValue<'_>, state: &dyn MachineState) -> Outcome {
    let form = match value {
        AttrValue::Exprloc(e) => Form::Expr(e),
        f @ (AttrValue::LocList { .. } | AttrValue::LocListX { .. }) => Form::List(f),
        AttrValue::Constant(c) => Form::Const(c),
        // A SPIR-V DebugExpression belongs to no DWARF attribute.
        AttrValue::Spirv(e) if attribute.is_none() => return super::spirv::evaluate(e, state),
        AttrValue::Spirv(_) => return ill(R::ATTR_FORM_NOT_ALLOWED),
    };
    let Some(attr) = attribute else {
        return match form {
            Form::Expr(e) => evaluate(e, state),
            Form::List(f) => list(state, f, false),
            Form::Const(_) => ill(R::ATTR_FORM_NOT_ALLOWED),
        };
    };
    if !form_allowed(attr, form) {
        return ill(R::ATTR_FORM_NOT_ALLOWED);
    }
    let entries = match attr {
        Attribute::DataMemberLocation | Attribute::VtableElemLocation => 1,
        Attribute::UseLocation => 2,
        _ => 0,
    };
    if state.initial_stack().len() < entries {
        return Outcome::Failed(Failure::EvalError { rule: R::ATTR_INITIAL_STACK_MISSING, at: None });
    }
    let scoped = attribute_state(attr, state, entries);
    if matches!(attr, Attribute::FrameBase | Attribute::StaticLink | Attribute::ReturnAddr) {
        return single_memory(attr, &scoped, form);
    }
    let out = match form {
        Form::Const(b) if attr == Attribute::LlvmLanes => return lanes(state, b),
        Form::Const(b) => return member_offset(&scoped, b),
        Form::List(f) => list(&scoped, f, false),
        Form::Expr(e) => evaluate(e, &scoped),
    };
    match (attr, &out) {
        (Attribute::LlvmActiveLane, Outcome::Value(v)) if !v.ty.is_integral() => {
            ill(R::ATTR_LLVM_ACTIVE_LANE_NOT_INTEGRAL)
        }
        _ => out,
    }
}

/// `DW_AT_frame_base`, `DW_AT_static_link`, `DW_AT_return_addr`: the
/// result must be one memory location description; a register frame base
/// becomes `DW_OP_bregx R 0` (rules `attr.frame-base.*`,
/// `attr.static-link.not-memory`, `attr.return-addr.not-memory`). The
/// count is of the single location descriptions the evaluation produced
/// (a location list's union included), before the outcome's normal form.
fn single_memory(attr: Attribute, state: &dyn MachineState, form: Form<'_>) -> Outcome {
    let fb = attr == Attribute::FrameBase;
    let mut s = Scratch::new();
    let evaluation = top_level(state);
    let l = match form {
        Form::List(f) => evaluation.location_list(f, &mut s, fb),
        Form::Expr(e) => {
            let p = Program::compile(e, state);
            match (&p.error, p.fbreg_at()) {
                (Some(err), _) => {
                    return Outcome::Failed(Failure::IllFormed { rule: err.rule.clone(), at: Some(err.at) })
                }
                (None, Some(at)) if fb => {
                    return Outcome::Failed(Failure::IllFormed { rule: R::ATTR_FRAME_BASE_FBREG, at: Some(at) })
                }
                _ => {}
            }
            for e in state.initial_stack() {
                let entry: Entry = s.import(e);
                s.stack.push(entry);
            }
            evaluation
                .exec(&p, &mut s)
                .and_then(|()| evaluation.result_location(&mut s).map_err(|fail| Stop { fail, at: None }))
        }
        Form::Const(_) => return ill(R::ATTR_FORM_NOT_ALLOWED),
    };
    let l = match l {
        Ok(l) => l,
        Err(stop) => return stop.outcome(),
    };
    let not_memory = match attr {
        Attribute::StaticLink => R::ATTR_STATIC_LINK_NOT_MEMORY,
        Attribute::ReturnAddr => R::ATTR_RETURN_ADDR_NOT_MEMORY,
        _ => R::ATTR_FRAME_BASE_NOT_MEMORY,
    };
    match l {
        Location::Memory { .. } => Outcome::Location(s.export_location(&l)),
        Location::Multi { .. } if fb => ill(R::ATTR_FRAME_BASE_NOT_SINGLE),
        Location::Register { regno, .. } if fb => match evaluation.register_address(&mut s, regno) {
            Ok(a) => match evaluation.memory_at(&mut s, a as u64) {
                Ok(l) => Outcome::Location(s.export_location(&l)),
                Err(fail) => Stop { fail, at: None }.outcome(),
            },
            Err(fail) => Stop { fail, at: None }.outcome(),
        },
        _ => ill(not_memory),
    }
}

/// A location list as the attribute's value, evaluated at depth 0.
fn list(state: &dyn MachineState, form: AttrValue<'_>, frame_base: bool) -> Outcome {
    let mut s = Scratch::new();
    let evaluation = top_level(state);
    match evaluation.location_list(form, &mut s, frame_base) {
        Ok(l) => match evaluation.export(&mut s, &l) {
            Ok(n) => Outcome::Location(n),
            Err(fail) => Stop { fail, at: None }.outcome(),
        },
        Err(stop) => stop.outcome(),
    }
}

/// `DW_AT_LLVM_lanes` N: N as a generic value (rules
/// `attr.llvm-lanes.constant`, `attr.llvm-lanes.zero`).
fn lanes(state: &dyn MachineState, n: u64) -> Outcome {
    if n == 0 {
        return ill(R::ATTR_LLVM_LANES_ZERO);
    }
    let ty = state.generic_type();
    let mut bytes = n.to_le_bytes().to_vec();
    bytes.resize(ty.bytes(), 0);
    Outcome::Value(outcome::Value { ty, bytes })
}

/// `DW_AT_data_member_location` as a constant B: the containing object's
/// location moved B bytes (rules `attr.data-member-location.constant`,
/// `attr.data-member-location.offset-out-of-storage`).
fn member_offset(state: &dyn MachineState, b: u64) -> Outcome {
    let mut s = Scratch::new();
    let evaluation = top_level(state);
    let r = (|| {
        let top = state.initial_stack().last().ok_or(Fail::EvalError(R::ATTR_INITIAL_STACK_MISSING))?;
        let e: Entry = s.import(top);
        let l = evaluation.to_location(&mut s, e)?;
        evaluation.move_location(&mut s, l, i128::from(b) * 8, R::ATTR_DATA_MEMBER_LOCATION_OFFSET_OUT_OF_STORAGE)
    })();
    match r.and_then(|l| evaluation.export(&mut s, &l)) {
        Ok(n) => Outcome::Location(n),
        Err(fail) => Stop { fail, at: None }.outcome(),
    }
}
