//! Scalar math functions (`f32`/`f64`, called as methods and as associated functions) and
//! constants.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn math_f32_unary(
        x: &[f32],
    ) -> (
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
        Vec<f32>,
    ) {
        (
            map(|v| v.abs(), x),
            map(|v| v.sqrt(), x),
            map(|v| v.exp(), x),
            map(|v| v.ln(), x),
            map(|v| v.log2(), x),
            map(|v| v.sin(), x),
            map(|v| v.cos(), x),
            map(|v| v.tanh(), x),
        )
    }

    #[parallel]
    pub fn math_f32_binary(
        x: &[f32],
        y: &[f32],
    ) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
        (
            map(|a, b| a.abs().powf(b), x, y),
            map(|a| a.floor(), x),
            map(|a| a.ceil(), x),
            map(|a, b| a.min(b), x, y),
            map(|a, b| a.max(b), x, y),
            map(|a, b| a.mul_add(b, a), x, y),
        )
    }

    #[parallel]
    pub fn math_f64_assoc_unary(
        x: &[f64],
    ) -> (
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
        Vec<f64>,
    ) {
        (
            map(|v| f64::abs(v), x),
            map(|v| f64::sqrt(v), x),
            map(|v| f64::exp(v), x),
            map(|v| f64::ln(v), x),
            map(|v| f64::log2(v), x),
            map(|v| f64::sin(v), x),
            map(|v| f64::cos(v), x),
            map(|v| f64::tanh(v), x),
        )
    }

    #[parallel]
    pub fn math_f64_assoc_binary(
        x: &[f64],
        y: &[f64],
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        (
            map(|a, b| f64::powf(f64::abs(a), b), x, y),
            map(|a| f64::floor(a), x),
            map(|a| f64::ceil(a), x),
            map(|a, b| f64::min(a, b), x, y),
            map(|a, b| f64::max(a, b), x, y),
            map(|a, b| f64::mul_add(a, b, b), x, y),
        )
    }

    #[parallel]
    pub fn consts(x: &[f64], b: &[bool]) -> (Vec<f64>, Vec<i32>, Vec<u64>, Vec<f32>) {
        (
            map(
                |v| v * std::f64::consts::PI + f64::EPSILON - std::f64::consts::E,
                x,
            ),
            map(|c| if c { i32::MAX } else { i32::MIN }, b),
            map(|c| if c { u64::MAX } else { u64::MIN }, b),
            map(
                |v| {
                    if v > 0.0 {
                        f32::MAX
                    } else if v < -0.5 {
                        f32::MIN
                    } else {
                        f32::INFINITY
                    }
                },
                x,
            ),
        )
    }

    #[parallel]
    pub fn spec_consts(x: &[f64]) -> (Vec<f64>, Vec<f32>) {
        (
            map(|v| v * f64::consts::PI, x),
            map(|v| v as f32 * std::f32::consts::E + f32::MIN_POSITIVE, x),
        )
    }

    #[parallel]
    pub fn round_trunc(x: &[f32]) -> (Vec<f32>, Vec<f32>) {
        (map(|v| v.round(), x), map(|v| f32::trunc(v), x))
    }

    #[parallel]
    pub fn int_assoc(a: &[i64], b: &[u32]) -> (Vec<i64>, Vec<u32>) {
        (
            map(|v| i64::abs(v), a),
            map(|v| u32::max(v, 7) + u32::min(v, 3), b),
        )
    }

    #[parallel]
    pub fn literal_methods(x: &[f32]) -> Vec<f32> {
        map(|v| v * 2.0f32.sqrt() + (-1.5f32).abs(), x)
    }
}

/// The checks of a unary and a binary math program, written once for `f32` and `f64`:
/// the element type, its `Rng` draw, the range of the unary inputs, and the `mul_add` the
/// binary program computes.
macro_rules! float_math_checks {
    ($unary:ident, $binary:ident, $t:ident, $draw:ident, $lo:expr, $hi:expr,
     |$a:ident, $b:ident| $fma:expr) => {
        fn $unary(place: Place) {
            let ulps = math_ulps(place);
            each_size(place, &ALL_SIZES, |n, rng| {
                let x = rng.$draw(n, $lo, $hi);
                let (abs, sqrt, exp, ln, log2, sin, cos, tanh) = prog::$unary(&x);
                assert_same(&abs, &each(&x, $t::abs), "abs");
                assert_ulps(&sqrt, &each(&x, $t::sqrt), ulps, "sqrt");
                assert_ulps(&exp, &each(&x, $t::exp), ulps, "exp");
                assert_ulps(&ln, &each(&x, $t::ln), ulps, "ln");
                assert_ulps(&log2, &each(&x, $t::log2), ulps, "log2");
                assert_ulps(&sin, &each(&x, $t::sin), ulps, "sin");
                assert_ulps(&cos, &each(&x, $t::cos), ulps, "cos");
                assert_ulps(&tanh, &each(&x, $t::tanh), ulps, "tanh");
            });
        }

        fn $binary(place: Place) {
            let ulps = math_ulps(place);
            each_size(place, &ALL_SIZES, |n, rng| {
                let (x, y) = (rng.$draw(n, -50.0, 50.0), rng.$draw(n, -3.0, 3.0));
                let (pow, floor, ceil, lo, hi, fma) = prog::$binary(&x, &y);
                let powf = zip_with(&x, &y, |a, b| a.abs().powf(b));
                assert_ulps(&pow, &powf, ulps, "powf");
                assert_same(&floor, &each(&x, $t::floor), "floor");
                assert_same(&ceil, &each(&x, $t::ceil), "ceil");
                assert_same(&lo, &zip_with(&x, &y, $t::min), "min");
                assert_same(&hi, &zip_with(&x, &y, $t::max), "max");
                assert_same(&fma, &zip_with(&x, &y, |$a, $b| $fma), "mul_add");
            });
        }
    };
}

float_math_checks!(
    math_f32_unary,
    math_f32_binary,
    f32,
    f32s,
    -20.0,
    20.0,
    |a, b| a.mul_add(b, a)
);
float_math_checks!(
    math_f64_assoc_unary,
    math_f64_assoc_binary,
    f64,
    f64s,
    -30.0,
    30.0,
    |a, b| a.mul_add(b, b)
);

fn consts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        let b = rng.bools(n);
        let (f, i, u, g) = prog::consts(&x, &b);
        let pi_e = each(&x, |v| {
            v * std::f64::consts::PI + f64::EPSILON - std::f64::consts::E
        });
        assert_same(&f, &pi_e, "PI, EPSILON, E");
        assert_same(
            &i,
            &each(&b, |c| if c { i32::MAX } else { i32::MIN }),
            "i32::MAX/MIN",
        );
        assert_same(
            &u,
            &each(&b, |c| if c { u64::MAX } else { 0 }),
            "u64::MAX/MIN",
        );
        let big = each(&x, |v| match v {
            v if v > 0.0 => f32::MAX,
            v if v < -0.5 => f32::MIN,
            _ => f32::INFINITY,
        });
        assert_same(&g, &big, "f32::MAX/MIN/INFINITY");
    });
}

fn spec_consts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f64s(n, -10.0, 10.0);
        let (a, b) = prog::spec_consts(&x);
        assert_same(
            &a,
            &each(&x, |v| v * std::f64::consts::PI),
            "f64::consts::PI",
        );
        let want = each(&x, |v| v as f32 * std::f32::consts::E + f32::MIN_POSITIVE);
        assert_same(&b, &want, "std::f32::consts::E");
    });
}

fn round_trunc(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.vec(n, |r| {
            r.edgy(&[0.5, -0.5, 1.5, -2.5], |r| r.f32_in(-1e3, 1e3))
        });
        let (r, t) = prog::round_trunc(&x);
        assert_same(&r, &each(&x, f32::round), "round");
        assert_same(&t, &each(&x, f32::trunc), "trunc");
    });
}

fn int_assoc(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.i64s(n), rng.u32s(n));
        let (p, q) = prog::int_assoc(&a, &b);
        assert_same(&p, &each(&a, i64::wrapping_abs), "i64::abs");
        assert_same(
            &q,
            &each(&b, |v| v.max(7).wrapping_add(v.min(3))),
            "u32::max, u32::min",
        );
    });
}

fn literal_methods(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -10.0, 10.0);
        let want = each(&x, |v| v * 2.0f32.sqrt() + 1.5);
        assert_same(&prog::literal_methods(&x), &want, "literal_methods");
    });
}

on_every_place!(
    math_f32_unary,
    math_f32_binary,
    math_f64_assoc_unary,
    math_f64_assoc_binary,
    consts,
    spec_consts,
    round_trunc,
    int_assoc,
    literal_methods,
);
