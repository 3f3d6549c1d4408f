//! `filter`: branch-free compaction and a blocked pipeline that keeps order.
//!
//! Above [`GRAIN`](super::GRAIN) the index space is cut into cache-sized chunks, grouped in
//! blocks of two chunks per thread. In one parallel step, every chunk of a block compacts
//! its survivors into its own reusable buffer, while the buffers of the previous block
//! move into their place in the output (their offsets come from a sequential prefix sum
//! of the counts, taken between the steps). The element function runs once per element,
//! and the buffers are still in cache when they are moved out.

use super::{At, par};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Bytes of elements per chunk of the blocked pipeline.
const CHUNK_BYTES: usize = 256 << 10;

/// The elements `f(i)` for which `pred` holds, in order (the result of `prim` at `at`).
pub fn filter<T, F, P>(len: usize, f: F, pred: P, prim: &'static str, at: At) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
    P: Fn(&T) -> bool + Sync,
{
    let mut out: Vec<T> = super::alloc(len, prim, at);
    let spare = &mut out.spare_capacity_mut()[..len];
    let kept = if len < super::GRAIN {
        compact(spare, 0, &f, &pred)
    } else {
        let threads = par::threads();
        let chunk = len
            .div_ceil(4 * threads)
            .clamp(4096, par::cache_chunk::<T>(CHUNK_BYTES));
        rayon::scope(|_| blocked_filter(spare, len, chunk, 2 * threads, &f, &pred))
    };
    // SAFETY: the first `kept` slots were written (by `compact`, or by the moves out of the
    // buffers, whose lengths sum to `kept`); a panic unwinds past this point.
    unsafe { out.set_len(kept) };
    if out.capacity() - out.len() > 1024 {
        out.shrink_to_fit();
    }
    out
}

/// Appends the elements `f(i)` for which `pred` holds to `out`, in order: a row of a
/// ragged result written into a buffer shared with the rows before it (see
/// [`heavy::ragged_push`](crate::heavy::ragged_push)). Rows below
/// [`GRAIN`](super::GRAIN) are compacted branch-free straight into `out`'s spare capacity.
/// `out` is part of the result of `prim` at `at`.
pub fn filter_push<T, F, P>(out: &mut Vec<T>, len: usize, f: F, pred: P, prim: &'static str, at: At)
where
    T: Send,
    F: Fn(usize) -> T + Sync,
    P: Fn(&T) -> bool + Sync,
{
    if len < super::GRAIN {
        super::reserve(out, len, prim, at);
        let start = out.len();
        let kept = compact(&mut out.spare_capacity_mut()[..len], 0, &f, &pred);
        // SAFETY: `compact` wrote the first `kept` spare slots, right after the `start`
        // initialised elements.
        unsafe { out.set_len(start + kept) };
    } else {
        let kept = filter(len, f, pred, prim, at);
        super::reserve(out, kept.len(), prim, at);
        out.extend(kept);
    }
}

/// The blocked pipeline; returns the number of elements written to the front of `out`.
fn blocked_filter<T, F, P>(
    out: &mut [MaybeUninit<T>],
    len: usize,
    chunk: usize,
    chunks_per_block: usize,
    f: &F,
    pred: &P,
) -> usize
where
    T: Send,
    F: Fn(usize) -> T + Sync,
    P: Fn(&T) -> bool + Sync,
{
    let new_buffers = || -> Vec<Vec<T>> {
        (0..chunks_per_block)
            .map(|_| Vec::with_capacity(chunk))
            .collect()
    };
    // Buffers being filled, and the buffers of the previous block with their destinations.
    let mut filling = new_buffers();
    let mut moving = new_buffers();
    let mut dests: Vec<&mut [MaybeUninit<T>]> = Vec::new();
    let mut rest = out;
    let mut kept = 0;
    let mut pos = 0;
    while pos < len || !dests.is_empty() {
        let block_len = (chunk * chunks_per_block).min(len - pos);
        let nchunks = block_len.div_ceil(chunk);
        let block_start = pos;
        rayon::join(
            || {
                filling[..nchunks]
                    .par_iter_mut()
                    .with_max_len(1)
                    .enumerate()
                    .for_each(|(c, buf)| {
                        let start = block_start + c * chunk;
                        let n = chunk.min(block_start + block_len - start);
                        buf.clear();
                        let k = compact(&mut buf.spare_capacity_mut()[..n], start, f, pred);
                        // SAFETY: `compact` wrote the first `k` slots.
                        unsafe { buf.set_len(k) };
                    })
            },
            || {
                let dests = std::mem::take(&mut dests);
                moving
                    .par_iter_mut()
                    .zip(dests)
                    .with_max_len(1)
                    .for_each(|(buf, dest)| {
                        for (slot, v) in dest.iter_mut().zip(buf.drain(..)) {
                            slot.write(v);
                        }
                    })
            },
        );
        pos += block_len;
        for buf in &filling[..nchunks] {
            let (dest, tail) = std::mem::take(&mut rest).split_at_mut(buf.len());
            rest = tail;
            dests.push(dest);
            kept += buf.len();
        }
        std::mem::swap(&mut filling, &mut moving);
    }
    kept
}

/// Writes the `f(base + i)` (for `i < out.len()`) that satisfy `pred` to the front of
/// `out`, in order; returns how many.
///
/// For types without drop glue the loop is branch-free: every value is written at the
/// current end and the end advances only past the kept ones (a rejected value is simply
/// overwritten; nothing needs dropping). Never inlined, so that `out` stays a `noalias`
/// parameter (see [`super::map`]'s `fill`).
#[inline(never)]
pub(crate) fn compact<T, F, P>(out: &mut [MaybeUninit<T>], base: usize, f: &F, pred: &P) -> usize
where
    F: Fn(usize) -> T,
    P: Fn(&T) -> bool,
{
    let n = out.len();
    let mut k = 0;
    if !std::mem::needs_drop::<T>() {
        for i in 0..n {
            let v = f(base + i);
            let keep = pred(&v);
            // SAFETY: `k <= i < n == out.len()`: `k` grows by at most one per iteration.
            unsafe { out.get_unchecked_mut(k) }.write(v);
            k += keep as usize;
        }
    } else {
        for i in 0..n {
            let v = f(base + i);
            if pred(&v) {
                out[k].write(v);
                k += 1;
            }
        }
    }
    k
}
