//! The x86-64 stand-in of a lowered procedure for real debuggers (issue 18 item 4): an executable, a core file per pc, and what the direct reading says a debugger must show there.
//!
//! No Alpha debuggee can be built here, so the lowering runs on x86-64
//! terms (docs/consumers.md, "Tru64 lowerings through GDB and LLDB"):
//!
//! - **Addresses are the procedure's own.** `.text` holds `4 × insns`
//!   bytes of x86-64 code (`nop`s and a `ret`, never executed) at the
//!   procedure's base, named [`lower::PROCEDURE`]. A procedure outside
//!   [`TEXT_LOW`]..[`TEXT_HIGH`] or longer than [`MAX_CODE_BYTES`] is
//!   [`Unrepresentable`].
//! - **Registers stand in one for one** ([`STANDIN_REGISTERS`]): sixteen
//!   Alpha integer registers are given the sixteen x86-64 general
//!   registers (`$sp` is `rsp`, so frame offsets count from it). A
//!   location in any other Alpha register has no stand-in: the lowering
//!   leaves it out ([`lower::VariableList::unlowered`]) and the points
//!   that read it are not asked.
//! - **The machine state is fixed**: x86-64 DWARF register `n` holds
//!   [`check::register_value`]`(n)` (the evaluators' context too), and
//!   every 8 bytes a location can name lie in a core segment whose byte at
//!   address `a` is [`memory_byte`]`(a)`.
//!
//! The expectation at a pc is the direct reading ([`View::location_at`],
//! [`View::scopes_at`]) turned into bytes in that state, not an
//! evaluation of the lowered lists.

use super::check::register_value;
use super::lower::{self, place_of, LowerTarget, Lowered, Place};
use super::model::Target;
use super::resolve::{View, Where};
use crate::synth::elf::{self, CoreSegment, FunctionSymbol, Image, Loaded, PAGE, PID};
use crate::synth::machine::Machine;
use crate::synth::Unrepresentable;
use std::collections::{BTreeMap, BTreeSet};

/// Alpha register (`$0`..`$31`) → x86-64 DWARF register: `$0` (v0) rax,
/// `$1`..`$5` (t0..t4) rdx, rcx, rbx, rsi, rdi, `$9` (s0) rbp, `$30`
/// (sp) rsp, `$16`..`$21` (a0..a5) r8..r13, `$26` (ra) r14, `$15` (fp)
/// r15.
pub const STANDIN_REGISTERS: [(u64, u64); 16] = [
    (0, 0),
    (1, 1),
    (2, 2),
    (3, 3),
    (4, 4),
    (5, 5),
    (9, 6),
    (30, 7),
    (16, 8),
    (17, 9),
    (18, 10),
    (19, 11),
    (20, 12),
    (21, 13),
    (26, 14),
    (15, 15),
];

/// The lowering target of the stand-in: [`STANDIN_REGISTERS`], frame
/// offsets from `$sp` (rsp), evaluated on the x86-64 target.
pub const X86_64_STANDIN: LowerTarget = LowerTarget {
    name: "x86-64 stand-in",
    dwarf_register: standin_register,
    frame_register: 30,
    core: dwarfcheck_core::target::presets::x86_64,
};

fn standin_register(r: u64) -> Option<u64> {
    STANDIN_REGISTERS.iter().find(|(a, _)| *a == r).map(|(_, x)| *x)
}

/// Lowest address of the procedure's code (bytes): above the first page,
/// which debuggers take for a null pointer. (The stand-in is never run,
/// so Linux's 64 KiB `mmap_min_addr` does not apply.)
pub const TEXT_LOW: u64 = 0x1000;
/// Address the procedure's code must end below (bytes): under the
/// registers' values ([`check::register_value`]), in the lower half of
/// the x86-64 user address space.
pub const TEXT_HIGH: u64 = 0x7000_0000_0000;
/// Longest procedure the stand-in writes, in **bytes** of code (16,384
/// Alpha instructions).
pub const MAX_CODE_BYTES: u64 = 64 << 10;
/// Most core pages (of [`PAGE`] bytes) the memory a procedure's
/// locations name may take.
pub const MAX_PAGES: usize = 256;
/// Most pcs one procedure is asked at ([`Program::pcs`]).
pub const MAX_PCS: usize = 48;

/// The byte at `address` in every stand-in core: a mix of the address,
/// so that any 8 bytes read from a wrong address differ from the right
/// ones.
pub fn memory_byte(address: u64) -> u8 {
    (address.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

/// A variable's value as the direct reading gives it at one pc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// One of these (more than one where overlapping children are all
    /// active, §12.3.2.3; a debugger may show any).
    Values(Vec<Value>),
    /// No location applies (a debugger shows it optimized out).
    OptimizedOut,
    /// A location applies that the stand-in cannot hold (no x86-64
    /// register for it, or a class without a DWARF form): not asked.
    NotRepresentable,
}

/// One value: its 8 bytes (little-endian) and its memory address (`None`
/// for a register).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Value {
    /// The variable's 8 bytes.
    pub bytes: [u8; 8],
    /// Its address in memory, bytes; `None` in a register.
    pub address: Option<u64>,
}

/// One procedure's stand-in: the lowering, the executable and the state
/// its cores hold.
#[derive(Debug, Clone)]
pub struct Program {
    /// The lowering for [`X86_64_STANDIN`].
    pub lowered: Lowered,
    /// The ELF executable (`ET_EXEC`, x86-64): `.text`, the symbol, the
    /// DWARF of [`lower::write_dwarf`].
    pub executable: Vec<u8>,
    /// Each variable's target, in [`Lowered::lists`] order (named
    /// [`lower::variable_name`]).
    pub targets: Vec<Target>,
    registers: BTreeMap<u64, Vec<u8>>,
    /// Core segments: page address → bytes.
    pages: BTreeMap<u64, Vec<u8>>,
}

/// The place `p` as a value in the stand-in state, or `None` when its
/// register has no stand-in.
fn value_of(p: Place) -> Option<Value> {
    let reg = |r: u64| standin_register(r).map(register_value);
    let at = |a: u64| {
        let mut bytes = [0u8; 8];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = memory_byte(a.wrapping_add(i as u64));
        }
        Value { bytes, address: Some(a) }
    };
    Some(match p {
        Place::Register(r) => Value { bytes: reg(r)?.to_le_bytes(), address: None },
        Place::AtRegister(r) => at(reg(r)?),
        Place::FrameOffset(o) => at(reg(X86_64_STANDIN.frame_register)?.wrapping_add_signed(o)),
        Place::Address(a) => at(a),
    })
}

/// What a debugger must show for `w`.
pub fn shown(w: &Where) -> Shown {
    let locs = match w {
        Where::Children(c) => c.clone(),
        Where::Default(d) => vec![*d],
        Where::Nowhere => return Shown::OptimizedOut,
    };
    let mut values = BTreeSet::new();
    for l in &locs {
        match place_of(l).and_then(value_of) {
            Some(v) => values.insert(v),
            None => return Shown::NotRepresentable,
        };
    }
    Shown::Values(values.into_iter().collect())
}

impl Program {
    /// The stand-in of the procedure `view` describes.
    ///
    /// Errors: [`Unrepresentable`] for a procedure outside
    /// [`TEXT_LOW`]..[`TEXT_HIGH`] or over [`MAX_CODE_BYTES`], memory of
    /// more than [`MAX_PAGES`] pages or meeting the code, or a writer's
    /// refusal.
    pub fn build(view: &View<'_>) -> Result<Program, Unrepresentable> {
        let no = |s: String| Err(Unrepresentable(s));
        let lowered = lower::lower(view, &X86_64_STANDIN);
        let (low, code) = (lowered.low, lowered.high() - lowered.low);
        if code == 0 || code > MAX_CODE_BYTES {
            return no(format!("a procedure of {code} bytes (1 to {MAX_CODE_BYTES})"));
        }
        if low < TEXT_LOW || lowered.high() > TEXT_HIGH {
            return no(format!("a procedure at {low:#x} (code lies in {TEXT_LOW:#x}..{TEXT_HIGH:#x})"));
        }
        let written = lower::write_dwarf(&lowered).map_err(Unrepresentable)?;
        let machine = Machine::X86_64;
        let executable = elf::image(
            machine,
            &Image {
                loaded: vec![Loaded {
                    name: ".text",
                    address: low,
                    bytes: machine.function(code as usize),
                    code: true,
                }],
                unloaded: written.sections,
                symbols: vec![FunctionSymbol { name: lower::PROCEDURE.into(), address: low, size: code, section: 0 }],
                ..Default::default()
            },
        )?;
        let registers = STANDIN_REGISTERS.iter().map(|&(_, x)| (x, register_value(x).to_le_bytes().to_vec())).collect();
        let pages = pages(view, low, lowered.high())?;
        let targets = lowered.lists.iter().map(|v| v.target.clone()).collect();
        Ok(Program { lowered, executable, targets, registers, pages })
    }

    /// The core file of the thread stopped at `pc`.
    ///
    /// Errors: [`Unrepresentable`] if the writer fails.
    pub fn core(&self, pc: u64) -> Result<Vec<u8>, Unrepresentable> {
        let machine = Machine::X86_64;
        let (prstatus, fpregs) = machine.notes(&self.registers, pc, PID);
        let mut notes = Vec::new();
        crate::synth::notes::note(&mut notes, object::elf::NT_PRSTATUS, object::elf::ELF_NOTE_CORE, &prstatus);
        crate::synth::notes::note(&mut notes, object::elf::NT_FPREGSET, object::elf::ELF_NOTE_CORE, &fpregs);
        let segs: Vec<CoreSegment<'_>> = self
            .pages
            .iter()
            .map(|(a, b)| CoreSegment { address: *a, bytes: b, size: b.len() as u64, writable: true })
            .collect();
        elf::core_file(machine, &notes, &segs)
    }

    /// The pcs a debugger is asked at: every instruction of a procedure of
    /// at most [`MAX_PCS`] instructions; else the first and last
    /// instruction, each entry's and range's first and last instruction and
    /// the one after, and `extra` (a case's own pcs), those inside the
    /// procedure and 4-byte aligned, at most [`MAX_PCS`] spread evenly.
    pub fn pcs(&self, extra: &[u64]) -> Vec<u64> {
        let (low, high) = (self.lowered.low, self.lowered.high());
        let step = super::codes::INSN_BYTES;
        if self.lowered.insns <= MAX_PCS as u64 {
            return (0..self.lowered.insns).map(|i| low + i * step).collect();
        }
        let mut at: BTreeSet<u64> = [low, high - step].into();
        let ends = self.lowered.lists.iter().flat_map(|v| v.entries.iter().map(|e| (e.begin, e.end)));
        for (a, b) in ends.chain(self.lowered.scopes.iter().flat_map(|s| s.ranges.iter().copied())) {
            at.extend([a, b - step, b]);
        }
        at.extend(extra.iter().copied().filter(|pc| (pc - low.min(*pc)).is_multiple_of(step)));
        let inside: Vec<u64> = at.into_iter().filter(|pc| (low..high).contains(pc)).collect();
        if inside.len() <= MAX_PCS {
            return inside;
        }
        (0..MAX_PCS).map(|k| inside[k * inside.len() / MAX_PCS]).collect()
    }
}

/// What a debugger must show at `pc` for each variable of `p`, in
/// [`Lowered::lists`] order.
pub fn expected_variables(view: &View<'_>, p: &Program, pc: u64) -> Vec<Shown> {
    p.targets.iter().map(|t| shown(&view.location_at(t, pc))).collect()
}

/// The innermost block a debugger must find at `pc`: for each
/// discontiguous scope the direct reading puts `pc` in
/// ([`View::scopes_at`]), its lowered byte ranges in ascending order (a
/// debugger may show any one where scopes overlap); empty: no scope holds
/// `pc` (the subprogram's own block).
pub fn expected_blocks(view: &View<'_>, p: &Program, pc: u64) -> Vec<Vec<(u64, u64)>> {
    let holding = view.scopes_at(pc);
    p.lowered
        .scopes
        .iter()
        .filter(|s| holding.contains(&s.scope))
        .map(|s| {
            let mut r = s.ranges.clone();
            r.sort_unstable();
            r
        })
        .collect()
}

/// The core pages holding every 8 bytes a location of `view` names
/// (children and symbols), filled with [`memory_byte`].
fn pages(view: &View<'_>, low: u64, high: u64) -> Result<BTreeMap<u64, Vec<u8>>, Unrepresentable> {
    let children = view.splits().flat_map(|d| d.children.iter().map(|c| c.location));
    let own = view.symbols.symbols.iter().filter_map(|s| s.location);
    let mut at = BTreeSet::new();
    for l in children.chain(own) {
        let Some(Value { address: Some(a), .. }) = place_of(&l).and_then(value_of) else { continue };
        for b in [a, a.wrapping_add(7)] {
            at.insert(b - b % PAGE);
            if at.len() > MAX_PAGES {
                return Err(Unrepresentable(format!("locations naming more than {MAX_PAGES} pages of memory")));
            }
        }
    }
    let mut out = BTreeMap::new();
    for page in at {
        if page < high && low < page.saturating_add(PAGE) {
            return Err(Unrepresentable(format!("memory at {page:#x} meets the procedure's code")));
        }
        out.insert(page, (0..PAGE).map(|i| memory_byte(page + i)).collect());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tru64::cases;
    use crate::tru64::model::{Optrndx, Record};
    use object::read::elf::{ElfFile64, ProgramHeader as _};

    fn worked() -> (cases::Tru64Case, Vec<Record>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs/cases/tru64/worked-example.tru64");
        let c = cases::load(&path).unwrap().cases.remove(0);
        let records = cases::outcome(&c).unwrap().decoded.records();
        (c, records)
    }

    /// 8 bytes at `address` in `core`'s `PT_LOAD` segments.
    fn read(core: &[u8], address: u64) -> Option<[u8; 8]> {
        let f = ElfFile64::<object::LittleEndian>::parse(core).ok()?;
        for ph in f.elf_program_headers() {
            let (va, data) = (ph.p_vaddr(object::LittleEndian), ph.data(object::LittleEndian, core).ok()?);
            if (va..va + data.len() as u64).contains(&address) && address + 8 <= va + data.len() as u64 {
                let at = (address - va) as usize;
                return data[at..at + 8].try_into().ok();
            }
        }
        None
    }

    /// The worked example of §12.3.2.4 on the stand-in, by hand: N is
    /// passed by reference (`scVarRegister`), so its value is the 8 bytes
    /// at the address its register holds. Child 1 and the default are in
    /// Alpha `$17` (a1), whose stand-in is r9 (x86-64 DWARF 9), holding
    /// `0x7000_0009_0000`; children 2 and 3 are in `$0`, rax (DWARF 0),
    /// holding `0x7000_0000_0000`. The core holds those bytes there.
    #[test]
    fn the_worked_example_reads_through_the_registers_stand_ins() {
        let (c, records) = worked();
        let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
        let p = Program::build(&view).unwrap();
        assert_eq!(p.targets, vec![Target::Local(Optrndx { rfd: 0, index: 5 })]);
        let at = |a: u64| {
            let bytes: Vec<u8> = (0..8).map(|i| memory_byte(a + i)).collect();
            Value { bytes: bytes.try_into().unwrap(), address: Some(a) }
        };
        let (r9, rax) = (0x7000_0009_0000, 0x7000_0000_0000);
        for (pc, addr) in
            [(0x12000185c, r9), (0x120001860, r9), (0x120001864, rax), (0x1200018c8, rax), (0x1200018d0, r9)]
        {
            assert_eq!(expected_variables(&view, &p, pc), vec![Shown::Values(vec![at(addr)])], "{pc:#x}");
            let core = p.core(pc).unwrap();
            assert_eq!(read(&core, addr), Some(at(addr).bytes), "{pc:#x}");
        }
        assert!(expected_blocks(&view, &p, 0x120001860).is_empty());
        // The procedure's size is not given: it ends after child 3's last
        // instruction (51), and the pcs are its 52 instructions, spread.
        assert_eq!(p.lowered.insns, 52);
        let pcs = p.pcs(&[0x120001818]);
        assert!(pcs.len() <= MAX_PCS && pcs.contains(&0x120001800) && pcs.contains(&0x1200018cc), "{pcs:x?}");
        assert!(pcs.iter().all(|pc| pc % 4 == 0 && (0x120001800..0x1200018d0).contains(pc)), "{pcs:x?}");
    }

    /// A place in a register gives the register's stand-in value with no
    /// address; an Alpha register without a stand-in, or a class without a
    /// DWARF form, is not asked; no location is optimized out.
    #[test]
    fn places_become_values_or_are_not_asked() {
        use crate::tru64::model::Location;
        let loc = |sc: u64, value: i64| Location { st: 4, sc, value };
        let w = Where::Children(vec![loc(4, 16)]);
        assert_eq!(shown(&w), Shown::Values(vec![Value { bytes: 0x7000_0008_0000u64.to_le_bytes(), address: None }]));
        assert_eq!(shown(&Where::Default(loc(4, 7))), Shown::NotRepresentable);
        assert_eq!(shown(&Where::Children(vec![loc(4, 1), loc(0, 0)])), Shown::NotRepresentable);
        assert_eq!(shown(&Where::Nowhere), Shown::OptimizedOut);
        // A frame offset counts from $sp's stand-in, rsp (DWARF 7).
        let f = shown(&Where::Default(Location { st: 3, sc: 5, value: -16 }));
        let a = 0x7000_0007_0000 - 16;
        assert!(matches!(&f, Shown::Values(v) if v[0].address == Some(a) && v[0].bytes[0] == memory_byte(a)), "{f:?}");
    }

    /// A procedure the stand-in cannot place is refused with the reason.
    #[test]
    fn procedures_outside_the_text_window_are_refused() {
        let (mut c, records) = worked();
        c.procedure.base = 0;
        let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
        let e = Program::build(&view).unwrap_err();
        assert!(e.0.contains("a procedure at 0x0"), "{e}");
        c.procedure.base = 0x1000;
        c.procedure.insns = Some(MAX_CODE_BYTES / 4 + 1);
        let view = View { procedure: c.procedure, symbols: &c.symbols, records: &records };
        assert!(Program::build(&view).unwrap_err().0.contains("bytes"));
    }
}
