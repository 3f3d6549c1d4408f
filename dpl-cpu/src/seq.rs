//! The sequential reference run time: the same helper API as [`rt`](crate::rt), written
//! as the plainest possible in-order loops on one thread.
//!
//! `Place::Seq` runs the *unfused* program on these helpers, so it serves as the
//! deterministic reference the parallel place is compared with: reductions and scans
//! combine in dpl's one order ([`dpl_core::order`]), as every place does, scatters apply
//! writes in index order (the last write wins), sorts are the standard library's stable
//! sort.
//!
//! The helpers are also the inner loops of nested levels on `Place::Cpu` (the default
//! schedule runs every level below the outermost sequentially): they are `#[inline]` so
//! that a per-row loop compiles into the row's closure instead of a call per row.

use dpl_core::nan::Canonical;
use dpl_core::run::Error;
use std::mem::MaybeUninit;

pub use crate::rt::{
    At, Canon, Idx, Keep, Nans, SortKey, alloc, check_eq_len, check_non_empty, check_row_len,
    index, index_error, raise, read, run, run_or_panic,
};

/// Raises [`Error::IndexOutOfRange`] for the first element of `idx` not below `len`.
#[inline]
pub fn check_indices<I: Idx>(idx: &[I], len: usize, prim: &'static str, at: At) {
    for &i in idx {
        if i.checked(len).is_none() {
            index_error(prim, i.value(), len, at)
        }
    }
}

/// `[f(0), ..., f(len - 1)]`, the result of `prim` at `at` (named if it cannot be
/// allocated: [`alloc`]).
#[inline]
pub fn map<T, F: Fn(usize) -> T>(len: usize, f: F, prim: &'static str, at: At) -> Vec<T> {
    let mut out = alloc(len, prim, at);
    // A `Range` is `TrustedLen`: `extend` writes without capacity checks.
    out.extend((0..len).map(f));
    out
}

/// [`map`] of `|i| f(i).canonical()`: the float element function's NaNs made canonical
/// (see [`rt::map_canon`](crate::rt::map_canon)).
#[inline]
pub fn map_canon<T: Canonical, F: Fn(usize) -> T>(
    len: usize,
    f: F,
    prim: &'static str,
    at: At,
) -> Vec<T> {
    map(len, |i| f(i).canonical(), prim, at)
}

/// `out[j] = f(j)` for every slot of `out` (length `len`, checked): a row of a ragged
/// result written in place (see [`heavy::ragged`](crate::heavy::ragged)).
#[inline]
pub fn map_into<T, F: Fn(usize) -> T>(out: &mut [MaybeUninit<T>], len: usize, f: F) {
    check_row_len(out.len(), len);
    for (j, slot) in out.iter_mut().enumerate() {
        slot.write(f(j));
    }
}

/// `out[j] = f(j, out[j])` for every slot, in order: a `map` over a row just written into
/// `out`, applied in place.
///
/// # Safety
///
/// Every slot of `out` is initialised.
#[inline]
pub unsafe fn map_in_place<T: Copy, F: Fn(usize, T) -> T>(out: &mut [MaybeUninit<T>], f: F) {
    // SAFETY: every slot is initialised (the caller's contract), and `MaybeUninit<T>` has
    // the layout of `T`; `update` writes only values of `T`.
    update(
        unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [T]) },
        f,
    )
}

/// `y[j] = f(j, y[j])` for every element, in order: the new value of a `&mut` parameter
/// written in place (see [`rt::update`](crate::rt::update)).
#[inline]
pub fn update<T: Copy, F: Fn(usize, T) -> T>(y: &mut [T], f: F) {
    for (j, slot) in y.iter_mut().enumerate() {
        *slot = f(j, *slot);
    }
}

/// [`update`] of `|j, v| f(j, v).canonical()` (see
/// [`rt::update_canon`](crate::rt::update_canon)).
#[inline]
pub fn update_canon<T: Canonical, F: Fn(usize, T) -> T>(y: &mut [T], f: F) {
    update(y, |j, v| f(j, v).canonical())
}

/// `(a[j], b[j]) = f(j, a[j], b[j])` for every `j`, in order: two `&mut` parameters
/// written in place by one loop (see [`rt::update_unzip2`](crate::rt::update_unzip2)).
#[inline]
pub fn update_unzip2<A: Copy, B: Copy, F: Fn(usize, A, B) -> (A, B)>(
    a: &mut [A],
    b: &mut [B],
    f: F,
) {
    check_row_len(b.len(), a.len());
    for j in 0..a.len() {
        (a[j], b[j]) = f(j, a[j], b[j]);
    }
}

/// `(a[j], b[j], c[j]) = f(j, a[j], b[j], c[j])` for every `j`, in order (see
/// [`rt::update_unzip3`](crate::rt::update_unzip3)).
#[inline]
pub fn update_unzip3<A: Copy, B: Copy, C: Copy, F: Fn(usize, A, B, C) -> (A, B, C)>(
    a: &mut [A],
    b: &mut [B],
    c: &mut [C],
    f: F,
) {
    check_row_len(b.len(), a.len());
    check_row_len(c.len(), a.len());
    for j in 0..a.len() {
        (a[j], b[j], c[j]) = f(j, a[j], b[j], c[j]);
    }
}

/// [`update_unzip2`] with each component's NaNs treated by its part of `nans`, at every
/// element (see [`rt::update_unzip2_canon`](crate::rt::update_unzip2_canon)).
#[inline]
pub fn update_unzip2_canon<A: Copy, B: Copy, NA: Nans<A>, NB: Nans<B>, F>(
    a: &mut [A],
    b: &mut [B],
    f: F,
    _: (NA, NB),
) where
    F: Fn(usize, A, B) -> (A, B),
{
    update_unzip2(a, b, |j, x, y| {
        let (x, y) = f(j, x, y);
        (NA::canonical(x), NB::canonical(y))
    })
}

/// [`update_unzip3`] with each component's NaNs treated by its part of `nans`, at every
/// element (see [`rt::update_unzip3_canon`](crate::rt::update_unzip3_canon)).
#[inline]
pub fn update_unzip3_canon<A: Copy, B: Copy, C: Copy, NA: Nans<A>, NB: Nans<B>, NC: Nans<C>, F>(
    a: &mut [A],
    b: &mut [B],
    c: &mut [C],
    f: F,
    _: (NA, NB, NC),
) where
    F: Fn(usize, A, B, C) -> (A, B, C),
{
    update_unzip3(a, b, c, |j, x, y, z| {
        let (x, y, z) = f(j, x, y, z);
        (NA::canonical(x), NB::canonical(y), NC::canonical(z))
    })
}

/// Inclusive scan written into `out` (length `len`, checked): in dpl's order
/// ([`dpl_core::order::scan`]) when `ordered` (a type holding floats), else left to right
/// (an integer scan, whose result does not depend on the order).
#[inline]
pub fn scan_into<T: Copy, F: Fn(usize) -> T, Op: Fn(T, T) -> T>(
    out: &mut [MaybeUninit<T>],
    len: usize,
    f: F,
    op: Op,
    ordered: bool,
) {
    check_row_len(out.len(), len);
    if ordered {
        dpl_core::order::scan::scan_into(out, None, &f, &op);
    } else if len > 0 {
        left_to_right(out, f(0), &|j| f(j), &op);
    }
}

/// Exclusive scan written into `out` (length `len`, checked): `out[0] = init`, then the
/// inclusive scan from `init` of `f(0) .. f(len - 2)` (in dpl's order when `ordered`);
/// `f(len - 1)` is computed for its errors.
#[inline]
pub fn exclusive_scan_into<T: Copy, F: Fn(usize) -> T, Op: Fn(T, T) -> T>(
    out: &mut [MaybeUninit<T>],
    len: usize,
    init: T,
    f: F,
    op: Op,
    ordered: bool,
) {
    check_row_len(out.len(), len);
    if len == 0 {
        return;
    }
    if ordered {
        out[0].write(init);
        dpl_core::order::scan::scan_into(&mut out[1..], Some(init), &f, &op);
    } else {
        left_to_right(out, init, &|j| f(j - 1), &op);
    }
    std::hint::black_box(f(len - 1));
}

/// `out[0] = seed`, `out[j] = op(out[j - 1], h(j))`; `out` not empty.
#[inline]
fn left_to_right<T: Copy>(
    out: &mut [MaybeUninit<T>],
    seed: T,
    h: &impl Fn(usize) -> T,
    op: &impl Fn(T, T) -> T,
) {
    let mut acc = seed;
    out[0].write(acc);
    for (j, slot) in out.iter_mut().enumerate().skip(1) {
        acc = op(acc, h(j));
        slot.write(acc);
    }
}

/// Appends the elements `f(i)` (`i < len`) satisfying `pred` to `out`, in order: a row of
/// a ragged result written into a buffer shared with the rows before it (see
/// [`heavy::ragged_push`](crate::heavy::ragged_push)). Branch-free for types without drop
/// glue.
#[inline]
pub fn filter_push<T, F: Fn(usize) -> T, P: Fn(&T) -> bool>(
    out: &mut Vec<T>,
    len: usize,
    f: F,
    pred: P,
    prim: &'static str,
    at: At,
) {
    crate::rt::reserve(out, len, prim, at);
    let start = out.len();
    let kept = crate::rt::compact(&mut out.spare_capacity_mut()[..len], 0, &f, &pred);
    // SAFETY: `compact` wrote the first `kept` spare slots, right after the `start`
    // initialised elements.
    unsafe { out.set_len(start + kept) };
}

/// `unzip(map(f))` for pairs: the components of `f(i)` in two vectors, in order.
#[inline]
pub fn map_unzip2<A, B, F: Fn(usize) -> (A, B)>(
    len: usize,
    f: F,
    prim: &'static str,
    at: At,
) -> (Vec<A>, Vec<B>) {
    let (mut a, mut b) = (alloc(len, prim, at), alloc(len, prim, at));
    for i in 0..len {
        let (x, y) = f(i);
        a.push(x);
        b.push(y);
    }
    (a, b)
}

/// `unzip(map(f))` for triples: the components of `f(i)` in three vectors, in order.
#[inline]
pub fn map_unzip3<A, B, C, F: Fn(usize) -> (A, B, C)>(
    len: usize,
    f: F,
    prim: &'static str,
    at: At,
) -> (Vec<A>, Vec<B>, Vec<C>) {
    let mut a = alloc(len, prim, at);
    let mut b = alloc(len, prim, at);
    let mut c = alloc(len, prim, at);
    for i in 0..len {
        let (x, y, z) = f(i);
        a.push(x);
        b.push(y);
        c.push(z);
    }
    (a, b, c)
}

/// [`map_unzip2`] with each component's NaNs treated by its part of `nans`, at every
/// element (see [`rt::map_unzip2_canon`](crate::rt::map_unzip2_canon)).
#[inline]
pub fn map_unzip2_canon<A, B, NA: Nans<A>, NB: Nans<B>, F: Fn(usize) -> (A, B)>(
    len: usize,
    f: F,
    _: (NA, NB),
    prim: &'static str,
    at: At,
) -> (Vec<A>, Vec<B>) {
    let g = |i| {
        let (x, y) = f(i);
        (NA::canonical(x), NB::canonical(y))
    };
    map_unzip2(len, g, prim, at)
}

/// [`map_unzip3`] with each component's NaNs treated by its part of `nans`, at every
/// element (see [`rt::map_unzip3_canon`](crate::rt::map_unzip3_canon)).
#[inline]
pub fn map_unzip3_canon<A, B, C, NA, NB, NC, F>(
    len: usize,
    f: F,
    _: (NA, NB, NC),
    prim: &'static str,
    at: At,
) -> (Vec<A>, Vec<B>, Vec<C>)
where
    NA: Nans<A>,
    NB: Nans<B>,
    NC: Nans<C>,
    F: Fn(usize) -> (A, B, C),
{
    let g = |i| {
        let (x, y, z) = f(i);
        (NA::canonical(x), NB::canonical(y), NC::canonical(z))
    };
    map_unzip3(len, g, prim, at)
}

/// `init op f(0) op f(1) ...` in dpl's order ([`dpl_core::order`]), as on every place.
/// Without `init`, an empty index space raises [`Error::Empty`].
#[inline]
pub fn reduce<T: Copy, F: Fn(usize) -> T, Op: Fn(T, T) -> T>(
    len: usize,
    init: Option<T>,
    f: F,
    op: Op,
    prim: &'static str,
    at: At,
) -> T {
    crate::rt::with_init(init, dpl_core::order::reduce(len, &f, &op), &op, prim, at)
}

/// The number of `i` in `0..len` with `f(i)`, counted in order.
#[inline]
pub fn count<F: Fn(usize) -> bool>(len: usize, f: F) -> usize {
    (0..len).filter(|&i| f(i)).count()
}

/// Inclusive scan, in dpl's order when `ordered` (the result of `prim` at `at`).
#[inline]
pub fn scan<T: Copy, F: Fn(usize) -> T, Op: Fn(T, T) -> T>(
    len: usize,
    f: F,
    op: Op,
    ordered: bool,
    prim: &'static str,
    at: At,
) -> Vec<T> {
    let mut out: Vec<T> = alloc(len, prim, at);
    scan_into(&mut out.spare_capacity_mut()[..len], len, f, op, ordered);
    // SAFETY: `scan_into` wrote every slot; a panic unwinds past this point.
    unsafe { out.set_len(len) };
    out
}

/// Exclusive scan: `y[0] = init`, then the inclusive scan from `init` of all elements but
/// the last, in dpl's order when `ordered` (the result of `prim` at `at`).
#[inline]
pub fn exclusive_scan<T: Copy, F: Fn(usize) -> T, Op: Fn(T, T) -> T>(
    len: usize,
    init: T,
    f: F,
    op: Op,
    ordered: bool,
    prim: &'static str,
    at: At,
) -> Vec<T> {
    let mut out: Vec<T> = alloc(len, prim, at);
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

/// The elements satisfying `pred`, in order (the result of `prim` at `at`; room for all
/// `len` is reserved up front, as the parallel [`rt::filter`](crate::rt::filter) does).
#[inline]
pub fn filter<T, F: Fn(usize) -> T, P: Fn(&T) -> bool>(
    len: usize,
    f: F,
    pred: P,
    prim: &'static str,
    at: At,
) -> Vec<T> {
    let mut out = alloc(len, prim, at);
    for i in 0..len {
        let v = f(i);
        if pred(&v) {
            out.push(v);
        }
    }
    if out.capacity() - out.len() > 1024 {
        out.shrink_to_fit();
    }
    out
}

/// A copy of `dst` with the writes `(k, v) = f(i)` applied in order of `i`.
pub fn scatter<I: Idx, T: Copy, F: Fn(usize) -> (I, T)>(
    len: usize,
    f: F,
    dst: &[T],
    prim: &'static str,
    at: At,
) -> Vec<T> {
    scatter_reduce(len, f, dst, |_, v| v, prim, at)
}

/// A copy of `dst` with `dst[k] = op(dst[k], v)` applied in order of `i`.
pub fn scatter_reduce<I: Idx, T: Copy, F: Fn(usize) -> (I, T), Op: Fn(T, T) -> T>(
    len: usize,
    f: F,
    dst: &[T],
    op: Op,
    prim: &'static str,
    at: At,
) -> Vec<T> {
    let mut out = alloc(dst.len(), prim, at);
    out.extend_from_slice(dst);
    for i in 0..len {
        let (k, v) = f(i);
        match k.checked(out.len()) {
            Some(k) => out[k] = op(out[k], v),
            None => index_error(prim, k.value(), out.len(), at),
        }
    }
    out
}

/// [`scatter_reduce`]; `identity` (the identity of `op`) is what the parallel helper needs,
/// an in-order loop does not.
#[inline]
pub fn scatter_reduce_identity<I: Idx, T: Copy, F: Fn(usize) -> (I, T), Op: Fn(T, T) -> T>(
    len: usize,
    f: F,
    dst: &[T],
    op: Op,
    _identity: T,
    prim: &'static str,
    at: At,
) -> Vec<T> {
    scatter_reduce(len, f, dst, op, prim, at)
}

/// `y[k] = v` for `(k, v) = f(i)`; the `k` must be a permutation of `0..len`.
pub fn permute<I: Idx, T, F: Fn(usize) -> (I, T)>(
    len: usize,
    f: F,
    prim: &'static str,
    at: At,
) -> Vec<T> {
    let mut slots: Vec<Option<T>> = alloc(len, prim, at);
    slots.extend((0..len).map(|_| None));
    for i in 0..len {
        let (k, v) = f(i);
        let Some(k) = k.checked(len) else {
            index_error(prim, k.value(), len, at)
        };
        if slots[k].replace(v).is_some() {
            raise(Error::NotAPermutation {
                prim,
                detail: format!("index {k} appears twice"),
                at: *at,
            })
        }
    }
    // `len` distinct indices below `len` fill every slot.
    slots.into_iter().flatten().collect()
}

/// The elements `f(0), ..., f(len - 1)` in ascending [`SortKey`] order (stable).
#[inline]
pub fn sort<T: SortKey, F: Fn(usize) -> T>(len: usize, f: F, prim: &'static str, at: At) -> Vec<T> {
    let mut out = map(len, f, prim, at);
    out.sort_by(T::total_cmp);
    out
}

/// The values of the pairs `(key, value) = f(i)`, ordered by ascending key; values with
/// equal keys keep the order of their indices (stable).
#[inline]
pub fn sort_by_key<K: SortKey, V, F: Fn(usize) -> (K, V)>(
    len: usize,
    f: F,
    prim: &'static str,
    at: At,
) -> Vec<V> {
    let mut pairs = map(len, f, prim, at);
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    pairs.into_iter().map(|(_, v)| v).collect()
}
