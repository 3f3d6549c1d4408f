//! How index spaces are cut into parallel tasks.
//!
//! Tasks are contiguous chunks: contiguous ranges keep every thread on its own streams of
//! memory and let each chunk run the vectorized sequential kernels. A few chunks per
//! thread (rather than exactly one) let rayon's work stealing even out a thread slowed by
//! other tenants of the machine.

/// Chunks per rayon thread for one-pass helpers (map, reduce, ...).
const CHUNKS_PER_THREAD: usize = 4;

/// The number of rayon threads that the current call can use.
#[inline]
pub(crate) fn threads() -> usize {
    rayon::current_num_threads().max(1)
}

/// The length of the chunks that split `len` elements into a few tasks per thread, at
/// least `min_chunk` long, rounded up to a multiple of 64 (so chunks of the usual element
/// types start on cache-line boundaries relative to the start of the data).
#[inline]
pub(crate) fn chunk_len(len: usize, min_chunk: usize) -> usize {
    let target = len.div_ceil(threads() * CHUNKS_PER_THREAD);
    target.max(min_chunk).max(1).next_multiple_of(64)
}

/// Elements per chunk for the blocked helpers (scan, filter): about `bytes` of elements of
/// type `T`, so that a chunk stays in the L2 cache between the two steps that touch it.
#[inline]
pub(crate) fn cache_chunk<T>(bytes: usize) -> usize {
    (bytes / size_of::<T>().max(1)).max(256)
}
