//! Virtual unwinding through generated x86-64 call chains: a stack built by
//! hand (return addresses and saved frame pointers written where each
//! frame's CFI says) is the oracle for the CFAs, caller pcs and the end at
//! the base of the stack; reference and fast must both meet it and agree
//! on everything else (rules `unwind.*`, `frame.rule.*`).

use dwarfcheck::case::{yaml::load_str, Case, CfiCase};
use dwarfcheck::runner::compare::same_evaluator_unwind;
use dwarfcheck_core::outcome::unwind::{Unwind, UnwindEnd};
use dwarfcheck_core::outcome::{NormalLocation, RawLocation, Source};
use dwarfcheck_fast as fast;
use dwarfcheck_reference as reference;
use proptest::prelude::*;

/// Where a frame stops inside its function, with the row that applies.
/// Every function has the same three rows (CIE: CFA=rsp+8, rip at CFA-8,
/// rbp same value):
/// - `Entry` [b, b+1): CFA = rsp + 8;
/// - `Pushed` [b+1, b+4): CFA = rsp + 16, rbp saved at CFA-16;
/// - `Framed` [b+4, b+0x100): CFA = rbp + 16, rbp saved at CFA-16.
#[derive(Debug, Clone, Copy)]
enum Spot {
    Entry,
    Pushed,
    Framed,
}

impl Spot {
    /// Offset of the program location in the function (the lookup address
    /// of the frame).
    fn offset(self) -> u64 {
        match self {
            Spot::Entry => 0,
            Spot::Pushed => 2,
            Spot::Framed => 0x50,
        }
    }
}

const STACK: u64 = 0x8000;
const STACK_LEN: usize = 0x2000;

/// Function `i` starts here.
fn base(i: usize) -> u64 {
    0x1000 * (i as u64 + 1)
}

/// A chain of `spots.len()` frames: frame 0 innermost, the last one the
/// outermost function (its FDE makes rip undefined). `locals[i]` is frame
/// i's stack space below its frame pointer in 8-byte slots (Framed frames). Returns the case YAML and the
/// expected (pc, CFA, caller pc) per step.
fn chain(spots: &[Spot], locals: &[u64]) -> (String, Vec<(u64, u64, Option<u64>)>) {
    let n = spots.len();
    // Pass 1, innermost first: each frame's stack pointer, its frame
    // pointer if it set one (rbp = rsp + 8 * locals), its CFA. The caller's
    // stack pointer is the CFA (unwind.sp-is-cfa).
    let mut rsp = STACK + 0x100;
    let mut frames = Vec::new(); // (pc, rsp, own rbp, cfa)
    for (i, spot) in spots.iter().enumerate() {
        let pc = base(i) + spot.offset() + u64::from(i > 0); // a return address: lookup = pc - 1
        let own_rbp = matches!(spot, Spot::Framed).then(|| rsp + 8 * locals[i]);
        let cfa = match spot {
            Spot::Entry => rsp + 8,
            Spot::Pushed => rsp + 16,
            Spot::Framed => own_rbp.unwrap_or_default() + 16,
        };
        frames.push((pc, rsp, own_rbp, cfa));
        rsp = cfa;
    }
    // Pass 2, outermost first: the rbp register of each frame is its own
    // frame pointer, else (not yet changed) its caller's.
    let mut rbp = vec![0x1111_2222u64; n + 1];
    for i in (0..n).rev() {
        rbp[i] = frames[i].2.unwrap_or(rbp[i + 1]);
    }
    // The stack: return addresses at CFA-8, the caller's rbp at CFA-16
    // where the function pushed it.
    let mut mem = vec![0u8; STACK_LEN];
    let mut put = |addr: u64, v: u64| {
        let at = (addr - STACK) as usize;
        mem[at..at + 8].copy_from_slice(&v.to_le_bytes());
    };
    let mut expect = Vec::new();
    for (i, &(pc, _, _, cfa)) in frames.iter().enumerate() {
        let caller_pc = (i + 1 < n).then(|| base(i + 1) + spots[i + 1].offset() + 1);
        put(cfa - 8, caller_pc.unwrap_or(0xdead));
        if !matches!(spots[i], Spot::Entry) {
            put(cfa - 16, rbp[i + 1]);
        }
        expect.push((pc, cfa, caller_pc));
    }
    let (rsp0, rbp0) = (frames[0].1, rbp[0]);
    let hex: String = mem.iter().map(|b| format!("{b:02x}")).collect();
    let mut fdes = String::new();
    for i in 1..n {
        let undef = if i + 1 == n { "DW_CFA_undefined: reg16; " } else { "" };
        fdes.push_str(&format!(
            "\n        - {{ pc_begin: {:#x}, pc_range: 0x100, instructions: \"{undef}{}\" }}",
            base(i),
            BODY
        ));
    }
    let undef0 = if n == 1 { "DW_CFA_undefined: reg16; " } else { "" };
    let yaml = format!(
        "target: x86_64
cases:
  - name: chain
    rules: [unwind.step]
    cfi:
      cie: {{ version: 4, data_align: -8, ra: 16, instructions: \"DW_CFA_def_cfa: reg7 +8; DW_CFA_offset: reg16 -8; DW_CFA_same_value: reg6\" }}
      fde: {{ pc_begin: {:#x}, pc_range: 0x100, instructions: \"{undef0}{BODY}\" }}
      fdes:{}
    unwind:
      context:
        pc: {:#x}
        registers: {{ rsp: {rsp0:#x}, rbp: {rbp0:#x} }}
        memory: [ {{ at: {STACK:#x}, bytes: \"{hex}\" }} ]
",
        base(0),
        if fdes.is_empty() { " []".to_string() } else { fdes },
        base(0) + spots[0].offset(),
    );
    (yaml, expect)
}

/// The three rows of every function (see [`Spot`]).
const BODY: &str = "DW_CFA_advance_loc: 1; DW_CFA_def_cfa_offset: +16; DW_CFA_offset: reg6 -16; \
                    DW_CFA_advance_loc: 3; DW_CFA_def_cfa_register: reg6";

fn load(yaml: &str) -> CfiCase {
    match load_str("chain.yaml", yaml).unwrap_or_else(|e| panic!("{e:?}\n{yaml}")).remove(0) {
        Case::Cfi(c) => c,
        Case::Expr(_) => unreachable!("a cfi case"),
    }
}

fn memory(addr: u64) -> NormalLocation {
    RawLocation::simple(Source::memory(0, u128::from(addr) * 8)).normalize()
}

/// The oracle: one step per frame with the CFA and caller pc we wrote, the
/// base of the stack at the end.
fn check(u: &Unwind, expect: &[(u64, u64, Option<u64>)]) -> Result<(), String> {
    if u.end != UnwindEnd::Base {
        return Err(format!("end {:?}, expected the base of the stack\n{u}", u.end));
    }
    if u.steps.len() != expect.len() {
        return Err(format!("{} steps, expected {}\n{u}", u.steps.len(), expect.len()));
    }
    for (i, (s, (pc, cfa, caller))) in u.steps.iter().zip(expect).enumerate() {
        if (s.pc, &s.cfa, s.caller_pc) != (*pc, &memory(*cfa), *caller) {
            return Err(format!("step {i}: expected pc {pc:#x} CFA {cfa:#x} caller {caller:x?}\n{u}"));
        }
    }
    Ok(())
}

/// Three frames by hand: Framed -> Pushed -> Entry (outermost).
#[test]
fn three_frames_reach_the_base() {
    let (yaml, expect) = chain(&[Spot::Framed, Spot::Pushed, Spot::Entry], &[2, 1, 0]);
    // Frame 0: rsp 0x8100, rbp = rsp + 2 * 8 = 0x8110, CFA = rbp + 16 = 0x8120.
    // Frame 1: rsp = CFA 0 = 0x8120, CFA = rsp + 16 = 0x8130.
    // Frame 2: rsp = 0x8130, CFA = rsp + 8 = 0x8138.
    // Caller pcs: function 1 at 0x2000, Pushed offset 2, plus 1 (a return
    // address, looked up at pc - 1): 0x2003; function 2 Entry: 0x3001.
    assert_eq!(expect, vec![(0x1050, 0x8120, Some(0x2003)), (0x2003, 0x8130, Some(0x3001)), (0x3001, 0x8138, None)]);
    let c = load(&yaml);
    let u = c.unwind.as_ref().expect("unwind");
    let r = reference::unwind::unwind(&c.section, &*u.ctx, None);
    check(&r, &expect).unwrap();
    let f = fast::unwind::unwind(&c.section, &*u.ctx, None);
    check(&f, &expect).unwrap();
    assert!(same_evaluator_unwind(Some(&r), Some(&f)), "reference\n{r}\nfast\n{f}");
}

fn spot() -> impl Strategy<Value = Spot> {
    prop_oneof![Just(Spot::Entry), Just(Spot::Pushed), Just(Spot::Framed)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Chains of 1 to 12 frames: both evaluators walk the stack we built to
    /// its base, and agree on every caller register.
    #[test]
    fn generated_chains(frames in prop::collection::vec((spot(), 0u64..4), 1..12)) {
        let spots: Vec<Spot> = frames.iter().map(|f| f.0).collect();
        let locals: Vec<u64> = frames.iter().map(|f| f.1 + 1).collect();
        let (yaml, expect) = chain(&spots, &locals);
        let c = load(&yaml);
        let u = c.unwind.as_ref().expect("unwind");
        let r = reference::unwind::unwind(&c.section, &*u.ctx, None);
        prop_assert!(check(&r, &expect).is_ok(), "{}", check(&r, &expect).unwrap_err());
        let f = fast::unwind::unwind(&c.section, &*u.ctx, None);
        prop_assert!(same_evaluator_unwind(Some(&r), Some(&f)), "reference\n{}\nfast\n{}", r, f);
        // A step limit below the chain's length ends with `limit`.
        if spots.len() > 1 {
            let r = reference::unwind::unwind(&c.section, &*u.ctx, Some(1));
            prop_assert_eq!(r.steps.len(), 1);
            prop_assert_eq!(&r.end, &UnwindEnd::Limit);
            let f = fast::unwind::unwind(&c.section, &*u.ctx, Some(1));
            prop_assert!(same_evaluator_unwind(Some(&r), Some(&f)));
        }
    }
}
