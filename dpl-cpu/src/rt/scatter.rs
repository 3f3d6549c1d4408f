//! `scatter`, `scatter_reduce` and `permute`: parallel writes to computed places without
//! data races.
//!
//! The destination is split into one contiguous part per thread, and each part has exactly
//! one writer, which applies the updates that land in it in source order. So the result is
//! exactly the sequential one (the last write wins; `scatter_reduce` applies `op` in index
//! order, bit for bit, floats included), and no `unsafe` sharing is needed.
//!
//! * With up to [`OWNERS_MAX_THREADS`] threads (this machine has 2), every owner runs
//!   through the whole source and applies the pairs that land in its part: the streaming
//!   reads are repeated, the (costly, random) writes are split, and each thread's writes
//!   stay within its part (half the cache and TLB footprint with two threads). A pair of
//!   another part is written to one of a few local sink slots instead of being skipped,
//!   so the loop has no branch that depends on the (random) index: a skip branch is
//!   mispredicted on every other pair.
//! * With more threads, the source is evaluated once, in parallel chunks whose
//!   `(index, value)` pairs are bucketed by part; each owner then applies its buckets
//!   chunk by chunk.
//! * `scatter_reduce` into a destination much smaller than the source (histograms) gives
//!   each of a few contiguous source ranges per thread a private copy: the first range
//!   accumulates into the result itself (a copy of `dst`), the others into copies that
//!   start from `op`'s identity when the code generator knows it
//!   ([`scatter_reduce_identity`]: `+`, `*`, `min`, `max`, `&`, `|`, `^` on scalars and
//!   tuples of them) and from empty slots (`Option`s) otherwise. The copies are merged
//!   into the result in range order (in parallel over the slots when they are long), so
//!   `op` is only reassociated, and the result depends on the number of threads only for
//!   floating-point `+` and `*`.
//! * `permute` owners set one bit per slot they write, without testing it (a store to a
//!   small bitmap, no branch), and count the bits at the end: `len` indices below `len`
//!   form a permutation exactly when every slot was written, so a part whose count falls
//!   short of its length proves a repeated index. Only then is the first offending element
//!   looked for, sequentially. (Values that need dropping test each bit before writing, so
//!   that nothing is overwritten without being dropped.) Up to 4,096 slots a byte per
//!   slot is cheaper than a bit ([`permute_short`]). With many threads it claims
//!   slots with an atomic `fetch_or` on a shared bitmap before writing them, so each slot
//!   still has at most one writer.
//!
//! Index errors are reported for the first offending element in index order, as the
//! sequential reference does.

use super::{At, Error, GRAIN, Idx, index_error, par, raise};
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::ops::Range;
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
        sequential(len, &f, dst, &|_, v| v, prim, at)
    } else if par::threads() <= OWNERS_MAX_THREADS {
        owners(len, &f, dst, &|_, v| v, prim, at)
    } else {
        partitioned(len, &f, dst, &|_, v| v, prim, at)
    }
}

/// A copy of `dst` with `dst[k] = op(dst[k], v)` for every `(k, v) = f(i)`, in index order
/// (`op` may be reassociated: it must be associative).
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
    T: Copy + Send + Sync + PartialEq,
    F: Fn(usize) -> (I, T) + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    reduce_by_index(len, &f, dst, &op, None, prim, at)
}

/// [`scatter_reduce`] for an `op` with the identity `identity` (`op(identity, x) == x ==
/// op(x, identity)` for every `x`): private copies of a small destination start from it.
pub fn scatter_reduce_identity<I, T, F, Op>(
    len: usize,
    f: F,
    dst: &[T],
    op: Op,
    identity: T,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync + PartialEq,
    F: Fn(usize) -> (I, T) + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    reduce_by_index(len, &f, dst, &op, Some(identity), prim, at)
}

/// The body of [`scatter_reduce`] and [`scatter_reduce_identity`].
fn reduce_by_index<I, T, F, Op>(
    len: usize,
    f: &F,
    dst: &[T],
    op: &Op,
    identity: Option<T>,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync + PartialEq,
    F: Fn(usize) -> (I, T) + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let n = dst.len();
    if len < GRAIN {
        sequential(len, f, dst, op, prim, at)
    } else if n <= PRIVATE_MAX && n * PRIVATE_RATIO <= len {
        private_copies(len, f, dst, op, identity, prim, at)
    } else if par::threads() <= OWNERS_MAX_THREADS {
        owners(len, f, dst, op, prim, at)
    } else {
        partitioned(len, f, dst, op, prim, at)
    }
}

/// Up to this many threads, every thread runs through the whole source (see [`owners`]);
/// beyond, the source is bucketed once (see [`partitioned`]).
const OWNERS_MAX_THREADS: usize = 4;

/// Destinations up to this many elements may use private copies...
const PRIVATE_MAX: usize = 1 << 16;
/// ...when the source is at least this many times longer; a range of the source has at
/// least this many elements per slot of its copy.
const PRIVATE_RATIO: usize = 8;

/// Private copies per thread, at most: a few ranges per thread let a thread that another
/// tenant of the machine slows down take fewer of them.
const RANGES_PER_THREAD: usize = 4;

/// Sink slots of an owner for the pairs of other parts: consecutive sink writes go to
/// different slots, so that a reduction into them is not one dependency chain.
const SINKS: usize = 8;

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
    let mut out: Vec<T> = super::alloc(n, prim, at);
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
/// its range; the others go to sink slots (see the [module docs](self)). Stops at the first
/// index out of range of `n` (the whole destination), returning it. `part` is not empty.
/// Not inlined, so that `part` stays a `noalias` parameter.
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
    let mut sinks = [part[0]; SINKS];
    let sink = sinks.as_mut_ptr();
    let (base, pl) = (part.as_mut_ptr(), part.len());
    for i in 0..len {
        let (k, v) = f(i);
        let Some(k) = k.checked(n) else {
            return Some(k.value());
        };
        let r = k.wrapping_sub(lo);
        // SAFETY: `r < pl` is a slot of `part`, `i % SINKS` one of `sinks`; both are
        // initialised, and nothing else refers to them during the loop.
        unsafe {
            let p = if r < pl {
                base.add(r)
            } else {
                sink.add(i % SINKS)
            };
            *p = apply(*p, v);
        }
    }
    None
}

/// `dst.to_vec()` (the result of `prim` at `at`), in parallel for long slices.
fn copy_of<T: Copy + Send + Sync>(dst: &[T], prim: &'static str, at: At) -> Vec<T> {
    if dst.len() < GRAIN {
        let mut out = super::alloc(dst.len(), prim, at);
        out.extend_from_slice(dst);
        out
    } else {
        super::map(dst.len(), |i| dst[i], prim, at)
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
    let mut out: Vec<T> = super::alloc(n, prim, at);
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

/// The private accumulator of one source range of [`private_copies`] after the first
/// (which accumulates into the result itself).
enum Copy_<T> {
    /// Slots that start from the identity.
    Plain(Vec<T>),
    /// Slots that start empty (no identity known).
    Slots(Vec<Option<T>>),
}

/// `scatter_reduce` with one private copy of the destination per contiguous source range
/// (see the [module docs](self)).
fn private_copies<I, T, F, Op>(
    len: usize,
    f: &F,
    dst: &[T],
    op: &Op,
    identity: Option<T>,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync + PartialEq,
    F: Fn(usize) -> (I, T) + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let n = dst.len();
    // An identity that is not one for some destination value (`min(NaN, +inf)` is `+inf`
    // where the NaN must stay when nothing combines into its slot): slots start empty.
    let identity = identity.filter(|&id| dst.iter().all(|&d| op(d, id) == d));
    let threads = par::threads();
    let ranges = (len / (PRIVATE_RATIO * n)).clamp(threads, RANGES_PER_THREAD * threads);
    let range_len = len.div_ceil(ranges);
    let range = |r: usize| r * range_len..((r + 1) * range_len).min(len);
    let mut out = copy_of(dst, prim, at);
    // The first range accumulates into the result, the others into private copies.
    let (first, copies) = rayon::join(
        || fold_into(&mut out, range(0), f, op),
        || {
            (1..ranges)
                .into_par_iter()
                .with_max_len(1)
                .map(|r| {
                    let (copy, error) = match identity {
                        Some(id) => {
                            let mut acc = vec![id; n];
                            let e = fold_into(&mut acc, range(r), f, op);
                            (Copy_::Plain(acc), e)
                        }
                        None => {
                            let mut acc = vec![None; n];
                            let e = fold_into_slots(&mut acc, range(r), f, op);
                            (Copy_::Slots(acc), e)
                        }
                    };
                    error.map_or(Ok(copy), Err)
                })
                .collect::<Vec<_>>()
        },
    );
    if let Some(value) = first {
        index_error(prim, value, n, at)
    }
    first_error(&copies, n, prim, at);
    merge_copies(&mut out, &copies, op);
    out
}

/// A copy of `dst` with `dst[k] = op(dst[k], v)` for the pairs `(k, v) = f(i)`, in order,
/// on the calling thread (below the grain).
fn sequential<I, T, F, Op>(
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
    F: Fn(usize) -> (I, T),
    Op: Fn(T, T) -> T,
{
    let mut out = copy_of(dst, prim, at);
    if let Some(value) = fold_into(&mut out, 0..len, f, op) {
        index_error(prim, value, out.len(), at)
    }
    out
}

/// `acc[k] = op(acc[k], v)` for the pairs `(k, v) = f(i)` of `range`, in order; stops at
/// the first index out of range of `acc`, returning it.
fn fold_into<I, T, F, Op>(acc: &mut [T], range: Range<usize>, f: &F, op: &Op) -> Option<i128>
where
    I: Idx,
    T: Copy,
    F: Fn(usize) -> (I, T),
    Op: Fn(T, T) -> T,
{
    fold_with(acc, range, f, |a, v| *a = op(*a, v))
}

/// [`fold_into`] for slots that start empty: the first value of a slot is stored as it is.
fn fold_into_slots<I, T, F, Op>(
    acc: &mut [Option<T>],
    range: Range<usize>,
    f: &F,
    op: &Op,
) -> Option<i128>
where
    I: Idx,
    T: Copy,
    F: Fn(usize) -> (I, T),
    Op: Fn(T, T) -> T,
{
    fold_with(acc, range, f, |a, v| {
        *a = Some(match *a {
            Some(a) => op(a, v),
            None => v,
        })
    })
}

/// `combine(&mut acc[k], v)` for the pairs `(k, v) = f(i)` of `range`, in order; stops at
/// the first index out of range of `acc`, returning it. Not inlined, so that `acc` stays a
/// `noalias` parameter.
#[inline(never)]
fn fold_with<I, S, T, F>(
    acc: &mut [S],
    range: Range<usize>,
    f: &F,
    combine: impl Fn(&mut S, T),
) -> Option<i128>
where
    I: Idx,
    F: Fn(usize) -> (I, T),
{
    let n = acc.len();
    for i in range {
        let (k, v) = f(i);
        match k.checked(n) {
            Some(k) => combine(&mut acc[k], v),
            None => return Some(k.value()),
        }
    }
    None
}

/// `out[j] = op(out[j], copy[j])` for every copy in order (an empty slot leaves `out[j]`);
/// in parallel over the slots when there are many.
fn merge_copies<T, Op>(out: &mut [T], copies: &[Result<Copy_<T>, i128>], op: &Op)
where
    T: Copy + Send + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let merge = |part: &mut [T], base: usize| {
        for copy in copies.iter().flatten() {
            let range = base..base + part.len();
            match copy {
                Copy_::Plain(c) => {
                    for (o, c) in part.iter_mut().zip(&c[range]) {
                        *o = op(*o, *c);
                    }
                }
                Copy_::Slots(c) => {
                    for (o, c) in part.iter_mut().zip(&c[range]) {
                        if let Some(c) = *c {
                            *o = op(*o, c);
                        }
                    }
                }
            }
        }
    };
    if out.len() * copies.len() < GRAIN {
        merge(out, 0);
    } else {
        let chunk = par::chunk_len(out.len(), 1024);
        out.par_chunks_mut(chunk)
            .with_max_len(1)
            .enumerate()
            .for_each(|(c, part)| merge(part, c * chunk));
    }
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
    let mut out: Vec<T> = super::alloc(len, prim, at);
    let spare = &mut out.spare_capacity_mut()[..len];
    let ok = if len <= PERMUTE_BYTE_MARKS_MAX && !std::mem::needs_drop::<T>() {
        permute_short(spare, &f)
    } else if len < GRAIN {
        let (ok, seen) = permute_owned(spare, 0, len, &f);
        if !ok {
            drop_claimed(spare, |w| seen[w]);
        }
        ok
    } else if par::threads() <= OWNERS_MAX_THREADS {
        let part_len = len.div_ceil(owner_parts(len)).next_multiple_of(64);
        let results: Vec<(bool, Vec<u64>)> = spare
            .par_chunks_mut(part_len)
            .enumerate()
            .with_max_len(1)
            .map(|(p, part)| permute_owned(part, p * part_len, len, &f))
            .collect();
        let ok = results.iter().all(|r| r.0);
        if !ok {
            let words_per_part = part_len / 64;
            drop_claimed(spare, |w| results[w / words_per_part].1[w % words_per_part]);
        }
        ok
    } else {
        let words = len.div_ceil(64);
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

/// Up to this many slots, `permute` of values that need no dropping marks the slots it
/// writes in a byte per slot ([`permute_short`]).
const PERMUTE_BYTE_MARKS_MAX: usize = 1 << 12;

/// `permute` of a short sequence of values that need no dropping, on one thread: writes
/// every value to its slot and marks the slot with a byte, without testing it, then counts
/// the marks: `len` indices below `len` form a permutation exactly when all `len` slots
/// were marked. Returns whether they do; stops at the first index out of range. A repeated
/// index overwrites a value, which loses nothing (no drop). A byte is a plain store where
/// a bit of a bitmap is a read-modify-write, and with few words (16 for 2^10 slots)
/// consecutive marks often hit the same word and wait for each other. Measured through a
/// `#[parallel]` call (`examples/cpu_prims.rs`, interleaved rounds): 0.62-0.67x the time
/// of [`permute_owned`] at 2^10 `f32`s, 0.72-0.84x at 2^12 (`benches/notes.md`,
/// "permute"). Beyond, the byte map leaves the L1 cache and the bitmap is as fast.
#[inline(never)]
fn permute_short<I, T, F>(slots: &mut [MaybeUninit<T>], f: &F) -> bool
where
    I: Idx,
    F: Fn(usize) -> (I, T),
{
    let len = slots.len();
    let base = slots.as_mut_ptr();
    let mut marks = vec![0u8; len];
    let m = marks.as_mut_ptr();
    for i in 0..len {
        let (k, v) = f(i);
        let Some(k) = k.checked(len) else {
            return false;
        };
        // SAFETY: `k < len`, a slot of `slots` and a byte of `marks`.
        unsafe {
            (*base.add(k)).write(v);
            *m.add(k) = 1;
        }
    }
    marks.iter().map(|&b| usize::from(b)).sum::<usize>() == len
}

/// One owner of `permute`: runs through all of `0..len` in order and writes the values
/// whose index falls in `part` (which starts at `lo`), setting one bit per written slot.
/// Returns whether every slot of `part` was written (for `len` indices that are all below
/// `len`, every part full means a permutation) and the bits (a bit set means a slot
/// written, exactly once). Stops at the first index out of range, or, for values that
/// need dropping, at the first slot written twice; nothing else is checked on the way.
#[inline(never)]
fn permute_owned<I, T, F>(
    part: &mut [MaybeUninit<T>],
    lo: usize,
    len: usize,
    f: &F,
) -> (bool, Vec<u64>)
where
    I: Idx,
    F: Fn(usize) -> (I, T),
{
    let (pl, words) = (part.len(), part.len().div_ceil(64));
    // The bits of the slots, then `SINKS` words for the pairs of other parts.
    let mut seen = vec![0u64; words + SINKS];
    if std::mem::needs_drop::<T>() {
        for i in 0..len {
            let (k, v) = f(i);
            let Some(k) = k.checked(len) else {
                return (false, seen);
            };
            let r = k.wrapping_sub(lo);
            if r < pl {
                let bit = 1u64 << (r % 64);
                if seen[r / 64] & bit != 0 {
                    return (false, seen);
                }
                seen[r / 64] |= bit;
                part[r].write(v);
            }
        }
    } else {
        let mut sinks: [MaybeUninit<T>; SINKS] = [const { MaybeUninit::uninit() }; SINKS];
        let (base, sink, bits) = (part.as_mut_ptr(), sinks.as_mut_ptr(), seen.as_mut_ptr());
        for i in 0..len {
            let (k, v) = f(i);
            let Some(k) = k.checked(len) else {
                return (false, seen);
            };
            let r = k.wrapping_sub(lo);
            let mine = r < pl;
            // SAFETY: `r < pl` is a slot of `part` with its bit in word `r / 64 < words`;
            // otherwise the value goes to sink `i % SINKS` and the bit to the sink word
            // `words + i % SINKS < seen.len()`. `T` needs no drop, so overwriting a slot
            // (a repeated index, found by the count below) loses nothing.
            unsafe {
                let (slot, word) = if mine {
                    (base.add(r), r / 64)
                } else {
                    (sink.add(i % SINKS), words + i % SINKS)
                };
                (*slot).write(v);
                *bits.add(word) |= 1 << (r % 64);
            }
        }
    }
    let written: usize = seen[..words].iter().map(|w| w.count_ones() as usize).sum();
    seen.truncate(words);
    (written == pl, seen)
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
