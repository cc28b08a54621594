//! Reference construction of CFI row tables (DWARF 5 §6.4, hetero-2020 "Call Frame Information").
//!
//! Spec-literal and slow on purpose. The steps follow DWARF 5 §6.4.3
//! ("Call Frame Instruction Usage"):
//! 1. decode the CIE and FDE headers (shared input layer, `dwarfcheck_core::cfi`);
//! 2. decode every instruction of the CIE's initial instructions and then
//!    of the FDE's instructions into a list (decoding is static:
//!    `cfi.insn.static-decoding`);
//! 3. execute the initial instructions to get the initial rules
//!    (`cfi.table.cie-then-fde`), then the FDE's instructions from
//!    `initial_location`, closing a row at each row-creation instruction
//!    and at the end (`cfi.table.last-row-end`).
//!
//! Each instruction's action carries the section it comes
//! from (DWARF 5 §6.4.2.x, hetero-2020 "CFA Definition Instructions" /
//! "Register Rule Instructions", LSB/psABI extensions, AADWARF64).
//! Budgets: `dwarfcheck_core::cfi::{MAX_INSTRUCTIONS, MAX_REMEMBER_DEPTH,
//! MAX_REGISTER_RULES, MAX_TABLE_CELLS}`.
//!
//! The frame-section types this module takes ([`CfiSection`], [`Cie`],
//! [`Fde`], the header parser) are `dwarfcheck_core::cfi`'s, re-exported
//! here so that a user of this crate needs no other.

pub use dwarfcheck_core::cfi::*;

use dwarfcheck_core::encoding::cfa::{self, Cfa};
use dwarfcheck_core::encoding::leb128::{read_sleb, read_uleb, LebError};
use dwarfcheck_core::outcome::Failure;
use dwarfcheck_core::outcome::{BudgetKind, CfaRule, CfiOutcome, RegisterRule, Row, RowTable};
use dwarfcheck_core::rules::{id, RuleId};
use dwarfcheck_core::target::{Arch, Endian};
use std::collections::BTreeMap;

/// One decoded call frame instruction, operands as encoded (factored
/// values not yet multiplied).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Instruction {
    /// `DW_CFA_set_loc address` (already resolved through the pointer encoding).
    SetLoc { address: u64 },
    /// `DW_CFA_advance_loc`, `_loc1`, `_loc2`, `_loc4`: factored delta.
    AdvanceLoc { delta: u64 },
    /// `DW_CFA_def_cfa register offset` (non-factored, unsigned).
    DefCfa { register: u64, offset: u64 },
    /// `DW_CFA_def_cfa_sf register factored_offset`.
    DefCfaSf { register: u64, factored: i64 },
    /// `DW_CFA_def_cfa_register register`.
    DefCfaRegister { register: u64 },
    /// `DW_CFA_def_cfa_offset offset` (non-factored, unsigned).
    DefCfaOffset { offset: u64 },
    /// `DW_CFA_def_cfa_offset_sf factored_offset`.
    DefCfaOffsetSf { factored: i64 },
    /// `DW_CFA_def_cfa_expression block`.
    DefCfaExpression { expr: Vec<u8> },
    /// `DW_CFA_LLVM_def_aspace_cfa register offset aspace`.
    LlvmDefAspaceCfa { register: u64, offset: u64, aspace: u64 },
    /// `DW_CFA_LLVM_def_aspace_cfa_sf register factored_offset aspace`.
    LlvmDefAspaceCfaSf { register: u64, factored: i64, aspace: u64 },
    /// `DW_CFA_undefined register`.
    Undefined { register: u64 },
    /// `DW_CFA_same_value register`.
    SameValue { register: u64 },
    /// `DW_CFA_offset` / `DW_CFA_offset_extended`: unsigned factored offset.
    Offset { register: u64, factored: u64 },
    /// `DW_CFA_offset_extended_sf`.
    OffsetSf { register: u64, factored: i64 },
    /// `DW_CFA_GNU_negative_offset_extended`.
    NegativeOffset { register: u64, factored: u64 },
    /// `DW_CFA_val_offset`.
    ValOffset { register: u64, factored: u64 },
    /// `DW_CFA_val_offset_sf`.
    ValOffsetSf { register: u64, factored: i64 },
    /// `DW_CFA_register register from`.
    Register { register: u64, from: u64 },
    /// `DW_CFA_expression register block`.
    Expression { register: u64, expr: Vec<u8> },
    /// `DW_CFA_val_expression register block`.
    ValExpression { register: u64, expr: Vec<u8> },
    /// `DW_CFA_restore` / `DW_CFA_restore_extended`.
    Restore { register: u64 },
    /// `DW_CFA_remember_state`.
    RememberState,
    /// `DW_CFA_restore_state`.
    RestoreState,
    /// `DW_CFA_nop`.
    Nop,
    /// `DW_CFA_GNU_args_size size`.
    ArgsSize,
    /// `DW_CFA_GNU_window_save`.
    WindowSave,
    /// `DW_CFA_AARCH64_negate_ra_state`.
    NegateRaState,
}

/// An instruction with the section offset of its opcode.
struct Located {
    at: u64,
    /// Section offset just past the instruction.
    end: u64,
    insn: Instruction,
}

fn ill(rule: RuleId, at: u64) -> CfiOutcome {
    CfiOutcome::Failed(Failure::IllFormed { rule, at: Some(at) })
}

/// Reads the instruction bytes `[start, end)` of the section one by one.
struct ByteReader<'a> {
    bytes: &'a [u8],
    pos: u64,
    end: u64,
    big: bool,
}

impl ByteReader<'_> {
    /// One operand byte, or `cfi.insn.truncated`.
    fn byte(&mut self) -> Result<u8, RuleId> {
        if self.pos >= self.end {
            return Err(id::CFI_INSN_TRUNCATED);
        }
        let b = self.bytes[self.pos as usize];
        self.pos += 1;
        Ok(b)
    }

    /// An `n`-byte unsigned operand in the target's byte order.
    fn fixed(&mut self, n: usize) -> Result<u64, RuleId> {
        let mut bytes = Vec::with_capacity(n);
        for _ in 0..n {
            bytes.push(self.byte()?);
        }
        if !self.big {
            bytes.reverse();
        }
        Ok(bytes.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }

    fn rest(&self) -> &[u8] {
        &self.bytes[self.pos as usize..self.end as usize]
    }

    fn leb_rule(e: LebError) -> RuleId {
        match e {
            LebError::Truncated => id::CFI_INSN_TRUNCATED,
            LebError::Overflow => id::CFI_INSN_LEB128_OVERFLOW,
        }
    }

    /// An unsigned LEB128 operand (DWARF 5 §7.6).
    fn uleb(&mut self) -> Result<u64, RuleId> {
        let (v, n) = read_uleb(self.rest()).map_err(Self::leb_rule)?;
        self.pos += n as u64;
        Ok(v)
    }

    /// A signed LEB128 operand (DWARF 5 §7.6).
    fn sleb(&mut self) -> Result<i64, RuleId> {
        let (v, n) = read_sleb(self.rest()).map_err(Self::leb_rule)?;
        self.pos += n as u64;
        Ok(v)
    }

    /// A `DW_FORM_block`-like operand: ULEB128 length then the bytes.
    fn block(&mut self) -> Result<Vec<u8>, RuleId> {
        let len = self.uleb()?;
        let mut out = Vec::new();
        for _ in 0..len {
            out.push(self.byte()?);
        }
        Ok(out)
    }
}

/// Decodes all instructions in `range` (static decoding,
/// `cfi.insn.static-decoding`). `pc_begin` is the function start for a
/// funcrel `DW_CFA_set_loc`.
fn decode_all(
    sec: &CfiSection,
    cie: &Cie,
    pc_begin: u64,
    range: std::ops::Range<u64>,
) -> Result<Vec<Located>, CfiOutcome> {
    let mut r =
        ByteReader { bytes: &sec.bytes, pos: range.start, end: range.end, big: sec.target.endian == Endian::Big };
    let mut out = Vec::new();
    while r.pos < r.end {
        let at = r.pos;
        let opcode = r.byte().map_err(|rule| ill(rule, at))?;
        // DWARF 5 §7.24: the high two bits select advance_loc / offset /
        // restore with an operand in the low six bits; 0 selects the
        // extended opcodes of Table 7.29. Opcode 0x2d depends on the target.
        let Some(spec) = cfa::lookup(sec.target.arch, opcode) else {
            return Err(ill(id::CFI_INSN_UNKNOWN_OPCODE, at));
        };
        let low6 = u64::from(opcode & 0x3f);
        let insn = (|| -> Result<Instruction, CfiOutcome> {
            let e = |rule: RuleId| ill(rule, at);
            Ok(match spec.cfa {
                Cfa::AdvanceLoc => Instruction::AdvanceLoc { delta: low6 },
                Cfa::AdvanceLoc1 => Instruction::AdvanceLoc { delta: r.fixed(1).map_err(e)? },
                Cfa::AdvanceLoc2 => Instruction::AdvanceLoc { delta: r.fixed(2).map_err(e)? },
                Cfa::AdvanceLoc4 => Instruction::AdvanceLoc { delta: r.fixed(4).map_err(e)? },
                Cfa::SetLoc => {
                    let (address, next) = sec.read_set_loc(cie, pc_begin, r.pos, r.end).map_err(|err| {
                        let mut o = err.to_outcome();
                        if let CfiOutcome::Failed(Failure::IllFormed { at: a, .. })
                        | CfiOutcome::Failed(Failure::EvalError { at: a, .. }) = &mut o
                        {
                            *a = Some(at);
                        }
                        o
                    })?;
                    r.pos = next;
                    Instruction::SetLoc { address }
                }
                Cfa::Offset => Instruction::Offset { register: low6, factored: r.uleb().map_err(e)? },
                Cfa::Restore => Instruction::Restore { register: low6 },
                Cfa::Nop => Instruction::Nop,
                Cfa::OffsetExtended => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::Offset { register, factored: r.uleb().map_err(e)? }
                }
                Cfa::RestoreExtended => Instruction::Restore { register: r.uleb().map_err(e)? },
                Cfa::Undefined => Instruction::Undefined { register: r.uleb().map_err(e)? },
                Cfa::SameValue => Instruction::SameValue { register: r.uleb().map_err(e)? },
                Cfa::Register => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::Register { register, from: r.uleb().map_err(e)? }
                }
                Cfa::RememberState => Instruction::RememberState,
                Cfa::RestoreState => Instruction::RestoreState,
                Cfa::DefCfa => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::DefCfa { register, offset: r.uleb().map_err(e)? }
                }
                Cfa::DefCfaRegister => Instruction::DefCfaRegister { register: r.uleb().map_err(e)? },
                Cfa::DefCfaOffset => Instruction::DefCfaOffset { offset: r.uleb().map_err(e)? },
                Cfa::DefCfaExpression => Instruction::DefCfaExpression { expr: r.block().map_err(e)? },
                Cfa::Expression => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::Expression { register, expr: r.block().map_err(e)? }
                }
                Cfa::OffsetExtendedSf => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::OffsetSf { register, factored: r.sleb().map_err(e)? }
                }
                Cfa::DefCfaSf => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::DefCfaSf { register, factored: r.sleb().map_err(e)? }
                }
                Cfa::DefCfaOffsetSf => Instruction::DefCfaOffsetSf { factored: r.sleb().map_err(e)? },
                Cfa::ValOffset => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::ValOffset { register, factored: r.uleb().map_err(e)? }
                }
                Cfa::ValOffsetSf => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::ValOffsetSf { register, factored: r.sleb().map_err(e)? }
                }
                Cfa::ValExpression => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::ValExpression { register, expr: r.block().map_err(e)? }
                }
                Cfa::GnuWindowSave => Instruction::WindowSave,
                Cfa::Aarch64NegateRaState => Instruction::NegateRaState,
                Cfa::GnuArgsSize => {
                    r.uleb().map_err(e)?;
                    Instruction::ArgsSize
                }
                Cfa::GnuNegativeOffsetExtended => {
                    let register = r.uleb().map_err(e)?;
                    Instruction::NegativeOffset { register, factored: r.uleb().map_err(e)? }
                }
                Cfa::LlvmDefAspaceCfa => {
                    let register = r.uleb().map_err(e)?;
                    let offset = r.uleb().map_err(e)?;
                    Instruction::LlvmDefAspaceCfa { register, offset, aspace: r.uleb().map_err(e)? }
                }
                Cfa::LlvmDefAspaceCfaSf => {
                    let register = r.uleb().map_err(e)?;
                    let factored = r.sleb().map_err(e)?;
                    Instruction::LlvmDefAspaceCfaSf { register, factored, aspace: r.uleb().map_err(e)? }
                }
            })
        })()?;
        out.push(Located { at, end: r.pos, insn });
    }
    Ok(out)
}

/// The rules in force: the CFA column and the register columns (DWARF 5
/// §6.4.1). `cfa` is `None` until a CFA definition instruction runs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RuleSet {
    cfa: Option<CfaRule>,
    registers: BTreeMap<u64, RegisterRule>,
}

/// The abstract machine of DWARF 5 §6.4.3.
struct Machine<'a> {
    cie: &'a Cie,
    arch: Arch,
    target: &'a dwarfcheck_core::target::Target,
    /// Current register set.
    current: RuleSet,
    /// Register rules after the CIE's initial instructions (for restore).
    initial: BTreeMap<u64, RegisterRule>,
    /// The implicit stack of DW_CFA_remember_state.
    stack: Vec<RuleSet>,
    /// Whether the CIE's initial instructions are running.
    in_cie: bool,
    /// Current location (L2 in §6.4.3).
    location: u64,
    /// initial_location + address_range.
    end: u64,
    /// Rows produced so far.
    rows: Vec<Row>,
    /// Instructions executed (budget).
    executed: u64,
    /// Cells of the rows produced so far (budget).
    cells: u64,
}

impl Machine<'_> {
    /// factored offset × data_alignment_factor (§6.4.1 item 8), as a byte
    /// offset; too large → `cfi.insn.offset-overflow`.
    /// A data alignment factor of 0 is ill-formed where it is applied
    /// (`cfi.cie.data-alignment-zero`).
    fn data_factored(&self, factored: i128, at: u64) -> Result<i64, CfiOutcome> {
        if self.cie.data_align == 0 {
            return Err(ill(id::CFI_CIE_DATA_ALIGNMENT_ZERO, at));
        }
        let product = factored * i128::from(self.cie.data_align);
        i64::try_from(product).map_err(|_| ill(id::CFI_INSN_OFFSET_OVERFLOW, at))
    }

    /// A non-factored unsigned byte offset (§6.4.2.2 DW_CFA_def_cfa).
    fn unfactored(&self, offset: u64, at: u64) -> Result<i64, CfiOutcome> {
        i64::try_from(offset).map_err(|_| ill(id::CFI_INSN_OFFSET_OVERFLOW, at))
    }

    /// DWARF 5 §6.4.2 / hetero-2020 "Call Frame Instructions": the
    /// operations an expression operand of a call frame instruction must
    /// not use (rule `cfi.expression.forbidden-op`). Walks the expression
    /// operation by operation under the target's vendor profile; stops
    /// quietly at the first byte that does not decode (that is the
    /// expression evaluator's business).
    fn check_expression(&self, expr: &[u8], at: u64) -> Result<(), CfiOutcome> {
        use dwarfcheck_core::encoding::op::{lookup, lookup_llvm_user, Decoded, Op, Operand};
        let mut pos = 0usize;
        while pos < expr.len() {
            let opcode = expr[pos];
            pos += 1;
            let spec = match lookup(&self.target.vendor, opcode) {
                Decoded::Op(spec) => spec,
                Decoded::LlvmUser => {
                    let Ok((sub, n)) = read_uleb(&expr[pos..]) else { return Ok(()) };
                    pos += n;
                    match lookup_llvm_user(sub) {
                        Some(spec) => spec,
                        None => return Ok(()),
                    }
                }
                Decoded::Unknown => return Ok(()),
            };
            let forbidden = matches!(
                spec.op,
                // Depend on other debug sections.
                Op::Addrx
                    | Op::Call2
                    | Op::Call4
                    | Op::CallRef
                    | Op::ConstType
                    | Op::Constx
                    | Op::Convert
                    | Op::DerefType
                    | Op::RegvalType
                    | Op::Reinterpret
                    | Op::Fbreg
                    | Op::ImplicitPointer
                    | Op::XderefType
                    | Op::GnuConstType
                    | Op::GnuRegvalType
                    | Op::GnuDerefType
                    | Op::GnuConvert
                    | Op::GnuReinterpret
                    | Op::GnuAddrIndex
                    | Op::GnuConstIndex
                    | Op::GnuImplicitPointer
                    | Op::GnuParameterRef
                    | Op::GnuVariableValue
                    | Op::LlvmAspaceImplicitPointer
                    // No object to push.
                    | Op::PushObjectAddress
                    // Whole thread, not a lane.
                    | Op::LlvmPushLane
                    // Circular.
                    | Op::CallFrameCfa
                    | Op::EntryValue
                    | Op::GnuEntryValue
            );
            if forbidden {
                return Err(ill(id::CFI_EXPRESSION_FORBIDDEN_OP, at));
            }
            // Skip the operands to reach the next operation.
            for operand in spec.operands {
                let rest = expr.get(pos..).unwrap_or_default();
                let size = match operand {
                    Operand::U8 | Operand::I8 => Some(1),
                    Operand::U16 | Operand::I16 | Operand::Branch => Some(2),
                    Operand::U32 | Operand::I32 => Some(4),
                    Operand::U64 | Operand::I64 => Some(8),
                    Operand::Addr => Some(usize::from(self.cie.address_size)),
                    Operand::DieOffset => Some(self.cie.format.offset_bytes()),
                    Operand::Uleb => read_uleb(rest).ok().map(|(_, n)| n),
                    Operand::Sleb => read_sleb(rest).ok().map(|(_, n)| n),
                    Operand::Block => read_uleb(rest)
                        .ok()
                        .and_then(|(len, n)| usize::try_from(len).ok().and_then(|l| l.checked_add(n))),
                    Operand::Block1 => rest.first().map(|&len| 1 + usize::from(len)),
                };
                match size {
                    Some(n) if n <= rest.len() => pos += n,
                    _ => return Ok(()),
                }
            }
        }
        Ok(())
    }

    /// Sets the rule of one register column, within the register budget.
    fn set_rule(&mut self, register: u64, rule: RegisterRule, at: u64) -> Result<(), CfiOutcome> {
        if !self.current.registers.contains_key(&register) && self.current.registers.len() >= MAX_REGISTER_RULES {
            return Err(CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(at) }));
        }
        self.current.registers.insert(register, rule);
        Ok(())
    }

    /// The current CFA rule as register + offset + address space, or the
    /// `requires` rule when there is none or it is an expression.
    fn reg_offset_cfa(&self, requires: RuleId, at: u64) -> Result<(u64, i64, u64), CfiOutcome> {
        match &self.current.cfa {
            Some(CfaRule::RegOffset { register, offset, aspace }) => Ok((*register, *offset, *aspace)),
            _ => Err(ill(requires, at)),
        }
    }

    /// Closes the current row at `new_location` and starts a new one
    /// there; the new row starts with the same rules as the one it follows
    /// (§6.4.2.1).
    fn new_row(&mut self, new_location: u64, at: u64) -> Result<(), CfiOutcome> {
        if new_location > self.location {
            let Some(cfa) = self.current.cfa.clone() else {
                // Project decision: cfi.table.cfa-undefined.
                return Err(ill(id::CFI_TABLE_CFA_UNDEFINED, at));
            };
            // Budget: the table's size (dwarfcheck_core::cfi::MAX_TABLE_CELLS).
            self.cells += 1 + self.current.registers.len() as u64;
            if self.cells > MAX_TABLE_CELLS {
                return Err(CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Size, at: Some(at) }));
            }
            self.rows.push(Row {
                start: self.location,
                end: new_location,
                cfa,
                registers: self.current.registers.clone(),
            });
        }
        self.location = new_location;
        Ok(())
    }

    fn execute(&mut self, l: &Located) -> Result<(), CfiOutcome> {
        let at = l.at;
        // Budget: checked before each instruction (dwarfcheck_core::cfi docs).
        self.executed += 1;
        if self.executed > MAX_INSTRUCTIONS {
            return Err(CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Steps, at: Some(at) }));
        }
        match &l.insn {
            // §6.4.2.1 Row Creation Instructions.
            Instruction::SetLoc { address } => {
                if self.in_cie {
                    return Err(ill(id::CFI_CIE_ROW_CREATION_IN_INITIAL_INSTRUCTIONS, at));
                }
                // §6.4.2.1: the location set must exceed the current one.
                if *address <= self.location {
                    return Err(ill(id::CFI_SET_LOC_NOT_INCREASING, at));
                }
                // The FDE describes [initial_location, +address_range) (§6.4.3).
                if *address > self.end {
                    return Err(ill(id::CFI_ADVANCE_PAST_RANGE, at));
                }
                self.new_row(*address, at)
            }
            Instruction::AdvanceLoc { delta } => {
                if self.in_cie {
                    return Err(ill(id::CFI_CIE_ROW_CREATION_IN_INITIAL_INSTRUCTIONS, at));
                }
                // §6.4.1 item 7: a factor of 0 cannot have been factored
                // out of the delta (cfi.cie.code-alignment-zero).
                if self.cie.code_align == 0 {
                    return Err(ill(id::CFI_CIE_CODE_ALIGNMENT_ZERO, at));
                }
                // §6.4.2.1: new location = current + delta × code alignment factor.
                let new = u128::from(self.location) + u128::from(*delta) * u128::from(self.cie.code_align);
                if new > u128::from(self.end) {
                    return Err(ill(id::CFI_ADVANCE_PAST_RANGE, at));
                }
                self.new_row(new as u64, at)
            }
            // §6.4.2.2 CFA Definition Instructions (hetero-2020 wording:
            // AS is the target's default address space, 0).
            Instruction::DefCfa { register, offset } => {
                let offset = self.unfactored(*offset, at)?;
                self.current.cfa = Some(CfaRule::RegOffset { register: *register, offset, aspace: 0 });
                Ok(())
            }
            Instruction::DefCfaSf { register, factored } => {
                let offset = self.data_factored(i128::from(*factored), at)?;
                self.current.cfa = Some(CfaRule::RegOffset { register: *register, offset, aspace: 0 });
                Ok(())
            }
            Instruction::LlvmDefAspaceCfa { register, offset, aspace } => {
                // hetero-2020: an address space the target does not define
                // makes the instruction ill-formed.
                if self.target.address_space(*aspace).is_none() {
                    return Err(ill(id::CFI_LLVM_DEF_ASPACE_CFA_UNKNOWN_ASPACE, at));
                }
                let offset = self.unfactored(*offset, at)?;
                self.current.cfa = Some(CfaRule::RegOffset { register: *register, offset, aspace: *aspace });
                Ok(())
            }
            Instruction::LlvmDefAspaceCfaSf { register, factored, aspace } => {
                if self.target.address_space(*aspace).is_none() {
                    return Err(ill(id::CFI_LLVM_DEF_ASPACE_CFA_UNKNOWN_ASPACE, at));
                }
                let offset = self.data_factored(i128::from(*factored), at)?;
                self.current.cfa = Some(CfaRule::RegOffset { register: *register, offset, aspace: *aspace });
                Ok(())
            }
            Instruction::DefCfaRegister { register } => {
                // §6.4.2.2: new register, same offset (and address space);
                // only allowed when the CFA rule is register + offset.
                let (_, offset, aspace) = self.reg_offset_cfa(id::CFI_DEF_CFA_REGISTER_REQUIRES_REG_OFFSET, at)?;
                self.current.cfa = Some(CfaRule::RegOffset { register: *register, offset, aspace });
                Ok(())
            }
            Instruction::DefCfaOffset { offset } => {
                // §6.4.2.2: new offset, same register (and address space).
                let (register, _, aspace) = self.reg_offset_cfa(id::CFI_DEF_CFA_OFFSET_REQUIRES_REG_OFFSET, at)?;
                let offset = self.unfactored(*offset, at)?;
                self.current.cfa = Some(CfaRule::RegOffset { register, offset, aspace });
                Ok(())
            }
            Instruction::DefCfaOffsetSf { factored } => {
                let (register, _, aspace) = self.reg_offset_cfa(id::CFI_DEF_CFA_OFFSET_REQUIRES_REG_OFFSET, at)?;
                let offset = self.data_factored(i128::from(*factored), at)?;
                self.current.cfa = Some(CfaRule::RegOffset { register, offset, aspace });
                Ok(())
            }
            Instruction::DefCfaExpression { expr } => {
                // §6.4.2.2: from now on the expression computes the CFA.
                self.check_expression(expr, at)?;
                self.current.cfa = Some(CfaRule::Expression { expr: expr.clone() });
                Ok(())
            }
            // §6.4.2.3 Register Rule Instructions.
            Instruction::Undefined { register } => self.set_rule(*register, RegisterRule::Undefined, at),
            Instruction::SameValue { register } => self.set_rule(*register, RegisterRule::SameValue, at),
            Instruction::Offset { register, factored } => {
                // §6.4.2.3: offset(N), N = operand × data alignment factor.
                let offset = self.data_factored(i128::from(*factored), at)?;
                self.set_rule(*register, RegisterRule::Offset { offset }, at)
            }
            Instruction::OffsetSf { register, factored } => {
                let offset = self.data_factored(i128::from(*factored), at)?;
                self.set_rule(*register, RegisterRule::Offset { offset }, at)
            }
            Instruction::NegativeOffset { register, factored } => {
                // LSB: offset(-N), N = operand × data_alignment_factor.
                let offset = self.data_factored(-i128::from(*factored), at)?;
                self.set_rule(*register, RegisterRule::Offset { offset }, at)
            }
            Instruction::ValOffset { register, factored } => {
                let offset = self.data_factored(i128::from(*factored), at)?;
                self.set_rule(*register, RegisterRule::ValOffset { offset }, at)
            }
            Instruction::ValOffsetSf { register, factored } => {
                let offset = self.data_factored(i128::from(*factored), at)?;
                self.set_rule(*register, RegisterRule::ValOffset { offset }, at)
            }
            Instruction::Register { register, from } => {
                self.set_rule(*register, RegisterRule::Register { register: *from }, at)
            }
            Instruction::Expression { register, expr } => {
                self.check_expression(expr, at)?;
                self.set_rule(*register, RegisterRule::Expression { expr: expr.clone() }, at)
            }
            Instruction::ValExpression { register, expr } => {
                self.check_expression(expr, at)?;
                self.set_rule(*register, RegisterRule::ValExpression { expr: expr.clone() }, at)
            }
            Instruction::Restore { register } => {
                // §6.4.2.3: back to the rule the CIE's initial instructions
                // left for this register.
                if self.in_cie {
                    return Err(ill(id::CFI_CIE_RESTORE_IN_INITIAL_INSTRUCTIONS, at));
                }
                match self.initial.get(register).cloned() {
                    Some(rule) => self.set_rule(*register, rule, at),
                    None => {
                        // Not mentioned by the CIE: the default rule.
                        self.current.registers.remove(register);
                        Ok(())
                    }
                }
            }
            // §6.4.2.4 Row State Instructions.
            Instruction::RememberState => {
                // §6.4.2.4: save all register rules on the implicit stack
                // (the CFA rule too: cfi.remember-state.includes-cfa).
                if self.stack.len() >= MAX_REMEMBER_DEPTH {
                    return Err(CfiOutcome::Failed(Failure::Budget { budget: BudgetKind::Stack, at: Some(at) }));
                }
                self.stack.push(self.current.clone());
                Ok(())
            }
            Instruction::RestoreState => {
                // §6.4.2.4: the most recently saved rules become current.
                match self.stack.pop() {
                    Some(set) => {
                        self.current = set;
                        Ok(())
                    }
                    None => Err(ill(id::CFI_RESTORE_STATE_EMPTY_STACK, at)),
                }
            }
            // §6.4.2.5: padding; nothing to do.
            Instruction::Nop => Ok(()),
            // psABI: records the outgoing argument area size only.
            Instruction::ArgsSize => Ok(()),
            Instruction::WindowSave => {
                // Project decision cfi.gnu-window-save (SPARC window shift).
                for n in 8..16 {
                    self.set_rule(n, RegisterRule::Register { register: n + 16 }, at)?;
                }
                for n in 16..32 {
                    let offset = (n as i64 - 16) * i64::from(self.cie.address_size);
                    self.set_rule(n, RegisterRule::Offset { offset }, at)?;
                }
                Ok(())
            }
            Instruction::NegateRaState => {
                // AADWARF64: toggle RA_SIGN_STATE between not signed and
                // signed; the initial state is "not signed".
                debug_assert_eq!(self.arch, Arch::Aarch64);
                let now = match self.current.registers.get(&AARCH64_RA_SIGN_STATE) {
                    None | Some(RegisterRule::Undefined) | Some(RegisterRule::SameValue) => false,
                    Some(RegisterRule::RaSigned { signed }) => *signed,
                    Some(_) => return Err(ill(id::CFI_AARCH64_NEGATE_RA_STATE_OTHER_RULE, at)),
                };
                self.set_rule(AARCH64_RA_SIGN_STATE, RegisterRule::RaSigned { signed: !now }, at)
            }
        }
    }
}

/// Builds the row table of the FDE at section offset `fde_offset` of
/// `sec`, spec-literally.
///
/// Returns the normalised table, or: `IllFormed`/`EvalError` with the
/// rule and section offset (headers: `cfi.entry.*`, `cfi.cie.*`,
/// `cfi.augmentation.*`, `cfi.eh-pe.*`, `cfi.fde.*`; instructions:
/// `cfi.insn.*`, `cfi.set-loc.not-increasing`, `cfi.advance.past-range`,
/// `cfi.def-cfa-*.requires-reg-offset`, `cfi.restore-state.empty-stack`,
/// ...), or `Budget` (see `dwarfcheck_core::cfi` for the limits).
pub fn frame_table(sec: &CfiSection, fde_offset: u64) -> CfiOutcome {
    table_at(sec, fde_offset, None)
}

/// One executed instruction of [`frame_table_traced`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceStep {
    /// Section offset of the instruction's opcode.
    pub at: u64,
    /// Section offset one past the instruction's last byte (its bytes are
    /// `section[at..end]`, for a disassembler).
    pub end: u64,
    /// Current location after it.
    pub location: u64,
    /// The rules after it, llvm-dwarfdump style:
    /// `CFA=reg7+16: reg6=[CFA-16], reg16=[CFA-8]`.
    pub rules: String,
}

/// As [`frame_table`], also returning each executed instruction with the
/// rules after it (for disagreement reports). The last step is the
/// instruction that failed, if one did (its rules are those before it).
pub fn frame_table_traced(sec: &CfiSection, fde_offset: u64) -> (CfiOutcome, Vec<TraceStep>) {
    let mut trace = Vec::new();
    let o = table_at(sec, fde_offset, Some(&mut trace));
    (o, trace)
}

fn table_at(sec: &CfiSection, fde_offset: u64, trace: Option<&mut Vec<TraceStep>>) -> CfiOutcome {
    let (fde, cie) = match sec.parse_fde(fde_offset) {
        Ok(x) => x,
        Err(e) => return e.to_outcome(),
    };
    match build(sec, &fde, &cie, trace) {
        Ok(rows) => CfiOutcome::Table(RowTable { fde_offset, rows }.normalize()),
        Err(o) => o,
    }
}

/// Renders a rule set like llvm-dwarfdump's row lines (for traces).
fn render(set: &RuleSet) -> String {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ");
    let cfa = match &set.cfa {
        None => "unspecified".to_string(),
        Some(CfaRule::RegOffset { register, offset, aspace }) => {
            let a = if *aspace != 0 { format!(" in addrspace{aspace}") } else { String::new() };
            format!("reg{register}{offset:+}{a}")
        }
        Some(CfaRule::Expression { expr }) => format!("{{{}}}", hex(expr)),
    };
    let regs: Vec<String> = set
        .registers
        .iter()
        .map(|(r, rule)| {
            let t = match rule {
                RegisterRule::Undefined => "undefined".to_string(),
                RegisterRule::SameValue => "same".to_string(),
                RegisterRule::Offset { offset } => format!("[CFA{offset:+}]"),
                RegisterRule::ValOffset { offset } => format!("CFA{offset:+}"),
                RegisterRule::Register { register } => format!("reg{register}"),
                RegisterRule::Expression { expr } => format!("[{{{}}}]", hex(expr)),
                RegisterRule::ValExpression { expr } => format!("{{{}}}", hex(expr)),
                RegisterRule::RaSigned { signed } => (if *signed { "signed" } else { "not-signed" }).to_string(),
            };
            format!("reg{r}={t}")
        })
        .collect();
    format!("CFA={cfa}: {}", regs.join(", "))
}

fn build(
    sec: &CfiSection,
    fde: &Fde,
    cie: &Cie,
    mut trace: Option<&mut Vec<TraceStep>>,
) -> Result<Vec<Row>, CfiOutcome> {
    // Decoding is static (cfi.insn.static-decoding): CIE first, then FDE.
    let initial_instructions = decode_all(sec, cie, fde.pc_begin, cie.instructions.clone())?;
    let instructions = decode_all(sec, cie, fde.pc_begin, fde.instructions.clone())?;
    let mut m = Machine {
        cie,
        arch: sec.target.arch,
        target: &sec.target,
        // §6.4.1 item 10: before the initial instructions every column has
        // the default (undefined) rule, represented by absence.
        current: RuleSet { cfa: None, registers: BTreeMap::new() },
        initial: BTreeMap::new(),
        stack: Vec::new(),
        in_cie: true,
        location: fde.pc_begin,
        end: fde.pc_begin + fde.pc_range,
        rows: Vec::new(),
        executed: 0,
        cells: 0,
    };
    let mut step = |m: &mut Machine<'_>, l: &Located| -> Result<(), CfiOutcome> {
        let r = m.execute(l);
        if let Some(t) = trace.as_deref_mut() {
            t.push(TraceStep { at: l.at, end: l.end, location: m.location, rules: render(&m.current) });
        }
        r
    };
    // §6.4.3 step 1: the CIE's initial instructions set up the rules.
    for l in &initial_instructions {
        step(&mut m, l)?;
    }
    m.initial = m.current.registers.clone();
    m.in_cie = false;
    // Steps 2-3: from initial_location on, run the FDE's instructions.
    for l in &instructions {
        step(&mut m, l)?;
    }
    // Step 4: the end of the stream acts as DW_CFA_set_loc(initial_location
    // + address_range). An FDE with no instructions still has its row.
    let end = m.end;
    m.new_row(end, fde.instructions.end)?;
    Ok(m.rows)
}
