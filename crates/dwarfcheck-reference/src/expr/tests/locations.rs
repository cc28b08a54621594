//! Tests of memory, register, implicit and composite locations, dereferencing and the frame base.

use super::*;
use dwarfcheck_core::outcome::Failure;

// ---- memory, registers, deref ------------------------------------------------------

#[test]
fn register_and_memory_locations() {
    // op.regx.pushes-register; op.reg.same-as-regx.
    assert_eq!(location(&[0x50]), loc(reg(0, 0)));
    assert_eq!(location(&[0x90, 0x11]), loc(reg(17, 0)));
    // regx of a register the target lacks is just a name (reg.unknown-register-read).
    assert_eq!(location(&[0x90, 0xe7, 0x07]), loc(reg(999, 0)));
    // op.addr.pushes-memory.
    assert_eq!(location(&[0x03, 0x10, 0, 0, 0, 0, 0, 0, 0]), loc(mem(0x10)));
    // op.breg.register-plus-offset with a negative displacement.
    assert_eq!(location(&[0x77, 0x78]), loc(mem(0x7ffc_0000 - 8)));
    assert_eq!(location(&[0x92, 0x07, 0x08]), loc(mem(0x7ffc_0008)));
    // op.gnu-uninit.no-effect.
    assert_eq!(location(&[0x5c, 0xf0]), loc(reg(12, 0)));
}

#[test]
fn dereferencing() {
    // op.reg.location-on-stack + op.deref.generic: reg0 deref reads rax.
    assert_eq!(value(&[0x50, 0x06]), g64(0x1122_3344_5566_7788));
    // deref_size 2 at 0x1000 (bytes de ad) -> 0xadde.
    assert_eq!(value(&[0x0a, 0x00, 0x10, 0x94, 0x02]), g64(0xadde));
    // deref at 0x1000 reads 8 bytes little-endian.
    assert_eq!(value(&[0x0a, 0x00, 0x10, 0x06]), g64(0x0403_0201_efbe_adde));
    // deref_size larger than the generic size reads only 8 bytes.
    assert_eq!(value(&[0x0a, 0x00, 0x10, 0x94, 0x10]), g64(0x0403_0201_efbe_adde));
    // op.deref-size.zero: nothing read, 0 pushed, even at an unreadable address.
    assert_eq!(value(&[0x30, 0x94, 0x00]), g64(0));
    // op.deref.memory-unreadable at the deref (offset 3).
    assert_eq!(value(&[0x0a, 0x00, 0x20, 0x06]), err(id::OP_DEREF_MEMORY_UNREADABLE, Some(3)));
    // deref_type signed32 at 0x1004 -> 0x04030201.
    let s32 = BaseType::ate(ate::SIGNED, 32, false);
    assert_eq!(value(&[0x0a, 0x04, 0x10, 0xa6, 0x04, 0x2a]), typed(s32, 0x0403_0201));
    // op.deref-type.size-mismatch: S = 8 for a 32-bit type.
    assert_eq!(value(&[0x0a, 0x04, 0x10, 0xa6, 0x08, 0x2a]), ill(id::OP_DEREF_TYPE_SIZE_MISMATCH, Some(3)));
    // op.typed.not-base-type.
    assert_eq!(value(&[0x0a, 0x04, 0x10, 0xa6, 0x04, 0x7f]), ill(id::OP_TYPED_NOT_BASE_TYPE, Some(3)));
    // loc.convert.value-not-generic: deref of a signed32 value.
    assert_eq!(value(&[0xa4, 0x2a, 4, 0, 0x10, 0, 0, 0x06]), ill(id::LOC_CONVERT_VALUE_NOT_GENERIC, Some(7)));
    // op.deref.undefined-storage: piece 8 deref? (incomplete) -> ill; use skip-free
    // undefined: empty stack piece, complete it via result... instead a
    // register bit offset past the end:
    // op.deref.past-storage-end: regval_type reg0 as signed128 (64-bit register).
    assert_eq!(value(&[0xa5, 0x00, 0x32]), err(id::OP_DEREF_PAST_STORAGE_END, Some(0)));
    // ctx.register-unavailable: rbx (3) has no value.
    assert_eq!(value(&[0x73, 0x00]), err(id::CTX_REGISTER_UNAVAILABLE, Some(0)));
    // reg.unknown-register-read: breg via bregx 999.
    assert_eq!(value(&[0x92, 0xe7, 0x07, 0x00]), err(id::REG_UNKNOWN_REGISTER_READ, Some(0)));
    // loc.incomplete-composite-not-location: piece 4 deref.
    assert_eq!(value(&[0x93, 0x04, 0x06]), ill(id::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION, Some(2)));
}

#[test]
fn undefined_storage_cannot_be_read() {
    // The initial stack holds an undefined location; deref reads it.
    let mut c = with_kind(ctx(), ResultKind::Value);
    c.initial_stack = vec![CtxEntry::Location(RawLocation::simple(Source::Undefined).normalize())];
    assert_eq!(evaluate(&[0x06], &c), err(id::OP_DEREF_UNDEFINED_STORAGE, Some(0)));
}

#[test]
fn places_must_agree() {
    // A location with two places whose contents differ: memory 0x1000
    // (..., 0xadde) vs rax.
    let mut c = with_kind(ctx(), ResultKind::Value);
    let two = NormalLocation { places: vec![SingleLocation::Simple(mem(0x1000)), SingleLocation::Simple(reg(0, 0))] };
    c.initial_stack = vec![CtxEntry::Location(two)];
    assert_eq!(evaluate(&[0x06], &c), ill(id::EXPR_LOC_PLACES_MUST_AGREE, Some(0)));
}

#[test]
fn typed_register_and_constant() {
    let u128t = BaseType::ate(ate::UNSIGNED, 128, false);
    // regval_type xmm0 (17) as unsigned128: byte 0 = 0x11, byte 15 = 0xff.
    assert_eq!(value(&[0xa5, 0x11, 0x35]), typed(u128t, (0xffu128 << 120) | 0x11));
    // op.typed.die-zero-generic: regval_type reg0 with DR 0 is generic.
    assert_eq!(value(&[0xa5, 0x00, 0x00]), g64(0x1122_3344_5566_7788));
    // op.const-type.size-mismatch.
    assert_eq!(value(&[0xa4, 0x2a, 2, 1, 0]), ill(id::OP_CONST_TYPE_SIZE_MISMATCH, Some(0)));
    // ctx.cu-missing for a nonzero DR without a unit.
    let mut c = with_kind(ctx(), ResultKind::Value);
    c.cu = None;
    assert_eq!(evaluate(&[0xa4, 0x2a, 4, 1, 0, 0, 0], &c), err(id::CTX_CU_MISSING, Some(0)));
}

#[test]
fn conversions() {
    let s64 = BaseType::ate(ate::SIGNED, 64, false);
    let u64t = BaseType::ate(ate::UNSIGNED, 64, false);
    let s32 = BaseType::ate(ate::SIGNED, 32, false);
    // op.convert.integral: signed32 -1 -> signed64 -1 and unsigned64 2^64-1.
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0xa8, 0x33]), typed(s64, u128::from(u64::MAX)));
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0xa8, 0x34]), typed(u64t, u128::from(u64::MAX)));
    // generic 2^32+5 -> signed32 keeps the low bits: 5.
    assert_eq!(value(&[0x0c, 5, 0, 0, 0, 0xa8, 0x2a]), typed(s32, 5));
    // op.convert.float: 2.75 (0x4006000000000000) -> signed32 2; -> float32 0x40300000.
    let f = [0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0x06, 0x40];
    assert_eq!(value(&[&f[..], &[0xa8, 0x2a]].concat()), typed(s32, 2));
    let f32t = BaseType::ate(ate::FLOAT, 32, false);
    assert_eq!(value(&[&f[..], &[0xa8, 0x36]].concat()), typed(f32t, 0x4030_0000));
    // signed32 -3 -> float64 -3.0 = 0xc008000000000000.
    let f64t = BaseType::ate(ate::FLOAT, 64, false);
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xfd, 0xff, 0xff, 0xff, 0xa8, 0x31]), typed(f64t, 0xc008_0000_0000_0000));
    // op.reinterpret.same-bits: signed32 -1 -> unsigned32 0xffffffff.
    let u32t = BaseType::ate(ate::UNSIGNED, 32, false);
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0xa9, 0x30]), typed(u32t, 0xffff_ffff));
    // op.reinterpret.size-mismatch: signed32 -> generic (64).
    assert_eq!(value(&[0xa4, 0x2a, 4, 1, 0, 0, 0, 0xa9, 0x00]), ill(id::OP_REINTERPRET_SIZE_MISMATCH, Some(7)));
    // GNU aliases: GNU_convert (0xf7).
    assert_eq!(value(&[0xa4, 0x2a, 4, 0xff, 0xff, 0xff, 0xff, 0xf7, 0x33]), typed(s64, u128::from(u64::MAX)));
}

// ---- frame base, CFA, TLS, object ----------------------------------------------

#[test]
fn frame_base() {
    let mut c = with_kind(ctx(), ResultKind::Location);
    c.cfa = Some(0x7ffc_0100);
    c.frame_base = Some(vec![0x9c]);
    // op.fbreg.offset: CFA - 8.
    assert_eq!(evaluate(&[0x91, 0x78], &c), loc(mem(0x7ffc_00f8)));
    // op.fbreg.register-frame-base: frame base reg6 (rbp = 0x1000) -> 0x1010.
    c.frame_base = Some(vec![0x56]);
    assert_eq!(evaluate(&[0x91, 0x10], &c), loc(mem(0x1010)));
    // A bad frame base is reported at the DW_OP_fbreg (offset 1 here).
    c.frame_base = Some(vec![0x01]);
    assert_eq!(evaluate(&[0x96, 0x91, 0x00], &c), ill(id::EXPR_DECODE_UNKNOWN_OPCODE, Some(1)));
    // op.fbreg.memory-frame-base: memory 0 - 8 wraps like DW_OP_breg*.
    c.frame_base = Some(vec![0x30]);
    assert_eq!(evaluate(&[0x91, 0x78], &c), loc(mem(u64::MAX - 7)));
    // attr.frame-base.not-memory: an implicit frame base (4 bytes) is
    // ill-formed at the DW_OP_fbreg (hetero-2020 "DW_AT_frame_base").
    c.frame_base = Some(vec![0x9e, 0x04, 1, 2, 3, 4]);
    assert_eq!(evaluate(&[0x91, 0x02], &c), ill(id::ATTR_FRAME_BASE_NOT_MEMORY, Some(0)));
    // attr.frame-base.fbreg: a frame base containing fbreg is ill-formed
    // before it runs, so it never recurses.
    c.frame_base = Some(vec![0x91, 0x00]);
    assert_eq!(evaluate(&[0x91, 0x00], &c), ill(id::ATTR_FRAME_BASE_FBREG, Some(0)));
    // ctx.frame-base-missing.
    c.frame_base = None;
    assert_eq!(evaluate(&[0x91, 0x00], &c), err(id::CTX_FRAME_BASE_MISSING, Some(0)));
}

#[test]
fn cfa_tls_object() {
    let mut c = with_kind(ctx(), ResultKind::Location);
    assert_eq!(evaluate(&[0x9c], &c), err(id::CTX_CFA_MISSING, Some(0)));
    c.cfa = Some(0x7ffc_0100);
    assert_eq!(evaluate(&[0x9c], &c), loc(mem(0x7ffc_0100)));
    // op.form-tls-address.memory: tls base 0x7f00 + 16.
    assert_eq!(evaluate(&[0x40, 0x9b], &c), err(id::CTX_TLS_BASE_MISSING, Some(1)));
    c.tls_base = Some(0x7f00);
    assert_eq!(evaluate(&[0x40, 0x9b], &c), loc(mem(0x7f10)));
    assert_eq!(evaluate(&[0x40, 0xe0], &c), loc(mem(0x7f10)));
    // op.form-tls-address.requires-integral: a float64 value.
    let f = [0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x9b];
    assert_eq!(evaluate(&f, &c), ill(id::OP_FORM_TLS_ADDRESS_REQUIRES_INTEGRAL, Some(11)));
    // op.push-object-address.pushes.
    assert_eq!(evaluate(&[0x97], &c), err(id::CTX_OBJECT_MISSING, Some(0)));
    c.object = Some(CtxEntry::Location(RawLocation::simple(mem(0x1000)).normalize()));
    let mut v = c.clone();
    v.result_kind = Some(ResultKind::Value);
    assert_eq!(evaluate(&[0x97, 0x94, 0x01], &v), g64(0xde));
}

#[test]
fn xderef() {
    // AS (0) pushed first, then A = 0x1000: xderef_size 1 -> 0xde.
    assert_eq!(value(&[0x30, 0x0a, 0x00, 0x10, 0x95, 0x01]), g64(0xde));
    assert_eq!(value(&[0x30, 0x0a, 0x00, 0x10, 0x18]), g64(0x0403_0201_efbe_adde));
    // op.xderef.unknown-address-space: AS 5.
    assert_eq!(value(&[0x35, 0x30, 0x18]), ill(id::OP_XDEREF_UNKNOWN_ADDRESS_SPACE, Some(2)));
    // op.xderef.requires-integral: a float address.
    let f = [0x30, 0xa4, 0x31, 8, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x18];
    assert_eq!(value(&f), ill(id::OP_XDEREF_REQUIRES_INTEGRAL, Some(12)));
}

// ---- implicit and composite --------------------------------------------------------

#[test]
fn implicit_locations() {
    // op.stack-value.creates-storage: lit5 stack_value.
    assert_eq!(location(&[0x35, 0x9f]), loc(Source::Implicit { bytes: vec![5, 0, 0, 0, 0, 0, 0, 0], bit_offset: 0 }));
    // op.implicit-value.creates-storage.
    assert_eq!(location(&[0x9e, 0x02, 0xaa, 0xbb]), loc(Source::Implicit { bytes: vec![0xaa, 0xbb], bit_offset: 0 }));
    // op.stack-value.continues: the implicit location can be read back.
    assert_eq!(value(&[0x9e, 0x02, 0xaa, 0xbb, 0x94, 0x02]), g64(0xbbaa));
    // Reading past its end: op.deref.past-storage-end.
    assert_eq!(value(&[0x9e, 0x02, 0xaa, 0xbb, 0x06]), err(id::OP_DEREF_PAST_STORAGE_END, Some(4)));
    // Size budget on implicit_value.
    let mut c = ctx();
    c.budgets.size_bytes = 1;
    assert_eq!(
        evaluate(&[0x9e, 0x02, 0xaa, 0xbb], &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(0) })
    );
}

#[test]
fn implicit_pointers() {
    let ip = Source::ImplicitPointer { die: 0x40, aspace: None, byte_displacement: 8, bit_offset: 0 };
    // op.implicit-pointer.creates: a0 <die 4 bytes> <sleb 8>.
    let e = [0xa0, 0x40, 0, 0, 0, 0x08];
    assert_eq!(location(&e), loc(ip.clone()));
    assert_eq!(location(&[0xf2, 0x40, 0, 0, 0, 0x08]), loc(ip.clone()));
    // op.implicit-pointer.deref-whole + op.implicit-pointer.stack-value.
    assert_eq!(location(&[&e[..], &[0x06, 0x9f]].concat()), loc(ip));
    // op.implicit-pointer.partial-read: deref_size 4.
    assert_eq!(value(&[&e[..], &[0x94, 0x04]].concat()), err(id::OP_IMPLICIT_POINTER_PARTIAL_READ, Some(6)));
    // op.implicit-pointer.value-misuse: deref then lit1 plus.
    assert_eq!(value(&[&e[..], &[0x06, 0x31, 0x22]].concat()), err(id::OP_IMPLICIT_POINTER_VALUE_MISUSE, Some(8)));
    // op.implicit-pointer.die-missing: the result kind location converts the
    // IPV, and the unit of ctx() has no DIE 0x40; the final conversion
    // belongs to no operation (at None).
    assert_eq!(location(&[&e[..], &[0x06]].concat()), ill(id::OP_IMPLICIT_POINTER_DIE_MISSING, None));
}

#[test]
fn pieces() {
    let mut c = with_kind(ctx(), ResultKind::Location);
    // The docs/case-format.md example / proposal §3.2.4: reg0 piece 4, piece 2, breg7 16 piece 2.
    let e = [0x50, 0x93, 0x04, 0x93, 0x02, 0x77, 0x10, 0x93, 0x02];
    assert_eq!(evaluate(&e, &c), composite(&[(32, reg(0, 0)), (16, Source::Undefined), (16, mem(0x7ffc_0010))]));
    // op.piece.empty-stack-undefined-part then a value part (lit5 stack_value).
    let e = [0x93, 0x01, 0x35, 0x9f, 0x93, 0x01];
    assert_eq!(
        evaluate(&e, &c),
        composite(&[
            (8, Source::Undefined),
            (8, Source::Implicit { bytes: vec![5, 0, 0, 0, 0, 0, 0, 0], bit_offset: 0 })
        ])
    );
    // op.piece.pops-part-creates leaves entries below alone: lit1 reg0 piece 8
    // -> the composite is on top; under value kind it is not convertible.
    assert_eq!(evaluate(&[0x31, 0x50, 0x93, 0x08], &c), composite(&[(64, reg(0, 0))]));
    // op.bit-piece.size-and-offset: reg0 bit_piece 8 4.
    assert_eq!(evaluate(&[0x50, 0x9d, 0x08, 0x04], &c), composite(&[(8, reg(0, 4))]));
    // op.bit-piece.offset-past-storage: offset 64 in a 64-bit register.
    assert_eq!(evaluate(&[0x50, 0x9d, 0x08, 0x40], &c), err(id::OP_BIT_PIECE_OFFSET_PAST_STORAGE, Some(1)));
    // composite.part-exceeds-storage: reg0 piece 16; xmm0 piece 16 is fine.
    assert_eq!(evaluate(&[0x50, 0x93, 0x10], &c), ill(id::COMPOSITE_PART_EXCEEDS_STORAGE, Some(1)));
    assert_eq!(evaluate(&[0x90, 0x11, 0x93, 0x10], &c), composite(&[(128, reg(17, 0))]));
    // op.piece.not-location: a signed32 value as part.
    assert_eq!(evaluate(&[0xa4, 0x2a, 4, 1, 0, 0, 0, 0x93, 0x04], &c), ill(id::OP_PIECE_NOT_LOCATION, Some(7)));
    // Reading a composite: reg0 piece 1, addr 0x1000 piece 1 -> bytes 88 de.
    c.result_kind = Some(ResultKind::Value);
    let e = [0x50, 0x93, 0x01, 0x0a, 0x00, 0x10, 0x93, 0x01, 0x94, 0x02];
    // The composite is incomplete when deref runs: ill-formed.
    assert_eq!(evaluate(&e, &c), ill(id::LOC_INCOMPLETE_COMPOSITE_NOT_LOCATION, Some(8)));
    // Size budget on parts.
    let mut c = ctx();
    c.budgets.size_bytes = 4;
    assert_eq!(evaluate(&[0x93, 0x05], &c), Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(0) }));
    assert_eq!(
        evaluate(&[0x93, 0x04, 0x93, 0x01], &c),
        Outcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(2) })
    );
}

#[test]
fn composite_from_context_can_be_read() {
    // A complete composite [8 bits of rax | 8 bits of memory 0x1000] given
    // as the object: deref_size 2 reads 0x88 then 0xde -> 0xde88.
    let mut c = with_kind(ctx(), ResultKind::Value);
    c.object = Some(CtxEntry::Location(NormalLocation {
        places: vec![SingleLocation::Composite(vec![
            Piece { bits: 8, sources: BTreeSet::from([reg(0, 0)]) },
            Piece { bits: 8, sources: BTreeSet::from([mem(0x1000)]) },
        ])],
    }));
    assert_eq!(evaluate(&[0x97, 0x94, 0x02], &c), g64(0xde88));
    // Reading 3 bytes runs past the composite's 16 bits.
    assert_eq!(evaluate(&[0x97, 0x94, 0x03], &c), err(id::OP_DEREF_PAST_STORAGE_END, Some(1)));
}

#[test]
fn out_of_scope_operations_are_unsupported() {
    // DW_OP_GNU_parameter_ref needs call sites the context does not model.
    assert!(matches!(evaluate(&[0xfa, 0, 0, 0, 0], &ctx()), Outcome::Failed(Failure::Unsupported { .. })));
    // op.call.die-missing: ctx()'s unit (offset 0) has no DIE at 0x10.
    assert_eq!(evaluate(&[0x98, 0x10, 0x00], &ctx()), ill(id::OP_CALL_DIE_MISSING, Some(0)));
    // frame.caller-missing: ctx() gives no calling frame.
    for e in [&[0xa3, 0x01, 0x50][..], &[0xf3, 0x01, 0x50]] {
        assert_eq!(evaluate(e, &ctx()), err(id::FRAME_CALLER_MISSING, Some(0)), "{e:02x?}");
    }
    let mut c = ctx();
    c.vendor = VendorProfile::hetero_2020();
    // DW_OP_LLVM_undefined (0xe7) pushes one undefined location
    // description (op.undefined.pushes).
    assert_eq!(evaluate(&[0xe7], &c), loc(Source::Undefined));
    // DW_OP_LLVM_user (0xe9) + ULEB sub-opcode 0x08 (LLVM_undefined) is the
    // same operation; an unknown sub-opcode is an unknown operation.
    c.vendor = VendorProfile::llvm_user();
    assert_eq!(evaluate(&[0xe9, 0x08], &c), loc(Source::Undefined));
    assert_eq!(evaluate(&[0x30, 0xe9, 0x7f], &c), ill(id::EXPR_DECODE_UNKNOWN_OPCODE, Some(1)));
    assert_eq!(evaluate(&[0xe9], &c), ill(id::EXPR_DECODE_TRUNCATED_OPERAND, Some(0)));
    // A skipped out-of-scope operation is never executed.
    assert_eq!(evaluate(&[0x2f, 0x03, 0x00, 0x98, 0x10, 0x00], &ctx()), loc(Source::Undefined));
}

#[test]
fn trace_lists_each_step() {
    let (out, trace) = evaluate_traced(&[0x31, 0x32, 0x22], &with_kind(ctx(), ResultKind::Value));
    assert_eq!(out, g64(3));
    assert_eq!(trace.len(), 3);
    assert_eq!(trace[1].at, 1);
    assert_eq!(trace[1].op, "DW_OP_lit2");
    assert_eq!(trace[1].stack.len(), 2);
    assert_eq!(trace[2].stack, vec!["generic64:0x0000000000000003".to_string()]);
    let (_, trace) = evaluate_traced(&[0x77, 0x10, 0x90, 0x11, 0x9e, 0x02, 0xaa, 0xbb], &ctx());
    let ops: Vec<&str> = trace.iter().map(|t| t.op.as_str()).collect();
    assert_eq!(ops, ["DW_OP_breg7 RSP+16", "DW_OP_regx XMM0", "DW_OP_implicit_value 0x2 0xaa 0xbb"]);
    assert_eq!(trace[0].stack, vec!["mem[0x7ffc0010]".to_string()]);
}

#[test]
fn read_up_to_the_end_of_the_address_space() {
    // consts -8 deref: the last 8 bytes of the 64-bit space; memory there is
    // unreadable (found by plausible_ops_never_panic: the end of the read is
    // 2^64, which does not fit the address type).
    assert_eq!(value(&[0x11, 0x78, 0x06]), err(id::OP_DEREF_MEMORY_UNREADABLE, Some(2)));
    let mut c = with_kind(ctx(), ResultKind::Value);
    c.memory.push(MemorySegment::shared(0, u64::MAX - 7, vec![1, 0, 0, 0, 0, 0, 0, 0x80]));
    assert_eq!(evaluate(&[0x11, 0x78, 0x06], &c), g64(0x8000_0000_0000_0001));
}
