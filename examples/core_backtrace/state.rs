//! The machine state of one frame of one thread, as the fast evaluator and
//! unwinder ask for it ([`MachineState`]): registers from the core's notes
//! (frame 0) or from unwinding (outer frames), memory read straight from
//! the core and the mapped files, the frame's pc, CFA and frame base, its
//! calling frame, and the executable's DWARF for the unit, base types,
//! DIEs, `.debug_addr` and location lists.
//!
//! Register numbers are DWARF's for x86-64 (System V psABI, "DWARF
//! Register Number Mapping"): 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi,
//! 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return address (rip), 17-32 xmm0-15,
//! 33-40 st0-7, 49 rflags, 50-55 es, cs, ss, ds, fs, gs, 58 fs.base,
//! 59 gs.base, 64 mxcsr, 65 fcw, 66 fsw.

use crate::core_file::{Thread, FPREGSET_BYTES, GREG_NAMES};
use crate::die::{at, tag};
use crate::process::Process;
use crate::scope::Where;
use crate::types;
use dwarfcheck_fast::context::{
    AttrForm, CallerFrame, Cfa, ContextError, DebugSection, Die, Element, MachineState, MemoryStorage, UnitInfo,
};
use dwarfcheck_fast::encoding::format::Format;
use dwarfcheck_fast::outcome::BaseType;
use dwarfcheck_fast::target::Target;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The DWARF number of general register `name` of `NT_PRSTATUS`
/// ([`GREG_NAMES`]); `None` for those DWARF does not number (`orig_rax`).
fn dwarf_number(name: &str) -> Option<u64> {
    Some(match name {
        "rax" => 0,
        "rdx" => 1,
        "rcx" => 2,
        "rbx" => 3,
        "rsi" => 4,
        "rdi" => 5,
        "rbp" => 6,
        "rsp" => 7,
        "r8" => 8,
        "r9" => 9,
        "r10" => 10,
        "r11" => 11,
        "r12" => 12,
        "r13" => 13,
        "r14" => 14,
        "r15" => 15,
        "rip" => 16,
        "eflags" => 49,
        "es" => 50,
        "cs" => 51,
        "ss" => 52,
        "ds" => 53,
        "fs" => 54,
        "gs" => 55,
        "fs_base" => 58,
        "gs_base" => 59,
        _ => return None,
    })
}

/// The registers of one frame by DWARF number: bytes in target order, or
/// `None` when the register's value is not known in this frame.
pub type Registers = BTreeMap<u64, Option<Vec<u8>>>;

/// Frame 0's registers from a thread's notes: the general registers of
/// `NT_PRSTATUS` (each as wide as the target's register), and from
/// `NT_FPREGSET` xmm0-15 (16 bytes each from byte 160), st0-7 (10 bytes
/// of each 16-byte slot from byte 32), mxcsr (byte 24), fcw (0), fsw (2).
pub fn frame0_registers(thread: &Thread, target: &Target) -> Registers {
    let mut regs = Registers::new();
    for (name, value) in GREG_NAMES.iter().zip(thread.gregs) {
        if let Some(n) = dwarf_number(name) {
            let size = target.register(n).map_or(8, |r| (r.bits / 8) as usize);
            regs.insert(n, Some(value.to_le_bytes()[..size.min(8)].to_vec()));
        }
    }
    if let Some(fp) = thread.fpregs.as_deref().filter(|f| f.len() >= FPREGSET_BYTES) {
        for k in 0..16u64 {
            let at = 160 + 16 * k as usize;
            regs.insert(17 + k, Some(fp[at..at + 16].to_vec()));
        }
        for k in 0..8u64 {
            // The st registers are 16 bytes wide in the target (GCC's
            // 16-byte long double); the upper 6 bytes of each slot are 0.
            let at = 32 + 16 * k as usize;
            let mut b = fp[at..at + 16].to_vec();
            b[10..].fill(0);
            regs.insert(33 + k, Some(b));
        }
        regs.insert(64, Some(fp[24..28].to_vec()));
        regs.insert(65, Some(fp[0..2].to_vec()));
        regs.insert(66, Some(fp[2..4].to_vec()));
    }
    regs
}

/// The machine state of one frame.
pub struct FrameState<'p> {
    /// The process (memory, DWARF, target).
    pub process: &'p Process,
    /// The frame's registers.
    pub registers: Arc<Registers>,
    /// The program location the frame is looked up at: its pc for frame
    /// 0, pc - 1 (inside the call instruction) for the others.
    pub lookup_pc: u64,
    /// The frame's CFA (byte address), once its unwinding step is made.
    pub cfa: Option<u64>,
    /// The subprogram DIE holding `lookup_pc`, if the DWARF has one.
    pub subprogram: Option<usize>,
    /// The calling frame, for `DW_OP_entry_value`.
    pub caller: Option<Arc<CallerFrame>>,
    /// The thread's LWP id.
    pub thread: u64,
}

impl<'p> FrameState<'p> {
    /// The unit holding the frame's subprogram.
    fn unit_index(&self) -> Option<usize> {
        self.subprogram.map(|s| self.process.program.info.dies[s].unit)
    }

    /// The bytes of register `regno` in this frame, if known.
    pub fn register(&self, regno: u64) -> Option<&[u8]> {
        self.registers.get(&regno)?.as_deref()
    }
}

impl MachineState for FrameState<'_> {
    fn target(&self) -> &Target {
        &self.process.target
    }

    /// Errors: `NoSuchRegister` for numbers x86-64 does not define,
    /// `RegisterUnavailable` for registers unknown in this frame (or a
    /// range past the register's end).
    fn read_register(&self, regno: u64, offset: usize, out: &mut [u8]) -> Result<(), ContextError> {
        let reg = self.process.target.register(regno).ok_or(ContextError::NoSuchRegister(regno))?;
        let size = (reg.bits / 8) as usize;
        let end = offset.checked_add(out.len()).filter(|&e| e <= size);
        let bytes = self.register(regno).ok_or(ContextError::RegisterUnavailable(regno))?;
        let src = end.and_then(|e| bytes.get(offset..e)).ok_or(ContextError::RegisterUnavailable(regno))?;
        out.copy_from_slice(src);
        Ok(())
    }

    /// Address space 0 only (x86-64 has one); errors name the first byte
    /// that neither the core nor a mapped file holds.
    fn read_memory(&self, storage: MemoryStorage, address: u64, out: &mut [u8]) -> Result<(), ContextError> {
        if storage.aspace != 0 {
            return Err(ContextError::MemoryUnreadable { aspace: storage.aspace, address });
        }
        self.process
            .core
            .read_memory(address, out)
            .map_err(|a| ContextError::MemoryUnreadable { aspace: 0, address: a })
    }

    fn thread(&self) -> Option<u64> {
        Some(self.thread)
    }

    fn pc(&self) -> Option<u64> {
        Some(self.lookup_pc)
    }

    fn cfa(&self) -> Result<Cfa, ContextError> {
        self.cfa.map(|address| Cfa { address, aspace: 0 }).ok_or(ContextError::Missing(Element::Cfa))
    }

    fn frame_base(&self) -> Option<&[u8]> {
        self.process.program.frame_base(self.subprogram?)
    }

    fn caller(&self) -> Result<Arc<CallerFrame>, ContextError> {
        self.caller.clone().ok_or(ContextError::Missing(Element::Caller))
    }

    fn unit(&self) -> Option<UnitInfo> {
        let u = &self.process.program.info.units[self.unit_index()?];
        Some(UnitInfo {
            version: u.version,
            format: if u.dwarf64 { Format::Dwarf64 } else { Format::Dwarf32 },
            address_size: u.address_size,
            offset: u.offset,
            addr_base: u.addr_base,
            loclists_base: u.loclists_base,
            base_address: u.low_pc,
        })
    }

    /// The `DW_TAG_base_type` at unit offset `die`: its encoding and size
    /// (`DW_AT_byte_size` × 8 **bits**), little-endian.
    fn base_type(&self, die: u64) -> Result<BaseType, ContextError> {
        let unit = self.unit_index().ok_or(ContextError::Missing(Element::Unit))?;
        let info = &self.process.program.info;
        let missing = ContextError::Missing(Element::BaseType);
        let i = info.units[unit].offset.checked_add(die).and_then(|o| info.die_at(o)).ok_or(missing.clone())?;
        if info.dies[i].tag != tag::BASE_TYPE {
            return Err(missing);
        }
        let encoding = info.udata(i, at::ENCODING).and_then(|e| u8::try_from(e).ok()).ok_or(missing.clone())?;
        let bits = info.udata(i, at::BYTE_SIZE).and_then(|s| u32::try_from(s.checked_mul(8)?).ok()).ok_or(missing)?;
        Ok(BaseType::ate(encoding, bits, false))
    }

    /// A DIE's location, constant value and its type's size in **bytes**
    /// (targets of `DW_OP_call*` and `DW_OP_implicit_pointer`).
    fn die(&self, offset: u64) -> Option<Cow<'_, Die>> {
        let program = &self.process.program;
        let i = program.info.die_at(offset)?;
        let (location, const_value) = match program.location(i) {
            Where::Expr(e) => (Some(AttrForm::Exprloc(e.to_vec())), None),
            Where::List(o) => (Some(AttrForm::LocList { offset: o }), None),
            Where::ListX(x) => (Some(AttrForm::LocListX { index: x }), None),
            Where::Const(b) => (None, Some(b)),
            Where::Nowhere => (None, None),
        };
        let address_size = program.info.units[program.info.dies[i].unit].address_size;
        let byte_size = program.info.type_of(i).and_then(|t| types::size_of(&program.info, t, address_size));
        let const_value = match (const_value, byte_size) {
            (Some(mut b), Some(n)) => {
                b.resize(usize::try_from(n).ok().filter(|&n| n <= 4096)?, 0);
                Some(b)
            }
            (c, _) => c,
        };
        Some(Cow::Owned(Die { location, const_value, byte_size }))
    }

    fn debug_addr(&self, index: u64) -> Result<u64, ContextError> {
        let unit = self.unit_index().ok_or(ContextError::Missing(Element::Unit))?;
        self.process.program.info.debug_addr(unit, index).ok_or(ContextError::Missing(Element::DebugAddrEntry))
    }

    fn section(&self, section: DebugSection) -> &[u8] {
        let s = &self.process.program.info.sections;
        match section {
            DebugSection::DebugLoclists => &s.loclists,
            DebugSection::DebugLoc => &s.loc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core_file::tests::TempFile;
    use crate::core_file::Core;
    use crate::scope::Program;
    use dwarfcheck_fast::target::presets;
    use std::fs::File;

    /// A thread whose general register i holds 0x100 + i, with an
    /// `NT_FPREGSET` whose byte i is i (mod 256).
    fn thread() -> Thread {
        let mut gregs = [0u64; 27];
        for (i, g) in gregs.iter_mut().enumerate() {
            *g = 0x100 + i as u64;
        }
        let fpregs = (0..FPREGSET_BYTES).map(|i| i as u8).collect();
        Thread { lwp: 7, signal: 6, gregs, fpregs: Some(fpregs) }
    }

    #[test]
    fn frame0_registers_follow_the_psabi_numbering() {
        let regs = frame0_registers(&thread(), &presets::x86_64());
        let value = |n: u64| u64::from_le_bytes(regs[&n].as_deref().unwrap()[..8].try_into().unwrap());
        // NT_PRSTATUS order: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx
        // rdx rsi rdi orig_rax rip ...; psABI numbers: rax 0, rdx 1, rcx 2,
        // rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8-r15 8-15, rip 16.
        let expected = [
            (0, 10),
            (1, 12),
            (2, 11),
            (3, 5),
            (4, 13),
            (5, 14),
            (6, 4),
            (7, 19),
            (8, 9),
            (9, 8),
            (10, 7),
            (11, 6),
            (12, 3),
            (13, 2),
            (14, 1),
            (15, 0),
            (16, 16),
        ];
        for (dwarf, note) in expected {
            assert_eq!(value(dwarf), 0x100 + note, "DWARF register {dwarf}");
        }
        assert_eq!(value(58), 0x100 + 21, "fs.base");
        // xmm0 is bytes 160..176 of the fxsave area, xmm15 bytes 400..416.
        assert_eq!(regs[&17].as_deref().unwrap(), &(160..176).map(|i| i as u8).collect::<Vec<_>>()[..]);
        assert_eq!(regs[&32].as_deref().unwrap()[0], 400u32 as u8);
        // mxcsr is bytes 24..28.
        assert_eq!(regs[&64].as_deref().unwrap(), &[24, 25, 26, 27]);
    }

    #[test]
    fn frame_state_answers_from_its_registers_and_the_core() {
        let bytes: Vec<u8> = (0..16).collect();
        let cf = TempFile::new("state", &bytes);
        let core = Core::for_test(File::open(&cf.0).unwrap(), &[(0x2000, 0, 16)], vec![thread()], Vec::new());
        let target = Arc::new(presets::x86_64());
        let process = Process { core, modules: Vec::new(), program: Program::default(), target, notes: Vec::new() };
        let mut registers = Registers::new();
        registers.insert(5, Some(0x1122_3344_5566_7788u64.to_le_bytes().to_vec()));
        registers.insert(3, None);
        let state = FrameState {
            process: &process,
            registers: Arc::new(registers),
            lookup_pc: 0x401000,
            cfa: Some(0x7000),
            subprogram: None,
            caller: None,
            thread: 7,
        };
        let mut two = [0u8; 2];
        state.read_register(5, 1, &mut two).unwrap();
        assert_eq!(two, [0x77, 0x66]);
        assert_eq!(state.read_register(5, 7, &mut two), Err(ContextError::RegisterUnavailable(5)));
        assert_eq!(state.read_register(3, 0, &mut two), Err(ContextError::RegisterUnavailable(3)));
        assert_eq!(state.read_register(0, 0, &mut two), Err(ContextError::RegisterUnavailable(0)));
        assert_eq!(state.read_register(300, 0, &mut two), Err(ContextError::NoSuchRegister(300)));
        let mut four = [0u8; 4];
        state.read_memory(MemoryStorage::shared(0), 0x2004, &mut four).unwrap();
        assert_eq!(four, [4, 5, 6, 7]);
        assert_eq!(
            state.read_memory(MemoryStorage::shared(0), 0x200e, &mut four),
            Err(ContextError::MemoryUnreadable { aspace: 0, address: 0x2010 })
        );
        assert_eq!(
            state.read_memory(MemoryStorage::shared(1), 0x2000, &mut four),
            Err(ContextError::MemoryUnreadable { aspace: 1, address: 0x2000 })
        );
        assert_eq!((state.pc(), state.thread()), (Some(0x401000), Some(7)));
        assert_eq!(state.cfa(), Ok(Cfa { address: 0x7000, aspace: 0 }));
        assert_eq!(state.caller().err(), Some(ContextError::Missing(Element::Caller)));
        // No subprogram: no unit, frame base or base types.
        assert_eq!(state.unit(), None);
        assert_eq!(state.frame_base(), None);
        assert_eq!(state.base_type(0x2a), Err(ContextError::Missing(Element::Unit)));
        let no_cfa = FrameState { cfa: None, ..state };
        assert_eq!(no_cfa.cfa(), Err(ContextError::Missing(Element::Cfa)));
    }
}
