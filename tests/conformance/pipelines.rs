//! Fused pipelines: chains of primitives whose intermediate sequences fusion removes,
//! shared producers and dead code.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn gathered_energy(x: &[f32], idx: &[u32]) -> f32 {
        sum(map(|v| v * v, gather(x, idx)))
    }

    #[parallel]
    pub fn prefix_of_squares(x: &[i64]) -> Vec<i64> {
        scan(|a, b| a + b, map(|v| v * v, x))
    }

    #[parallel]
    pub fn scan_then_gather(x: &[u32], idx: &[usize]) -> Vec<u32> {
        gather(scan(|a, b| a + b, x), idx)
    }

    #[parallel]
    pub fn count_large(x: &[f64], t: f64) -> usize {
        count(map(|v| v.abs() > t, x))
    }

    #[parallel]
    pub fn partition_by_flag(x: &[i32], flags: &[bool]) -> Vec<i32> {
        let falses = count(|f| !f, flags);
        let ones = map(|f| if f { 1usize } else { 0usize }, flags);
        let trues_before = exclusive_scan(|a, b| a + b, ones, 0usize);
        let dest = map(
            |f, i, t| if f { falses + t } else { i - t },
            flags,
            indices(flags),
            trues_before,
        );
        permute(x, dest)
    }

    #[parallel]
    pub fn mean_var(x: &[f64]) -> (f64, f64) {
        let n = len(x) as f64;
        let m = sum(x) / n;
        let v = sum(map(|v| (v - m) * (v - m), x)) / n;
        (m, v)
    }

    #[parallel]
    pub fn normalize_total(x: &[f32]) -> (Vec<f32>, f32) {
        let t = sum(x);
        (map(|v| v / t, x), t)
    }

    #[parallel]
    pub fn long_chain(x: &[i32], idx: &[u32]) -> Vec<i32> {
        map(
            |v| v - 1,
            map(
                |v| v * 3,
                map(|v| v + 2, gather(scan(|a, b| a + b, x), idx)),
            ),
        )
    }

    #[parallel]
    pub fn shared_producer(x: &[f32]) -> (f32, f32, Vec<f32>) {
        let y = map(|v| v * v - 1.0, x);
        (
            reduce(|a, b| a.max(b), y, f32::NEG_INFINITY),
            reduce(|a, b| a.min(b), y, f32::INFINITY),
            y,
        )
    }

    #[parallel]
    pub fn gather_of_filter(x: &[f64]) -> Vec<f64> {
        let big = filter(|i| x[i] > 0.5, indices(x));
        gather(map(|v| v * 2.0, x), big)
    }
}

fn gathered_energy(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -2.0, 2.0);
        let idx = rng.indices(if n == 0 { 0 } else { 2 * n }, n);
        let (want, magnitude) = f64_sum(idx.iter().map(|&i| x[i] * x[i]));
        let got = prog::gathered_energy(&x, &cast_indices::<u32>(&idx));
        assert_reduced(got, want, magnitude, idx.len(), "gathered_energy");
    });
}

fn prefix_of_squares(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let mut s = 0i64;
        let want = each(&x, |v| {
            s = s.wrapping_add(v.wrapping_mul(v));
            s
        });
        assert_same(&prog::prefix_of_squares(&x), &want, "prefix_of_squares");
    });
}

fn scan_then_gather(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let idx = rng.indices(if n == 0 { 0 } else { n / 2 + 1 }, n);
        let prefix: Vec<u32> = x
            .iter()
            .scan(0u32, |s, &v| {
                *s = s.wrapping_add(v);
                Some(*s)
            })
            .collect();
        let want: Vec<u32> = idx.iter().map(|&i| prefix[i]).collect();
        assert_same(&prog::scan_then_gather(&x, &idx), &want, "scan_then_gather");
    });
}

fn count_large(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -10.0, 10.0);
        for t in [0.0, 5.0, 9.99, 10.0] {
            let want = x.iter().filter(|v| v.abs() > t).count();
            assert_exact(
                prog::count_large(&x, t),
                want,
                &format!("count_large t={t}"),
            );
        }
    });
}

fn partition_by_flag(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let flags = rng.bools(n);
        let (mut want, trues): (Vec<i32>, Vec<i32>) =
            (0..n)
                .map(|i| (x[i], flags[i]))
                .fold((vec![], vec![]), |(mut f, mut t), (v, flag)| {
                    if flag {
                        t.push(v)
                    } else {
                        f.push(v)
                    }
                    (f, t)
                });
        want.extend(trues);
        assert_same(
            &prog::partition_by_flag(&x, &flags),
            &want,
            "partition_by_flag",
        );
    });
}

fn mean_var(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.f64s(n, 10.0, 20.0);
        let (m, v) = prog::mean_var(&x);
        let nf = n as f64;
        let (total, magnitude) = f64_sum(x.iter().copied());
        assert_reduced(m, total / nf, magnitude / nf, n, "mean");
        // The variance is checked given the mean the program computed.
        let (sq, sq_magnitude) = f64_sum(x.iter().map(|&e| (e - m) * (e - m)));
        assert_reduced(v, sq / nf, sq_magnitude / nf, n, "variance");
    });
}

fn normalize_total(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, 0.0, 1.0);
        let (shares, t) = prog::normalize_total(&x);
        let (total, magnitude) = f64_sum(x.iter().copied());
        assert_reduced(t, total, magnitude, n, "total");
        assert_same(&shares, &each(&x, |v| v / t), "shares");
    });
}

fn long_chain(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let idx = rng.indices(if n == 0 { 0 } else { n / 2 + 3 }, n);
        let mut s = 0i32;
        let prefix = each(&x, |v| {
            s = s.wrapping_add(v);
            s
        });
        let want: Vec<i32> = idx
            .iter()
            .map(|&k| prefix[k].wrapping_add(2).wrapping_mul(3).wrapping_sub(1))
            .collect();
        assert_same(
            &prog::long_chain(&x, &cast_indices::<u32>(&idx)),
            &want,
            "long_chain",
        );
    });
}

fn shared_producer(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -3.0, 3.0);
        let y = each(&x, |v| v * v - 1.0);
        let (hi, lo, got) = prog::shared_producer(&x);
        assert_exact(
            hi,
            y.iter().copied().fold(f32::NEG_INFINITY, f32::max),
            "max",
        );
        assert_exact(lo, y.iter().copied().fold(f32::INFINITY, f32::min), "min");
        assert_same(&got, &y, "y");
    });
}

fn gather_of_filter(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, 0.0, 1.0);
        let want: Vec<f64> = x.iter().filter(|&&v| v > 0.5).map(|v| v * 2.0).collect();
        assert_same(&prog::gather_of_filter(&x), &want, "gather_of_filter");
    });
}

on_every_place!(
    gathered_energy,
    prefix_of_squares,
    scan_then_gather,
    count_large,
    partition_by_flag,
    mean_var,
    normalize_total,
    long_chain,
    shared_producer,
    gather_of_filter,
);
