//! Row tables side by side: every row of every FDE of a frame section, by
//! gimli's `UnwindTable` (one `UnwindContext` reused, parsed CIEs kept by
//! offset, as a careful gimli user does) and by fast's row builder (its
//! `Builder` reused, rows counted by a sink).

use dwarfcheck_core::cfi::{CfiSection, FrameKind};
use dwarfcheck_core::target::{Arch, Endian};
use dwarfcheck_fast::cfi::{Builder, CountingSink};
use gimli::{
    BaseAddresses, CieOrFde, CommonInformationEntry, DebugFrame, EhFrame, EndianSlice, RunTimeEndian, UnwindContext,
    UnwindSection, UnwindTable,
};
use std::collections::HashMap;
use std::hint::black_box;

type Slice<'a> = EndianSlice<'a, RunTimeEndian>;

/// gimli's side: the unwind context, reused from pass to pass.
#[derive(Default)]
pub struct GimliRows {
    ctx: Box<UnwindContext<usize>>,
}

impl GimliRows {
    /// Builds every row of every FDE of `sec`; returns the number of rows
    /// plus the number of register rules over them (FDEs gimli cannot
    /// parse count nothing).
    pub fn pass(&mut self, sec: &CfiSection) -> u64 {
        let endian = if sec.target.endian == Endian::Big { RunTimeEndian::Big } else { RunTimeEndian::Little };
        let vendor = if sec.target.arch == Arch::Aarch64 { gimli::Vendor::AArch64 } else { gimli::Vendor::Default };
        let mut bases = BaseAddresses::default().set_eh_frame(sec.address);
        if let Some(t) = sec.text_base {
            bases = bases.set_text(t);
        }
        if let Some(d) = sec.data_base {
            bases = bases.set_got(d);
        }
        // Parsed CIEs by offset, for this pass (they borrow its bytes).
        let bytes: &[u8] = &sec.bytes;
        match sec.kind {
            FrameKind::EhFrame => {
                let mut s = EhFrame::new(bytes, endian);
                s.set_address_size(sec.target.address_bytes());
                s.set_vendor(vendor);
                rows_of(&s, &bases, &mut self.ctx, &mut HashMap::new())
            }
            FrameKind::DebugFrame => {
                let mut s = DebugFrame::new(bytes, endian);
                s.set_address_size(sec.target.address_bytes());
                s.set_vendor(vendor);
                rows_of(&s, &bases, &mut self.ctx, &mut HashMap::new())
            }
        }
    }
}

fn rows_of<'a, S: UnwindSection<Slice<'a>>>(
    sec: &S,
    bases: &BaseAddresses,
    ctx: &mut UnwindContext<usize>,
    cies: &mut HashMap<usize, CommonInformationEntry<Slice<'a>>>,
) -> u64
where
    S::Offset: gimli::UnwindOffset<usize>,
{
    let mut n = 0u64;
    let mut entries = sec.entries(bases);
    while let Ok(Some(entry)) = entries.next() {
        let CieOrFde::Fde(partial) = entry else { continue };
        let fde = partial.parse(|s, b, o| {
            let key = gimli::UnwindOffset::into(o);
            if let Some(c) = cies.get(&key) {
                return Ok(c.clone());
            }
            let c = s.cie_from_offset(b, o)?;
            cies.insert(key, c.clone());
            Ok(c)
        });
        let Ok(fde) = fde else { continue };
        let Ok(mut table) = UnwindTable::new(sec, bases, ctx, &fde) else { continue };
        while let Ok(Some(row)) = table.next_row() {
            n += 1 + row.registers().count() as u64;
            black_box(row);
        }
    }
    n
}

/// fast's side: every row of every FDE of `sec` into a counting sink, one
/// `Builder` reused; returns rows plus register cells, as gimli's side does.
pub fn fast_pass(builder: &mut Builder, sec: &CfiSection) -> u64 {
    let mut sink = CountingSink::default();
    builder.run_section(black_box(sec), &mut sink);
    sink.rows + sink.cells
}
