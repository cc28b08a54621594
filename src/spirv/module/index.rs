//! What the reader looks up by <id>: each result's instruction, strings,
//! integer constants, the debug instructions of OpenCL.DebugInfo.100, and
//! what a debug type says about size and shape.

use super::debuginfo::{self, op, ExtInst};
use super::load::Position;
use foldhash::HashMap;
use foldhash::HashMapExt as _;
use rspirv::dr::{Instruction, Operand};
use rspirv::spirv::Op;

/// How deep the reader follows type references (typedefs, qualifiers,
/// element types, inlined variables) before giving up: bounds the work on
/// a hostile module with a cycle of types.
pub const MAX_TYPE_DEPTH: usize = 64;

/// The module's instructions indexed by result <id>.
pub struct Index<'m> {
    /// The instructions, in order.
    pub insts: &'m [(Position, Instruction)],
    /// Result <id> → index in `insts` (a duplicated <id>: the last one).
    by_id: HashMap<u32, usize>,
    /// The <id>s of `OpExtInstImport "OpenCL.DebugInfo.100"`.
    sets: Vec<u32>,
    /// Address size of the addressing model in bits, when it has one.
    pub address_bits: Option<u32>,
}

impl<'m> Index<'m> {
    /// Indexes `insts`.
    pub fn new(insts: &'m [(Position, Instruction)]) -> Self {
        let mut by_id = HashMap::with_capacity(insts.len());
        let mut sets = Vec::new();
        let mut address_bits = None;
        for (i, (_, inst)) in insts.iter().enumerate() {
            if let Some(id) = inst.result_id {
                by_id.insert(id, i);
            }
            match inst.class.opcode {
                Op::ExtInstImport => {
                    if let (Some(id), Some(Operand::LiteralString(s))) = (inst.result_id, inst.operands.first()) {
                        if s == debuginfo::SET_NAME {
                            sets.push(id);
                        }
                    }
                }
                Op::MemoryModel => {
                    address_bits = match inst.operands.first() {
                        Some(Operand::AddressingModel(rspirv::spirv::AddressingModel::Physical32)) => Some(32),
                        Some(Operand::AddressingModel(rspirv::spirv::AddressingModel::Physical64)) => Some(64),
                        _ => None,
                    };
                }
                _ => {}
            }
        }
        Index { insts, by_id, sets, address_bits }
    }

    /// Whether the module imports OpenCL.DebugInfo.100.
    pub fn has_debug_info(&self) -> bool {
        !self.sets.is_empty()
    }

    /// The instruction whose result is `id`.
    pub fn def(&self, id: u32) -> Option<&'m (Position, Instruction)> {
        self.by_id.get(&id).map(|&i| &self.insts[i])
    }

    /// `inst` as an instruction of OpenCL.DebugInfo.100.
    pub fn debug(&self, inst: &Instruction) -> Option<ExtInst> {
        debuginfo::ext_inst(inst).filter(|e| self.sets.contains(&e.set))
    }

    /// The debug instruction whose result is `id`.
    pub fn debug_def(&self, id: u32) -> Option<ExtInst> {
        self.def(id).and_then(|(_, i)| self.debug(i))
    }

    /// The text of the `OpString` `id`.
    pub fn string(&self, id: u32) -> Option<String> {
        match self.def(id) {
            Some((_, i)) if i.class.opcode == Op::String => match i.operands.first() {
                Some(Operand::LiteralString(s)) => Some(s.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The value of the integer `OpConstant` `id` (`OpConstantNull`: 0).
    pub fn constant(&self, id: u32) -> Option<u64> {
        let (_, i) = self.def(id)?;
        match i.class.opcode {
            Op::Constant => match i.operands.first()? {
                Operand::LiteralBit32(v) => Some(u64::from(*v)),
                Operand::LiteralBit64(v) => Some(*v),
                _ => None,
            },
            Op::ConstantNull => Some(0),
            _ => None,
        }
    }

    /// The storage class of the pointer `id`: an `OpVariable`'s, or that of
    /// the `OpTypePointer` that is `id`'s result type. `None` when `id` is
    /// no pointer (rule `spirv.module.declare-pointer`).
    pub fn pointer_storage_class(&self, id: u32) -> Option<rspirv::spirv::StorageClass> {
        let (_, inst) = self.def(id)?;
        let ty = inst.result_type?;
        let (_, t) = self.def(ty)?;
        if t.class.opcode != Op::TypePointer {
            return None;
        }
        match t.operands.first() {
            Some(Operand::StorageClass(s)) => Some(*s),
            _ => None,
        }
    }

    /// The debug type `id` with typedefs and qualifiers looked through.
    fn underlying(&self, mut id: u32) -> Option<ExtInst> {
        for _ in 0..MAX_TYPE_DEPTH {
            let e = self.debug_def(id)?;
            match e.number {
                op::TYPEDEF => id = *e.words.get(1)?,
                op::TYPE_QUALIFIER => id = *e.words.first()?,
                _ => return Some(e),
            }
        }
        None
    }

    /// Whether the debug type `id` is a composite: `DebugTypeComposite`,
    /// `DebugTypeArray` or `DebugTypeVector`, through typedefs and
    /// qualifiers.
    pub fn is_composite(&self, id: u32) -> bool {
        self.underlying(id).is_some_and(|e| matches!(e.number, op::TYPE_COMPOSITE | op::TYPE_ARRAY | op::TYPE_VECTOR))
    }

    /// Size in **bits** of the debug type `id`, when the module gives it:
    /// `DebugTypeBasic`, `DebugTypeComposite` and `DebugTypeEnum` by their
    /// Size constant, arrays and vectors as their element's size times
    /// their component counts, pointers as the addressing model's address
    /// size, through typedefs and qualifiers. `None` otherwise (a size of
    /// `DebugInfoNone`, an array of unknown count, a cycle).
    pub fn type_bits(&self, id: u32) -> Option<u64> {
        self.type_bits_at(id, 0)
    }

    fn type_bits_at(&self, id: u32, depth: usize) -> Option<u64> {
        if depth >= MAX_TYPE_DEPTH {
            return None;
        }
        let e = self.underlying(id)?;
        match e.number {
            op::TYPE_BASIC => self.constant(*e.words.get(1)?),
            op::TYPE_COMPOSITE => self.constant(*e.words.get(7)?),
            op::TYPE_ENUM => self.constant(*e.words.get(6)?),
            op::TYPE_POINTER => self.address_bits.map(u64::from),
            op::TYPE_VECTOR => {
                self.type_bits_at(*e.words.first()?, depth + 1)?.checked_mul(u64::from(*e.words.get(1)?))
            }
            op::TYPE_ARRAY => {
                let mut bits = self.type_bits_at(*e.words.first()?, depth + 1)?;
                for c in e.words.get(1..).unwrap_or_default() {
                    bits = bits.checked_mul(self.constant(*c)?)?;
                }
                Some(bits)
            }
            _ => None,
        }
    }
}
