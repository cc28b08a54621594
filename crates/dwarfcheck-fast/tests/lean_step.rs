//! The lean step (`Unwinder::step_summary`) gives what the general step
//! (`Unwinder::step`) gives, and a step that stops at its row
//! (`Builder::build_fde_until`) finds the row the whole table has, at many
//! pcs of every FDE of libc's `.eh_frame` (skipped when absent), in
//! synthetic states and in states whose registers cannot be read.

mod common;

use dwarfcheck_core::context::Context;
use dwarfcheck_core::outcome::cfi::{CfaRule, CfiOutcome, RegisterRule, Row};
use dwarfcheck_fast::cfi::{frame_table, Builder, Cfa, RowSink, Rule};
use dwarfcheck_fast::unwind::{Frame, StepSummary, Unwinder};
use std::collections::BTreeMap;

/// The lean step of a fresh unwinder and of a warm one against the general
/// step, at every pc of `pcs`, in `state`.
fn lean_agrees(sec: &dwarfcheck_core::cfi::CfiSection, state: &Context, pcs: &[u64]) -> usize {
    let mut general = Unwinder::new(sec);
    let mut lean = Unwinder::new(sec);
    let mut native = 0;
    // Twice: the first pass builds whole tables, the second stops at rows.
    for pass in 0..2 {
        for &pc in pcs {
            let frame = Frame { pc, lookup: pc, callee: None };
            let want = general.step(state, &frame).map(|st| StepSummary::of(&st));
            let got = lean.step_summary(state, &frame);
            assert_eq!(got, want, "pass {pass}, pc {pc:#x}");
            native += usize::from(got.is_ok_and(|s| s.end.is_none()));
        }
    }
    native
}

#[test]
fn the_lean_step_gives_what_the_general_step_gives_on_libc() {
    let Some(sec) = common::eh_frame(common::LIBC) else {
        eprintln!("{} not found: skipped", common::LIBC);
        return;
    };
    let pcs = common::pcs(Unwinder::new(&sec).index());
    assert!(pcs.len() > 10_000, "{} pcs", pcs.len());
    let target = sec.target.clone();

    let mut synthetic = Context::new(target.clone());
    synthetic.synthetic = Some(0x5eed);
    let ok = lean_agrees(&sec, &synthetic, &pcs);
    assert!(ok > pcs.len(), "{ok} steps with a caller");

    // No registers, no memory: every step faults or falls back.
    let empty = Context::new(target.clone());
    lean_agrees(&sec, &empty, &pcs[..2000]);

    // rsp only, no memory: the CFA is found, the return address is not.
    let mut rsp_only = Context::new(target);
    rsp_only.registers.insert(7, 0x7ffc_0000u64.to_le_bytes().to_vec());
    lean_agrees(&sec, &rsp_only, &pcs[..2000]);
}

/// Keeps the row that holds one address, as outcome-form rules.
struct RowOf {
    at: u64,
    row: Option<Row>,
}

impl RowSink for RowOf {
    fn row(&mut self, start: u64, end: u64, cfa: &Cfa, regs: &[(u64, Rule)], section: &[u8]) {
        if start <= self.at && self.at < end {
            let expr = |s: u64, l: u64| section[s as usize..(s + l) as usize].to_vec();
            let cfa = match *cfa {
                Cfa::Reg { reg, off, aspace } => CfaRule::RegOffset { register: reg, offset: off, aspace },
                Cfa::Expr(s, l) => CfaRule::Expression { expr: expr(s, l) },
                Cfa::None => panic!("a row without CFA rule"),
            };
            let registers: BTreeMap<u64, RegisterRule> = regs
                .iter()
                .map(|&(r, rule)| {
                    let rule = match rule {
                        Rule::Undefined => RegisterRule::Undefined,
                        Rule::Same => RegisterRule::SameValue,
                        Rule::Offset(offset) => RegisterRule::Offset { offset },
                        Rule::ValOffset(offset) => RegisterRule::ValOffset { offset },
                        Rule::Register(register) => RegisterRule::Register { register },
                        Rule::Expr(s, l) => RegisterRule::Expression { expr: expr(s, l) },
                        Rule::ValExpr(s, l) => RegisterRule::ValExpression { expr: expr(s, l) },
                        Rule::RaSigned(signed) => RegisterRule::RaSigned { signed },
                    };
                    (r, rule)
                })
                .collect();
            self.row = Some(Row { start, end, cfa, registers });
        }
    }
}

#[test]
fn a_build_that_stops_at_the_row_finds_the_row_of_the_whole_table_on_libc() {
    let Some(sec) = common::eh_frame(common::LIBC) else {
        eprintln!("{} not found: skipped", common::LIBC);
        return;
    };
    let un = Unwinder::new(&sec);
    let mut b = Builder::new();
    let mut rows = 0;
    for f in &un.index().fdes {
        let CfiOutcome::Table(table) = frame_table(&sec, f.fde.offset) else { continue };
        let cie = &un.index().cies[f.cie as usize];
        for (k, row) in table.rows.iter().enumerate() {
            for at in [row.start, row.end - 1] {
                let mut sink = RowOf { at, row: None };
                let stopped = b.build_fde_until(&sec, &f.fde, cie, at, &mut sink);
                // (The table is normalised: equal neighbours merged; compare rules.)
                let got = sink.row.expect("a row");
                assert_eq!(
                    (&got.cfa, &got.registers),
                    (&row.cfa, &row.registers),
                    "FDE {:#x} at {at:#x}",
                    f.fde.offset
                );
                assert_eq!(stopped, Ok(k + 1 < table.rows.len() || got.end < f.fde.pc_begin + f.fde.pc_range));
                rows += 1;
            }
        }
    }
    assert!(rows > 20_000, "{rows} rows");
}
