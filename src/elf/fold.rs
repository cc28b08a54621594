//! Per-unit results folded in unit order: the [`Fold`] callers give to
//! [`super::extract_folded`], and the parallel, order-keeping map-reduce the
//! extractors run over a file's units.

use super::Extracted;
use rayon::prelude::*;

/// What becomes of the cases of each unit of extraction (a compilation
/// unit with the split unit of a skeleton, a package row, a run of FDEs of
/// one frame section), and how the results of consecutive units combine.
///
/// Units are extracted in parallel and their results merged in unit order
/// (in any grouping), so [`Fold::merge`] must be associative with
/// [`Fold::empty`] as its identity; a unit's cases can be dropped as soon
/// as [`Fold::unit`] returns.
pub trait Fold: Sync {
    /// The result of one unit, or of consecutive units merged.
    type Acc: Send;
    /// The result of no unit.
    fn empty(&self) -> Self::Acc;
    /// The result of one unit's extraction.
    fn unit(&self, x: Extracted) -> Self::Acc;
    /// The result of `a`'s units followed by `b`'s.
    fn merge(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

/// The fold that keeps everything: the file's [`Extracted`] as a whole.
#[derive(Debug, Clone, Copy, Default)]
pub struct Collect;

impl Fold for Collect {
    type Acc = Extracted;
    fn empty(&self) -> Extracted {
        Extracted::default()
    }
    fn unit(&self, x: Extracted) -> Extracted {
        x
    }
    fn merge(&self, mut a: Extracted, b: Extracted) -> Extracted {
        a.append(b);
        a
    }
}

/// Runs `job` on each of `items` in parallel, each into an empty
/// [`Extracted`] that `fold` then turns into a result, and merges the
/// results in item order.
pub(super) fn over<F: Fold, I: Send>(fold: &F, items: Vec<I>, job: impl Fn(I, &mut Extracted) + Sync) -> F::Acc {
    items
        .into_par_iter()
        .map(|item| {
            let mut x = Extracted::default();
            job(item, &mut x);
            fold.unit(x)
        })
        .reduce(|| fold.empty(), |a, b| fold.merge(a, b))
}

/// The result of a unit that holds only `warning` (no case, no count).
pub(super) fn warning<F: Fold>(fold: &F, warning: String) -> F::Acc {
    fold.unit(Extracted { warnings: vec![warning], ..Default::default() })
}
