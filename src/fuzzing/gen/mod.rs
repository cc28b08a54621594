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
mod spirv;

pub use cfi::cfi_section;
pub use context::context;
#[cfg(test)]
pub(crate) use context::{EXEC_MASK_64, SGPR0, VGPR0};
pub use expr::expression;
pub use spirv::{spirv_case, spirv_fuzz_case};

use crate::case::ExprCase;
use crate::fuzzing::case::FuzzCase;
use arbitrary::{Result, Unstructured};
use dwarfcheck_core::context::Context;
use palette::Palette;
use std::cell::RefCell;
use std::sync::Arc;

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

/// Contexts built lately, by the bytes their generator read: libFuzzer
/// mostly mutates an input's tail, which leaves its context as it was.
struct Recent {
    entries: Vec<(Vec<u8>, Arc<Context>, Arc<Palette>)>,
}

/// How many contexts [`shared_case`] keeps.
const RECENT: usize = 16;

thread_local! {
    static RECENT_CONTEXTS: RefCell<Recent> = const { RefCell::new(Recent { entries: Vec::new() }) };
}

/// The evaluated half of [`fuzz_case`] on `data` (the same case), with
/// the context shared with a recent input whose context bytes were the
/// same instead of built again: what the `expr_ops` target evaluates.
///
/// Errors: as [`fuzz_case`].
pub fn shared_case(data: &[u8]) -> Result<ExprCase> {
    let mut u = Unstructured::new(data);
    let fc = context(&mut u)?;
    let key = &data[..data.len() - u.len()];
    let hit = RECENT_CONTEXTS.with(|r| {
        let mut r = r.borrow_mut();
        let i = r.entries.iter().position(|e| e.0 == key)?;
        let e = r.entries.remove(i);
        r.entries.insert(0, e.clone());
        Some((e.1, e.2))
    });
    let (ctx, palette) = match hit {
        Some(h) => h,
        None => {
            let ctx = Arc::new(fc.context().unwrap_or_else(|e| panic!("a generated context does not build: {e}")));
            let palette = Arc::new(Palette::of(&ctx));
            RECENT_CONTEXTS.with(|r| {
                let mut r = r.borrow_mut();
                r.entries.insert(0, (key.to_vec(), ctx.clone(), palette.clone()));
                r.entries.truncate(RECENT);
            });
            (ctx, palette)
        }
    };
    let expr = expr::expression_in(&mut u, &palette)?;
    Ok(ExprCase {
        name: "fuzz".into(),
        origin: "fuzz".into(),
        expr: expr.into(),
        attribute: None,
        form: None,
        spirv: None,
        ctx,
        rules: fc.rules,
        expect: None,
    })
}
