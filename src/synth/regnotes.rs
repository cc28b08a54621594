//! What the per-architecture register-note layouts share: where a DWARF
//! register lives in a core file's notes, and writing the case's register
//! values into the two payloads (`NT_PRSTATUS`, `NT_FPREGSET`).

use std::collections::BTreeMap;

/// Where a DWARF register lives in the core file's notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// `NT_PRSTATUS`, at this byte offset, 8 bytes.
    Prstatus(usize),
    /// `NT_FPREGSET`, at this byte offset, 16 bytes.
    Fpregset(usize),
}

/// What a register the case gives no value holds in the core file: every
/// byte `0x40 | (regno & 0x3f)`, with bit 7 set for registers 64-127
/// (AArch64's v0-v31 are 64-95, so v0 is `0xc0` and x0 `0x40`), so a
/// debugger that reads the wrong register shows it. `len` bytes.
pub fn unset_register(regno: u64, len: usize) -> Vec<u8> {
    let r = regno as u8;
    vec![0x40 | (r & 0x3f) | ((r & 0x40) << 1); len]
}

/// One architecture's register-note layout, as [`fill`] needs it.
pub struct Layout {
    /// The DWARF register → slot map.
    pub slot: fn(u64) -> Option<Slot>,
    /// Every DWARF register number the notes hold.
    pub registers: &'static [std::ops::RangeInclusive<u64>],
    /// The DWARF number of the program counter's slot.
    pub pc: u64,
}

/// Writes `registers` (DWARF number to bytes in target order; shorter
/// values zero-extended, longer ones cut to the slot) into `prstatus` and
/// `fpregs` at their [`Layout::slot`]s, every register of
/// [`Layout::registers`] the case does not give as [`unset_register`], and
/// finally `pc` into the pc's slot. Both buffers must be large enough for
/// every slot the layout names.
pub fn fill(layout: &Layout, prstatus: &mut [u8], fpregs: &mut [u8], registers: &BTreeMap<u64, Vec<u8>>, pc: u64) {
    let mut put = |regno: u64, bytes: &[u8]| {
        let (buf, at, len) = match (layout.slot)(regno) {
            Some(Slot::Prstatus(at)) => (&mut *prstatus, at, 8),
            Some(Slot::Fpregset(at)) => (&mut *fpregs, at, 16),
            None => return,
        };
        let n = bytes.len().min(len);
        buf[at..at + len].fill(0);
        buf[at..at + n].copy_from_slice(&bytes[..n]);
    };
    for r in layout.registers.iter().cloned().flatten() {
        match registers.get(&r) {
            Some(b) => put(r, b),
            None => {
                let len = if matches!((layout.slot)(r), Some(Slot::Fpregset(_))) { 16 } else { 8 };
                put(r, &unset_register(r, len))
            }
        }
    }
    put(layout.pc, &pc.to_le_bytes());
}
