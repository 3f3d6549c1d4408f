//! `reduce` and `count`: parallel drivers over sequential multi-accumulator kernels.
//!
//! A reduction written as `acc = op(acc, f(i))` is one serial dependency chain: one `op`
//! latency (4 cycles for an f32 add) per element, and LLVM may not reassociate it for
//! floats. The kernels keep one accumulator per lane of a block of consecutive elements,
//! so the loop body is independent `op`s over consecutive `f` values: exactly the shape
//! that LLVM turns into vector loads and vector `op`s (`if a > b { a } else { b }` becomes
//! a vector max). `reduce` follows dpl's one order ([`dpl_core::order`]: 32 lanes per tile
//! of 2048 elements), so its bits do not depend on the threads; `count` sums integers,
//! whose result has no order, in `u32` lanes with four streams ([`fold_range`]).

use super::map::{Nans, Parts, fill_split, split_range};
use super::par;
use super::{At, Error, raise};
use dpl_core::order::{self, TILE};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Ranges at least this many blocks of lanes long use the 4-stream kernel.
const STREAMS_MIN_BLOCKS: usize = 64;

/// `init op f(0) op f(1) ...` in dpl's order ([`dpl_core::order`]: tiles of 2048
/// elements, 32 lanes and a tree in each, the tiles' results reduced the same way), the
/// same bits with any number of threads. Tiles are the tasks: each chunk of consecutive
/// tiles writes its tiles' results, then one thread reduces them. Without `init`, an empty
/// index space raises [`Error::Empty`] for `prim`.
pub fn reduce<T, F, Op>(len: usize, init: Option<T>, f: F, op: Op, prim: &'static str, at: At) -> T
where
    T: Copy + Send,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let total = if len < super::GRAIN {
        order::reduce(len, &f, &op)
    } else {
        let m = order::tiles(len);
        let mut partials: Vec<T> = super::alloc(m, prim, at);
        let per = m.div_ceil(4 * par::threads());
        partials.spare_capacity_mut()[..m]
            .par_chunks_mut(per)
            .enumerate()
            .for_each(|(c, part)| {
                // Beyond the caches, tiles `k` and `k + h` of the chunk in lock step (two
                // distant memory streams), then the rest one by one.
                let base = c * per;
                let full = match order::paired::<T>(len) {
                    true => (len / TILE).saturating_sub(base).min(part.len()),
                    false => 0,
                };
                let h = full / 2;
                for k in 0..h {
                    let (x, y) = order::tile_pair(base + k, base + k + h, &f, &op);
                    part[k].write(x);
                    part[k + h].write(y);
                }
                for (k, slot) in part.iter_mut().enumerate().skip(2 * h) {
                    slot.write(order::tile(len, base + k, &f, &op));
                }
            });
        // SAFETY: every chunk wrote each of its slots (a panic unwinds past this point and
        // drops `partials` with length 0).
        unsafe { partials.set_len(m) };
        Some(order::fold_partials(&partials, &op))
    };
    with_init(init, total, &op, prim, at)
}

/// A kept `map` and a reduction that reads it element by element, in one pass:
/// `(y, r)` with `y = [f(0), ..., f(len - 1)]` (its NaNs treated by `W`, as
/// [`map`](super::map) or [`map_canon`](super::map_canon) would) and `r = init op g(0,
/// y[0]) op g(1, y[1]) ...` in dpl's order, the same bits as [`reduce`] of `|i| g(i,
/// y[i])` after the map (e.g. a Jacobi sweep and its largest change, or a residual and
/// its norm). Each tile of [`TILE`] elements is written by the map's loop and then reduced
/// while it is still in the L1 cache, so the map's result is read from memory zero times
/// instead of once, and both run in one parallel region.
///
/// `f` raising an error stops the call (as a `map` would); `g` and `op` must not raise
/// (the code generator fuses only reductions that cannot fail), so every error is the
/// map's, as in the unfused program. Without `init`, an empty index space raises
/// [`Error::Empty`] for `prim` at `at`; `map_prim` and `map_at` name the map's result where
/// it cannot be allocated.
#[allow(clippy::too_many_arguments)]
pub fn map_reduce<T, W, F, R, G, Op>(
    len: usize,
    f: F,
    nans: W,
    init: Option<R>,
    g: G,
    op: Op,
    map_at: (&'static str, At),
    prim: &'static str,
    at: At,
) -> (Vec<T>, R)
where
    T: Copy + Send,
    W: Nans<T>,
    F: Fn(usize) -> T + Sync,
    R: Copy + Send,
    G: Fn(usize, T) -> R + Sync,
    Op: Fn(R, R) -> R + Sync,
{
    map_reduce_split(len, (0, 0), &f, &f, nans, init, g, op, map_at, prim, at)
}

/// [`map_reduce`] of a map split as [`map_split`](super::map_split) is: the element
/// function `interior` on `lo..hi`, `edge` elsewhere.
#[allow(clippy::too_many_arguments)]
pub fn map_reduce_split<T, W, E, I, R, G, Op>(
    len: usize,
    (lo, hi): (usize, usize),
    edge: E,
    interior: I,
    nans: W,
    init: Option<R>,
    g: G,
    op: Op,
    (map_prim, map_at): (&'static str, At),
    prim: &'static str,
    at: At,
) -> (Vec<T>, R)
where
    T: Copy + Send,
    W: Nans<T>,
    E: Fn(usize) -> T + Sync,
    I: Fn(usize) -> T + Sync,
    R: Copy + Send,
    G: Fn(usize, T) -> R + Sync,
    Op: Fn(R, R) -> R + Sync,
{
    let range = split_range(len, lo, hi);
    let mut out: Vec<T> = super::alloc(len, map_prim, map_at);
    let spare = &mut out.spare_capacity_mut()[..len];
    let tile = |t: usize, slots: &mut [MaybeUninit<T>]| -> R {
        let start = t * TILE;
        fill_split(slots, start, range, &edge, &interior, nans);
        // SAFETY: `fill_split` wrote every slot of the tile; `MaybeUninit<T>` has the
        // layout of `T`.
        let ys = unsafe { &*(slots as *const [MaybeUninit<T>] as *const [T]) };
        // SAFETY: `order::tile` passes the tile's indices `start..start + ys.len()`.
        order::tile(
            len,
            t,
            &|i| g(i, *unsafe { ys.get_unchecked(i - start) }),
            &op,
        )
    };
    let total = reduce_tiles(len, spare, tile, &op, prim, at);
    // SAFETY: every tile's slots were written (a panic unwinds past this point and drops
    // `out` with length 0; `T: Copy` needs no drop).
    unsafe { out.set_len(len) };
    (out, with_init(init, total, &op, prim, at))
}

/// The tiles of the `map_reduce` helpers: `slots` (the map's uninitialised outputs, one or
/// several of `len` slots, cut together) is cut into tiles of [`TILE`] slots, `tile(t,
/// slots of tile t)` fills tile `t` and returns its reduction, and the tiles' results are
/// reduced in dpl's order (`None` without tiles). Below [`GRAIN`](super::GRAIN) on the
/// calling thread, beyond in chunks of consecutive tiles, a few per thread, as [`reduce`].
pub(crate) fn reduce_tiles<S, R, Op>(
    len: usize,
    slots: S,
    tile: impl Fn(usize, S) -> R + Sync,
    op: &Op,
    prim: &'static str,
    at: At,
) -> Option<R>
where
    S: Parts,
    R: Copy + Send,
    Op: Fn(R, R) -> R + Sync,
{
    /// `s` (starting at tile `first`) cut into its tiles: `(tile number, slots)`.
    fn tiles_of<S: Parts>(s: S, first: usize) -> Vec<(usize, S)> {
        let mut out = Vec::with_capacity(s.len().div_ceil(TILE));
        let mut rest = s;
        while rest.len() > TILE {
            let (head, tail) = rest.split_at(TILE);
            out.push((first + out.len(), head));
            rest = tail;
        }
        if rest.len() > 0 {
            out.push((first + out.len(), rest));
        }
        out
    }
    let m = order::tiles(len);
    if len < super::GRAIN {
        return match m {
            0 => None,
            1 => Some(tile(0, slots)),
            _ => {
                let partials: Vec<R> = tiles_of(slots, 0)
                    .into_iter()
                    .map(|(t, s)| tile(t, s))
                    .collect();
                Some(order::fold_partials(&partials, op))
            }
        };
    }
    let per = m.div_ceil(4 * par::threads());
    let mut chunks = Vec::with_capacity(m.div_ceil(per));
    let mut rest = slots;
    while rest.len() > per * TILE {
        let (head, tail) = rest.split_at(per * TILE);
        chunks.push(head);
        rest = tail;
    }
    chunks.push(rest);
    let mut partials: Vec<R> = super::alloc(m, prim, at);
    partials.spare_capacity_mut()[..m]
        .par_chunks_mut(per)
        .zip(chunks)
        .enumerate()
        .with_max_len(1)
        .for_each(|(c, (part, s))| {
            for (slot, (t, ts)) in part.iter_mut().zip(tiles_of(s, c * per)) {
                slot.write(tile(t, ts));
            }
        });
    // SAFETY: every chunk wrote each of its slots (a panic unwinds past this point and
    // drops `partials` with length 0).
    unsafe { partials.set_len(m) };
    Some(order::fold_partials(&partials, op))
}

/// A reduction's result from its start value and the reduction of its elements:
/// `op(init, total)`, either alone, or [`Error::Empty`] for `prim` at `at` with neither.
#[inline]
pub fn with_init<T, Op: Fn(T, T) -> T>(
    init: Option<T>,
    total: Option<T>,
    op: &Op,
    prim: &'static str,
    at: At,
) -> T {
    match (init, total) {
        (Some(i), Some(t)) => op(i, t),
        (Some(i), None) => i,
        (None, Some(t)) => t,
        (None, None) => raise(Error::Empty { prim, at: *at }),
    }
}

/// The number of indices `i` in `0..len` with `f(i)`: `count`, `sum(map(|x| (p(x)) as u64))`.
///
/// A `reduce` of `f(i) as usize` would sum 64-bit lanes, and the comparisons that usually
/// make `f` (one 32-bit lane per `f32` or `i32`) would be widened element by element to fill
/// them; here the ranges are summed in `u32` lanes (`fold_range`, as many lanes as a 32-bit
/// `reduce`) and only each range's total is widened. A range holds fewer than 2^32
/// elements, so its lanes cannot overflow.
pub fn count<F>(len: usize, f: F) -> usize
where
    F: Fn(usize) -> bool + Sync,
{
    const MAX_RANGE: usize = u32::MAX as usize;
    if len < super::GRAIN {
        count_range(0, len, &f, MAX_RANGE)
    } else {
        let chunk = par::chunk_len(len, super::GRAIN / 4);
        (0..len.div_ceil(chunk))
            .into_par_iter()
            .with_max_len(1)
            .map(|c| count_range(c * chunk, ((c + 1) * chunk).min(len), &f, MAX_RANGE))
            .sum()
    }
}

/// The number of `i` in `start..end` with `f(i)`, summed in `u32` lanes over ranges of at
/// most `max_range` (`< 2^32`) elements.
fn count_range<F: Fn(usize) -> bool>(start: usize, end: usize, f: &F, max_range: usize) -> usize {
    let mut total = 0;
    let mut s = start;
    while s < end {
        let e = end.min(s + max_range);
        total += fold_range(s, e, &|i| u32::from(f(i)), &u32::wrapping_add) as usize;
        s = e;
    }
    total
}

/// `f(start) op ... op f(end - 1)` in unspecified order (`count`'s integer sums); `start < end`.
///
/// Picks the number of lanes from the size of `T` (a constant, so only one arm survives
/// monomorphisation): about two cache lines of accumulators.
#[inline]
fn fold_range<T, F, Op>(start: usize, end: usize, f: &F, op: &Op) -> T
where
    T: Copy,
    F: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    match size_of::<T>() {
        0..=4 => fold_lanes::<T, F, Op, 32, 16>(start, end, f, op),
        5..=8 => fold_lanes::<T, F, Op, 16, 8>(start, end, f, op),
        9..=16 => fold_lanes::<T, F, Op, 8, 4>(start, end, f, op),
        _ => fold_lanes::<T, F, Op, 4, 2>(start, end, f, op),
    }
}

/// The lane kernel: `L` accumulators for short ranges, 4 lock-step streams of `S`
/// accumulators each for long ones. `start < end`.
#[inline(always)]
fn fold_lanes<T, F, Op, const L: usize, const S: usize>(
    start: usize,
    end: usize,
    f: &F,
    op: &Op,
) -> T
where
    T: Copy,
    F: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    debug_assert!(start < end);
    let n = end - start;
    if n < 2 * L {
        let mut acc = f(start);
        for i in start + 1..end {
            acc = op(acc, f(i));
        }
        return acc;
    }
    if n >= 4 * S * STREAMS_MIN_BLOCKS {
        return fold_streams::<T, F, Op, S>(start, end, f, op);
    }
    let blocks_end = start + n / L * L;
    let mut acc: [T; L] = std::array::from_fn(|j| f(start + j));
    let mut base = start + L;
    // Indexing by lane (not iterators) is the shape that vectorizes: `f(base + j)`.
    #[allow(clippy::needless_range_loop)]
    while base < blocks_end {
        for j in 0..L {
            acc[j] = op(acc[j], f(base + j));
        }
        base += L;
    }
    let mut r = acc[0];
    for a in &acc[1..] {
        r = op(r, *a);
    }
    for i in blocks_end..end {
        r = op(r, f(i));
    }
    r
}

/// Four contiguous quarters of the range read in lock step, `S` accumulators each: four
/// memory streams in flight per thread reach more of the machine's bandwidth than one.
/// `end - start >= 4 * S`.
#[inline(always)]
fn fold_streams<T, F, Op, const S: usize>(start: usize, end: usize, f: &F, op: &Op) -> T
where
    T: Copy,
    F: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    let quarter = (end - start) / (4 * S) * S;
    let [s0, s1, s2, s3] = [
        start,
        start + quarter,
        start + 2 * quarter,
        start + 3 * quarter,
    ];
    let mut a0: [T; S] = std::array::from_fn(|j| f(s0 + j));
    let mut a1: [T; S] = std::array::from_fn(|j| f(s1 + j));
    let mut a2: [T; S] = std::array::from_fn(|j| f(s2 + j));
    let mut a3: [T; S] = std::array::from_fn(|j| f(s3 + j));
    let mut k = S;
    while k < quarter {
        for j in 0..S {
            a0[j] = op(a0[j], f(s0 + k + j));
            a1[j] = op(a1[j], f(s1 + k + j));
            a2[j] = op(a2[j], f(s2 + k + j));
            a3[j] = op(a3[j], f(s3 + k + j));
        }
        k += S;
    }
    for j in 0..S {
        a0[j] = op(op(a0[j], a1[j]), op(a2[j], a3[j]));
    }
    let mut r = a0[0];
    for a in &a0[1..] {
        r = op(r, *a);
    }
    for i in start + 4 * quarter..end {
        r = op(r, f(i));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::{count_range, reduce};
    use dpl_core::order::try_reduce;

    use crate::rt::TEST_AT as AT;

    /// An operator that is neither associative nor commutative: any other tree shows.
    fn op(a: u64, b: u64) -> u64 {
        a.wrapping_mul(1_000_003).wrapping_add(b ^ 0x9e37)
    }

    /// The parallel reduction follows dpl's order exactly, in pools of 1 to 5 threads: an
    /// operator that is neither associative nor commutative shows any other tree.
    #[test]
    fn reduce_follows_the_order() {
        for n in [1, 31, 2048, 4097, (1 << 17) + 5, (1 << 18) + 2048 * 7 + 3] {
            let want =
                try_reduce::<u64, ()>(n, &mut |i| Ok(i as u64 * 7 + 1), &mut |a, b| Ok(op(a, b)))
                    .unwrap()
                    .unwrap();
            for threads in 1..=5 {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let got = pool.install(|| reduce(n, None, |i| i as u64 * 7 + 1, op, "r", &AT));
                assert_eq!(got, want, "n = {n}, {threads} threads");
            }
        }
    }

    /// A map and its reduction in one pass follow the same order, in pools of 1 to 5
    /// threads, and write every element of the map (one vector, and one per component).
    #[test]
    fn map_reduce_follows_the_order() {
        use crate::rt::{Keep, map_reduce, map_reduce_split, map_unzip2_reduce};
        let f = |i: usize| (i as u64).wrapping_mul(0x9e37_79b9) >> 7;
        let g = |i: usize, y: u64| y ^ (i as u64 * 3);
        for n in [1, 31, 2048, 4097, (1 << 17) + 5, (1 << 18) + 2048 * 7 + 3] {
            let want = try_reduce::<u64, ()>(n, &mut |i| Ok(g(i, f(i))), &mut |a, b| Ok(op(a, b)))
                .unwrap()
                .unwrap();
            let ys: Vec<u64> = (0..n).map(f).collect();
            for threads in 1..=5 {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (y, r) =
                    pool.install(|| map_reduce(n, f, Keep, None, g, op, ("m", &AT), "r", &AT));
                assert_eq!((r, &y), (want, &ys), "n = {n}, {threads} threads");
                // An interior that computes the same values by another closure.
                let (y, r) = pool.install(|| {
                    map_reduce_split(n, (3, n / 2), f, f, Keep, None, g, op, ("m", &AT), "r", &AT)
                });
                assert_eq!((r, &y), (want, &ys), "split, n = {n}, {threads} threads");
                let ((a, b), r) = pool.install(|| {
                    map_unzip2_reduce(
                        n,
                        (0, 0),
                        |i| (f(i), i as u32),
                        |i| (f(i), i as u32),
                        (Keep, Keep),
                        Some(5),
                        |i, y, k: u32| g(i, y) + u64::from(k) - i as u64,
                        op,
                        ("m", &AT),
                        "r",
                        &AT,
                    )
                });
                assert_eq!(r, op(5, want), "unzip, n = {n}, {threads} threads");
                assert_eq!(a, ys);
                assert!(b.iter().enumerate().all(|(i, &k)| k as usize == i));
            }
        }
    }

    /// The ranges summed in `u32` lanes are cut at `max_range` elements (2^32 - 1 in
    /// `count`, too many to test; the cut is the same with a small one).
    #[test]
    fn count_cuts_ranges_for_its_lanes() {
        for (start, end) in [(0, 1000), (5, 6), (3, 3), (17, 5000)] {
            let want = (start..end).filter(|i| i % 3 == 0).count();
            for max_range in [1, 7, 64, 1 << 20] {
                assert_eq!(count_range(start, end, &|i| i % 3 == 0, max_range), want);
            }
        }
    }
}
