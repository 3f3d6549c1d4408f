//! Outer loops over *heavy* elements: elements that contain loops themselves (a row of a
//! `Nested`, a per-element reduction over a captured sequence), or whose estimated cost is
//! high (a per-element `for`/`while` loop, software arithmetic: the code generator's
//! `cost` module, which passes the estimate as the `work`).
//!
//! [`rt`] decides between sequential and parallel execution by the number of
//! elements, which is right for flat loops but wrong when each element is itself a loop: a
//! map over 500 long rows would run on one thread. These helpers parallelize at element
//! granularity: contiguous chunks of elements, many per thread (rayon steals work, so
//! skewed rows balance), and stay sequential only when the elements hold too little work
//! in all ([`WORK_GRAIN`] inner elements; the code generator passes the total length of the
//! `Nested`/`Matrix` whose rows the loop walks, when there is one).
//!
//! Ragged results (a `map` whose element function returns a sequence) are built in one
//! flat buffer, without a `Vec` per row: [`ragged`] when each row's length is known before
//! the row is computed (a `map` or `scan` over a row: sizes first, then every row written
//! in place), [`ragged_push`] when it is known only after (a `filter`: rows appended to a
//! buffer per chunk, the buffers moved into place in parallel).

use rayon::prelude::*;
use std::mem::MaybeUninit;

use crate::rt::isa::chunk_loop;
use crate::rt::{self, At, Keep, fill};

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
/// [`WORK_GRAIN`] the loop runs on the calling thread. The result is that of `prim` at
/// `at` (named if it cannot be allocated: [`rt::alloc`]).
pub fn map<T, F>(len: usize, work: usize, f: F, prim: &'static str, at: At) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let mut out: Vec<T> = rt::alloc(len, prim, at);
    let spare = &mut out.spare_capacity_mut()[..len];
    if sequential(len, work) {
        fill(spare, 0, &f, Keep);
    } else {
        let chunk = chunk_len(len, work);
        spare
            .par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(c, part)| fill(part, c * chunk, &f, Keep));
    }
    // SAFETY: `fill` wrote every one of the first `len` slots (it returned normally; a
    // panic in `f` unwinds past this point and the Vec is dropped with length 0, leaking
    // the values written so far, which is safe).
    unsafe { out.set_len(len) };
    out
}

/// Rows per block of [`map_reduce_blocked`]: the accumulators of a block stay in the L1
/// cache, and one column of a block of a column-major matrix is 256 consecutive elements
/// (1 KiB of `f32`), long enough for the hardware prefetcher to stream.
pub const BLOCK_ROWS: usize = 256;

/// A `map` whose element `i` is a reduction over the `inner` columns of row `i` (the same
/// count for every row: rows of a `Matrix`), traversed in blocks of [`BLOCK_ROWS`] rows.
/// Each row's reduction follows dpl's order ([`dpl_core::order`]): for each column `k`,
/// every row of the block updates its lane `k % 32` of the column's tile, with `elem(i, k)`
/// for the lane's first column and `step(i, k, lane) = op(lane, elem(i, k))` after it; the
/// lanes of each tile are combined by the lane tree, the tiles' results by lanes again,
/// and `finish(i, op(init(i), total))` (`init(i)` when `inner == 0`) gives element `i`.
/// `op(i, a, b)` is row `i`'s operator. With column-major rows (strided views), the inner
/// loop walks down one column of the block, so the matrix is read in contiguous runs
/// instead of `inner` strided streams per row.
///
/// `row(i)` computes element `i` row by row (the plain element function): when a block
/// raises a contract violation, its rows are run again with `row`, in order, so the error
/// reported is the first in row order, as from the row-by-row loop (the functions are
/// pure: running them again is harmless). Chunks, threads and `work` are as for [`map`];
/// the result is that of `prim` at `at` (named if it cannot be allocated).
#[allow(clippy::too_many_arguments)]
pub fn map_reduce_blocked<T, A, I, E, S, O, F, R>(
    len: usize,
    work: usize,
    inner: usize,
    init: I,
    fns: (E, S, O),
    finish: F,
    row: R,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Send,
    A: Copy,
    I: Fn(usize) -> A + Sync,
    E: Fn(usize, usize) -> A + Sync,
    S: Fn(usize, usize, A) -> A + Sync,
    O: Fn(usize, A, A) -> A + Sync,
    F: Fn(usize, A) -> T + Sync,
    R: Fn(usize) -> T + Sync,
{
    let kernel = |part: &mut [MaybeUninit<T>], base: usize| {
        let mut acc: Vec<A> = Vec::new();
        for (b, blk) in part.chunks_mut(BLOCK_ROWS).enumerate() {
            let lo = base + b * BLOCK_ROWS;
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                blocked_rows(blk, lo, inner, &mut acc, &init, &fns, &finish)
            }));
            if let Err(payload) = run {
                for i in lo..lo + blk.len() {
                    drop(row(i));
                }
                std::panic::resume_unwind(payload)
            }
        }
    };
    let mut out: Vec<T> = rt::alloc(len, prim, at);
    let spare = &mut out.spare_capacity_mut()[..len];
    if sequential(len, work) {
        kernel(spare, 0);
    } else {
        let chunk = chunk_len(len, work).next_multiple_of(BLOCK_ROWS);
        spare
            .par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(c, part)| kernel(part, c * chunk));
    }
    // SAFETY: every block wrote each of its slots (`blocked_rows` returned normally for
    // every block; a panic unwinds past this point and drops `out` with length 0).
    unsafe { out.set_len(len) };
    out
}

/// One block of [`map_reduce_blocked`]: rows `lo..lo + out.len()`. `acc` holds the lanes
/// present (`min(inner, LANES)` of them), lane-major (`acc[q * rows + r]`: one column of the
/// block updates a contiguous run), then, when the row spans more than one tile, the
/// second level's lanes over the tiles' results. Every slot read is written first in the
/// same block, so `acc` is only grown, never cleared: a block costs its columns, not the
/// 32 lanes of the pattern (a row of an ELL matrix holds a few columns). The lane trees of
/// the block's rows are computed together, lane against lane ([`column_tree`]).
#[inline(never)]
fn blocked_rows<T, A, I, E, S, O, F>(
    out: &mut [MaybeUninit<T>],
    lo: usize,
    inner: usize,
    acc: &mut Vec<A>,
    init: &I,
    (elem, step, op): &(E, S, O),
    finish: &F,
) where
    A: Copy,
    I: Fn(usize) -> A,
    E: Fn(usize, usize) -> A,
    S: Fn(usize, usize, A) -> A,
    O: Fn(usize, A, A) -> A,
    F: Fn(usize, A) -> T,
{
    use dpl_core::order::{LANES, TILE, tiles};
    let rows = out.len();
    let m = tiles(inner);
    if m == 0 {
        for (r, slot) in out.iter_mut().enumerate() {
            slot.write(finish(lo + r, init(lo + r)));
        }
        return;
    }
    let width = inner.min(LANES);
    let second = if m > 1 { m.min(LANES) } else { 0 };
    let need = (width + second) * rows;
    if acc.len() < need {
        acc.resize(need, init(lo));
    }
    let (lanes, level2) = acc.split_at_mut(width * rows);
    for t in 0..m {
        let (t0, t1) = (t * TILE, (t * TILE + TILE).min(inner));
        let c = (t1 - t0).min(LANES);
        for k in t0..t0 + c {
            column_first(
                &mut lanes[(k - t0) * rows..(k - t0 + 1) * rows],
                lo,
                k,
                elem,
            );
        }
        for k in t0 + c..t1 {
            let q = (k - t0) % LANES;
            column_step(&mut lanes[q * rows..(q + 1) * rows], lo, k, step);
        }
        column_tree(lanes, rows, c, lo, op);
        if m > 1 {
            let (p, slot) = (&lanes[..rows], &mut level2[(t % LANES) * rows..][..rows]);
            if t < LANES {
                slot.copy_from_slice(p);
            } else {
                for (r, (s, &p)) in slot.iter_mut().zip(p).enumerate() {
                    *s = op(lo + r, *s, p);
                }
            }
        }
    }
    // Each row's total: its one tile's tree, or the second level's over the tiles.
    let totals = if m == 1 {
        &lanes[..rows]
    } else {
        column_tree(level2, rows, second, lo, op);
        &level2[..rows]
    };
    for (r, slot) in out.iter_mut().enumerate() {
        let i = lo + r;
        slot.write(finish(i, op(i, init(i), totals[r])));
    }
}

/// The lane tree ([`dpl_core::order::tree`]) of every row of a block at once: `acc` holds
/// `c` lanes of `rows` values, lane-major; for `s` = 16, 8, 4, 2, 1, lane `j < s` becomes
/// `op(lane j, lane j + s)` where lane `j + s < c`, row by row, so each row's result (in
/// lane 0) has the bits of the tree over its own lanes, and each step is a loop along
/// the rows (vectorized when `op` is an arithmetic operator).
#[inline(always)]
fn column_tree<A, O>(acc: &mut [A], rows: usize, c: usize, lo: usize, op: &O)
where
    A: Copy,
    O: Fn(usize, A, A) -> A,
{
    let mut s = dpl_core::order::LANES / 2;
    while s > 0 {
        for j in 0..s.min(c.saturating_sub(s)) {
            let (low, high) = acc.split_at_mut((j + s) * rows);
            let dst = &mut low[j * rows..(j + 1) * rows];
            for (r, (a, &b)) in dst.iter_mut().zip(&high[..rows]).enumerate() {
                *a = op(lo + r, *a, b);
            }
        }
        s /= 2;
    }
}

chunk_loop! {
    /// The first column of a lane in a block: `acc[r] = elem(lo + r, k)`. Never inlined,
    /// for the reason given at [`column_step`], and compiled twice ([`chunk_loop!`]).
    fn column_first[A, E](acc: &mut [A], lo: usize, k: usize, elem: &E)
    where [E: Fn(usize, usize) -> A]
    {
        for (r, a) in acc.iter_mut().enumerate() {
            *a = elem(lo + r, k);
        }
    }
}

chunk_loop! {
    /// One column of a block: `acc[r] = step(lo + r, k, acc[r])`. Never inlined, so that
    /// `acc` is a `noalias` parameter: the stores cannot change what `step` reads (the
    /// matrices' pointers and strides), whose loads LLVM then hoists out of the loop; and
    /// compiled twice ([`chunk_loop!`]).
    fn column_step[A: Copy, S](acc: &mut [A], lo: usize, k: usize, step: &S)
    where [S: Fn(usize, usize, A) -> A]
    {
        for (r, a) in acc.iter_mut().enumerate() {
            *a = step(lo + r, k, *a);
        }
    }
}

/// `init op f(0) op f(1) ...` in dpl's order ([`dpl_core::order`]), the same bits with any
/// number of threads: the heavy elements are computed in parallel as by [`map`] (`work` as
/// there), then reduced on the calling thread (a few values per element, cheap next to
/// computing them).
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
    T: Copy + Send,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let total = if sequential(len, work) {
        dpl_core::order::reduce(len, &f, &op)
    } else {
        let xs = map(len, work, &f, prim, at);
        dpl_core::order::reduce(len, &|i| xs[i], &op)
    };
    rt::with_init(init, total, &op, prim, at)
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

/// A ragged result built by [`ragged`] or [`ragged_push`]: flat values and row offsets
/// that satisfy the invariants of `dpl::Nested` (`rows + 1` offsets starting at 0,
/// non-decreasing, the last equal to the number of values), plus the longest row's length.
///
/// Only this module constructs one, so `dpl::Nested` takes the parts over without checking
/// them again.
#[derive(Debug)]
pub struct Ragged<T> {
    values: Vec<T>,
    offsets: Vec<usize>,
    longest: usize,
}

impl<T> Ragged<T> {
    /// `(values, offsets, longest)`, in the form `dpl::Nested` stores them.
    pub fn into_parts(self) -> (Vec<T>, Vec<usize>, usize) {
        (self.values, self.offsets, self.longest)
    }
}

/// Raises [`Error::OutOfMemory`](dpl_core::run::Error::OutOfMemory) for a ragged result
/// of `prim` with more than `usize::MAX` elements of `T` (only reachable with rows of
/// computed lengths).
#[cold]
#[inline(never)]
fn too_many_elements<T>(prim: &'static str, at: At) -> ! {
    let bytes = (usize::MAX as u128 + 1) * std::mem::size_of::<T>().max(1) as u128;
    rt::out_of_memory(bytes, prim, at)
}

/// The offsets of a ragged result of `len` rows, all 0 (the result of `prim` at `at`).
fn zero_offsets(len: usize, prim: &'static str, at: At) -> Vec<usize> {
    let mut offsets = rt::alloc(len + 1, prim, at);
    offsets.resize(len + 1, 0);
    offsets
}

/// Rows per chunk for [`ragged`]: all of them in one chunk if the loop is sequential.
fn chunks(len: usize, work: usize) -> usize {
    if sequential(len, work) {
        len.max(1)
    } else {
        chunk_len(len, work)
    }
}

/// A ragged result of `len` rows whose lengths are known before the rows are computed:
/// row `i` has `size(i)` elements and `row(i, out)` writes them to `out` (exactly
/// `size(i)` slots). Sizes first: the lengths (a pass over the rows, in parallel chunks),
/// their prefix sums, one allocation of the flat values, then every row written in place
/// into its disjoint slice (parallel over the same chunks; rayon balances skewed rows as
/// in [`map`]). No `Vec` per row and no copy. `work` is as for [`map`].
///
/// # Safety
///
/// `row(i, out)` must initialise every slot of `out` or panic (the generated code calls
/// the `*_into` helpers of [`rt`] and [`seq`](crate::seq), which check the
/// length and write every slot).
pub unsafe fn ragged<T, S, F>(
    len: usize,
    work: usize,
    size: S,
    row: F,
    prim: &'static str,
    at: At,
) -> Ragged<T>
where
    T: Send,
    S: Fn(usize) -> usize + Sync,
    F: Fn(usize, &mut [MaybeUninit<T>]) + Sync,
{
    let chunk = chunks(len, work);
    let mut offsets = zero_offsets(len, prim, at);
    // Pass 1: each chunk's row lengths as prefix sums local to the chunk.
    let count = |c: usize, part: &mut [usize]| -> (usize, usize) {
        let (mut end, mut longest) = (0usize, 0usize);
        for (k, slot) in part.iter_mut().enumerate() {
            let n = size(c * chunk + k);
            longest = longest.max(n);
            end = end
                .checked_add(n)
                .unwrap_or_else(|| too_many_elements::<T>(prim, at));
            *slot = end;
        }
        (end, longest)
    };
    let sums: Vec<(usize, usize)> = if sequential(len, work) {
        offsets[1..]
            .chunks_mut(chunk)
            .enumerate()
            .map(|(c, p)| count(c, p))
            .collect()
    } else {
        offsets[1..]
            .par_chunks_mut(chunk)
            .enumerate()
            .map(|(c, p)| count(c, p))
            .collect()
    };
    let (bases, total, longest) = chunk_bases::<T>(&sums, prim, at);
    let mut values: Vec<T> = rt::alloc(total, prim, at);
    let parts = split_by(&mut values.spare_capacity_mut()[..total], &sums);
    // Pass 2: each chunk writes its rows into its part and makes its offsets global.
    let write = |c: usize, offs: &mut [usize], part: &mut [MaybeUninit<T>], base: usize| {
        let mut start = 0;
        for (k, o) in offs.iter_mut().enumerate() {
            let end = *o;
            row(c * chunk + k, &mut part[start..end]);
            start = end;
            *o = end + base;
        }
    };
    if sequential(len, work) {
        for (c, ((offs, part), base)) in offsets[1..]
            .chunks_mut(chunk)
            .zip(parts)
            .zip(bases)
            .enumerate()
        {
            write(c, offs, part, base);
        }
    } else {
        offsets[1..]
            .par_chunks_mut(chunk)
            .zip(parts)
            .zip(bases)
            .enumerate()
            .for_each(|(c, ((offs, part), base))| write(c, offs, part, base));
    }
    // SAFETY: the parts cover the first `total` slots, and `row` initialised every slot of
    // every row of every part (the caller's contract; it returned normally: a panic unwinds
    // past this point and drops `values` with length 0, which leaks but is safe).
    unsafe { values.set_len(total) };
    Ragged {
        values,
        offsets,
        longest,
    }
}

/// A ragged result of `len` rows whose lengths are known only once they are computed (a
/// `filter` per row): `row(i, buf)` appends row `i`'s elements to `buf`. Each chunk of
/// rows appends to a buffer of its own (cache-sized for the default chunking), recording
/// its row ends; then the buffers move into one allocation in parallel. Sequential below
/// [`WORK_GRAIN`] (`work` as for [`map`]): the rows are appended to the result directly.
pub fn ragged_push<T, F>(len: usize, work: usize, row: F, prim: &'static str, at: At) -> Ragged<T>
where
    T: Send,
    F: Fn(usize, &mut Vec<T>) + Sync,
{
    let mut offsets = zero_offsets(len, prim, at);
    if sequential(len, work) {
        let mut values = Vec::new();
        let mut longest = 0;
        for (i, o) in offsets[1..].iter_mut().enumerate() {
            let before = values.len();
            row(i, &mut values);
            longest = longest.max(values.len() - before);
            *o = values.len();
        }
        return Ragged {
            values,
            offsets,
            longest,
        };
    }
    let chunk = chunk_len(len, work);
    let mut bufs: Vec<(Vec<T>, usize)> = offsets[1..]
        .par_chunks_mut(chunk)
        .enumerate()
        .map(|(c, offs)| {
            let mut buf = Vec::new();
            let mut longest = 0;
            for (k, o) in offs.iter_mut().enumerate() {
                let before = buf.len();
                row(c * chunk + k, &mut buf);
                longest = longest.max(buf.len() - before);
                *o = buf.len();
            }
            (buf, longest)
        })
        .collect();
    let sums: Vec<(usize, usize)> = bufs.iter().map(|(b, l)| (b.len(), *l)).collect();
    let (bases, total, longest) = chunk_bases::<T>(&sums, prim, at);
    let mut values: Vec<T> = rt::alloc(total, prim, at);
    let parts = split_by(&mut values.spare_capacity_mut()[..total], &sums);
    offsets[1..]
        .par_chunks_mut(chunk)
        .zip(parts)
        .zip(bases)
        .zip(bufs.par_iter_mut())
        .for_each(|(((offs, part), base), (buf, _))| {
            for o in offs.iter_mut() {
                *o += base;
            }
            // SAFETY: `part` has exactly `buf.len()` slots (`split_by` cut it so) and does
            // not overlap `buf`; the values are moved: `buf` forgets them right after.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    buf.as_ptr(),
                    part.as_mut_ptr().cast::<T>(),
                    buf.len(),
                );
                buf.set_len(0);
            }
        });
    // SAFETY: the parts cover the first `total` slots and each received its buffer's values.
    unsafe { values.set_len(total) };
    Ragged {
        values,
        offsets,
        longest,
    }
}

/// For per-chunk `(elements, longest row)`: each chunk's first position, the total and the
/// longest row overall (a total above `usize::MAX` raises `OutOfMemory` for `prim`).
fn chunk_bases<T>(
    sums: &[(usize, usize)],
    prim: &'static str,
    at: At,
) -> (Vec<usize>, usize, usize) {
    let mut bases = Vec::with_capacity(sums.len());
    let (mut total, mut longest) = (0usize, 0usize);
    for &(n, l) in sums {
        bases.push(total);
        total = total
            .checked_add(n)
            .unwrap_or_else(|| too_many_elements::<T>(prim, at));
        longest = longest.max(l);
    }
    (bases, total, longest)
}

/// `out` cut into consecutive parts of the chunks' element counts.
fn split_by<'a, T>(mut out: &'a mut [T], sums: &[(usize, usize)]) -> Vec<&'a mut [T]> {
    let mut parts = Vec::with_capacity(sums.len());
    for &(n, _) in sums {
        let (part, rest) = std::mem::take(&mut out).split_at_mut(n);
        parts.push(part);
        out = rest;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::rt::TEST_AT as AT;

    /// Row `i`'s operator: neither associative nor commutative (any other tree shows),
    /// and different per row (the row index reaches it).
    fn op(i: usize, a: u64, b: u64) -> u64 {
        a.wrapping_mul(1_000_003 + i as u64)
            .wrapping_add(b ^ 0x9e37)
    }

    /// Element `(i, k)` of the rows.
    fn elem(i: usize, k: usize) -> u64 {
        ((i * 7919 + k) as u64).wrapping_mul(0x9e37_79b9) >> 5
    }

    /// Each row reduced by the blocked traversal has the bits of the reference order
    /// (`try_reduce`, then the start value), for widths around the lane count and the
    /// tile (one tile, several, more than 32 of them: the second level's lanes wrap),
    /// block counts around `BLOCK_ROWS`, and pools of 1 to 3 threads.
    #[test]
    fn blocked_rows_follow_the_order() {
        let widths = [
            0,
            1,
            2,
            5,
            8,
            9,
            31,
            32,
            33,
            100,
            2048,
            2049,
            4096 + 7,
            33 * 2048 + 3,
        ];
        for inner in widths {
            let rows_set: &[usize] = match inner {
                0..=100 => &[1, 255, 256, 257, 700],
                _ => &[1, 3, 257],
            };
            for &len in rows_set {
                let want: Vec<u64> = (0..len)
                    .map(|i| {
                        let start = i as u64 + 11;
                        let total = dpl_core::order::try_reduce::<u64, ()>(
                            inner,
                            &mut |k| Ok(elem(i, k)),
                            &mut |a, b| Ok(op(i, a, b)),
                        )
                        .unwrap();
                        total.map_or(start, |t| op(i, start, t)) ^ 1
                    })
                    .collect();
                for threads in 1..=3 {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let got = pool.install(|| {
                        map_reduce_blocked(
                            len,
                            len * inner.max(1) * 64,
                            inner,
                            |i| i as u64 + 11,
                            (elem, |i, k, acc| op(i, acc, elem(i, k)), op),
                            |_, a| a ^ 1,
                            |_| unreachable!("no row fails"),
                            "map",
                            &AT,
                        )
                    });
                    assert!(got == want, "{len} rows of {inner}, {threads} threads");
                }
            }
        }
    }
}
