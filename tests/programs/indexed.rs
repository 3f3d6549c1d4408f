//! Programs that read and write at computed indices (`gather`, `permute`, `scatter`,
//! `scatter_reduce`), written once and shared by the suites that run them: the
//! conformance suite (every place), the structure tests, the run-time error tests, the MPI
//! suite and the MPI examples. Each includes this file with `#[path]`.
#![allow(dead_code)]

use dpl::prelude::*;

#[parallel]
pub fn gather_f32(x: &[f32], idx: &[u32]) -> Vec<f32> {
    gather(x, idx)
}

#[parallel]
pub fn reverse(x: &[i32]) -> Vec<i32> {
    let n = len(x);
    gather(x, map(|i| n - 1 - i, indices(x)))
}

#[parallel]
pub fn permute_i32(x: &[i32], idx: &[u32]) -> Vec<i32> {
    permute(x, idx)
}

#[parallel]
pub fn scatter_f64(src: &[f64], idx: &[usize], dst: &[f64]) -> Vec<f64> {
    scatter(src, idx, dst)
}

/// How many keys fall in each of `bins` bins.
#[parallel]
pub fn histogram(keys: &[u32], bins: usize) -> Vec<u32> {
    scatter_reduce(
        |a, b| a + b,
        replicate(1u32, len(keys)),
        keys,
        replicate(0u32, bins),
    )
}

/// The histogram of an 8-bit image: 256 bins.
#[parallel]
pub fn histogram_u8(pixels: &[u8]) -> Vec<u32> {
    scatter_reduce(
        |a, b| a + b,
        map(|_p| 1u32, pixels),
        map(|p| p as usize, pixels),
        replicate(0u32, 256),
    )
}

#[parallel]
pub fn bucket_max(vals: &[f32], keys: &[i32], bins: usize) -> Vec<f32> {
    scatter_reduce(|a, b| a.max(b), vals, keys, replicate(f32::MIN, bins))
}
