//! `scan` and `exclusive_scan`: blocked scan-then-propagate.
//!
//! Both scans are one shape: `out[0] = seed` and `out[j] = op(out[j - 1], h(j))` for
//! `1 <= j < n` (inclusive: `seed = f(0)`, `h(j) = f(j)`; exclusive: `seed = init`,
//! `h(j) = f(j - 1)`).
//!
//! Above [`GRAIN`](super::GRAIN) the output is cut into chunks of ~256 KiB (they stay in the
//! L2 cache), grouped in blocks of two chunks per thread. For one block, in parallel:
//! every chunk is scanned locally (the block's first chunk directly from the carry, since
//! it is known); then, sequentially, the chunk totals give each chunk's carry; the other
//! chunks then get `op(carry, local)` applied while they are still in cache, in the same
//! parallel step as the local scans of the next block. `h` runs once per element, the
//! output is written to memory once, and `op` only needs to be associative (operands stay
//! in order). The local scans use an in-register Hillis-Steele step over blocks of 4
//! (8-byte types: 2), so the serial dependency is one `op` per block rather than per
//! element (measured: 22% faster than the serial loop for f32 in a baseline x86-64 build;
//! blocks of 8 or 16 need more shuffles than they save).

use super::{At, par};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Bytes of output per chunk of the blocked pipeline.
const CHUNK_BYTES: usize = 256 << 10;

/// Inclusive scan: `y[0] = f(0)`, `y[i] = op(y[i-1], f(i))` (`op` associative); the
/// result of `prim` at `at`.
pub fn scan<T, F, Op>(len: usize, f: F, op: Op, prim: &'static str, at: At) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    if len == 0 {
        return Vec::new();
    }
    scan_core(len, f(0), &f, &op, prim, at)
}

/// Exclusive scan: `y[0] = init`, `y[i] = op(y[i-1], f(i-1))`; length `len`; the result
/// of `prim` at `at`.
pub fn exclusive_scan<T, F, Op>(
    len: usize,
    init: T,
    f: F,
    op: Op,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    match len {
        0 => Vec::new(),
        _ => {
            let out = scan_core(len, init, &|j| f(j - 1), &op, prim, at);
            last_for_its_errors(len, &f);
            out
        }
    }
}

/// Evaluates the last element of an exclusive scan's input (`len >= 1`), which no output
/// needs: an error it raises is the call's, as on every other place (`Seq`, the GPU and
/// the interpreter evaluate every element), after those of the elements before it.
fn last_for_its_errors<T>(len: usize, f: &impl Fn(usize) -> T) {
    std::hint::black_box(f(len - 1));
}

/// `out[0] = seed`, `out[j] = op(out[j - 1], h(j))` for `1 <= j < n`; `n >= 1`.
fn scan_core<T, H, Op>(n: usize, seed: T, h: &H, op: &Op, prim: &'static str, at: At) -> Vec<T>
where
    T: Copy + Send + Sync,
    H: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let mut out: Vec<T> = super::alloc(n, prim, at);
    scan_core_into(&mut out.spare_capacity_mut()[..n], seed, h, op);
    // SAFETY: `scan_core_into` wrote every slot; a panic unwinds past this point.
    unsafe { out.set_len(n) };
    out
}

/// `out[0] = seed`, `out[j] = op(out[j - 1], h(j))` for every other slot; `out` not empty.
fn scan_core_into<T, H, Op>(out: &mut [MaybeUninit<T>], seed: T, h: &H, op: &Op)
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
        let chunk = n
            .div_ceil(4 * threads)
            .clamp(4096, par::cache_chunk::<T>(CHUNK_BYTES));
        let block = chunk * 2 * threads;
        rayon::scope(|_| blocked_scan(&mut out[1..], 1, seed, chunk, block, h, op));
    }
}

/// [`scan`] written into `out` (length `len`), e.g. a row of a ragged result.
///
/// # Panics
///
/// If `out.len() != len` (an internal error of the code generator).
pub fn scan_into<T, F, Op>(out: &mut [MaybeUninit<T>], len: usize, f: F, op: Op)
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    row_into(out, len, || f(0), &f, &op);
}

/// [`exclusive_scan`] written into `out` (length `len`), e.g. a row of a ragged result.
///
/// # Panics
///
/// If `out.len() != len` (an internal error of the code generator).
pub fn exclusive_scan_into<T, F, Op>(out: &mut [MaybeUninit<T>], len: usize, init: T, f: F, op: Op)
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    row_into(out, len, || init, &|j| f(j - 1), &op);
    if len > 0 {
        last_for_its_errors(len, &f);
    }
}

/// [`scan_core_into`] of a row `out` of length `len` (checked), from `seed()`, if not empty.
fn row_into<T, H, Op>(
    out: &mut [MaybeUninit<T>],
    len: usize,
    seed: impl FnOnce() -> T,
    h: &H,
    op: &Op,
) where
    T: Copy + Send + Sync,
    H: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    super::check_row_len(out.len(), len);
    if len > 0 {
        scan_core_into(out, seed(), h, op);
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
pub(crate) fn scan_from<T, H, Op>(
    out: &mut [MaybeUninit<T>],
    base: usize,
    carry: T,
    h: &H,
    op: &Op,
) -> T
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
