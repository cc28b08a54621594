//! One-step virtual unwinds side by side, from the start of many FDEs of a
//! real `.eh_frame` with a synthetic machine state: fast's lean step
//! `Unwinder::step_summary` against an unwinder built on gimli's
//! `UnwindTable` row lookup that finds the FDE (a table sorted by start
//! address, built once, as fast's index is), takes the row for the pc and
//! resolves the CFA and the return address from the same state.
//!
//! Both sides compute the same things and no more: the FDE, the row at the
//! pc, the CFA and the return address (no other caller register). fast
//! does a little more on first use of an FDE (it builds the FDE's whole
//! table once, to report a fault anywhere in it; the warm-up pass does
//! that) and on the rows it does not handle natively (an expression CFA,
//! which gimli's side gives up on, goes through fast's general step).

use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::context::{Context, MachineState, MemoryStorage};
use dwarfcheck_core::target::Endian;
use dwarfcheck_fast::unwind::{Frame, Unwinder};
use gimli::{
    BaseAddresses, CfaRule, CieOrFde, CommonInformationEntry, EhFrame, EhFrameOffset, EndianSlice, RegisterRule,
    RunTimeEndian, UnwindContext, UnwindSection,
};
use std::collections::HashMap;
use std::hint::black_box;

type Slice<'a> = EndianSlice<'a, RunTimeEndian>;

/// The samples: pcs at the start of every `stride`-th FDE of `sec`'s index
/// (in address order), and one synthetic state (registers and memory
/// made up from a seed, `Context::synthetic`) they all unwind from.
pub struct Samples {
    /// Program locations, byte addresses.
    pub pcs: Vec<u64>,
    /// The machine state of the top frame (its pc is each sample's).
    pub state: Context,
}

impl Samples {
    /// Every `stride`-th FDE start of `sec` (an `.eh_frame`).
    pub fn new(sec: &CfiSection, stride: usize) -> Samples {
        let un = Unwinder::new(sec);
        let pcs: Vec<u64> = un.index().fdes.iter().step_by(stride.max(1)).map(|f| f.begin).collect();
        let mut state = Context::new(sec.target.clone());
        state.synthetic = Some(0x5eed);
        state.pc = pcs.first().copied();
        Samples { pcs, state }
    }
}

/// fast's side: one `Unwinder::step_summary` (CFA and return address)
/// from each sample pc; returns the sum of the CFAs and return addresses
/// found (nothing for a failed step).
pub fn fast_pass(un: &mut Unwinder<'_>, s: &Samples) -> u64 {
    s.pcs.iter().fold(0u64, |h, &pc| {
        match un.step_summary(&s.state, black_box(&Frame { pc, lookup: pc, callee: None })) {
            Ok(st) => h.wrapping_add(st.cfa_address).wrapping_add(st.caller_pc.unwrap_or(0)),
            Err(_) => h,
        }
    })
}

/// fast's general step (`Unwinder::step`: every caller register, as
/// outcomes) from each sample pc; the checksum of [`fast_pass`].
pub fn fast_full_pass(un: &mut Unwinder<'_>, s: &Samples) -> u64 {
    s.pcs.iter().fold(0u64, |h, &pc| match un.step(&s.state, black_box(&Frame { pc, lookup: pc, callee: None })) {
        Ok(st) => h.wrapping_add(st.cfa_address).wrapping_add(st.step.caller_pc.unwrap_or(0)),
        Err(_) => h,
    })
}

/// gimli's side: the FDE table, the reused unwind context and the parsed
/// CIEs of one `.eh_frame`.
pub struct GimliUnwinder<'a> {
    sec: EhFrame<Slice<'a>>,
    bases: BaseAddresses,
    /// (first address, one past the last, FDE offset), by first address.
    table: Vec<(u64, u64, usize)>,
    ctx: Box<UnwindContext<usize>>,
    cies: HashMap<usize, CommonInformationEntry<Slice<'a>>>,
    ra: u16,
}

impl<'a> GimliUnwinder<'a> {
    /// Indexes the FDEs of `sec` (an `.eh_frame`; `None` for another kind).
    pub fn new(sec: &'a CfiSection) -> Option<Self> {
        if sec.kind != FrameKind::EhFrame {
            return None;
        }
        let endian = if sec.target.endian == Endian::Big { RunTimeEndian::Big } else { RunTimeEndian::Little };
        let mut eh = EhFrame::new(&sec.bytes, endian);
        eh.set_address_size(sec.target.address_bytes());
        let mut bases = BaseAddresses::default().set_eh_frame(sec.address);
        if let Some(t) = sec.text_base {
            bases = bases.set_text(t);
        }
        if let Some(d) = sec.data_base {
            bases = bases.set_got(d);
        }
        let mut table = Vec::new();
        let mut entries = eh.entries(&bases);
        while let Ok(Some(e)) = entries.next() {
            if let CieOrFde::Fde(p) = e {
                if let Ok(f) = p.parse(EhFrame::cie_from_offset) {
                    table.push((f.initial_address(), f.end_address(), f.offset()));
                }
            }
        }
        table.sort_by_key(|t| t.0);
        let ra = sec.target.return_address_register as u16;
        Some(GimliUnwinder { sec: eh, bases, table, ctx: Box::default(), cies: HashMap::new(), ra })
    }

    /// The CFA and return address of the frame at `pc` in `state`.
    pub fn step(&mut self, state: &dyn MachineState, pc: u64) -> Option<(u64, u64)> {
        let i = self.table.partition_point(|t| t.0 <= pc).checked_sub(1)?;
        let (_, end, offset) = self.table[i];
        if pc >= end {
            return None;
        }
        let cies = &mut self.cies;
        let fde = self
            .sec
            .fde_from_offset(&self.bases, EhFrameOffset(offset), |s, b, o| {
                if let Some(c) = cies.get(&o.0) {
                    return Ok(c.clone());
                }
                let c = s.cie_from_offset(b, o)?;
                cies.insert(o.0, c.clone());
                Ok(c)
            })
            .ok()?;
        let row = fde.unwind_info_for_address(&self.sec, &self.bases, &mut self.ctx, pc).ok()?;
        let cfa = match *row.cfa() {
            CfaRule::RegisterAndOffset { register, offset } => {
                register_value(state, u64::from(register.0))?.wrapping_add(offset as u64)
            }
            CfaRule::Expression(_) => return None,
        };
        let ra = match row.register(gimli::Register(self.ra)) {
            Some(RegisterRule::Offset(n)) => {
                let mut b = [0u8; 8];
                state.read_memory(MemoryStorage::shared(0), cfa.wrapping_add(n as u64), &mut b).ok()?;
                u64::from_le_bytes(b)
            }
            Some(RegisterRule::SameValue) => register_value(state, u64::from(self.ra))?,
            Some(RegisterRule::Register(r)) => register_value(state, u64::from(r.0))?,
            _ => 0,
        };
        Some((cfa, ra))
    }

    /// One step from each sample pc; returns the sum of CFAs and return
    /// addresses found.
    pub fn pass(&mut self, s: &Samples) -> u64 {
        s.pcs.iter().fold(0u64, |h, &pc| match self.step(&s.state, black_box(pc)) {
            Some((cfa, ra)) => h.wrapping_add(cfa).wrapping_add(ra),
            None => h,
        })
    }
}

/// The low 64 bits of register `regno`.
fn register_value(state: &dyn MachineState, regno: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    let n = state.target().register(regno).map_or(8, |r| (r.bits / 8).min(8) as usize);
    state.read_register(regno, 0, &mut b[..n]).ok()?;
    Some(u64::from_le_bytes(b))
}
