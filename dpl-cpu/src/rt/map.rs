//! `map`: every task writes its chunk of the uninitialised output once.

use super::isa::chunk_loop;
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
    in_chunks(out, |part, base| fill(part, base, &f, Keep));
}

/// Slices cut into chunks together, at the same indices: one slice, or the outputs of one
/// loop (those of `unzip(map(f))`, one per component, all of one length).
pub(crate) trait Parts: Sized + Send {
    /// The length (of the first slice).
    fn len(&self) -> usize;
    /// The parts before `mid` and from `mid` on.
    fn split_at(self, mid: usize) -> (Self, Self);
}

impl<T: Send> Parts for &mut [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        self.split_at_mut(mid)
    }
}

impl<A: Parts, B: Parts> Parts for (A, B) {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let ((a0, a1), (b0, b1)) = (self.0.split_at(mid), self.1.split_at(mid));
        ((a0, b0), (a1, b1))
    }
}

impl<A: Parts, B: Parts, C: Parts> Parts for (A, B, C) {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let ((a0, a1), (b0, b1)) = (self.0.split_at(mid), self.1.split_at(mid));
        let (c0, c1) = self.2.split_at(mid);
        ((a0, b0, c0), (a1, b1, c1))
    }
}

/// `part(chunk, base)` for consecutive chunks of `y` (`base`: the chunk's first index): one
/// chunk below [`GRAIN`](super::GRAIN), else chunks of a quarter of it in parallel, one
/// task each.
fn in_chunks<S: Parts, P: Fn(S, usize) + Sync>(y: S, part: P) {
    let len = y.len();
    if len < super::GRAIN {
        return part(y, 0);
    }
    let chunk = par::chunk_len(len, super::GRAIN / 4);
    let mut chunks = Vec::with_capacity(len.div_ceil(chunk));
    let mut rest = y;
    while rest.len() > chunk {
        let (head, tail) = rest.split_at(chunk);
        chunks.push(head);
        rest = tail;
    }
    chunks.push(rest);
    chunks
        .into_par_iter()
        .with_max_len(1)
        .enumerate()
        .for_each(|(c, p)| part(p, c * chunk));
}

/// How a loop treats the NaNs of the float values it stores. [`Keep`]: as they are (values
/// only moved keep their bits; other types have no NaNs). [`Canon`]: the values an element
/// function computed are stored as the arithmetic made them, the loop notes whether the run
/// it wrote holds a NaN, and only then rewrites the run with every NaN canonical
/// ([`Canonical`]): the same values as making each element canonical, cheaper, as the check
/// vectorizes into two instructions per vector of elements where choosing the canonical NaN
/// takes five. The loops writing one output per component (`map_unzip2_canon`, ...) take
/// one per component, e.g. `(Canon, Keep)` for a computed float and an integer.
pub trait Nans<T>: Copy + Send + Sync {
    /// Whether `v` is a NaN that this treatment rewrites (never, for [`Keep`]).
    fn nan(v: &T) -> bool;
    /// `v` as stored: canonical if a NaN, for [`Canon`] (the per-element form of the
    /// sequential run time, [`seq`](crate::seq)).
    fn canonical(v: T) -> T;
    /// Makes every value of `run` as stored (after a loop that found a NaN in it).
    fn rewrite(run: &mut [T]);
}

/// NaNs stored as they are (see [`Nans`]).
#[derive(Clone, Copy, Debug)]
pub struct Keep;

impl<T> Nans<T> for Keep {
    #[inline(always)]
    fn nan(_: &T) -> bool {
        false
    }
    #[inline(always)]
    fn canonical(v: T) -> T {
        v
    }
    #[inline(always)]
    fn rewrite(_: &mut [T]) {}
}

/// NaNs made canonical after the loop (see [`Nans`]).
#[derive(Clone, Copy, Debug)]
pub struct Canon;

impl<T: Canonical> Nans<T> for Canon {
    #[inline(always)]
    fn nan(v: &T) -> bool {
        v.is_nan()
    }
    #[inline(always)]
    fn canonical(v: T) -> T {
        v.canonical()
    }
    #[inline]
    fn rewrite(run: &mut [T]) {
        for v in run {
            *v = v.canonical();
        }
    }
}

/// `run`, every slot of which a loop wrote, as its values.
///
/// # Safety
///
/// Every slot of `run` is initialised.
#[inline(always)]
unsafe fn written<T>(run: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: every slot is initialised (the caller's contract), and `MaybeUninit<T>` has
    // the layout of `T`.
    unsafe { &mut *(run as *mut [MaybeUninit<T>] as *mut [T]) }
}

chunk_loop! {
    /// `out[j] = f(base + j)` for every slot of `out`, its NaNs treated by `W` ([`Nans`]);
    /// never inlined, and compiled twice ([`chunk_loop!`]).
    pub(crate) fn fill[T, F, W](out: &mut [MaybeUninit<T>], base: usize, f: &F, _nans: W)
    where [F: Fn(usize) -> T, W: Nans<T>]
    {
        let mut nan = false;
        for (j, slot) in out.iter_mut().enumerate() {
            let v = f(base + j);
            nan |= W::nan(&v);
            slot.write(v);
        }
        if nan {
            // SAFETY: the loop above wrote every slot.
            W::rewrite(unsafe { written(out) });
        }
    }
}

/// [`map`] of a float element function whose NaNs are left as the arithmetic made them:
/// each task's chunk is written, checked for NaNs in the same loop, and made canonical only
/// if it holds one ([`Canon`]). The same values as `map` of `|i| f(i).canonical()`.
pub fn map_canon<T, F>(len: usize, f: F, prim: &'static str, at: At) -> Vec<T>
where
    T: Canonical + Send,
    F: Fn(usize) -> T + Sync,
{
    // The split loop with an empty interior: every slot is written by `f`.
    split_with(len, 0, 0, &f, &f, Canon, prim, at)
}

/// [`update`] of a float element function whose NaNs are left as the arithmetic made
/// them, made canonical afterwards as in [`map_canon`].
pub fn update_canon<T, F>(y: &mut [T], f: F)
where
    T: Canonical + Send,
    F: Fn(usize, T) -> T + Sync,
{
    in_chunks(y, |part, base| update_part(part, base, &f, Canon));
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
    // SAFETY: every slot is initialised (the caller's contract); `update` writes only
    // values of `T`.
    update(unsafe { written(out) }, f)
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
    in_chunks(y, |part, base| update_part(part, base, &f, Keep));
}

chunk_loop! {
    /// `part[j] = f(base + j, part[j])` for every element of `part`, its NaNs treated by
    /// `W`; never inlined, and compiled twice ([`chunk_loop!`]), as [`fill`].
    fn update_part[T: Copy, F: Fn(usize, T) -> T, W: Nans<T>](
        part: &mut [T],
        base: usize,
        f: &F,
        _nans: W,
    ) where []
    {
        let mut nan = false;
        for (j, slot) in part.iter_mut().enumerate() {
            let v = f(base + j, *slot);
            nan |= W::nan(&v);
            *slot = v;
        }
        if nan {
            W::rewrite(part);
        }
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
    split_with(len, lo, hi, edge, interior, Keep, prim, at)
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
    split_with(len, lo, hi, edge, interior, Canon, prim, at)
}

/// [`map_split`], the NaNs of each piece treated by `nans`.
#[allow(clippy::too_many_arguments)]
fn split_with<T, E, I, W>(
    len: usize,
    lo: usize,
    hi: usize,
    edge: E,
    interior: I,
    nans: W,
    prim: &'static str,
    at: At,
) -> Vec<T>
where
    T: Send,
    E: Fn(usize) -> T + Sync,
    I: Fn(usize) -> T + Sync,
    W: Nans<T>,
{
    let range = split_range(len, lo, hi);
    let mut out: Vec<T> = super::alloc(len, prim, at);
    let spare = &mut out.spare_capacity_mut()[..len];
    in_chunks(spare, |part, base| {
        fill_split(part, base, range, &edge, &interior, nans)
    });
    // SAFETY: the three fills of each chunk wrote every one of its slots (see `map`).
    unsafe { out.set_len(len) };
    out
}

/// `lo..hi` made a (possibly empty) sub-range of `0..len`.
#[inline]
pub(crate) fn split_range(len: usize, lo: usize, hi: usize) -> (usize, usize) {
    let hi = hi.min(len);
    (lo.min(hi), hi)
}

/// `part[j] = f(base + j)` for every slot of `part`, with `f` the element function
/// `interior` on `lo..hi` (`(lo, hi)`: from [`split_range`]) and `edge` elsewhere, the NaNs
/// of each piece treated by `W` after its loop ([`fill`]).
pub(crate) fn fill_split<T, E, I, W>(
    part: &mut [MaybeUninit<T>],
    base: usize,
    (lo, hi): (usize, usize),
    edge: &E,
    interior: &I,
    nans: W,
) where
    E: Fn(usize) -> T,
    I: Fn(usize) -> T,
    W: Nans<T>,
{
    let (a, b) = cut(base, part.len(), lo, hi);
    let (p0, rest) = part.split_at_mut(a);
    let (p1, p2) = rest.split_at_mut(b - a);
    fill(p0, base, edge, nans);
    fill(p1, base + a, interior, nans);
    fill(p2, base + b, edge, nans);
}

/// Where `lo..hi` cuts the chunk `base..base + n`, relative to `base`: `(a, b)`, `a <= b`.
#[inline]
fn cut(base: usize, n: usize, lo: usize, hi: usize) -> (usize, usize) {
    let end = base + n;
    (lo.clamp(base, end) - base, hi.clamp(base, end) - base)
}

/// [`Keep`], once per component named (the NaN treatment of the loops without `_canon`).
macro_rules! keep {
    ($T:ident) => {
        Keep
    };
}

macro_rules! map_unzip {
    (
        $name:ident, $canon:ident, $split:ident, $split_canon:ident, $fill:ident,
        $fill_split:ident, $reduce:ident,
        $($T:ident $N:ident $v:ident $s:ident $nan:ident $k:tt),+
    ) => {
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
            $split_canon(len, lo, hi, edge, interior, ($(keep!($T),)+), prim, at)
        }

        /// [`map_split`] for `unzip(map(f))`, the NaNs of each component treated by its
        /// part of `nans` ([`Nans`]: [`Canon`] for the float components whose NaNs the
        /// element function leaves as the arithmetic made them, [`Keep`] for the others),
        /// after each piece's loop.
        #[allow(clippy::too_many_arguments)]
        pub fn $split_canon<$($T: Send, $N: Nans<$T>,)+ E, I>(
            len: usize,
            lo: usize,
            hi: usize,
            edge: E,
            interior: I,
            nans: ($($N,)+),
            prim: &'static str,
            at: At,
        ) -> ($(Vec<$T>,)+)
        where
            E: Fn(usize) -> ($($T,)+) + Sync,
            I: Fn(usize) -> ($($T,)+) + Sync,
        {
            let range = split_range(len, lo, hi);
            let run = |slots: ($(&mut [MaybeUninit<$T>],)+), base: usize| {
                $fill_split(slots, base, range, &edge, &interior, nans)
            };
            $(let mut $v: Vec<$T> = super::alloc(len, prim, at);)+
            in_chunks(($(&mut $v.spare_capacity_mut()[..len],)+), run);
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
            $split_canon(len, 0, 0, &f, &f, ($(keep!($T),)+), prim, at)
        }

        /// The `unzip(map(f))` loop, the NaNs of each component treated by its part of
        /// `nans` (see the split form).
        pub fn $canon<$($T: Send, $N: Nans<$T>,)+ F>(
            len: usize,
            f: F,
            nans: ($($N,)+),
            prim: &'static str,
            at: At,
        ) -> ($(Vec<$T>,)+)
        where
            F: Fn(usize) -> ($($T,)+) + Sync,
        {
            $split_canon(len, 0, 0, &f, &f, nans, prim, at)
        }

        /// [`fill_split`] for `unzip(map(f))`: the slots `base..` of every output written
        /// by `interior` on `lo..hi` (from [`split_range`]), by `edge` elsewhere.
        fn $fill_split<$($T, $N: Nans<$T>,)+ E, I>(
            ($($s,)+): ($(&mut [MaybeUninit<$T>],)+),
            base: usize,
            (lo, hi): (usize, usize),
            edge: &E,
            interior: &I,
            nans: ($($N,)+),
        )
        where
            E: Fn(usize) -> ($($T,)+),
            I: Fn(usize) -> ($($T,)+),
        {
            let n = [$($s.len()),+][0];
            let (a, b) = cut(base, n, lo, hi);
            $(let ($s, rest) = $s.split_at_mut(a);
            let (mid, tail) = rest.split_at_mut(b - a);
            let $s = ($s, mid, tail);)+
            $fill($($s.0,)+ base, edge, nans);
            $fill($($s.1,)+ base + a, interior, nans);
            $fill($($s.2,)+ base + b, edge, nans);
        }

        /// [`map_reduce_split`](super::map_reduce_split) for `unzip(map(f))`: the map's
        /// components written to one vector each (their NaNs treated by `nans`, as in the
        /// split form), and the reduction `g(i, y0[i], y1[i], ...)` of each tile while it is
        /// in the cache, in dpl's order.
        #[allow(clippy::too_many_arguments)]
        pub fn $reduce<$($T: Copy + Send, $N: Nans<$T>,)+ E, I, R, G, Op>(
            len: usize,
            (lo, hi): (usize, usize),
            edge: E,
            interior: I,
            nans: ($($N,)+),
            init: Option<R>,
            g: G,
            op: Op,
            (map_prim, map_at): (&'static str, At),
            prim: &'static str,
            at: At,
        ) -> (($(Vec<$T>,)+), R)
        where
            E: Fn(usize) -> ($($T,)+) + Sync,
            I: Fn(usize) -> ($($T,)+) + Sync,
            R: Copy + Send,
            G: Fn(usize, $($T,)+) -> R + Sync,
            Op: Fn(R, R) -> R + Sync,
        {
            let range = split_range(len, lo, hi);
            $(let mut $v: Vec<$T> = super::alloc(len, map_prim, map_at);)+
            let tile = |t: usize, ($($s,)+): ($(&mut [MaybeUninit<$T>],)+)| -> R {
                let start = t * dpl_core::order::TILE;
                $fill_split(($(&mut *$s,)+), start, range, &edge, &interior, nans);
                $(
                    // SAFETY: the fill wrote every slot of the tile's outputs;
                    // `MaybeUninit<T>` has the layout of `T`.
                    let $s = unsafe { &*(&*$s as *const [MaybeUninit<$T>] as *const [$T]) };
                )+
                let element = |i: usize| {
                    $(
                        // SAFETY: `order::tile` passes the tile's indices, `start` to
                        // `start` + the tile's length.
                        let $nan = *unsafe { $s.get_unchecked(i - start) };
                    )+
                    g(i, $($nan,)+)
                };
                dpl_core::order::tile(len, t, &element, &op)
            };
            let slots = ($(&mut $v.spare_capacity_mut()[..len],)+);
            let total = super::reduce::reduce_tiles(len, slots, tile, &op, prim, at);
            // SAFETY: every tile's slots were written (a panic unwinds past this point and
            // drops the vectors with length 0; the components are `Copy`).
            unsafe {
                $($v.set_len(len);)+
            }
            (($($v,)+), super::with_init(init, total, &op, prim, at))
        }

        chunk_loop! {
            /// Writes `f(base + j)`'s components to slot `j` of each output, then rewrites
            /// the outputs in which their treatment found a NaN ([`Nans`]); never inlined,
            /// and compiled twice ([`chunk_loop!`]), as [`fill`].
            fn $fill[$($T, $N: Nans<$T>,)+ F](
                $($s: &mut [MaybeUninit<$T>],)+
                base: usize,
                f: &F,
                _nans: ($($N,)+),
            )
            where [F: Fn(usize) -> ($($T,)+)]
            {
                        let n = [$($s.len()),+][0];
                $(let $s = &mut $s[..n];
                let mut $nan = false;)+
                for j in 0..n {
                    let t = f(base + j);
                    $($nan |= $N::nan(&t.$k);
                    $s[j].write(t.$k);)+
                }
                $(if $nan {
                    // SAFETY: the loop above wrote every slot.
                    $N::rewrite(unsafe { written($s) });
                })+
            }
        }
    };
}

map_unzip!(
    map_unzip2, map_unzip2_canon, map_unzip2_split, map_unzip2_split_canon, fill_unzip2,
    fill_split_unzip2, map_unzip2_reduce,
    A NA a sa na 0, B NB b sb nb 1
);
map_unzip!(
    map_unzip3, map_unzip3_canon, map_unzip3_split, map_unzip3_split_canon, fill_unzip3,
    fill_split_unzip3, map_unzip3_reduce,
    A NA a sa na 0, B NB b sb nb 1, C NC c sc nc 2
);

/// [`update`] for `unzip(map(f))`: `f(i, y0[i], y1[i], ...)` is a tuple whose components
/// are the new `y0[i]`, `y1[i]`, ... (several `&mut` parameters written in place by one
/// loop).
macro_rules! update_unzip {
    ($name:ident, $canon:ident, $part:ident, $($T:ident $N:ident $y:ident $nan:ident $k:tt),+) => {
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
            $canon($($y,)+ f, ($(keep!($T),)+))
        }

        /// The in-place loop of several `&mut` parameters, the NaNs of each component
        /// treated by its part of `nans` after each chunk's loop ([`Nans`]; as
        /// [`update_canon`] for one).
        ///
        /// # Panics
        ///
        /// If the slices differ in length (see the form without `_canon`).
        pub fn $canon<$($T: Copy + Send, $N: Nans<$T>,)+ F>(
            $($y: &mut [$T],)+
            f: F,
            nans: ($($N,)+),
        )
        where
            F: Fn(usize, $($T,)+) -> ($($T,)+) + Sync,
        {
            let lens = [$($y.len()),+];
            lens.iter().for_each(|&n| super::check_row_len(n, lens[0]));
            in_chunks(($($y,)+), |($($y,)+), base| $part($($y,)+ base, &f, nans));
        }

        chunk_loop! {
            /// One chunk of the loop, then the components in which their treatment found a
            /// NaN rewritten; never inlined, and compiled twice ([`chunk_loop!`]), as
            /// [`fill`].
            fn $part[$($T: Copy, $N: Nans<$T>,)+ F](
                $($y: &mut [$T],)+
                base: usize,
                f: &F,
                _nans: ($($N,)+),
            )
            where [F: Fn(usize, $($T,)+) -> ($($T,)+)]
            {
                        let n = [$($y.len()),+][0];
                $(let $y = &mut $y[..n];
                let mut $nan = false;)+
                for j in 0..n {
                    let t = f(base + j, $($y[j],)+);
                    $($nan |= $N::nan(&t.$k);
                    $y[j] = t.$k;)+
                }
                $(if $nan {
                    $N::rewrite($y);
                })+
            }
        }
    };
}

update_unzip!(update_unzip2, update_unzip2_canon, update_unzip2_part, A NA a na 0, B NB b nb 1);
update_unzip!(
    update_unzip3, update_unzip3_canon, update_unzip3_part,
    A NA a na 0, B NB b nb 1, C NC c nc 2
);
