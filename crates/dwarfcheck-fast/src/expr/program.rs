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
    /// The programs of this program's `DW_OP_entry_value` blocks, compiled
    /// with it (the operation's `c` is its block's index + 1; 0: compiled
    /// when run, as blocks of blocks are, so that compiling never recurses
    /// more than one level). Elements past the blocks in use are kept for
    /// their buffers.
    pub(crate) blocks: Vec<Program>,
}

impl Program {
    /// Decodes `expr` under the encoding of `state` (vendor profile,
    /// `state.address_bytes()`, the unit's offset size, target endianity).
    /// Never fails: a decoding error is kept and reported by [`Program::run`]
    /// as `IllFormed { expr.decode.*, at }` (docs/architecture.md §2, "Decoding is static").
    pub fn compile(expr: &[u8], state: &dyn MachineState) -> Program {
        let mut p = Program::new();
        p.recompile(expr, state);
        p
    }

    /// A program with no operations, to [`Program::recompile`] into.
    pub fn new() -> Program {
        Program { insns: Vec::new(), bytes: Vec::new(), error: None, blocks: Vec::new() }
    }

    /// Like [`Program::compile`], reusing this program's buffers.
    pub fn recompile(&mut self, expr: &[u8], state: &dyn MachineState) {
        self.recompile_with(expr, &Encoding::of(state));
    }

    /// Like [`Program::recompile`] with the encoding parameters given:
    /// what is the same for a whole unit ([`Encoding::of`] any state of
    /// it) need not be asked of the state at every evaluation.
    pub fn recompile_with(&mut self, expr: &[u8], enc: &Encoding) {
        self.decode(expr, enc);
        // The entry value blocks, one level down.
        let mut used = 0;
        for i in 0..self.insns.len() {
            let ins = self.insns[i];
            if ins.kind == decode::Kind::EntryValue && self.error.is_none() {
                if self.blocks.len() == used {
                    self.blocks.push(Program::new());
                }
                self.blocks[used].decode(&expr[ins.a as usize..(ins.a + ins.b) as usize], enc);
                used += 1;
                self.insns[i].c = used as u32;
            }
        }
    }

    /// Decodes `expr` into this program, its blocks left uncompiled.
    fn decode(&mut self, expr: &[u8], enc: &Encoding) {
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

impl Default for Program {
    fn default() -> Self {
        Program::new()
    }
}

/// Most distinct DIE expressions kept compiled per thread.
const CACHE_LEN: usize = 64;

/// One cached program: its encoding, its bytes, the program.
type Cached = (Encoding, Box<[u8]>, Rc<Program>);

thread_local! {
    /// Compiled DIE expressions (called expressions, implicit pointer
    /// targets, location list entries), most recently used last.
    static PROGRAMS: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

/// `expr` compiled for `state`, from the per-thread cache when it was
/// compiled before (bounded: at most [`CACHE_LEN`] programs are kept).
pub(super) fn compiled(expr: &[u8], state: &dyn MachineState) -> Rc<Program> {
    let key = Encoding::of(state);
    PROGRAMS.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(i) = c.iter().rposition(|(k, b, _)| *k == key && **b == *expr) {
            return c[i].2.clone();
        }
        let mut p = Program::new();
        p.recompile_with(expr, &key);
        let p = Rc::new(p);
        if c.len() >= CACHE_LEN {
            c.remove(0);
        }
        c.push((key, expr.into(), p.clone()));
        p
    })
}
