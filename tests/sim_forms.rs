//! Forms the GPU backend compiles beyond the common ones, from the Rust surface: top-level
//! `scatter_reduce` of `bool`s (`||`, `&`) and of tuples (component-wise sums and counts;
//! a general operator: the smallest value and its first position per key), and per-row
//! `scatter`/`scatter_reduce`/`permute` results read again inside the row's function
//! (summed, their maximum, a reversed row's first element), and `permute` of rows. Each runs on every place
//! against plain Rust, at sizes from empty to large, with few keys (many collisions, one
//! key: every index equal) and many; on the simulator every one of them must run as PTX
//! (no CPU fallback).

mod common;

use common::*;
use dpl::{Error, Nested, Place};

mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn any_by_key(v: &[bool], keys: &[usize], bins: usize) -> Vec<bool> {
        scatter_reduce(|a, b| a || b, v, keys, replicate(false, bins))
    }

    #[parallel]
    pub fn all_by_key(v: &[bool], keys: &[usize], bins: usize) -> Vec<bool> {
        scatter_reduce(|a, b| a & b, v, keys, replicate(true, bins))
    }

    #[parallel]
    pub fn sum_count_by_key(v: &[f64], keys: &[u32], bins: usize) -> Vec<(f64, u32)> {
        scatter_reduce(
            |a, b| (a.0 + b.0, a.1 + b.1),
            map(|x| (x, 1u32), v),
            keys,
            replicate((0.0, 0u32), bins),
        )
    }

    #[parallel]
    pub fn min_first_by_key(v: &[i64], keys: &[usize], bins: usize) -> Vec<(i64, usize)> {
        scatter_reduce(
            |a, b| {
                if b.0 < a.0 || (b.0 == a.0 && b.1 < a.1) {
                    b
                } else {
                    a
                }
            },
            zip(v, indices(v)),
            keys,
            replicate((i64::MAX, usize::MAX), bins),
        )
    }

    #[parallel]
    pub fn row_histogram_max(x: &Nested<u32>) -> Vec<u32> {
        map(
            |r| {
                max(scatter_reduce(
                    |a, b| a + b,
                    replicate(1u32, len(r)),
                    map(|v| (v % 4) as usize, r),
                    replicate(0u32, 4),
                ))
            },
            x,
        )
    }

    #[parallel]
    pub fn row_scatter_sum(x: &Nested<i64>, d: &[i64]) -> Vec<i64> {
        map(|r| sum(scatter(r, indices(r), d)), x)
    }

    #[parallel]
    pub fn permute_rows(x: &Nested<i32>, idx: &[usize]) -> Result<Nested<i32>, Error> {
        permute(x, idx)
    }

    #[parallel]
    pub fn permute_filtered_rows(x: &Nested<i32>, idx: &[u32]) -> Nested<i32> {
        permute(map(|r| filter(|v| v % 3 != 0, r), x), idx)
    }

    #[parallel]
    pub fn row_reversed_first(x: &Nested<i32>) -> Vec<i32> {
        map(
            |r| {
                if len(r) > 0 {
                    permute(r, map(|i| len(r) - 1 - i, indices(r)))[0]
                } else {
                    0
                }
            },
            x,
        )
    }
}

/// Key counts: one (every index equal), a few, many.
fn bins_for(n: usize) -> [usize; 3] {
    [1, 7, n.max(1)]
}

const SIZES: [usize; 4] = [0, 1, 1001, 40_000];

fn any_by_key(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        for bins in bins_for(n) {
            let v: Vec<bool> = (0..n).map(|_| rng.below(9) == 0).collect();
            let k = rng.indices(n, bins);
            let mut any = vec![false; bins];
            let mut all = vec![true; bins];
            for (&x, &i) in v.iter().zip(&k) {
                any[i] |= x;
                all[i] &= x;
            }
            assert_eq!(prog::any_by_key(&v, &k, bins), any, "any, {bins} keys");
            assert_eq!(prog::all_by_key(&v, &k, bins), all, "all, {bins} keys");
        }
    });
}

fn sums_and_counts(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        for bins in bins_for(n) {
            // Small integers: every order of addition gives the exact sum.
            let v: Vec<f64> = (0..n).map(|_| rng.int_in(-50..=50) as f64).collect();
            let k: Vec<u32> = rng.indices(n, bins).iter().map(|&i| i as u32).collect();
            let mut want = vec![(0.0, 0u32); bins];
            for (&x, &i) in v.iter().zip(&k) {
                want[i as usize].0 += x;
                want[i as usize].1 += 1;
            }
            assert_eq!(prog::sum_count_by_key(&v, &k, bins), want, "{bins} keys");
        }
    });
}

fn min_first_by_key(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        for bins in bins_for(n) {
            let v: Vec<i64> = (0..n).map(|_| rng.int_in(0..=6)).collect();
            let k = rng.indices(n, bins);
            let mut want = vec![(i64::MAX, usize::MAX); bins];
            for (j, (&x, &i)) in v.iter().zip(&k).enumerate() {
                if x < want[i].0 {
                    want[i] = (x, j);
                }
            }
            assert_eq!(prog::min_first_by_key(&v, &k, bins), want, "{bins} keys");
        }
    });
}

fn rows(rng: &mut Rng, n: usize, longest: usize) -> Vec<Vec<u32>> {
    (0..n)
        .map(|_| {
            let len = rng.below(longest + 1);
            rng.u32s(len)
        })
        .collect()
}

fn row_histograms(place: Place) {
    each_size(place, &[0, 1, 1001], |n, rng| {
        let x = rows(rng, n, 40);
        let want: Vec<u32> = x
            .iter()
            .map(|r| {
                let mut h = [0u32; 4];
                for v in r {
                    h[(v % 4) as usize] += 1;
                }
                h.into_iter().max().unwrap_or(0)
            })
            .collect();
        let got = prog::row_histogram_max(&Nested::from_rows(x));
        assert_eq!(got, want);
    });
}

fn row_scatters(place: Place) {
    each_size(place, &[0, 1, 1001], |n, rng| {
        let x: Vec<Vec<i64>> = rows(rng, n, 30)
            .into_iter()
            .map(|r| r.into_iter().map(|v| i64::from(v % 1000)).collect())
            .collect();
        let d: Vec<i64> = (0..32).map(|_| rng.int_in(-9..=9)).collect();
        let want: Vec<i64> = x
            .iter()
            .map(|r| {
                let mut s = d.clone();
                s[..r.len()].copy_from_slice(r);
                s.iter().sum()
            })
            .collect();
        assert_eq!(prog::row_scatter_sum(&Nested::from_rows(x), &d), want);
    });
}

fn row_permutes(place: Place) {
    each_size(place, &[0, 1, 1001], |n, rng| {
        let x: Vec<Vec<i32>> = rows(rng, n, 50)
            .into_iter()
            .map(|r| r.into_iter().map(|v| v as i32).collect())
            .collect();
        let want: Vec<i32> = x.iter().map(|r| r.last().copied().unwrap_or(0)).collect();
        assert_eq!(prog::row_reversed_first(&Nested::from_rows(x)), want);
    });
}

/// `permute` of rows: each row lands at its target whatever the lengths (empty rows
/// included), also when the rows are computed (filtered) first; a repeated target and one
/// past the end are the errors a flat `permute` gives.
fn row_permutations(place: Place) {
    each_size(place, &[0, 1, 2, 1001], |n, rng| {
        let x: Vec<Vec<i32>> = rows(rng, n, 20)
            .into_iter()
            .map(|r| r.into_iter().map(|v| (v % 100) as i32).collect())
            .collect();
        let idx = rng.permutation(n);
        let mut want = vec![Vec::new(); n];
        for (i, &t) in idx.iter().enumerate() {
            want[t] = x[i].clone();
        }
        let nested = Nested::from_rows(x.clone());
        let got = prog::permute_rows(&nested, &idx).expect("a permutation");
        assert_eq!(got.to_vecs(), want);
        let idx32: Vec<u32> = idx.iter().map(|&i| i as u32).collect();
        let filtered: Vec<Vec<i32>> = want
            .iter()
            .map(|r| r.iter().copied().filter(|v| v % 3 != 0).collect())
            .collect();
        assert_eq!(
            prog::permute_filtered_rows(&nested, &idx32).to_vecs(),
            filtered
        );
        if n >= 2 {
            let mut dup = idx.clone();
            dup[n - 1] = dup[0];
            let e = prog::permute_rows(&nested, &dup).expect_err("a repeated target");
            assert!(matches!(e, Error::NotAPermutation { .. }), "{e:?}");
            dup[n - 1] = n;
            let e = prog::permute_rows(&nested, &dup).expect_err("a target past the end");
            assert!(matches!(e, Error::IndexOutOfRange { .. }), "{e:?}");
        }
    });
}

on_every_place!(
    row_permutations,
    any_by_key,
    sums_and_counts,
    min_first_by_key,
    row_histograms,
    row_scatters,
    row_permutes
);

/// On the simulator these are PTX, not the CPU fallback.
#[cfg(feature = "sim")]
#[test]
fn all_compiled_for_the_gpu() {
    let reasons = [
        dpl::inspect!(prog::any_by_key).gpu_not_compiled,
        dpl::inspect!(prog::all_by_key).gpu_not_compiled,
        dpl::inspect!(prog::sum_count_by_key).gpu_not_compiled,
        dpl::inspect!(prog::min_first_by_key).gpu_not_compiled,
        dpl::inspect!(prog::row_histogram_max).gpu_not_compiled,
        dpl::inspect!(prog::row_scatter_sum).gpu_not_compiled,
        dpl::inspect!(prog::row_reversed_first).gpu_not_compiled,
        dpl::inspect!(prog::permute_rows).gpu_not_compiled,
        dpl::inspect!(prog::permute_filtered_rows).gpu_not_compiled,
    ];
    for r in reasons {
        assert!(r.is_empty(), "{r}");
    }
}
