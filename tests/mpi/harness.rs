//! The harness of the MPI test program: blocks of global data in several layouts, checks
//! against plain Rust on the global data, and a check that a value is the same on every
//! rank.

use std::ops::Range;

/// The sizes every program runs at: empty, tiny (fewer elements than ranks), odd, and one
/// above the CPU backend's parallel grain (2^17), so the local loops run in parallel.
pub const SIZES: [usize; 6] = [0, 1, 2, 3, 1001, 140_001];

/// A named test case.
pub type Case = (&'static str, fn(Env));

/// This process in the job.
#[derive(Clone, Copy, Debug)]
pub struct Env {
    pub rank: usize,
    pub size: usize,
}

/// Ways to cut `n` elements into `p` blocks: balanced; everything on the last rank; the
/// first rank empty and the others growing; pseudo-random cuts (with empty blocks).
pub fn layouts(n: usize, p: usize) -> Vec<Vec<usize>> {
    let balanced: Vec<usize> = (0..p).map(|r| dpl::mpi::block(n, r, p).len()).collect();
    let mut last = vec![0; p];
    last[p - 1] = n;
    let weights: Vec<usize> = (0..p).map(|r| r * r).collect();
    let growing = cut(n, &weights);
    let mut rng = SplitMix64::new(0xc0ffee ^ n as u64 ^ (p as u64) << 32);
    let random: Vec<usize> = (0..p).map(|_| rng.below(4)).collect();
    let random = cut(n, &random);
    vec![balanced, last, growing, random]
}

/// `n` cut in proportion to `weights` (all to the last rank when they are all 0).
fn cut(n: usize, weights: &[usize]) -> Vec<usize> {
    let total: usize = weights.iter().sum();
    let p = weights.len();
    if total == 0 {
        let mut v = vec![0; p];
        v[p - 1] = n;
        return v;
    }
    let mut out: Vec<usize> = weights.iter().map(|w| n * w / total).collect();
    let given: usize = out.iter().sum();
    out[p - 1] += n - given;
    out
}

/// The range of global positions rank `r` holds with block lengths `lens`.
pub fn range_of(lens: &[usize], r: usize) -> Range<usize> {
    let start: usize = lens[..r].iter().sum();
    start..start + lens[r]
}

/// Rank `env.rank`'s block of `global` with block lengths `lens`.
pub fn block_of<T: Clone>(global: &[T], lens: &[usize], env: Env) -> Vec<T> {
    global[range_of(lens, env.rank)].to_vec()
}

/// Asserts that `got` (this rank's block of a result) is the block of `expected` (the
/// global result) with lengths `lens`.
#[track_caller]
pub fn check_block<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    expected: &[T],
    lens: &[usize],
    env: Env,
) {
    let r = range_of(lens, env.rank);
    assert_eq!(
        got.len(),
        r.len(),
        "{what}: block length on rank {}",
        env.rank
    );
    if let Some(k) = (0..got.len()).find(|&k| got[k] != expected[r.start + k]) {
        panic!(
            "{what}: rank {} element {} (global {}): got {:?}, expected {:?}",
            env.rank,
            k,
            r.start + k,
            got[k],
            expected[r.start + k]
        );
    }
}

/// Asserts that `bits` is the same on every rank (a reduction's bit pattern).
#[track_caller]
pub fn same_everywhere(what: &str, bits: u64) {
    let all = dpl::mpi::gather_to_all(&[bits]);
    assert!(
        all.iter().all(|&b| b == bits),
        "{what}: ranks disagree: {all:x?}"
    );
}

/// Asserts `|got - expected| <= tol * max(1, |expected|)`.
#[track_caller]
pub fn close(what: &str, got: f64, expected: f64, tol: f64) {
    assert!(
        (got - expected).abs() <= tol * expected.abs().max(1.0)
            || (got.is_nan() && expected.is_nan()),
        "{what}: got {got}, expected {expected}"
    );
}

/// The tests' random generator (the same data on every rank and every run).
pub use dpl_testkit::SplitMix64;
