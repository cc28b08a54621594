//! Hand-derived unit tests of the fast evaluator (expected outcomes worked
//! out from the hetero-2020 text and the rule decisions, not from the code).

use super::evaluate;
use dwarfcheck_core::context::{CompUnit, Context, MemorySegment, ResultKind};
use dwarfcheck_core::encoding::ate;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, NormalLocation, Outcome, Piece, SingleLocation, Source, Value};
use dwarfcheck_core::rules::id as R;
use dwarfcheck_core::target::presets;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

fn state() -> Context {
    let mut c = Context::new(Arc::new(presets::x86_64()));
    c.registers.insert(7, 0x7ffc_0000u64.to_le_bytes().to_vec()); // rsp
    c.registers.insert(0, 0x1122_3344_5566_7788u64.to_le_bytes().to_vec()); // rax
    let mut xmm0 = 2.5f64.to_le_bytes().to_vec();
    xmm0.extend_from_slice(&[0u8; 8]);
    c.registers.insert(17, xmm0);
    c.memory.push(MemorySegment::shared(0, 0x1000, (0u8..32).collect()));
    let mut bt = BTreeMap::new();
    bt.insert(0x2a, BaseType::ate(ate::SIGNED, 32, false));
    bt.insert(0x31, BaseType::ate(ate::FLOAT, 64, false));
    bt.insert(0x40, BaseType::ate(ate::UNSIGNED, 128, false));
    c.cu = Some(CompUnit { version: 5, address_size: 8, base_types: bt, ..Default::default() });
    c
}

fn g(v: u64) -> Outcome {
    Outcome::Value(Value::from_u128(BaseType::generic(64, false), u128::from(v)))
}

fn mem(addr: u64) -> Outcome {
    loc(Source::memory(0, u128::from(addr) * 8))
}

fn loc(s: Source) -> Outcome {
    Outcome::Location(NormalLocation { places: vec![SingleLocation::Simple(s)] })
}

fn ill(rule: dwarfcheck_core::rules::RuleId, at: u64) -> Outcome {
    Outcome::Failed(Failure::IllFormed { rule, at: Some(at) })
}

fn piece(bits: u64, s: Source) -> Piece {
    Piece { bits, sources: BTreeSet::from([s]) }
}

#[test]
fn literals_and_arithmetic() {
    let c = state();
    // lit5 lit3 minus = 2
    assert_eq!(evaluate(&[0x35, 0x33, 0x1c], &c), g(2));
    // const1s -1 lit1 plus wraps to 0 (generic arithmetic modulo 2^64)
    assert_eq!(evaluate(&[0x09, 0xff, 0x31, 0x22], &c), g(0));
    // consts -7 lit2 div = -3 (signed, truncating)
    assert_eq!(evaluate(&[0x11, 0x79, 0x32, 0x1b], &c), g((-3i64) as u64));
    // consts -7 lit2 mod: generic mod is unsigned: (2^64-7) mod 2 = 1
    assert_eq!(evaluate(&[0x11, 0x79, 0x32, 0x1d], &c), g(1));
    // consts -1 lit1 lt: generic compares signed, -1 < 1
    assert_eq!(evaluate(&[0x11, 0x7f, 0x31, 0x2d], &c), g(1));
    // consts -8 lit1 shra = -4; consts -8 lit1 shr = 2^63 - 4
    assert_eq!(evaluate(&[0x11, 0x78, 0x31, 0x26], &c), g((-4i64) as u64));
    assert_eq!(evaluate(&[0x11, 0x78, 0x31, 0x25], &c), g((1u64 << 63) - 4));
    // lit1 const1u 64 shl: count >= width gives 0
    assert_eq!(evaluate(&[0x31, 0x08, 0x40, 0x24], &c), g(0));
    // lit1 lit0 div: division by zero at the div (offset 2)
    assert_eq!(
        evaluate(&[0x31, 0x30, 0x1b], &c),
        Outcome::Failed(Failure::EvalError { rule: R::OP_DIV_BY_ZERO, at: Some(2) })
    );
    // plus_uconst 0x80 (ULEB 80 01) on lit1 = 129
    assert_eq!(evaluate(&[0x31, 0x23, 0x80, 0x01], &c), g(129));
}

#[test]
fn decoding_is_static() {
    let c = state();
    // lit1, then 0xe5: not a GNU opcode -> unknown at 1.
    assert_eq!(evaluate(&[0x31, 0xe5], &c), ill(dwarfcheck_core::rules::id::EXPR_DECODE_UNKNOWN_OPCODE, 1));
    // const2u with one operand byte: truncated at 0, even after a div by zero.
    assert_eq!(
        evaluate(&[0x31, 0x30, 0x1b, 0x0a, 0x01], &c),
        ill(dwarfcheck_core::rules::id::EXPR_DECODE_TRUNCATED_OPERAND, 3)
    );
    // constu with 11 LEB bytes of ones: overflow.
    let mut e = vec![0x10];
    e.extend([0xff; 10]);
    e.push(0x01);
    assert_eq!(evaluate(&e, &c), ill(dwarfcheck_core::rules::id::EXPR_DECODE_LEB128_OVERFLOW, 0));
}

#[test]
fn branches() {
    let c = state();
    // lit1 bra +1 lit2 lit3: taken branch skips lit2 -> 3 on top.
    assert_eq!(evaluate(&[0x31, 0x28, 0x01, 0x00, 0x32, 0x33], &c), g(3));
    // lit0 bra +1 lit2 lit3: not taken -> 3 on top, 2 below; the branch
    // target is not checked when not taken.
    assert_eq!(evaluate(&[0x30, 0x28, 0x01, 0x00, 0x32, 0x33], &c), g(3));
    // lit1 bra +1 const1u 7 lit4: target 5 is inside const1u's operand.
    assert_eq!(evaluate(&[0x31, 0x28, 0x01, 0x00, 0x08, 0x07, 0x34], &c), ill(R::OP_BRA_TARGET_NOT_OP_START, 1));
    // skip -10 from offset 3: before the first operation.
    assert_eq!(evaluate(&[0x2f, 0xf6, 0xff], &c), ill(R::OP_SKIP_TARGET_OUT_OF_RANGE, 0));
    // skip +0 to one past the end: complete, empty stack -> undefined.
    assert_eq!(evaluate(&[0x2f, 0x00, 0x00], &c), loc(Source::Undefined));
    // skip -3: an endless loop; the 11th operation exceeds a budget of 10.
    let mut c2 = state();
    c2.budgets.steps = 10;
    assert_eq!(
        evaluate(&[0x2f, 0xfd, 0xff], &c2),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Steps, at: Some(0) })
    );
}

#[test]
fn locations() {
    let c = state();
    // breg7 16: rsp + 16, a memory location (not a value).
    assert_eq!(evaluate(&[0x77, 0x10], &c), mem(0x7ffc_0010));
    // addr 0x1000
    assert_eq!(evaluate(&[0x03, 0x00, 0x10, 0, 0, 0, 0, 0, 0], &c), mem(0x1000));
    // reg12 GNU_uninit: the register location, unchanged.
    assert_eq!(evaluate(&[0x5c, 0xf0], &c), loc(Source::Register { regno: 12, bit_offset: 0 }));
    // Empty expression: undefined location.
    assert_eq!(evaluate(&[], &c), loc(Source::Undefined));
    // lit5 stack_value: implicit storage holding 5 as a generic (8 bytes LE).
    assert_eq!(
        evaluate(&[0x35, 0x9f], &c),
        loc(Source::Implicit { bytes: vec![5, 0, 0, 0, 0, 0, 0, 0], bit_offset: 0 })
    );
    // implicit_value 2 "aa bb"
    assert_eq!(
        evaluate(&[0x9e, 0x02, 0xaa, 0xbb], &c),
        loc(Source::Implicit { bytes: vec![0xaa, 0xbb], bit_offset: 0 })
    );
    // call_frame_cfa without a CFA: evaluation error.
    assert_eq!(evaluate(&[0x9c], &c), Outcome::Failed(Failure::EvalError { rule: R::CTX_CFA_MISSING, at: Some(0) }));
}

#[test]
fn composite_from_the_brief() {
    let c = state();
    // reg0 piece 4; piece 2; breg7 16 piece 2
    let e = [0x50, 0x93, 0x04, 0x93, 0x02, 0x77, 0x10, 0x93, 0x02];
    let want = Outcome::Location(NormalLocation {
        places: vec![SingleLocation::Composite(vec![
            piece(32, Source::Register { regno: 0, bit_offset: 0 }),
            piece(16, Source::Undefined),
            piece(16, Source::memory(0, 0x7ffc_0010 * 8)),
        ])],
    });
    assert_eq!(evaluate(&e, &c), want);
    // reg0 piece 4 dup: dup touches the incomplete composite.
    assert_eq!(evaluate(&[0x50, 0x93, 0x04, 0x12], &c), ill(R::OP_STACK_INCOMPLETE_COMPOSITE, 3));
    // reg0 piece 16: a 128-bit part of a 64-bit register.
    assert_eq!(evaluate(&[0x50, 0x93, 0x10], &c), ill(R::COMPOSITE_PART_EXCEEDS_STORAGE, 1));
    // reg0 bit_piece 8 8: one 8-bit part at bit 8 of rax.
    let want = Outcome::Location(NormalLocation {
        places: vec![SingleLocation::Composite(vec![piece(8, Source::Register { regno: 0, bit_offset: 8 })])],
    });
    assert_eq!(evaluate(&[0x50, 0x9d, 0x08, 0x08], &c), want);
    // ... and reading it before it is complete is ill-formed (deref_size at 4).
    assert_eq!(evaluate(&[0x50, 0x9d, 0x08, 0x08, 0x94, 0x01], &c), ill(R::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION, 4));
    // bit_piece 8 64 on rax: moving to bit 64 is past the register's end.
    assert_eq!(
        evaluate(&[0x50, 0x9d, 0x08, 0x40], &c),
        Outcome::Failed(Failure::EvalError { rule: R::OP_BIT_PIECE_OFFSET_PAST_STORAGE, at: Some(1) })
    );
}

#[test]
fn dereferences() {
    let c = state();
    // addr 0x1000 deref: bytes 00..07 little-endian.
    assert_eq!(evaluate(&[0x03, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0x06], &c), g(0x0706_0504_0302_0100));
    // const2u 0x1004 deref_size 2 -> 0x0504
    assert_eq!(evaluate(&[0x0a, 0x04, 0x10, 0x94, 0x02], &c), g(0x0504));
    // lit0 deref: unreadable memory.
    assert_eq!(
        evaluate(&[0x30, 0x06], &c),
        Outcome::Failed(Failure::EvalError { rule: R::OP_DEREF_MEMORY_UNREADABLE, at: Some(1) })
    );
    // lit0 deref_size 0: no read at all, generic 0.
    assert_eq!(evaluate(&[0x30, 0x94, 0x00], &c), g(0));
    // reg0 deref: the register's contents.
    assert_eq!(evaluate(&[0x50, 0x06], &c), g(0x1122_3344_5566_7788));
    // regval_type xmm0 (17) float64 (0x31): 2.5.
    let want = Outcome::Value(Value::from_u128(BaseType::ate(ate::FLOAT, 64, false), u128::from(2.5f64.to_bits())));
    assert_eq!(evaluate(&[0xa5, 0x11, 0x31], &c), want);
    // deref_type 16 <unsigned128> on 0x1000: bytes 00..0f.
    let want = Outcome::Value(Value::from_u128(
        BaseType::ate(ate::UNSIGNED, 128, false),
        u128::from_le_bytes(core::array::from_fn(|i| i as u8)),
    ));
    assert_eq!(evaluate(&[0x0a, 0x00, 0x10, 0xa6, 0x10, 0x40], &c), want);
    // deref_type 8 <unsigned128>: size operand does not match the type.
    assert_eq!(evaluate(&[0x0a, 0x00, 0x10, 0xa6, 0x08, 0x40], &c), ill(R::OP_DEREF_TYPE_SIZE_MISMATCH, 3));
}

#[test]
fn typed_values() {
    let c = state();
    // const_type float64 2.5; const_type float64 4.0; mul; -> 10.0
    let mut e = vec![0xa4, 0x31, 0x08];
    e.extend(2.5f64.to_le_bytes());
    e.extend([0xa4, 0x31, 0x08]);
    e.extend(4.0f64.to_le_bytes());
    e.push(0x1e);
    let f64t = BaseType::ate(ate::FLOAT, 64, false);
    assert_eq!(evaluate(&e, &c), Outcome::Value(Value::from_u128(f64t, u128::from(10.0f64.to_bits()))));
    // const_type signed32 -1 (ff ff ff ff); convert to generic: generic
    // conversion from a signed source sign-extends.
    let e = [0xa4, 0x2a, 0x04, 0xff, 0xff, 0xff, 0xff, 0xa8, 0x00];
    assert_eq!(evaluate(&e, &c), g(u64::MAX));
    // lit1 convert signed32: then stack_value -> 4-byte implicit storage.
    let e = [0x31, 0xa8, 0x2a, 0x9f];
    assert_eq!(evaluate(&e, &c), loc(Source::Implicit { bytes: vec![1, 0, 0, 0], bit_offset: 0 }));
    // lit1 const_type signed32 1 plus: type mismatch.
    let e = [0x31, 0xa4, 0x2a, 0x04, 0x01, 0, 0, 0, 0x22];
    assert_eq!(evaluate(&e, &c), ill(R::OP_ARITH_SAME_TYPE, 8));
    // lit1 reinterpret signed32: bit sizes differ (64 vs 32).
    assert_eq!(evaluate(&[0x31, 0xa9, 0x2a], &c), ill(R::OP_REINTERPRET_SIZE_MISMATCH, 1));
    // const_type <unsigned128> 16 bytes (1 << 64) lt const_type (1 << 64)+1: 1
    let mut e = vec![0xa4, 0x40, 0x10];
    e.extend((1u128 << 64).to_le_bytes());
    e.extend([0xa4, 0x40, 0x10]);
    e.extend(((1u128 << 64) + 1).to_le_bytes());
    e.push(0x2d);
    assert_eq!(evaluate(&e, &c), g(1));
}

#[test]
fn result_kinds() {
    let mut c = state();
    c.result_kind = Some(ResultKind::Value);
    // breg7 0 as a value: the memory location converts to its address.
    assert_eq!(evaluate(&[0x77, 0x00], &c), g(0x7ffc_0000));
    // reg0 as a value: ill-formed, reported with no offset.
    assert_eq!(
        evaluate(&[0x50], &c),
        Outcome::Failed(Failure::IllFormed { rule: R::EXPR_RESULT_VALUE_NOT_CONVERTIBLE, at: None })
    );
    c.result_kind = Some(ResultKind::Location);
    // lit5 as a location: memory at 5.
    assert_eq!(evaluate(&[0x35], &c), mem(5));
}

#[test]
fn frame_base() {
    let mut c = state();
    c.cfa = Some(0x2000);
    c.frame_base = Some(vec![0x9c]); // DW_OP_call_frame_cfa
                                     // fbreg -8 -> memory 0x1ff8
    assert_eq!(evaluate(&[0x91, 0x78], &c), mem(0x1ff8));
    // Frame base DW_OP_reg7 (rsp): like bregx 7 0 -> rsp - 8.
    c.frame_base = Some(vec![0x57]);
    assert_eq!(evaluate(&[0x30, 0x91, 0x78], &c), mem(0x7ffc_0000 - 8));
    // A memory frame base uses address arithmetic: CFA 4, fbreg -8 wraps to
    // 2^64 - 4 (op.fbreg.memory-frame-base).
    c.frame_base = Some(vec![0x9c]);
    c.cfa = Some(4);
    assert_eq!(evaluate(&[0x91, 0x78], &c), mem(u64::MAX - 3));
    // An implicit frame base (lit5 stack_value) is not memory: ill-formed
    // at the fbreg (hetero-2020 "DW_AT_frame_base", attr.frame-base.not-memory).
    c.frame_base = Some(vec![0x35, 0x9f]);
    assert_eq!(evaluate(&[0x91, 0x08], &c), ill(R::ATTR_FRAME_BASE_NOT_MEMORY, 0));
    // A frame base that does not decode: reported at the fbreg (offset 1).
    c.frame_base = Some(vec![0x0a]);
    assert_eq!(evaluate(&[0x30, 0x91, 0x78], &c), ill(dwarfcheck_core::rules::id::EXPR_DECODE_TRUNCATED_OPERAND, 1));
    // A frame base containing fbreg is ill-formed before it runs, so it
    // never recurses (attr.frame-base.fbreg), reported at the fbreg.
    c.frame_base = Some(vec![0x91, 0x00]);
    assert_eq!(evaluate(&[0x30, 0x91, 0x78], &c), ill(R::ATTR_FRAME_BASE_FBREG, 1));
}

#[test]
fn big_endian_registers_count_from_the_low_end() {
    // A big-endian target: register storage bit offsets count from the
    // least significant end of the register's value (rule reg.storage-size).
    let mut t = presets::aarch64();
    t.endian = dwarfcheck_core::target::Endian::Big;
    let mut c = Context::new(Arc::new(t));
    c.registers.insert(1, vec![0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]);
    let mut bt = BTreeMap::new();
    bt.insert(0x30, BaseType::ate(ate::UNSIGNED, 32, true));
    c.cu = Some(CompUnit { version: 5, address_size: 8, base_types: bt, ..Default::default() });
    // regval_type r1 <unsigned32 BE>: the low 32 bits of 0x1122334455667788.
    let want = Outcome::Value(Value::from_u128(BaseType::ate(ate::UNSIGNED, 32, true), 0x5566_7788));
    assert_eq!(evaluate(&[0xa5, 0x01, 0x30], &c), want);
    // breg1 0: the whole register is the address.
    assert_eq!(evaluate(&[0x71, 0x00], &c), mem(0x1122_3344_5566_7788));
    // Memory keeps memory order: const2u 0x1000 deref_size 2 on "ab cd" is 0xabcd.
    c.memory.push(MemorySegment::shared(0, 0x1000, vec![0xab, 0xcd]));
    let e = [0x0a, 0x10, 0x00, 0x94, 0x02];
    assert_eq!(evaluate(&e, &c), Outcome::Value(Value::from_u128(BaseType::generic(64, true), 0xabcd)));
}

#[test]
fn scratch_reuse_gives_identical_outcomes() {
    use super::{Program, Scratch};
    let c = state();
    let exprs: [&[u8]; 4] = [
        &[0x50, 0x93, 0x04, 0x93, 0x02, 0x77, 0x10, 0x93, 0x02],
        &[0x35, 0x9f],
        &[0x9e, 0x02, 0xaa, 0xbb],
        &[0x31, 0x30, 0x1b],
    ];
    let mut s = Scratch::new();
    for _ in 0..3 {
        for e in exprs {
            let p = Program::compile(e, &c);
            assert_eq!(p.run(&c, &mut s), evaluate(e, &c));
        }
    }
    // The brief's composite still comes out whole after reuse.
    let p = Program::compile(exprs[0], &c);
    match p.run(&c, &mut s) {
        Outcome::Location(l) => assert!(matches!(&l.places[0], SingleLocation::Composite(p) if p.len() == 3)),
        o => panic!("{o}"),
    }
}

#[test]
fn compiled_programs_are_shareable_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<super::Program>();
    send::<super::Scratch>();
    // One program, evaluated on two threads with their own scratch areas.
    let c = Arc::new(state());
    let p = Arc::new(super::Program::compile(&[0x77, 0x10], &*c));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let (p, c) = (p.clone(), c.clone());
            std::thread::spawn(move || p.run(&*c, &mut super::Scratch::new()))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), mem(0x7ffc_0010));
    }
}
