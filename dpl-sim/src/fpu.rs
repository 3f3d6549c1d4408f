//! Floating-point arithmetic with PTX's rounding modes.
//!
//! Rust's `+ - * / sqrt mul_add` are IEEE round-to-nearest-even, which is `.rn`. The
//! directed modes (`.rz .rm .rp`) start from the round-to-nearest result and move it one
//! unit in the last place when the exact error term (computed with error-free
//! transformations: TwoSum for addition, an FMA for products, quotients and square
//! roots) says the exact result lies on the other side. Half and bfloat16 conversions are
//! done from f64 by scaling to an integer significand and rounding that integer.

use crate::ir::Rnd;

/// Canonical NaN of f32 results (as on NVIDIA GPUs).
pub(crate) const F32_NAN: u32 = 0x7fff_ffff;

macro_rules! float_impl {
    ($t:ty, $bits:ty, $next_up:ident, $next_down:ident, $adjust:ident) => {
        pub(crate) fn $next_up(x: $t) -> $t {
            if x.is_nan() || x == <$t>::INFINITY {
                return x;
            }
            if x == 0.0 {
                return <$t>::from_bits(1);
            }
            let b = x.to_bits();
            <$t>::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
        }
        pub(crate) fn $next_down(x: $t) -> $t {
            -$next_up(-x)
        }
        /// Adjusts the round-to-nearest result `r` for mode `rnd`, given the sign of
        /// `exact - r` (`err`) and whether the exact result is finite.
        pub(crate) fn $adjust(r: $t, err: f64, exact_finite: bool, rnd: Rnd) -> $t {
            if r.is_nan() {
                return r;
            }
            if r.is_infinite() {
                if !exact_finite {
                    return r;
                }
                let max = <$t>::MAX.copysign(r);
                return match rnd {
                    Rnd::Rz => max,
                    Rnd::Rm if r > 0.0 => max,
                    Rnd::Rp if r < 0.0 => max,
                    _ => r,
                };
            }
            if err == 0.0 || err.is_nan() {
                return r;
            }
            match rnd {
                Rnd::Rz => {
                    if r > 0.0 && err < 0.0 {
                        $next_down(r)
                    } else if r < 0.0 && err > 0.0 {
                        $next_up(r)
                    } else if r == 0.0 {
                        r
                    } else {
                        r
                    }
                }
                Rnd::Rm if err < 0.0 => $next_down(r),
                Rnd::Rp if err > 0.0 => $next_up(r),
                _ => r,
            }
        }
    };
}

float_impl!(f32, u32, next_up32, next_down32, adjust32);
float_impl!(f64, u64, next_up64, next_down64, adjust64);

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Whether `rnd` is a directed (non-nearest) mode.
fn directed(rnd: Rnd) -> bool {
    matches!(rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp)
}

pub(crate) fn add32(a: f32, b: f32, rnd: Rnd) -> f32 {
    let r = a + b;
    if !directed(rnd) {
        return r;
    }
    let (s, e) = two_sum(a as f64, b as f64);
    let err = (s - r as f64) + e;
    let r = adjust32(r, err, a.is_finite() && b.is_finite(), rnd);
    if r == 0.0 && a + b == 0.0 && rnd == Rnd::Rm && (a != 0.0 || b != 0.0) {
        -0.0
    } else {
        r
    }
}

pub(crate) fn add64(a: f64, b: f64, rnd: Rnd) -> f64 {
    let r = a + b;
    if !directed(rnd) {
        return r;
    }
    let (_, e) = two_sum(a, b);
    let r2 = adjust64(r, e, a.is_finite() && b.is_finite(), rnd);
    if r2 == 0.0 && rnd == Rnd::Rm && (a != 0.0 || b != 0.0) {
        -0.0
    } else {
        r2
    }
}

pub(crate) fn mul32(a: f32, b: f32, rnd: Rnd) -> f32 {
    let r = a * b;
    if !directed(rnd) {
        return r;
    }
    let exact = a as f64 * b as f64;
    adjust32(r, exact - r as f64, a.is_finite() && b.is_finite(), rnd)
}

pub(crate) fn mul64(a: f64, b: f64, rnd: Rnd) -> f64 {
    let r = a * b;
    if !directed(rnd) {
        return r;
    }
    let e = a.mul_add(b, -r);
    adjust64(r, e, a.is_finite() && b.is_finite(), rnd)
}

pub(crate) fn fma32(a: f32, b: f32, c: f32, rnd: Rnd) -> f32 {
    let r = a.mul_add(b, c);
    if !directed(rnd) {
        return r;
    }
    let p = a as f64 * b as f64;
    let (s, e) = two_sum(p, c as f64);
    let err = (s - r as f64) + e;
    adjust32(r, err, a.is_finite() && b.is_finite() && c.is_finite(), rnd)
}

pub(crate) fn fma64(a: f64, b: f64, c: f64, rnd: Rnd) -> f64 {
    let r = a.mul_add(b, c);
    if !directed(rnd) {
        return r;
    }
    let p = a * b;
    let pe = a.mul_add(b, -p);
    let (s, se) = two_sum(p, c);
    let err = (s - r) + (se + pe);
    adjust64(r, err, a.is_finite() && b.is_finite() && c.is_finite(), rnd)
}

pub(crate) fn div32(a: f32, b: f32, rnd: Rnd) -> f32 {
    let r = a / b;
    if !directed(rnd) {
        return r;
    }
    let exact = a as f64 / b as f64;
    // f64 quotient is not exact, but its error is far below an f32 ulp; the residual in f64
    // decides ties of the adjustment.
    let resid = (-(r as f64)).mul_add(b as f64, a as f64) * (b as f64).signum();
    let err = if resid != 0.0 {
        resid
    } else {
        exact - r as f64
    };
    adjust32(r, err, a.is_finite() && b.is_finite() && b != 0.0, rnd)
}

pub(crate) fn div64(a: f64, b: f64, rnd: Rnd) -> f64 {
    let r = a / b;
    if !directed(rnd) {
        return r;
    }
    let resid = (-r).mul_add(b, a) * b.signum();
    adjust64(r, resid, a.is_finite() && b.is_finite() && b != 0.0, rnd)
}

pub(crate) fn sqrt32(a: f32, rnd: Rnd) -> f32 {
    let r = a.sqrt();
    if !directed(rnd) || a.is_nan() || a <= 0.0 {
        return r;
    }
    let resid = (-(r as f64)).mul_add(r as f64, a as f64);
    adjust32(r, resid, a.is_finite(), rnd)
}

pub(crate) fn sqrt64(a: f64, rnd: Rnd) -> f64 {
    let r = a.sqrt();
    if !directed(rnd) || a.is_nan() || a <= 0.0 {
        return r;
    }
    let resid = (-r).mul_add(r, a);
    adjust64(r, resid, a.is_finite(), rnd)
}

/// Flushes an f32 subnormal to a zero of the same sign.
pub(crate) fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// PTX `min` (`max` false) and `max` (`max` true) of floats: a NaN loses to a number (two
/// NaNs give the default NaN), and -0 is less than +0. f32 and half operands are exact in
/// f64, and the result is one of the operands.
pub(crate) fn fminmax(a: f64, b: f64, max: bool) -> f64 {
    // `x` comes before `y` in the order where -0 is less than +0.
    let before =
        |x: f64, y: f64| x < y || (x == y && x.is_sign_negative() && !y.is_sign_negative());
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => b,
        (false, true) => a,
        _ if max && before(a, b) => b,
        _ if !max && before(b, a) => b,
        _ => a,
    }
}

/// Rounds an integral-valued result for `.rni .rzi .rmi .rpi` (and the plain modes when
/// used on a float-to-int conversion).
pub(crate) fn round_int(x: f64, rnd: Rnd) -> f64 {
    match rnd {
        Rnd::Rzi | Rnd::Rz => x.trunc(),
        Rnd::Rmi | Rnd::Rm => x.floor(),
        Rnd::Rpi | Rnd::Rp => x.ceil(),
        Rnd::Rna => x.round(),
        _ => x.round_ties_even(),
    }
}

/// Rounds the magnitude `a >= 0` (already scaled so one unit is the target quantum) to an
/// integer for mode `rnd` given the sign of the original value.
fn round_mag(a: f64, neg: bool, rnd: Rnd) -> f64 {
    match rnd {
        Rnd::Rz => a.trunc(),
        Rnd::Rm => {
            if neg {
                a.ceil()
            } else {
                a.trunc()
            }
        }
        Rnd::Rp => {
            if neg {
                a.trunc()
            } else {
                a.ceil()
            }
        }
        Rnd::Rna => a.round(),
        _ => a.round_ties_even(),
    }
}

/// Converts an f64 to a small IEEE-style binary format with `mant` fraction bits and `exp`
/// exponent bits (f16: 10/5, bf16: 7/8), rounding with `rnd`; returns the bits.
pub(crate) fn to_small_float(x: f64, mant: u32, exp: u32, rnd: Rnd) -> u32 {
    let sign = if x.is_sign_negative() {
        1u32 << (mant + exp)
    } else {
        0
    };
    let emax_field = (1u32 << exp) - 1;
    let bias = (1i32 << (exp - 1)) - 1;
    if x.is_nan() {
        return (emax_field << mant) | ((1 << mant) - 1) | sign;
    }
    let a = x.abs();
    let max_bits = ((emax_field - 1) << mant) | ((1 << mant) - 1);
    let inf_bits = emax_field << mant;
    if a.is_infinite() {
        return sign | inf_bits;
    }
    if a == 0.0 {
        return sign;
    }
    let neg = sign != 0;
    let min_normal_exp = 1 - bias;
    let e = (a.log2().floor() as i32).max(min_normal_exp);
    // Guard against log2 inaccuracy at powers of two.
    let e = if a < 2f64.powi(e) && e > min_normal_exp {
        e - 1
    } else {
        e
    };
    let e = if a >= 2f64.powi(e + 1) { e + 1 } else { e };
    let quantum = 2f64.powi(e - mant as i32);
    let q = round_mag(a / quantum, neg, rnd);
    let v = q * quantum;
    if v == 0.0 {
        return sign;
    }
    // Re-encode the rounded value (it may have carried into the next binade).
    let (e2, m) = if v < 2f64.powi(min_normal_exp) {
        (0u32, (v / 2f64.powi(min_normal_exp - mant as i32)) as u32)
    } else {
        let mut e2 = v.log2().floor() as i32;
        if v < 2f64.powi(e2) {
            e2 -= 1;
        }
        if v >= 2f64.powi(e2 + 1) {
            e2 += 1;
        }
        let field = e2 + bias;
        if field >= emax_field as i32 {
            // Overflow: infinity for nearest, the largest finite for modes toward zero.
            let to_max = match rnd {
                Rnd::Rz => true,
                Rnd::Rm => !neg,
                Rnd::Rp => neg,
                _ => false,
            };
            return sign | if to_max { max_bits } else { inf_bits };
        }
        (
            field as u32,
            ((v / 2f64.powi(e2 - mant as i32)) as u32) - (1 << mant),
        )
    };
    sign | (e2 << mant) | m
}

/// The value of a small-float bit pattern (see [`to_small_float`]).
pub(crate) fn from_small_float(bits: u32, mant: u32, exp: u32) -> f64 {
    let sign = if bits >> (mant + exp) & 1 == 1 {
        -1.0
    } else {
        1.0
    };
    let emax_field = (1u32 << exp) - 1;
    let bias = (1i32 << (exp - 1)) - 1;
    let e = (bits >> mant) & emax_field;
    let m = bits & ((1 << mant) - 1);
    if e == emax_field {
        return if m == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if e == 0 {
        return sign * m as f64 * 2f64.powi(1 - bias - mant as i32);
    }
    sign * (1.0 + m as f64 / (1u64 << mant) as f64) * 2f64.powi(e as i32 - bias)
}

/// f32 to IEEE half with rounding.
pub(crate) fn f32_to_f16(x: f32, rnd: Rnd) -> u16 {
    to_small_float(x as f64, 10, 5, rnd) as u16
}

/// IEEE half to f32 (exact).
#[cfg(test)]
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    from_small_float(h as u32, 10, 5) as f32
}

/// Rounds `exact` (an integer given as i128) converted to f32 with a directed mode.
pub(crate) fn int_to_f32(x: i128, rnd: Rnd) -> f32 {
    let r = x as f32;
    if !directed(rnd) {
        return r;
    }
    let err = (x - r as i128).signum() as f64;
    adjust32(r, err, true, rnd)
}

/// Rounds `exact` (an integer given as i128) converted to f64 with a directed mode.
pub(crate) fn int_to_f64(x: i128, rnd: Rnd) -> f64 {
    let r = x as f64;
    if !directed(rnd) {
        return r;
    }
    let err = (x - r as i128).signum() as f64;
    adjust64(r, err, true, rnd)
}

/// f64 to f32 with rounding mode.
pub(crate) fn f64_to_f32(x: f64, rnd: Rnd) -> f32 {
    let r = x as f32;
    if !directed(rnd) {
        return r;
    }
    adjust32(r, x - r as f64, x.is_finite(), rnd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding_brackets_the_exact_result() {
        let cases = [
            (1.0f32, 1e-9f32),
            (1.0, -1e-9),
            (-1.0, 1e-9),
            (3.0, 1.0 / 3.0),
            (1e38, 1e38),
        ];
        for (a, b) in cases {
            let rm = add32(a, b, Rnd::Rm);
            let rp = add32(a, b, Rnd::Rp);
            let exact = a as f64 + b as f64;
            assert!(
                (rm as f64) <= exact && exact <= rp as f64,
                "{a} + {b}: {rm} {rp}"
            );
            let rz = add32(a, b, Rnd::Rz);
            assert!((rz as f64).abs() <= exact.abs());
            let pm = mul32(a, b, Rnd::Rm);
            let pp = mul32(a, b, Rnd::Rp);
            let pe = a as f64 * b as f64;
            assert!((pm as f64) <= pe && pe <= pp as f64);
        }
        assert_eq!(add32(f32::MAX, f32::MAX, Rnd::Rz), f32::MAX);
        // 1/3 rounds up to nearest, so rounding down is one ulp below.
        assert_eq!(div32(1.0, 3.0, Rnd::Rm), next_down32(1.0f32 / 3.0));
        assert_eq!(div32(1.0, 3.0, Rnd::Rp), 1.0f32 / 3.0);
        for x in [2.0f32, 3.0, 5.0, 0.1, 1e30] {
            let lo = sqrt32(x, Rnd::Rm) as f64;
            let hi = sqrt32(x, Rnd::Rp) as f64;
            let exact = (x as f64).sqrt();
            assert!(lo <= exact && exact <= hi && lo < hi, "sqrt {x}");
            assert_eq!(sqrt32(x, Rnd::Rz), sqrt32(x, Rnd::Rm));
        }
    }

    #[test]
    fn half_round_trips() {
        for h in [
            0u16, 1, 0x3c00, 0x7bff, 0x8001, 0x0400, 0x03ff, 0xc000, 0x7c00,
        ] {
            let f = f16_to_f32(h);
            assert_eq!(f32_to_f16(f, Rnd::Rn), h, "{h:#x} -> {f}");
        }
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0, Rnd::Rn), 0x3c00); // tie to even
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0, Rnd::Rn), 0x3c02);
        assert_eq!(f32_to_f16(70000.0, Rnd::Rn), 0x7c00);
        assert_eq!(f32_to_f16(70000.0, Rnd::Rz), 0x7bff);
        assert_eq!(f32_to_f16(1.0 + 1.0 / 4096.0, Rnd::Rp), 0x3c01);
    }

    #[test]
    fn min_and_max_order_minus_zero_first_and_drop_nans() {
        let bits = |x: f64| x.to_bits();
        let (nan, pz, nz) = (f64::NAN, 0.0f64, -0.0f64);
        for (a, b, min, max) in [
            (1.0, 2.0, 1.0, 2.0),
            (2.0, 1.0, 1.0, 2.0),
            (-3.0, -3.0, -3.0, -3.0),
            (nz, pz, nz, pz),
            (pz, nz, nz, pz),
            (nz, nz, nz, nz),
            (nan, 5.0, 5.0, 5.0),
            (-5.0, nan, -5.0, -5.0),
            (nan, nz, nz, nz),
            (
                f64::NEG_INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::INFINITY,
            ),
        ] {
            assert_eq!(bits(fminmax(a, b, false)), bits(min), "min({a}, {b})");
            assert_eq!(bits(fminmax(a, b, true)), bits(max), "max({a}, {b})");
        }
        // Two NaNs (whatever their payloads) give the default NaN.
        let other = f64::from_bits(0xfff0_0000_0000_0001);
        assert_eq!(bits(fminmax(other, other, false)), bits(f64::NAN));
        assert_eq!(bits(fminmax(nan, other, true)), bits(f64::NAN));
    }
}
