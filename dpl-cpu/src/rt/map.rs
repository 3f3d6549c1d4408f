//! `map`: every task writes its chunk of the uninitialised output once.

use super::{At, par};
use dpl_core::nan::Canonical;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// `[f(0), f(1), ..., f(len - 1)]`, the result of `prim` at `at` (named if it cannot be
/// allocated: [`alloc`](super::alloc)).
pub fn map<T, F>(len: usize, f: F, prim: &'static str, at: At) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let mut out: Vec<T> = super::alloc(len, prim, at);
    map_into(&mut out.spare_capacity_mut()[..len], len, f);
    // SAFETY: `map_into` wrote every one of the first `len` slots (it returned normally; a
    // panic in `f` unwinds past this point and the Vec is dropped with length 0, leaking
    // the values written so far, which is safe).
    unsafe { out.set_len(len) };
    out
}

/// `out[j] = f(j)` for every slot of `out`, whose length must be `len`: a `map` written
/// in place, e.g. a row of a ragged result (see [`heavy::ragged`](crate::heavy::ragged)).
/// In parallel above [`GRAIN`](super::GRAIN), like [`map`].
///
/// # Panics
///
/// If `out.len() != len` (the caller computed the row's length differently: a bug of the
/// code generator, reported as an internal error).
pub fn map_into<T, F>(out: &mut [MaybeUninit<T>], len: usize, f: F)
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    super::check_row_len(out.len(), len);
    in_chunks(out, |part, base| fill(part, base, &f));
}

/// `part(chunk, base)` for consecutive chunks of `y` (`base`: the chunk's first index): one
/// chunk below [`GRAIN`](super::GRAIN), else chunks of a quarter of it in parallel, one
/// task each.
fn in_chunks<T: Send, P: Fn(&mut [T], usize) + Sync>(y: &mut [T], part: P) {
    if y.len() < super::GRAIN {
        part(y, 0);
    } else {
        let chunk = par::chunk_len(y.len(), super::GRAIN / 4);
        y.par_chunks_mut(chunk)
            .with_max_len(1)
            .enumerate()
            .for_each(|(c, p)| part(p, c * chunk));
    }
}

/// `out[j] = f(base + j)` for every slot of `out`.
///
/// Never inlined, on purpose: as a function of its own, `out` is a `noalias` parameter, so
/// LLVM knows that the stores cannot change the slices that `f` captured and hoists their
/// loads out of the loop, which is what lets the loop vectorize. Inlined into rayon's
/// closures, that knowledge was lost and the loop ran scalar (measured 2-4x slower).
#[inline(never)]
pub(crate) fn fill<T, F>(out: &mut [MaybeUninit<T>], base: usize, f: &F)
where
    F: Fn(usize) -> T,
{
    for (j, slot) in out.iter_mut().enumerate() {
        slot.write(f(base + j));
    }
}

/// [`map`] of a float element function whose NaNs are left as the arithmetic made them:
/// each task's chunk is written, checked for NaNs in the same loop, and made canonical only
/// if it holds one ([`Canonical`]). The same values as `map` of `|i| f(i).canonical()`;
/// cheaper, as the check vectorizes into two instructions per vector of elements where
/// choosing the canonical NaN takes five.
pub fn map_canon<T, F>(len: usize, f: F, prim: &'static str, at: At) -> Vec<T>
where
    T: Canonical + Send,
    F: Fn(usize) -> T + Sync,
{
    // The split loop with an empty interior: every slot is written by `f`.
    split_with::<T, &F, &F, Canon>(len, 0, 0, &f, &f, prim, at)
}

/// [`fill`], then the NaNs of `out` made canonical (see [`map_canon`]); never inlined, for
/// the reason given at [`fill`].
#[inline(never)]
fn fill_canon<T: Canonical, F: Fn(usize) -> T>(out: &mut [MaybeUninit<T>], base: usize, f: &F) {
    let mut nan = false;
    for (j, slot) in out.iter_mut().enumerate() {
        let v = f(base + j);
        nan |= v.is_nan();
        slot.write(v);
    }
    if nan {
        for slot in out.iter_mut() {
            // SAFETY: the loop above wrote every slot.
            let v = unsafe { slot.assume_init_read() };
            slot.write(v.canonical());
        }
    }
}

/// [`update`] of a float element function whose NaNs are left as the arithmetic made
/// them, made canonical afterwards as in [`map_canon`].
pub fn update_canon<T, F>(y: &mut [T], f: F)
where
    T: Canonical + Send,
    F: Fn(usize, T) -> T + Sync,
{
    in_chunks(y, |part, base| update_part_canon(part, base, &f));
}

/// [`update_part`], then the NaNs of `part` made canonical; never inlined (see [`fill`]).
#[inline(never)]
fn update_part_canon<T: Canonical, F: Fn(usize, T) -> T>(part: &mut [T], base: usize, f: &F) {
    let mut nan = false;
    for (j, slot) in part.iter_mut().enumerate() {
        let v = f(base + j, *slot);
        nan |= v.is_nan();
        *slot = v;
    }
    if nan {
        for slot in part.iter_mut() {
            *slot = slot.canonical();
        }
    }
}

/// `out[j] = f(j, out[j])` for every slot: a `map` over a row just written into `out`
/// (e.g. by [`scan_into`](super::scan_into)), applied in place. In parallel above
/// [`GRAIN`](super::GRAIN).
///
/// # Safety
///
/// Every slot of `out` is initialised.
pub unsafe fn map_in_place<T, F>(out: &mut [MaybeUninit<T>], f: F)
where
    T: Copy + Send,
    F: Fn(usize, T) -> T + Sync,
{
    // SAFETY: every slot is initialised (the caller's contract), and `MaybeUninit<T>` has
    // the layout of `T`; `update` writes only values of `T`.
    let out = unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [T]) };
    update(out, f)
}

/// `y[j] = f(j, y[j])` for every element of `y`: the new value of a `&mut` parameter
/// written in place, when each of its elements depends only on the same element of the
/// old value (see [`codegen`](crate::codegen)'s in-place writes). In parallel above
/// [`GRAIN`](super::GRAIN), like [`map`].
pub fn update<T, F>(y: &mut [T], f: F)
where
    T: Copy + Send,
    F: Fn(usize, T) -> T + Sync,
{
    in_chunks(y, |part, base| update_part(part, base, &f));
}

/// `part[j] = f(base + j, part[j])` for every element of `part`; never inlined, for the
/// reason given at [`fill`]: `part` stays a `noalias` parameter, so the loop vectorizes.
#[inline(never)]
fn update_part<T: Copy, F: Fn(usize, T) -> T>(part: &mut [T], base: usize, f: &F) {
    for (j, slot) in part.iter_mut().enumerate() {
        *slot = f(base + j, *slot);
    }
}

/// [`map`] with two element functions: `interior` for the indices in `lo..hi`, `edge` for
/// the others (they must compute the same values; `interior` is a form the compiler
/// simplified for that range, e.g. a stencil's neighbours without their clamps, so that it
/// vectorizes). Each task's chunk is cut at `lo` and `hi` and each piece filled by its own
/// loop.
#[allow(clippy::too_many_arguments)]
pub fn map_split<T, E, I>(
    len: usize,
    lo: usize,
    hi: usize,
    edge: E,
    interior: I,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Send,
    E: Fn(usize) -> T + Sync,
    I: Fn(usize) -> T + Sync,
{
    split_with::<T, E, I, Plain>(len, lo, hi, edge, interior, prim, at)
}

/// [`map_split`] whose float results are made NaN-canonical after each piece's loop (see
/// [`map_canon`]).
#[allow(clippy::too_many_arguments)]
pub fn map_split_canon<T, E, I>(
    len: usize,
    lo: usize,
    hi: usize,
    edge: E,
    interior: I,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Canonical + Send,
    E: Fn(usize) -> T + Sync,
    I: Fn(usize) -> T + Sync,
{
    split_with::<T, E, I, Canon>(len, lo, hi, edge, interior, prim, at)
}

/// How a piece of a map's output is written: [`fill`] ([`Plain`]) or [`fill_canon`]
/// ([`Canon`]).
trait Filler<T> {
    fn fill<F: Fn(usize) -> T>(out: &mut [MaybeUninit<T>], base: usize, f: &F);
}

/// [`fill`].
struct Plain;

impl<T> Filler<T> for Plain {
    fn fill<F: Fn(usize) -> T>(out: &mut [MaybeUninit<T>], base: usize, f: &F) {
        fill(out, base, f)
    }
}

/// [`fill_canon`].
struct Canon;

impl<T: Canonical> Filler<T> for Canon {
    fn fill<F: Fn(usize) -> T>(out: &mut [MaybeUninit<T>], base: usize, f: &F) {
        fill_canon(out, base, f)
    }
}

/// [`map_split`], each piece written by `W`.
#[allow(clippy::too_many_arguments)]
fn split_with<T, E, I, W>(
    len: usize,
    lo: usize,
    hi: usize,
    edge: E,
    interior: I,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Send,
    E: Fn(usize) -> T + Sync,
    I: Fn(usize) -> T + Sync,
    W: Filler<T>,
{
    let (lo, hi) = split_range(len, lo, hi);
    let mut out: Vec<T> = super::alloc(len, prim, at);
    let spare = &mut out.spare_capacity_mut()[..len];
    let run = |part: &mut [MaybeUninit<T>], base: usize| {
        let (a, b) = cut(base, part.len(), lo, hi);
        let (p0, rest) = part.split_at_mut(a);
        let (p1, p2) = rest.split_at_mut(b - a);
        W::fill(p0, base, &edge);
        W::fill(p1, base + a, &interior);
        W::fill(p2, base + b, &edge);
    };
    in_chunks(spare, run);
    // SAFETY: the three fills of each chunk wrote every one of its slots (see `map`).
    unsafe { out.set_len(len) };
    out
}

/// `lo..hi` made a (possibly empty) sub-range of `0..len`.
#[inline]
fn split_range(len: usize, lo: usize, hi: usize) -> (usize, usize) {
    let hi = hi.min(len);
    (lo.min(hi), hi)
}

/// Where `lo..hi` cuts the chunk `base..base + n`, relative to `base`: `(a, b)`, `a <= b`.
#[inline]
fn cut(base: usize, n: usize, lo: usize, hi: usize) -> (usize, usize) {
    let end = base + n;
    (lo.clamp(base, end) - base, hi.clamp(base, end) - base)
}

macro_rules! map_unzip {
    ($name:ident, $split:ident, $fill:ident, $($T:ident $v:ident $s:ident $k:tt),+) => {
        /// [`map_split`] for `unzip(map(f))`: `interior` on `lo..hi`, `edge` elsewhere.
        #[allow(clippy::too_many_arguments)]
        pub fn $split<$($T: Send,)+ E, I>(
            len: usize,
            lo: usize,
            hi: usize,
            edge: E,
            interior: I,
            prim: &'static str,
            at: At,
        ) -> ($(Vec<$T>,)+)
        where
            E: Fn(usize) -> ($($T,)+) + Sync,
            I: Fn(usize) -> ($($T,)+) + Sync,
        {
            let (lo, hi) = split_range(len, lo, hi);
            let run = |$($s: &mut [MaybeUninit<$T>],)+ base: usize| {
                let n = [$($s.len()),+][0];
                let (a, b) = cut(base, n, lo, hi);
                $(let ($s, rest) = $s.split_at_mut(a);
                let (mid, tail) = rest.split_at_mut(b - a);
                let $s = ($s, mid, tail);)+
                $fill($($s.0,)+ base, &edge);
                $fill($($s.1,)+ base + a, &interior);
                $fill($($s.2,)+ base + b, &edge);
            };
            $(let mut $v: Vec<$T> = super::alloc(len, prim, at);)+
            {
                $(let $s = &mut $v.spare_capacity_mut()[..len];)+
                if len < super::GRAIN {
                    run($($s,)+ 0);
                } else {
                    let chunk = par::chunk_len(len, super::GRAIN / 4);
                    let parts: Vec<($(&mut [MaybeUninit<$T>],)+)> =
                        itertools_zip!($($s.chunks_mut(chunk)),+);
                    parts
                        .into_par_iter()
                        .with_max_len(1)
                        .enumerate()
                        .for_each(|(c, ($($s,)+))| run($($s,)+ c * chunk));
                }
            }
            // SAFETY: the three fills of each chunk wrote every slot of every vector.
            unsafe {
                $($v.set_len(len);)+
            }
            ($($v,)+)
        }

        /// `unzip(map(f))` in one loop: `f(i)` is a tuple, and its components are written
        /// to separate vectors (one per component) by the same loop, instead of a vector of
        /// tuples that projections then copy apart.
        pub fn $name<$($T: Send,)+ F>(len: usize, f: F, prim: &'static str, at: At) -> ($(Vec<$T>,)+)
        where
            F: Fn(usize) -> ($($T,)+) + Sync,
        {
            // The split loop with an empty interior: every slot is filled by `f`.
            $split(len, 0, 0, &f, &f, prim, at)
        }

        /// Writes `f(base + j)`'s components to slot `j` of each output; never inlined,
        /// for the reason given on [`fill`].
        #[inline(never)]
        fn $fill<$($T,)+ F>($($s: &mut [MaybeUninit<$T>],)+ base: usize, f: &F)
        where
            F: Fn(usize) -> ($($T,)+),
        {
            let n = [$($s.len()),+][0];
            $(let $s = &mut $s[..n];)+
            for j in 0..n {
                let t = f(base + j);
                $($s[j].write(t.$k);)+
            }
        }
    };
}

/// Zips 2 or 3 iterators of equal length into a `Vec` of tuples.
macro_rules! itertools_zip {
    ($a:expr, $b:expr) => {
        $a.zip($b).map(|(a, b)| (a, b)).collect()
    };
    ($a:expr, $b:expr, $c:expr) => {
        $a.zip($b).zip($c).map(|((a, b), c)| (a, b, c)).collect()
    };
}

map_unzip!(map_unzip2, map_unzip2_split, fill_unzip2, A a sa 0, B b sb 1);
map_unzip!(map_unzip3, map_unzip3_split, fill_unzip3, A a sa 0, B b sb 1, C c sc 2);

/// [`update`] for `unzip(map(f))`: `f(i, y0[i], y1[i], ...)` is a tuple whose components
/// are the new `y0[i]`, `y1[i]`, ... (several `&mut` parameters written in place by one
/// loop).
macro_rules! update_unzip {
    ($name:ident, $part:ident, $($T:ident $y:ident $k:tt),+) => {
        /// `(y0[j], y1[j], ...) = f(j, y0[j], y1[j], ...)` for every `j`: several `&mut`
        /// parameters written in place by one loop. In parallel above
        /// [`GRAIN`](super::GRAIN).
        ///
        /// # Panics
        ///
        /// If the slices differ in length (a bug of the code generator, reported as an
        /// internal error).
        pub fn $name<$($T: Copy + Send,)+ F>($($y: &mut [$T],)+ f: F)
        where
            F: Fn(usize, $($T,)+) -> ($($T,)+) + Sync,
        {
            let lens = [$($y.len()),+];
            lens.iter().for_each(|&n| super::check_row_len(n, lens[0]));
            let len = lens[0];
            if len < super::GRAIN {
                $part($($y,)+ 0, &f);
            } else {
                let chunk = par::chunk_len(len, super::GRAIN / 4);
                let parts: Vec<($(&mut [$T],)+)> = itertools_zip!($($y.chunks_mut(chunk)),+);
                parts
                    .into_par_iter()
                    .with_max_len(1)
                    .enumerate()
                    .for_each(|(c, ($($y,)+))| $part($($y,)+ c * chunk, &f));
            }
        }

        /// One chunk of the loop; never inlined, for the reason given on [`fill`].
        #[inline(never)]
        fn $part<$($T: Copy,)+ F>($($y: &mut [$T],)+ base: usize, f: &F)
        where
            F: Fn(usize, $($T,)+) -> ($($T,)+),
        {
            let n = [$($y.len()),+][0];
            $(let $y = &mut $y[..n];)+
            for j in 0..n {
                let t = f(base + j, $($y[j],)+);
                $($y[j] = t.$k;)+
            }
        }
    };
}

update_unzip!(update_unzip2, update_unzip2_part, A a 0, B b 1);
update_unzip!(update_unzip3, update_unzip3_part, A a 0, B b 1, C c 2);
