//! Scans: inclusive and exclusive, `+`, `max`/`min`, offsets, segmented scans of pairs.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn prefix_i32(x: &[i32]) -> Vec<i32> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn prefix_f64(x: &[f64]) -> Vec<f64> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn running_max_u32(x: &[u32]) -> Vec<u32> {
        scan(|a, b| a.max(b), x)
    }

    #[parallel]
    pub fn running_min_i64(x: &[i64]) -> Vec<i64> {
        scan(|a, b| i64::min(a, b), x)
    }

    #[parallel]
    pub fn offsets(counts: &[u32]) -> Vec<usize> {
        exclusive_scan(|a, b| a + b, map(|c| c as usize, counts), 0usize)
    }

    #[parallel]
    pub fn exclusive_f32(x: &[f32], init: f32) -> Vec<f32> {
        exclusive_scan(|a, b| a + b, x, init)
    }

    #[parallel]
    pub fn scan_pairs(x: &[i64], flags: &[bool]) -> Vec<i64> {
        let segs = scan(
            |p, q| if q.1 { q } else { (p.0 + q.0, p.1 || q.1) },
            zip(x, flags),
        );
        map(|s| s.0, segs)
    }
}

fn prefix_i32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want: Vec<i32> = x
            .iter()
            .scan(0i32, |s, &v| {
                *s = s.wrapping_add(v);
                Some(*s)
            })
            .collect();
        assert_same(&prog::prefix_i32(&x), &want, "prefix_i32");
    });
}

fn prefix_f64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1.0, 3.0);
        let (want, magnitude) = f64_prefix_sums(&x);
        assert_scanned(&prog::prefix_f64(&x), &want, &magnitude, "prefix_f64");
    });
}

fn running_max_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let mut m = 0u32;
        let want: Vec<u32> = x
            .iter()
            .map(|&v| {
                m = m.max(v);
                m
            })
            .collect();
        assert_same(&prog::running_max_u32(&x), &want, "running_max_u32");
    });
}

fn running_min_i64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1 << 40..=1 << 40));
        let mut m = i64::MAX;
        let want: Vec<i64> = x
            .iter()
            .map(|&v| {
                m = m.min(v);
                m
            })
            .collect();
        assert_same(&prog::running_min_i64(&x), &want, "running_min_i64");
    });
}

fn offsets(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let counts = rng.vec(n, |r| r.below(20) as u32);
        let mut total = 0usize;
        let want: Vec<usize> = counts
            .iter()
            .map(|&c| {
                let before = total;
                total += c as usize;
                before
            })
            .collect();
        assert_same(&prog::offsets(&counts), &want, "offsets");
    });
}

fn exclusive_f32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -2.0, 2.0);
        let init = 0.75f32;
        // The exclusive scan from `init` is the inclusive scan of [init, x[0], ..., x[n-2]].
        let shifted: Vec<f32> = std::iter::once(init)
            .chain(x.iter().copied())
            .take(n)
            .collect();
        let (want, magnitude) = f64_prefix_sums(&shifted);
        assert_scanned(
            &prog::exclusive_f32(&x, init),
            &want,
            &magnitude,
            "exclusive_f32",
        );
    });
}

fn scan_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1000..=1000));
        let flags = rng.vec(n, |r| r.below(50) == 0);
        let mut s = 0;
        let want: Vec<i64> = (0..n)
            .map(|i| {
                s = if i == 0 || flags[i] { x[i] } else { s + x[i] };
                s
            })
            .collect();
        assert_same(&prog::scan_pairs(&x, &flags), &want, "segmented scan");
    });
}

on_every_place!(
    prefix_i32,
    prefix_f64,
    running_max_u32,
    running_min_i64,
    offsets,
    exclusive_f32,
    scan_pairs,
);
