//! Reductions: `sum`, `min`/`max`, `any`/`all`, `count`, `reduce` with tuples, captured
//! initial values and operators.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn sum_f32(x: &[f32]) -> f32 {
        sum(x)
    }

    #[parallel]
    pub fn sum_i64(x: &[i64]) -> i64 {
        sum(x)
    }

    #[parallel]
    pub fn sum_u32(x: &[u32]) -> u32 {
        sum(x)
    }

    #[parallel]
    pub fn min_max_i32(x: &[i32]) -> (i32, i32) {
        (min(x), max(x))
    }

    #[parallel]
    pub fn min_max_f64(x: &[f64]) -> (f64, f64) {
        (min(x), max(x))
    }

    #[parallel]
    pub fn min_max_u64(x: &[u64]) -> (u64, u64) {
        (min(x), max(x))
    }

    #[parallel]
    pub fn any_all(b: &[bool]) -> (bool, bool) {
        (any(b), all(b))
    }

    #[parallel]
    pub fn any_all_pred(x: &[i32], t: i32) -> (bool, bool) {
        (any(|v| v > t, x), all(|v| v >= -t, x))
    }

    #[parallel]
    pub fn count_true(b: &[bool]) -> usize {
        count(b)
    }

    #[parallel]
    pub fn count_multiples(x: &[u64], k: u64) -> usize {
        count(|v| v % k == 0, x)
    }

    #[parallel]
    pub fn reduce_zip(a: &[i64], b: &[i32]) -> (i64, i32) {
        reduce(
            |p, q| (p.0 + q.0, p.1.max(q.1)),
            zip(a, b),
            (0i64, i32::MIN),
        )
    }

    #[parallel]
    pub fn product_u64(x: &[u64]) -> u64 {
        reduce(|a, b| a * b, x, 1u64)
    }

    #[parallel]
    pub fn reduce_max_f32(x: &[f32]) -> f32 {
        reduce(|a, b| a.max(b), x, f32::NEG_INFINITY)
    }

    #[parallel]
    pub fn triple_reduce(x: &[f64]) -> (f64, f64, usize) {
        reduce(
            |p, q| (p.0.min(q.0), p.1.max(q.1), p.2 + q.2),
            map(|v| (v, v, 1usize), x),
            (f64::INFINITY, f64::NEG_INFINITY, 0usize),
        )
    }

    #[parallel]
    pub fn parity(b: &[bool]) -> bool {
        reduce(|p, q| p ^ q, b, false)
    }

    #[parallel]
    pub fn captured_init(x: &[u32], start: u32) -> (u32, Vec<u32>) {
        (
            reduce(|a, b| a + b, x, start),
            exclusive_scan(|a, b| a + b, x, start),
        )
    }

    #[parallel]
    pub fn capture_in_operator(x: &[i64], bits: i64) -> i64 {
        let mask = (1i64 << bits) - 1;
        reduce(|a, b| (a + b) & mask, x, 0i64)
    }
}

fn sum_f32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, 0.0, 1.0);
        let (want, magnitude) = f64_sum(x.iter().copied());
        assert_reduced(prog::sum_f32(&x), want, magnitude, n, "sum_f32");
    });
}

fn sum_i64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let want = x.iter().fold(0i64, |a, &b| a.wrapping_add(b));
        assert_exact(prog::sum_i64(&x), want, "sum_i64");
    });
}

fn sum_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want = x.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_exact(prog::sum_u32(&x), want, "sum_u32");
    });
}

fn min_max_i32(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1_000_000..=1_000_000) as i32);
        let want = (*x.iter().min().unwrap(), *x.iter().max().unwrap());
        assert_exact(prog::min_max_i32(&x), want, "min_max_i32");
    });
}

fn min_max_f64(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.f64s(n, -1e300, 1e300);
        let want = x
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        assert_exact(prog::min_max_f64(&x), want, "min_max_f64");
    });
}

fn min_max_u64(place: Place) {
    each_size(place, &NONEMPTY_SIZES, |n, rng| {
        let x = rng.u64s(n);
        let want = (*x.iter().min().unwrap(), *x.iter().max().unwrap());
        assert_exact(prog::min_max_u64(&x), want, "min_max_u64");
    });
}

fn any_all(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        // Mostly-true, mostly-false and mixed inputs, so `any` and `all` both vary.
        for density in [0, 1, 2, 1000] {
            let b = rng.vec(n, |r| r.below(1000) < density);
            let want = (b.iter().any(|&v| v), b.iter().all(|&v| v));
            assert_exact(prog::any_all(&b), want, "any_all (mostly false)");
            let nb: Vec<bool> = b.iter().map(|v| !v).collect();
            let want = (nb.iter().any(|&v| v), nb.iter().all(|&v| v));
            assert_exact(prog::any_all(&nb), want, "any_all (mostly true)");
        }
    });
}

fn any_all_pred(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| r.int_in(-1000..=1000) as i32);
        for t in [0, 990, 999, 1000, 2000] {
            let want = (x.iter().any(|&v| v > t), x.iter().all(|&v| v >= -t));
            assert_exact(
                prog::any_all_pred(&x, t),
                want,
                &format!("any_all_pred t={t}"),
            );
        }
    });
}

fn count_true(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let b = rng.bools(n);
        assert_exact(
            prog::count_true(&b),
            b.iter().filter(|&&v| v).count(),
            "count_true",
        );
    });
}

fn count_multiples(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u64s(n);
        for k in [1, 3, 7, u64::MAX] {
            let want = x.iter().filter(|&&v| v % k == 0).count();
            assert_exact(
                prog::count_multiples(&x, k),
                want,
                &format!("count_multiples k={k}"),
            );
        }
    });
}

fn reduce_zip(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i64s(n), rng.i32s(n));
        let want = (
            a.iter().fold(0i64, |s, &v| s.wrapping_add(v)),
            b.iter().copied().fold(i32::MIN, i32::max),
        );
        assert_exact(prog::reduce_zip(&a, &b), want, "reduce_zip");
    });
}

fn product_u64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        // Odd factors, so the wrapped product does not collapse to 0.
        let x = rng.vec(n, |r| r.u64() | 1);
        let want = x.iter().fold(1u64, |p, &v| p.wrapping_mul(v));
        assert_exact(prog::product_u64(&x), want, "product_u64");
    });
}

fn reduce_max_f32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1e30, 1e30);
        let want = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        assert_exact(prog::reduce_max_f32(&x), want, "reduce_max_f32");
    });
}

fn triple_reduce(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1e9, 1e9);
        let lo = x.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(prog::triple_reduce(&x), (lo, hi, n), "triple_reduce");
    });
}

fn parity(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let b = rng.bools(n);
        assert_exact(
            prog::parity(&b),
            b.iter().fold(false, |p, &q| p ^ q),
            "parity",
        );
    });
}

fn captured_init(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let start = 123_456_789u32;
        let mut s = start;
        let scanned = each(&x, |v| {
            let before = s;
            s = s.wrapping_add(v);
            before
        });
        let (total, got) = prog::captured_init(&x, start);
        assert_exact(total, s, "reduce from a parameter");
        assert_same(&got, &scanned, "exclusive_scan from a parameter");
    });
}

fn capture_in_operator(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        for bits in [1, 13, 62] {
            let mask = (1i64 << bits) - 1;
            let want = x.iter().fold(0i64, |a, &b| a.wrapping_add(b) & mask);
            assert_exact(
                prog::capture_in_operator(&x, bits),
                want,
                &format!("bits = {bits}"),
            );
        }
    });
}

on_every_place!(
    sum_f32,
    sum_i64,
    sum_u32,
    min_max_i32,
    min_max_f64,
    min_max_u64,
    any_all,
    any_all_pred,
    count_true,
    count_multiples,
    reduce_zip,
    product_u64,
    reduce_max_f32,
    triple_reduce,
    parity,
    captured_init,
    capture_in_operator,
);
