//! `map` with 1 to 8 inputs of every scalar type, `zip`/`unzip`, the same input twice and
//! unused parameters.

use super::*;

/// The programs under test, written in the DSL.
pub(crate) mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn square(x: &[f32]) -> Vec<f32> {
        map(|v| v * v, x)
    }

    #[parallel]
    pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|xi, yi| a * xi + yi, x, y)
    }

    #[parallel]
    pub fn fma3(x: &[f32], y: &[f32], z: &[f32]) -> Vec<f32> {
        map(|a, b, c| a.mul_add(b, c), x, y, z)
    }

    #[parallel]
    pub fn cross4(a: &[i32], b: &[i32], c: &[i32], d: &[i32]) -> Vec<i32> {
        map(|p, q, r, s| p * q - r * s, a, b, c, d)
    }

    #[parallel]
    pub fn bits5(a: &[u64], b: &[u64], c: &[u64], d: &[u64], e: &[u64]) -> Vec<u64> {
        map(
            |p, q, r, s, t| ((p ^ q) + (r & s)) | (t >> 3),
            a,
            b,
            c,
            d,
            e,
        )
    }

    #[parallel]
    pub fn dot6(a: &[f64], b: &[f64], c: &[f64], d: &[f64], e: &[f64], f: &[f64]) -> Vec<f64> {
        map(|p, q, r, s, t, u| p * q + r * s + t * u, a, b, c, d, e, f)
    }

    #[parallel]
    pub fn mix7(
        a: &[i64],
        b: &[i64],
        c: &[i64],
        d: &[i64],
        e: &[i64],
        f: &[i64],
        g: &[i64],
    ) -> Vec<i64> {
        map(
            |p, q, r, s, t, u, v| p - q * r + (s ^ t) - (u | v),
            a,
            b,
            c,
            d,
            e,
            f,
            g,
        )
    }

    #[parallel]
    pub fn all_types8(
        a: &[f32],
        b: &[f64],
        c: &[i32],
        d: &[u32],
        e: &[i64],
        f: &Vec<u64>,
        g: &[bool],
        h: &[usize],
    ) -> Vec<f64> {
        map(
            |fa, fb, ic, ud, le, uf, bg, zh| {
                let ints =
                    (ic as f64) + (ud as f64) - (le as f64) * 0.5 + (uf as f64) + (zh as f64);
                if bg { fa as f64 + fb + ints } else { fb - ints }
            },
            a,
            b,
            c,
            d,
            e,
            f,
            g,
            h,
        )
    }

    #[parallel]
    pub fn zip_dot(a: &[f64], b: &[f64]) -> f64 {
        sum(map(|p| p.0 * p.1, zip(a, b)))
    }

    #[parallel]
    pub fn split_parts(x: &[f32]) -> (Vec<f32>, Vec<f32>) {
        unzip(map(|v| (v.floor(), v - v.floor()), x))
    }

    #[parallel]
    pub fn swap_pairs(a: &[i32], b: &[i32]) -> (Vec<i32>, Vec<i32>) {
        let (p, q) = unzip(map(|t| (t.1, t.0), zip(a, b)));
        (p, q)
    }

    #[parallel]
    pub fn zip_pairs(a: &[i32], b: &[u32]) -> Vec<(i32, u32)> {
        zip(a, b)
    }

    #[parallel]
    pub fn same_input_twice(x: &[i64]) -> Vec<i64> {
        map(|a, b| a * b - a, x, x)
    }

    #[parallel]
    pub fn unused_param(x: &[f32], _y: &[f64]) -> Vec<f32> {
        map(|v| -v, x)
    }
}

fn square(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1e3, 1e3);
        assert_same(&prog::square(&x), &each(&x, |v| v * v), "square");
    });
}

fn saxpy(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (rng.f32s(n, -10.0, 10.0), rng.f32s(n, -10.0, 10.0));
        let a = 2.5f32;
        assert_same(
            &prog::saxpy(a, &x, &y),
            &zip_with(&x, &y, |p, q| a * p + q),
            "saxpy",
        );
    });
}

fn fma3(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y, z) = (
            rng.f32s(n, -10.0, 10.0),
            rng.f32s(n, -10.0, 10.0),
            rng.f32s(n, -10.0, 10.0),
        );
        let want: Vec<f32> = (0..n).map(|i| x[i].mul_add(y[i], z[i])).collect();
        assert_same(&prog::fma3(&x, &y, &z), &want, "fma3");
    });
}

fn cross4(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let [a, b, c, d] = [(); 4].map(|_| rng.i32s(n));
        let want: Vec<i32> = (0..n)
            .map(|i| {
                a[i].wrapping_mul(b[i])
                    .wrapping_sub(c[i].wrapping_mul(d[i]))
            })
            .collect();
        assert_same(&prog::cross4(&a, &b, &c, &d), &want, "cross4");
    });
}

fn bits5(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let [a, b, c, d, e] = [(); 5].map(|_| rng.u64s(n));
        let want: Vec<u64> = (0..n)
            .map(|i| ((a[i] ^ b[i]).wrapping_add(c[i] & d[i])) | (e[i] >> 3))
            .collect();
        assert_same(&prog::bits5(&a, &b, &c, &d, &e), &want, "bits5");
    });
}

fn dot6(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let [a, b, c, d, e, f] = [(); 6].map(|_| rng.f64s(n, -1e6, 1e6));
        let want: Vec<f64> = (0..n)
            .map(|i| a[i] * b[i] + c[i] * d[i] + e[i] * f[i])
            .collect();
        assert_same(&prog::dot6(&a, &b, &c, &d, &e, &f), &want, "dot6");
    });
}

fn mix7(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let [a, b, c, d, e, f, g] = [(); 7].map(|_| rng.i64s(n));
        let want: Vec<i64> = (0..n)
            .map(|i| {
                a[i].wrapping_sub(b[i].wrapping_mul(c[i]))
                    .wrapping_add(d[i] ^ e[i])
                    .wrapping_sub(f[i] | g[i])
            })
            .collect();
        assert_same(&prog::mix7(&a, &b, &c, &d, &e, &f, &g), &want, "mix7");
    });
}

fn all_types8(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let a = rng.f32s(n, -1e4, 1e4);
        let b = rng.f64s(n, -1e9, 1e9);
        let (c, d, e, f) = (rng.i32s(n), rng.u32s(n), rng.i64s(n), rng.u64s(n));
        let g = rng.bools(n);
        let h = rng.vec(n, |r| r.below(usize::MAX));
        let want: Vec<f64> = (0..n)
            .map(|i| {
                let ints = (c[i] as f64) + (d[i] as f64) - (e[i] as f64) * 0.5
                    + (f[i] as f64)
                    + (h[i] as f64);
                if g[i] {
                    a[i] as f64 + b[i] + ints
                } else {
                    b[i] - ints
                }
            })
            .collect();
        assert_same(
            &prog::all_types8(&a, &b, &c, &d, &e, &f, &g, &h),
            &want,
            "all_types8",
        );
    });
}

fn zip_dot(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.f64s(n, -1.0, 1.0), rng.f64s(n, 0.0, 100.0));
        let (want, magnitude) = f64_sum(zip_with(&a, &b, |p, q| p * q));
        assert_reduced(prog::zip_dot(&a, &b), want, magnitude, n, "zip_dot");
    });
}

fn split_parts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1e4, 1e4);
        let (whole, frac) = prog::split_parts(&x);
        assert_same(&whole, &each(&x, f32::floor), "split_parts.0");
        assert_same(&frac, &each(&x, |v| v - v.floor()), "split_parts.1");
    });
}

fn swap_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n), rng.i32s(n));
        let (p, q) = prog::swap_pairs(&a, &b);
        assert_same(&p, &b, "swap_pairs.0");
        assert_same(&q, &a, "swap_pairs.1");
    });
}

fn zip_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n), rng.u32s(n));
        assert_same(
            &prog::zip_pairs(&a, &b),
            &zip_with(&a, &b, |p, q| (p, q)),
            "zip_pairs",
        );
    });
}

fn same_input_twice(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let want = each(&x, |v| v.wrapping_mul(v).wrapping_sub(v));
        assert_same(&prog::same_input_twice(&x), &want, "same_input_twice");
    });
}

fn unused_param(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        assert_same(
            &prog::unused_param(&x, &[1.0]),
            &each(&x, |v| -v),
            "unused_param",
        );
    });
}

on_every_place!(
    square,
    saxpy,
    fma3,
    cross4,
    bits5,
    dot6,
    mix7,
    all_types8,
    zip_dot,
    split_parts,
    swap_pairs,
    zip_pairs,
    same_input_twice,
    unused_param,
);
