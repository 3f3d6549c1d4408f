//! Outer loops over *heavy* elements: elements that contain loops themselves (a row of a
//! `Nested`, a per-element reduction over a captured sequence).
//!
//! [`rt`](crate::rt) decides between sequential and parallel execution by the number of
//! elements, which is right for flat loops but wrong when each element is itself a loop: a
//! map over 500 long rows would run on one thread. These helpers parallelize at element
//! granularity (rayon splits adaptively and steals work, so skewed rows balance) and stay
//! sequential only for a single element.

use dpl_core::run::{Error, Location};
use rayon::prelude::*;

use crate::rt::raise;

/// `[f(0), ..., f(len - 1)]`, one task per element where that pays.
pub fn map<T, F>(len: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    if len <= 1 {
        return (0..len).map(f).collect();
    }
    (0..len).into_par_iter().map(&f).collect()
}

/// `init op f(0) op f(1) ...` in unspecified order, one task per element where that pays.
pub fn reduce<T, F, Op>(
    len: usize,
    init: Option<T>,
    f: F,
    op: Op,
    prim: &'static str,
    at: Location,
) -> T
where
    T: Send,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let total = if len <= 1 {
        (0..len).map(&f).reduce(&op)
    } else {
        (0..len).into_par_iter().map(&f).reduce_with(&op)
    };
    match (init, total) {
        (Some(i), Some(t)) => op(i, t),
        (Some(i), None) => i,
        (None, Some(t)) => t,
        (None, None) => raise(Error::Empty { prim, at }),
    }
}

/// The `inner = "auto"` rule: run the nested level in parallel too when the outer level
/// alone cannot keep every thread busy — fewer than two rows per thread — or when one row
/// holds more than a thread's share of all the work (a skewed `Nested`: the outer level
/// would leave that row to a single thread). Otherwise the nested level runs sequentially
/// inside each row, which costs nothing per row.
///
/// `rows` is the outer length, `total` the number of inner elements, `longest` the length
/// of the longest row.
pub fn parallel_inner(rows: usize, total: usize, longest: usize) -> bool {
    let threads = rayon::current_num_threads().max(1);
    rows < 2 * threads || longest.saturating_mul(threads) > total
}
