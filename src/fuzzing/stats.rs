//! What a fuzz corpus reaches (`dwarfcheck fuzz-stats`): the share of
//! inputs whose reference outcome is a result rather than an error, and
//! which operations (`DW_OP_*`) or call frame instructions (`DW_CFA_*`)
//! the inputs contain, against every one the decoder knows.

use super::targets::{Input, Target};
use crate::asm::cfi::CfiAsmParams;
use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::{CfiOutcome, Outcome};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Statistics of one target's inputs.
#[derive(Debug, Default)]
pub struct Stats {
    /// Inputs read.
    pub inputs: usize,
    /// Inputs the target decodes (the rest it skips).
    pub decoded: usize,
    /// Expressions or FDEs evaluated.
    pub evaluated: usize,
    /// Of those, how many the reference turns into a value or location
    /// (expressions) or a row table (FDEs).
    pub results: usize,
    /// Each operation or instruction name seen (numbered families such as
    /// `DW_OP_lit<n>` counted as one), with how many inputs hold it.
    pub seen: BTreeMap<String, usize>,
    /// Every name the decoders know for the inputs' profiles and targets.
    pub known: BTreeSet<String>,
    /// The (target, profile) pairs whose names are in `known`.
    profiles: BTreeSet<String>,
}

/// The family name of an operation or instruction text: its first word
/// (after `DW_OP_LLVM_user`), trailing digits and colon removed.
fn family(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    let mut w = words.next()?;
    if w == "DW_OP_LLVM_user" {
        w = words.next().unwrap_or(w);
    }
    let w = w.split('(').next().unwrap_or(w);
    let w = w.trim_end_matches(':').trim_end_matches(|c: char| c.is_ascii_digit());
    w.starts_with("DW_").then(|| w.to_string())
}

impl Stats {
    /// Adds one input of `target`.
    pub fn add(&mut self, target: Target, data: &[u8]) {
        self.inputs += 1;
        let Some(input) = target.decode(data) else { return };
        self.decoded += 1;
        match input {
            Input::Expr(fc) => {
                let Ok(case) = fc.load() else { return };
                let c = &case.ctx;
                let format = c.cu.as_ref().map(|u| u.format).unwrap_or_default();
                let names = |bytes: &[u8]| -> BTreeSet<String> {
                    let mut out = BTreeSet::new();
                    let mut stack =
                        crate::asm::expr::disassemble_ops(bytes, &c.target, &c.vendor, format, c.address_bytes());
                    while let Some(o) = stack.pop() {
                        if o.op.is_some() {
                            out.extend(family(&o.text));
                        }
                        stack.extend(o.nested);
                    }
                    out
                };
                for n in names(&case.expr) {
                    *self.seen.entry(n).or_default() += 1;
                }
                if self.profiles.insert(format!("{} {}", fc.target, fc.vendor)) {
                    for b in 0..=255u8 {
                        self.known.extend(names(&[b, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
                        self.known.extend(names(&[0xe9, b, 0, 0, 0, 0, 0, 0, 0, 0]));
                    }
                }
                self.evaluated += 1;
                let (r, _) = crate::consumer::builtin::reference_outcome(&case);
                self.results += usize::from(matches!(r, Outcome::Value(_) | Outcome::Location(_)));
            }
            Input::Cfi { kind, bytes, target } => {
                let sec = Arc::new(CfiSection::new(kind, bytes, 0x4000, target.clone()));
                let mut names = BTreeSet::new();
                for off in sec.fde_offsets().take(64) {
                    let Ok(off) = off else { break };
                    let Ok((fde, cie)) = sec.parse_fde(off) else { continue };
                    let p = CfiAsmParams {
                        code_align: cie.code_align,
                        data_align: cie.data_align,
                        address_size: cie.address_size,
                        segment_selector_size: cie.segment_selector_size,
                        pointer_encoding: cie.fde_encoding,
                    };
                    for r in [cie.instructions.clone(), fde.instructions.clone()] {
                        let b = sec.bytes.get(r.start as usize..r.end as usize).unwrap_or(&[]);
                        for i in crate::asm::cfi::decode(b, &target, &p) {
                            names.extend(family(&i.text));
                        }
                    }
                    let case = crate::case::CfiCase {
                        name: "stats".into(),
                        origin: "stats".into(),
                        section: sec.clone(),
                        fde_offset: off,
                        rules: Vec::new(),
                        expect: None,
                        unwind: None,
                    };
                    self.evaluated += 1;
                    self.results +=
                        usize::from(matches!(crate::consumer::builtin::reference_table(&case), CfiOutcome::Table(_)));
                    if self.profiles.insert(target.name.clone()) {
                        for b in 0..=255u8 {
                            let first = crate::asm::cfi::decode(&[b, 0, 0, 0, 0, 0, 0, 0, 0, 0], &target, &p);
                            self.known.extend(first.first().and_then(|i| family(&i.text)));
                        }
                    }
                }
                for n in names {
                    *self.seen.entry(n).or_default() += 1;
                }
            }
            Input::Yaml(_) => {}
        }
    }

    /// The known names no input holds.
    pub fn missing(&self) -> Vec<&str> {
        self.known.iter().filter(|k| !self.seen.contains_key(*k)).map(String::as_str).collect()
    }
}
