//! Hand-derived unit tests of the fast evaluator's hetero-2020 extension
//! operations (expected outcomes worked out from the hetero-2020 text and
//! `specs/rules/extension.yaml`, not from the code).
//!
//! Context: the `amdgpu-wave64` preset (hetero-2020 direct opcodes
//! 0xe1–0xec): address space 3 `local` (32-bit, shared), 5 `private_lane`
//! (32-bit, per thread and per lane), 6 `private_wave` (32-bit, per
//! thread), 1 `generic` (64-bit); 64 lanes; sgpr0/sgpr1 = DWARF 32/33
//! (32 bits); the generic type is 64 bits.

use super::evaluate;
use dwarfcheck_core::context::{CompUnit, Context, Entry, MemorySegment};
use dwarfcheck_core::encoding::{ate, VendorProfile};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BaseType, BudgetKind, NormalLocation, Outcome, Piece, SingleLocation, Source, Value};
use dwarfcheck_core::rules::{id as R, RuleId};
use dwarfcheck_core::target::presets;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

// Opcodes (hetero-2020 encoding table).
const FORM: u8 = 0xe1;
const PUSH_LANE: u8 = 0xe2;
const OFFSET: u8 = 0xe3;
const OFFSET_UCONST: u8 = 0xe4;
const BIT_OFFSET: u8 = 0xe5;
const UNDEFINED: u8 = 0xe7;
const ASPACE_BREGX: u8 = 0xe8;
const PIECE_END: u8 = 0xea;
const EXTEND: u8 = 0xeb;
const SELECT: u8 = 0xec;
/// `DW_OP_regx 32` (sgpr0) and `DW_OP_regx 33` (sgpr1): two bytes each.
const SGPR0: [u8; 2] = [0x90, 32];
const SGPR1: [u8; 2] = [0x90, 33];
/// `DW_OP_const_type <float64> 8 bytes of 1.0`.
const FLOAT_1: [u8; 11] = [0xa4, 0x31, 0x08, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f];

fn state() -> Context {
    let mut c = Context::new(Arc::new(presets::amdgpu_wave64()));
    c.thread = Some(7);
    c.lane = Some(3);
    c.registers.insert(32, 0x10u32.to_le_bytes().to_vec());
    c.registers.insert(33, 0xaabb_ccddu32.to_le_bytes().to_vec());
    // private_lane storage of thread 7: lane 3 and lane 4 differ.
    let lane_seg =
        |lane, bytes: Vec<u8>| MemorySegment { aspace: 5, address: 0x10, bytes, thread: Some(7), lane: Some(lane) };
    c.memory.push(lane_seg(3, vec![0xa0, 0xa1, 0xa2, 0xa3]));
    c.memory.push(lane_seg(4, vec![0xb0, 0xb1, 0xb2, 0xb3]));
    c.memory.push(MemorySegment::shared(3, 0x10, vec![0x30, 0x31]));
    let mut bt = BTreeMap::new();
    bt.insert(0x31, BaseType::ate(ate::FLOAT, 64, false));
    bt.insert(0x50, BaseType::ate(ate::UNSIGNED, 8, false));
    c.cu = Some(CompUnit { version: 5, address_size: 8, base_types: bt, ..Default::default() });
    c
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn g(v: u64) -> Outcome {
    Outcome::Value(Value::from_u128(BaseType::generic(64, false), u128::from(v)))
}

fn loc(s: Source) -> Outcome {
    Outcome::Location(NormalLocation { places: vec![SingleLocation::Simple(s)] })
}

fn mem(aspace: u64, addr: u64, thread: Option<u64>, lane: Option<u32>) -> Source {
    Source::Memory { aspace, bit_addr: u128::from(addr) * 8, thread, lane }
}

fn reg(regno: u64, bit_offset: u64) -> Source {
    Source::Register { regno, bit_offset }
}

fn composite(pieces: &[(u64, Source)]) -> Outcome {
    let pieces = pieces.iter().map(|(bits, s)| Piece { bits: *bits, sources: BTreeSet::from([s.clone()]) }).collect();
    Outcome::Location(NormalLocation { places: vec![SingleLocation::Composite(pieces)] })
}

fn ill(rule: RuleId, at: u64) -> Outcome {
    Outcome::Failed(Failure::IllFormed { rule, at: Some(at) })
}

fn err(rule: RuleId, at: u64) -> Outcome {
    Outcome::Failed(Failure::EvalError { rule, at: Some(at) })
}

#[test]
fn form_aspace_address_binds_thread_and_lane() {
    let mut c = state();
    // lit16 lit5 form_aspace_address: A = 16 (next), AS = 5 (top); 5 is per
    // thread and per lane, so thread 7 / lane 3 are bound.
    let e = [0x40, 0x35, FORM];
    assert_eq!(evaluate(&e, &c), loc(mem(5, 0x10, Some(7), Some(3))));
    // ... deref_size 1 reads lane 3's byte at 0x10.
    assert_eq!(evaluate(&cat(&[&e, &[0x94, 0x01]]), &c), g(0xa0));
    // In lane 4 the same expression reads lane 4's storage.
    c.lane = Some(4);
    assert_eq!(evaluate(&cat(&[&e, &[0x94, 0x01]]), &c), g(0xb0));
    // A location handed in bound to lane 4 keeps its binding when read in
    // lane 3 (loc.memory.bound-at-creation): deref_size 1 gives 0xb1.
    c.lane = Some(3);
    c.initial_stack =
        vec![Entry::Location(NormalLocation { places: vec![SingleLocation::Simple(mem(5, 0x11, Some(7), Some(4)))] })];
    assert_eq!(evaluate(&[0x94, 0x01], &c), g(0xb1));
    // private_wave (6) is per thread only: no lane bound.
    c.initial_stack.clear();
    assert_eq!(evaluate(&[0x40, 0x36, FORM], &c), loc(mem(6, 0x10, Some(7), None)));
    // local (3) is shared: neither.
    assert_eq!(evaluate(&[0x40, 0x33, FORM], &c), loc(mem(3, 0x10, None, None)));
}

#[test]
fn form_aspace_address_context_errors() {
    let mut c = state();
    let e = [0x40, 0x35, FORM];
    // Lane 64 is not a lane of a wave64 target (lanes 0..63).
    c.lane = Some(64);
    assert_eq!(evaluate(&e, &c), err(R::CTX_LANE_INVALID, 2));
    c.lane = None;
    assert_eq!(evaluate(&e, &c), err(R::CTX_LANE_MISSING, 2));
    // Without a thread: the thread is checked before the lane.
    c.thread = None;
    assert_eq!(evaluate(&e, &c), err(R::CTX_THREAD_MISSING, 2));
    // A shared space needs neither.
    assert_eq!(evaluate(&[0x40, 0x33, FORM], &c), loc(mem(3, 0x10, None, None)));
}

#[test]
fn form_aspace_address_operands() {
    let c = state();
    // const8u 0x1_0000_0010, lit3: A truncated to local's 32 bits -> 0x10.
    let e = cat(&[&[0x0e], &0x1_0000_0010u64.to_le_bytes(), &[0x33, FORM]]);
    assert_eq!(evaluate(&e, &c), loc(mem(3, 0x10, None, None)));
    // consts -1 lit3: the bit pattern, truncated (never sign-extended) -> 0xffffffff.
    assert_eq!(evaluate(&[0x11, 0x7f, 0x33, FORM], &c), loc(mem(3, 0xffff_ffff, None, None)));
    // lit0 lit4: wave64 defines no address space 4 (ill-formed at the operation).
    assert_eq!(evaluate(&[0x30, 0x34, FORM], &c), ill(R::OP_FORM_ASPACE_ADDRESS_UNKNOWN_ADDRESS_SPACE, 2));
    // lit16 <float64 1.0>: AS (top) is not integral.
    let e = cat(&[&[0x40], &FLOAT_1, &[FORM]]);
    assert_eq!(evaluate(&e, &c), ill(R::OP_FORM_ASPACE_ADDRESS_REQUIRES_INTEGRAL, 12));
    // <float64> lit3: A (second) is not integral; AS is fine.
    let e = cat(&[&FLOAT_1, &[0x33, FORM]]);
    assert_eq!(evaluate(&e, &c), ill(R::OP_FORM_ASPACE_ADDRESS_REQUIRES_INTEGRAL, 12));
    // One entry only: underflow.
    assert_eq!(evaluate(&[0x33, FORM], &c), ill(R::EXPR_STACK_UNDERFLOW, 1));
}

#[test]
fn xderef_reads_the_current_lane() {
    let mut c = state();
    // lit5 lit17 xderef_size 2: AS = 5 (next), A = 17 (top): bytes a1 a2 of
    // lane 3's storage, little-endian -> 0xa2a1.
    let e = [0x35, 0x41, 0x95, 0x02];
    assert_eq!(evaluate(&e, &c), g(0xa2a1));
    c.lane = Some(4);
    assert_eq!(evaluate(&e, &c), g(0xb2b1));
    // Without a lane the location cannot be created (offset of xderef_size: 2).
    c.lane = None;
    assert_eq!(evaluate(&e, &c), err(R::CTX_LANE_MISSING, 2));
}

#[test]
fn push_lane() {
    let mut c = state();
    assert_eq!(evaluate(&[PUSH_LANE], &c), g(3));
    c.lane = None;
    assert_eq!(evaluate(&[PUSH_LANE], &c), err(R::CTX_LANE_MISSING, 0));
    c.lane = Some(64);
    assert_eq!(evaluate(&[PUSH_LANE], &c), err(R::CTX_LANE_INVALID, 0));
}

#[test]
fn offsets_move_inside_storage() {
    let c = state();
    // sgpr0 lit2 offset: 2 bytes = bit 16 of the 32-bit register.
    assert_eq!(evaluate(&cat(&[&SGPR0, &[0x32, OFFSET]]), &c), loc(reg(32, 16)));
    // sgpr0 lit4 offset: bit 32 = the register's size: out of storage (at 3).
    assert_eq!(evaluate(&cat(&[&SGPR0, &[0x34, OFFSET]]), &c), err(R::OP_OFFSET_OUT_OF_STORAGE, 3));
    // sgpr0 lit3 bit_offset: bit 3.
    assert_eq!(evaluate(&cat(&[&SGPR0, &[0x33, BIT_OFFSET]]), &c), loc(reg(32, 3)));
    // sgpr0 lit1 bit_offset consts -2 bit_offset: bit -1 is below 0 (at 6).
    let e = cat(&[&SGPR0, &[0x31, BIT_OFFSET, 0x11, 0x7e, BIT_OFFSET]]);
    assert_eq!(evaluate(&e, &c), err(R::OP_BIT_OFFSET_OUT_OF_STORAGE, 6));
    // lit16 lit3 form; consts -4 offset: a generic displacement is signed -> 0xc.
    let e = [0x40, 0x33, FORM, 0x11, 0x7c, OFFSET];
    assert_eq!(evaluate(&e, &c), loc(mem(3, 0xc, None, None)));
    // ... offset_uconst 2^64-4 (ULEB): constu gives generic -4 too -> 0xc.
    let mut e = vec![0x40, 0x33, FORM, OFFSET_UCONST];
    dwarfcheck_core::encoding::leb128::write_uleb(&mut e, u64::MAX - 3);
    assert_eq!(evaluate(&e, &c), loc(mem(3, 0xc, None, None)));
    // Memory is 2^32 bytes in local: 0xfffffffc + 3 is the last byte, + 4
    // is its end (no wrapping).
    let base = [0x0c, 0xfc, 0xff, 0xff, 0xff, 0x33, FORM];
    assert_eq!(evaluate(&cat(&[&base, &[OFFSET_UCONST, 3]]), &c), loc(mem(3, 0xffff_ffff, None, None)));
    assert_eq!(evaluate(&cat(&[&base, &[OFFSET_UCONST, 4]]), &c), err(R::OP_OFFSET_OUT_OF_STORAGE, 7));
    // An offset keeps the thread/lane binding: lit16 lit5 form offset_uconst 2 deref_size 1 -> 0xa2.
    assert_eq!(evaluate(&[0x40, 0x35, FORM, OFFSET_UCONST, 2, 0x94, 0x01], &c), g(0xa2));
}

#[test]
fn offset_signedness_and_operands() {
    let c = state();
    // const_type <unsigned8> 0xff: an unsigned displacement of 255 bits,
    // past sgpr0's 32 bits (not -1).
    let e = cat(&[&SGPR0, &[0xa4, 0x50, 0x01, 0xff, BIT_OFFSET]]);
    assert_eq!(evaluate(&e, &c), err(R::OP_BIT_OFFSET_OUT_OF_STORAGE, 6));
    // The displacement is checked before L is popped: piece 4 (an incomplete
    // composite), <float64>, offset -> op.offset.requires-integral at 14.
    let e = cat(&[&[0x93, 0x04], &FLOAT_1, &[OFFSET]]);
    assert_eq!(evaluate(&e, &c), ill(R::OP_OFFSET_REQUIRES_INTEGRAL, 13));
    let e = cat(&[&[0x93, 0x04], &FLOAT_1, &[BIT_OFFSET]]);
    assert_eq!(evaluate(&e, &c), ill(R::OP_BIT_OFFSET_REQUIRES_INTEGRAL, 13));
    // piece 4 lit1 offset: L is then the incomplete composite.
    assert_eq!(evaluate(&[0x93, 0x04, 0x31, OFFSET], &c), ill(R::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION, 3));
    // offset_uconst on an empty stack: underflow.
    assert_eq!(evaluate(&[OFFSET_UCONST, 1], &c), ill(R::EXPR_STACK_UNDERFLOW, 0));
    // lit1 offset: only one entry.
    assert_eq!(evaluate(&[0x31, OFFSET], &c), ill(R::EXPR_STACK_UNDERFLOW, 1));
}

#[test]
fn offsets_of_undefined_multiple_and_composite_locations() {
    let mut c = state();
    // undefined offset_uconst 100: undefined has no size and stays as it is.
    assert_eq!(evaluate(&[UNDEFINED, OFFSET_UCONST, 100], &c), loc(Source::Undefined));
    // undefined alone.
    assert_eq!(evaluate(&[UNDEFINED], &c), loc(Source::Undefined));
    // Two places (local 0x10 and sgpr0 bit 0): lit2 offset moves both.
    c.initial_stack = vec![Entry::Location(NormalLocation {
        places: vec![SingleLocation::Simple(mem(3, 0x10, None, None)), SingleLocation::Simple(reg(32, 0))],
    })];
    let want = Outcome::Location(NormalLocation {
        places: vec![SingleLocation::Simple(mem(3, 0x12, None, None)), SingleLocation::Simple(reg(32, 16))],
    });
    assert_eq!(evaluate(&[0x32, OFFSET], &c), want);
    // lit4 offset: the register place ends up at its end -> error.
    assert_eq!(evaluate(&[0x34, OFFSET], &c), err(R::OP_OFFSET_OUT_OF_STORAGE, 1));
    // sgpr0 piece 4 piece_end lit1 offset: the complete composite (32 bits)
    // at bit 8, i.e. its last 24 bits: bits 8.. of sgpr0.
    c.initial_stack.clear();
    let e = cat(&[&SGPR0, &[0x93, 0x04, PIECE_END, 0x31, OFFSET]]);
    assert_eq!(evaluate(&e, &c), composite(&[(24, reg(32, 8))]));
    // ... lit4 offset: bit 32 = the composite's size -> error at 6.
    let e = cat(&[&SGPR0, &[0x93, 0x04, PIECE_END, 0x34, OFFSET]]);
    assert_eq!(evaluate(&e, &c), err(R::OP_OFFSET_OUT_OF_STORAGE, 6));
}

#[test]
fn aspace_bregx() {
    let mut c = state();
    // lit5 aspace_bregx sgpr0 4: sgpr0 (0x10) read as 32 bits + 4, in
    // private_lane bound to thread 7 / lane 3.
    assert_eq!(evaluate(&[0x35, ASPACE_BREGX, 32, 4], &c), loc(mem(5, 0x14, Some(7), Some(3))));
    // Displacement -0x20 (SLEB 0x60): 0x10 - 0x20 modulo 2^32.
    assert_eq!(evaluate(&[0x33, ASPACE_BREGX, 32, 0x60], &c), loc(mem(3, 0xffff_fff0, None, None)));
    // generic (1) has 64-bit addresses: a 64-bit read of the 32-bit sgpr0
    // is past its end.
    assert_eq!(evaluate(&[0x31, ASPACE_BREGX, 32, 0], &c), err(R::OP_DEREF_PAST_STORAGE_END, 1));
    // Unknown address space 4: ill-formed, before the register is read.
    assert_eq!(evaluate(&[0x34, ASPACE_BREGX, 99, 0], &c), ill(R::OP_ASPACE_BREGX_UNKNOWN_ADDRESS_SPACE, 1));
    // A float address space: not integral.
    let e = cat(&[&FLOAT_1, &[ASPACE_BREGX, 32, 0]]);
    assert_eq!(evaluate(&e, &c), ill(R::OP_ASPACE_BREGX_REQUIRES_INTEGRAL, 11));
    // Empty stack: underflow.
    assert_eq!(evaluate(&[ASPACE_BREGX, 32, 0], &c), ill(R::EXPR_STACK_UNDERFLOW, 0));
    // The register is read before the binding: sgpr2 has no value, so the
    // missing lane is not reached.
    c.lane = None;
    assert_eq!(evaluate(&[0x35, ASPACE_BREGX, 34, 0], &c), err(R::CTX_REGISTER_UNAVAILABLE, 1));
    assert_eq!(evaluate(&[0x35, ASPACE_BREGX, 32, 0], &c), err(R::CTX_LANE_MISSING, 1));
    // hetero-2020-uleb profile: 0x60 is +0x60.
    c.lane = Some(3);
    c.vendor = VendorProfile::by_name("hetero-2020-uleb").unwrap();
    assert_eq!(evaluate(&[0x33, ASPACE_BREGX, 32, 0x60], &c), loc(mem(3, 0x70, None, None)));
}

#[test]
fn piece_end_completes() {
    let c = state();
    // sgpr0 piece 4 sgpr1 piece 4: one composite of both.
    let e = cat(&[&SGPR0, &[0x93, 0x04], &SGPR1, &[0x93, 0x04]]);
    assert_eq!(evaluate(&e, &c), composite(&[(32, reg(32, 0)), (32, reg(33, 0))]));
    // With piece_end after the first piece, the second piece pops sgpr1 and
    // finds a complete composite below: it starts a new one (on top).
    let e = cat(&[&SGPR0, &[0x93, 0x04, PIECE_END], &SGPR1, &[0x93, 0x04]]);
    assert_eq!(evaluate(&e, &c), composite(&[(32, reg(33, 0))]));
    // ... and a complete composite is an ordinary location: dup is fine.
    let e = cat(&[&SGPR0, &[0x93, 0x04, PIECE_END, 0x12]]);
    assert_eq!(evaluate(&e, &c), composite(&[(32, reg(32, 0))]));
    // piece_end twice: the second finds a complete composite (at 5).
    let e = cat(&[&SGPR0, &[0x93, 0x04, PIECE_END, PIECE_END]]);
    assert_eq!(evaluate(&e, &c), ill(R::OP_PIECE_END_NOT_INCOMPLETE, 5));
    // On a register location, and on an empty stack.
    assert_eq!(evaluate(&cat(&[&SGPR0, &[PIECE_END]]), &c), ill(R::OP_PIECE_END_NOT_INCOMPLETE, 2));
    assert_eq!(evaluate(&[PIECE_END], &c), ill(R::EXPR_STACK_UNDERFLOW, 0));
}

#[test]
fn extend_repeats_a_location() {
    let mut c = state();
    // sgpr0 extend 8 4: four 8-bit parts, each bits 0..7 of sgpr0 (not
    // consecutive bits, so no two pieces merge).
    let e = cat(&[&SGPR0, &[EXTEND, 8, 4]]);
    let p = (8, reg(32, 0));
    assert_eq!(evaluate(&e, &c), composite(&[p.clone(), p.clone(), p.clone(), p]));
    // The result is complete: a following piece starts a new composite
    // whose one part is it (32 bits) -> flattened to the same four parts.
    let e = cat(&[&SGPR0, &[EXTEND, 8, 4, 0x93, 0x04]]);
    let p = (8, reg(32, 0));
    assert_eq!(evaluate(&e, &c), composite(&[p.clone(), p.clone(), p.clone(), p]));
    // Zero size or count: ill-formed, before the (empty) stack is looked at.
    assert_eq!(evaluate(&[EXTEND, 0, 4], &c), ill(R::OP_EXTEND_ZERO, 0));
    assert_eq!(evaluate(&[EXTEND, 8, 0], &c), ill(R::OP_EXTEND_ZERO, 0));
    assert_eq!(evaluate(&[EXTEND, 8, 1], &c), ill(R::EXPR_STACK_UNDERFLOW, 0));
    // 33-bit parts of a 32-bit register do not fit.
    assert_eq!(evaluate(&cat(&[&SGPR0, &[EXTEND, 33, 2]]), &c), ill(R::COMPOSITE_PART_EXCEEDS_STORAGE, 2));
    // A 4-byte size budget: 8 x 5 = 40 bits is over it, even on an empty stack.
    c.budgets.size_bytes = 4;
    assert_eq!(
        evaluate(&[EXTEND, 8, 5], &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(0) })
    );
}

#[test]
fn extend_too_large_for_a_small_target() {
    // A target whose largest address space has 16-bit addresses holds
    // composites of at most 2^16 bytes = 2^19 bits: 2^10 x 2^10 bits is over.
    let mut t = presets::amdgpu_wave64();
    for a in &mut t.address_spaces {
        a.address_bits = 16;
    }
    let c = Context::new(Arc::new(t));
    let e = [EXTEND, 0x80, 0x08, 0x80, 0x08]; // S = C = 1024 (ULEB 80 08)
    assert_eq!(evaluate(&e, &c), ill(R::COMPOSITE_TOO_LARGE, 0));
}

#[test]
fn select_bit_piece() {
    let c = state();
    // sgpr0 (L0) sgpr1 (L1) lit5 (M = 0b0101) select_bit_piece 8 4:
    // part N is L1 when bit N of M is set, moved N*8 bits:
    // sgpr1@0, sgpr0@8, sgpr1@16, sgpr0@24.
    let e = cat(&[&SGPR0, &SGPR1, &[0x35, SELECT, 8, 4]]);
    let want = composite(&[(8, reg(33, 0)), (8, reg(32, 8)), (8, reg(33, 16)), (8, reg(32, 24))]);
    assert_eq!(evaluate(&e, &c), want);
    // M = 0: all of sgpr0, consecutive bits merge into one 32-bit piece.
    let e = cat(&[&SGPR0, &SGPR1, &[0x30, SELECT, 8, 4]]);
    assert_eq!(evaluate(&e, &c), composite(&[(32, reg(32, 0))]));
    // undefined (L0) sgpr1 (L1) lit2: part 0 undefined, part 1 sgpr1@8.
    let e = cat(&[&[UNDEFINED], &SGPR1, &[0x32, SELECT, 8, 2]]);
    assert_eq!(evaluate(&e, &c), composite(&[(8, Source::Undefined), (8, reg(33, 8))]));
    // 16-bit elements x 3: part 2 moves sgpr0 by 32 bits -> out of storage.
    let e = cat(&[&SGPR0, &SGPR1, &[0x30, SELECT, 16, 3]]);
    assert_eq!(evaluate(&e, &c), err(R::OP_BIT_OFFSET_OUT_OF_STORAGE, 5));
    // 24-bit elements x 2: part 1 at bit 24 of sgpr0 needs bits 24..47.
    let e = cat(&[&SGPR0, &SGPR1, &[0x30, SELECT, 24, 2]]);
    assert_eq!(evaluate(&e, &c), ill(R::COMPOSITE_PART_EXCEEDS_STORAGE, 5));
    // An unsigned8 mask cannot select 9 parts (checked after the pops).
    let e = cat(&[&[UNDEFINED, UNDEFINED, 0xa4, 0x50, 0x01, 0x00, SELECT, 1, 9]]);
    assert_eq!(evaluate(&e, &c), ill(R::OP_SELECT_BIT_PIECE_MASK_TOO_SMALL, 6));
    // A float mask: not integral.
    let e = cat(&[&[UNDEFINED, UNDEFINED], &FLOAT_1, &[SELECT, 1, 1]]);
    assert_eq!(evaluate(&e, &c), ill(R::OP_SELECT_BIT_PIECE_REQUIRES_INTEGRAL, 13));
    // Zero count before the stack; two entries are an underflow.
    assert_eq!(evaluate(&[SELECT, 1, 0], &c), ill(R::OP_SELECT_BIT_PIECE_ZERO, 0));
    assert_eq!(evaluate(&[UNDEFINED, 0x30, SELECT, 1, 1], &c), ill(R::EXPR_STACK_UNDERFLOW, 2));
}

#[test]
fn default_address_space_per_thread() {
    // A target whose default address space is per thread: DW_OP_addr and
    // the conversion of a generic value bind the current thread too
    // (loc.memory.bound-at-creation).
    let mut t = presets::amdgpu_wave64();
    t.address_spaces[0].per_thread = true;
    let mut c = Context::new(Arc::new(t));
    let addr = [0x03, 0x10, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(evaluate(&addr, &c), err(R::CTX_THREAD_MISSING, 0));
    c.thread = Some(7);
    assert_eq!(evaluate(&addr, &c), loc(mem(0, 0x10, Some(7), None)));
    // lit16 lit2 offset: the generic value 16 becomes thread 7's memory.
    assert_eq!(evaluate(&[0x40, 0x32, OFFSET], &c), loc(mem(0, 0x12, Some(7), None)));
}

#[test]
fn fbreg_keeps_the_frame_base_binding() {
    // Frame base: lit16 lit6 form_aspace_address (private_wave, thread 7);
    // fbreg 2 adds 2 to that byte address and keeps the storage.
    let mut c = state();
    c.frame_base = Some(vec![0x40, 0x36, FORM]);
    assert_eq!(evaluate(&[0x91, 0x02], &c), loc(mem(6, 0x12, Some(7), None)));
}

#[test]
fn offset_edges() {
    let mut c = state();
    // Register 99 is not a wave64 register: no known size, not checked.
    assert_eq!(evaluate(&[0x90, 99, 0x38, OFFSET], &c), loc(reg(99, 64)));
    // A 256-bit displacement is not computed (Unsupported, as arithmetic).
    let mut bt = c.cu.as_ref().unwrap().base_types.clone();
    bt.insert(0x70, BaseType::ate(ate::UNSIGNED, 256, false));
    c.cu.as_mut().unwrap().base_types = bt;
    let mut e = cat(&[&SGPR0, &[0xa4, 0x70, 0x20, 0x01]]);
    e.extend([0u8; 31]);
    e.push(OFFSET);
    assert!(matches!(evaluate(&e, &c), Outcome::Failed(Failure::Unsupported { .. })));
    // extend 1 5 with a 4-byte budget: 5 bits fit the size budget, but 5
    // parts at 8 bytes each do not (op.extend.size-limits).
    c.budgets.size_bytes = 4;
    assert_eq!(
        evaluate(&[UNDEFINED, EXTEND, 1, 5], &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(1) })
    );
}

#[test]
fn extend_does_not_move_its_part_location() {
    let c = state();
    // implicit_value 0 (empty storage, 0 bits) extend 8 1: DW_OP_LLVM_extend
    // moves nothing; its one 8-bit part does not fit a 0-bit storage, which
    // op.extend.creates-composite makes composite.part-exceeds-storage
    // (ill-formed), not an offset error.
    assert_eq!(evaluate(&[0x9e, 0x00, EXTEND, 8, 1], &c), ill(R::COMPOSITE_PART_EXCEEDS_STORAGE, 2));
    // select_bit_piece does move: part 0 of the same storage is moved 0 bits,
    // and offset 0 is at the end of 0-bit storage (op.bit-offset.out-of-storage).
    let e = [0x9e, 0x00, 0x9e, 0x00, 0x30, SELECT, 8, 1];
    assert_eq!(evaluate(&e, &c), err(R::OP_BIT_OFFSET_OUT_OF_STORAGE, 5));
}

#[test]
fn parts_are_weighed_by_their_pieces() {
    // op.extend.size-limits: every part costs 8 bytes per normal-form piece
    // it covers. L = sgpr0 piece 1 sgpr1 piece 1 piece_end: a complete
    // 16-bit composite of two pieces (bytes 0..8 of the expression).
    let mut c = state();
    c.budgets.size_bytes = 40;
    let l: Vec<u8> = cat(&[&SGPR0, &[0x93, 0x01], &SGPR1, &[0x93, 0x01, PIECE_END]]);
    // extend 16 2: 2 parts x 2 pieces x 8 = 32 bytes <= 40.
    let e = cat(&[&l, &[EXTEND, 16, 2]]);
    let two = [(8, reg(32, 0)), (8, reg(33, 0))];
    assert_eq!(evaluate(&e, &c), composite(&[two[0].clone(), two[1].clone(), two[0].clone(), two[1].clone()]));
    // extend 16 3: 3 x 2 x 8 = 48 bytes > 40 (the operands alone pass:
    // 3 x 8 = 24 bytes, 48 bits).
    assert_eq!(
        evaluate(&cat(&[&l, &[EXTEND, 16, 3]]), &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(9) })
    );
    // extend 8 3: each 8-bit part covers only sgpr0's piece: 3 x 1 x 8 = 24.
    let p = (8, reg(32, 0));
    assert_eq!(evaluate(&cat(&[&l, &[EXTEND, 8, 3]]), &c), composite(&[p.clone(), p.clone(), p]));
    // select_bit_piece 8 2 with M = 0: part 0 is L's first byte, part 1 L
    // moved 8 bits (sgpr1's piece): 1 + 1 pieces, 16 bytes.
    let e = cat(&[&l, &[UNDEFINED, 0x30, SELECT, 8, 2]]);
    assert_eq!(evaluate(&e, &c), composite(&two));
    // With an 8-byte budget, select_bit_piece 12 1 covers both pieces: 16 > 8.
    c.budgets.size_bytes = 8;
    let e = cat(&[&l, &[UNDEFINED, 0x30, SELECT, 12, 1]]);
    assert_eq!(evaluate(&e, &c), Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(11) }));
}

#[test]
fn deeply_nested_composites() {
    // sgpr0 followed by 20000 x (extend 8 1): each extend makes a complete
    // composite whose one 8-bit part is the previous location, so the result
    // is bits 0..7 of sgpr0, 20000 composites deep. Its normal form is one
    // 8-bit piece of sgpr0, and deref_size 1 reads sgpr0's low byte, 0x10.
    // Nothing may recurse 20000 deep.
    let c = state();
    let mut e = SGPR0.to_vec();
    for _ in 0..20000 {
        e.extend([EXTEND, 8, 1]);
    }
    assert_eq!(evaluate(&e, &c), composite(&[(8, reg(32, 0))]));
    e.extend([0x94, 0x01]);
    assert_eq!(evaluate(&e, &c), g(0x10));
    // The same depth through piece_end: sgpr0 piece 1 piece_end, then
    // 20000 x (piece 1 piece_end): each piece pops the complete composite
    // as the part of a new one.
    let mut e = cat(&[&SGPR0, &[0x93, 0x01, PIECE_END]]);
    for _ in 0..20000 {
        e.extend([0x93, 0x01, PIECE_END]);
    }
    assert_eq!(evaluate(&e, &c), composite(&[(8, reg(32, 0))]));
}

#[test]
fn a_dropped_extend_composite_gives_its_parts_back() {
    use super::{Program, Scratch};
    // sgpr0; extend 8 100; drop, three times, then lit0; stack_value. Each
    // extend makes 100 parts; once dropped nothing names them, so the
    // next extend reuses them: 0 parts are left at the end instead of 300.
    let turn = cat(&[&SGPR0, &[EXTEND, 8, 100, 0x13]]);
    let e = cat(&[&turn, &turn, &turn, &[0x30, 0x9f]]);
    let c = state();
    let mut s = Scratch::new();
    let out = Program::compile(&e, &c).run(&c, &mut s);
    assert_eq!(out, loc(Source::Implicit { bytes: vec![0; 8], bit_offset: 0 }));
    assert_eq!((s.parts.len(), s.composites.len()), (0, 0));
    // A composite still named by another entry (dup) is kept: 100 parts.
    let kept = cat(&[&SGPR0, &[EXTEND, 8, 100, 0x12, 0x13]]);
    let out = Program::compile(&kept, &c).run(&c, &mut s);
    assert!(matches!(out, Outcome::Location(_)), "{out:?}");
    assert_eq!(s.parts.len(), 100);
}
