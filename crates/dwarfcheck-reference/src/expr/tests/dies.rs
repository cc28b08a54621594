//! DIE-backed operations, calling frames, location lists and attribute
//! contexts (rules `op.call.*`, `op.entry-value.*`, `frame.*`,
//! `op.implicit-pointer.*`, `loclist.*`, `attr.*`). Expected outcomes are
//! worked out by hand from the rule texts, as in the other test modules.

use super::*;
use crate::expr::loclist::{matching, read_list, ListEntry};
use crate::expr::{evaluate_attribute, Stop};
use dwarfcheck_core::context::{AttrForm, AttrValue, Attribute, CallerFrame, Die};
use dwarfcheck_core::outcome::cfi::RegisterRule;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::rules::RuleId;

/// ctx() with unit offset 0x100 and `dies`.
fn with_dies(dies: &[(u64, Die)]) -> Context {
    let mut c = ctx();
    let cu = c.cu.as_mut().unwrap();
    cu.offset = 0x100;
    cu.dies = dies.iter().cloned().collect();
    c
}

fn exprloc(e: &[u8]) -> Die {
    Die { location: Some(AttrForm::Exprloc(e.to_vec())), ..Default::default() }
}

fn case(ctx: Context, attribute: Option<Attribute>, form: Option<AttrForm>, expr: &[u8]) -> Case {
    Case { attribute, form, expr: expr.to_vec(), ctx }
}

/// An attribute's value (`form`, or the exprloc `expr`) and its context.
struct Case {
    attribute: Option<Attribute>,
    form: Option<AttrForm>,
    expr: Vec<u8>,
    ctx: Context,
}

fn evaluate_case(c: &Case) -> (Outcome, Vec<RuleId>) {
    let value = c.form.as_ref().map_or(AttrValue::Exprloc(&c.expr), AttrForm::as_value);
    evaluate_attribute(c.attribute, value, &c.ctx)
}

#[test]
fn calls_share_the_stack() {
    // op.call.exprloc-same-stack: DIE 0x140 = "lit4 plus"; lit1 call2 0x40
    // leaves 1 + 4 = 5. call4 (0x99, 4-byte operand) and call_ref (0x9a,
    // section offset 0x140 in 32-bit DWARF) name the same DIE.
    let c = with_kind(with_dies(&[(0x140, exprloc(&[0x34, 0x22]))]), ResultKind::Value);
    assert_eq!(evaluate(&[0x31, 0x98, 0x40, 0x00], &c), g64(5));
    assert_eq!(evaluate(&[0x31, 0x99, 0x40, 0, 0, 0], &c), g64(5));
    assert_eq!(evaluate(&[0x31, 0x9a, 0x40, 0x01, 0, 0], &c), g64(5));
    // op.call.die-missing at the call's offset (1).
    assert_eq!(evaluate(&[0x31, 0x98, 0x44, 0x00], &c), ill(id::OP_CALL_DIE_MISSING, Some(1)));
}

#[test]
fn call_forms_of_the_die() {
    // op.call.const-value-implicit: const value 2a 00 -> implicit location.
    let k = Die { const_value: Some(vec![0x2a, 0]), ..Default::default() };
    let c = with_kind(with_dies(&[(0x140, k), (0x148, Die::default())]), ResultKind::Location);
    assert_eq!(evaluate(&[0x98, 0x40, 0x00], &c), loc(Source::Implicit { bytes: vec![0x2a, 0], bit_offset: 0 }));
    // op.call.no-attribute: lit7 stays on top; as a location it is memory 7.
    assert_eq!(evaluate(&[0x37, 0x98, 0x48, 0x00], &c), loc(mem(7)));
}

#[test]
fn recursive_call_hits_the_depth_budget() {
    // op.call.depth-budget: DIE 0x140 calls itself; depth 3 allows levels
    // 1..3, the call at level 3 would make level 4. Reported at offset 0.
    let mut c = with_dies(&[(0x140, exprloc(&[0x98, 0x40, 0x00]))]);
    c.budgets.depth = 3;
    assert_eq!(
        evaluate(&[0x98, 0x40, 0x00], &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Depth, at: Some(0) })
    );
}

/// A calling frame: rdi saved at [CFA-16], rbx same, rbp in rbx, rsp =
/// CFA-8, others undefined; the top frame's CFA is 0x1010.
fn framed() -> Context {
    let mut c = ctx();
    c.cfa = Some(0x1010);
    c.registers.insert(3, 0x3333u64.to_le_bytes().to_vec());
    let mut rules = BTreeMap::new();
    rules.insert(5, RegisterRule::Offset { offset: -16 });
    rules.insert(3, RegisterRule::SameValue);
    rules.insert(6, RegisterRule::Register { register: 3 });
    rules.insert(7, RegisterRule::ValOffset { offset: -8 });
    rules.insert(12, RegisterRule::Expression { expr: vec![0x23, 0x08] });
    c.caller = Some(Arc::new(CallerFrame { cfa: Some(0x2000), rules, ..Default::default() }));
    c
}

#[test]
fn entry_values_read_the_calling_frame() {
    let c = with_kind(framed(), ResultKind::Value);
    // op.entry-value.register-result + frame.rule.offset: rdi of the caller
    // is the 8 bytes at 0x1010 - 16 = 0x1000: de ad be ef 01 02 03 04.
    assert_eq!(evaluate(&[0xa3, 0x01, 0x55], &c), g64(0x0403_0201_efbe_adde));
    // frame.rule.register: rbp lives in the callee's rbx = 0x3333.
    assert_eq!(evaluate(&[0xa3, 0x01, 0x56], &c), g64(0x3333));
    // frame.rule.val-offset: the caller's rsp is 0x1008; breg7 -8 then
    // deref reads 0x1000 again.
    assert_eq!(evaluate(&[0xa3, 0x03, 0x77, 0x78, 0x06], &c), g64(0x0403_0201_efbe_adde));
    // op.entry-value.value-result: breg7 0 alone is the memory location at
    // the caller's rsp 0x1008, converted to its address.
    assert_eq!(evaluate(&[0xa3, 0x02, 0x77, 0x00], &c), g64(0x1008));
    // op.entry-value.result-not-value: lit1 stack_value is implicit.
    assert_eq!(evaluate(&[0xa3, 0x02, 0x31, 0x9f], &c), ill(id::OP_ENTRY_VALUE_RESULT_NOT_VALUE, Some(0)));
    // frame.rule.undefined: rax (default undefined) cannot be read.
    assert_eq!(evaluate(&[0xa3, 0x01, 0x50], &c), err(id::OP_DEREF_UNDEFINED_STORAGE, Some(0)));
}

#[test]
fn call_frame_entry_reg_pushes_the_rule_location() {
    let mut c = with_kind(framed(), ResultKind::Location);
    c.vendor = VendorProfile::hetero_2020();
    // DW_OP_LLVM_call_frame_entry_reg is 0xe6 ULEB R in hetero-2020.
    assert_eq!(evaluate(&[0xe6, 0x05], &c), loc(mem(0x1000)));
    assert_eq!(evaluate(&[0xe6, 0x03], &c), loc(reg(3, 0)));
    assert_eq!(evaluate(&[0xe6, 0x00], &c), loc(Source::Undefined));
    // frame.rule.val-offset: 0x1008 as 8 little-endian bytes.
    assert_eq!(
        evaluate(&[0xe6, 0x07], &c),
        loc(Source::Implicit { bytes: 0x1008u64.to_le_bytes().to_vec(), bit_offset: 0 })
    );
    // frame.rule.expression: CFA 0x1010 plus_uconst 8 -> memory 0x1018.
    assert_eq!(evaluate(&[0xe6, 0x0c], &c), loc(mem(0x1018)));
    // frame.caller-missing.
    c.caller = None;
    assert_eq!(evaluate(&[0xe6, 0x05], &c), err(id::FRAME_CALLER_MISSING, Some(0)));
}

#[test]
fn implicit_pointer_values_become_the_die_location() {
    // op.implicit-pointer.to-location: DIE 0x40 is in rax; +1 moves 8 bits,
    // so deref_size 1 reads byte 1 of 0x1122334455667788 = 0x77.
    let c = with_kind(with_dies(&[(0x40, exprloc(&[0x50]))]), ResultKind::Value);
    let e = [0xa0, 0x40, 0, 0, 0, 0x01, 0x06, 0x94, 0x01];
    assert_eq!(evaluate(&e, &c), g64(0x77));
    // op.implicit-pointer.displacement-out-of-storage: +8 is bit 64 of rax.
    let e = [0xa0, 0x40, 0, 0, 0, 0x08, 0x06, 0x94, 0x01];
    assert_eq!(evaluate(&e, &c), err(id::OP_IMPLICIT_POINTER_DISPLACEMENT_OUT_OF_STORAGE, Some(7)));
}

/// A .debug_loclists list at offset 0 (no header), 8-byte little-endian
/// addresses: base_address 0x400000; offset_pair [0x10, 0x20) reg0;
/// start_length [0x1000, +0x10) reg1; default reg2; end.
fn list_bytes() -> Vec<u8> {
    let mut b = vec![0x06];
    b.extend(0x40_0000u64.to_le_bytes());
    b.extend([0x04, 0x10, 0x20, 0x01, 0x50]);
    b.push(0x08);
    b.extend(0x1000u64.to_le_bytes());
    b.extend([0x10, 0x01, 0x51]);
    b.extend([0x05, 0x01, 0x52]);
    b.push(0x00);
    b
}

#[test]
fn loclists_entries_are_read_in_order() {
    let mut c = ctx();
    c.cu.as_mut().unwrap().debug_loclists = list_bytes().into();
    let got = read_list(&c, AttrValue::LocList { offset: 0 }).unwrap();
    let want = vec![
        ListEntry { range: Some((0x40_0010, 0x40_0020)), expr: vec![0x50] },
        ListEntry { range: Some((0x1000, 0x1010)), expr: vec![0x51] },
        ListEntry { range: None, expr: vec![0x52] },
    ];
    assert_eq!(got, want);
    // loclist.bounded-match / loclist.default-location.
    assert_eq!(matching(&got, 0x40_0010), vec![&want[0]]);
    assert_eq!(matching(&got, 0x1010), vec![&want[2]]);
    // loclist.truncated: the same list without its end-of-list byte.
    let mut t = list_bytes();
    t.pop();
    c.cu.as_mut().unwrap().debug_loclists = t.into();
    assert_eq!(read_list(&c, AttrValue::LocList { offset: 0 }), Err(Stop::Ill(id::LOCLIST_TRUNCATED)));
}

#[test]
fn debug_loc_base_selection() {
    // loclist.debug-loc: base selection (all ones, 0x500000), then the pair
    // [0, 8) -> [0x500000, 0x500008), 2-byte length 1, reg3; then (0, 0).
    let mut b = Vec::new();
    b.extend(u64::MAX.to_le_bytes());
    b.extend(0x50_0000u64.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(8u64.to_le_bytes());
    b.extend([0x01, 0x00, 0x53]);
    b.extend([0u8; 16]);
    let mut c = ctx();
    let cu = c.cu.as_mut().unwrap();
    cu.version = 4;
    cu.debug_loc = b.into();
    let got = read_list(&c, AttrValue::LocList { offset: 0 }).unwrap();
    assert_eq!(got, vec![ListEntry { range: Some((0x50_0000, 0x50_0008)), expr: vec![0x53] }]);
}

#[test]
fn location_list_union_and_program_location() {
    let mut c = ctx();
    c.cu.as_mut().unwrap().debug_loclists = list_bytes().into();
    let form = Some(AttrForm::LocList { offset: 0 });
    // loclist.no-program-location.
    let (out, _) = evaluate_case(&case(c.clone(), Some(Attribute::Location), form.clone(), &[]));
    assert_eq!(out, err(id::LOCLIST_NO_PROGRAM_LOCATION, None));
    // pc 0x1005 matches only the start_length entry: reg1.
    c.pc = Some(0x1005);
    let (out, _) = evaluate_case(&case(c.clone(), Some(Attribute::Location), form.clone(), &[]));
    assert_eq!(out, loc(reg(1, 0)));
    // pc 0x2000 matches nothing bounded: the default entry, reg2.
    c.pc = Some(0x2000);
    let (out, _) = evaluate_case(&case(c, Some(Attribute::Location), form, &[]));
    assert_eq!(out, loc(reg(2, 0)));
}

#[test]
fn attribute_contexts() {
    // attr.frame-base.register-as-bregx: rbp (6) holds 0x1000.
    let (out, _) = evaluate_case(&case(ctx(), Some(Attribute::FrameBase), None, &[0x56]));
    assert_eq!(out, loc(mem(0x1000)));
    // attr.frame-base.fbreg: fbreg (0x91) at offset 1, statically.
    let (out, _) = evaluate_case(&case(ctx(), Some(Attribute::FrameBase), None, &[0x96, 0x91, 0x00]));
    assert_eq!(out, ill(id::ATTR_FRAME_BASE_FBREG, Some(1)));
    // attr.data-member-location.constant: object at 0x1000, member +4.
    let mut c = ctx();
    c.initial_stack = vec![CtxEntry::Location(RawLocation::simple(mem(0x1000)).normalize())];
    let (out, _) = evaluate_case(&case(c, Some(Attribute::DataMemberLocation), Some(AttrForm::Constant(4)), &[]));
    assert_eq!(out, loc(mem(0x1004)));
    // attr.initial-stack-missing.
    let (out, _) = evaluate_case(&case(ctx(), Some(Attribute::UseLocation), None, &[0x22]));
    assert_eq!(out, err(id::ATTR_INITIAL_STACK_MISSING, None));
    // attr.llvm-lanes.zero and attr.form-not-allowed.
    let (out, _) = evaluate_case(&case(ctx(), Some(Attribute::LlvmLanes), Some(AttrForm::Constant(0)), &[]));
    assert_eq!(out, ill(id::ATTR_LLVM_LANES_ZERO, None));
    let (out, _) = evaluate_case(&case(ctx(), Some(Attribute::Location), Some(AttrForm::Constant(1)), &[]));
    assert_eq!(out, ill(id::ATTR_FORM_NOT_ALLOWED, None));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// A context where calls, implicit pointers and entry values all have
    /// something to find: DIEs whose expressions are `die_bytes`, a list
    /// section `list`, a two-frame caller chain with every kind of rule.
    fn busy(die_bytes: &[u8], list: &[u8]) -> Context {
        let mut c = framed();
        c.pc = Some(0x1000);
        c.vendor = VendorProfile::hetero_2020();
        let cu = c.cu.as_mut().unwrap();
        cu.offset = 0x100;
        cu.debug_loclists = list.to_vec().into();
        cu.dies.insert(0x140, exprloc(die_bytes));
        cu.dies.insert(0x40, exprloc(die_bytes));
        cu.dies.insert(0x148, Die { location: Some(AttrForm::LocList { offset: 0 }), ..Default::default() });
        cu.dies.insert(0x48, Die { const_value: Some(vec![1, 2, 3, 4]), ..Default::default() });
        let mut up = (**c.caller.as_ref().unwrap()).clone();
        up.rules.insert(0, RegisterRule::ValExpression { expr: die_bytes.to_vec() });
        up.rules.insert(1, RegisterRule::Expression { expr: die_bytes.to_vec() });
        up.caller = Some(Arc::new(CallerFrame { default_rule: RegisterRule::SameValue, ..up.clone() }));
        c.caller = Some(Arc::new(up));
        c
    }

    /// Opcodes of the DIE-backed and frame operations with operands that
    /// hit the DIEs above, and a few stack and read operations.
    fn plausible(ops: &[(u8, u8)]) -> Vec<u8> {
        let mut b = Vec::new();
        for &(op, a) in ops {
            match op % 10 {
                0 => b.extend([0x98, 0x40 + (a % 2) * 8, 0x00]),
                1 => b.extend([0x9a, 0x40, 0x01, 0, 0]),
                2 => b.extend([0xa0, 0x40 + (a % 2) * 8, 0, 0, 0, a & 0x3f]),
                3 => b.extend([0xa3, 0x01, 0x50 + a % 8]),
                4 => b.extend([0xe6, a % 16]),
                5 => b.push(0x06),
                6 => b.push(0x30 + a % 32),
                7 => b.extend([0x70 + a % 16, a & 0x3f]),
                8 => b.push([0x9f, 0x22, 0x12, 0x13, 0x16][usize::from(a % 5)]),
                _ => b.extend([0x93, 1 + a % 8]),
            }
        }
        b
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        /// Arbitrary list sections never panic, as a list or a loclistx.
        #[test]
        fn arbitrary_lists_never_panic(list in proptest::collection::vec(any::<u8>(), 0..64), x in 0u64..4, v4 in any::<bool>()) {
            let mut c = busy(&[0x50], &list);
            c.cu.as_mut().unwrap().version = if v4 { 4 } else { 5 };
            for form in [AttrForm::LocList { offset: x }, AttrForm::LocListX { index: x }] {
                let _ = evaluate_case(&case(c.clone(), Some(Attribute::FrameBase), Some(form), &[]));
            }
        }

        /// Plausible DIE-backed and frame operations, also inside the
        /// DIEs' own expressions and the CFI rules, never panic or hang.
        #[test]
        fn die_and_frame_ops_never_panic(
            ops in proptest::collection::vec((any::<u8>(), any::<u8>()), 0..12),
            die in proptest::collection::vec((any::<u8>(), any::<u8>()), 0..6),
            kind in 0usize..3,
        ) {
            let mut c = busy(&plausible(&die), &[0x07, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0x01, 0x50, 0]);
            c.result_kind = [None, Some(ResultKind::Value), Some(ResultKind::Location)][kind];
            let _ = evaluate(&plausible(&ops), &c);
        }
    }
}
