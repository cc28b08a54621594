//! What the consumers judged on virtual unwinding by register values
//! (framehop, libunwind) share: how their answers and the reference's view
//! of an unwinding are written.

use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::unwind::{CallerRegister, Step, Unwind, UnwindEnd};
use dwarfcheck_core::outcome::{Failure, NormalLocation, Outcome, RawLocation, Source};
use std::collections::BTreeMap;

/// A caller register an unwinder reports by value only: `bytes` (`None`:
/// it could not give one), and as location the note that `consumer`
/// reports values, not locations (locations are not compared).
pub fn by_value(consumer: &str, bytes: Option<Vec<u8>>) -> CallerRegister {
    let what = format!("{consumer} reports register values, not locations");
    CallerRegister { location: Outcome::Failed(Failure::Unsupported { what }), bytes }
}

/// A memory location description at byte address `a` in address space 0
/// (a CFA).
pub fn memory(a: u64) -> NormalLocation {
    RawLocation::simple(Source::memory(0, u128::from(a) * 8)).normalize()
}

/// The 8 bytes of register `regno` of `state`, as a little-endian number;
/// `None` when the state does not give them.
pub fn register(state: &dyn MachineState, regno: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    state.read_register(regno, 0, &mut b).ok()?;
    Some(u64::from_le_bytes(b))
}

/// The steps of `reference` as a consumer that shows less of them: each
/// step's pc and caller pc, no lookup address or FDE offset (0), and the
/// CFA and caller registers `shown` gives for it.
pub fn shown_steps(
    reference: &Unwind,
    shown: impl Fn(&Step) -> (NormalLocation, BTreeMap<u64, CallerRegister>),
) -> Vec<Step> {
    reference
        .steps
        .iter()
        .map(|s| {
            let (cfa, registers) = shown(s);
            Step { pc: s.pc, lookup: 0, fde_offset: 0, cfa, registers, caller_pc: s.caller_pc }
        })
        .collect()
}

/// The reference's unwinding `reference` as an unwinder that reports
/// register values shows it: per step the pc, the CFA, the caller pc and
/// the caller registers `keep` selects (by value, [`by_value`]); no lookup
/// address or FDE offset. Such an unwinder makes a step whole or not at
/// all, so a last step that the reference's fault cut short (no caller pc)
/// is not one. The end is the reference's.
pub fn values_view(reference: &Unwind, consumer: &str, keep: impl Fn(u64, &CallerRegister) -> bool) -> Unwind {
    let mut steps = shown_steps(reference, |s| {
        let registers = s
            .registers
            .iter()
            .filter(|(n, c)| keep(**n, c))
            .map(|(n, c)| (*n, by_value(consumer, c.bytes.clone())))
            .collect();
        (s.cfa.clone(), registers)
    });
    if matches!(reference.end, UnwindEnd::Fault { .. }) && steps.last().is_some_and(|s| s.caller_pc.is_none()) {
        steps.pop();
    }
    Unwind { steps, end: reference.end.clone() }
}

/// The instructions of the FDE at `fde_offset` of `section` and of its
/// CIE, disassembled (CIE first, one instruction per line): for failure
/// classes that recognise a kind of instruction. `None` when the FDE or
/// CIE does not parse.
pub fn instructions_text(section: &dwarfcheck_core::cfi::CfiSection, fde_offset: u64) -> Option<String> {
    let (fde, _) = section.parse_fde(fde_offset).ok()?;
    let cie = section.parse_cie(fde.cie_offset).ok()?;
    let p = crate::asm::cfi::CfiAsmParams::from_cie(&cie);
    let bytes = |r: std::ops::Range<u64>| section.bytes.get(r.start as usize..r.end as usize).unwrap_or(&[]);
    let text = |r| crate::asm::cfi::disassemble(bytes(r), &section.target, &p);
    let (a, b) = (text(cie.instructions.clone()), text(fde.instructions.clone()));
    Some(if a.is_empty() || b.is_empty() { a + &b } else { a + "\n" + &b })
}
