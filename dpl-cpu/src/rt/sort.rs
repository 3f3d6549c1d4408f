//! `sort` and `sort_by_key`: the elements are materialised (the element function runs once
//! per index, in parallel like [`map`](super::map)), then ordered.
//!
//! The order is [`SortKey::total_cmp`], the same on every place: integers and `bool` as
//! Rust orders them, floats by IEEE 754 `totalOrder` (`f32::total_cmp`), tuples
//! lexicographically.
//!
//! * Scalar keys (every integer type, `bool`, floats) from [`RADIX_MIN`] elements on:
//!   a stable [`radix_sort`] over the key's bytes mapped to an unsigned integer in the same
//!   order ([`SortKey::radix_key`]): one read counts every byte's digits, bytes in which
//!   all keys agree are skipped, and each remaining byte costs one counting-sort pass.
//!   Small inputs run least significant byte first on the calling thread; large ones
//!   partition by the most significant byte first, then sort the 256 parts in the caches,
//!   and from [`RADIX_PAR_MIN`] elements (`2^18` with 2 threads) the partition runs in
//!   parallel over chunks and the parts are shared among the threads.
//!
//!   The sizes were chosen with an interleaved timing loop over `u32` keys (the old
//!   sequential radix sort, the new one on one thread, the new one, `par_sort_unstable`)
//!   on this 2-core machine and on a 16-core one with 2, 4 and 16 rayon threads: parallel
//!   passes lost to the sequential sort below `2^17` elements with 2 threads (the other
//!   core is often busy here) and below `2^16` with 4 and 16; partitioning by the top byte
//!   first paid off sequentially from `2^19` elements and in parallel always (a
//!   least-significant-first parallel sort scatters the whole input once per byte, with
//!   cache lines shared between threads at every chunk's digit boundary).
//!
//!   `benches/sort.rs`, `DPL_BENCH_QUICK=1`, against the previous sequential
//!   least-significant-first radix sort (`old`, a temporary bench id) and rayon in the
//!   same run, time ratios at 2^16 / 2^18 / 2^20 / 2^22 elements:
//!
//!   | machine | case | dpl / old | dpl / rayon |
//!   |---|---|---|---|
//!   | this one, 2 cores, load ~4 | `sort_u32` | 0.94 / 0.71 / 0.39 / 0.50 | 0.68 / 0.48 / 0.44 / 0.40 |
//!   | | `sort_f32` | 0.98 / 0.68 / 0.54 / 0.76 | 0.53 / 0.36 / 0.17 / 0.63 |
//!   | | `sort_by_key_u32` | | 0.22 / 0.28 / 0.22 / 0.40 |
//!   | 16 cores, 16 threads | `sort_u32` | 0.59 / 0.16 / 0.15 / 0.10 | 0.91 / 0.35 / 0.50 / 0.68 |
//!   | | `sort_f32` | 0.83 / 0.28 / 0.18 / 0.09 | 1.27 / 0.37 / 0.32 / 0.25 |
//!   | | `sort_by_key_u32` | | 0.53 / 0.46 / 0.57 / 0.65 |
//!   | 16 cores, 2 threads | `sort_u32` | 0.86 / 0.62 / 0.53 / 0.31 | 0.54 / 0.67 / 0.37 / 0.40 |
//!   | | `sort_f32` | 1.24 / 1.04 / 0.56 / 0.56 | 0.37 / 0.62 / 0.30 / 0.46 |
//!
//!   (The 16-core machine's 2-thread `sort_f32` at 2^16 and 2^18 is noise of a shared
//!   machine: the interleaved loop there and here gave 0.7-0.85 for the same code.) With
//!   16 threads rayon's sort still wins at 2^16 `f32` keys.
//! * Other keys (tuples, compared lexicographically) with `sort`: two elements that compare
//!   equal are bit-for-bit identical (`total_cmp` tells `-0.0` from `+0.0` and NaNs apart
//!   by their payload), so a stable and an unstable sort give the same result and the
//!   faster unstable one is used (rayon's parallel pattern-defeating quicksort above
//!   [`SORT_GRAIN`]).
//! * Other keys with `sort_by_key`: equal keys keep the index order of their values, so the
//!   `(key, value)` pairs are sorted with a stable sort (rayon's parallel merge sort above
//!   [`SORT_GRAIN`]), then the values are copied out in parallel.

use super::par::threads;
use super::{At, map};
use dpl_core::float16::{bf16, f16};
use rayon::prelude::*;
use std::cmp::Ordering;
use std::mem::MaybeUninit;
use std::ops::Range;

/// Below this many elements a sort runs sequentially on the calling thread: sorting costs
/// `n log n` comparisons, so parallelism pays off earlier than for the streaming helpers
/// ([`GRAIN`](super::GRAIN)).
pub const SORT_GRAIN: usize = 1 << 14;

/// Values `sort` and `sort_by_key` can order: the scalars of the language and tuples of
/// them, in the total order described in the module docs of `rt::sort`.
pub trait SortKey: Copy + Send + Sync {
    /// The order `sort` sorts by.
    fn total_cmp(&self, other: &Self) -> Ordering;

    /// How many low bytes of [`SortKey::radix_key`] hold the key; 0 for keys that are not
    /// radix-sorted (tuples).
    const RADIX_BYTES: u32 = 0;

    /// An unsigned integer whose order is [`SortKey::total_cmp`]'s (scalars only).
    #[inline(always)]
    fn radix_key(&self) -> u64 {
        0
    }
}

macro_rules! ord_key {
    ($($t:ty => $bytes:expr, |$v:ident| $key:expr);* $(;)?) => {$(
        impl SortKey for $t {
            #[inline(always)]
            fn total_cmp(&self, other: &Self) -> Ordering {
                Ord::cmp(self, other)
            }
            const RADIX_BYTES: u32 = $bytes;
            #[inline(always)]
            fn radix_key(&self) -> u64 {
                let $v = *self;
                $key
            }
        }
    )*};
}
// Signed integers: flipping the sign bit maps them in order onto the unsigned range.
ord_key!(
    bool => 1, |v| u64::from(v);
    u8 => 1, |v| u64::from(v);
    i8 => 1, |v| u64::from(v as u8 ^ (1 << 7));
    u16 => 2, |v| u64::from(v);
    i16 => 2, |v| u64::from(v as u16 ^ (1 << 15));
    u32 => 4, |v| u64::from(v);
    i32 => 4, |v| u64::from(v as u32 ^ (1 << 31));
    u64 => 8, |v| v;
    i64 => 8, |v| v as u64 ^ (1 << 63);
    usize => 8, |v| v as u64;
);

macro_rules! float_key {
    ($($t:ty => $bits:ty, $bytes:expr);*) => {$(
        impl SortKey for $t {
            #[inline(always)]
            fn total_cmp(&self, other: &Self) -> Ordering {
                <$t>::total_cmp(self, other)
            }
            const RADIX_BYTES: u32 = $bytes;
            /// IEEE `totalOrder` as unsigned bits: negative values have every bit flipped
            /// (larger magnitudes become smaller), others only the sign bit.
            #[inline(always)]
            fn radix_key(&self) -> u64 {
                let b = self.to_bits();
                let sign = <$bits>::MAX ^ (<$bits>::MAX >> 1);
                let flip = if b & sign != 0 { <$bits>::MAX } else { sign };
                (b ^ flip) as u64
            }
        }
    )*};
}
float_key!(f16 => u16, 2; bf16 => u16, 2; f32 => u32, 4; f64 => u64, 8);

macro_rules! tuple_key {
    ($($n:tt $t:ident),+) => {
        impl<$($t: SortKey),+> SortKey for ($($t,)+) {
            #[inline(always)]
            fn total_cmp(&self, other: &Self) -> Ordering {
                Ordering::Equal$(.then_with(|| self.$n.total_cmp(&other.$n)))+
            }
        }
    };
}
tuple_key!(0 A);
tuple_key!(0 A, 1 B);
tuple_key!(0 A, 1 B, 2 C);
tuple_key!(0 A, 1 B, 2 C, 3 D);
tuple_key!(0 A, 1 B, 2 C, 3 D, 4 E);
tuple_key!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_key!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_key!(0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);

/// The elements `f(0), ..., f(len - 1)` in ascending order (the result of `prim` at `at`).
pub fn sort<T, F>(len: usize, f: F, prim: &'static str, at: At) -> Vec<T>
where
    T: SortKey,
    F: Fn(usize) -> T + Sync,
{
    let mut out = map(len, f, prim, at);
    if T::RADIX_BYTES > 0 && len >= RADIX_MIN {
        radix_sort(&mut out, T::radix_key, T::RADIX_BYTES);
    } else if len < SORT_GRAIN {
        out.sort_unstable_by(T::total_cmp);
    } else {
        out.par_sort_unstable_by(T::total_cmp);
    }
    out
}

/// The values of the pairs `(key, value) = f(i)`, ordered by ascending key; values with
/// equal keys keep the order of their indices `i` (the result of `prim` at `at`).
pub fn sort_by_key<K, V, F>(len: usize, f: F, prim: &'static str, at: At) -> Vec<V>
where
    K: SortKey,
    V: Copy + Send + Sync,
    F: Fn(usize) -> (K, V) + Sync,
{
    let mut pairs = map(len, f, prim, at);
    let by_key = |a: &(K, V), b: &(K, V)| a.0.total_cmp(&b.0);
    if K::RADIX_BYTES > 0 && len >= RADIX_MIN {
        radix_sort(&mut pairs, |p: &(K, V)| p.0.radix_key(), K::RADIX_BYTES);
    } else if len < SORT_GRAIN {
        pairs.sort_by(by_key);
    } else {
        pairs.par_sort_by(by_key);
    }
    let pairs = &pairs[..];
    // SAFETY: `map` calls the element function only with indices below `len`.
    map(len, |i| unsafe { super::read(pairs, i) }.1, prim, at)
}

/// From this many elements on, scalar keys are sorted by [`radix_sort`].
pub const RADIX_MIN: usize = 1 << 10;

/// From this many elements on, with 4 or more rayon threads, [`radix_sort`] runs in
/// parallel; with 2 or 3 threads from `(4 / threads)^2` times as many (`2^18` elements
/// with 2 threads).
pub const RADIX_PAR_MIN: usize = 1 << 16;

/// The fewest elements per chunk of a parallel [`radix_sort`] pass.
pub const RADIX_CHUNK_MIN: usize = 1 << 14;

/// From this many elements on (and with at least two bytes left to sort), a sequential
/// [`radix_sort`] first partitions by the most significant byte and then sorts the 256
/// parts on their own (a parallel one always does).
pub const RADIX_MSD_MIN: usize = 1 << 19;

/// One 256-bucket histogram of a key byte.
type Counts = [usize; 256];

/// The digit (byte value) of `key` at bit `shift`.
#[inline(always)]
fn digit(key: u64, shift: usize) -> usize {
    ((key >> shift) & 0xff) as usize
}

/// Sorts `items` stably by `key`, of which the low `bytes` bytes matter (at most 8).
///
/// A radix sort of stable counting-sort passes, one per key byte, between `items` and a
/// buffer. One read of the input counts the digits of every byte; a byte in which all keys
/// agree is skipped. A pass scans the counts into the first position of every digit and
/// scatters the elements there in order.
///
/// * Sequentially below [`RADIX_MSD_MIN`] elements: least significant byte first, one
///   pass per byte.
/// * Sequentially from [`RADIX_MSD_MIN`] elements on, and always in parallel: one pass on
///   the most significant byte that matters splits the elements into 256 parts, ordered by
///   that byte; each part is then sorted by the lower bytes on its own, the same way. The
///   parts stay in the caches for their passes, and they are independent: in parallel,
///   threads take whole parts.
/// * In parallel from [`RADIX_PAR_MIN`] elements on (more with 2 or 3 threads): the pass
///   runs over contiguous chunks of the input, one per thread and at least
///   [`RADIX_CHUNK_MIN`] long: each chunk counts its digits, a scan in digit-major,
///   chunk-minor order gives each (digit, chunk) its first position, and the chunks
///   scatter into these disjoint ranges at the same time. Chunk `c`'s elements of a digit
///   land after those of the chunks before it, so the pass stays stable.
///
/// `key` is called several times per element; should it not return the same value each
/// time, the sort panics (it never reads or writes out of place).
pub fn radix_sort<T, K>(items: &mut [T], key: K, bytes: u32)
where
    T: Copy + Send + Sync,
    K: Fn(&T) -> u64 + Sync,
{
    let mut buf: Vec<T> = Vec::with_capacity(items.len());
    let bytes = (bytes as usize).min(8);
    sort_bytes(items, buf.spare_capacity_mut(), &key, 0..bytes, &TUNED);
}

/// The sizes at which [`radix_sort`] changes its method (tests use small ones to reach
/// every method with small inputs).
struct Tuning {
    /// [`RADIX_PAR_MIN`].
    par_min: usize,
    /// [`RADIX_CHUNK_MIN`].
    chunk_min: usize,
    /// [`RADIX_MSD_MIN`].
    msd_min: usize,
}

/// The sizes [`radix_sort`] uses.
const TUNED: Tuning = Tuning {
    par_min: RADIX_PAR_MIN,
    chunk_min: RADIX_CHUNK_MIN,
    msd_min: RADIX_MSD_MIN,
};

/// Sorts `data` stably by the key bytes `bytes` (within `0..8`), using `scratch` (as long
/// as `data`) as the other buffer of the passes: [`radix_sort`].
fn sort_bytes<T, K>(
    data: &mut [T],
    scratch: &mut [MaybeUninit<T>],
    key: &K,
    bytes: Range<usize>,
    t: &Tuning,
) where
    T: Copy + Send + Sync,
    K: Fn(&T) -> u64 + Sync,
{
    let n = data.len();
    if n < 2 || bytes.is_empty() {
        return;
    }
    let threads = threads();
    let chunk = if threads > 1 && n.saturating_mul(threads.min(4).pow(2)) >= 16 * t.par_min {
        n.div_ceil(threads).max(t.chunk_min)
    } else {
        n
    };
    // Per chunk, the histograms of the bytes, then the bytes in which not all keys agree.
    let first = per_chunk(data, chunk, |_, part| count(part, key, bytes.clone()));
    let mut active = Vec::with_capacity(bytes.len());
    for i in 0..bytes.len() {
        let mut total = [0; 256];
        for c in &first {
            for (t, k) in total.iter_mut().zip(&c[i]) {
                *t += k;
            }
        }
        if !total.contains(&n) {
            active.push(i);
        }
    }
    let Some(&top) = active.last() else {
        return;
    };
    let counts_of = |i: usize| -> Vec<Counts> { first.iter().map(|c| c[i]).collect() };
    if (n >= t.msd_min || chunk < n) && active.len() >= 2 {
        let counts = counts_of(top);
        let sorted = pass(data, scratch, key, bytes.start + top, chunk, &counts);
        // The 256 parts of `sorted`, each with its place in `data` as scratch space.
        let mut parts = Vec::with_capacity(256);
        let (mut rest, mut place) = (sorted, &mut *data);
        for d in 0..256 {
            let len = counts.iter().map(|c| c[d]).sum();
            let (part, r) = std::mem::take(&mut rest).split_at_mut(len);
            let (p, pl) = std::mem::take(&mut place).split_at_mut(len);
            parts.push((part, p));
            (rest, place) = (r, pl);
        }
        let lower = bytes.start..bytes.start + top;
        let sort_part = |(part, place): (&mut [T], &mut [T])| {
            sort_bytes(part, as_uninit(place), key, lower.clone(), t);
            place.copy_from_slice(part);
        };
        if chunk < n {
            parts.into_par_iter().with_max_len(1).for_each(sort_part);
        } else {
            parts.into_iter().for_each(sort_part);
        }
        return;
    }
    // Least significant byte first, on one chunk or in one pass: either way the counts of
    // the first read stay the chunks' counts. `in_scratch`: the last pass wrote `scratch`.
    debug_assert!(chunk >= n || active.len() == 1);
    let mut in_scratch = false;
    for &i in &active {
        let (b, counts) = (bytes.start + i, counts_of(i));
        if in_scratch {
            // SAFETY: the last pass initialised all of `scratch` (`pass` checks it).
            let src = unsafe { assume_init(scratch) };
            pass(src, as_uninit(data), key, b, chunk, &counts);
        } else {
            pass(data, scratch, key, b, chunk, &counts);
        }
        in_scratch = !in_scratch;
    }
    if in_scratch {
        // SAFETY: as above.
        data.copy_from_slice(unsafe { assume_init(scratch) });
    }
}

/// `data` as a destination for initialised values.
fn as_uninit<T: Copy>(data: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has the layout of `T`; the callers only write initialised
    // values through the result.
    unsafe { &mut *(data as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// `data` as initialised values.
///
/// # Safety
///
/// Every element of `data` is initialised.
unsafe fn assume_init<T: Copy>(data: &[MaybeUninit<T>]) -> &[T] {
    // SAFETY: guaranteed by the caller; `MaybeUninit<T>` has the layout of `T`.
    unsafe { &*(data as *const [MaybeUninit<T>] as *const [T]) }
}

/// `f(c, part)` for every chunk `part` of `chunk` elements of `src` (the last may be
/// shorter), `c` counting the chunks from 0; in parallel unless `src` is one chunk.
fn per_chunk<T: Sync, R: Send>(
    src: &[T],
    chunk: usize,
    f: impl Fn(usize, &[T]) -> R + Sync,
) -> Vec<R> {
    if chunk >= src.len() {
        vec![f(0, src)]
    } else {
        src.par_chunks(chunk)
            .enumerate()
            .map(|(c, part)| f(c, part))
            .collect()
    }
}

/// The histograms of the key bytes `bytes` (within `0..8`) over `part`, one per byte.
fn count<T>(part: &[T], key: impl Fn(&T) -> u64, bytes: Range<usize>) -> Vec<Counts> {
    // A loop over a constant number of bytes (rounded up to a power of two, the extra
    // bytes counted and dropped) keeps the shifts constant and the inner loop unrolled.
    let mut counts = vec![[0; 256]; bytes.len().next_power_of_two()];
    match counts.len() {
        1 => count_fixed::<T, 1>(part, key, bytes.start, &mut counts),
        2 => count_fixed::<T, 2>(part, key, bytes.start, &mut counts),
        4 => count_fixed::<T, 4>(part, key, bytes.start, &mut counts),
        _ => count_fixed::<T, 8>(part, key, bytes.start, &mut counts),
    }
    counts.truncate(bytes.len());
    counts
}

/// Adds the histograms of the `B` key bytes from byte `lo` on over `part` to the first `B`
/// of `counts`; the bytes from 8 on count as 0.
#[inline(always)]
fn count_fixed<T, const B: usize>(
    part: &[T],
    key: impl Fn(&T) -> u64,
    lo: usize,
    counts: &mut [Counts],
) {
    let counts: &mut [Counts; B] = (&mut counts[..B]).try_into().unwrap();
    for x in part {
        let k = key(x).checked_shr(8 * lo as u32).unwrap_or(0);
        for (b, c) in counts.iter_mut().enumerate() {
            c[digit(k.checked_shr(8 * b as u32).unwrap_or(0), 0)] += 1;
        }
    }
}

/// One stable counting-sort pass on key byte `b`: `src`, split into chunks of `chunk`
/// elements with the histograms `counts` (one per chunk), moved to `dst` (as long as
/// `src`) in the order of that byte; in parallel over the chunks if there are several.
/// Returns `dst`, which the pass initialised.
///
/// Panics if `counts` are not the chunks' histograms (`key` changed its mind), before
/// anything could read an element not written.
fn pass<'a, T, K>(
    src: &[T],
    dst: &'a mut [MaybeUninit<T>],
    key: &K,
    b: usize,
    chunk: usize,
    counts: &[Counts],
) -> &'a mut [T]
where
    T: Copy + Send + Sync,
    K: Fn(&T) -> u64 + Sync,
{
    let n = src.len();
    assert_eq!(dst.len(), n, "radix sort: buffer length");
    assert_eq!(counts.len(), n.div_ceil(chunk), "radix sort: chunks");
    // Where each chunk's elements of each digit go: the exclusive scan of `counts` in
    // digit-major, chunk-minor order. Chunk `c` owns `starts[c][d]..ends[c][d]`.
    let mut starts = vec![[0; 256]; counts.len()];
    let mut next = 0;
    for d in 0..256 {
        for (s, c) in starts.iter_mut().zip(counts) {
            s[d] = next;
            next += c[d];
        }
    }
    assert_eq!(next, n, "radix sort: the key changed between calls");
    let out = Dst(dst.as_mut_ptr().cast::<T>());
    per_chunk(src, chunk, |c, part| {
        let mut end = starts[c];
        for (e, k) in end.iter_mut().zip(&counts[c]) {
            *e += k;
        }
        // SAFETY: the ranges `starts[c][d]..end[d]` of all chunks `c` and digits `d` are
        // disjoint and together make `0..n`, the bounds of `dst`: each chunk writes only
        // its own ranges.
        unsafe { scatter(part, key, 8 * b, starts[c], &end, &out) };
    });
    // SAFETY: every chunk filled each of its ranges (`scatter` checks it), so all of
    // `0..n` is initialised.
    unsafe { &mut *(dst as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// The destination of a radix-sort pass, shared by the chunks that scatter into it.
struct Dst<T>(*mut T);

// SAFETY: the chunks write values of type `T: Send` to disjoint positions (see `pass`), so
// sharing the pointer moves `T`s between threads and nothing else.
unsafe impl<T: Send> Sync for Dst<T> {}

impl<T> Dst<T> {
    /// Writes position `k`.
    ///
    /// # Safety
    ///
    /// `k` is within the destination and no other thread accesses position `k`.
    #[inline(always)]
    unsafe fn write(&self, k: usize, v: T) {
        // SAFETY: guaranteed by the caller.
        unsafe { self.0.add(k).write(v) };
    }
}

/// Writes the elements of `part` in order to `dst`, each at `next[d]` for its digit `d` at
/// bit `shift` of its key, incrementing `next[d]`; panics unless this fills
/// `next[d]..end[d]` exactly, for every digit.
///
/// # Safety
///
/// The positions `next[d]..end[d]` lie within `dst` and no other thread accesses them.
#[inline(always)]
unsafe fn scatter<T: Copy>(
    part: &[T],
    key: impl Fn(&T) -> u64,
    shift: usize,
    mut next: Counts,
    end: &Counts,
    dst: &Dst<T>,
) {
    for x in part {
        let d = digit(key(x), shift);
        let at = next[d];
        assert!(at < end[d], "radix sort: the key changed between calls");
        // SAFETY: `at` is in `next[d]..end[d]`, guaranteed by the caller.
        unsafe { dst.write(at, *x) };
        next[d] = at + 1;
    }
    assert!(next == *end, "radix sort: the key changed between calls");
}

#[cfg(test)]
mod tests {
    //! [`radix_sort`]'s methods against the standard library's stable sort by
    //! [`SortKey::total_cmp`], with small method sizes so that small inputs take the
    //! parallel and most-significant-byte-first paths, in pools of several sizes.

    use super::*;
    use dpl_testkit::{in_pools, mix};
    use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

    /// Method sizes that send small inputs through every path.
    const SMALL: Tuning = Tuning {
        par_min: 64,
        chunk_min: 16,
        msd_min: 256,
    };

    fn sizes() -> Vec<usize> {
        vec![
            0, 1, 2, 3, 15, 16, 17, 63, 64, 65, 100, 255, 256, 257, 1000, 1023, 4097,
        ]
    }

    /// Sorts `(keys[i], i)` by key with [`sort_bytes`] under `t`, and checks the order of
    /// the indices against the standard library's stable sort by `total_cmp`.
    fn check<K: SortKey + std::fmt::Debug>(keys: &[K], t: &Tuning, what: &str) {
        let mut want: Vec<(K, usize)> = keys.iter().copied().zip(0..).collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0));
        let want: Vec<usize> = want.iter().map(|p| p.1).collect();
        in_pools(|| {
            let mut got: Vec<(K, usize)> = keys.iter().copied().zip(0..).collect();
            let mut buf = Vec::with_capacity(got.len());
            let bytes = K::RADIX_BYTES as usize;
            let key = |p: &(K, usize)| p.0.radix_key();
            sort_bytes(&mut got, buf.spare_capacity_mut(), &key, 0..bytes, t);
            let got: Vec<usize> = got.iter().map(|p| p.1).collect();
            assert_eq!(
                got,
                want,
                "{what}, n = {}, {} threads",
                keys.len(),
                rayon::current_num_threads()
            );
        });
    }

    /// Checks `make(n, i)` keys for every size, with both method sizes.
    fn check_all<K: SortKey + std::fmt::Debug>(what: &str, make: impl Fn(usize, u64) -> K) {
        for n in sizes() {
            let keys: Vec<K> = (0..n as u64).map(|i| make(n, i)).collect();
            check(&keys, &SMALL, what);
            check(&keys, &TUNED, what);
        }
    }

    #[test]
    fn random_keys_of_every_width() {
        check_all("u32", |_, i| mix(i) as u32);
        check_all("i32", |_, i| mix(i) as i32);
        check_all("u64", |_, i| mix(i));
        check_all("i64", |_, i| mix(i) as i64);
        check_all("usize", |_, i| mix(i) as usize);
        check_all("bool", |_, i| mix(i).is_multiple_of(3));
    }

    #[test]
    fn ordered_and_equal_keys() {
        check_all("all equal", |_, _| 7u32);
        check_all("all equal i64", |_, _| -5i64);
        check_all("ascending", |_, i| i as u32);
        check_all("descending", |n, i| (n as u64 - i) as i64 - 100);
        check_all("ascending in the high byte", |_, i| (i as u32) << 24);
        check_all("descending, bytes 1 and 6", |n, i| {
            let r = n as u64 - i;
            (r & 0xff) << 8 | (r >> 8 & 0xff) << 48
        });
    }

    #[test]
    fn many_duplicates_keep_their_order() {
        check_all("4 keys", |_, i| (mix(i) % 4) as u32);
        check_all("50 keys", |_, i| (mix(i) % 50) as i32 - 25);
        check_all("2 far keys", |_, i| {
            if mix(i).is_multiple_of(2) {
                0u64
            } else {
                u64::MAX
            }
        });
        // Skewed: most keys in one most-significant bucket, so a part is large.
        check_all("skewed", |_, i| {
            let m = mix(i);
            if m.is_multiple_of(8) {
                m as u32
            } else {
                m as u32 & 0xffff
            }
        });
    }

    #[test]
    fn floats_in_total_order() {
        let special32 = [
            0.0f32,
            -0.0,
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::MAX,
            f32::MIN,
        ];
        check_all("f32", |_, i| match mix(i) % 3 {
            0 => special32[(mix(i + 7) % special32.len() as u64) as usize],
            _ => (mix(i + 1) % 2000) as f32 / 8.0 - 125.0,
        });
        check_all("f32 bits", |_, i| f32::from_bits(mix(i) as u32));
        check_all("f64", |_, i| match mix(i) % 3 {
            0 => f64::from(special32[(mix(i + 7) % special32.len() as u64) as usize]),
            _ => (mix(i + 1) % 2000) as f64 / 8.0 - 125.0,
        });
        check_all("f64 bits", |_, i| f64::from_bits(mix(i)));
        check_all("f16 bits", |_, i| f16::from_bits(mix(i) as u16));
        check_all("bf16 bits", |_, i| bf16::from_bits(mix(i) as u16));
    }

    #[test]
    fn one_byte_keys_sort_by_that_byte() {
        for n in sizes() {
            let x: Vec<u16> = (0..n as u64).map(|i| mix(i) as u16).collect();
            let mut want = x.clone();
            // Only the low byte is the key: stable in the high byte's order of arrival.
            want.sort_by_key(|v| v & 0xff);
            for t in [&SMALL, &TUNED] {
                in_pools(|| {
                    let mut got = x.clone();
                    let mut buf = Vec::with_capacity(n);
                    let key = |v: &u16| u64::from(*v);
                    sort_bytes(&mut got, buf.spare_capacity_mut(), &key, 0..1, t);
                    assert_eq!(got, want, "n = {n}");
                });
            }
        }
    }

    #[test]
    fn a_key_that_changes_panics() {
        for n in [100, 4097] {
            for t in [&SMALL, &TUNED] {
                in_pools(|| {
                    let calls = AtomicU64::new(0);
                    let key = |_: &u32| mix(calls.fetch_add(1, AtomicOrdering::Relaxed));
                    let mut x: Vec<u32> = (0..n).collect();
                    let mut buf = Vec::with_capacity(x.len());
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        sort_bytes(&mut x, buf.spare_capacity_mut(), &key, 0..4, t)
                    }));
                    assert!(r.is_err(), "n = {n}");
                });
            }
        }
    }
}
