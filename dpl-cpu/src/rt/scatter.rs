//! `scatter`, `scatter_reduce` and `permute`: parallel writes to computed places without
//! data races.
//!
//! The destination is split into one contiguous part per thread, and each part has exactly
//! one writer, which applies the updates that land in it in source order. So the result is
//! exactly the sequential one (the last write wins; `scatter_reduce` applies `op` in index
//! order, bit for bit, floats included), and no `unsafe` sharing is needed.
//!
//! * With up to [`OWNERS_MAX_THREADS`] threads (this machine has 2), every owner runs
//!   through the whole source and skips the pairs outside its part: the streaming reads
//!   are repeated, the (costly, random) writes are split.
//! * With more threads, the source is evaluated once, in parallel chunks whose
//!   `(index, value)` pairs are bucketed by part; each owner then applies its buckets
//!   chunk by chunk.
//! * `scatter_reduce` into a destination much smaller than the source (histograms) gives
//!   each contiguous source range a private copy instead (slots start empty: `op` has no
//!   identity), merged into `dst` in range order: `op` is only reassociated.
//! * `permute` owners keep one "written" flag per slot of their part; a second write is a
//!   duplicate. With many threads it claims slots with an atomic `fetch_or` on a shared
//!   bitmap before writing them, so each slot still has at most one writer.
//!
//! Index errors are reported for the first offending element in index order, as the
//! sequential reference does.

use super::{At, Error, GRAIN, Idx, index_error, par, raise};
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A copy of `dst` with `dst[k] = v` for every `(k, v) = f(i)`; an index out of range of
/// `dst` raises for `prim`. With repeated indices, which write wins is unspecified.
pub fn scatter<I, T, F>(len: usize, f: F, dst: &[T], prim: &'static str, at: At) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync,
    F: Fn(usize) -> (I, T) + Sync,
{
    if len < GRAIN {
        let mut out = copy_of(dst);
        for i in 0..len {
            let (k, v) = f(i);
            match k.checked(out.len()) {
                Some(k) => out[k] = v,
                None => index_error(prim, k.value(), out.len(), at),
            }
        }
        out
    } else if par::threads() <= OWNERS_MAX_THREADS {
        owners(len, &f, dst, &|_, v| v, prim, at)
    } else {
        partitioned(len, &f, dst, &|_, v| v, prim, at)
    }
}

/// A copy of `dst` with `dst[k] = op(dst[k], v)` for every `(k, v) = f(i)`.
pub fn scatter_reduce<I, T, F, Op>(
    len: usize,
    f: F,
    dst: &[T],
    op: Op,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync,
    F: Fn(usize) -> (I, T) + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let n = dst.len();
    if len < GRAIN {
        let mut out = copy_of(dst);
        for i in 0..len {
            let (k, v) = f(i);
            match k.checked(n) {
                Some(k) => out[k] = op(out[k], v),
                None => index_error(prim, k.value(), n, at),
            }
        }
        out
    } else if n <= PRIVATE_MAX && n * PRIVATE_RATIO <= len {
        private_copies(len, &f, dst, &op, prim, at)
    } else if par::threads() <= OWNERS_MAX_THREADS {
        owners(len, &f, dst, &op, prim, at)
    } else {
        partitioned(len, &f, dst, &op, prim, at)
    }
}

/// Up to this many threads, every thread runs through the whole source (see [`owners`]);
/// beyond, the source is bucketed once (see [`partitioned`]).
const OWNERS_MAX_THREADS: usize = 4;

/// Destinations up to this many elements may use private copies...
const PRIVATE_MAX: usize = 1 << 16;
/// ...when the source is at least this many times longer.
const PRIVATE_RATIO: usize = 8;

/// The number of destination parts for `n` slots: one per thread, none shorter than
/// a quarter of [`GRAIN`].
fn owner_parts(n: usize) -> usize {
    par::threads().min(n.div_ceil(GRAIN / 4)).max(1)
}

/// Few threads: each owns a contiguous part of the destination and runs through the whole
/// source in index order, applying the pairs that land in its part. No buffers and no
/// synchronisation; the element function runs once per thread, which costs less than
/// bucketing when there are only a few threads (the writes, not the streaming reads, are
/// what costs in a scatter). Every thread meets the first bad index, in order.
fn owners<I, T, F, A>(len: usize, f: &F, dst: &[T], apply: &A, prim: &'static str, at: At) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync,
    F: Fn(usize) -> (I, T) + Sync,
    A: Fn(T, T) -> T + Sync,
{
    let n = dst.len();
    if n == 0 {
        // Every index is out of range; `len > 0` here.
        index_error(prim, f(0).0.value(), 0, at)
    }
    let part_len = n.div_ceil(owner_parts(n));
    let mut out: Vec<T> = Vec::with_capacity(n);
    let errors: Vec<Option<i128>> = out.spare_capacity_mut()[..n]
        .par_chunks_mut(part_len)
        .zip(dst.par_chunks(part_len))
        .enumerate()
        .with_max_len(1)
        .map(|(p, (part, src))| {
            for (slot, v) in part.iter_mut().zip(src) {
                slot.write(*v);
            }
            // SAFETY: every slot of `part` was written just above (`src` has its length);
            // `MaybeUninit<T>` has the layout of `T`.
            let part = unsafe { &mut *(part as *mut [MaybeUninit<T>] as *mut [T]) };
            apply_owned(part, p * part_len, n, len, f, apply)
        })
        .collect();
    if let Some(value) = errors.into_iter().flatten().next() {
        index_error(prim, value, n, at)
    }
    // SAFETY: the parts cover the `n` slots and each was filled from `dst`.
    unsafe { out.set_len(n) };
    out
}

/// The loop of one owner: `part[k - lo] = apply(part[k - lo], v)` for the pairs with `k` in
/// its range; stops at the first index out of range of `n` (the whole destination),
/// returning it. Not inlined, so
/// that `part` stays a `noalias` parameter.
#[inline(never)]
fn apply_owned<I, T, F, A>(
    part: &mut [T],
    lo: usize,
    n: usize,
    len: usize,
    f: &F,
    apply: &A,
) -> Option<i128>
where
    I: Idx,
    T: Copy,
    F: Fn(usize) -> (I, T),
    A: Fn(T, T) -> T,
{
    for i in 0..len {
        let (k, v) = f(i);
        match k.checked(n) {
            Some(k) => {
                let r = k.wrapping_sub(lo);
                if r < part.len() {
                    part[r] = apply(part[r], v);
                }
            }
            None => return Some(k.value()),
        }
    }
    None
}

/// `dst.to_vec()`, in parallel for long slices.
fn copy_of<T: Copy + Send + Sync>(dst: &[T]) -> Vec<T> {
    if dst.len() < GRAIN {
        dst.to_vec()
    } else {
        super::map(dst.len(), |i| dst[i])
    }
}

/// The first index error of chunk results in chunk order (each chunk stops at its first).
fn first_error<R>(results: &[Result<R, i128>], n: usize, prim: &'static str, at: At) {
    if let Some(Err(value)) = results.iter().find(|r| r.is_err()) {
        index_error(prim, *value, n, at)
    }
}

/// One source chunk's `(index within part, value)` pairs, one vector per destination part.
type Buckets<T> = Vec<Vec<(usize, T)>>;

/// The destination-partitioned scatter: `out[k] = apply(out[k], v)` in source order.
fn partitioned<I, T, F, A>(
    len: usize,
    f: &F,
    dst: &[T],
    apply: &A,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync,
    F: Fn(usize) -> (I, T) + Sync,
    A: Fn(T, T) -> T + Sync,
{
    let n = dst.len();
    let parts = if n < GRAIN { 1 } else { par::threads() };
    let part_len = n.div_ceil(parts).max(1);
    let chunk = par::chunk_len(len, GRAIN / 4);
    // Bucket every chunk's pairs by destination part (the index is stored relative to its
    // part); an index out of range ends the chunk with its value.
    let buckets: Vec<Result<Buckets<T>, i128>> = (0..len.div_ceil(chunk))
        .into_par_iter()
        .with_max_len(1)
        .map(|c| {
            let range = c * chunk..((c + 1) * chunk).min(len);
            let mut b: Vec<Vec<(usize, T)>> = (0..parts)
                .map(|_| Vec::with_capacity(range.len() / parts + 64))
                .collect();
            for i in range {
                let (k, v) = f(i);
                let Some(k) = k.checked(n) else {
                    return Err(k.value());
                };
                let p = part_of(k, part_len, parts);
                b[p].push((k - p * part_len, v));
            }
            Ok(b)
        })
        .collect();
    first_error(&buckets, n, prim, at);
    let mut out: Vec<T> = Vec::with_capacity(n);
    out.spare_capacity_mut()
        .par_chunks_mut(part_len)
        .zip(dst.par_chunks(part_len))
        .enumerate()
        .for_each(|(p, (part, src))| {
            for (slot, v) in part.iter_mut().zip(src) {
                slot.write(*v);
            }
            // SAFETY: every slot of `part` was written just above (`src` has its length);
            // `MaybeUninit<T>` has the layout of `T`.
            let part = unsafe { &mut *(part as *mut [MaybeUninit<T>] as *mut [T]) };
            for b in buckets.iter().flatten() {
                for &(k, v) in &b[p] {
                    part[k] = apply(part[k], v);
                }
            }
        });
    // SAFETY: the parts cover the `n` slots and each was filled from `dst`.
    unsafe { out.set_len(n) };
    out
}

/// The destination part of index `k`: a few compares instead of a division (~30 cycles)
/// for the usual small thread counts.
#[inline(always)]
fn part_of(k: usize, part_len: usize, parts: usize) -> usize {
    if parts <= 8 {
        let mut p = 0;
        let mut end = part_len;
        while k >= end {
            p += 1;
            end += part_len;
        }
        p
    } else {
        k / part_len
    }
}

/// `scatter_reduce` with one private copy of the destination per contiguous source range.
fn private_copies<I, T, F, Op>(
    len: usize,
    f: &F,
    dst: &[T],
    op: &Op,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync,
    F: Fn(usize) -> (I, T) + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let n = dst.len();
    let ranges = par::threads();
    let range_len = len.div_ceil(ranges);
    let copies: Vec<Result<Vec<Option<T>>, i128>> = (0..ranges)
        .into_par_iter()
        .with_max_len(1)
        .map(|r| {
            let mut acc: Vec<Option<T>> = vec![None; n];
            for i in r * range_len..((r + 1) * range_len).min(len) {
                let (k, v) = f(i);
                let Some(k) = k.checked(n) else {
                    return Err(k.value());
                };
                acc[k] = Some(match acc[k] {
                    Some(a) => op(a, v),
                    None => v,
                });
            }
            Ok(acc)
        })
        .collect();
    first_error(&copies, n, prim, at);
    let mut out = dst.to_vec();
    for copy in copies.iter().flatten() {
        for (o, c) in out.iter_mut().zip(copy) {
            if let Some(c) = *c {
                *o = op(*o, c);
            }
        }
    }
    out
}

/// The output slots of `permute`, shared between the tasks that fill them.
struct Slots<T>(*mut MaybeUninit<T>);

// SAFETY: the tasks write values of type `T: Send` into distinct slots (each slot is
// claimed in the bitmap before its one write), so sharing the pointer moves `T`s between
// threads and nothing else.
unsafe impl<T: Send> Sync for Slots<T> {}

impl<T> Slots<T> {
    /// Writes slot `k`.
    ///
    /// # Safety
    ///
    /// `k` is within the allocation and no other thread accesses slot `k`.
    #[inline(always)]
    unsafe fn write(&self, k: usize, v: T) {
        // SAFETY: guaranteed by the caller.
        unsafe { (*self.0.add(k)).write(v) };
    }
}

/// `y[k] = v` for every `(k, v) = f(i)`, where the `k` must be a permutation of `0..len`
/// (raises [`Error::NotAPermutation`] or [`Error::IndexOutOfRange`] otherwise).
pub fn permute<I, T, F>(len: usize, f: F, prim: &'static str, at: At) -> Vec<T>
where
    I: Idx,
    T: Send,
    F: Fn(usize) -> (I, T) + Sync,
{
    let mut out: Vec<T> = Vec::with_capacity(len);
    let spare = &mut out.spare_capacity_mut()[..len];
    let words = len.div_ceil(64);
    let ok = if len < GRAIN {
        // One flag per slot: consecutive indices do not chain through one bitmap word.
        let mut seen = vec![false; len];
        let mut ok = true;
        for i in 0..len {
            let (k, v) = f(i);
            let Some(k) = k.checked(len) else {
                ok = false;
                break;
            };
            if std::mem::replace(&mut seen[k], true) {
                ok = false;
                break;
            }
            spare[k].write(v);
        }
        if !ok && std::mem::needs_drop::<T>() {
            for (slot, _) in spare.iter_mut().zip(&seen).filter(|(_, s)| **s) {
                // SAFETY: a slot is marked seen only right before it is written.
                unsafe { slot.assume_init_drop() };
            }
        }
        ok
    } else if par::threads() <= OWNERS_MAX_THREADS {
        let part_len = len.div_ceil(owner_parts(len));
        let results: Vec<Owned> = spare
            .par_chunks_mut(part_len)
            .enumerate()
            .with_max_len(1)
            .map(|(p, part)| permute_owned(part, p * part_len, len, &f, prim, at))
            .collect();
        let failure = results
            .iter()
            .filter_map(|r| r.0.as_ref())
            .min_by_key(|e| e.0)
            .map(|e| e.1.clone());
        if let Some(e) = failure {
            if std::mem::needs_drop::<T>() {
                for (part, (_, seen)) in spare.chunks_mut(part_len).zip(&results) {
                    for (slot, _) in part.iter_mut().zip(seen).filter(|(_, s)| **s) {
                        // SAFETY: a slot is marked seen only right before it is written.
                        unsafe { slot.assume_init_drop() };
                    }
                }
            }
            raise(e)
        }
        true
    } else {
        let seen: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
        let failed = AtomicBool::new(false);
        let slots = Slots(spare.as_mut_ptr());
        let chunk = par::chunk_len(len, GRAIN / 4);
        (0..len.div_ceil(chunk))
            .into_par_iter()
            .with_max_len(1)
            .for_each(|c| {
                for i in c * chunk..((c + 1) * chunk).min(len) {
                    let (k, v) = f(i);
                    let Some(k) = k.checked(len) else {
                        return failed.store(true, Ordering::Relaxed);
                    };
                    let bit = 1u64 << (k % 64);
                    if seen[k / 64].fetch_or(bit, Ordering::Relaxed) & bit != 0 {
                        return failed.store(true, Ordering::Relaxed);
                    }
                    // SAFETY: `k < len <= capacity`, and this task is the one that set bit `k`
                    // (the `fetch_or` saw it clear), so no other task writes slot `k`, and
                    // nothing reads it until the parallel loop has joined.
                    unsafe { slots.write(k, v) };
                }
            });
        let ok = !failed.into_inner();
        if !ok {
            drop_claimed(spare, |w| seen[w].load(Ordering::Relaxed));
        }
        ok
    };
    if !ok {
        raise(first_permutation_error(len, &f, prim, at));
    }
    // SAFETY: no failure means that `len` indices below `len` were claimed once each, so
    // all `len` slots were written, each exactly once.
    unsafe { out.set_len(len) };
    out
}

/// What one owner of `permute` reports: its first error with the element's position, and
/// which of its slots it wrote.
type Owned = (Option<(usize, Error)>, Vec<bool>);

/// One owner of `permute`: runs through all of `0..len` in order and writes the values
/// whose index falls in `part` (which starts at `lo`). Returns the first error it meets
/// (with its element's position) and which slots it wrote.
#[inline(never)]
fn permute_owned<I, T, F>(
    part: &mut [MaybeUninit<T>],
    lo: usize,
    len: usize,
    f: &F,
    prim: &'static str,
    at: At,
) -> Owned
where
    I: Idx,
    F: Fn(usize) -> (I, T),
{
    let mut seen = vec![false; part.len()];
    for i in 0..len {
        let (k, v) = f(i);
        let Some(k) = k.checked(len) else {
            return (
                Some((
                    i,
                    Error::IndexOutOfRange {
                        prim,
                        index: k.value(),
                        len,
                        at: *at,
                    },
                )),
                seen,
            );
        };
        let r = k.wrapping_sub(lo);
        if r < part.len() {
            if std::mem::replace(&mut seen[r], true) {
                let detail = format!("index {k} appears twice");
                return (
                    Some((
                        i,
                        Error::NotAPermutation {
                            prim,
                            detail,
                            at: *at,
                        },
                    )),
                    seen,
                );
            }
            part[r].write(v);
        }
    }
    (None, seen)
}

/// Drops the values in the slots whose bit is set in the bitmap `word(w)`.
fn drop_claimed<T>(slots: &mut [MaybeUninit<T>], word: impl Fn(usize) -> u64) {
    if !std::mem::needs_drop::<T>() {
        return;
    }
    for (w, group) in slots.chunks_mut(64).enumerate() {
        let mut bits = word(w);
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            // SAFETY: a set bit means the slot was written (the write follows the claim,
            // and every task has finished).
            unsafe { group[b].assume_init_drop() };
            bits &= bits - 1;
        }
    }
}

/// The error that the sequential reference raises for indices that are not a permutation
/// (called once a failure was seen, to report it deterministically).
#[cold]
fn first_permutation_error<I, T, F>(len: usize, f: &F, prim: &'static str, at: At) -> Error
where
    I: Idx,
    F: Fn(usize) -> (I, T),
{
    let mut seen = vec![0u64; len.div_ceil(64)];
    for i in 0..len {
        let k = f(i).0;
        let Some(k) = k.checked(len) else {
            return Error::IndexOutOfRange {
                prim,
                index: k.value(),
                len,
                at: *at,
            };
        };
        let bit = 1u64 << (k % 64);
        if seen[k / 64] & bit != 0 {
            return Error::NotAPermutation {
                prim,
                detail: format!("index {k} appears twice"),
                at: *at,
            };
        }
        seen[k / 64] |= bit;
    }
    Error::NotAPermutation {
        prim,
        detail: "the index function gave different indices when evaluated again".into(),
        at: *at,
    }
}
