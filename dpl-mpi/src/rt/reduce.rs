//! Reductions and scans across ranks: one value per rank, combined in rank order.
//!
//! Each rank reduces (or scans) its block with dpl-cpu's helpers. The per-rank values are
//! then all-gathered and folded in rank order on every rank, so every rank computes the
//! same bits from the same operands in the same order, whatever the operator (MPI's own
//! reductions may combine in any order, which for floats changes the result).

use super::call::Call;
use super::wire::{Wire, bytes_of, values_of};
#[cfg(doc)]
use dpl_core::run::Error;
use dpl_cpu::rt::{At, with_init};
use rayon::prelude::*;

/// Every rank's optional value, in rank order: carried by the agreement's records (the
/// call's [`Plan::payload`](super::Plan::payload) makes room for it), one collective.
fn all_values<T: Wire>(c: &Call<'_>, what: &'static str, mine: Option<T>) -> Vec<Option<T>> {
    values_of::<Option<T>>(&c.agree_gather(what, &bytes_of(&[mine])))
}

/// `init op p_0 op p_1 ...` over the ranks' partial results `p_r` of a reduction (`None`
/// for an empty block), folded in rank order: the global value, the same bits on every
/// rank. Without `init` and with every block empty, raises [`Error::Empty`] for `prim` (on
/// every rank alike).
pub fn reduce<T: Wire, Op: Fn(T, T) -> T>(
    c: &Call<'_>,
    partial: Option<T>,
    init: Option<T>,
    op: Op,
    prim: &'static str,
    at: At,
) -> T {
    let total = if c.size() == 1 {
        partial
    } else {
        all_values(c, "reduce", partial)
            .into_iter()
            .flatten()
            .reduce(&op)
    };
    with_init(init, total, &op, prim, at)
}

/// The combination of the values of the ranks below this one (rank order), or `None`.
fn carry<T: Wire>(c: &Call<'_>, mine: Option<T>, op: &impl Fn(T, T) -> T) -> Option<T> {
    all_values(c, "scan", mine)
        .into_iter()
        .take(c.size().min(c.rank()))
        .flatten()
        .reduce(op)
}

/// The rank's block of the inclusive scan of the global sequence whose block is `f(0),
/// ..., f(len - 1)`: the local scan (dpl-cpu's), one all-gather of the block totals, and
/// `op(carry, y)` applied to every element, `carry` being the combination of the totals of
/// the ranks below (none on rank 0). `op` need only be associative; the local scan
/// follows dpl's order when `ordered` (a type holding floats). The result is that of
/// `prim` at `at`.
pub fn scan<T, F, Op>(
    c: &Call<'_>,
    len: usize,
    f: F,
    op: Op,
    ordered: bool,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Wire,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let mut out = dpl_cpu::rt::scan(len, &f, &op, ordered, prim, at);
    if c.size() == 1 {
        return out;
    }
    if let Some(k) = carry(c, out.last().copied(), &op) {
        out.par_chunks_mut(1 << 14)
            .for_each(|part| part.iter_mut().for_each(|v| *v = op(k, *v)));
    }
    out
}

/// The rank's block of the exclusive scan (`y[0] = init`) of the global sequence whose
/// block is `f(0), ..., f(len - 1)`. Rank 0 runs dpl-cpu's exclusive scan from `init`;
/// the others scan their block inclusively, and once the totals of the ranks below are
/// known (one all-gather) write `y[0] = carry`, `y[k] = op(carry, s[k - 1])`. The local
/// scans follow dpl's order when `ordered`. The result is that of `prim` at `at`.
#[allow(clippy::too_many_arguments)]
pub fn exclusive_scan<T, F, Op>(
    c: &Call<'_>,
    len: usize,
    init: T,
    f: F,
    op: Op,
    ordered: bool,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Wire,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    if c.size() == 1 {
        return dpl_cpu::rt::exclusive_scan(len, init, f, op, ordered, prim, at);
    }
    if c.rank() == 0 {
        let out = dpl_cpu::rt::exclusive_scan(len, init, &f, &op, ordered, prim, at);
        // Rank 0's total includes `init`, so every carry starts from it.
        let total = match out.last() {
            Some(&y) => op(y, f(len - 1)),
            None => init,
        };
        carry(c, Some(total), &op);
        return out;
    }
    let s = dpl_cpu::rt::scan(len, &f, &op, ordered, prim, at);
    let k = carry(c, s.last().copied(), &op).expect("rank 0 always contributes a total");
    let s = &s[..];
    dpl_cpu::rt::map(
        len,
        |j| {
            if j == 0 {
                k
            } else {
                // SAFETY: `1 <= j < len == s.len()`.
                op(k, unsafe { *s.get_unchecked(j - 1) })
            }
        },
        prim,
        at,
    )
}
