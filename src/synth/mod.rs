//! Synthesised debuggees: from an expression case, an ELF executable whose
//! DWARF describes one variable located by the case's expression, and an
//! ELF core file holding the case's registers and memory (issue 6;
//! docs/debuggers.md). Debuggers load the two and print the variable.
//!
//! The DWARF is written with gimli's writer ([`dwarf`]) and both ELF files
//! with the `object` crate's ELF writer ([`elf`]); nothing here encodes DWARF
//! or ELF structures by hand except the `NT_PRSTATUS`/`NT_FPREGSET` note
//! payloads, whose layout is the Linux kernel's ([`x86_64`], [`aarch64`]).
//! [`machine::Machine`] decides every per-architecture fact.
//!
//! Only what a real process image can hold is synthesised. A case whose
//! context needs more (calling frames, an initial stack, a current object,
//! TLS, per-thread or per-lane storage, other address spaces, registers a
//! core file has no slot for, synthetic machine state, ...)
//! is [`Unrepresentable`], and the debugger adapters report it as
//! unsupported rather than judge the debugger on a context it never saw.

pub mod aarch64;
pub mod cfi;
pub mod concrete;
pub mod dwarf;
pub mod elf;
pub mod lines;
pub mod loclist;
pub mod machine;
pub mod notes;
pub mod patch;
pub mod regnotes;
pub mod x86_64;

use crate::case::ExprCase;
use dwarfcheck_core::context::AttrForm;
use machine::Machine;

/// How the variable `v` of the synthesised program is typed and located.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarShape {
    /// An array of `byte_size` **bytes** (`unsigned char[byte_size]`), so
    /// that a debugger shows each byte and whether it is optimized out.
    /// With `stack_value`, `DW_OP_stack_value` is appended to the case's
    /// expression (to each expression of a location list) unless it already
    /// ends with an operation that makes a location ([`ends_in_location`]):
    /// for cases whose result is a value (DWARF 5 §2.6.1.1.4, the value
    /// becomes the contents of an implicit location).
    Bytes {
        /// Size of the variable in **bytes** (1 to [`MAX_VAR_BYTES`]).
        byte_size: u64,
        /// Whether to append `DW_OP_stack_value`.
        stack_value: bool,
    },
    /// A pointer to `unsigned char` (8 bytes): for results that are an
    /// implicit pointer, which debuggers show as a synthetic pointer.
    Pointer,
}

impl std::fmt::Display for VarShape {
    /// How `dwarfcheck synth` describes the variable: its C type, size in
    /// bytes, and what was appended to the expression.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VarShape::Bytes { byte_size, stack_value } => {
                write!(f, "unsigned char[{byte_size}] ({byte_size} byte(s))")?;
                if *stack_value {
                    write!(f, ", DW_OP_stack_value appended (the result is a value)")?;
                }
                Ok(())
            }
            VarShape::Pointer => write!(f, "unsigned char * (8 bytes), for an implicit pointer"),
        }
    }
}

/// Largest variable the synthesiser describes, in **bytes**.
pub const MAX_VAR_BYTES: u64 = 4096;

/// Rewrites one of the case's expressions for the synthesised unit (DIE
/// references re-pointed, [`patch`]).
pub type Rewrite<'a> = dyn Fn(&[u8]) -> Result<Vec<u8>, Unrepresentable> + 'a;

/// Why a case cannot be turned into an executable and a core file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrepresentable(pub String);

impl std::fmt::Display for Unrepresentable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not representable in an executable and core file: {}", self.0)
    }
}

/// The two files of one case.
#[derive(Debug, Clone)]
pub struct Debuggee {
    /// The ELF executable (`ET_EXEC`) with `.text` and the DWARF sections.
    pub executable: Vec<u8>,
    /// The ELF core file (`ET_CORE`): `PT_NOTE` with `NT_PRSTATUS` and
    /// `NT_FPREGSET`, and one `PT_LOAD` per memory segment.
    pub core: Vec<u8>,
    /// The program counter of the core's thread: inside the function that
    /// owns the variable.
    pub pc: u64,
}

/// The name of the variable in the synthesised program.
pub const VARIABLE: &str = "v";

/// The name of the function that owns the variable (its subprogram DIE
/// and its symbol).
pub const FUNCTION: &str = "dwarfcheck_case";

/// Length in **bytes** of the synthesised function's code.
pub const CODE_BYTES: u64 = 16;

/// The program counter used when the case gives none (a canonical x86-64
/// user address that no bundled case uses for data).
pub const DEFAULT_PC: u64 = 0x5555_0000_0000;

/// Builds the executable and core file for `case`, with the variable
/// shaped as `shape`.
///
/// Errors: [`Unrepresentable`] naming the first context element, operation
/// or attribute form the two files cannot carry.
pub fn synthesise(case: &ExprCase, shape: VarShape) -> Result<Debuggee, Unrepresentable> {
    let ctx = &case.ctx;
    let machine = Machine::for_target(ctx.target.arch, &ctx.target.name)?;
    check_context(case)?;
    let pc = program_counter(machine, ctx);
    if !pc.is_multiple_of(machine.instruction_alignment()) {
        return Err(Unrepresentable(format!("a pc {pc:#x} not aligned to an instruction")));
    }
    let sections = dwarf::write(case, machine, shape, pc)?;
    let executable = elf::executable(machine, &sections, pc)?;
    let core = elf::core(machine, ctx, pc)?;
    Ok(Debuggee { executable, core, pc })
}

/// The program counter of the synthesised core's thread on `machine`: the
/// case's pc, else its pc register's value, else [`DEFAULT_PC`].
pub fn program_counter(machine: Machine, ctx: &dwarfcheck_core::context::Context) -> u64 {
    ctx.pc.or_else(|| ctx.registers.get(&machine.pc_register()).map(|b| le_u64(b))).unwrap_or(DEFAULT_PC)
}

/// Refuses contexts a process image cannot hold.
fn check_context(case: &ExprCase) -> Result<(), Unrepresentable> {
    let ctx = &case.ctx;
    let no = |what: &str| Err(Unrepresentable(what.to_string()));
    if case.attribute.is_some_and(|a| a != dwarfcheck_core::context::Attribute::Location) {
        return no("an attribute other than DW_AT_location");
    }
    match (&case.form, &ctx.cu) {
        (None, _) | (Some(AttrForm::LocList { .. } | AttrForm::LocListX { .. }), Some(_)) => {}
        _ => return no("a constant form, or a location list without a unit"),
    }
    if ctx.caller.is_some() || ctx.cfi.is_some() {
        return no("calling frames");
    }
    if !ctx.initial_stack.is_empty() {
        return no("an initial stack");
    }
    if ctx.object.is_some() {
        return no("a current object (DW_OP_push_object_address)");
    }
    if ctx.tls_base.is_some() {
        return no("a TLS block");
    }
    check_state(ctx)?;
    if let Some(cu) = &ctx.cu {
        if cu.base_types.values().any(|t| t.vector_size != 1 || !t.bits.is_multiple_of(8)) {
            return no("a vector or bit-sized base type");
        }
    }
    Ok(())
}

/// Refuses machine states a core file cannot hold: synthetic machine
/// state, lanes, a CFA in another address space, memory in another
/// address space or per thread or lane, registers without a slot in the
/// core's notes ([`Machine::slot`]), a pc register other than the pc.
///
/// Errors: [`Unrepresentable`] naming the first such element (also for a
/// target the synthesiser does not write, [`Machine::for_target`]).
pub fn check_state(ctx: &dwarfcheck_core::context::Context) -> Result<(), Unrepresentable> {
    let no = |what: &str| Err(Unrepresentable(what.to_string()));
    let machine = Machine::for_target(ctx.target.arch, &ctx.target.name)?;
    if ctx.synthetic.is_some() {
        return no("synthetic machine state");
    }
    if ctx.lane.is_some() || ctx.cfa_aspace != 0 {
        return no("lanes or address spaces");
    }
    if let Some(seg) = ctx.memory.iter().find(|m| m.aspace != 0 || m.thread.is_some() || m.lane.is_some()) {
        return Err(Unrepresentable(format!("memory in address space {} or per thread/lane", seg.aspace)));
    }
    if let Some(r) = ctx.registers.keys().find(|r| machine.slot(**r).is_none()) {
        return Err(Unrepresentable(format!("register {r} (no slot in a {machine:?} core file's notes)")));
    }
    // A core's thread has one instruction pointer: the pc.
    if let (Some(pc), Some(rip)) = (ctx.pc, ctx.registers.get(&machine.pc_register())) {
        if rip.get(..8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))) != Some(pc) {
            return no("a pc register other than the pc (a core's thread has one instruction pointer)");
        }
    }
    Ok(())
}

/// Whether `expr`'s last operation makes a location (a register, an
/// implicit value, a stack value, an implicit pointer, a piece), so that no
/// `DW_OP_stack_value` may follow it.
pub fn ends_in_location(expr: &[u8], ctx: &dwarfcheck_core::context::Context) -> bool {
    use dwarfcheck_core::encoding::Op;
    let (ops, _) = crate::asm::decode::decode_all(expr, &crate::asm::decode::Params::for_context(ctx));
    matches!(
        ops.last().map(|d| d.op()),
        Some(
            Op::Reg(_)
                | Op::Regx
                | Op::StackValue
                | Op::ImplicitValue
                | Op::ImplicitPointer
                | Op::GnuImplicitPointer
                | Op::Piece
                | Op::BitPiece
        )
    )
}

/// A little-endian register value as `u64` (shorter values zero-extended).
pub(crate) fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    let n = b.len().min(8);
    a[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests;
