//! A decoded operation expression ([`Program`]), and the bounded per-thread
//! cache of the programs nested evaluations compile (called DIEs, implicit
//! pointer targets, location list entries, CFI expression rules).

use super::decode::{self, DecodeError, Encoding, Insn};
use dwarfcheck_core::context::MachineState;
use std::cell::RefCell;
use std::rc::Rc;

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
    /// as `IllFormed { expr.decode.*, at }` (docs/architecture.md §2, "Decoding is static").
    pub fn compile(expr: &[u8], state: &dyn MachineState) -> Program {
        let mut p = Program { insns: Vec::new(), bytes: Vec::new(), error: None };
        p.recompile(expr, state);
        p
    }

    /// Like [`Program::compile`], reusing this program's buffers.
    pub fn recompile(&mut self, expr: &[u8], state: &dyn MachineState) {
        self.recompile_with(expr, &Encoding::of(state));
    }

    /// Like [`Program::recompile`] with the encoding parameters given:
    /// what is the same for a whole unit ([`Encoding::of`] any state of
    /// it) need not be asked of the state at every evaluation.
    pub fn recompile_with(&mut self, expr: &[u8], enc: &Encoding<'_>) {
        self.error = if expr.len() > u32::MAX as usize - 1 {
            Some(DecodeError { rule: dwarfcheck_core::rules::id::EXPR_DECODE_TRUNCATED_OPERAND, at: 0 })
        } else {
            decode::decode(expr, enc, &mut self.insns).err()
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
}

/// Most distinct DIE expressions kept compiled per thread.
const CACHE_LEN: usize = 64;

/// Encoding parameters a compiled program depends on.
type EncKey = (bool, bool, bool, bool, u8, u8, bool);

/// One cached program: its encoding, its bytes, the program.
type Cached = (EncKey, Box<[u8]>, Rc<Program>);

fn enc_key(state: &dyn MachineState) -> EncKey {
    let v = state.vendor();
    (
        v.gnu,
        v.hetero_2020,
        v.llvm_user,
        v.aspace_bregx_signed,
        state.address_bytes(),
        state.unit().map_or(4, |u| u.format.offset_bytes()) as u8,
        state.target().endian == dwarfcheck_core::target::Endian::Big,
    )
}

thread_local! {
    /// Compiled DIE expressions (called expressions, implicit pointer
    /// targets, location list entries), most recently used last.
    static PROGRAMS: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

/// `expr` compiled for `state`, from the per-thread cache when it was
/// compiled before (bounded: at most [`CACHE_LEN`] programs are kept).
pub(super) fn compiled(expr: &[u8], state: &dyn MachineState) -> Rc<Program> {
    let key = enc_key(state);
    PROGRAMS.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(i) = c.iter().rposition(|(k, b, _)| *k == key && **b == *expr) {
            return c[i].2.clone();
        }
        let p = Rc::new(Program::compile(expr, state));
        if c.len() >= CACHE_LEN {
            c.remove(0);
        }
        c.push((key, expr.into(), p.clone()));
        p
    })
}
