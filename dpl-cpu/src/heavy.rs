//! Outer loops over *heavy* elements: elements that contain loops themselves (a row of a
//! `Nested`, a per-element reduction over a captured sequence).
//!
//! [`rt`](crate::rt) decides between sequential and parallel execution by the number of
//! elements, which is right for flat loops but wrong when each element is itself a loop: a
//! map over 500 long rows would run on one thread. These helpers parallelize at element
//! granularity: contiguous chunks of elements, many per thread (rayon steals work, so
//! skewed rows balance), and stay sequential only when the elements hold too little work
//! in all ([`WORK_GRAIN`] inner elements; the code generator passes the total length of the
//! `Nested`/`Matrix` whose rows the loop walks, when there is one).

use dpl_core::run::Error;
use rayon::prelude::*;

use crate::rt::{At, fill, raise};

/// Below this many inner elements in all (the `work` of [`map`] and [`reduce`]), a loop
/// over heavy elements runs on the calling thread.
///
/// A rayon call made from outside the pool costs 7-15 us on the 2-core machine this was
/// tuned on (see [`GRAIN`](crate::rt::GRAIN)); an inner element of a nested loop costs
/// 0.5-1 ns (a sequential CSR SpMV: 0.66 ns per entry on the 21K-entry `ani4` matrix,
/// against ~0.1 ns for an element of a flat streaming loop). Two threads win only when
/// the work is a few times the call's cost: measured, the hand-written rayon SpMV lost to
/// the sequential loop on matrices of 21K and 35K entries. Hence 2^16.
pub const WORK_GRAIN: usize = 1 << 16;

/// Chunks per rayon thread: the smallest units of work. rayon splits the chunks adaptively
/// (into one range per thread first, further only when a thread runs out of work and
/// steals), so many small chunks cost little when rows are even and let skewed rows
/// balance: a few very long rows among many short ones can take most of the work, and a
/// fixed split into a few ranges per thread would leave it to one thread (measured: the
/// skewed transaction log of `benches/svm.rs`, where the first 3% of the rows hold 68% of
/// the elements).
const CHUNKS_PER_THREAD: usize = 256;

/// Inner elements per chunk at least (when the work is known): smaller chunks only add
/// bookkeeping.
const MIN_CHUNK_WORK: usize = 1 << 12;

/// The number of elements per chunk for `len` heavy elements holding `work` inner
/// elements (`usize::MAX` if unknown).
#[inline]
fn chunk_len(len: usize, work: usize) -> usize {
    let by_threads = len.div_ceil(rayon::current_num_threads().max(1) * CHUNKS_PER_THREAD);
    let by_work = if work == usize::MAX {
        1
    } else {
        // Elements holding about MIN_CHUNK_WORK inner elements on average.
        (len as u128 * MIN_CHUNK_WORK as u128 / work.max(1) as u128) as usize
    };
    by_threads.max(by_work).max(1)
}

/// Whether a loop of `len` heavy elements holding `work` inner elements in all runs
/// sequentially (`work` is `usize::MAX` when the code generator cannot tell).
#[inline]
fn sequential(len: usize, work: usize) -> bool {
    len <= 1 || work < WORK_GRAIN
}

/// `[f(0), ..., f(len - 1)]`: contiguous chunks of elements, split adaptively between the
/// threads; each chunk writes its part of the uninitialised output once. `work` is the
/// number of inner elements of all elements together (`usize::MAX` if unknown): below
/// [`WORK_GRAIN`] the loop runs on the calling thread.
pub fn map<T, F>(len: usize, work: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let mut out: Vec<T> = Vec::with_capacity(len);
    let spare = &mut out.spare_capacity_mut()[..len];
    if sequential(len, work) {
        fill(spare, 0, &f);
    } else {
        let chunk = chunk_len(len, work);
        spare
            .par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(c, part)| fill(part, c * chunk, &f));
    }
    // SAFETY: `fill` wrote every one of the first `len` slots (it returned normally; a
    // panic in `f` unwinds past this point and the Vec is dropped with length 0, leaking
    // the values written so far, which is safe).
    unsafe { out.set_len(len) };
    out
}

/// `init op f(0) op f(1) ...` in unspecified order (`op` associative and commutative):
/// contiguous chunks, split adaptively between the threads, each folded left to right,
/// the chunk results combined in order. Sequential below [`WORK_GRAIN`] inner elements (`work`, as for [`map`]).
pub fn reduce<T, F, Op>(
    len: usize,
    work: usize,
    init: Option<T>,
    f: F,
    op: Op,
    prim: &'static str,
    at: At,
) -> T
where
    T: Send,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let fold = |lo: usize, hi: usize| (lo..hi).map(&f).reduce(&op);
    let total = if sequential(len, work) {
        fold(0, len)
    } else {
        let chunk = chunk_len(len, work);
        (0..len.div_ceil(chunk))
            .into_par_iter()
            .map(|c| fold(c * chunk, ((c + 1) * chunk).min(len)))
            .reduce_with(|a, b| match (a, b) {
                (Some(a), Some(b)) => Some(op(a, b)),
                (a, b) => a.or(b),
            })
            .flatten()
    };
    match (init, total) {
        (Some(i), Some(t)) => op(i, t),
        (Some(i), None) => i,
        (None, Some(t)) => t,
        (None, None) => raise(Error::Empty { prim, at: *at }),
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
