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
    ($($t:ident),*) => {$(
        impl Half for $t {
            const NAN_BITS: u16 = 0x7fff;
            #[inline(always)]
            fn from_f32(x: f32) -> $t {
                $t::from_f32(x)
            }
            #[inline(always)]
            fn to_f32(self) -> f32 {
                $t::to_f32(self)
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
half_impl!(f16, bf16);

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
