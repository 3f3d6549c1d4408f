//! Running a check under several rayon thread counts.

/// Runs `check` in rayon pools of 1, 2, 3 and 5 threads, so that code whose chunking
/// depends on the number of threads is checked under several (an odd one among them).
///
/// # Panics
///
/// If a pool cannot be built, or `check` panics.
pub fn in_pools(check: impl Fn() + Sync) {
    for threads in [1, 2, 3, 5] {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap_or_else(|e| panic!("a rayon pool of {threads} threads: {e}"))
            .install(&check);
    }
}
