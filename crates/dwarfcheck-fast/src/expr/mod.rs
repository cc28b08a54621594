//! Fast evaluation of DWARF operation expressions: decode once, run many
//! times without allocating per operation.
//!
//! Usage: [`evaluate`] for one-off calls, or [`Program::compile`] once and
//! [`Program::run`] with a per-thread [`Scratch`]. Semantics follow
//! hetero-2020 "DWARF Expressions" (on top of DWARF 5 §2.5) and the project
//! decisions in `specs/rules/*.yaml`; this module is written apart from
//! `crate::reference` and must agree with it on every outcome.
//!
//! Design:
//! - [`decode`]: one pass over the bytes into 32-byte [`decode::Insn`]s
//!   with operands read and branch targets resolved to instruction indices
//!   (or markers for "end", "out of range", "inside an operation"); a
//!   per-vendor-profile 256-entry opcode table replaces the shared linear
//!   lookup. Decoding failures are kept and reported before anything runs.
//! - [`machine`]: stack entries are `Copy` — values of at most 128 bits
//!   inline, wider values, implicit storage, composite parts and multi-place
//!   locations by index into the arenas of a reusable [`Scratch`], so the
//!   common path allocates nothing until the outcome is built.
//! - `exec` (loop, stack, operations), `read` (`DW_OP_deref*` with a
//!   byte-aligned fast path), `place` (frame base, pieces), `arith` (values).
//! - `aspace` (memory in any address space, bound to the current thread and
//!   lane when created: `DW_OP_LLVM_form_aspace_address`,
//!   `DW_OP_LLVM_aspace_bregx`, the xderef address, `DW_OP_LLVM_push_lane`),
//!   `ext` (the other hetero-2020 location operations: offsets, undefined,
//!   `DW_OP_LLVM_piece_end`, `_extend`, `_select_bit_piece`), `weight`
//!   (their parts against the size budget), `export` (the normal form,
//!   window by window; composite nesting kept shallow by flattening).
//! - `calls` (`DW_OP_call*`, implicit pointers back to their DIE, a
//!   bounded per-thread cache of compiled DIE expressions), `frame`
//!   (calling frames through CFI register rules, `DW_OP_entry_value`,
//!   `DW_OP_LLVM_call_frame_entry_reg`; every register location names a
//!   top-frame register), `loclist` (its own `.debug_loclists`/`.debug_loc`
//!   reader and the union of matching entries), `attribute` (attribute
//!   contexts and value forms, [`evaluate_case`]).
//! - Checks inside one operation come in the order of
//!   `docs/ambiguities.md` item 45 (nested evaluations: items 57-58), so
//!   rule IDs match the reference.
//!
//! Out of scope (reported as `Outcome::Unsupported` when executed):
//! `DW_OP_GNU_parameter_ref`, `DW_OP_GNU_variable_value`, displacements and
//! arithmetic on values wider than 128 bits, vectors or floats other than
//! binary32/64.

mod arith;
mod attribute;
mod calls;
pub mod decode;
#[cfg(test)]
mod die_tests;
mod exec;
mod frame;
mod loclist;
pub mod machine;
mod place;
mod read;
#[cfg(test)]
mod tests;
pub(crate) mod unwind_frame;

// The hetero-2020 extension operations.
mod aspace;
mod export;
mod ext;
#[cfg(test)]
mod ext_tests;
mod weight;

pub use machine::Scratch;

use decode::{DecodeError, Encoding, Insn};
use dwarfcheck_core::context::MachineState;
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::Outcome;
use machine::Ent;

/// A decoded operation expression, ready to run against any context that
/// has the same encoding parameters (vendor profile, address size, offset
/// size, endianity) as the one it was compiled for.
#[derive(Debug, Clone)]
pub struct Program {
    /// Decoded operations.
    pub(crate) insns: Vec<Insn>,
    /// The expression bytes when an operation has a block operand (blocks
    /// are read from here), else empty.
    pub(crate) bytes: Vec<u8>,
    /// The static decoding error, if the bytes do not decode.
    pub(crate) error: Option<DecodeError>,
}

impl Program {
    /// Decodes `expr` under the encoding of `state` (vendor profile,
    /// `state.address_bytes()`, the unit's offset size, target endianity).
    /// Never fails: a decoding error is kept and reported by [`Program::run`]
    /// as `IllFormed { expr.decode.*, at }` (BRIEF "Decoding is static").
    pub fn compile(expr: &[u8], state: &dyn MachineState) -> Program {
        let mut p = Program { insns: Vec::new(), bytes: Vec::new(), error: None };
        p.recompile(expr, state);
        p
    }

    /// Like [`Program::compile`], reusing this program's buffers.
    pub fn recompile(&mut self, expr: &[u8], state: &dyn MachineState) {
        let enc = Encoding {
            vendor: state.vendor(),
            address_bytes: state.address_bytes(),
            offset_bytes: state.unit().map_or(4, |u| u.format.offset_bytes()) as u8,
            big_endian: state.target().endian == dwarfcheck_core::target::Endian::Big,
        };
        self.error = if expr.len() > u32::MAX as usize - 1 {
            Some(DecodeError { rule: dwarfcheck_core::rules::id::EXPR_DECODE_TRUNCATED_OPERAND, at: 0 })
        } else {
            decode::decode(expr, &enc, &mut self.insns).err()
        };
        // Only operations with a block read the bytes again.
        self.bytes.clear();
        if self
            .insns
            .iter()
            .any(|i| matches!(i.kind, decode::Kind::ImplicitValue | decode::Kind::ConstType | decode::Kind::EntryValue))
        {
            self.bytes.extend_from_slice(expr);
        }
    }

    /// Byte offset of the first `DW_OP_fbreg`, if the program has one
    /// (rule `attr.frame-base.fbreg`).
    pub fn fbreg_at(&self) -> Option<u64> {
        self.insns.iter().find(|i| i.kind == decode::Kind::Fbreg).map(|i| u64::from(i.off))
    }

    /// Number of decoded operations.
    pub fn len(&self) -> usize {
        self.insns.len()
    }

    /// Whether the program has no operations.
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// Evaluates the program in `state`, using `scratch` for all working
    /// memory. Returns the same [`Outcome`] as `reference::expr::evaluate`.
    pub fn run(&self, state: &dyn MachineState, scratch: &mut Scratch) -> Outcome {
        if let Some(e) = &self.error {
            return Outcome::Failed(Failure::IllFormed { rule: e.rule.clone(), at: Some(e.at) });
        }
        scratch.reset();
        for e in state.initial_stack() {
            let ent: Ent = scratch.import(e);
            scratch.stack.push(ent);
        }
        let ev = exec::Ev::new(state);
        match ev.exec(self, scratch) {
            Ok(()) => ev.finish(scratch),
            Err(stop) => stop.outcome(),
        }
    }
}

pub use attribute::evaluate_attribute;

/// Evaluates the operation expression `expr` in `state` (one-off form of
/// [`Program::compile`] + [`Program::run`]).
pub fn evaluate(expr: &[u8], state: &dyn MachineState) -> Outcome {
    thread_local! {
        static CACHE: std::cell::RefCell<(Program, Scratch)> =
            std::cell::RefCell::new((Program { insns: Vec::new(), bytes: Vec::new(), error: None }, Scratch::new()));
    }
    CACHE.with(|c| match c.try_borrow_mut() {
        Ok(mut guard) => {
            let (p, s) = &mut *guard;
            p.recompile(expr, state);
            p.run(state, s)
        }
        Err(_) => Program::compile(expr, state).run(state, &mut Scratch::new()),
    })
}
