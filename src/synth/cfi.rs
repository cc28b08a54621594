//! Synthesised debuggees that unwind: from a CFI case with an unwinding
//! part, an executable whose frame section holds the case's CFI at the
//! case's addresses, with code, a symbol and a line table entry for every
//! FDE, and a core file of the top frame's state (issue 15;
//! docs/debuggers.md, "Unwinding through a synthesised core").
//!
//! - The executable (`ET_EXEC`, x86-64 or AArch64, [`Machine`]): `.text`
//!   covering every FDE's range (the machine's `nop`s; FDE ranges that
//!   overlap or touch share a section), each
//!   in a read-execute `PT_LOAD`; the case's section unchanged, either
//!   `.eh_frame` at the case's section address in a read-only `PT_LOAD`
//!   with an `.eh_frame_hdr` after it (`PT_GNU_EH_FRAME`), or
//!   `.debug_frame` (not loaded); one `STT_FUNC` symbol per FDE
//!   (`dwarfcheck_fde_<offset>`, the FDE's section offset in hex); and a
//!   unit (gimli's writer) with one subprogram per FDE and a `.debug_line`
//!   sequence per FDE.
//! - The core file (`ET_CORE`): `NT_PRSTATUS` (the case's registers, the
//!   pc register = the case's pc), `NT_PRPSINFO`, `NT_FPREGSET`, `NT_FILE` (the
//!   executable's loaded sections, by the path the caller gives) and one
//!   `PT_LOAD` per memory segment of the case (its stack).
//!
//! The `.eh_frame_hdr` layout (LSB 5.0 "The .eh_frame_hdr section") is
//! encoded here; gimli's writer has none.

use super::elf::{self as elf_file, FunctionSymbol, Image, Loaded, PAGE, PID};
use super::machine::Machine;
use super::notes::{self, Mapping};
use super::Unrepresentable;
use crate::case::{CfiCase, UnwindCase};
use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use gimli::write::{
    Address, AttributeValue, DwarfUnit, EndianVec, LineProgram, LineString, Range, RangeList, Sections,
};
use gimli::{constants as dw, Encoding, LittleEndian};
use object::elf;

/// Most bytes of code the executable holds (all FDE ranges together).
pub const MAX_TEXT_BYTES: u64 = 1 << 20;

/// First address past the canonical x86-64 user half (also below
/// AArch64's 48-bit user range).
const USER_END: u64 = 0x0000_8000_0000_0000;

/// The two files of one unwinding case.
#[derive(Debug, Clone)]
pub struct UnwindDebuggee {
    /// The executable: code, frame section, symbols, line table.
    pub executable: Vec<u8>,
    /// The core file of the top frame's state.
    pub core: Vec<u8>,
    /// The top frame's program counter (`rip` or `pc` of `NT_PRSTATUS`).
    pub pc: u64,
    /// The FDEs' code ranges `[begin, end)` ([`fde_ranges`]).
    pub functions: Vec<(u64, u64)>,
}

/// One FDE whose header parses: section offset and `[begin, end)`.
fn fdes(sec: &CfiSection) -> Vec<(u64, u64, u64)> {
    sec.fde_offsets()
        .filter_map(Result::ok)
        .filter_map(|o| sec.parse_fde(o).ok())
        .map(|(f, _)| (f.offset, f.pc_begin, f.pc_begin.saturating_add(f.pc_range)))
        .collect()
}

/// The `[begin, end)` code ranges of the FDEs of `sec` whose headers
/// parse, sorted by start.
pub fn fde_ranges(sec: &CfiSection) -> Vec<(u64, u64)> {
    let mut r: Vec<(u64, u64)> = fdes(sec).into_iter().map(|(_, b, e)| (b, e)).collect();
    r.sort_unstable();
    r
}

/// Whether a range of `ranges` ([`fde_ranges`]) covers `pc`. Ranges may
/// overlap, so every range starting at or before `pc` is a candidate.
pub fn covered(ranges: &[(u64, u64)], pc: u64) -> bool {
    let n = ranges.partition_point(|&(begin, _)| begin <= pc);
    ranges[..n].iter().any(|&(_, end)| pc < end)
}

/// Sorted, non-empty ranges merged where they overlap or touch.
fn merge(ranges: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(b, e) in ranges.iter().filter(|(b, e)| b < e) {
        match out.last_mut() {
            Some(last) if b <= last.1 => last.1 = last.1.max(e),
            _ => out.push((b, e)),
        }
    }
    out
}

/// Writes the executable and core file for the unwinding `u` of `case`;
/// `exe_path` is the path the executable will have (named by the core's
/// `NT_FILE` and `NT_PRPSINFO`).
///
/// A synthetic state is first made concrete ([`super::concrete`]).
///
/// Errors: [`Unrepresentable`] for a target other than x86-64 and AArch64
/// (or a state of another target than the section's), a state a
/// core cannot hold ([`super::check_state`]), no pc, no FDE with a
/// non-empty range, code outside the user half or over
/// [`MAX_TEXT_BYTES`], an `.eh_frame` whose `.eh_frame_hdr` offsets do not
/// fit 32 bits, or code, frame section and memory that overlap.
pub fn synthesise_unwind(case: &CfiCase, u: &UnwindCase, exe_path: &str) -> Result<UnwindDebuggee, Unrepresentable> {
    let sec = &case.section;
    // A synthetic state (`elf`'s unwinding samples) as the registers and
    // memory the reference reads, and the text of the FDEs it visits only.
    let concrete;
    let (u, visited) = if u.ctx.synthetic.is_some() {
        concrete = super::concrete::concretise(sec, u)?;
        (&concrete.case, Some(&concrete.fdes))
    } else {
        (u, None)
    };
    let ctx = &u.ctx;
    let machine = Machine::for_target(sec.target.arch, &sec.target.name)?;
    if Machine::of(ctx.target.arch) != Some(machine) {
        return Err(Unrepresentable(format!(
            "a state of target {} for a section of {}",
            ctx.target.name, sec.target.name
        )));
    }
    super::check_state(ctx)?;
    let pc = ctx
        .pc
        .or_else(|| ctx.registers.get(&machine.pc_register()).map(|b| super::le_u64(b)))
        .ok_or_else(|| Unrepresentable("no pc".into()))?;
    let functions: Vec<(u64, u64, u64)> = fdes(sec)
        .into_iter()
        .filter(|(off, b, e)| b < e && visited.is_none_or(|v| v.contains(off)))
        .collect();
    let mut ranges: Vec<(u64, u64)> = functions.iter().map(|&(_, b, e)| (b, e)).collect();
    ranges.sort_unstable();
    let text = merge(&ranges);
    if text.is_empty() {
        return Err(Unrepresentable("no FDE with code".into()));
    }
    if text.iter().any(|&(b, e)| b == 0 || e > USER_END) {
        return Err(Unrepresentable("code outside the user half of the address space".into()));
    }
    if text.iter().map(|(b, e)| e - b).sum::<u64>() > MAX_TEXT_BYTES {
        return Err(Unrepresentable(format!("more than {MAX_TEXT_BYTES} bytes of code")));
    }

    let mut img = Image::default();
    for &(b, e) in &text {
        img.loaded.push(Loaded { name: ".text", address: b, bytes: machine.nops((e - b) as usize), code: true });
    }
    for &(offset, b, e) in &functions {
        let section = text.iter().position(|&(tb, te)| tb <= b && e <= te).unwrap_or(0);
        img.symbols.push(FunctionSymbol { name: symbol_name(offset), address: b, size: e - b, section });
    }
    match sec.kind {
        FrameKind::EhFrame => {
            let hdr_at = (sec.address + sec.bytes.len() as u64).next_multiple_of(4);
            let hdr = eh_frame_hdr(sec, &functions, hdr_at)?;
            img.loaded.push(Loaded { name: ".eh_frame", address: sec.address, bytes: sec.bytes.to_vec(), code: false });
            img.loaded.push(Loaded { name: ".eh_frame_hdr", address: hdr_at, bytes: hdr, code: false });
            img.eh_frame_hdr = Some(img.loaded.len() - 1);
        }
        FrameKind::DebugFrame => img.unloaded.push((".debug_frame", sec.bytes.to_vec())),
    }
    let memory = elf_file::memory_segments(ctx);
    let mut spans: Vec<(u64, u64, &str)> =
        img.loaded.iter().map(|l| (l.address, l.address + l.bytes.len() as u64, l.name)).collect();
    spans.extend(memory.iter().map(|g| (g.address, g.address.saturating_add(g.size), "memory")));
    spans.sort_unstable();
    if let Some(w) = spans.windows(2).find(|w| w[1].0 < w[0].1 && w[1].0 < w[1].1) {
        return Err(Unrepresentable(format!("{} at {:#x} overlaps {} at {:#x}", w[1].2, w[1].0, w[0].2, w[0].0)));
    }
    img.unloaded.extend(line_table(&functions)?);
    // Segments in ascending address order, as loaders and debuggers expect.
    let mut order: Vec<usize> = (0..img.loaded.len()).collect();
    order.sort_by_key(|&i| img.loaded[i].address);
    let remap = |i: usize| order.iter().position(|&j| j == i).unwrap_or(i);
    img.symbols.iter_mut().for_each(|s| s.section = remap(s.section));
    img.eh_frame_hdr = img.eh_frame_hdr.map(remap);
    img.loaded = order.iter().map(|&i| img.loaded[i].clone()).collect();
    // The file's headers mapped on the free page below everything else,
    // when there is one.
    let lowest = spans.first().map_or(0, |s| s.0) / PAGE * PAGE;
    img.headers_at = lowest.checked_sub(PAGE);
    let executable = elf_file::image(machine, &img)?;
    let core = core(machine, ctx, pc, &executable, exe_path)?;
    Ok(UnwindDebuggee { executable, core, pc, functions: ranges })
}

/// The symbol naming the FDE at section offset `offset`.
pub fn symbol_name(offset: u64) -> String {
    format!("dwarfcheck_fde_{offset:x}")
}

/// The `.eh_frame_hdr` at `at` for `sec` (an `.eh_frame` at
/// `sec.address`): version 1, `eh_frame_ptr` pc-relative `sdata4`,
/// `fde_count` `udata4`, and the search table (initial location, FDE
/// address), sorted by initial location, both `datarel sdata4` from the
/// header's start (LSB 5.0).
///
/// Errors: [`Unrepresentable`] when an offset does not fit `sdata4`.
fn eh_frame_hdr(sec: &CfiSection, functions: &[(u64, u64, u64)], at: u64) -> Result<Vec<u8>, Unrepresentable> {
    const PCREL_SDATA4: u8 = 0x1b;
    const UDATA4: u8 = 0x03;
    const DATAREL_SDATA4: u8 = 0x3b;
    let rel = |to: u64, from: u64| {
        i32::try_from(to.wrapping_sub(from) as i64)
            .map_err(|_| Unrepresentable(format!("an .eh_frame_hdr offset from {from:#x} to {to:#x}")))
    };
    let mut table: Vec<(u64, u64)> = functions.iter().map(|&(o, b, _)| (b, sec.address + o)).collect();
    table.sort_unstable();
    let mut h = vec![1, PCREL_SDATA4, UDATA4, DATAREL_SDATA4];
    h.extend_from_slice(&rel(sec.address, at + 4)?.to_le_bytes());
    h.extend_from_slice(&(table.len() as u32).to_le_bytes());
    for (loc, fde) in table {
        h.extend_from_slice(&rel(loc, at)?.to_le_bytes());
        h.extend_from_slice(&rel(fde, at)?.to_le_bytes());
    }
    Ok(h)
}

/// A DWARF 5 unit (gimli's writer) with one subprogram per FDE (named as
/// its symbol, `DW_AT_low_pc`/`DW_AT_high_pc` its range), the unit's
/// `DW_AT_ranges` the FDE ranges, and a line program with one sequence per
/// FDE: line `n + 1` of `unwind.c` for the `n`th FDE.
///
/// Errors: [`Unrepresentable`] if gimli's writer refuses the unit.
fn line_table(functions: &[(u64, u64, u64)]) -> Result<Vec<super::dwarf::Section>, Unrepresentable> {
    let encoding = Encoding { format: gimli::Format::Dwarf32, version: 5, address_size: 8 };
    let mut program = LineProgram::new(
        encoding,
        gimli::LineEncoding::default(),
        LineString::String(b"/dwarfcheck".to_vec()),
        None,
        LineString::String(b"unwind.c".to_vec()),
        None,
    );
    let dir = program.default_directory();
    let file = program.add_file(LineString::String(b"unwind.c".to_vec()), dir, None);
    for (n, &(_, b, e)) in functions.iter().enumerate() {
        program.begin_sequence(Some(Address::Constant(b)));
        program.row().file = file;
        program.row().line = n as u64 + 1;
        program.generate_row();
        program.end_sequence(e - b);
    }
    let mut du = DwarfUnit::new(encoding);
    du.unit.line_program = program;
    let unit = &mut du.unit;
    let root = unit.root();
    let list = RangeList(
        functions.iter().map(|&(_, b, e)| Range::StartLength { begin: Address::Constant(b), length: e - b }).collect(),
    );
    let ranges = unit.ranges.add(list);
    let r = unit.get_mut(root);
    r.set(dw::DW_AT_name, AttributeValue::String(b"unwind.c".to_vec()));
    r.set(dw::DW_AT_producer, AttributeValue::String(b"dwarfcheck synth".to_vec()));
    r.set(dw::DW_AT_language, AttributeValue::Language(dw::DW_LANG_C99));
    r.set(dw::DW_AT_low_pc, AttributeValue::Address(Address::Constant(0)));
    r.set(dw::DW_AT_ranges, AttributeValue::RangeListRef(ranges));
    for &(offset, b, e) in functions {
        let f = unit.add(root, dw::DW_TAG_subprogram);
        let f = unit.get_mut(f);
        f.set(dw::DW_AT_name, AttributeValue::String(symbol_name(offset).into_bytes()));
        f.set(dw::DW_AT_external, AttributeValue::Flag(true));
        f.set(dw::DW_AT_low_pc, AttributeValue::Address(Address::Constant(b)));
        f.set(dw::DW_AT_high_pc, AttributeValue::Udata(e - b));
    }
    let mut sections = Sections::new(EndianVec::new(LittleEndian));
    du.write(&mut sections).map_err(|e| Unrepresentable(format!("gimli's writer: {e}")))?;
    let mut out = Vec::new();
    let _ = sections.for_each(|id, data| {
        if !data.slice().is_empty() {
            out.push((id.name(), data.slice().to_vec()));
        }
        Ok::<(), ()>(())
    });
    Ok(out)
}

/// The core file for `machine`: registers (the pc register = `pc`),
/// process and file-mapping notes for the executable `exe` (at
/// `exe_path`) and the case's memory.
fn core(
    machine: Machine,
    ctx: &dwarfcheck_core::context::Context,
    pc: u64,
    exe: &[u8],
    exe_path: &str,
) -> Result<Vec<u8>, Unrepresentable> {
    let (prstatus, fpregs) = machine.notes(&ctx.registers, pc, PID);
    // Where each loaded section landed in the file (its section header).
    let file = object::read::elf::ElfFile64::<object::LittleEndian>::parse(exe)
        .map_err(|e| Unrepresentable(format!("reading the executable back: {e}")))?;
    let mut mappings = Vec::new();
    let e = object::LittleEndian;
    for p in file.elf_program_headers() {
        use object::read::elf::ProgramHeader as _;
        if p.p_type(e) != elf::PT_LOAD {
            continue;
        }
        let (a, off) = (p.p_vaddr(e), p.p_offset(e));
        let m = Mapping {
            start: a - a % PAGE,
            end: (a + p.p_memsz(e)).next_multiple_of(PAGE),
            page_offset: (off - a % PAGE) / PAGE,
        };
        // Mappings of one process never overlap: a segment sharing a page
        // with one before it is mapped by that one.
        if mappings.last().is_none_or(|l: &Mapping| l.end <= m.start) {
            mappings.push(m);
        }
    }
    mappings.sort_by_key(|m| m.start);
    let name = exe_path.rsplit('/').next().unwrap_or(exe_path);
    let mut n = Vec::new();
    notes::note(&mut n, elf::NT_PRSTATUS, elf::ELF_NOTE_CORE, &prstatus);
    notes::note(&mut n, elf::NT_PRPSINFO, elf::ELF_NOTE_CORE, &notes::prpsinfo(PID, name, exe_path));
    notes::note(&mut n, elf::NT_FPREGSET, elf::ELF_NOTE_CORE, &fpregs);
    notes::note(&mut n, elf::NT_FILE, elf::ELF_NOTE_CORE, &notes::file_note(PAGE, &mappings, exe_path));
    machine.machine_notes(&mut n);
    // The executable's mappings as the kernel dumps them: the page with
    // the ELF header whole, the others without contents; each only where
    // it does not overlap the case's memory.
    let memory = elf_file::memory_segments(ctx);
    let free = |a: u64, b: u64| memory.iter().all(|g| g.address.saturating_add(g.size) <= a || b <= g.address);
    let mut segs: Vec<elf_file::CoreSegment<'_>> = Vec::new();
    for m in mappings.iter().filter(|m| free(m.start, m.end)) {
        let head = m.page_offset == 0;
        let bytes = if head { &exe[..exe.len().min(PAGE as usize)] } else { &[][..] };
        segs.push(elf_file::CoreSegment { address: m.start, bytes, size: m.end - m.start, writable: false });
    }
    segs.extend(memory);
    elf_file::core_file(machine, &n, &segs)
}
