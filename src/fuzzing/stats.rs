//! What a fuzz corpus reaches (`dwarfcheck fuzz-stats`): the share of
//! inputs whose reference outcome is a result rather than an error, and,
//! for each vendor profile (expressions) or machine (CFI), which
//! operations or call frame instructions the reference reached and which
//! of those the profile or machine decodes it never reached.

use super::targets::{Input, Target};
use crate::case::ExprCase;
use dwarfcheck_core::cfi::CfiSection;
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::encoding::leb128::read_uleb;
use dwarfcheck_core::encoding::op::{lookup, lookup_llvm_user, name_of, Decoded};
use dwarfcheck_core::encoding::{cfa, Op, VendorProfile};
use dwarfcheck_core::outcome::{CfiOutcome, Failure, Outcome};
use dwarfcheck_core::target::Arch;
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
    /// Coverage per vendor profile name (expressions) or machine name
    /// (CFI).
    pub groups: BTreeMap<String, Coverage>,
}

/// The operations (or instructions) of one vendor profile (or machine):
/// numbered families (`DW_OP_lit<n>`, `DW_OP_reg<n>`, `DW_OP_breg<n>`,
/// `DW_CFA_advance_loc` with its delta, ...) are one name each.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Expressions or FDEs evaluated under it.
    pub evaluated: usize,
    /// Every name it decodes.
    pub known: BTreeSet<String>,
    /// Each name the reference reached, with how many inputs reached it:
    /// executed, or stopped at (an error, a budget or an unsupported
    /// operation at that operation; not a decoding error).
    pub reached: BTreeMap<String, usize>,
}

impl Coverage {
    /// The known names no input reached.
    pub fn missing(&self) -> Vec<&str> {
        self.known.iter().filter(|k| !self.reached.contains_key(*k)).map(String::as_str).collect()
    }
}

/// An operation's name with numbered families collapsed.
fn op_name(op: Op) -> String {
    match op {
        Op::Lit(_) => "DW_OP_lit".into(),
        Op::Reg(_) => "DW_OP_reg".into(),
        Op::Breg(_) => "DW_OP_breg".into(),
        _ => name_of(op),
    }
}

/// The operation at the start of `bytes` under `profile`, if it decodes
/// (the `DW_OP_LLVM_user` form by its sub-opcode).
fn op_at(profile: &VendorProfile, bytes: &[u8]) -> Option<Op> {
    match lookup(profile, *bytes.first()?) {
        Decoded::Op(spec) => Some(spec.op),
        Decoded::LlvmUser => lookup_llvm_user(read_uleb(&bytes[1..]).ok()?.0).map(|s| s.op),
        Decoded::Unknown => None,
    }
}

/// Every operation name `profile` decodes.
pub fn profile_ops(profile: &VendorProfile) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for b in 0..=255u8 {
        match lookup(profile, b) {
            Decoded::Op(spec) => {
                out.insert(op_name(spec.op));
            }
            Decoded::LlvmUser => out.extend((0..128u64).filter_map(lookup_llvm_user).map(|s| op_name(s.op))),
            Decoded::Unknown => {}
        }
    }
    out
}

/// Every call frame instruction name decoded on `arch`.
pub fn arch_instructions(arch: Arch) -> BTreeSet<String> {
    (0..=255u8).filter_map(|b| cfa::lookup(arch, b)).map(|s| s.name.to_string()).collect()
}

/// The offsets (in the expression) of the operations the reference
/// reached evaluating `case`: those it executed (its trace), the one a
/// located failure names (not a decoding error, where nothing ran), and
/// for an unsupported operation, which carries no offset, the operation
/// after the last one executed unless that one was a branch.
fn reached_offsets(case: &ExprCase) -> (Outcome, Vec<u64>) {
    let (outcome, trace) = crate::consumer::builtin::with_reference_state(&case.ctx, |state| {
        dwarfcheck_reference::expr::evaluate_traced(&case.expr, state)
    });
    let mut at: Vec<u64> = trace.iter().map(|t| t.at).collect();
    let Outcome::Failed(f) = &outcome else { return (outcome, at) };
    match f {
        Failure::IllFormed { rule, .. } if rule.as_str().starts_with("expr.decode.") => {}
        Failure::IllFormed { at: Some(a), .. }
        | Failure::EvalError { at: Some(a), .. }
        | Failure::Budget { at: Some(a), .. } => at.push(*a),
        Failure::Unsupported { .. } => {
            let c = &case.ctx;
            let format = c.cu.as_ref().map(|u| u.format).unwrap_or_default();
            let ops = crate::asm::expr::disassemble_ops(&case.expr, &c.target, &c.vendor, format, c.address_bytes());
            let next = match trace.last() {
                None => ops.first(),
                Some(last) => match ops.iter().position(|o| o.offset as u64 == last.at) {
                    Some(i) if !matches!(ops[i].op, Some(Op::Bra | Op::Skip)) => ops.get(i + 1),
                    _ => None,
                },
            };
            at.extend(next.filter(|o| o.op.is_some()).map(|o| o.offset as u64));
        }
        _ => {}
    }
    (outcome, at)
}

/// Which profile or machine an input's operations belong to.
#[derive(Debug, Clone)]
pub enum Group {
    /// An expression's vendor profile.
    Profile(VendorProfile),
    /// A frame section's machine.
    Machine(Arc<dwarfcheck_core::target::Target>),
}

impl Group {
    /// The profile's or machine's name.
    pub fn name(&self) -> &str {
        match self {
            Group::Profile(p) => &p.name,
            Group::Machine(t) => &t.name,
        }
    }

    /// Every name it decodes.
    pub fn known(&self) -> BTreeSet<String> {
        match self {
            Group::Profile(p) => profile_ops(p),
            Group::Machine(t) => arch_instructions(t.arch),
        }
    }
}

/// What one input reaches.
#[derive(Debug, Clone)]
pub struct Reach {
    /// Its profile or machine.
    pub group: Group,
    /// The operation or instruction names the reference reached.
    pub names: BTreeSet<String>,
    /// Expressions or FDEs evaluated.
    pub evaluated: usize,
    /// Of those, how many gave a value, location or row table.
    pub results: usize,
}

/// What the reference reaches on `input` (`None` for case-file text and
/// for an expression case whose context does not build).
pub fn reach(input: &Input) -> Option<Reach> {
    match input {
        Input::Expr(fc) => {
            let case = fc.load().ok()?;
            let profile = case.ctx.vendor.clone();
            let (outcome, offsets) = reached_offsets(&case);
            let names = offsets
                .iter()
                .filter_map(|&a| case.expr.get(a as usize..).and_then(|b| op_at(&profile, b)))
                .map(op_name)
                .collect();
            let results = usize::from(matches!(outcome, Outcome::Value(_) | Outcome::Location(_)));
            Some(Reach { group: Group::Profile(profile), names, evaluated: 1, results })
        }
        Input::Cfi { kind, bytes, target } => {
            let sec = Arc::new(CfiSection::new(*kind, bytes.clone(), 0x4000, target.clone()));
            let (mut names, mut evaluated, mut results) = (BTreeSet::new(), 0, 0);
            for off in sec.fde_offsets().take(64) {
                let Ok(off) = off else { break };
                let (table, trace) = dwarfcheck_reference::cfi::frame_table_traced(&sec, off);
                for t in trace {
                    if let Some(spec) = sec.bytes.get(t.at as usize).and_then(|b| cfa::lookup(target.arch, *b)) {
                        names.insert(spec.name.to_string());
                    }
                }
                evaluated += 1;
                results += usize::from(matches!(table, CfiOutcome::Table(_)));
            }
            Some(Reach { group: Group::Machine(target.clone()), names, evaluated, results })
        }
        Input::Yaml(_) | Input::Visa(_) | Input::Tru64(_) => None,
    }
}

impl Stats {
    /// Adds one input of `target`.
    pub fn add(&mut self, target: Target, data: &[u8]) {
        self.inputs += 1;
        let Some(input) = target.decode(data) else { return };
        self.decoded += 1;
        let Some(r) = reach(&input) else { return };
        let g = self.groups.entry(r.group.name().to_string()).or_default();
        if g.known.is_empty() {
            g.known = r.group.known();
        }
        g.evaluated += r.evaluated;
        self.evaluated += r.evaluated;
        self.results += r.results;
        for n in r.names {
            *g.reached.entry(n).or_default() += 1;
        }
    }
}
