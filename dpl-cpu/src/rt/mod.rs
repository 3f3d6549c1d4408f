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
//!
//! # How the helpers are made fast
//!
//! The machine this was tuned on has 2 cores, a ~7 us cost for any rayon call made from
//! outside the pool, and a memory system that one core cannot saturate. The shapes that
//! reach its bandwidth (measured, see `BENCHMARKS.md` and `benches/notes.md`) are:
//!
//! * **reduce** ([`reduce`]): dpl's one order ([`dpl_core::order`]: tiles of 2048
//!   elements, 32 lanes and a tree in each, the tiles' results reduced the same way), so
//!   the bits do not depend on the threads; a tile's 32 lanes are independent
//!   accumulators over consecutive elements, the loop LLVM vectorizes. Tiles are the
//!   tasks, a few chunks of them per thread.
//! * **a kept map and its reduction** ([`map_reduce`], [`map_reduce_split`]): each tile is
//!   written by the map's loop and reduced in the same order while it is in the L1 cache.
//! * **map** ([`map`]): each task writes its chunk of the uninitialised output `Vec`
//!   exactly once (no zero-filling, no `collect` machinery).
//! * **AVX2 where the CPU has it** ([`isa`]): a user's crate is built for the baseline
//!   x86-64 (SSE2, four `f32` per vector) unless it asks for more; the chunk loops of the
//!   maps, unzips and in-place writes (and the column loops of `heavy`'s blocked row
//!   reductions) are compiled a second time for AVX2 and chosen at run time, computing the
//!   same bits.
//! * **unzip of a map** ([`map_unzip2`], [`map_unzip3`]): the same, writing each component
//!   of the element function's tuple to its own output (`unzip(map(f))`, and the maps that
//!   horizontal fusion merged) in one loop.
//! * **scan** ([`scan`], [`exclusive_scan`]): scan-then-propagate over cache-sized chunks
//!   grouped in blocks: every chunk is scanned locally in blocks of 4 with an in-register
//!   Hillis-Steele step (needs only associativity), the chunk totals are combined
//!   sequentially, and the carry is applied while the chunk is still in cache. The
//!   propagation of one block runs in the same parallel step as the local scans of the
//!   next, so there is one synchronisation per block and the element function runs once
//!   per element.
//! * **filter** ([`filter`]): the same blocked pipeline; a chunk compacts its survivors
//!   branch-free into a reusable buffer, the counts give the output offsets, and the
//!   buffers move into place in the next step.
//! * **scatter** ([`scatter`], [`scatter_reduce`]): the destination is split into one part
//!   per thread, each with one writer that applies the pairs landing in it in source
//!   order (so the result is exactly the sequential one, also for floating-point
//!   `scatter_reduce`): with up to 4 threads each owner runs through the whole source,
//!   with more the source is bucketed by part first. Small destinations (histograms) use
//!   one private copy per contiguous source range instead, merged in order.
//! * **permute** ([`permute`]): as `scatter`, each slot marked when written (a byte per
//!   slot up to 4,096 slots, a bit beyond) and the marks counted at the end: `len` indices
//!   below `len` are a permutation exactly when every slot was marked. With more than 4
//!   threads, a shared bitmap claimed with atomic `fetch_or` gives each slot to exactly one
//!   writer; a duplicate stops the call.
//! * **sort** ([`sort`], [`sort_by_key`]): the elements are materialised like a map, then
//!   ordered in the total order of [`SortKey`]: scalar keys by a stable [`radix_sort`]
//!   (least significant byte first for small inputs; large ones partition by the top byte,
//!   in parallel over chunks, then sort the 256 parts in the caches, in parallel), tuple
//!   keys by rayon's parallel sorts (unstable for `sort`, where equal elements are
//!   identical; stable merge sort for `sort_by_key`).
//!
//! Errors found in parallel are reported as the sequential reference reports them: the
//! first offending element in index order.

use dpl_core::run::{Error, Location};

mod filter;
pub mod isa;
mod map;
mod par;
mod reduce;
mod scan;
mod scatter;
mod sort;

pub(crate) use filter::compact;
pub use filter::{filter, filter_push};
pub(crate) use map::fill;
pub use map::{
    Canon, Keep, Nans, map, map_canon, map_in_place, map_into, map_split, map_split_canon,
    map_unzip2, map_unzip2_canon, map_unzip2_reduce, map_unzip2_split, map_unzip2_split_canon,
    map_unzip3, map_unzip3_canon, map_unzip3_reduce, map_unzip3_split, map_unzip3_split_canon,
    update, update_canon, update_unzip2, update_unzip2_canon, update_unzip3, update_unzip3_canon,
};
pub use reduce::{count, map_reduce, map_reduce_split, reduce, with_init};
pub use scan::{exclusive_scan, exclusive_scan_into, scan, scan_into};
pub use scatter::{permute, scatter, scatter_reduce, scatter_reduce_identity};
pub use sort::{
    RADIX_CHUNK_MIN, RADIX_MIN, RADIX_MSD_MIN, RADIX_PAR_MIN, SORT_GRAIN, SortKey, radix_sort,
    sort, sort_by_key,
};

/// Where a contract violation is reported: a source position of the `#[parallel]` body.
///
/// Passed by reference to a promoted constant (`&Location { .. }` in generated code), so a
/// checked read costs one pointer-sized constant on its cold path instead of three stored
/// fields.
pub type At = &'static Location;

/// The location the unit tests of the run time pass where generated code passes the
/// user's.
#[cfg(test)]
pub(crate) static TEST_AT: Location = Location {
    file: "test",
    line: 1,
    column: 1,
};

/// Index spaces smaller than this run sequentially on the calling thread.
///
/// Measured on the 2-core machine (min-of-N timings, called from outside the pool): a
/// rayon call costs 7-15 us before any work is done; at 2^16 elements a parallel saxpy
/// took 20.7 us against 8.8 us sequentially (rayon's own `par_iter` 19.7 us), and a
/// parallel copy lost likewise. With ~9 us of sequential work per 2^16 elements and a
/// call cost of that order, the break-even is near 2^17 for the cheapest streaming loops.
/// Costlier element functions pay off earlier: the code generator sends maps of elements
/// it estimates costly (a loop, software arithmetic) to `heavy::map`, which goes parallel
/// by their estimated work instead.
pub const GRAIN: usize = 1 << 17;

/// Raises a contract violation: unwinds to the nearest [`run`] with `e` as payload.
#[cold]
#[inline(never)]
pub fn raise(e: Error) -> ! {
    std::panic::resume_unwind(Box::new(e))
}

/// An empty `Vec` with room for exactly `len` elements: a result or temporary of `prim`.
///
/// Where the size overflows the address space or the allocator refuses it, raises
/// [`Error::OutOfMemory`] instead of aborting the process as `Vec::with_capacity` does.
#[inline]
pub fn alloc<T>(len: usize, prim: &'static str, at: At) -> Vec<T> {
    let mut v = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        out_of_memory(len as u128 * std::mem::size_of::<T>() as u128, prim, at)
    }
    v
}

/// Makes room in `out` for `more` elements (growing it as `Vec::reserve` does), raising
/// [`Error::OutOfMemory`] for `prim` where that fails.
#[inline]
pub fn reserve<T>(out: &mut Vec<T>, more: usize, prim: &'static str, at: At) {
    if out.try_reserve(more).is_err() {
        let len = out.len() as u128 + more as u128;
        out_of_memory(len * std::mem::size_of::<T>() as u128, prim, at)
    }
}

/// Raises [`Error::OutOfMemory`] for `bytes` bytes.
#[cold]
#[inline(never)]
pub fn out_of_memory(bytes: u128, prim: &'static str, at: At) -> ! {
    raise(Error::OutOfMemory {
        prim,
        bytes,
        at: *at,
    })
}

/// `*y = v` for a `&mut [T]` parameter of a `#[parallel]` function: copies the new value
/// into the slice, which keeps its length (another length is [`Error::LengthMismatch`] at
/// `at`, the assignment, and the slice is left unchanged).
pub fn write_slice<T: Copy>(y: &mut [T], v: Vec<T>, at: Location) -> Result<(), Error> {
    if y.len() != v.len() {
        return Err(Error::LengthMismatch {
            prim: "*y = e",
            left: y.len(),
            right: v.len(),
            at,
        });
    }
    y.copy_from_slice(&v);
    Ok(())
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
    /// Whether the index is below `len` (a branch-free test that vectorizes).
    #[inline(always)]
    fn in_range(self, len: usize) -> bool {
        self.checked(len).is_some()
    }
}

macro_rules! impl_idx {
    ($($t:ty),*) => {$(
        impl Idx for $t {
            #[inline(always)]
            fn checked(self, len: usize) -> Option<usize> {
                if self.in_range(len) { Some(self as usize) } else { None }
            }
            #[inline(always)]
            fn value(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            fn in_range(self, len: usize) -> bool {
                // A negative signed index sign-extends to a huge `u64`, above any length.
                (self as u64) < (len as u64)
            }
        }
    )*};
}
impl_idx!(i8, u8, i16, u16, i32, u32, i64, u64, usize);

/// `seq[i]` with a bounds check that raises [`Error::IndexOutOfRange`] for `prim`.
#[inline(always)]
pub fn index<T: Copy, I: Idx>(seq: &[T], i: I, prim: &'static str, at: At) -> T {
    match i.checked(seq.len()) {
        Some(i) => seq[i],
        None => index_error(prim, i.value(), seq.len(), at),
    }
}

/// Raises [`Error::IndexOutOfRange`].
#[cold]
#[inline(never)]
pub fn index_error(prim: &'static str, index: i128, len: usize, at: At) -> ! {
    raise(Error::IndexOutOfRange {
        prim,
        index,
        len,
        at: *at,
    })
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

/// Row `i` of a ragged sequence given as its flat `values` and its row `offsets`, without
/// checks: how generated code reads the rows of `Nested` parameters that share one offsets
/// array (`dpl::Nested::same_offsets`), so that zipped rows come from one pair of offset
/// loads and have visibly equal lengths (the per-row length comparison folds away).
///
/// # Safety
///
/// `i + 1 < offsets.len()`, `offsets` non-decreasing and `offsets[offsets.len() - 1] <=
/// values.len()` (the invariants of a `dpl::Nested` built on these offsets).
#[inline(always)]
pub unsafe fn shared_row<'a, T>(values: &'a [T], offsets: &[usize], i: usize) -> &'a [T] {
    debug_assert!(i + 1 < offsets.len());
    // SAFETY: by the caller's promise `i + 1` indexes `offsets`, and `lo <= hi <= values.len()`.
    unsafe {
        let lo = *offsets.get_unchecked(i);
        let hi = *offsets.get_unchecked(i + 1);
        debug_assert!(lo <= hi && hi <= values.len());
        values.get_unchecked(lo..hi)
    }
}

/// Raises [`Error::LengthMismatch`] unless `a == b`.
#[inline]
pub fn check_eq_len(prim: &'static str, a: usize, b: usize, at: At) {
    if a != b {
        raise(Error::LengthMismatch {
            prim,
            left: a,
            right: b,
            at: *at,
        })
    }
}

/// Panics (an internal error) unless a row's buffer has the length its producer computes.
///
/// The `*_into` helpers write a row of a ragged result into the slot that
/// [`heavy::ragged`](crate::heavy::ragged) sized from the same statements beforehand, so
/// the lengths agree by construction; the check keeps a code-generator bug from leaving
/// slots uninitialised.
#[inline(always)]
pub fn check_row_len(buffer: usize, len: usize) {
    if buffer != len {
        row_len_mismatch(buffer, len)
    }
}

#[cold]
#[inline(never)]
fn row_len_mismatch(buffer: usize, len: usize) -> ! {
    panic!("dpl internal error: a row of a ragged result was sized {buffer} but has {len} elements")
}

/// Raises [`Error::Empty`] if `len == 0`.
#[inline]
pub fn check_non_empty(prim: &'static str, len: usize, at: At) {
    if len == 0 {
        raise(Error::Empty { prim, at: *at })
    }
}

/// Raises [`Error::IndexOutOfRange`] for the first element of `idx` that is not below `len`.
///
/// The scan is a branch-free "any out of range" over blocks (it vectorizes), in parallel
/// above [`GRAIN`]; only on failure is the first offending element located.
pub fn check_indices<I: Idx>(idx: &[I], len: usize, prim: &'static str, at: At) {
    if any_out_of_range(idx, len) {
        let p = idx
            .iter()
            .position(|i| !i.in_range(len))
            .expect("an index is out of range");
        index_error(prim, idx[p].value(), len, at)
    }
}

/// Whether some element of `idx` is not below `len`.
fn any_out_of_range<I: Idx>(idx: &[I], len: usize) -> bool {
    use rayon::prelude::*;
    fn seq<I: Idx>(idx: &[I], len: usize) -> bool {
        // Blocks of 256 with an OR accumulator vectorize; the early exit per block keeps a
        // failing call short.
        idx.chunks(256)
            .any(|c| c.iter().fold(false, |bad, i| bad | !i.in_range(len)))
    }
    if idx.len() < GRAIN {
        seq(idx, len)
    } else {
        let chunk = par::chunk_len(idx.len(), GRAIN / 4);
        idx.par_chunks(chunk).any(|c| seq(c, len))
    }
}
