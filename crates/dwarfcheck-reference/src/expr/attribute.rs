//! Attribute evaluation contexts: what each DWARF expression attribute sets
//! (result kind, initial stack, object) and checks on its result
//! (hetero-2020 "Debugging Information Entry Attributes"; rules `attr.*`).

use super::entry::{Loc, Single, Storage};
use super::loclist::first_fbreg;
use super::machine::{initial_stack, Final, Machine};
use super::stop::Stop;
use dwarfcheck_core::context::{AttrValue, Attribute, MachineState, Overlay, ResultKind};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::Outcome;
use dwarfcheck_core::rules::{id, RuleId};

/// The attribute's value.
enum Form<'a> {
    /// An operation expression (exprloc).
    Expr(&'a [u8]),
    /// A location list (offset or loclistx index).
    List(AttrValue<'a>),
    /// A constant.
    Const(u64),
}

/// What an attribute's evaluation context sets (`attr.*.context`).
struct Shape {
    /// The result kind.
    kind: ResultKind,
    /// How many entries of the case's initial stack (from its top) form the
    /// initial stack.
    entries: usize,
    /// Whether the case's object stays the current object.
    object: bool,
}

fn shape(a: Attribute) -> Shape {
    use Attribute::*;
    let (kind, entries, object) = match a {
        Location | FrameBase | StaticLink | ReturnAddr | CallDataLocation | LlvmLanePc => {
            (ResultKind::Location, 0, false)
        }
        DataMemberLocation | VtableElemLocation => (ResultKind::Location, 1, false),
        UseLocation => (ResultKind::Location, 2, false),
        DataLocation => (ResultKind::Location, 0, true),
        CallValue | CallDataValue | LlvmActiveLane | LlvmLanes => (ResultKind::Value, 0, false),
    };
    Shape { kind, entries, object }
}

/// `attr.form-not-allowed`: whether attribute `a` (or none) takes `form`.
fn allowed(a: Option<Attribute>, form: &Form) -> bool {
    use Attribute::*;
    match form {
        Form::Const(_) => matches!(a, Some(DataMemberLocation | LlvmLanes)),
        Form::List(_) => {
            !matches!(a, Some(DataLocation | CallValue | CallDataLocation | CallDataValue | LlvmActiveLane | LlvmLanes))
        }
        Form::Expr(_) => a != Some(LlvmLanes),
    }
}

/// Evaluates the value `value` of `attribute` (`None`: no attribute, the
/// context as given) in `ctx`. The attribute's context is an overlay over
/// `ctx` ([`shape`]).
pub(super) fn evaluate_attribute(
    attribute: Option<Attribute>,
    value: AttrValue<'_>,
    ctx: &dyn MachineState,
) -> (Outcome, Vec<RuleId>) {
    let form = match value {
        AttrValue::Exprloc(e) => Form::Expr(e),
        f @ (AttrValue::LocList { .. } | AttrValue::LocListX { .. }) => Form::List(f),
        AttrValue::Constant(k) => Form::Const(k),
        // A SPIR-V DebugExpression belongs to no DWARF attribute.
        AttrValue::Spirv(e) if attribute.is_none() => return super::spirv::evaluate(e, ctx),
        AttrValue::Spirv(_) => {
            return (Outcome::Failed(Failure::IllFormed { rule: id::ATTR_FORM_NOT_ALLOWED, at: None }), Vec::new())
        }
    };
    if !allowed(attribute, &form) {
        return (Outcome::Failed(Failure::IllFormed { rule: id::ATTR_FORM_NOT_ALLOWED, at: None }), Vec::new());
    }
    let Some(a) = attribute else {
        // A location list with no attribute: the list in the context as given.
        let mut m = Machine::new(ctx);
        let r = match form {
            Form::List(f) => m.eval_loclist(ctx, f, 0, false).map(Final::Location),
            // An exprloc form without an attribute: the expression as given.
            Form::Expr(e) => {
                let stack = initial_stack(ctx.initial_stack());
                m.run(e, ctx.result_kind(), stack, 0, None)
            }
            Form::Const(_) => unreachable!("a constant without an attribute is not allowed (checked above)"),
        };
        return (m.outcome(r), m.unspecified);
    };
    let s = shape(a);
    let given = ctx.initial_stack();
    if given.len() < s.entries {
        return (Outcome::Failed(Failure::EvalError { rule: id::ATTR_INITIAL_STACK_MISSING, at: None }), Vec::new());
    }
    // The attribute's context (attr.*.context): its result kind, the top
    // `entries` entries of the given initial stack, the object kept or not.
    let mut view =
        Overlay::new(ctx).with_result_kind(Some(s.kind)).with_initial_stack(&given[given.len() - s.entries..]);
    if !s.object {
        view = view.with_object(None);
    }
    let mut m = Machine::new(&view);
    let r = evaluate(&mut m, &view, a, &form).and_then(|f| check_result(&mut m, a, f).map_err(|s| (s, None)));
    (m.outcome(r), m.unspecified)
}

/// The attribute's value evaluated in its context `ctx`.
fn evaluate(m: &mut Machine, ctx: &dyn MachineState, a: Attribute, form: &Form) -> Result<Final, (Stop, Option<u64>)> {
    let kind = Some(shape(a).kind);
    match *form {
        Form::Expr(e) => {
            if a == Attribute::FrameBase {
                if let Some(at) = first_fbreg(e, ctx) {
                    return Err((Stop::Ill(id::ATTR_FRAME_BASE_FBREG), Some(at)));
                }
            }
            m.run(e, kind, initial_stack(ctx.initial_stack()), 0, None)
        }
        Form::List(f) => m.eval_loclist(ctx, f, 0, a == Attribute::FrameBase).map(Final::Location),
        // attr.llvm-lanes.constant, attr.llvm-lanes.zero
        Form::Const(n) if a == Attribute::LlvmLanes => {
            if n == 0 {
                return Err((Stop::Ill(id::ATTR_LLVM_LANES_ZERO), None));
            }
            Ok(Final::Value(m.generic_value(u128::from(n))))
        }
        // attr.data-member-location.constant: DW_OP_LLVM_offset B on the
        // containing object's location.
        Form::Const(b) => {
            let mut stack = initial_stack(ctx.initial_stack());
            let mut l = m.pop_location(&mut stack).map_err(|s| (s, None))?;
            m.offset(&mut l, i128::from(b) * 8, id::ATTR_DATA_MEMBER_LOCATION_OFFSET_OUT_OF_STORAGE)
                .map_err(|s| (s, None))?;
            Ok(Final::Location(l))
        }
    }
}

/// The checks an attribute makes on its result (`attr.frame-base.*`,
/// `attr.static-link.not-memory`, `attr.return-addr.not-memory`,
/// `attr.llvm-active-lane.not-integral`).
fn check_result(m: &mut Machine, a: Attribute, f: Final) -> Result<Final, Stop> {
    let one_memory = |l: &Loc| matches!(&l.singles[..], [Single { storage: Storage::Memory { .. }, .. }]);
    match (a, f) {
        (Attribute::FrameBase, Final::Location(l)) => {
            if l.singles.len() != 1 {
                return Err(Stop::Ill(id::ATTR_FRAME_BASE_NOT_SINGLE));
            }
            if let Storage::Register { regno } = l.singles[0].storage {
                // attr.frame-base.register-as-bregx: DW_OP_bregx R 0.
                let a = m.register_address(regno)? & m.address_mask();
                return Ok(Final::Location(Loc::memory(0, a as u64)));
            }
            if !one_memory(&l) {
                return Err(Stop::Ill(id::ATTR_FRAME_BASE_NOT_MEMORY));
            }
            Ok(Final::Location(l))
        }
        (Attribute::StaticLink, Final::Location(l)) if !one_memory(&l) => {
            Err(Stop::Ill(id::ATTR_STATIC_LINK_NOT_MEMORY))
        }
        (Attribute::ReturnAddr, Final::Location(l)) if !one_memory(&l) => {
            Err(Stop::Ill(id::ATTR_RETURN_ADDR_NOT_MEMORY))
        }
        (Attribute::LlvmActiveLane, Final::Value(v)) if !v.ty.is_integral() => {
            Err(Stop::Ill(id::ATTR_LLVM_ACTIVE_LANE_NOT_INTEGRAL))
        }
        (_, f) => Ok(f),
    }
}
