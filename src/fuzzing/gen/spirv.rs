//! Generated SPIR-V OpenCL.DebugInfo.100 expressions (mostly well-formed:
//! known codes with their operand counts, a Fragment last and inside the
//! variable) with a generated context and one initial entry: the input of
//! the SPIR-V oracles (`fuzzing::check_spirv_oracles`).

use super::{context, int, rare};
use crate::case::ExprCase;
use crate::fuzzing::case::{Entry as CaseEntry, FuzzCase, SpirvPart};
use arbitrary::{Result, Unstructured};
use dwarfcheck_core::encoding::spirv::{code, operand_count, Applies, DebugOperation, SpirvExpression};

/// At most this many operations: enough for the producers' shapes (six)
/// and a few stack games around them.
const MAX_OPERATIONS: usize = 10;

/// A case with a generated context ([`context`]: x86-64 or AMDGPU, its
/// registers, memory and address spaces), its initial stack replaced by
/// one generic value (an address the memory may hold, or a small number),
/// vendor profile hetero-2020 (what the lowering is written in), and a
/// generated [`SpirvExpression`] in [`ExprCase::spirv`]; `expr` is its
/// lowering (`crate::spirv::lower`), empty when there is none. The
/// [`spirv_fuzz_case`] of the same bytes, loaded.
///
/// Errors: `arbitrary`'s, when the bytes run out early. A context that
/// does not build is a generator bug and panics.
pub fn spirv_case(u: &mut Unstructured) -> Result<ExprCase> {
    let fc = spirv_fuzz_case(u)?;
    let mut case = fc.load().unwrap_or_else(|e| panic!("a generated context does not build: {e}"));
    case.name = "spirv".into();
    Ok(case)
}

/// The case of [`spirv_case`] as a [`FuzzCase`] with a [`SpirvPart`]
/// (what `dwarfcheck minimize` shrinks and writes as a `spirv:` case): the
/// generated context's entries without a required result kind (a SPIR-V
/// case's result is a location), vendor hetero-2020.
///
/// Errors: as [`spirv_case`].
pub fn spirv_fuzz_case(u: &mut Unstructured) -> Result<FuzzCase> {
    let mut fc = context(u)?;
    fc.vendor = "hetero-2020".into();
    fc.entries.retain(|e| !matches!(e, CaseEntry::Result(_)));
    let entry = if u.ratio(3u8, 4)? { address(u)? } else { int(u)? as u64 };
    let expression = expression(u)?;
    fc.expr.clear();
    fc.spirv = Some(SpirvPart { expression, entry });
    Ok(fc)
}

/// An address near the rich context's memory (0x1000..0x3000, some
/// unmapped), or anywhere now and then.
fn address(u: &mut Unstructured) -> Result<u64> {
    Ok(match u.int_in_range(0u8..=7)? {
        0 => u.arbitrary()?,
        _ => 0x1000 + 8 * u.int_in_range(0u64..=0x400)?,
    })
}

/// A generated expression: `DebugDeclare` or `DebugValue`, up to
/// [`MAX_OPERATIONS`] operations, a variable of 8 to 256 bits (rarely
/// unknown).
pub fn expression(u: &mut Unstructured) -> Result<SpirvExpression> {
    let applies = if u.arbitrary()? { Applies::Declare } else { Applies::Value };
    let variable_bits = if rare(u, 12)? { None } else { Some(8 * u64::from(u.int_in_range(1u8..=32)?)) };
    let n = u.int_in_range(0..=MAX_OPERATIONS)?;
    let mut operations = Vec::with_capacity(n);
    for i in 0..n {
        let last = i + 1 == n;
        operations.push(operation(u, last, variable_bits)?);
    }
    Ok(SpirvExpression { applies, operations, variable_bits })
}

/// One operation: a known code with its operand count, mostly; a Fragment
/// mostly only last and inside the variable.
fn operation(u: &mut Unstructured, last: bool, variable_bits: Option<u64>) -> Result<DebugOperation> {
    let c = if rare(u, 24)? {
        u.int_in_range(10u32..=40)?
    } else {
        let mut c = u.int_in_range(0u32..=9)?;
        if c == code::FRAGMENT && !last && !rare(u, 8)? {
            c = code::STACK_VALUE;
        }
        c
    };
    let mut count = operand_count(c).unwrap_or(0);
    if rare(u, 24)? {
        count = if count > 0 && u.arbitrary()? { count - 1 } else { count + 1 };
    }
    let mut operands = Vec::with_capacity(count);
    for _ in 0..count {
        operands.push(literal(u)?);
    }
    if c == code::FRAGMENT && operands.len() == 2 && !rare(u, 8)? {
        // Inside the variable, on byte boundaries mostly.
        let bits = variable_bits.unwrap_or(64).min(u64::from(u32::MAX)) as u32;
        let size = u.int_in_range(1..=bits)?;
        operands = vec![u.int_in_range(0..=bits - size)?, size];
    }
    Ok(DebugOperation { code: c, operands })
}

/// A literal word: small mostly (offsets, sizes, address spaces), now and
/// then any.
fn literal(u: &mut Unstructured) -> Result<u32> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => u.arbitrary()?,
        1 => 8 * u.int_in_range(0u32..=16)?,
        _ => u.int_in_range(0u32..=16)?,
    })
}
