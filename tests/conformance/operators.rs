//! Scalar operators: integer and float arithmetic (wrapping), comparisons and logic, `if`,
//! casts between every scalar type, division and remainder, extreme literals.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn piecewise(x: &[f32], lo: f32, hi: f32) -> Vec<f32> {
        map(
            |v| {
                let (a, b) = (v - lo, hi - v);
                let clamped = if a < 0.0 {
                    lo
                } else if b < 0.0 {
                    hi
                } else {
                    v
                };
                let t: f32 = {
                    let w = clamped * 0.5;
                    w + w
                };
                if a >= 0.0 && b >= 0.0 || v == lo {
                    t
                } else {
                    -t
                }
            },
            x,
        )
    }

    #[parallel]
    pub fn int_ops_i32(a: &[i32], b: &[i32]) -> Vec<i32> {
        map(
            |p, q| {
                let d = if q < 0 { -((q & 15) + 1) } else { (q & 15) + 1 };
                let s = (p + q) ^ (p - q) ^ (p * q);
                let t = (p / d) + (p % d) + (p << q) + (p >> q) + (!p) + (-q) + (p | q) + (p & q);
                let c = (p == q) as i32
                    + (p != q) as i32 * 2
                    + (p < q) as i32 * 4
                    + (p <= q) as i32 * 8
                    + (p > q) as i32 * 16
                    + (p >= q) as i32 * 32;
                s ^ t ^ c
            },
            a,
            b,
        )
    }

    #[parallel]
    pub fn int_ops_u64(a: &[u64], b: &[u64]) -> Vec<u64> {
        map(
            |p, q| {
                let d = (q & 255) + 1;
                let t = (p / d) + (p % d) + (p << q) + (p >> q) + (!p) + (p | q) - (p & q);
                let c = (p < q) as u64 + (p >= q) as u64 * 2 + (p == q) as u64 * 4;
                t ^ (p * q) ^ c
            },
            a,
            b,
        )
    }

    #[parallel]
    pub fn float_logic(a: &[f64], b: &[f64]) -> Vec<bool> {
        map(
            |p, q| (p < q) != (p >= q * 0.5) || !(p == q) && p <= -q || p > 1.0 && p != q,
            a,
            b,
        )
    }

    #[parallel]
    pub fn bool_logic(a: &[bool], b: &[bool]) -> (Vec<bool>, Vec<bool>) {
        (
            map(|p, q| (p & q) | (!p ^ q), a, b),
            map(|p, q| p != q && (p == !q || q), a, b),
        )
    }

    #[parallel]
    pub fn casts_from_f64(
        x: &[f64],
    ) -> (Vec<i32>, Vec<u32>, Vec<i64>, Vec<u64>, Vec<f32>, Vec<usize>) {
        (
            map(|v| v as i32, x),
            map(|v| v as u32, x),
            map(|v| v as i64, x),
            map(|v| v as u64, x),
            map(|v| v as f32, x),
            map(|v| v as usize, x),
        )
    }

    #[parallel]
    pub fn casts_between_ints(
        x: &[i64],
    ) -> (Vec<i32>, Vec<u32>, Vec<u64>, Vec<f32>, Vec<i64>, Vec<u64>) {
        (
            map(|v| v as i32, x),
            map(|v| v as u32, x),
            map(|v| (v as i32) as u64, x),
            map(|v| v as f32, x),
            map(|v| ((v as u32) as i32) as i64 + (v > 0) as i64, x),
            map(|v| (v as usize) as u64 ^ (v != 0) as u64, x),
        )
    }

    #[parallel]
    pub fn wrapping_i32(x: &[i32]) -> Vec<i32> {
        map(|v| -(v * 65537 + i32::MAX) - v.abs(), x)
    }

    #[parallel]
    pub fn wrapping_u32(x: &[u32]) -> Vec<u32> {
        map(|v| v * 3 + u32::MAX - (v << 7), x)
    }

    #[parallel]
    pub fn div_rem_i64(a: &[i64], b: &[i64]) -> (Vec<i64>, Vec<i64>) {
        (map(|p, q| p / q, a, b), map(|p, q| p % q, a, b))
    }

    #[parallel]
    pub fn int_math(a: &[i32], b: &[i32]) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
        (
            map(|p| p.abs(), a),
            map(|p, q| p.min(q), a, b),
            map(|p, q| i32::max(p, q), a, b),
        )
    }

    #[parallel]
    pub fn float_rem(a: &[f32], b: &[f64]) -> (Vec<f32>, Vec<f64>) {
        (map(|p| p % 0.75, a), map(|q| q % -2.5, b))
    }

    #[parallel]
    pub fn big_literals(x: &[u64]) -> (Vec<u64>, Vec<i32>, Vec<u32>) {
        (
            map(|v| v ^ 18446744073709551615u64, x),
            map(|v| if v > 10 { -2147483648i32 } else { 2147483647 }, x),
            map(|v| (v as u32) / 3_000_000_000u32, x),
        )
    }

    #[parallel]
    pub fn neg_cast(x: &[i32]) -> (Vec<u32>, Vec<i64>) {
        (map(|v| -v as u32, x), map(|v| -(v as i64), x))
    }
}

/// Floats that exercise every rule of `as`: saturation, NaN to 0, infinities, signed zero,
/// rounding toward zero, and values beyond the integer ranges.
fn cast_inputs(n: usize, rng: &mut Rng) -> Vec<f64> {
    let special = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.5,
        -0.5,
        -1.0,
        2147483647.5,
        -2147483649.0,
        4294967296.0,
        1e20,
        -1e20,
        16777217.0,
        f64::MAX,
    ];
    rng.vec(n, |r| r.edgy(&special, |r| r.f64_in(-1e12, 1e12)))
}

fn piecewise(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (lo, hi) = (-1.5f32, 2.0f32);
        let mut x = rng.f32s(n, -4.0, 4.0);
        if n > 0 {
            x[0] = lo;
        }
        let want = each(&x, |v| {
            let (a, b) = (v - lo, hi - v);
            let clamped = if a < 0.0 {
                lo
            } else if b < 0.0 {
                hi
            } else {
                v
            };
            let t = clamped * 0.5 + clamped * 0.5;
            if a >= 0.0 && b >= 0.0 || v == lo {
                t
            } else {
                -t
            }
        });
        assert_same(&prog::piecewise(&x, lo, hi), &want, "piecewise");
    });
}

fn int_ops_i32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n), rng.i32s(n));
        let want = zip_with(&a, &b, |p, q| {
            let d = if q < 0 { -((q & 15) + 1) } else { (q & 15) + 1 };
            let s = p.wrapping_add(q) ^ p.wrapping_sub(q) ^ p.wrapping_mul(q);
            let t = [
                p.wrapping_div(d),
                p.wrapping_rem(d),
                p.wrapping_shl(q as u32),
                p.wrapping_shr(q as u32),
                !p,
                q.wrapping_neg(),
                p | q,
                p & q,
            ]
            .into_iter()
            .fold(0i32, i32::wrapping_add);
            let c = [p == q, p != q, p < q, p <= q, p > q, p >= q]
                .iter()
                .enumerate()
                .map(|(k, &bit)| (bit as i32) << k)
                .sum::<i32>();
            s ^ t ^ c
        });
        assert_same(&prog::int_ops_i32(&a, &b), &want, "int_ops_i32");
    });
}

fn int_ops_u64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.u64s(n), rng.u64s(n));
        let want = zip_with(&a, &b, |p, q| {
            let d = (q & 255) + 1;
            let t = (p / d)
                .wrapping_add(p % d)
                .wrapping_add(p.wrapping_shl(q as u32))
                .wrapping_add(p.wrapping_shr(q as u32))
                .wrapping_add(!p)
                .wrapping_add(p | q)
                .wrapping_sub(p & q);
            let c = (p < q) as u64 + (p >= q) as u64 * 2 + (p == q) as u64 * 4;
            t ^ p.wrapping_mul(q) ^ c
        });
        assert_same(&prog::int_ops_u64(&a, &b), &want, "int_ops_u64");
    });
}

fn float_logic(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let a = rng.vec(n, |r| {
            r.edgy(&[0.0, -0.0, 1.0, 2.0], |r| r.f64_in(-3.0, 3.0))
        });
        let b = rng.vec(n, |r| {
            r.edgy(&[0.0, -0.0, -1.0, 2.0], |r| r.f64_in(-3.0, 3.0))
        });
        let want = zip_with(&a, &b, |p, q| {
            (p < q) != (p >= q * 0.5) || !(p == q) && p <= -q || p > 1.0 && p != q
        });
        assert_same(&prog::float_logic(&a, &b), &want, "float_logic");
    });
}

fn bool_logic(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.bools(n), rng.bools(n));
        let (x, y) = prog::bool_logic(&a, &b);
        assert_same(
            &x,
            &zip_with(&a, &b, |p, q| (p & q) | (!p ^ q)),
            "bool_logic.0",
        );
        assert_same(
            &y,
            // `p != q` implies `p == !q`, so the program's expression is `p != q`.
            &zip_with(&a, &b, |p, q| p != q),
            "bool_logic.1",
        );
    });
}

fn casts_from_f64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = cast_inputs(n, rng);
        let (i, u, l, w, f, z) = prog::casts_from_f64(&x);
        assert_same(&i, &each(&x, |v| v as i32), "as i32");
        assert_same(&u, &each(&x, |v| v as u32), "as u32");
        assert_same(&l, &each(&x, |v| v as i64), "as i64");
        assert_same(&w, &each(&x, |v| v as u64), "as u64");
        assert_same(&f, &each(&x, |v| v as f32), "as f32");
        assert_same(&z, &each(&x, |v| v as usize), "as usize");
    });
}

fn casts_between_ints(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let (i, u, w, f, l, z) = prog::casts_between_ints(&x);
        assert_same(&i, &each(&x, |v| v as i32), "i64 as i32");
        assert_same(&u, &each(&x, |v| v as u32), "i64 as u32");
        assert_same(&w, &each(&x, |v| (v as i32) as u64), "i32 as u64");
        assert_same(&f, &each(&x, |v| v as f32), "i64 as f32");
        assert_same(
            &l,
            &each(&x, |v| ((v as u32) as i32) as i64 + (v > 0) as i64),
            "u32 as i32",
        );
        assert_same(
            &z,
            &each(&x, |v| (v as usize) as u64 ^ (v != 0) as u64),
            "as usize",
        );
    });
}

fn wrapping_i32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want = each(&x, |v| {
            v.wrapping_mul(65537)
                .wrapping_add(i32::MAX)
                .wrapping_neg()
                .wrapping_sub(v.wrapping_abs())
        });
        assert_same(&prog::wrapping_i32(&x), &want, "wrapping_i32");
    });
}

fn wrapping_u32(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want = each(&x, |v| {
            v.wrapping_mul(3)
                .wrapping_add(u32::MAX)
                .wrapping_sub(v << 7)
        });
        assert_same(&prog::wrapping_u32(&x), &want, "wrapping_u32");
    });
}

fn div_rem_i64(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let a = rng.i64s(n);
        // Non-zero divisors, with -1 often enough to meet i64::MIN (which wraps).
        let b = rng.vec(n, |r| {
            r.edgy(&[-1, 1, 7, -7, i64::MAX, i64::MIN], |r| {
                r.int_in(1..=1000) * if r.bool() { 1 } else { -1 }
            })
        });
        let (q, m) = prog::div_rem_i64(&a, &b);
        assert_same(&q, &zip_with(&a, &b, i64::wrapping_div), "div");
        assert_same(&m, &zip_with(&a, &b, i64::wrapping_rem), "rem");
    });
}

fn int_math(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i32s(n), rng.i32s(n));
        let (abs, lo, hi) = prog::int_math(&a, &b);
        assert_same(&abs, &each(&a, i32::wrapping_abs), "abs");
        assert_same(&lo, &zip_with(&a, &b, i32::min), "min");
        assert_same(&hi, &zip_with(&a, &b, i32::max), "max");
    });
}

fn float_rem(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.f32s(n, -100.0, 100.0), rng.f64s(n, -1e6, 1e6));
        let (p, q) = prog::float_rem(&a, &b);
        assert_same(&p, &each(&a, |v| v % 0.75), "f32 %");
        assert_same(&q, &each(&b, |v| v % -2.5), "f64 %");
    });
}

fn big_literals(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u64s(n);
        let (a, b, c) = prog::big_literals(&x);
        assert_same(&a, &each(&x, |v| !v), "u64::MAX literal");
        assert_same(
            &b,
            &each(&x, |v| if v > 10 { i32::MIN } else { i32::MAX }),
            "i32::MIN literal",
        );
        assert_same(
            &c,
            &each(&x, |v| (v as u32) / 3_000_000_000),
            "3e9u32 literal",
        );
    });
}

fn neg_cast(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let (a, b) = prog::neg_cast(&x);
        assert_same(&a, &each(&x, |v| v.wrapping_neg() as u32), "-v as u32");
        assert_same(&b, &each(&x, |v| -(v as i64)), "-(v as i64)");
    });
}

on_every_place!(
    piecewise,
    int_ops_i32,
    int_ops_u64,
    float_logic,
    bool_logic,
    casts_from_f64,
    casts_between_ints,
    wrapping_i32,
    wrapping_u32,
    div_rem_i64,
    int_math,
    float_rem,
    big_literals,
    neg_cast,
);
