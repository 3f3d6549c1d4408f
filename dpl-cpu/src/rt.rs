//! Run-time helpers called by the CPU code that `#[parallel]` generates.
//!
//! Every helper works over an *index space* `0..len` and takes the fused element function
//! `f: Fn(usize) -> T` as a closure, so one helper call is one loop with no temporaries;
//! LLVM inlines `f` into the helper's loops. Small index spaces run sequentially on the
//! calling thread (no rayon overhead below [`GRAIN`]).
//!
//! Contract violations are raised with [`raise`], which unwinds with the [`Error`] as
//! payload (without running the panic hook); the generated entry point catches it with
//! [`run`] and either returns it (`-> Result<_, dpl::Error>`) or panics with its message.

use dpl_core::run::{Error, Location};
use rayon::prelude::*;

/// Index spaces smaller than this run sequentially on the calling thread.
pub const GRAIN: usize = 1 << 15;

/// Raises a contract violation: unwinds to the nearest [`run`] with `e` as payload.
#[cold]
#[inline(never)]
pub fn raise(e: Error) -> ! {
    std::panic::resume_unwind(Box::new(e))
}

/// Runs `body`, turning an [`Error`] raised inside it (on any thread) into `Err`. Other
/// panics pass through unchanged.
pub fn run<T>(body: impl FnOnce() -> T) -> Result<T, Error> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(v) => Ok(v),
        Err(payload) => match payload.downcast::<Error>() {
            Ok(e) => Err(*e),
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}

/// Runs `body`; an [`Error`] raised inside becomes an ordinary panic with its message.
#[track_caller]
pub fn run_or_panic<T>(body: impl FnOnce() -> T) -> T {
    match run(body) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

/// Integer types usable as indices (`idx` arguments and `x[i]`).
pub trait Idx: Copy + Send + Sync {
    /// The index as a `usize` if it is below `len`.
    fn checked(self, len: usize) -> Option<usize>;
    /// The value, for messages.
    fn value(self) -> i128;
}

macro_rules! impl_idx {
    ($($t:ty),*) => {$(
        impl Idx for $t {
            #[inline(always)]
            fn checked(self, len: usize) -> Option<usize> {
                #[allow(irrefutable_let_patterns, clippy::unnecessary_fallible_conversions)]
                match usize::try_from(self) {
                    Ok(i) if i < len => Some(i),
                    _ => None,
                }
            }
            #[inline(always)]
            fn value(self) -> i128 {
                self as i128
            }
        }
    )*};
}
impl_idx!(i32, u32, i64, u64, usize);

/// `seq[i]` with a bounds check that raises [`Error::IndexOutOfRange`] for `prim`.
#[inline(always)]
pub fn index<T: Copy, I: Idx>(seq: &[T], i: I, prim: &'static str, at: Location) -> T {
    match i.checked(seq.len()) {
        Some(i) => seq[i],
        None => index_error(prim, i.value(), seq.len(), at),
    }
}

/// Raises [`Error::IndexOutOfRange`].
#[cold]
#[inline(never)]
pub fn index_error(prim: &'static str, index: i128, len: usize, at: Location) -> ! {
    raise(Error::IndexOutOfRange { prim, index, len, at })
}

/// `seq[i]` without a bounds check.
///
/// # Safety
///
/// `i < seq.len()`.
#[inline(always)]
pub unsafe fn read<T: Copy>(seq: &[T], i: usize) -> T {
    debug_assert!(i < seq.len());
    // SAFETY: the caller guarantees `i < seq.len()`.
    unsafe { *seq.get_unchecked(i) }
}

/// Raises [`Error::LengthMismatch`] unless `a == b`.
#[inline]
pub fn check_eq_len(prim: &'static str, a: usize, b: usize, at: Location) {
    if a != b {
        raise(Error::LengthMismatch { prim, left: a, right: b, at })
    }
}

/// Raises [`Error::Empty`] if `len == 0`.
#[inline]
pub fn check_non_empty(prim: &'static str, len: usize, at: Location) {
    if len == 0 {
        raise(Error::Empty { prim, at })
    }
}

/// Raises [`Error::IndexOutOfRange`] for the first element of `idx` that is not below `len`.
pub fn check_indices<I: Idx>(idx: &[I], len: usize, prim: &'static str, at: Location) {
    let bad = |c: &[I]| c.iter().position(|i| i.checked(len).is_none());
    let found = if idx.len() < GRAIN {
        bad(idx)
    } else {
        idx.par_chunks(GRAIN)
            .enumerate()
            .filter_map(|(k, c)| bad(c).map(|p| k * GRAIN + p))
            .min()
    };
    if let Some(p) = found {
        index_error(prim, idx[p].value(), len, at)
    }
}

/// `[f(0), f(1), ..., f(len - 1)]`.
pub fn map<T, F>(len: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    if len < GRAIN {
        (0..len).map(f).collect()
    } else {
        (0..len).into_par_iter().with_min_len(GRAIN / 4).map(&f).collect()
    }
}

/// `init op f(0) op f(1) ...` in unspecified order (`op` associative and commutative).
/// Without `init`, an empty index space raises [`Error::Empty`] for `prim`.
pub fn reduce<T, F, Op>(
    len: usize,
    init: Option<T>,
    f: F,
    op: Op,
    prim: &'static str,
    at: Location,
) -> T
where
    T: Copy + Send,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let fold = |r: std::ops::Range<usize>| -> Option<T> {
        let mut it = r.map(&f);
        let first = it.next()?;
        Some(it.fold(first, &op))
    };
    let total = if len < GRAIN {
        fold(0..len)
    } else {
        let chunks = len.div_ceil(GRAIN);
        (0..chunks)
            .into_par_iter()
            .filter_map(|c| fold(c * GRAIN..((c + 1) * GRAIN).min(len)))
            .reduce_with(&op)
    };
    match (init, total) {
        (Some(i), Some(t)) => op(i, t),
        (Some(i), None) => i,
        (None, Some(t)) => t,
        (None, None) => raise(Error::Empty { prim, at }),
    }
}

/// Inclusive scan: `y[0] = f(0)`, `y[i] = op(y[i-1], f(i))` (`op` associative).
pub fn scan<T, F, Op>(len: usize, f: F, op: Op) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let mut out: Vec<T> = map(len, &f);
    if len < GRAIN {
        for i in 1..len {
            out[i] = op(out[i - 1], out[i]);
        }
        return out;
    }
    // Two passes over chunks: scan each chunk, then add the carried prefix.
    out.par_chunks_mut(GRAIN).for_each(|c| {
        for i in 1..c.len() {
            c[i] = op(c[i - 1], c[i]);
        }
    });
    let totals: Vec<T> = out.chunks(GRAIN).map(|c| c[c.len() - 1]).collect();
    let mut carries = Vec::with_capacity(totals.len());
    let mut acc: Option<T> = None;
    for t in totals {
        carries.push(acc);
        acc = Some(match acc {
            Some(a) => op(a, t),
            None => t,
        });
    }
    out.par_chunks_mut(GRAIN).zip(carries).for_each(|(c, carry)| {
        if let Some(k) = carry {
            for v in c.iter_mut() {
                *v = op(k, *v);
            }
        }
    });
    out
}

/// Exclusive scan: `y[0] = init`, `y[i] = op(y[i-1], f(i-1))`; length `len`.
pub fn exclusive_scan<T, F, Op>(len: usize, init: T, f: F, op: Op) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(usize) -> T + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    if len == 0 {
        return Vec::new();
    }
    let inclusive = scan(len - 1, &f, &op);
    let mut out = Vec::with_capacity(len);
    out.push(init);
    out.extend(inclusive.into_iter().map(|v| op(init, v)));
    out
}

/// The elements `f(i)` for which `pred` holds, in order.
pub fn filter<T, F, P>(len: usize, f: F, pred: P) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
    P: Fn(&T) -> bool + Sync,
{
    if len < GRAIN {
        (0..len).map(f).filter(|v| pred(v)).collect()
    } else {
        (0..len)
            .into_par_iter()
            .with_min_len(GRAIN / 4)
            .map(&f)
            .filter(|v| pred(v))
            .collect()
    }
}

/// A copy of `dst` with `dst[k] = v` for every `(k, v) = f(i)`; an index out of range of
/// `dst` raises for `prim`. With repeated indices, which write wins is unspecified.
pub fn scatter<I, T, F>(len: usize, f: F, dst: &[T], prim: &'static str, at: Location) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync,
    F: Fn(usize) -> (I, T) + Sync,
{
    let mut out = dst.to_vec();
    for i in 0..len {
        let (k, v) = f(i);
        match k.checked(out.len()) {
            Some(k) => out[k] = v,
            None => index_error(prim, k.value(), out.len(), at),
        }
    }
    out
}

/// A copy of `dst` with `dst[k] = op(dst[k], v)` for every `(k, v) = f(i)`.
pub fn scatter_reduce<I, T, F, Op>(
    len: usize,
    f: F,
    dst: &[T],
    op: Op,
    prim: &'static str,
    at: Location,
) -> Vec<T>
where
    I: Idx,
    T: Copy + Send + Sync,
    F: Fn(usize) -> (I, T) + Sync,
    Op: Fn(T, T) -> T + Sync,
{
    let mut out = dst.to_vec();
    for i in 0..len {
        let (k, v) = f(i);
        match k.checked(out.len()) {
            Some(k) => out[k] = op(out[k], v),
            None => index_error(prim, k.value(), out.len(), at),
        }
    }
    out
}

/// `y[k] = v` for every `(k, v) = f(i)`, where the `k` must be a permutation of `0..len`
/// (raises [`Error::NotAPermutation`] or [`Error::IndexOutOfRange`] otherwise).
pub fn permute<I, T, F>(len: usize, f: F, prim: &'static str, at: Location) -> Vec<T>
where
    I: Idx,
    T: Send,
    F: Fn(usize) -> (I, T) + Sync,
{
    let mut slots: Vec<Option<T>> = (0..len).map(|_| None).collect();
    for i in 0..len {
        let (k, v) = f(i);
        let Some(k) = k.checked(len) else { index_error(prim, k.value(), len, at) };
        if slots[k].replace(v).is_some() {
            raise(Error::NotAPermutation { prim, detail: format!("index {k} appears twice"), at })
        }
    }
    // Every slot is filled: `len` distinct indices below `len`.
    slots.into_iter().map(|s| s.expect("permutation slot filled")).collect()
}
