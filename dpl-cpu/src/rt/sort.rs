//! `sort` and `sort_by_key`: the elements are materialised (the element function runs once
//! per index, in parallel like [`map`](super::map)), then ordered.
//!
//! The order is [`SortKey::total_cmp`], the same on every place: integers and `bool` as
//! Rust orders them, floats by IEEE 754 `totalOrder` (`f32::total_cmp`), tuples
//! lexicographically.
//!
//! * Scalar keys (every integer type, `bool`, floats) from [`RADIX_MIN`] elements on:
//!   a stable least-significant-digit [`radix_sort`] over the key's bytes mapped to an
//!   unsigned integer in the same order ([`SortKey::radix_key`]), on the calling thread.
//!   Measured with `benches/sort.rs` on the loaded 2-core machine, it beat rayon's
//!   parallel sorts 1.5-2x at 2^20 elements and 2-7x at 2^16 (sequential passes of a
//!   histogram and a scatter per byte, against `n log n` comparisons on two cores).
//! * Other keys (tuples, compared lexicographically) with `sort`: two elements that compare
//!   equal are bit-for-bit identical (`total_cmp` tells `-0.0` from `+0.0` and NaNs apart
//!   by their payload), so a stable and an unstable sort give the same result and the
//!   faster unstable one is used (rayon's parallel pattern-defeating quicksort above
//!   [`SORT_GRAIN`]).
//! * Other keys with `sort_by_key`: equal keys keep the index order of their values, so the
//!   `(key, value)` pairs are sorted with a stable sort (rayon's parallel merge sort above
//!   [`SORT_GRAIN`]), then the values are copied out in parallel.

use super::map;
use rayon::prelude::*;
use std::cmp::Ordering;

/// Below this many elements a sort runs sequentially on the calling thread: sorting costs
/// `n log n` comparisons, so parallelism pays off earlier than for the streaming helpers
/// ([`GRAIN`](super::GRAIN)).
pub const SORT_GRAIN: usize = 1 << 14;

/// Values `sort` and `sort_by_key` can order: the scalars of the language and tuples of
/// them, in the total order described in the [module docs](self).
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
float_key!(f32 => u32, 4; f64 => u64, 8);

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

/// The elements `f(0), ..., f(len - 1)` in ascending order.
pub fn sort<T, F>(len: usize, f: F) -> Vec<T>
where
    T: SortKey,
    F: Fn(usize) -> T + Sync,
{
    let mut out = map(len, f);
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
/// equal keys keep the order of their indices `i`.
pub fn sort_by_key<K, V, F>(len: usize, f: F) -> Vec<V>
where
    K: SortKey,
    V: Copy + Send + Sync,
    F: Fn(usize) -> (K, V) + Sync,
{
    let mut pairs = map(len, f);
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
    map(len, |i| unsafe { super::read(pairs, i) }.1)
}

/// From this many elements on, scalar keys are sorted by [`radix_sort`].
pub const RADIX_MIN: usize = 1 << 10;

/// Sorts `items` stably by `key` (of which the low `bytes` bytes matter): a sequential
/// least-significant-digit radix sort, one pass of a 256-bucket histogram and a stable
/// scatter per byte, between `items` and a buffer; a byte in which every key agrees is
/// skipped.
pub fn radix_sort<T: Copy>(items: &mut [T], key: impl Fn(&T) -> u64, bytes: u32) {
    let n = items.len();
    if n < 2 {
        return;
    }
    let mut buf: Vec<T> = items.to_vec();
    // Whether the sorted data is in `buf` (after an odd number of passes).
    let mut in_buf = false;
    for byte in 0..bytes {
        let shift = 8 * byte;
        let (src, dst): (&[T], &mut [T]) = if in_buf {
            (&buf[..], &mut *items)
        } else {
            (&*items, &mut buf[..])
        };
        let mut count = [0usize; 256];
        for x in src {
            count[((key(x) >> shift) & 0xff) as usize] += 1;
        }
        if count.contains(&n) {
            continue;
        }
        let mut next = 0;
        for c in &mut count {
            let here = *c;
            *c = next;
            next += here;
        }
        for x in src {
            let d = ((key(x) >> shift) & 0xff) as usize;
            dst[count[d]] = *x;
            count[d] += 1;
        }
        in_buf = !in_buf;
    }
    if in_buf {
        items.copy_from_slice(&buf);
    }
}
