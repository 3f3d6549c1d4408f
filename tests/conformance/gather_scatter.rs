//! `gather`, `permute`, `scatter` and `scatter_reduce` (histograms, per-bucket maxima).

use super::*;

/// The programs under test, written in the DSL (most shared with other suites:
/// `tests/programs/indexed.rs`).
mod prog {
    pub use crate::indexed::*;
    use dpl::prelude::*;

    #[parallel]
    pub fn gather_i64(x: &[u64], idx: &[i64]) -> Vec<u64> {
        gather(x, idx)
    }
}

fn gather_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        // Indices into `x`, more of them than elements, or none when `x` is empty.
        let idx = rng.indices(if n == 0 { 0 } else { n + n / 2 }, n);
        let want: Vec<f32> = idx.iter().map(|&i| x[i]).collect();
        assert_same(
            &prog::gather_f32(&x, &cast_indices::<u32>(&idx)),
            &want,
            "gather_u32",
        );
    });
}

fn gather_i64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u64s(n);
        let idx = rng.indices(if n == 0 { 0 } else { n / 3 + 1 }, n);
        let want: Vec<u64> = idx.iter().map(|&i| x[i]).collect();
        assert_same(
            &prog::gather_i64(&x, &cast_indices::<i64>(&idx)),
            &want,
            "gather_i64",
        );
    });
}

fn reverse(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want: Vec<i32> = x.iter().rev().copied().collect();
        assert_same(&prog::reverse(&x), &want, "reverse");
    });
}

fn permute_i32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let p = rng.permutation(n);
        let mut want = vec![0; n];
        for (i, &k) in p.iter().enumerate() {
            want[k] = x[i];
        }
        assert_same(
            &prog::permute_i32(&x, &cast_indices::<u32>(&p)),
            &want,
            "permute_i32",
        );
    });
}

fn scatter_f64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let dst = rng.f64s(n, -1.0, 1.0);
        // Distinct targets (a prefix of a permutation), so the result is determined.
        let idx: Vec<usize> = rng.permutation(n).into_iter().take(n / 2 + n % 2).collect();
        let src = rng.f64s(idx.len(), 10.0, 20.0);
        let mut want = dst.clone();
        for (&k, &v) in idx.iter().zip(&src) {
            want[k] = v;
        }
        assert_same(&prog::scatter_f64(&src, &idx, &dst), &want, "scatter_f64");
    });
}

fn histogram(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let bins = 1 + n / 100;
        let keys = cast_indices::<u32>(&rng.indices(n, bins));
        let mut want = vec![0u32; bins];
        for &k in &keys {
            want[k as usize] += 1;
        }
        assert_same(&prog::histogram(&keys, bins), &want, "histogram");
    });
}

fn bucket_max(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let bins = 7 + n / 50;
        let vals = rng.f32s(n, -1e6, 1e6);
        let keys = cast_indices::<i32>(&rng.indices(n, bins));
        let mut want = vec![f32::MIN; bins];
        for (&k, &v) in keys.iter().zip(&vals) {
            want[k as usize] = want[k as usize].max(v);
        }
        assert_same(&prog::bucket_max(&vals, &keys, bins), &want, "bucket_max");
    });
}

on_every_place!(
    gather_u32,
    gather_i64,
    reverse,
    permute_i32,
    scatter_f64,
    histogram,
    bucket_max,
);
