//! Property tests: arbitrary and plausible operation streams never panic.

use super::*;

use dwarfcheck_core::target::{AddressSpace, Endian};
use proptest::prelude::*;

fn contexts() -> Vec<Context> {
    let mut a = ctx();
    a.cfa = Some(0x7ffc_0100);
    a.frame_base = Some(vec![0x9c]);
    a.tls_base = Some(0x7f00);
    a.object = Some(CtxEntry::Location(RawLocation::simple(mem(0x1000)).normalize()));
    let mut b = a.clone();
    b.result_kind = Some(ResultKind::Value);
    b.frame_base = Some(vec![0x56]);
    let mut c = a.clone();
    c.result_kind = Some(ResultKind::Location);
    c.synthetic = Some(7);
    c.budgets.size_bytes = 64;
    // A big-endian 32-bit target with a 16-bit second address space
    // and an odd-sized register.
    let mut t = presets::aarch64();
    t.endian = Endian::Big;
    t.address_spaces = vec![
        AddressSpace { number: 0, name: "m".into(), address_bits: 32, per_thread: false, per_lane: false },
        AddressSpace { number: 1, name: "l".into(), address_bits: 16, per_thread: false, per_lane: false },
    ];
    t.registers.push(dwarfcheck_core::target::Register { number: 40, name: "odd".into(), bits: 12 });
    let mut d = Context::new(Arc::new(t));
    d.registers.insert(40, vec![0xff, 0x0f]);
    d.registers.insert(0, vec![0, 0, 0x10, 0, 1, 2, 3, 4]);
    d.memory.push(MemorySegment::shared(1, 0x10, vec![1, 2, 3, 4]));
    d.cu = a.cu.clone();
    d.frame_base = Some(vec![0x91, 0x04]);
    for x in [&mut a, &mut b, &mut c, &mut d] {
        let cu = x.cu.as_mut().expect("unit");
        cu.base_types.insert(0x40, BaseType::ate(ate::BOOLEAN, 8, false));
        cu.base_types.insert(0x48, BaseType::ate(ate::FLOAT, 80, false));
        cu.base_types.insert(0x50, BaseType::ate(ate::SIGNED, 16, true));
        cu.base_types.insert(0x58, BaseType::ate(ate::UNSIGNED, 256, false));
    }
    b.initial_stack = vec![CtxEntry::Value(Value::from_u128(BaseType::ate(ate::SIGNED, 32, false), 0xffff_fff0))];
    c.object = Some(CtxEntry::Location(NormalLocation {
        places: vec![SingleLocation::Simple(mem(0x1000)), SingleLocation::Simple(reg(7, 0))],
    }));
    d.initial_stack = vec![CtxEntry::Location(RawLocation::simple(mem(0x1000)).normalize())];
    vec![a, b, c, d]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]
    /// Arbitrary bytes never panic, in any of the contexts.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..48), which in 0usize..4) {
        let c = &contexts()[which];
        let _ = evaluate(&bytes, c);
    }

    /// Sequences of plausible operations (opcodes from the DWARF 5
    /// table with small operands) never panic.
    #[test]
    fn plausible_ops_never_panic(
        ops in proptest::collection::vec((prop::sample::select(vec![
            0x06u8, 0x08, 0x09, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
            0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2d,
            0x2f, 0x30, 0x31, 0x3f, 0x50, 0x51, 0x57, 0x70, 0x77, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95,
            0x96, 0x97, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f, 0xa0, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xe0, 0xf0,
        ]), any::<u8>(), any::<u8>()), 0..16),
        which in 0usize..4,
    ) {
        let mut bytes = Vec::new();
        for (op, a, b) in ops {
            bytes.push(op);
            match op {
                0x08 | 0x09 | 0x15 | 0x94 | 0x95 => bytes.push(a),
                0x28 | 0x2f => bytes.extend([a % 8, if b % 2 == 0 { 0 } else { 0xff }]),
                0x10 | 0x11 | 0x23 | 0x70 | 0x77 | 0x90 | 0x91 | 0x93 => bytes.push(a & 0x7f),
                0xa8 | 0xa9 => bytes.push([0x2a, 0x30, 0x31, 0x32, 0x36, 0, 0x40, 0x48, 0x50, 0x58, 0x7f][(a % 11) as usize]),
                0x92 | 0x9d | 0xa5 => bytes.extend([a & 0x7f, b & 0x7f]),
                0x9e => {
                    bytes.push(a % 9);
                    bytes.extend(std::iter::repeat_n(b, (a % 9) as usize));
                }
                0xa0 => bytes.extend([0x40, 0, 0, 0, b & 0x7f]),
                0xa4 => {
                    let die = [0x2a, 0x30, 0x31, 0x32, 0x36, 0, 0x40, 0x48, 0x50, 0x58][(a % 10) as usize];
                    let n = [4u8, 4, 8, 16, 4, 8, 1, 10, 2, 32][(a % 10) as usize];
                    bytes.extend([die, n]);
                    bytes.extend(std::iter::repeat_n(b, n as usize));
                }
                0xa6 | 0xa7 => bytes.extend([[4u8, 8, 16, 2, 10, 32][(a % 6) as usize], [0x2a, 0x31, 0x32, 0x35, 0x48, 0x58][(b % 6) as usize]]),
                _ => {}
            }
        }
        let c = &contexts()[which];
        let _ = evaluate(&bytes, c);
    }
}

/// Every register of the odd-register target is reachable: a 12-bit
/// register reads as far as the context can give whole bytes.
#[test]
fn odd_sized_register_does_not_panic() {
    let d = &contexts()[3];
    for e in [&[0x90, 0x28, 0x06][..], &[0x90, 0x28, 0x94, 0x01], &[0x92, 0x28, 0x00], &[0x90, 0x28, 0x9d, 0x04, 0x08]]
    {
        let _ = evaluate(e, d);
    }
}
