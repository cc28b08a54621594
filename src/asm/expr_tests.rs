//! Unit tests for the expression assembler/disassembler. Expected bytes are
//! derived by hand from DWARF 5 Table 7.9 and §7.6 (LEB128); expected text
//! is copied from llvm-dwarfdump-19 output on libc6-dbg files where marked.

use super::*;
use dwarfcheck_core::target::presets;
use dwarfcheck_core::target::Endian;

fn x86() -> Target {
    presets::x86_64()
}

fn asm(text: &str) -> Vec<u8> {
    asm_with(text, &VendorProfile::gnu(), Format::Dwarf32, 8)
}

fn asm_with(text: &str, v: &VendorProfile, f: Format, a: u8) -> Vec<u8> {
    match assemble(text, &x86(), v, f, a) {
        Ok(b) => b,
        Err(e) => panic!("{text:?}: {e}"),
    }
}

fn asm_err(text: &str, v: &VendorProfile) -> AsmError {
    assemble(text, &x86(), v, Format::Dwarf32, 8).expect_err(text)
}

fn dis(bytes: &[u8]) -> String {
    disassemble(bytes, &x86(), &VendorProfile::gnu(), Format::Dwarf32, 8)
}

#[test]
fn design_example_style() {
    // The example of docs/case-format.md gives these bytes for this text.
    assert_eq!(
        asm("DW_OP_reg0 DW_OP_piece 4 DW_OP_piece 2 DW_OP_breg7 16 DW_OP_piece 2"),
        [0x50, 0x93, 0x04, 0x93, 0x02, 0x77, 0x10, 0x93, 0x02]
    );
    assert_eq!(asm(""), Vec::<u8>::new());
    assert_eq!(asm("<empty>"), Vec::<u8>::new());
}

#[test]
fn llvm_dwarfdump_style() {
    assert_eq!(asm("DW_OP_breg7 RSP+16, DW_OP_piece 0x4"), [0x77, 0x10, 0x93, 0x04]);
    assert_eq!(asm("DW_OP_breg7 rsp -16"), [0x77, 0x70]);
    // -160 as SLEB128: low 7 bits 0x60 with continuation, then -2 = 0x7e.
    assert_eq!(
        asm("DW_OP_fbreg -160, DW_OP_deref, DW_OP_const1u 0x68, DW_OP_minus, DW_OP_stack_value"),
        [0x91, 0xe0, 0x7e, 0x06, 0x08, 0x68, 0x1c, 0x9f]
    );
    assert_eq!(asm("DW_OP_reg5 RDI"), [0x55]);
    assert_eq!(asm("DW_OP_regx XMM15"), [0x90, 0x20]);
    assert_eq!(asm("DW_OP_bregx rsp -8"), [0x92, 0x07, 0x78]);
    assert_eq!(asm("DW_OP_bregx 0x7 +8"), [0x92, 0x07, 0x08]);
    assert_eq!(asm("DW_OP_bit_piece 0x8 0x1"), [0x9d, 0x08, 0x01]);
    assert_eq!(asm("DW_OP_bra +1"), [0x28, 0x01, 0x00]);
    assert_eq!(asm("DW_OP_skip -3"), [0x2f, 0xfd, 0xff]);
    assert_eq!(asm("DW_OP_const1s -128"), [0x09, 0x80]);
    assert_eq!(
        asm("DW_OP_consts -9223372036854775808"),
        [0x11, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f]
    );
    assert_eq!(
        asm("DW_OP_constu 0xffffffffffffffff"),
        [0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
    );
}

#[test]
fn typed_blocks_and_nested() {
    assert_eq!(asm("DW_OP_entry_value(DW_OP_reg5 RDI), DW_OP_stack_value"), [0xa3, 0x01, 0x55, 0x9f]);
    assert_eq!(asm("DW_OP_entry_value(DW_OP_bregx rsp 8, DW_OP_deref)"), [0xa3, 0x04, 0x92, 0x07, 0x08, 0x06]);
    assert_eq!(asm("DW_OP_entry_value 0x1 0x55"), [0xa3, 0x01, 0x55]);
    assert_eq!(asm("DW_OP_GNU_entry_value(DW_OP_reg4)"), [0xf3, 0x01, 0x54]);
    assert_eq!(asm("DW_OP_implicit_value 0x2 0x01 0x02"), [0x9e, 0x02, 0x01, 0x02]);
    assert_eq!(asm("DW_OP_implicit_value 0 DW_OP_nop"), [0x9e, 0x00, 0x96]);
    assert_eq!(
        asm("DW_OP_const_type (0x0000002a) 0x4 0x00 0x00 0x80 0x3f"),
        [0xa4, 0x2a, 0x04, 0x00, 0x00, 0x80, 0x3f]
    );
    assert_eq!(asm("DW_OP_const_type 42 1 7"), [0xa4, 0x2a, 0x01, 0x07]);
    assert_eq!(asm("DW_OP_regval_type XMM0 (0x00000031) \"double\", DW_OP_stack_value"), [0xa5, 0x11, 0x31, 0x9f]);
    assert_eq!(asm("DW_OP_regval_type 17 <base_type ref: 0x31>"), [0xa5, 0x11, 0x31]);
    assert_eq!(asm("DW_OP_deref_type 0x10 (0x0000002a)"), [0xa6, 0x10, 0x2a]);
    assert_eq!(asm("DW_OP_convert 0x0"), [0xa8, 0x00]);
    assert_eq!(asm("DW_OP_convert (0x00000080) \"long double\""), [0xa8, 0x80, 0x01]);
    assert_eq!(asm("DW_OP_reg12 DW_OP_GNU_uninit"), [0x5c, 0xf0]);
}

#[test]
fn sizes_follow_address_size_format_and_endianity() {
    let g = VendorProfile::gnu();
    assert_eq!(asm_with("DW_OP_addr 0x4010", &g, Format::Dwarf32, 8), [0x03, 0x10, 0x40, 0, 0, 0, 0, 0, 0]);
    assert_eq!(asm_with("DW_OP_addr 0x4010", &g, Format::Dwarf32, 4), [0x03, 0x10, 0x40, 0, 0]);
    assert!(assemble("DW_OP_addr 0x100000000", &x86(), &g, Format::Dwarf32, 4).is_err());
    assert_eq!(asm_with("DW_OP_call_ref 0x40", &g, Format::Dwarf32, 8), [0x9a, 0x40, 0, 0, 0]);
    assert_eq!(asm_with("DW_OP_call_ref 0x40", &g, Format::Dwarf64, 8), [0x9a, 0x40, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(asm_with("DW_OP_implicit_pointer 0x40 -1", &g, Format::Dwarf32, 8), [0xa0, 0x40, 0, 0, 0, 0x7f]);
    let mut be = x86();
    be.endian = Endian::Big;
    assert_eq!(assemble("DW_OP_const2s -2", &be, &g, Format::Dwarf32, 8).unwrap(), [0x0b, 0xff, 0xfe]);
    assert_eq!(asm("DW_OP_const2s -2"), [0x0b, 0xfe, 0xff]);
    assert_eq!(disassemble(&[0x0a, 0x12, 0x34], &be, &g, Format::Dwarf32, 8), "DW_OP_const2u 0x1234");
}

#[test]
fn vendor_profiles() {
    let h = VendorProfile::hetero_2020();
    let u = VendorProfile::llvm_user();
    let hu = VendorProfile::by_name("hetero-2020-uleb").unwrap();
    let f = Format::Dwarf32;
    assert_eq!(asm_with("DW_OP_LLVM_offset_uconst 8", &h, f, 8), [0xe4, 0x08]);
    assert_eq!(asm_with("DW_OP_LLVM_offset_uconst 8", &u, f, 8), [0xe9, 0x05, 0x08]);
    assert_eq!(asm_with("DW_OP_LLVM_user DW_OP_LLVM_offset_uconst 8", &u, f, 8), [0xe9, 0x05, 0x08]);
    assert_eq!(asm_with("DW_OP_LLVM_aspace_bregx rsp -1", &h, f, 8), [0xe8, 0x07, 0x7f]);
    assert_eq!(asm_with("DW_OP_LLVM_aspace_bregx rsp 127", &hu, f, 8), [0xe8, 0x07, 0x7f]);
    assert!(assemble("DW_OP_LLVM_aspace_bregx rsp -1", &x86(), &hu, f, 8).is_err());
    assert_eq!(asm_with("DW_OP_LLVM_call_frame_entry_reg rbp", &h, f, 8), [0xe6, 0x06]);
    assert_eq!(disassemble(&[0xe9, 0x05, 0x08], &x86(), &u, f, 8), "DW_OP_LLVM_user DW_OP_LLVM_offset_uconst 0x8");
    assert_eq!(disassemble(&[0xe8, 0x07, 0x7f], &x86(), &h, f, 8), "DW_OP_LLVM_aspace_bregx RSP-1");
    assert_eq!(disassemble(&[0xe8, 0x07, 0x7f], &x86(), &hu, f, 8), "DW_OP_LLVM_aspace_bregx RSP+127");
    // Under plain DWARF 5 no vendor opcode exists.
    let e = asm_err("DW_OP_reg12 DW_OP_GNU_uninit", &VendorProfile::dwarf5());
    assert_eq!(e.offset, 12);
    assert!(e.message.contains("dwarf5"), "{}", e.message);
    let e = asm_err("DW_OP_LLVM_user DW_OP_LLVM_offset_uconst 8", &h);
    assert_eq!(e.offset, 16);
}

#[test]
fn errors_point_at_the_problem() {
    let g = VendorProfile::gnu();
    let e = asm_err("DW_OP_piece", &g);
    assert_eq!(e.offset, 11);
    assert!(e.message.contains("expected"), "{}", e.message);
    assert_eq!(asm_err("DW_OP_lit0, DW_OP_const1u 256", &g).offset, 26);
    assert_eq!(asm_err("DW_OP_reg5 RAX", &g).offset, 11);
    assert_eq!(asm_err("DW_OP_foo", &g).offset, 0);
    assert_eq!(asm_err("DW_OP_lit0 lit1", &g).offset, 11);
    assert_eq!(asm_err("DW_OP_piece 4 5", &g).offset, 14);
    let e = asm_err("DW_OP_implicit_value 0x3 0x01 0x02", &g);
    assert_eq!(e.offset, 34);
    assert!(e.message.contains("1 more block byte"), "{}", e.message);
    assert_eq!(asm_err("DW_OP_entry_value(DW_OP_reg5", &g).offset, 28);
    assert_eq!(asm_err("DW_OP_regx nosuchreg", &g).offset, 11);
    assert_eq!(asm_err("DW_OP_lit32", &g).offset, 0);
    assert_eq!(asm_err("DW_OP_breg7 16abc", &g).offset, 14);
    // Offsets count characters, not bytes.
    assert_eq!(asm_err("DW_OP_lit0 é", &g).offset, 11);
    assert_eq!(asm_err("DW_OP_const1s 128", &g).offset, 14);
}

#[test]
fn disassembly_matches_llvm_dwarfdump() {
    // Each text below was printed by llvm-dwarfdump-19 for a libc6-dbg file;
    // the bytes are encoded by hand.
    assert_eq!(
        dis(&[0x91, 0xe0, 0x7e, 0x06, 0x08, 0x68, 0x1c, 0x9f]),
        "DW_OP_fbreg -160, DW_OP_deref, DW_OP_const1u 0x68, DW_OP_minus, DW_OP_stack_value"
    );
    assert_eq!(dis(&[0x55]), "DW_OP_reg5 RDI");
    assert_eq!(dis(&[0x90, 0x20]), "DW_OP_regx XMM15");
    assert_eq!(dis(&[0x90, 0x21]), "DW_OP_regx ST0");
    assert_eq!(dis(&[0x9d, 0x08, 0x01, 0x51]), "DW_OP_bit_piece 0x8 0x1, DW_OP_reg1 RDX");
    assert_eq!(dis(&[0x28, 0x01, 0x00, 0x16]), "DW_OP_bra +1, DW_OP_swap");
    assert_eq!(dis(&[0x09, 0xff, 0x9f]), "DW_OP_const1s -1, DW_OP_stack_value");
    assert_eq!(dis(&[0x9e, 0x02, 0xd5, 0x00]), "DW_OP_implicit_value 0x2 0xd5 0x00");
    assert_eq!(
        dis(&[0x11, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f, 0x1a]),
        "DW_OP_consts -9223372036854775808, DW_OP_and"
    );
    assert_eq!(dis(&[0xa3, 0x01, 0x55, 0x9f]), "DW_OP_entry_value(DW_OP_reg5 RDI), DW_OP_stack_value");
    assert_eq!(dis(&[0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0xe0]), "DW_OP_const8u 0x0, DW_OP_GNU_push_tls_address");
    assert_eq!(dis(&[0x77, 0x10]), "DW_OP_breg7 RSP+16");
    assert_eq!(dis(&[0x70, 0x00]), "DW_OP_breg0 RAX+0");
    // Project-specific spellings (see module docs).
    assert_eq!(dis(&[0xa5, 0x11, 0x31]), "DW_OP_regval_type XMM0 (0x00000031)");
    assert_eq!(dis(&[0xa8, 0x00]), "DW_OP_convert 0x0");
    assert_eq!(dis(&[]), "<empty>");
    assert_eq!(dis(&[0x31, 0xff, 0x01]), "DW_OP_lit1, <bad: unknown opcode at offset 1: ff 01>");
    assert_eq!(dis(&[0x31, 0x9e, 0x05, 0x01]), "DW_OP_lit1, <bad: truncated operand at offset 1: 9e 05 01>");
    // An entry value whose block does not decode is shown raw.
    assert_eq!(dis(&[0xa3, 0x01, 0xff]), "DW_OP_entry_value 0x1 0xff");
}

#[test]
fn structured_form_has_offsets_and_nesting() {
    let ops =
        disassemble_ops(&[0x31, 0xa3, 0x03, 0x77, 0x08, 0x06, 0x9f], &x86(), &VendorProfile::gnu(), Format::Dwarf32, 8);
    assert_eq!(ops.len(), 3);
    assert_eq!((ops[1].offset, ops[1].length), (1, 5));
    assert_eq!(ops[1].op, Some(Op::EntryValue));
    assert_eq!(ops[1].nested.len(), 2);
    assert_eq!((ops[1].nested[0].offset, ops[1].nested[0].length), (3, 2));
    assert_eq!(ops[1].nested[0].operands, vec![OperandValue::Signed(8)]);
    assert_eq!(ops[1].nested[1].offset, 5);
    assert_eq!(ops[2].offset, 6);
    assert_eq!(ops[1].text, "DW_OP_entry_value(DW_OP_breg7 RSP+8, DW_OP_deref)");
}

#[test]
fn aarch64_accepts_llvm_w_names() {
    // llvm-dwarfdump-19 printed these for an AArch64 object built with
    // llvm-mc (DW_OP_reg0, DW_OP_reg31, DW_OP_breg15 0).
    let t = presets::aarch64();
    let g = VendorProfile::gnu();
    let a = |s: &str| assemble(s, &t, &g, Format::Dwarf32, 8);
    assert_eq!(a("DW_OP_reg0 W0, DW_OP_reg31 WSP, DW_OP_breg15 W15+0"), Ok(vec![0x50, 0x6f, 0x7f, 0x00]));
    assert_eq!(a("DW_OP_regx w30"), Ok(vec![0x90, 0x1e]));
    assert_eq!(a("DW_OP_bregx x29 -16"), Ok(vec![0x92, 0x1d, 0x70]));
    assert!(a("DW_OP_regx w31").is_err());
    assert!(a("DW_OP_regx w01").is_err());
    assert_eq!(a("DW_OP_reg1 W0").unwrap_err().offset, 11);
    assert_eq!(disassemble(&[0x50, 0x6f], &t, &g, Format::Dwarf32, 8), "DW_OP_reg0 X0, DW_OP_reg31 SP");
    // On x86-64, `w0` is no register.
    assert!(assemble("DW_OP_regx w0", &x86(), &g, Format::Dwarf32, 8).is_err());
}
