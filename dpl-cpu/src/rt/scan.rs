//! `scan` and `exclusive_scan` in dpl's order ([`dpl_core::order::scan`]), cut across
//! threads.
//!
//! Both scans are one shape: the inclusive scan of `h(0) .. h(n - 1)` from an optional
//! start value (inclusive: none, `h = f`; exclusive: `init`, written first, and `h = f`
//! over all elements but the last). Scans of types holding floats follow the order; integer
//! scans, whose results do not depend on it, take the faster pipeline at the end of this
//! file ([`any_order_into`]: every block of 4 elements scanned in registers, then a carry
//! per element, which vectorizes).
//!
//! Below [`GRAIN`](super::GRAIN) the calling thread runs the sequential form
//! ([`scan_into`](dpl_core::order::scan::scan_into)). Above it the output is cut into
//! chunks of whole tiles (~256 KiB, so they stay in the L2 cache), grouped in blocks of two
//! chunks per thread. For one block, in parallel: the first chunk, whose carry is known,
//! is scanned tile by tile to its results ([`tiles_into`]); every tile of the other chunks
//! gets its runs (each lane's left fold of its 64 elements, written out) and the scan
//! across its lanes; then, sequentially, the tiles' totals give each tile's carry
//! ([`Carries`]); those tiles get their carries applied ([`fixup`]) while they are still in
//! cache, in the same parallel step as the next block. `h` runs once per element and the output
//! is written to memory once; the bits are those of every other place, whatever the
//! number of threads.

use super::{At, par};
use dpl_core::order::TILE;
use dpl_core::order::scan::{Carries, Lanes, fixup, runs, scan_into as seq_scan_into, tiles_into};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Bytes of output per chunk of the blocked pipeline.
const CHUNK_BYTES: usize = 256 << 10;

/// Elements per chunk of the blocked pipelines for `n` elements on `threads` threads: four
/// chunks per thread, within the L2 cache.
fn chunk_len<T>(n: usize, threads: usize) -> usize {
    n.div_ceil(4 * threads)
        .clamp(4096, par::cache_chunk::<T>(CHUNK_BYTES))
}

/// Inclusive scan: in dpl's order when `ordered` (a type holding floats), else in any
/// order (an integer scan: its result does not depend on it); the result of `prim` at `at`.
pub fn scan<T, F, Op>(len: usize, f: F, op: Op, ordered: bool, prim: &'static str, at: At) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let mut out: Vec<T> = super::alloc(len, prim, at);
    scan_into(&mut out.spare_capacity_mut()[..len], len, f, op, ordered);
    // SAFETY: `scan_into` wrote every slot; a panic unwinds past this point.
    unsafe { out.set_len(len) };
    out
}

/// Exclusive scan: `y[0] = init`, then the inclusive scan from `init` of `f(0) .. f(len -
/// 2)` (in dpl's order when `ordered`); length `len`; the result of `prim` at `at`.
pub fn exclusive_scan<T, F, Op>(
    len: usize,
    init: T,
    f: F,
    op: Op,
    ordered: bool,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let mut out: Vec<T> = super::alloc(len, prim, at);
    exclusive_scan_into(
        &mut out.spare_capacity_mut()[..len],
        len,
        init,
        f,
        op,
        ordered,
    );
    // SAFETY: `exclusive_scan_into` wrote every slot; a panic unwinds past this point.
    unsafe { out.set_len(len) };
    out
}

/// [`scan`] written into `out` (length `len`), e.g. a row of a ragged result.
///
/// # Panics
///
/// If `out.len() != len` (an internal error of the code generator).
pub fn scan_into<T, F, Op>(out: &mut [MaybeUninit<T>], len: usize, f: F, op: Op, ordered: bool)
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    super::check_row_len(out.len(), len);
    if ordered {
        ordered_into(out, None, &f, &op);
    } else if len > 0 {
        any_order_into(out, f(0), &f, &op);
    }
}

/// [`exclusive_scan`] written into `out` (length `len`), e.g. a row of a ragged result.
///
/// # Panics
///
/// If `out.len() != len` (an internal error of the code generator).
pub fn exclusive_scan_into<T, F, Op>(
    out: &mut [MaybeUninit<T>],
    len: usize,
    init: T,
    f: F,
    op: Op,
    ordered: bool,
) where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    super::check_row_len(out.len(), len);
    if len == 0 {
        return;
    }
    if ordered {
        out[0].write(init);
        ordered_into(&mut out[1..], Some(init), &f, &op);
    } else {
        any_order_into(out, init, &|j| f(j - 1), &op);
    }
    // The last element, which no output needs: an error it raises is the call's, as on
    // every other place, after those of the elements before it.
    std::hint::black_box(f(len - 1));
}

/// The inclusive scan of `h(0) .. h(out.len() - 1)` from `init` into `out`.
fn ordered_into<T, H, Op>(out: &mut [MaybeUninit<T>], init: Option<T>, h: &H, op: &Op)
where
    T: Copy + Send + Sync,
    H: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let n = out.len();
    if n < super::GRAIN {
        seq_scan_into(out, init, h, op);
    } else {
        let threads = par::threads();
        let chunk = chunk_len::<T>(n, threads).next_multiple_of(TILE);
        rayon::scope(|_| ordered_blocks(out, init, chunk, chunk * 2 * threads, h, op));
    }
}

/// A chunk whose tiles have their runs, with each tile's carry and lanes.
type Pending<'a, T> = (&'a mut [T], Vec<(Option<T>, Lanes<T>)>);

/// The blocked pipeline over `out` (module docs): blocks of `block` elements, chunks of
/// `chunk` (a multiple of [`TILE`]).
fn ordered_blocks<T, H, Op>(
    out: &mut [MaybeUninit<T>],
    init: Option<T>,
    chunk: usize,
    block: usize,
    h: &H,
    op: &Op,
) where
    T: Copy + Send + Sync,
    H: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let mut carries = Carries::new(init, dpl_core::order::tiles(out.len()));
    let (mut rest, mut pos) = (out, 0);
    let mut pending: Vec<Pending<'_, T>> = Vec::new();
    while !rest.is_empty() || !pending.is_empty() {
        let block_len = block.min(rest.len());
        let (blk, tail) = std::mem::take(&mut rest).split_at_mut(block_len);
        rest = tail;
        // The block's first chunk follows the carry: its tiles are final at once.
        let (first, others) = blk.split_at_mut(chunk.min(block_len));
        let first_len = first.len();
        let ((), (scanned, ())) = rayon::join(
            || tiles_into(first, pos, &mut carries, h, op),
            || {
                rayon::join(
                    || {
                        others
                            .par_chunks_mut(chunk)
                            .with_max_len(1)
                            .enumerate()
                            .map(|(c, part)| {
                                let start = pos + first_len + c * chunk;
                                let lanes: Vec<Lanes<T>> = part
                                    .chunks_mut(TILE)
                                    .enumerate()
                                    .map(|(t, tile)| runs(tile, start + t * TILE, h, op))
                                    .collect();
                                // SAFETY: `runs` wrote every slot of `part`; `MaybeUninit<T>`
                                // has the layout of `T`.
                                let part =
                                    unsafe { &mut *(part as *mut [MaybeUninit<T>] as *mut [T]) };
                                (part, lanes)
                            })
                            .collect::<Vec<_>>()
                    },
                    || {
                        pending
                            .into_par_iter()
                            .with_max_len(1)
                            .for_each(|(part, tiles)| {
                                for (tile, (carry, lanes)) in part.chunks_mut(TILE).zip(&tiles) {
                                    fixup(tile, *carry, lanes, op);
                                }
                            })
                    },
                )
            },
        );
        pos += block_len;
        pending = scanned
            .into_iter()
            .map(|(part, lanes)| {
                let tiles = lanes
                    .into_iter()
                    .map(|l| {
                        let carry = carries.carry();
                        carries.push(l.total(), op);
                        (carry, l)
                    })
                    .collect();
                (part, tiles)
            })
            .collect();
    }
    carries.finish(op);
}

/// An integer scan, whose result does not depend on the order of combination: `out[0] =
/// seed`, `out[j] = op(out[j - 1], h(j))` for every other slot (`out` not empty), by the
/// blocked pipeline of [`blocked_scan`] over [`scan_from`]'s in-register blocks.
fn any_order_into<T, H, Op>(out: &mut [MaybeUninit<T>], seed: T, h: &H, op: &Op)
where
    T: Copy + Send + Sync,
    H: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let n = out.len();
    out[0].write(seed);
    if n < super::GRAIN {
        scan_from(&mut out[1..], 1, seed, h, op);
    } else {
        let threads = par::threads();
        let chunk = chunk_len::<T>(n, threads);
        let block = chunk * 2 * threads;
        rayon::scope(|_| blocked_scan(&mut out[1..], 1, seed, chunk, block, h, op));
    }
}

/// The blocked pipeline over `out`, whose slot `j` holds position `pos + j`, following
/// `carry` (the value at position `pos - 1`).
fn blocked_scan<T, H, Op>(
    mut rest: &mut [MaybeUninit<T>],
    mut pos: usize,
    mut carry: T,
    chunk: usize,
    block: usize,
    h: &H,
    op: &Op,
) where
    T: Copy + Send + Sync,
    H: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    // Chunks scanned locally, waiting for `op(carry, _)`.
    let mut pending: Vec<(&mut [T], T)> = Vec::new();
    while !rest.is_empty() || !pending.is_empty() {
        let block_len = block.min(rest.len());
        let (blk, tail) = std::mem::take(&mut rest).split_at_mut(block_len);
        rest = tail;
        let block_carry = carry;
        let (scanned, ()) = rayon::join(
            || {
                blk.par_chunks_mut(chunk)
                    .with_max_len(1)
                    .enumerate()
                    .map(|(c, part)| {
                        let start = pos + c * chunk;
                        if c == 0 {
                            scan_from(part, start, block_carry, h, op);
                        } else {
                            let first = h(start);
                            part[0].write(first);
                            scan_from(&mut part[1..], start + 1, first, h, op);
                        }
                        // SAFETY: `scan_from` (with the line above) wrote every slot of
                        // `part`; `MaybeUninit<T>` has the layout of `T`.
                        unsafe { &mut *(part as *mut [MaybeUninit<T>] as *mut [T]) }
                    })
                    .collect::<Vec<&mut [T]>>()
            },
            || {
                pending
                    .into_par_iter()
                    .with_max_len(1)
                    .for_each(|(part, k)| propagate(part, k, op))
            },
        );
        pos += block_len;
        pending = Vec::with_capacity(scanned.len());
        let mut chunks = scanned.into_iter();
        if let Some(first) = chunks.next() {
            // The first chunk started from the carry: it is final already.
            carry = first[first.len() - 1];
            for part in chunks {
                let total = part[part.len() - 1];
                pending.push((part, carry));
                carry = op(carry, total);
            }
        }
    }
}

/// `part[j] = op(carry, part[j])`; not inlined, like [`scan_from`].
#[inline(never)]
fn propagate<T: Copy, Op: Fn(T, T) -> T>(part: &mut [T], carry: T, op: &Op) {
    for v in part.iter_mut() {
        *v = op(carry, *v);
    }
}

/// `out[j] = carry op h(base) op ... op h(base + j)` for every slot; returns the last value
/// (`carry` when `out` is empty).
///
/// Never inlined, so that `out` stays a `noalias` parameter (see [`super::map`]'s `fill`).
#[inline(never)]
fn scan_from<T, H, Op>(out: &mut [MaybeUninit<T>], base: usize, carry: T, h: &H, op: &Op) -> T
where
    T: Copy,
    H: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    match size_of::<T>() {
        0..=4 => scan_blocks::<T, H, Op, 4>(out, base, carry, h, op),
        5..=8 => scan_blocks::<T, H, Op, 2>(out, base, carry, h, op),
        _ => scan_blocks::<T, H, Op, 1>(out, base, carry, h, op),
    }
}

/// [`scan_from`] over blocks of `B`: an in-register Hillis-Steele scan of each block (its
/// `op`s are independent of the carry), then one `op` with the carry per element, which
/// vectorizes. Operand order is preserved.
#[inline(always)]
fn scan_blocks<T, H, Op, const B: usize>(
    out: &mut [MaybeUninit<T>],
    base: usize,
    mut carry: T,
    h: &H,
    op: &Op,
) -> T
where
    T: Copy,
    H: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    let mut pos = base;
    let mut blocks = out.chunks_exact_mut(B);
    for blk in &mut blocks {
        let mut t: [T; B] = std::array::from_fn(|j| h(pos + j));
        let mut s = 1;
        while s < B {
            for j in (s..B).rev() {
                t[j] = op(t[j - s], t[j]);
            }
            s *= 2;
        }
        for (slot, v) in blk.iter_mut().zip(t) {
            slot.write(op(carry, v));
        }
        carry = op(carry, t[B - 1]);
        pos += B;
    }
    for slot in blocks.into_remainder() {
        carry = op(carry, h(pos));
        slot.write(carry);
        pos += 1;
    }
    carry
}
