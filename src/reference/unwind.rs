//! Reference virtual unwinding (hetero-2020 "Structure of Call Frame
//! Information"; DWARF 5 §6.4.4; rules `unwind.*`), step by step as
//! `specs/rules/unwind.yaml` states it.

use crate::cfi::{CfiSection, Cie, Fde, AARCH64_RA_SIGN_STATE};
use crate::context::{CallerFrame, Context};
use crate::outcome::cfi::{CfiOutcome, RegisterRule, Row};
use crate::outcome::unwind::{Step, Unwind, UnwindEnd};
use crate::outcome::{BudgetKind, Outcome};
use crate::reference::cfi::fde_table;
use crate::reference::expr::unwound::{caller_register, frame_cfa, is_undefined};
use crate::rules::id;
use crate::target::{Arch, Endian};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Virtually unwinds through `section` from the machine state `ctx` (its
/// `pc`, registers and memory are the top frame's), making at most `limit`
/// steps (`None`: until the base of the stack, bounded by
/// `ctx.budgets.frames`, `unwind.frames-budget`).
///
/// Never fails: every fault is the [`UnwindEnd::Fault`] of the result
/// (`ctx.pc-missing`, `unwind.no-fde`, `unwind.table-fault`,
/// `unwind.cfa.*`, `unwind.cyclic`, `unwind.return-address-unreadable`,
/// budget `frames`).
pub fn unwind(section: &CfiSection, ctx: &Context, limit: Option<u32>) -> Unwind {
    walk(section, ctx, limit).unwind
}

/// An unwinding with what expression evaluation needs from it
/// (`unwind.context-from-cfi`).
pub(crate) struct Walk {
    /// The steps and the end.
    pub(crate) unwind: Unwind,
    /// Frame 0's CFA as (address space, byte address), if computed.
    pub(crate) cfa0: Option<(u64, u64)>,
    /// Frames 1, 2, ... that have a program location (their callee's step
    /// gave a caller pc), linked through `caller`.
    pub(crate) chain: Vec<Arc<CallerFrame>>,
}

/// Links frame descriptions (frame 1 first) so that each one's `caller`
/// is the next; returns them in the same order.
fn link(descs: &[CallerFrame]) -> Vec<Arc<CallerFrame>> {
    let mut out: Vec<Arc<CallerFrame>> = Vec::with_capacity(descs.len());
    let mut next: Option<Arc<CallerFrame>> = None;
    for d in descs.iter().rev() {
        let mut f = d.clone();
        f.caller = next.take();
        let a = Arc::new(f);
        next = Some(a.clone());
        out.push(a);
    }
    out.reverse();
    out
}

/// `unwind.no-fde` search: the first FDE in section order, of those whose
/// headers parse, with pc_begin <= lookup < pc_begin + pc_range.
fn find_fde(section: &CfiSection, lookup: u64) -> Option<(Fde, Cie)> {
    section.fde_offsets().filter_map(Result::ok).filter_map(|o| section.parse_fde(o).ok()).find(|(f, _)| {
        u128::from(f.pc_begin) <= u128::from(lookup)
            && u128::from(lookup) < u128::from(f.pc_begin) + u128::from(f.pc_range)
    })
}

/// A row table fault as an expression outcome (`unwind.table-fault`).
fn table_fault(o: CfiOutcome) -> Outcome {
    match o {
        CfiOutcome::IllFormed { rule, at } => Outcome::IllFormed { rule, at },
        CfiOutcome::EvalError { rule, at } => Outcome::EvalError { rule, at },
        CfiOutcome::Budget { budget, at } => Outcome::Budget { budget, at },
        CfiOutcome::Unsupported { what } | CfiOutcome::ConsumerFault { what } => Outcome::Unsupported { what },
        CfiOutcome::Table(_) => Outcome::Unsupported { what: "a row table is not a fault".into() },
    }
}

/// The value of register bytes as an unsigned integer in target byte
/// order (`unwind.return-address`); low 64 bits.
fn unsigned(bytes: &[u8], endian: Endian) -> u64 {
    let mut b = bytes.to_vec();
    if endian == Endian::Little {
        b.reverse();
    }
    b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x))
}

/// `unwind.aarch64.ra-sign-state`: the address with its PAC removed
/// (bits 63..48 copied from bit 55).
fn strip_pac(v: u64) -> u64 {
    if v & (1 << 55) != 0 {
        v | 0xffff_0000_0000_0000
    } else {
        v & 0x0000_ffff_ffff_ffff
    }
}

/// The registers a step reports (`unwind.step.registers`,
/// `unwind.sp-is-cfa`): row columns except AArch64 RA_SIGN_STATE, the
/// return address column, the ABI stack pointer.
fn reported(row: &Row, cie: &Cie, ctx: &Context) -> Vec<u64> {
    let mut r: Vec<u64> = row.registers.keys().copied().collect();
    r.push(cie.return_address_register);
    r.extend(ctx.target.stack_pointer());
    // RA_SIGN_STATE is architectural, not a register of the caller,
    // unless the CIE names it as the return address column (a fuzz
    // finding: that column is always reported).
    if ctx.target.arch == Arch::Aarch64 {
        r.retain(|&n| n != AARCH64_RA_SIGN_STATE || n == cie.return_address_register);
    }
    r.sort_unstable();
    r.dedup();
    r
}

/// The unwinding itself, also returning frame 0's CFA and the caller
/// chain. See [`unwind`].
pub(crate) fn walk(section: &CfiSection, ctx: &Context, limit: Option<u32>) -> Walk {
    let mut w = Walk { unwind: Unwind { steps: Vec::new(), end: UnwindEnd::Base }, cfa0: None, chain: Vec::new() };
    // Frame 0's context: the machine state only; CFA and caller come from
    // the steps below.
    let mut top = ctx.clone();
    top.cfa = None;
    top.cfa_aspace = 0;
    top.caller = None;
    top.cfi = None;
    top.initial_stack = Vec::new();
    top.object = None;
    // descs[i] describes frame i + 1: the rules of frame i's row, frame
    // i + 1's CFA once its step computed it, its pc.
    let mut descs: Vec<CallerFrame> = Vec::new();
    let mut pc = 0u64;
    let mut signal = false;
    let mut k: usize = 0;
    let end = loop {
        // Step 1: the case's limit first, then the frames budget.
        if limit.is_some_and(|l| l as usize == k) {
            break UnwindEnd::Limit;
        }
        if k == ctx.budgets.frames as usize {
            break UnwindEnd::Fault { outcome: Outcome::Budget { budget: BudgetKind::Frames, at: None } };
        }
        // Step 2 (unwind.lookup-address).
        let lookup = if k == 0 {
            match ctx.pc {
                Some(p) => {
                    pc = p;
                    p
                }
                None => break UnwindEnd::Fault { outcome: Outcome::EvalError { rule: id::CTX_PC_MISSING, at: None } },
            }
        } else if signal {
            pc
        } else {
            pc.wrapping_sub(1)
        };
        // Step 3 (unwind.no-fde).
        let Some((fde, cie)) = find_fde(section, lookup) else {
            break UnwindEnd::Fault { outcome: Outcome::EvalError { rule: id::UNWIND_NO_FDE, at: None } };
        };
        // Step 4 (unwind.table-fault); the row holding lookup.
        let table = match fde_table(section, fde.offset) {
            CfiOutcome::Table(t) => t,
            other => break UnwindEnd::Fault { outcome: table_fault(other) },
        };
        let Some(row) = table.rows.iter().find(|r| r.start <= lookup && lookup < r.end).cloned() else {
            break UnwindEnd::Fault { outcome: Outcome::EvalError { rule: id::UNWIND_NO_FDE, at: None } };
        };
        // Frame k + 1: the row's rules, plus val_offset(0) for the ABI
        // stack pointer without a column (unwind.sp-is-cfa). RA_SIGN_STATE
        // is architectural, not a register of the caller.
        let mut rules = row.registers.clone();
        if ctx.target.arch == Arch::Aarch64 {
            rules.remove(&AARCH64_RA_SIGN_STATE);
        }
        if let Some(sp) = ctx.target.stack_pointer() {
            rules.entry(sp).or_insert(RegisterRule::ValOffset { offset: 0 });
        }
        descs.truncate(k);
        descs.push(CallerFrame { rules, ..CallerFrame::default() });
        let chain = link(&descs);
        top.caller = chain.first().cloned();
        // Step 5: frame k's CFA (unwind.cfa.*), in frame k (frames 1..=k).
        let (aspace, address, cfa) = match frame_cfa(&top, &chain[..k], &row.cfa) {
            Ok(x) => x,
            Err(outcome) => break UnwindEnd::Fault { outcome },
        };
        if k == 0 {
            top.cfa = Some(address);
            top.cfa_aspace = aspace;
            w.cfa0 = Some((aspace, address));
        } else {
            descs[k - 1].cfa = Some(address);
            descs[k - 1].cfa_aspace = aspace;
        }
        let chain = link(&descs);
        top.caller = chain.first().cloned();
        // Step 6: the caller registers (unwind.step.registers).
        let mut registers = BTreeMap::new();
        for r in reported(&row, &cie, ctx) {
            registers.insert(r, caller_register(&top, &chain, r));
        }
        // Step 7: the caller pc (unwind.return-address, unwind.base-of-stack).
        let ra = registers.get(&cie.return_address_register).cloned();
        let mut step = Step { pc, lookup, fde_offset: fde.offset, cfa, registers, caller_pc: None };
        let ra = match ra {
            Some(ra) => ra,
            None => unreachable!("the return address column is always reported"),
        };
        if is_undefined(&ra.location) {
            w.unwind.steps.push(step);
            break UnwindEnd::Base;
        }
        let value = match (&ra.location, &ra.bytes) {
            (Outcome::Location(_), Some(b)) => unsigned(b, ctx.target.endian),
            (Outcome::Location(_), None) => {
                w.unwind.steps.push(step);
                break UnwindEnd::Fault {
                    outcome: Outcome::EvalError { rule: id::UNWIND_RETURN_ADDRESS_UNREADABLE, at: None },
                };
            }
            (fault, _) => {
                let outcome = fault.clone();
                w.unwind.steps.push(step);
                break UnwindEnd::Fault { outcome };
            }
        };
        let signed = ctx.target.arch == Arch::Aarch64
            && row.registers.get(&AARCH64_RA_SIGN_STATE) == Some(&RegisterRule::RaSigned { signed: true });
        let caller_pc = if signed { strip_pac(value) } else { value };
        // Step 8: frame k + 1 is the caller.
        step.caller_pc = Some(caller_pc);
        w.unwind.steps.push(step);
        descs[k].pc = Some(caller_pc);
        signal = cie.signal_frame;
        pc = caller_pc;
        k += 1;
    };
    w.unwind.end = end;
    // Frames with a program location: one per step that gave a caller pc.
    let with_pc = w.unwind.steps.iter().filter(|s| s.caller_pc.is_some()).count();
    descs.truncate(with_pc);
    w.chain = link(&descs);
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfi::spec::CfiSpec;
    use crate::context::{Budgets, MemorySegment};
    use crate::outcome::{SingleLocation, Source};
    use crate::target::presets;

    /// The section of `yaml` (a `cfi:` mapping) on x86-64 and a context on
    /// it with rsp = `rsp` and `memory` at `at`.
    fn setup(yaml: &str, pc: Option<u64>, rsp: u64, at: u64, memory: &[u8]) -> (Arc<CfiSection>, Context) {
        let t = Arc::new(presets::x86_64());
        let spec: CfiSpec = yaml_serde::from_str(yaml).unwrap();
        let (section, _) = spec.build_all(&t).unwrap();
        let mut ctx = Context::new(t);
        ctx.pc = pc;
        ctx.registers.insert(7, rsp.to_le_bytes().to_vec());
        ctx.memory.push(MemorySegment::shared(0, at, memory.to_vec()));
        (section, ctx)
    }

    /// CIE: CFA = rsp+8, rip at CFA-8. FDE [0x1000, 0x1010) and an
    /// outermost FDE [0x2000, 0x2010) with rip undefined.
    const TWO: &str = "cie: { version: 4, data_align: -8, ra: 16, instructions: 'DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8' }\n\
         fde: { pc_begin: 0x1000, pc_range: 0x10 }\n\
         fdes: [ { pc_begin: 0x2000, pc_range: 0x10, instructions: 'DW_CFA_undefined: reg16' } ]";

    fn memory_at(u: &Step) -> Option<u64> {
        match &u.cfa.places[..] {
            [SingleLocation::Simple(Source::Memory { bit_addr, .. })] => Some((*bit_addr / 8) as u64),
            _ => None,
        }
    }

    /// rsp 0x8000 -> CFA0 0x8008, rip = [0x8000] = 0x2005; frame 1 at
    /// 0x2005 (lookup 0x2004): CFA1 = frame 1's rsp (= CFA0) + 8 = 0x8010,
    /// rip undefined: two steps, base.
    #[test]
    fn two_frames_to_the_base() {
        let (s, ctx) = setup(TWO, Some(0x1000), 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        let u = unwind(&s, &ctx, None);
        assert_eq!(u.end, UnwindEnd::Base);
        assert_eq!(u.steps.len(), 2);
        assert_eq!(
            (u.steps[0].lookup, memory_at(&u.steps[0]), u.steps[0].caller_pc),
            (0x1000, Some(0x8008), Some(0x2005))
        );
        assert_eq!((u.steps[1].lookup, memory_at(&u.steps[1]), u.steps[1].caller_pc), (0x2004, Some(0x8010), None));
        // rsp of frame 2 is reported although no row has a column for it.
        assert_eq!(u.steps[1].registers[&7].bytes, Some(0x8010u64.to_le_bytes().to_vec()));
    }

    /// Step 1 of the algorithm: the case's limit comes before the frames
    /// budget and before the pc is looked at; the frames budget before the
    /// pc too.
    #[test]
    fn limit_then_budget_then_pc() {
        let (s, mut ctx) = setup(TWO, None, 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        ctx.budgets = Budgets { frames: 0, ..Budgets::default() };
        assert_eq!(unwind(&s, &ctx, Some(0)).end, UnwindEnd::Limit);
        let budget = Outcome::Budget { budget: BudgetKind::Frames, at: None };
        assert_eq!(unwind(&s, &ctx, None).end, UnwindEnd::Fault { outcome: budget });
        ctx.budgets = Budgets::default();
        let missing = Outcome::EvalError { rule: id::CTX_PC_MISSING, at: None };
        assert_eq!(unwind(&s, &ctx, None), Unwind::fault(missing));
    }

    /// The frames budget counts steps: with budget 1 the first step is made
    /// and gives a caller pc, so the second needs the budget.
    #[test]
    fn frames_budget_after_a_step() {
        let (s, mut ctx) = setup(TWO, Some(0x1000), 0x8000, 0x8000, &0x2005u64.to_le_bytes());
        ctx.budgets = Budgets { frames: 1, ..Budgets::default() };
        let u = unwind(&s, &ctx, None);
        assert_eq!(u.steps.len(), 1);
        assert_eq!(u.end, UnwindEnd::Fault { outcome: Outcome::Budget { budget: BudgetKind::Frames, at: None } });
    }

    /// A return address of 0 makes the next lookup wrap to 2^64 - 1, which
    /// no FDE covers (no overflow in the range test either).
    #[test]
    fn lookup_wraps() {
        let (s, ctx) = setup(TWO, Some(0x1000), 0x8000, 0x8000, &0u64.to_le_bytes());
        let u = unwind(&s, &ctx, None);
        assert_eq!(u.steps.len(), 1);
        assert_eq!(u.end, UnwindEnd::Fault { outcome: Outcome::EvalError { rule: id::UNWIND_NO_FDE, at: None } });
    }

    /// An x86-64 context under the hetero-2020 profile (0xe6 is
    /// DW_OP_LLVM_call_frame_entry_reg) with the section of `fde_insns`
    /// (CIE: CFA = rsp+8, rip = [CFA-8]; FDE [0x1000, 0x1010)), pc 0x1000,
    /// rsp 0x8000.
    fn hetero(fde_insns: &str) -> (Arc<CfiSection>, Context) {
        let yaml = format!(
            "cie: {{ version: 4, data_align: -8, ra: 16, instructions: 'DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8' }}\n\
             fde: {{ pc_begin: 0x1000, pc_range: 0x10, instructions: '{fde_insns}' }}"
        );
        let mut target = presets::x86_64();
        target.vendor = crate::encoding::VendorProfile::hetero_2020();
        let t = Arc::new(target);
        let spec: CfiSpec = yaml_serde::from_str(&yaml).unwrap();
        let (s, _) = spec.build_all(&t).unwrap();
        let mut ctx = Context::new(t);
        ctx.pc = Some(0x1000);
        ctx.registers.insert(7, 0x8000u64.to_le_bytes().to_vec());
        (s, ctx)
    }

    /// CFA = {e6 10}: frame 1's rip, whose rule offset(-8) needs the CFA
    /// being computed: unwind.cyclic with no at, no step.
    #[test]
    fn cyclic_cfa() {
        let (s, ctx) = hetero("DW_CFA_def_cfa_expression: {e6 10}");
        assert_eq!(unwind(&s, &ctx, None), Unwind::fault(Outcome::IllFormed { rule: id::UNWIND_CYCLIC, at: None }));
    }

    /// rbx = val_expression {e6 06} (frame 1's rbp) and rbp = expression
    /// {e6 03} (frame 1's rbx): each needs the other. In the step both are
    /// unwind.cyclic (no at) and rip still gives the caller; in an
    /// expression wired to the CFI, DW_OP_LLVM_call_frame_entry_reg rbx
    /// (at 0) gets unwind.cyclic at 0. rsp (same chain shape, but
    /// val_offset(0)) is not flagged.
    #[test]
    fn cyclic_registers() {
        let (s, mut ctx) = hetero("DW_CFA_val_expression: reg3 {e6 06}; DW_CFA_expression: reg6 {e6 03}");
        ctx.memory.push(MemorySegment::shared(0, 0x8000, 0x2000u64.to_le_bytes().to_vec()));
        let u = unwind(&s, &ctx, Some(1));
        let cyclic = Outcome::IllFormed { rule: id::UNWIND_CYCLIC, at: None };
        assert_eq!(u.steps[0].registers[&3].location, cyclic);
        assert_eq!(u.steps[0].registers[&6].location, cyclic);
        assert_eq!(u.steps[0].registers[&7].bytes, Some(0x8008u64.to_le_bytes().to_vec()));
        assert_eq!((u.steps[0].caller_pc, u.end), (Some(0x2000), UnwindEnd::Limit));
        ctx.cfi = Some(s);
        ctx.result_kind = Some(crate::context::ResultKind::Location);
        let e = crate::reference::expr::evaluate(&[0xe6, 0x03], &ctx);
        assert_eq!(e, Outcome::IllFormed { rule: id::UNWIND_CYCLIC, at: Some(0) });
    }

    /// unwind.aarch64.ra-sign-state: bits 63..48 follow bit 55.
    #[test]
    fn pac_stripping() {
        assert_eq!(strip_pac(0x002a_0000_0000_2010), 0x2010);
        assert_eq!(strip_pac(0x7f80_ffff_0000_2010), 0xffff_ffff_0000_2010);
        assert_eq!(strip_pac(0x0000_ffff_ffff_fff0), 0x0000_ffff_ffff_fff0);
    }

    /// Return address bytes are read in target byte order.
    #[test]
    fn return_address_byte_order() {
        assert_eq!(unsigned(&[0x10, 0x20, 0, 0, 0, 0, 0, 0], Endian::Little), 0x2010);
        assert_eq!(unsigned(&[0, 0, 0x20, 0x10], Endian::Big), 0x2010);
    }
}

#[cfg(test)]
mod robustness {
    use super::*;
    use crate::cfi::spec::CfiSpec;
    use crate::context::MemorySegment;
    use crate::target::presets;

    /// Random FDE instruction bytes (a small LCG; fixed seed) over sections
    /// of two FDEs whose frames return into each other through random
    /// memory: unwinding and wired expressions must end (budgets) and
    /// never panic, and a made step always has the return address column.
    #[test]
    fn random_tables_never_panic() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as u8
        };
        // Opcodes worth mixing: def_cfa*, offsets, registers, expressions
        // with DW_OP_breg7 / call_frame_entry_reg, undefined, same value.
        let pieces: &[&[u8]] = &[
            &[0x0c, 0x07, 0x08],
            &[0x0e, 0x10],
            &[0x86, 0x02],
            &[0x90, 0x01],
            &[0x14, 0x03, 0x01],
            &[0x09, 0x03, 0x06],
            &[0x07, 0x10],
            &[0x08, 0x06],
            &[0x0f, 0x02, 0x77, 0x10],
            &[0x10, 0x06, 0x02, 0xe6, 0x03],
            &[0x16, 0x03, 0x02, 0xe6, 0x06],
            &[0x0f, 0x02, 0xe6, 0x10],
            &[0x10, 0x10, 0x01, 0x1c],
            &[0x41],
        ];
        let mut target = presets::x86_64();
        target.vendor = crate::encoding::VendorProfile::hetero_2020();
        let t = Arc::new(target);
        for _ in 0..300 {
            let mut insns = || -> String {
                let mut b = Vec::new();
                for _ in 0..(next() % 5) {
                    b.extend_from_slice(pieces[usize::from(next()) % pieces.len()]);
                }
                b.iter().map(|x| format!("{x:02x}")).collect()
            };
            let (a, b) = (insns(), insns());
            let yaml = format!(
                "cie: {{ version: 4, data_align: -8, ra: 16, instructions: 'DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8' }}\n\
                 fde: {{ pc_begin: 0x1000, pc_range: 0x10, instructions_bytes: '{a}' }}\n\
                 fdes: [ {{ pc_begin: 0x1010, pc_range: 0x10, instructions_bytes: '{b}' }} ]"
            );
            let spec: CfiSpec = yaml_serde::from_str(&yaml).unwrap();
            let (s, _) = spec.build_all(&t).unwrap();
            let mut ctx = Context::new(t.clone());
            ctx.pc = Some(0x1000 + u64::from(next() % 0x20));
            ctx.registers.insert(7, 0x8000u64.to_le_bytes().to_vec());
            ctx.registers.insert(6, 0x8040u64.to_le_bytes().to_vec());
            // Return addresses inside the two FDEs, so the walk can go on.
            let mem: Vec<u8> = (0..0x100)
                .map(|i| {
                    if i % 8 == 0 {
                        0x10
                    } else if i % 8 == 1 {
                        next() % 2 + 0x10
                    } else {
                        0
                    }
                })
                .collect();
            ctx.memory.push(MemorySegment::shared(0, 0x7f80, mem));
            let u = unwind(&s, &ctx, None);
            assert!(u.steps.len() <= ctx.budgets.frames as usize);
            for st in &u.steps {
                assert!(st.registers.contains_key(&16));
            }
            ctx.cfi = Some(s);
            ctx.result_kind = Some(crate::context::ResultKind::Location);
            for e in [&[0x9c][..], &[0xe6, 0x03], &[0xa3, 0x02, 0x77, 0x00], &[0xa3, 0x03, 0xa3, 0x01, 0x56]] {
                let _ = crate::reference::expr::evaluate(e, &ctx);
            }
        }
    }
}
