//! `sort` and `sort_by_key`: the elements are materialised (the element function runs once
//! per index, in parallel like [`map`](super::map)), then ordered.
//!
//! The order is [`SortKey::total_cmp`], the same on every place: integers and `bool` as
//! Rust orders them, floats by IEEE 754 `totalOrder` (`f32::total_cmp`), tuples
//! lexicographically.
//!
//! * **sort**: two elements that compare equal in this order are bit-for-bit identical
//!   (`total_cmp` tells `-0.0` from `+0.0` and NaNs apart by their payload), so a stable
//!   and an unstable sort give the same result and the faster unstable one is used
//!   (rayon's parallel pattern-defeating quicksort above [`SORT_GRAIN`]).
//! * **sort_by_key**: equal keys keep the index order of their values, so the `(key,
//!   value)` pairs are sorted with a stable sort (rayon's parallel merge sort above
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
}

macro_rules! ord_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            #[inline(always)]
            fn total_cmp(&self, other: &Self) -> Ordering {
                Ord::cmp(self, other)
            }
        }
    )*};
}
ord_key!(bool, i32, u32, i64, u64, usize);

macro_rules! float_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            #[inline(always)]
            fn total_cmp(&self, other: &Self) -> Ordering {
                <$t>::total_cmp(self, other)
            }
        }
    )*};
}
float_key!(f32, f64);

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
    if len < SORT_GRAIN {
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
    if len < SORT_GRAIN {
        pairs.sort_by(by_key);
    } else {
        pairs.par_sort_by(by_key);
    }
    let pairs = &pairs[..];
    // SAFETY: `map` calls the element function only with indices below `len`.
    map(len, |i| unsafe { super::read(pairs, i) }.1)
}
