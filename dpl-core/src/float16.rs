//! The 16-bit floats `f16` and `bf16` (the `half` crate's types): how every place rounds
//! to them.
//!
//! An `f16`/`bf16` operation gives the exactly rounded result: it computes in `f32` and
//! rounds once, to nearest with ties to even ([`Half::from_f32`]; exact for `+ - * /
//! sqrt`, as `f32` has more than twice their precision plus two bits); math functions
//! compute in `f32` and round. Conversions from `f64` and from integers round *once*, as
//! Rust's `as` does ([`from_f64`], [`from_int`]): going through `f32` with plain rounding
//! could round twice (`1 + 2^-11 + 2^-40` would become `1.0` instead of `1 + 2^-10`), so
//! they round to `f32` *to odd* first, which keeps the sticky information a second
//! rounding needs (an `f32` has at least two bits more than either type). The GPU code
//! rounds with the same rules (`cvt.rn`), so the bits agree on every place.

pub use half::{bf16, f16};

use crate::interp::Value;
use crate::ir::Scalar;
use crate::nan::{canon_bf16, canon_f16};

/// `f16` and `bf16`: conversions to and from `f32`, and their bits.
pub trait Half: Copy + Send + Sync + PartialOrd + 'static {
    /// The bits of the canonical NaN ([`crate::nan`]).
    const NAN_BITS: u16;

    /// `x` rounded to nearest, ties to even (a NaN stays a NaN, `±inf` stay infinite).
    fn from_f32(x: f32) -> Self;

    /// The value as an `f32` (exact).
    fn to_f32(self) -> f32;

    /// The value with these bits.
    fn from_bits(bits: u16) -> Self;

    /// The bits of the value.
    fn to_bits(self) -> u16;
}

macro_rules! half_impl {
    ($($t:ident: $widen:ident, $narrow:ident;)*) => {$(
        impl Half for $t {
            const NAN_BITS: u16 = 0x7fff;
            #[inline(always)]
            fn from_f32(x: f32) -> $t {
                $t::from_bits($narrow(x))
            }
            #[inline(always)]
            fn to_f32(self) -> f32 {
                $widen($t::to_bits(self))
            }
            #[inline(always)]
            fn from_bits(bits: u16) -> $t {
                $t::from_bits(bits)
            }
            #[inline(always)]
            fn to_bits(self) -> u16 {
                $t::to_bits(self)
            }
        }
    )*};
}
half_impl!(f16: f16_to_f32, f32_to_f16; bf16: bf16_to_f32, f32_to_bf16;);

/// `h` (the value of a `H`) as an `f32`, exactly: what generated code calls for every
/// operand of a 16-bit float operation.
#[inline(always)]
pub fn widen<H: Half>(h: H) -> f32 {
    h.to_f32()
}

/// `x` rounded to `H`, to nearest with ties to even: what generated code calls for every
/// result of a 16-bit float operation.
#[inline(always)]
pub fn narrow<H: Half>(x: f32) -> H {
    H::from_f32(x)
}

// The conversions below give the bits of the `half` crate's, NaN payloads included (the
// tests compare them on every 16-bit value and on the `f32` values around every rounding
// boundary), but without branches: each case is computed and the right one selected, so
// a loop over a slice of 16-bit floats vectorizes (`half` without its `std` feature takes
// a branch per case, one conversion at a time).

/// The `f32` value of the `f16` with bits `h`: exact.
#[inline(always)]
fn f16_to_f32(h: u16) -> f32 {
    let h = u32::from(h);
    let sign = (h & 0x8000) << 16;
    let mag = h & 0x7fff;
    // Exponent and significand moved to an `f32`'s places: read as an `f32` the value is
    // 2^-112 times the `f16`'s (subnormals included), so one exact multiplication by 2^112
    // (bits 0x7780_0000) makes it right.
    let finite = (f32::from_bits(mag << 13) * f32::from_bits(0x7780_0000)).to_bits();
    // Infinities and NaNs (all exponent bits set): all of the `f32`'s set too, and a NaN
    // made quiet.
    let quiet = if mag > 0x7c00 {
        0x7fc0_0000
    } else {
        0x7f80_0000
    };
    let special = (mag << 13) | quiet;
    f32::from_bits(sign | if mag >= 0x7c00 { special } else { finite })
}

/// The bits of `x` rounded to an `f16`, to nearest with ties to even.
#[inline(always)]
fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = (bits >> 16) & 0x8000;
    let mag = bits & 0x7fff_ffff;
    // Normal results: the exponent rebiased from 127 to 15 (minus 112 << 23), then the 13
    // bits below the `f16`'s significand rounded away, ties to even (adding just under a
    // half, plus one when the kept part is odd; a carry runs into the exponent, up to
    // infinity at 0x7c00).
    let rebiased = mag.wrapping_sub(112 << 23);
    let normal = rebiased.wrapping_add(0x0fff + ((rebiased >> 13) & 1)) >> 13;
    // Subnormal results (below 2^-14): adding 0.5, whose ulp is the `f16`'s subnormal
    // step 2^-24, makes the hardware round the value to that step; the significand then
    // holds the `f16`'s bits (0x400 when it rounds up to the smallest normal).
    let tiny = (f32::from_bits(mag) + 0.5)
        .to_bits()
        .wrapping_sub(0x3f00_0000);
    // Infinities, and NaNs keeping their top significand bits, made quiet.
    let nan = if mag > 0x7f80_0000 { 0x0200 } else { 0 };
    let special = 0x7c00 | nan | ((mag & 0x007f_ffff) >> 13);
    let h = if mag < 113 << 23 { tiny } else { normal };
    // At 2^16 and above (and at infinity), infinity; NaNs.
    let h = if mag >= 143 << 23 { 0x7c00 } else { h };
    let h = if mag >= 0x7f80_0000 { special } else { h };
    (sign | h) as u16
}

/// The `f32` value of the `bf16` with bits `h` (its upper half): exact, a NaN made quiet.
#[inline(always)]
fn bf16_to_f32(h: u16) -> f32 {
    let h = u32::from(h);
    let quiet = if h & 0x7fff > 0x7f80 { 0x0040 } else { 0 };
    f32::from_bits((h | quiet) << 16)
}

/// The bits of `x` rounded to a `bf16` (the upper half of an `f32`), to nearest with ties
/// to even; a NaN keeps its top significand bits, made quiet.
#[inline(always)]
fn f32_to_bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16;
    let nan = (bits >> 16) | 0x0040;
    (if bits & 0x7fff_ffff > 0x7f80_0000 {
        nan
    } else {
        rounded
    }) as u16
}

/// `x` rounded to an `f32` toward zero, with the last significand bit set when inexact
/// ("round to odd"): rounding the result to nearest at a precision at least two bits
/// smaller gives the nearest value to `x` itself.
#[inline]
fn odd_f32(x: f64) -> f32 {
    let r = x as f32;
    if x.is_nan() || f64::from(r) == x {
        return r;
    }
    // Toward zero: the nearest `f32` may lie beyond `x` (or be infinite).
    let mut bits = r.to_bits();
    if f64::from(r).abs() > x.abs() {
        bits -= 1;
    }
    // Of the two neighbours of `x` (by magnitude), the one with an odd last bit.
    if bits & 1 == 0 {
        bits += 1;
    }
    f32::from_bits(bits)
}

/// `x` (an integer of any dpl type) rounded to an `f32` to odd, as [`odd_f32`].
#[inline]
fn odd_f32_of_int(x: i128) -> f32 {
    let m = x.unsigned_abs();
    let r = if m < 1 << 24 {
        m as f32
    } else {
        // The top 24 bits, the last one set when any bit below them is.
        let shift = 128 - m.leading_zeros() - 24;
        let mut top = m >> shift;
        if m & ((1 << shift) - 1) != 0 {
            top |= 1;
        }
        (top as f32) * f32::from_bits((127 + shift) << 23)
    };
    if x < 0 { -r } else { r }
}

/// `x as H`: `x` rounded once to nearest, ties to even.
#[inline]
pub fn from_f64<H: Half>(x: f64) -> H {
    H::from_f32(odd_f32(x))
}

/// `x as H` for an integer `x` of any dpl type: rounded once to nearest, ties to even.
#[inline]
pub fn from_int<H: Half>(x: i128) -> H {
    H::from_f32(odd_f32_of_int(x))
}

/// How the interpreter ([`crate::interp`]) computes on 16-bit floats: `op` applied to the
/// exact `f32` values ([`Value::F32`]) of `args`, its float result rounded once to their
/// type and its NaN made canonical ([`crate::nan`]); a comparison's `bool` unchanged.
/// `None` unless every argument is an `f16`, or every one a `bf16`.
pub(crate) fn in_f32<E>(
    args: &[&Value],
    op: impl FnOnce(&[&Value]) -> Result<Value, E>,
) -> Option<Result<Value, E>> {
    let ty = args.first()?.scalar_type().filter(|s| s.is_half())?;
    let mut wide = Vec::with_capacity(args.len());
    for a in args {
        match a {
            Value::F16(h) if ty == Scalar::F16 => wide.push(Value::F32(h.to_f32())),
            Value::BF16(h) if ty == Scalar::BF16 => wide.push(Value::F32(h.to_f32())),
            _ => return None,
        }
    }
    let wide: Vec<&Value> = wide.iter().collect();
    Some(op(&wide).map(|r| match (r, ty) {
        (Value::F32(r), Scalar::F16) => Value::F16(canon_f16(f16::from_f32(r))),
        (Value::F32(r), _) => Value::BF16(canon_bf16(bf16::from_f32(r))),
        (r, _) => r,
    }))
}

/// `x as to` for a scalar value `x` (the interpreter's casts) when `to` is `f16` or
/// `bf16`: rounded once, its NaN canonical. `None` for other types and for values that are
/// not scalars.
pub(crate) fn cast(x: &Value, to: Scalar) -> Option<Value> {
    fn round<H: Half>(x: &Value) -> Option<H> {
        Some(match *x {
            Value::F16(h) => H::from_f32(h.to_f32()),
            Value::BF16(h) => H::from_f32(h.to_f32()),
            Value::F32(v) => H::from_f32(v),
            Value::F64(v) => from_f64(v),
            Value::Bool(b) => from_int(b.into()),
            ref v => from_int(v.as_int()?),
        })
    }
    match to {
        Scalar::F16 => round(x).map(|h| Value::F16(canon_f16(h))),
        Scalar::BF16 => round(x).map(|h| Value::BF16(canon_bf16(h))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every finite value and the midpoint to the next one (exact in `f32`), and the
    /// `f32` values just below and above it, round as round-to-nearest-even says:
    /// subnormals, the overflow to infinity and the largest values included.
    fn rounds_to_nearest_even<H: Half + std::fmt::Debug>(max_bits: u16) {
        for b in 0..=max_bits {
            let (lo, hi) = (H::from_bits(b).to_f32(), H::from_bits(b + 1).to_f32());
            let mid = if hi.is_infinite() {
                // The midpoint to the next binade's first value, were it finite.
                (f64::from(lo) + (f64::from(lo) - f64::from(H::from_bits(b - 1).to_f32())) / 2.0)
                    as f32
            } else {
                ((f64::from(lo) + f64::from(hi)) / 2.0) as f32
            };
            let even = if b & 1 == 0 { b } else { b + 1 };
            for sign in [0u16, 0x8000] {
                let s = |x: f32| if sign != 0 { -x } else { x };
                assert_eq!(H::from_f32(s(lo)).to_bits(), b | sign);
                assert_eq!(
                    H::from_f32(s(mid)).to_bits(),
                    even | sign,
                    "tie above {b:#x}"
                );
                let below = f32::from_bits(mid.to_bits() - 1);
                let above = f32::from_bits(mid.to_bits() + 1);
                assert_eq!(H::from_f32(s(below)).to_bits(), b | sign);
                assert_eq!(H::from_f32(s(above)).to_bits(), (b + 1) | sign);
                // Rounding from `f64` and from integers agrees with rounding from `f32`
                // where the value is an `f32`.
                assert_eq!(from_f64::<H>(f64::from(s(mid))).to_bits(), even | sign);
                if mid.fract() == 0.0 && mid.abs() < 1e30 {
                    let i = s(mid) as i128;
                    assert_eq!(from_int::<H>(i).to_bits(), even | sign, "int {i}");
                }
            }
        }
    }

    /// The branch-free conversions give the `half` crate's bits: widening every 16-bit
    /// value, and narrowing every `f32` whose low 13 bits (below an `f16`'s significand)
    /// or low 16 bits (below a `bf16`'s) sit at a rounding boundary (zero, the tie and its
    /// neighbours, the top), at every sign, exponent and upper significand: subnormals,
    /// overflow, infinities and NaN payloads included; and a sweep of other values.
    #[test]
    fn conversions_match_the_half_crate() {
        for h in 0..=u16::MAX {
            let (a, b) = (f16_to_f32(h), f16::from_bits(h).to_f32());
            assert_eq!(a.to_bits(), b.to_bits(), "f16 {h:#06x}");
            let (a, b) = (bf16_to_f32(h), bf16::from_bits(h).to_f32());
            assert_eq!(a.to_bits(), b.to_bits(), "bf16 {h:#06x}");
        }
        let check = |x: u32| {
            let f = f32::from_bits(x);
            assert_eq!(
                f32_to_f16(f),
                f16::from_f32(f).to_bits(),
                "f32 {x:#010x} to f16"
            );
            assert_eq!(
                f32_to_bf16(f),
                bf16::from_f32(f).to_bits(),
                "f32 {x:#010x} to bf16"
            );
        };
        for high in 0..1u32 << 19 {
            for low in [0, 1, 0x7ff, 0xfff, 0x1000, 0x1001, 0x17ff, 0x1fff] {
                check(high << 13 | low);
            }
        }
        for high in 0..1u32 << 16 {
            for low in [0x7fff, 0x8000, 0x8001, 0xffff] {
                check(high << 16 | low);
            }
        }
        for x in (0..=u32::MAX).step_by(65_521) {
            check(x);
        }
    }

    #[test]
    fn f16_rounds_to_nearest_even_everywhere() {
        // 0x7bff is f16::MAX; 0x7c00 is infinity.
        rounds_to_nearest_even::<f16>(0x7bff);
    }

    #[test]
    fn bf16_rounds_to_nearest_even_everywhere() {
        // 0x7f7f is bf16::MAX; 0x7f80 is infinity.
        rounds_to_nearest_even::<bf16>(0x7f7f);
    }

    #[test]
    fn conversions_from_f64_and_integers_round_once() {
        // 1 + 2^-11 + 2^-40: just above the tie between 1 and 1 + 2^-10 (rounding to `f32`
        // first would land on the tie and give 1).
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(from_f64::<f16>(x), f16::from_f32(1.0 + 2f32.powi(-10)));
        assert_eq!(from_f64::<f16>(-x), f16::from_f32(-1.0 - 2f32.powi(-10)));
        let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(from_f64::<bf16>(y), bf16::from_f32(1.0 + 2f32.powi(-7)));
        // 2^31 + 2^23 + 1 is just above the bf16 tie between 2^31 and 2^31 + 2^24.
        let i = (1i128 << 31) + (1 << 23) + 1;
        assert_eq!(from_int::<bf16>(i).to_f32(), 2f32.powi(31) + 2f32.powi(24));
        assert_eq!(
            from_int::<bf16>(-i).to_f32(),
            -(2f32.powi(31) + 2f32.powi(24))
        );
        assert_eq!(
            from_int::<bf16>((1 << 31) + (1 << 23)).to_f32(),
            2f32.powi(31)
        );
        assert_eq!(from_int::<bf16>(u64::MAX.into()).to_f32(), 2f32.powi(64));
        assert_eq!(from_int::<f16>(65519).to_f32(), 65504.0);
        assert_eq!(from_int::<f16>(65520), f16::INFINITY);
        assert_eq!(from_int::<f16>(i64::MIN.into()), f16::NEG_INFINITY);
        // Beyond f32's range, and tiny values below f16's smallest subnormal.
        assert_eq!(from_f64::<bf16>(1e300), bf16::INFINITY);
        assert_eq!(from_f64::<f16>(-1e-300).to_bits(), 0x8000);
        assert_eq!(from_f64::<f16>(2f64.powi(-25) * (1.0 + 1e-12)).to_bits(), 1);
        assert_eq!(from_f64::<f16>(2f64.powi(-25)).to_bits(), 0);
        // Exact values, ±0, infinities and NaN.
        for v in [
            0.0,
            -0.0,
            1.5,
            -2.0,
            65504.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(from_f64::<f16>(v).to_f32().to_bits(), (v as f32).to_bits());
        }
        assert!(from_f64::<bf16>(f64::NAN).to_f32().is_nan());
    }

    #[test]
    fn the_canonical_f32_nan_rounds_to_the_canonical_16_bit_nans() {
        let nan = f32::from_bits(crate::nan::F32_BITS);
        assert_eq!(f16::from_f32(nan).to_bits(), <f16 as Half>::NAN_BITS);
        assert_eq!(bf16::from_f32(nan).to_bits(), <bf16 as Half>::NAN_BITS);
    }
}
