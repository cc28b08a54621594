//! Tests of the synthesiser, read back with `object`'s and gimli's readers
//! (independent of the writers' own bookkeeping).

use super::*;
use crate::case::Case;
use object::read::elf::{ElfFile64, ProgramHeader as _};
use object::{Object, ObjectSection};

/// The first expression case named `name` in the bundled file `file`.
fn case(file: &str, name: &str) -> ExprCase {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/cases/expr").join(file);
    let cases = crate::case::yaml::load_file(&path).expect("bundled cases load");
    cases
        .into_iter()
        .find_map(|c| match c {
            Case::Expr(e) if e.name == name => Some(e),
            _ => None,
        })
        .expect("case exists")
}

#[test]
fn core_holds_registers_and_memory_where_the_case_puts_them() {
    let c = case("memory.yaml", "deref-size-larger-than-generic");
    let d = synthesise(&c, VarShape::Bytes { byte_size: 8, stack_value: true }).unwrap();
    let core = ElfFile64::<object::LittleEndian>::parse(d.core.as_slice()).unwrap();
    assert_eq!(core.kind(), object::ObjectKind::Core);
    let e = object::LittleEndian;
    // Every memory segment of the case is a PT_LOAD at its address holding
    // its bytes.
    for m in &c.ctx.memory {
        let found = core.elf_program_headers().iter().any(|p| {
            p.p_type(e) == object::elf::PT_LOAD
                && p.p_vaddr(e) == m.address
                && p.data(e, d.core.as_slice()).ok() == Some(m.bytes.as_slice())
        });
        assert!(found, "segment at {:#x}", m.address);
    }
    // NT_PRSTATUS: rip (user_regs_struct slot 16, at 112 + 128) is the pc.
    let note = core.elf_program_headers().iter().find(|p| p.p_type(e) == object::elf::PT_NOTE).unwrap();
    let mut notes = note.notes(e, d.core.as_slice()).unwrap().unwrap();
    let prstatus = notes.next().unwrap().unwrap();
    assert_eq!(prstatus.name(), b"CORE");
    assert_eq!(prstatus.n_type(e), object::elf::NT_PRSTATUS);
    let desc = prstatus.desc();
    assert_eq!(desc.len(), 336);
    assert_eq!(u64::from_le_bytes(desc[240..248].try_into().unwrap()), d.pc);
}

#[test]
fn executable_carries_the_expression_as_the_variable_location() {
    let c = case("memory.yaml", "deref-size-larger-than-generic");
    let d = synthesise(&c, VarShape::Bytes { byte_size: 8, stack_value: true }).unwrap();
    let exe = object::File::parse(d.executable.as_slice()).unwrap();
    let text = exe.section_by_name(".text").unwrap();
    assert_eq!(text.address(), d.pc);
    let get = |name: &str| exe.section_by_name(name).map(|s| s.data().unwrap().to_vec()).unwrap_or_default();
    let info_bytes = get(".debug_info");
    let info = gimli::DebugInfo::new(&info_bytes[..], gimli::LittleEndian).units().next().unwrap().unwrap();
    let abbrev = get(".debug_abbrev");
    let abbrevs = info.abbreviations(&gimli::DebugAbbrev::new(&abbrev[..], gimli::LittleEndian)).unwrap();
    let mut entries = info.entries(&abbrevs);
    let mut location = None;
    while let Some(e) = entries.next_dfs().unwrap() {
        if let Some(gimli::AttributeValue::String(n)) = e.attr_value(gimli::DW_AT_name) {
            if n.slice() == b"v" {
                location = e.attr_value(gimli::DW_AT_location);
            }
        }
    }
    let Some(gimli::AttributeValue::Exprloc(x)) = location else { panic!("v has an exprloc location") };
    // The case's bytes with DW_OP_stack_value (0x9f) appended.
    let mut want = c.expr.to_vec();
    want.push(0x9f);
    assert_eq!(x.0.slice(), want.as_slice());
}

#[test]
fn contexts_a_process_image_cannot_hold_are_refused() {
    // An AMDGPU case: not x86-64.
    let c = case("amdgpu-wave64.yaml", "amdgpu-w64-push-lane");
    assert!(synthesise(&c, VarShape::Bytes { byte_size: 8, stack_value: false }).is_err());
}

#[test]
fn location_lists_are_rewritten_entry_by_entry() {
    // base-address-entry: [base_address 0x500000, offset_pair [0, 8]
    // DW_OP_reg3]; written again by gimli, read back by gimli it must give
    // the same resolved range [0x500000, 0x500008) with DW_OP_reg3 (0x53).
    let c = case("loclist-dwarf5.yaml", "base-address-entry");
    let d = synthesise(&c, VarShape::Bytes { byte_size: 8, stack_value: false }).unwrap();
    let exe = object::File::parse(d.executable.as_slice()).unwrap();
    let get = |name: &str| exe.section_by_name(name).map(|s| s.data().unwrap().to_vec()).unwrap_or_default();
    let (info, abbrev, loclists) = (get(".debug_info"), get(".debug_abbrev"), get(".debug_loclists"));
    let le = gimli::LittleEndian;
    let unit = gimli::DebugInfo::new(&info[..], le).units().next().unwrap().unwrap();
    let abbrevs = unit.abbreviations(&gimli::DebugAbbrev::new(&abbrev[..], le)).unwrap();
    let mut entries = unit.entries(&abbrevs);
    let mut offset = None;
    while let Some(e) = entries.next_dfs().unwrap() {
        if let Some(gimli::AttributeValue::String(n)) = e.attr_value(gimli::DW_AT_name) {
            if n.slice() == b"v" {
                if let Some(gimli::AttributeValue::LocationListsRef(o)) = e.attr_value(gimli::DW_AT_location) {
                    offset = Some(o);
                }
            }
        }
    }
    let lists = gimli::LocationLists::new(gimli::DebugLoc::new(&[], le), gimli::DebugLocLists::new(&loclists[..], le));
    let mut iter = lists
        .locations(
            offset.unwrap(),
            unit.encoding(),
            0,
            &gimli::DebugAddr::from(gimli::EndianSlice::new(&[], le)),
            gimli::DebugAddrBase(0),
        )
        .unwrap();
    let e = iter.next().unwrap().unwrap();
    assert_eq!((e.range.begin, e.range.end), (0x500000, 0x500008));
    assert_eq!(e.data.0.slice(), [0x53]);
    assert!(iter.next().unwrap().is_none());
}

/// The bundled CFI case named `name` (of `specs/cases/cfi`).
fn cfi_case(name: &str) -> crate::case::CfiCase {
    crate::testing::bundled_cfi_cases()
        .into_iter()
        .find_map(|c| match c {
            Case::Cfi(c) if c.name == name => Some(c),
            _ => None,
        })
        .expect("case exists")
}

/// `unwind-two-frames` from a synthetic state: the CIE's row (CFA = rsp +
/// 8, rip at CFA - 8) reads rsp and the 8 bytes at rsp, nothing else; the
/// synthetic return address there leads to no FDE after one step.
#[test]
fn a_synthetic_state_becomes_what_the_reference_reads() {
    use dwarfcheck_core::context::synthetic::{memory_byte, register_bytes};
    let c = cfi_case("unwind-two-frames");
    let u = c.unwind.clone().expect("an unwinding case");
    let seed = 0x5eed;
    let mut ctx = (*u.ctx).clone();
    ctx.registers.clear();
    ctx.memory.clear();
    ctx.synthetic = Some(seed);
    let synthetic = crate::case::UnwindCase { ctx: std::sync::Arc::new(ctx), limit: None, expect: None };
    let got = concrete::concretise(&c.section, &synthetic).expect("concretised");
    let mut rsp = [0u8; 8];
    register_bytes(seed, 7, 0, &mut rsp);
    let regs: Vec<(u64, Vec<u8>)> = got.case.ctx.registers.clone().into_iter().collect();
    assert_eq!(regs, vec![(7, rsp.to_vec())]);
    let at = u64::from_le_bytes(rsp);
    let bytes: Vec<u8> = (0..8).map(|i| memory_byte(seed, 0, at + i)).collect();
    let mem: Vec<(u64, Vec<u8>)> = got.case.ctx.memory.iter().map(|m| (m.address, m.bytes.clone())).collect();
    assert_eq!(mem, vec![(at, bytes)]);
    assert!(got.case.ctx.synthetic.is_none());
    assert_eq!(got.fdes, vec![c.fde_offset]);
    // A concrete state is not concretised again.
    assert!(concrete::concretise(&c.section, &u).is_err());
}

#[test]
fn aarch64_notes_put_registers_where_user_pt_regs_and_user_fpsimd_state_have_them() {
    // Offsets by hand from the arm64 uapi layout: pr_reg at 112, x_n at
    // 112 + 8n, sp word 31 (360), pc word 32 (368), pstate 376,
    // pr_fpvalid 384, size 392; vregs[n] at 16n of a 528-byte fpregset.
    let mut regs = std::collections::BTreeMap::new();
    regs.insert(5u64, 0x1122_3344_5566_7788u64.to_le_bytes().to_vec());
    regs.insert(31, 0x8000u64.to_le_bytes().to_vec());
    regs.insert(65, vec![0xab; 16]);
    let (pr, fp) = aarch64::notes(&regs, 0x1008, 77);
    let word = |at: usize| u64::from_le_bytes(pr[at..at + 8].try_into().unwrap());
    assert_eq!((pr.len(), fp.len()), (392, 528));
    assert_eq!(u32::from_le_bytes(pr[32..36].try_into().unwrap()), 77);
    assert_eq!(word(152), 0x1122_3344_5566_7788);
    assert_eq!(word(360), 0x8000);
    assert_eq!(word(368), 0x1008);
    assert_eq!(u32::from_le_bytes(pr[384..388].try_into().unwrap()), 1);
    // x30, not given: every byte 0x40 | 30.
    assert_eq!(word(112 + 240), 0x5e5e_5e5e_5e5e_5e5e);
    assert_eq!(&fp[16..32], &[0xab; 16]);
    // v0 (64), not given: 0x40 | (64 & 0x3f), with bit 7 for 64-127 = 0xc0
    // (x0's fill is 0x40: the two differ).
    assert_eq!(&fp[0..16], &[0xc0; 16]);
}

#[test]
fn aarch64_unwinding_case_becomes_an_aarch64_executable_and_core() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/cases/cfi/unwind-aarch64.yaml");
    let c = crate::case::yaml::load_file(&path)
        .expect("bundled cases load")
        .into_iter()
        .find_map(|c| match c {
            Case::Cfi(c) if c.name == "unwind-aarch64-pac-stripped" => Some(c),
            _ => None,
        })
        .expect("case exists");
    let d = cfi::synthesise_unwind(&c, c.unwind.as_ref().unwrap(), "/tmp/x").unwrap();
    let exe = ElfFile64::<object::LittleEndian>::parse(d.executable.as_slice()).unwrap();
    assert_eq!(exe.elf_header().e_machine.get(object::LittleEndian), object::elf::EM_AARCH64);
    // FDE 0 covers [0x1000, 0x1020): eight AArch64 nops (0xd503201f).
    let text = exe.sections().find(|s| s.address() == 0x1000).unwrap();
    assert_eq!(text.data().unwrap(), [0x1f, 0x20, 0x03, 0xd5].repeat(8).as_slice());
    let core = ElfFile64::<object::LittleEndian>::parse(d.core.as_slice()).unwrap();
    assert_eq!(core.elf_header().e_machine.get(object::LittleEndian), object::elf::EM_AARCH64);
    let e = object::LittleEndian;
    let note = core.elf_program_headers().iter().find(|p| p.p_type(e) == object::elf::PT_NOTE).unwrap();
    let prstatus = note.notes(e, d.core.as_slice()).unwrap().unwrap().next().unwrap().unwrap();
    assert_eq!(prstatus.n_type(e), object::elf::NT_PRSTATUS);
    let desc = prstatus.desc();
    // pc (word 32 of user_pt_regs) is the case's pc, sp (word 31) its sp.
    assert_eq!(u64::from_le_bytes(desc[368..376].try_into().unwrap()), 0x1008);
    assert_eq!(u64::from_le_bytes(desc[360..368].try_into().unwrap()), 0x8000);
}

#[test]
fn aarch64_case_gives_aarch64_files() {
    // x29 = 0x8000 (DWARF 29); no pc in the case, so DEFAULT_PC.
    let c = case("debuggers-aarch64.yaml", "a64-breg29-memory");
    let d = synthesise(&c, VarShape::Bytes { byte_size: 8, stack_value: false }).unwrap();
    assert_eq!(d.pc, DEFAULT_PC);
    let exe = object::File::parse(d.executable.as_slice()).unwrap();
    assert_eq!(exe.architecture(), object::Architecture::Aarch64);
    // nop nop nop ret, little-endian (0xd503201f, 0xd65f03c0).
    let text = exe.section_by_name(".text").unwrap().data().unwrap().to_vec();
    assert_eq!(text[..4], [0x1f, 0x20, 0x03, 0xd5]);
    assert_eq!(text[12..], [0xc0, 0x03, 0x5f, 0xd6]);
    // The CIE: code alignment 4, data alignment -8, return address x30,
    // CFA sp (31) + 0 at the pc.
    let frame = exe.section_by_name(".debug_frame").unwrap().data().unwrap().to_vec();
    let mut df = gimli::DebugFrame::new(&frame[..], gimli::LittleEndian);
    df.set_address_size(8);
    let bases = gimli::BaseAddresses::default();
    let fde = gimli::UnwindSection::fde_for_address(&df, &bases, d.pc, gimli::UnwindSection::cie_from_offset).unwrap();
    assert_eq!(fde.cie().code_alignment_factor(), 4);
    assert_eq!(fde.cie().data_alignment_factor(), -8);
    assert_eq!(fde.cie().return_address_register(), gimli::Register(30));
    let mut ctx = gimli::UnwindContext::new();
    let row = fde.unwind_info_for_address(&df, &bases, &mut ctx, d.pc).unwrap();
    assert_eq!(*row.cfa(), gimli::CfaRule::RegisterAndOffset { register: gimli::Register(31), offset: 0 });
    assert_eq!(row.register(gimli::Register(30)), Some(gimli::RegisterRule::SameValue));
    // NT_PRSTATUS: user_pt_regs at 112, x29 in word 29, pc in word 32.
    let core = ElfFile64::<object::LittleEndian>::parse(d.core.as_slice()).unwrap();
    assert_eq!(core.architecture(), object::Architecture::Aarch64);
    let e = object::LittleEndian;
    let note = core.elf_program_headers().iter().find(|p| p.p_type(e) == object::elf::PT_NOTE).unwrap();
    let prstatus = note.notes(e, d.core.as_slice()).unwrap().unwrap().next().unwrap().unwrap();
    assert_eq!(prstatus.n_type(e), object::elf::NT_PRSTATUS);
    let word = |i: usize| u64::from_le_bytes(prstatus.desc()[112 + 8 * i..120 + 8 * i].try_into().unwrap());
    assert_eq!(word(29), 0x8000);
    assert_eq!(word(32), d.pc);
}

#[test]
fn aarch64_pc_must_be_instruction_aligned() {
    let mut c = case("debuggers-aarch64.yaml", "a64-reg0-64-bit");
    std::sync::Arc::make_mut(&mut c.ctx).pc = Some(0x400002);
    let e = synthesise(&c, VarShape::Bytes { byte_size: 8, stack_value: false }).unwrap_err();
    assert!(e.0.contains("not aligned"), "{e}");
}
