//! Structured generators driven by `arbitrary::Unstructured`: mostly
//! well-formed DWARF expressions (stack-depth aware, forward branches to
//! operation starts, operands the context can answer), the contexts they
//! run in, and CFI programs, so that evaluation goes deep instead of
//! stopping at decoding. The same bytes drive the fuzz targets and the
//! property tests. Everything is built directly (bytes and core types),
//! with no text on the way.

mod cfi;
mod context;
mod encode;
mod expr;
mod palette;

pub use cfi::cfi_section;
pub use context::context;
#[cfg(test)]
pub(crate) use context::{EXEC_MASK_64, SGPR0, VGPR0};
pub use expr::expression;

use crate::case::ExprCase;
use crate::fuzzing::case::FuzzCase;
use arbitrary::{Result, Unstructured};

/// True one time in `n`, and never once the bytes run out (`arbitrary`'s
/// `ratio` then says true every time, which would make every exhausted
/// input sloppy).
pub(crate) fn rare(u: &mut Unstructured, n: u8) -> Result<bool> {
    Ok(!u.is_empty() && u.ratio(1u8, n)?)
}

/// Small integers, with now and then an extreme one.
fn int(u: &mut Unstructured) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => u.arbitrary()?,
        1 => -(u.int_in_range(1i64..=64)?),
        _ => u.int_in_range(0i64..=64)?,
    })
}

/// A generated context ([`context`]) and an expression for it
/// ([`expression`]): the input of the `expr_ops` target. Returns the case
/// (for minimising and writing) and its built form (to evaluate).
///
/// Errors: `arbitrary`'s, when the bytes run out early. A context that
/// does not build is a generator bug and panics (the fuzzer reports it).
pub fn fuzz_case(u: &mut Unstructured) -> Result<(FuzzCase, ExprCase)> {
    let mut fc = context(u)?;
    let mut case = fc.load().unwrap_or_else(|e| panic!("a generated context does not build: {e}"));
    fc.expr = expression(u, &case.ctx)?;
    case.expr = fc.expr.as_slice().into();
    Ok((fc, case))
}
