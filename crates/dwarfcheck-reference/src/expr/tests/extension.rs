//! Unit tests of the hetero-2020 extension operations (rules in
//! `specs/rules/extension.yaml`): the corners the YAML cases do not reach.
//! Opcodes are the direct hetero-2020 ones: 0xe1 form_aspace_address,
//! 0xe2 push_lane, 0xe3 offset, 0xe4 offset_uconst, 0xe5 bit_offset,
//! 0xe7 undefined, 0xe8 aspace_bregx, 0xea piece_end, 0xeb extend,
//! 0xec select_bit_piece.

use super::*;
use crate::expr::evaluate_noting_unspecified;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::target::{AddressSpace, Target};
use proptest::prelude::*;

/// x86-64 with the hetero-2020 opcodes.
fn hctx(kind: ResultKind) -> Context {
    let mut c = with_kind(ctx(), kind);
    c.vendor = VendorProfile::hetero_2020();
    c
}

/// AMDGPU wave64 (its preset profile is hetero-2020).
fn gpu(kind: ResultKind) -> Context {
    let mut c = Context::new(Arc::new(presets::by_name("amdgpu-wave64").expect("preset")));
    c.result_kind = Some(kind);
    c
}

fn bound(aspace: u64, addr: u64, thread: Option<u64>, lane: Option<u32>) -> Source {
    Source::Memory { aspace, bit_addr: u128::from(addr) * 8, thread, lane }
}

fn places(srcs: &[Source]) -> CtxEntry {
    CtxEntry::Location(NormalLocation { places: srcs.iter().cloned().map(SingleLocation::Simple).collect() })
}

#[test]
fn offset_moves_every_place_and_reads_check_agreement() {
    // memory 0x1000 holds de ad be ef 01 02 03 04 and rax is
    // 0x1122334455667788. A location with both places, moved 1 byte:
    // memory byte 0x1001 = 0xad, rax bits 8..15 = 0x77. They differ, so a
    // read is ill-formed (expr.loc.places-must-agree).
    let mut c = hctx(ResultKind::Value);
    c.initial_stack = vec![places(&[mem(0x1000), reg(0, 0)])];
    // lit1; LLVM_offset; deref_size 1
    assert_eq!(evaluate(&[0x31, 0xe3, 0x94, 0x01], &c), ill(id::EXPR_LOC_PLACES_MUST_AGREE, Some(2)));
    // With rax = 0x...ad00, byte 1 of rax is 0xad too: the read agrees.
    c.registers.insert(0, 0xad00u64.to_le_bytes().to_vec());
    assert_eq!(evaluate(&[0x31, 0xe3, 0x94, 0x01], &c), g64(0xad));
}

#[test]
fn generic_displacement_with_top_bit_rests_on_the_signedness_decision() {
    // consts -8 (0x11 0x78) is generic 0xff..f8: -8 bytes from 0x1010.
    let c = hctx(ResultKind::Location);
    let e = [0x0a, 0x10, 0x10, 0x11, 0x78, 0xe3]; // const2u 0x1010; consts -8; offset
    let (out, notes) = evaluate_noting_unspecified(&e, &c);
    assert_eq!(out, loc(mem(0x1008)));
    assert_eq!(notes, vec![id::OP_OFFSET_DISPLACEMENT_SIGNED]);
    // A positive displacement shows no choice.
    let (out, notes) = evaluate_noting_unspecified(&[0x0a, 0x10, 0x10, 0x38, 0xe3], &c);
    assert_eq!(out, loc(mem(0x1018)));
    assert!(notes.is_empty());
}

#[test]
fn huge_unsigned_displacement_is_out_of_storage_but_leaves_undefined_alone() {
    // unsigned128 (DIE 0x35) 2^127 + 1 is above i128::MAX: saturated, it is
    // beyond every storage; undefined storage ignores displacements.
    let mut block = vec![0u8; 16];
    block[0] = 1;
    block[15] = 0x80;
    let mut e = vec![0x50, 0xa4, 0x35, 16]; // reg0; const_type 0x35 16 ...
    e.extend(&block);
    e.push(0xe3);
    assert_eq!(evaluate(&e, &hctx(ResultKind::Location)), err(id::OP_OFFSET_OUT_OF_STORAGE, Some(20)));
    e[0] = 0xe7; // LLVM_undefined instead of reg0
    assert_eq!(evaluate(&e, &hctx(ResultKind::Location)), loc(Source::Undefined));
}

#[test]
fn displacement_wider_than_128_bits_is_unsupported() {
    // A 256-bit unsigned displacement is outside what the reference computes
    // (ambiguity 10).
    let mut c = hctx(ResultKind::Location);
    c.cu.as_mut().expect("unit").base_types.insert(0x58, BaseType::ate(ate::UNSIGNED, 256, false));
    let mut e = vec![0x50, 0xa4, 0x58, 32];
    e.extend([0u8; 32]);
    e.push(0xe5);
    assert!(matches!(evaluate(&e, &c), Outcome::Failed(Failure::Unsupported { .. })));
}

#[test]
fn bit_offset_composite_crosses_parts() {
    // composite (rax 8 bits, rdx 8 bits) completed, moved 4 bits: slicing
    // from bit 4 gives rax bits 4..7 then rdx bits 0..7.
    // reg0 piece 1 reg1 piece 1 piece_end lit4 bit_offset
    let e = [0x50, 0x93, 0x01, 0x51, 0x93, 0x01, 0xea, 0x34, 0xe5];
    assert_eq!(evaluate(&e, &hctx(ResultKind::Location)), composite(&[(4, reg(0, 4)), (8, reg(1, 0))]));
    // bit 16 is the composite's end: out of storage.
    let e = [0x50, 0x93, 0x01, 0x51, 0x93, 0x01, 0xea, 0x08, 0x10, 0xe5];
    assert_eq!(evaluate(&e, &hctx(ResultKind::Location)), err(id::OP_BIT_OFFSET_OUT_OF_STORAGE, Some(9)));
}

#[test]
fn extend_part_count_is_bounded_by_the_size_budget() {
    // S = 1, C = 3: 3 bits is within 8*16 = 128 bits, but 3 parts at 8
    // bytes each are more than size_bytes = 16 (op.extend.size-limits).
    let mut c = hctx(ResultKind::Location);
    c.budgets.size_bytes = 16;
    assert_eq!(
        evaluate(&[0x50, 0xeb, 0x01, 0x03], &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(1) })
    );
    // C = 2 is fine: 2 one-bit parts of rax bit 0.
    let out = evaluate(&[0x50, 0xeb, 0x01, 0x02], &c);
    assert_eq!(out, composite(&[(1, reg(0, 0)), (1, reg(0, 0))]));
}

#[test]
fn select_mask_uses_the_bit_pattern_of_its_type() {
    // M = signed8 -1 = 0xff: all eight parts come from L1 (rdx), each moved
    // N*8 bits, which normalise into one 64-bit run of rdx.
    let mut c = hctx(ResultKind::Location);
    c.cu.as_mut().expect("unit").base_types.insert(0x29, BaseType::ate(ate::SIGNED, 8, false));
    // reg0; reg1; const_type 0x29 1 ff; select_bit_piece 8 8
    let e = [0x50, 0x51, 0xa4, 0x29, 0x01, 0xff, 0xec, 0x08, 0x08];
    assert_eq!(evaluate(&e, &c), composite(&[(64, reg(1, 0))]));
}

#[test]
fn select_mask_may_be_a_memory_location() {
    // A memory location converts to its address as the mask value:
    // DW_OP_addr 0x2 is M = 2 (0b10): part 0 from L0 (rax), part 1 from L1
    // (rdx) moved 16 bits.
    let mut e = vec![0x50, 0x51, 0x03];
    e.extend(2u64.to_le_bytes());
    e.extend([0xec, 0x10, 0x02]);
    assert_eq!(evaluate(&e, &hctx(ResultKind::Location)), composite(&[(16, reg(0, 0)), (16, reg(1, 16))]));
}

#[test]
fn default_address_space_binds_when_the_target_makes_it_per_thread() {
    // loc.memory.bound-at-creation applies to DW_OP_addr and to the
    // generic-value conversion too, on a target whose space 0 is per thread.
    let mut t: Target = presets::x86_64();
    t.address_spaces =
        vec![AddressSpace { number: 0, name: "tls".into(), address_bits: 64, per_thread: true, per_lane: false }];
    let mut c = Context::new(Arc::new(t));
    c.result_kind = Some(ResultKind::Location);
    let mut addr = vec![0x03];
    addr.extend(0x40u64.to_le_bytes());
    assert_eq!(evaluate(&addr, &c), err(id::CTX_THREAD_MISSING, Some(0)));
    c.thread = Some(9);
    assert_eq!(evaluate(&addr, &c), loc(bound(0, 0x40, Some(9), None)));
    // lit4 as the final result converts to memory 4, bound to thread 9.
    assert_eq!(evaluate(&[0x34], &c), loc(bound(0, 4, Some(9), None)));
}

#[test]
fn private_lane_read_uses_the_bound_lane_after_offset() {
    // form_aspace_address in private_lane (5) for thread 1 lane 3, then
    // offset 2: the read hits lane 3's bytes 2..3 (0x33, 0x44).
    let mut c = gpu(ResultKind::Value);
    c.thread = Some(1);
    c.lane = Some(3);
    c.memory.push(MemorySegment {
        aspace: 5,
        address: 0x100,
        bytes: vec![0x11, 0x22, 0x33, 0x44],
        thread: Some(1),
        lane: Some(3),
    });
    c.memory.push(MemorySegment {
        aspace: 5,
        address: 0x100,
        bytes: vec![0x55, 0x66, 0x77, 0x88],
        thread: Some(1),
        lane: Some(4),
    });
    // const2u 0x100; lit5; form; lit2; offset; deref_size 2
    let e = [0x0a, 0x00, 0x01, 0x35, 0xe1, 0x32, 0xe3, 0x94, 0x02];
    assert_eq!(evaluate(&e, &c), g64(0x4433));
    // The same location read as lane 4's: the lane that was current at
    // creation counts, so changing the context lane changes the storage.
    c.lane = Some(4);
    assert_eq!(evaluate(&e, &c), g64(0x8877));
}

#[test]
fn aspace_bregx_reads_register_as_address_size() {
    // aspace 3 (32-bit) with exec_mask_64 = 0xffff_ffff_0000_0010: the low
    // 32 bits 0x10 plus B = 4.
    let mut c = gpu(ResultKind::Location);
    c.registers.insert(17, 0xffff_ffff_0000_0010u64.to_le_bytes().to_vec());
    assert_eq!(evaluate(&[0x33, 0xe8, 0x11, 0x04], &c), loc(bound(3, 0x14, None, None)));
    // Reading an unavailable register is reported after the space check.
    let c = gpu(ResultKind::Location);
    assert_eq!(evaluate(&[0x33, 0xe8, 0x11, 0x04], &c), err(id::CTX_REGISTER_UNAVAILABLE, Some(1)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
    /// Streams of extension operations with small operands never panic and
    /// never allocate beyond the size budget (it is 64 bytes here).
    #[test]
    fn extension_ops_never_panic(
        ops in proptest::collection::vec((prop::sample::select(vec![
            0x30u8, 0x31, 0x35, 0x36, 0x11, 0x50, 0x90, 0x93, 0x9d, 0x12, 0x16, 0x94,
            0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe7, 0xe8, 0xea, 0xeb, 0xec, 0xa8,
        ]), any::<u8>(), any::<u8>()), 0..14),
        lane in proptest::option::of(0u32..70),
        thread in proptest::option::of(0u64..3),
    ) {
        let mut bytes = Vec::new();
        for (op, a, b) in ops {
            bytes.push(op);
            match op {
                0x11 => bytes.push(a & 0x7f),
                0x90 => bytes.extend([0x80 | (a & 0x7f), 0x14]), // regx 2560 + a % 128
                0x93 | 0x94 | 0xe4 => bytes.push(a & 0x7f),
                0x9d | 0xeb | 0xec => bytes.extend([a & 0x7f, b & 0x7f]),
                0xe8 => bytes.extend([0x20 + (a % 4), b & 0x7f]),
                0xa8 => bytes.extend([a & 0x7f, b & 0x7f]),
                _ => {}
            }
        }
        let mut c = gpu(ResultKind::Location);
        c.budgets.size_bytes = 64;
        c.lane = lane;
        c.thread = thread;
        c.synthetic = Some(3);
        let _ = evaluate(&bytes, &c);
    }
}

#[test]
fn extend_of_a_moved_composite_uses_its_window() {
    // PL = complete composite (rax 8 | rdx 8 | rcx 8) moved 8 bits: its
    // first 8 bits are rdx bits 0..7; extend 8 2 repeats them twice.
    // reg0 piece 1 reg1 piece 1 reg2 piece 1 piece_end lit8 bit_offset extend 8 2
    let e = [0x50, 0x93, 0x01, 0x51, 0x93, 0x01, 0x52, 0x93, 0x01, 0xea, 0x38, 0xe5, 0xeb, 0x08, 0x02];
    assert_eq!(evaluate(&e, &hctx(ResultKind::Location)), composite(&[(8, reg(1, 0)), (8, reg(1, 0))]));
    // A 17-bit part from bit 8 of the 24-bit composite does not fit.
    let mut bad = e;
    bad[13] = 17;
    bad[14] = 1;
    assert_eq!(evaluate(&bad, &hctx(ResultKind::Location)), ill(id::COMPOSITE_PART_EXCEEDS_STORAGE, Some(12)));
}

#[test]
fn select_of_composite_locations_moves_inside_them() {
    // L0 = complete composite (rax 16 | rdx 16), L1 = undefined, M = 0b010,
    // S = 8, C = 3: part 0 = L0 bits 0..7 (rax 0..7), part 1 = undefined,
    // part 2 = L0 bits 16..23 (rdx 0..7).
    let e = [0x50, 0x93, 0x02, 0x51, 0x93, 0x02, 0xea, 0xe7, 0x32, 0xec, 0x08, 0x03];
    assert_eq!(
        evaluate(&e, &hctx(ResultKind::Location)),
        composite(&[(8, reg(0, 0)), (8, Source::Undefined), (8, reg(1, 0))])
    );
    // With S = 16, C = 3 and M = 0, part 2 starts at bit 32: the composite's end.
    let e = [0x50, 0x93, 0x02, 0x51, 0x93, 0x02, 0xea, 0xe7, 0x30, 0xec, 0x10, 0x03];
    assert_eq!(evaluate(&e, &hctx(ResultKind::Location)), err(id::OP_BIT_OFFSET_OUT_OF_STORAGE, Some(9)));
}

#[test]
fn select_keeps_several_places_of_a_part() {
    // L0 has two places (memory 0x1000 and rax); part 1 (M = 0) is both,
    // moved 8 bits; L1 (rdx) is used for part 0 (M = 1).
    let mut c = hctx(ResultKind::Location);
    c.initial_stack = vec![places(&[mem(0x1000), reg(0, 0)])];
    // reg1; lit1; select_bit_piece 8 2
    let out = evaluate(&[0x51, 0x31, 0xec, 0x08, 0x02], &c);
    let expected = Outcome::Location(NormalLocation {
        places: vec![SingleLocation::Composite(vec![
            Piece { bits: 8, sources: BTreeSet::from([reg(1, 0)]) },
            Piece { bits: 8, sources: BTreeSet::from([mem(0x1001), reg(0, 8)]) },
        ])],
    });
    assert_eq!(out, expected);
}

#[test]
fn copies_of_fragmented_composites_are_weighed_against_the_budget() {
    // PL = complete composite of four 1-bit pieces alternating rax / rdx
    // (bit 0 of each, none continues the one before): weight 4.
    // reg0 bit_piece 1 0, reg1 bit_piece 1 0, reg0 bit_piece 1 1, reg1 bit_piece 1 1, piece_end
    let pl = [0x50, 0x9d, 0x01, 0x00, 0x51, 0x9d, 0x01, 0x00, 0x50, 0x9d, 0x01, 0x01, 0x51, 0x9d, 0x01, 0x01, 0xea];
    let mut c = hctx(ResultKind::Location);
    c.budgets.size_bytes = 32;
    // extend 4 2: 8 bits and 2 parts (16 bytes) are fine, but weight
    // 4 * 2 * 8 = 64 bytes > 32.
    let mut e = pl.to_vec();
    e.extend([0xeb, 0x04, 0x02]);
    assert_eq!(evaluate(&e, &c), Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(17) }));
    // extend 4 1: weight 4 * 8 = 32 is within the budget.
    e[19] = 1;
    assert_eq!(evaluate(&e, &c), composite(&[(1, reg(0, 0)), (1, reg(1, 0)), (1, reg(0, 1)), (1, reg(1, 1))]));
    // select_bit_piece 2 2 with L0 = PL, L1 = undefined, M = 0 and
    // size_bytes 16: 2 parts (16 bytes) pass the operand check; part 0
    // weighs 2 (16 bytes, fine), part 1 brings it to 4 (32 > 16).
    c.budgets.size_bytes = 16;
    let mut e = pl.to_vec();
    e.extend([0xe7, 0x30, 0xec, 0x02, 0x02]);
    assert_eq!(evaluate(&e, &c), Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(19) }));
}

/// A trace summarises a location whose normal form is large instead of
/// building it at every step: 60 one-bit parts of consecutive memory bits
/// (select_bit_piece 1 60 with mask 0: one piece of normal form) extended
/// 60,000 times share that composite, so the result is 60,000 x 61 parts
/// to walk. Built at each traced step, that normal form took 24 GB (the
/// `fuzz-stats` run of the CI fuzz smoke, killed by the OOM killer). The
/// result itself goes over the work budget (expr.budget.work, no offset).
#[test]
fn a_trace_summarises_a_location_with_a_large_normal_form() {
    // addr 0x1000 (0), addr 0x1000 (9), lit0 (18), select_bit_piece 1 60
    // (19), extend 60 60000 (22).
    let mut e = vec![0x03];
    e.extend_from_slice(&0x1000u64.to_le_bytes());
    e.push(0x03);
    e.extend_from_slice(&0x1000u64.to_le_bytes());
    e.extend_from_slice(&[0x30, 0xec, 0x01, 0x3c, 0xeb, 0x3c, 0xe0, 0xd4, 0x03]);
    let c = hctx(ResultKind::Location);
    let (outcome, trace) = crate::expr::evaluate_traced(&e, &c);
    assert_eq!(outcome, Outcome::Failed(Failure::Budget { budget: BudgetKind::Work, at: None }));
    let last = trace.last().expect("steps");
    assert_eq!(last.at, 22);
    assert_eq!(last.stack.len(), 1);
    assert!(last.stack[0].contains("more than 256 composite parts"), "{}", last.stack[0]);
    // The select's composite alone is small enough to show.
    assert!(trace[3].stack[0].starts_with("composite["), "{}", trace[3].stack[0]);
}
