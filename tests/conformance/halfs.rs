//! The 16-bit floats `f16` and `bf16` (`dpl::f16`, `dpl::bf16`): arithmetic and math
//! functions computed in `f32` and rounded once, comparisons, casts to and from every
//! scalar type, sums, reductions and scans in dpl's order, sorts in IEEE `totalOrder` (NaNs,
//! `±0`, infinities), tuples mixing them with other types, scalar parameters and results,
//! `Nested` rows, `scatter_reduce` into them (sums, `min`/`max` among NaNs, `±0` and
//! infinities, tuples).
//!
//! The oracles are plain Rust on the `half` crate's types: its operators compute in `f32`
//! and round to nearest-even, as dpl's contract says; conversions from `f64` and from
//! integers are checked against the nearest value found by exact comparison
//! ([`nearest`]), not against another implementation of rounding.

use super::*;
use dpl::{bf16, f16};
use dpl_testkit::order::{ordered, ordered_from, scanned, scanned_exclusive};

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn arith_f16(x: &[f16], y: &[f16], k: f16) -> Vec<f16> {
        map(|a, b| (a * b + a) / (b - 1.5) - a % b + k, x, y)
    }

    #[parallel]
    pub fn arith_bf16(x: &[bf16], y: &[bf16], k: bf16) -> Vec<bf16> {
        map(|a, b| (a * b + a) / (b - 1.5) - a % b + k, x, y)
    }

    #[parallel]
    pub fn math_f16(x: &[f16], y: &[f16]) -> Vec<(f16, f16, f16, f16)> {
        map(
            |a, b| {
                (
                    a.abs().sqrt(),
                    a.exp() + b.sin(),
                    a.min(b).max(-2.0),
                    a.mul_add(b, 0.25).floor(),
                )
            },
            x,
            y,
        )
    }

    #[parallel]
    pub fn math_bf16(x: &[bf16], y: &[bf16]) -> Vec<(bf16, bf16, bf16, bf16)> {
        map(
            |a, b| {
                (
                    a.abs().sqrt(),
                    a.ln() + b.cos(),
                    a.max(b).min(f32::MAX as bf16),
                    a.powf(b).round(),
                )
            },
            x,
            y,
        )
    }

    #[parallel]
    pub fn compare(x: &[f16], y: &[f16]) -> Vec<(bool, bool, bool, bool, f16)> {
        map(|a, b| (a < b, a == b, a >= b, a != b, -a), x, y)
    }

    #[parallel]
    pub fn f16_to_ints(x: &[f16]) -> Vec<(i8, u8, i16, u16, i32, u32)> {
        map(
            |v| (v as i8, v as u8, v as i16, v as u16, v as i32, v as u32),
            x,
        )
    }

    #[parallel]
    pub fn f16_to_wide(x: &[f16]) -> Vec<(i64, u64, usize, bf16, f32, f64)> {
        map(
            |v| {
                (
                    v as i64, v as u64, v as usize, v as bf16, v as f32, v as f64,
                )
            },
            x,
        )
    }

    #[parallel]
    pub fn bf16_to_others(x: &[bf16]) -> Vec<(i8, u16, i32, u64, f16, f32, f64)> {
        map(
            |v| {
                (
                    v as i8, v as u16, v as i32, v as u64, v as f16, v as f32, v as f64,
                )
            },
            x,
        )
    }

    /// `i64` narrowed to each integer type first, then to `f16`.
    #[parallel]
    pub fn ints_to_f16(a: &[i64]) -> Vec<(f16, f16, f16, f16, f16, f16, f16, f16)> {
        map(
            |v| {
                (
                    v as i8 as f16,
                    v as u8 as f16,
                    v as i16 as f16,
                    v as u16 as f16,
                    v as i32 as f16,
                    v as u32 as f16,
                    v as f16,
                    v as u64 as f16,
                )
            },
            a,
        )
    }

    #[parallel]
    pub fn ints_to_bf16(a: &[i64]) -> Vec<(bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16)> {
        map(
            |v| {
                (
                    v as i8 as bf16,
                    v as u8 as bf16,
                    v as i16 as bf16,
                    v as u16 as bf16,
                    v as i32 as bf16,
                    v as u32 as bf16,
                    v as bf16,
                    v as u64 as bf16,
                )
            },
            a,
        )
    }

    #[parallel]
    pub fn floats_to_halfs(f: &[f32], d: &[f64]) -> Vec<(f16, bf16, f16, bf16, bool)> {
        map(
            |a, b| {
                (
                    a as f16,
                    a as bf16,
                    b as f16,
                    b as bf16,
                    (a as f16) < (b as f16),
                )
            },
            f,
            d,
        )
    }

    #[parallel]
    pub fn reductions(x: &[f16], y: &[bf16]) -> (f16, bf16, f16, bf16, f16) {
        (
            sum(x),
            sum(y),
            reduce(|a, b| a.min(b), x, f16::INFINITY),
            reduce(|a, b| a.max(b), y, bf16::NEG_INFINITY),
            reduce(|a, b| a + b, x, 0.5),
        )
    }

    #[parallel]
    pub fn scans(x: &[f16], y: &[bf16]) -> (Vec<f16>, Vec<bf16>) {
        (scan(|a, b| a + b, x), exclusive_scan(|a, b| a * b, y, 1.0))
    }

    #[parallel]
    pub fn sort_f16(x: &[f16]) -> Vec<f16> {
        sort(x)
    }

    #[parallel]
    pub fn sort_by_bf16(k: &[bf16], v: &[u32]) -> Vec<u32> {
        sort_by_key(k, v)
    }

    #[parallel]
    pub fn sort_pairs(k: &[f16], v: &[i8]) -> Vec<(f16, i8)> {
        sort(zip(k, v))
    }

    #[parallel]
    pub fn mixed_tuples(x: &[f16], y: &[bf16]) -> (Vec<(f16, bf16, f32)>, (f16, bf16)) {
        let t = map(|a, b| (a + 1.0, b * 2.0, a as f32 + b as f32), x, y);
        let s = reduce(
            |p, q| (p.0 + q.0, p.1.max(q.1)),
            zip(x, y),
            (0.0, bf16::MIN),
        );
        (t, s)
    }

    #[parallel]
    pub fn filter_halfs(x: &[f16]) -> Vec<f16> {
        filter(|v| v > 0.0, x)
    }

    #[parallel]
    pub fn row_sums(rows: &Nested<f16>) -> Vec<f16> {
        map(|r| sum(r), rows)
    }

    #[parallel]
    pub fn scale_rows(rows: &Nested<bf16>, k: bf16) -> Nested<bf16> {
        map(|r| map(|v| v * k - f16::MAX as bf16, r), rows)
    }

    #[parallel]
    pub fn constants() -> (f16, f16, bf16, bf16, f16) {
        (
            f16::MAX,
            f16::EPSILON,
            bf16::MIN_POSITIVE,
            3.0e38 as bf16,
            0.1 as f16,
        )
    }

    /// Per-bin sums of `f16` and `bf16` values into `dst`'s slots (a compare-and-swap loop
    /// on the slot's 32-bit word on the GPU places).
    #[parallel]
    pub fn scatter_sums(
        keys: &[u32],
        x: &[f16],
        y: &[bf16],
        dx: &[f16],
        dy: &[bf16],
    ) -> (Vec<f16>, Vec<bf16>) {
        (
            scatter_reduce(|a, b| a + b, x, keys, dx),
            scatter_reduce(|a, b| a + b, y, keys, dy),
        )
    }

    /// Per-bin minima and maxima (the second with the slot on the right of `max`).
    #[parallel]
    pub fn scatter_min_max(
        keys: &[u32],
        x: &[f16],
        y: &[bf16],
        dx: &[f16],
        dy: &[bf16],
    ) -> (Vec<f16>, Vec<f16>, Vec<bf16>, Vec<bf16>) {
        (
            scatter_reduce(|a, b| a.min(b), x, keys, dx),
            scatter_reduce(|a, b| b.max(a), x, keys, dx),
            scatter_reduce(|a, b| a.min(b), y, keys, dy),
            scatter_reduce(|a, b| b.max(a), y, keys, dy),
        )
    }

    /// Tuples holding 16-bit floats (combined under a lock per slot on the GPU places): a
    /// sum and a count, and the largest `bf16` with the smallest `f16` among its ties.
    #[parallel]
    pub fn scatter_pairs(
        keys: &[u32],
        x: &[f16],
        c: &[u32],
        y: &[bf16],
        w: &[f16],
        bins: usize,
    ) -> (Vec<(f16, u32)>, Vec<(bf16, f16)>) {
        (
            scatter_reduce(
                |a, b| (a.0 + b.0, a.1 + b.1),
                zip(x, c),
                keys,
                replicate((0.0f16, 0u32), bins),
            ),
            scatter_reduce(
                |a, b| {
                    if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
                        b
                    } else {
                        a
                    }
                },
                zip(y, w),
                keys,
                replicate((bf16::NEG_INFINITY, f16::INFINITY), bins),
            ),
        )
    }

    /// Literals with the 16-bit suffixes.
    #[parallel]
    pub fn suffixes(x: &[f16]) -> Vec<(f16, bf16)> {
        map(|v| (v * 1.5f16 + 0.1f16, 2bf16 - 0.3bf16), x)
    }
}

/// Bits of 16-bit floats, for comparisons where NaNs must match too.
trait Bits16: Copy + std::fmt::Debug {
    fn bits(self) -> u16;
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
    fn from_bits16(b: u16) -> Self;
    /// `MAX` plus one unit in the last place: where `inf` would be, were it finite.
    const PAST_MAX: f64;
}

impl Bits16 for f16 {
    fn bits(self) -> u16 {
        self.to_bits()
    }
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    fn from_bits16(b: u16) -> Self {
        f16::from_bits(b)
    }
    const PAST_MAX: f64 = 65536.0;
}

impl Bits16 for bf16 {
    fn bits(self) -> u16 {
        self.to_bits()
    }
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    fn from_bits16(b: u16) -> Self {
        bf16::from_bits(b)
    }
    const PAST_MAX: f64 = f64::from_bits((1023 + 128) << 52); // 2^128
}

/// `x` (an `f64`, or an integer given exactly as `i128`) rounded to the nearest `H`, ties
/// to the even bit pattern: the nearest of a first guess and its two neighbours, by
/// distances computed exactly (differences of nearby doubles are exact; integers beyond
/// 2^53 in `u128`).
fn nearest<H: Bits16>(x: f64, exact_int: Option<i128>) -> H {
    if x.is_nan() {
        return H::from_f32(f32::NAN);
    }
    let neg = exact_int.map_or(x.is_sign_negative(), |i| i < 0);
    let inf = H::from_f32(f32::INFINITY).bits();
    let a = x.abs();
    let mag = if a >= H::PAST_MAX {
        inf
    } else {
        let value = |m: u16| -> f64 {
            if m == inf {
                H::PAST_MAX
            } else {
                f64::from(H::from_bits16(m).to_f32())
            }
        };
        let big = exact_int.filter(|i| i.unsigned_abs() >= 1 << 53);
        let closer = |m: u16, best: u16| -> bool {
            let (dm, db) = match big {
                Some(i) => {
                    let d = |m: u16| i.unsigned_abs().abs_diff(value(m) as u128);
                    (d(m), d(best))
                }
                None => {
                    let d = |m: u16| (a - value(m)).abs();
                    return d(m) < d(best) || (d(m) == d(best) && m & 1 == 0);
                }
            };
            dm < db || (dm == db && m & 1 == 0)
        };
        let guess = H::from_f32(a as f32).bits() & 0x7fff;
        let mut best = guess;
        for m in [guess.saturating_sub(1), (guess + 1).min(inf)] {
            if closer(m, best) {
                best = m;
            }
        }
        best
    };
    H::from_bits16(mag | if neg { 0x8000 } else { 0 })
}

fn nearest_int<H: Bits16>(i: i128) -> H {
    nearest(i as f64, Some(i))
}

/// `n` f16 values: mostly moderate, with the edges (±0, ±inf, NaN, subnormals, MAX) often.
fn f16s(rng: &mut Rng, n: usize) -> Vec<f16> {
    let special = [
        f16::ZERO,
        f16::NEG_ZERO,
        f16::INFINITY,
        f16::NEG_INFINITY,
        f16::NAN,
        f16::from_bits(0xfe01),
        f16::MAX,
        f16::MIN,
        f16::from_bits(1),
        f16::from_bits(0x8003),
        f16::MIN_POSITIVE,
        f16::ONE,
    ];
    rng.vec(n, |r| {
        r.edgy(&special, |r| {
            if r.below(4) == 0 {
                f16::from_bits(r.u64() as u16)
            } else {
                f16::from_f32(r.f32_in(-300.0, 300.0))
            }
        })
    })
}

fn bf16s(rng: &mut Rng, n: usize) -> Vec<bf16> {
    let special = [
        bf16::ZERO,
        bf16::NEG_ZERO,
        bf16::INFINITY,
        bf16::NEG_INFINITY,
        bf16::NAN,
        bf16::MAX,
        bf16::MIN,
        bf16::from_bits(1),
        bf16::MIN_POSITIVE,
        bf16::ONE,
    ];
    rng.vec(n, |r| {
        r.edgy(&special, |r| {
            if r.below(4) == 0 {
                bf16::from_bits(r.u64() as u16)
            } else {
                bf16::from_f32(r.f32_in(-1e6, 1e6))
            }
        })
    })
}

/// Values that sum without overflowing: what a reduction's oracle can follow.
fn small_f16s(rng: &mut Rng, n: usize) -> Vec<f16> {
    rng.vec(n, |r| f16::from_f32(r.f32_in(-4.0, 4.0)))
}

fn small_bf16s(rng: &mut Rng, n: usize) -> Vec<bf16> {
    rng.vec(n, |r| bf16::from_f32(r.f32_in(-4.0, 4.0)))
}

/// Sizes without the big one.
const SMALL_SIZES: [usize; 3] = [0, 1, 1001];

fn arithmetic(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (f16s(rng, n), f16s(rng, n));
        let k = f16::from_f32(0.375);
        // The `half` crate's operators compute in `f32` and round once.
        let want = zip_with(&x, &y, |a, b| {
            (a * b + a) / (b - f16::from_f32(1.5)) - a % b + k
        });
        let got = prog::arith_f16(&x, &y, k);
        assert_same(&got, &want, "arith_f16");
        // Every NaN produced is the canonical one, whatever the NaN operands were.
        let nans: Vec<u16> = got
            .iter()
            .filter(|v| v.is_nan())
            .map(|v| v.to_bits())
            .collect();
        assert!(
            nans.iter().all(|&b| b == 0x7fff),
            "non-canonical NaNs: {nans:x?}"
        );
    });
    each_size(place, &SMALL_SIZES, |n, rng| {
        let (x, y) = (bf16s(rng, n), bf16s(rng, n));
        let k = bf16::from_f32(-7.0);
        let want = zip_with(&x, &y, |a, b| {
            (a * b + a) / (b - bf16::from_f32(1.5)) - a % b + k
        });
        let got = prog::arith_bf16(&x, &y, k);
        assert_same(&got, &want, "arith_bf16");
        assert!(
            got.iter()
                .filter(|v| v.is_nan())
                .all(|v| v.to_bits() == 0x7fff),
            "bf16 NaNs"
        );
        let (x, y) = (f16s(rng, n), f16s(rng, n));
        let want = zip_with(&x, &y, |a, b| (a < b, a == b, a >= b, a != b, -a));
        let got = prog::compare(&x, &y);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!((g.0, g.1, g.2, g.3), (w.0, w.1, w.2, w.3), "compare {w:?}");
            assert_exact(g.4, w.4, "compare: -a");
        }
    });
}

fn math(place: Place) {
    fn r16(x: f32) -> f16 {
        f16::from_f32(x)
    }
    fn rb(x: f32) -> bf16 {
        bf16::from_f32(x)
    }
    each_size(place, &SMALL_SIZES, |n, rng| {
        let (x, y) = (f16s(rng, n), f16s(rng, n));
        let got = prog::math_f16(&x, &y);
        assert_eq!(got.len(), n);
        for i in 0..n {
            let (a, b) = (x[i].to_f32(), y[i].to_f32());
            let m = r16(a.min(b)).to_f32().max(-2.0);
            let w = (
                r16(a.abs().sqrt()),
                r16(r16(a.exp()).to_f32() + r16(b.sin()).to_f32()),
                r16(m),
                r16(r16(a.mul_add(b, 0.25)).to_f32().floor()),
            );
            let g = got[i];
            for (gv, wv, what) in [
                (g.0, w.0, "sqrt"),
                (g.1, w.1, "exp+sin"),
                (g.2, w.2, "min/max"),
                (g.3, w.3, "mul_add/floor"),
            ] {
                assert_exact(gv, wv, &format!("math_f16 {what} of {a:?}, {b:?}"));
            }
        }
        let (x, y) = (bf16s(rng, n), bf16s(rng, n));
        let got = prog::math_bf16(&x, &y);
        for i in 0..n {
            let (a, b) = (x[i].to_f32(), y[i].to_f32());
            let w = (
                rb(a.abs().sqrt()),
                rb(rb(a.ln()).to_f32() + rb(b.cos()).to_f32()),
                rb(rb(a.max(b)).to_f32().min(bf16::from_f32(f32::MAX).to_f32())),
                rb(rb(a.powf(b)).to_f32().round()),
            );
            let g = got[i];
            for (gv, wv, what) in [
                (g.0, w.0, "sqrt"),
                (g.1, w.1, "ln+cos"),
                (g.2, w.2, "max/min"),
                (g.3, w.3, "powf/round"),
            ] {
                assert_exact(gv, wv, &format!("math_bf16 {what} of {a:?}, {b:?}"));
            }
        }
    });
}

fn casts(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let x = f16s(rng, n);
        let want: Vec<_> = each(&x, |v| {
            let f = v.to_f32();
            (f as i8, f as u8, f as i16, f as u16, f as i32, f as u32)
        });
        assert_eq!(prog::f16_to_ints(&x), want, "f16_to_ints");
        let got = prog::f16_to_wide(&x);
        for (g, v) in got.iter().zip(&x) {
            let f = v.to_f32();
            assert_eq!(
                (g.0, g.1, g.2),
                (f as i64, f as u64, f as usize),
                "f16_to_wide of {v:?}"
            );
            assert_exact(g.3, nearest::<bf16>(f64::from(f), None), "f16 as bf16");
            assert!(
                g.4.to_bits() == f.to_bits() || (f.is_nan() && g.4.is_nan()),
                "f16 as f32"
            );
            assert!(
                g.5.to_bits() == f64::from(f).to_bits() || (f.is_nan() && g.5.is_nan()),
                "f16 as f64"
            );
        }
        let x = bf16s(rng, n);
        let got = prog::bf16_to_others(&x);
        for (g, v) in got.iter().zip(&x) {
            let f = v.to_f32();
            assert_eq!(
                (g.0, g.1, g.2, g.3),
                (f as i8, f as u16, f as i32, f as u64),
                "bf16 of {v:?}"
            );
            assert_exact(g.4, nearest::<f16>(f64::from(f), None), "bf16 as f16");
            assert!(
                g.5.to_bits() == f.to_bits() || (f.is_nan() && g.5.is_nan()),
                "bf16 as f32"
            );
            assert!(
                g.6.to_bits() == f64::from(f).to_bits() || (f.is_nan() && g.6.is_nan()),
                "bf16 as f64"
            );
        }
        // Integers of every type, including the ties of bf16 above 2^24 (2^31 + 2^23 + 1
        // must round up: rounding through f32 would land on the tie and round down).
        let a: Vec<i64> = rng.vec(n, |r| {
            r.edgy(
                &[
                    0,
                    -1,
                    65504,
                    65519,
                    65520,
                    -65536,
                    (1 << 31) + (1 << 23) + 1,
                    (1 << 31) + (1 << 23),
                    i64::MIN,
                    i64::MAX,
                    2049,
                    4097,
                ],
                |r| r.u64() as i64 >> r.below(63),
            )
        });
        let got16 = prog::ints_to_f16(&a);
        let gotb = prog::ints_to_bf16(&a);
        for i in 0..n {
            let v = a[i];
            let ints: [i128; 8] = [
                (v as i8).into(),
                (v as u8).into(),
                (v as i16).into(),
                (v as u16).into(),
                (v as i32).into(),
                (v as u32).into(),
                v.into(),
                (v as u64).into(),
            ];
            let g = got16[i];
            let g16 = [g.0, g.1, g.2, g.3, g.4, g.5, g.6, g.7];
            let g = gotb[i];
            let gb = [g.0, g.1, g.2, g.3, g.4, g.5, g.6, g.7];
            for k in 0..8 {
                assert_exact(
                    g16[k],
                    nearest_int::<f16>(ints[k]),
                    &format!("{} as f16 (#{k})", ints[k]),
                );
                assert_exact(
                    gb[k],
                    nearest_int::<bf16>(ints[k]),
                    &format!("{} as bf16 (#{k})", ints[k]),
                );
            }
        }
        // f32 and f64 (with values just off the ties of f16) to both.
        let fs: Vec<f32> = rng.vec(n, |r| {
            r.edgy(
                &[
                    f32::NAN,
                    f32::INFINITY,
                    -0.0,
                    65520.0,
                    65519.99,
                    1e-8,
                    f32::MAX,
                    3.0e-41,
                ],
                |r| r.f32_in(-7e4, 7e4),
            )
        });
        let ds: Vec<f64> = rng.vec(n, |r| {
            r.edgy(
                &[
                    1.0 + 2f64.powi(-11) + 2f64.powi(-40),
                    -(1.0 + 2f64.powi(-8) + 2f64.powi(-45)),
                    1e300,
                    -1e-300,
                    f64::NAN,
                    2f64.powi(-25),
                ],
                |r| r.f64_in(-1e5, 1e5) * if r.below(2) == 0 { 1.0 } else { 1e-6 },
            )
        });
        let got = prog::floats_to_halfs(&fs, &ds);
        for i in 0..n {
            let (f, d) = (fs[i], ds[i]);
            let g = got[i];
            assert_exact(g.0, f16::from_f32(f), "f32 as f16");
            assert_exact(g.1, bf16::from_f32(f), "f32 as bf16");
            let (w16, wb) = (nearest::<f16>(d, None), nearest::<bf16>(d, None));
            assert_exact(g.2, w16, &format!("{d:e} as f16"));
            assert_exact(g.3, wb, &format!("{d:e} as bf16"));
            assert_eq!(g.4, f16::from_f32(f) < w16, "comparison of casts");
        }
    });
}

fn reductions_and_scans(place: Place) {
    let add16 = |a: f16, b: f16| a + b;
    let addb = |a: bf16, b: bf16| a + b;
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (small_f16s(rng, n), small_bf16s(rng, n));
        let got = prog::reductions(&x, &y);
        assert_exact(
            got.0,
            ordered(&x, add16).unwrap_or(f16::NEG_ZERO),
            "sum f16",
        );
        assert_exact(
            got.1,
            ordered(&y, addb).unwrap_or(bf16::NEG_ZERO),
            "sum bf16",
        );
        assert_exact(
            got.2,
            x.iter().copied().fold(f16::INFINITY, |a, b| {
                f16::from_f32(a.to_f32().min(b.to_f32()))
            }),
            "min",
        );
        assert_exact(
            got.3,
            y.iter().copied().fold(bf16::NEG_INFINITY, |a, b| {
                bf16::from_f32(a.to_f32().max(b.to_f32()))
            }),
            "max",
        );
        assert_exact(
            got.4,
            ordered_from(&x, f16::from_f32(0.5), add16),
            "reduce from 0.5",
        );
    });
    each_size(place, &ALL_SIZES, |n, rng| {
        let (x, y) = (small_f16s(rng, n), small_bf16s(rng, n));
        let y: Vec<bf16> = y
            .iter()
            .map(|v| bf16::from_f32(1.0 + v.to_f32() / 4096.0))
            .collect();
        let (sx, sy) = prog::scans(&x, &y);
        assert_same(&sx, &scanned(&x, None, add16), "scan f16");
        assert_same(
            &sy,
            &scanned_exclusive(&y, bf16::ONE, |a, b| a * b),
            "exclusive_scan bf16",
        );
    });
}

fn sorts(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = f16s(rng, n);
        let mut want = x.clone();
        want.sort_by(f16::total_cmp);
        let got = prog::sort_f16(&x);
        // Bits included: NaNs (both signs) at the ends, -0 before +0.
        let bits = |v: &[f16]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "sort_f16");
    });
    each_size(place, &SMALL_SIZES, |n, rng| {
        // Few distinct keys, so that stability shows.
        let keys = [
            bf16::NEG_ZERO,
            bf16::ZERO,
            bf16::NAN,
            -bf16::NAN,
            bf16::INFINITY,
            bf16::ONE,
        ];
        let k: Vec<bf16> = rng.vec(n, |r| keys[r.below(keys.len())]);
        let v: Vec<u32> = (0..n as u32).collect();
        let mut pairs: Vec<(bf16, u32)> = k.iter().copied().zip(v.iter().copied()).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let want: Vec<u32> = pairs.iter().map(|p| p.1).collect();
        assert_same(&prog::sort_by_bf16(&k, &v), &want, "sort_by_bf16");
        let k = f16s(rng, n);
        let v: Vec<i8> = rng.vec(n, |r| r.int_in(-2..=2) as i8);
        let mut want: Vec<(f16, i8)> = k.iter().copied().zip(v.iter().copied()).collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let got = prog::sort_pairs(&k, &v);
        let bits = |v: &[(f16, i8)]| v.iter().map(|p| (p.0.to_bits(), p.1)).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "sort_pairs");
    });
}

fn tuples_filters_rows(place: Place) {
    each_size(place, &SMALL_SIZES, |n, rng| {
        let (x, y) = (small_f16s(rng, n), small_bf16s(rng, n));
        let (t, s) = prog::mixed_tuples(&x, &y);
        assert_eq!(t.len(), n);
        for i in 0..n {
            let (a, b) = (x[i], y[i]);
            assert_exact(t[i].0, a + f16::ONE, "a + 1");
            assert_exact(t[i].1, b * bf16::from_f32(2.0), "b * 2");
            assert_exact(t[i].2, a.to_f32() + b.to_f32(), "a as f32 + b as f32");
        }
        let pairs: Vec<(f16, bf16)> = x.iter().copied().zip(y.iter().copied()).collect();
        let want = ordered_from(&pairs, (f16::ZERO, bf16::MIN), |p, q| {
            (p.0 + q.0, bf16::from_f32(p.1.to_f32().max(q.1.to_f32())))
        });
        assert_exact(s.0, want.0, "tuple reduce .0");
        assert_exact(s.1, want.1, "tuple reduce .1");
        let x = f16s(rng, n);
        let want: Vec<f16> = x.iter().copied().filter(|v| v.to_f32() > 0.0).collect();
        assert_same(&prog::filter_halfs(&x), &want, "filter");
        let lens: Vec<usize> = rng.vec(n, |r| r.below(70));
        let rows: Vec<Vec<f16>> = lens.iter().map(|&l| small_f16s(rng, l)).collect();
        let want: Vec<f16> = rows
            .iter()
            .map(|r| ordered(r, |a, b| a + b).unwrap_or(f16::NEG_ZERO))
            .collect();
        assert_same(
            &prog::row_sums(&dpl::Nested::from_rows(rows)),
            &want,
            "row_sums",
        );
        let rows: Vec<Vec<bf16>> = lens.iter().map(|&l| bf16s(rng, l)).collect();
        let k = bf16::from_f32(-3.5);
        let got = prog::scale_rows(&dpl::Nested::from_rows(rows.clone()), k);
        let big = bf16::from_f32(65504.0);
        for (g, r) in got.rows().zip(&rows) {
            let w: Vec<bf16> = r.iter().map(|&v| v * k - big).collect();
            assert_same(g, &w, "scale_rows");
        }
    });
}

fn constants(place: Place) {
    each_size(place, &[1], |_, _| {
        let got = prog::constants();
        assert_exact(got.0, f16::MAX, "f16::MAX");
        assert_exact(got.1, f16::EPSILON, "f16::EPSILON");
        assert_exact(got.2, bf16::MIN_POSITIVE, "bf16::MIN_POSITIVE");
        assert_exact(got.3, nearest::<bf16>(3.0e38, None), "3.0e38 as bf16");
        assert_exact(got.4, nearest::<f16>(0.1, None), "0.1 as f16");
        let x = [f16::from_f32(3.0), f16::NAN, f16::from_f32(-0.25)];
        let tenth = nearest::<f16>(0.1, None);
        let want_b = bf16::from_f32(2.0) - nearest::<bf16>(0.3, None);
        for (g, v) in prog::suffixes(&x).iter().zip(&x) {
            assert_exact(g.0, *v * f16::from_f32(1.5) + tenth, "v * 1.5f16 + 0.1f16");
            assert_exact(g.1, want_b, "2bf16 - 0.3bf16");
        }
    });
}

/// `v` with a NaN replaced by the canonical NaN `0x7fff`, as dpl's float operations give.
fn canonical<H: Bits16>(v: H) -> H {
    if v.to_f32().is_nan() {
        H::from_bits16(0x7fff)
    } else {
        v
    }
}

/// `dst` with `dst[k] = op(dst[k], v)` for each `(k, v)`, in order, as plain Rust.
fn by_bins<T: Copy, U: Copy>(
    keys: &[u32],
    vals: &[U],
    dst: &[T],
    op: impl Fn(T, U) -> T,
) -> Vec<T> {
    let mut out = dst.to_vec();
    for (&k, &v) in keys.iter().zip(vals) {
        out[k as usize] = op(out[k as usize], v);
    }
    out
}

/// The bits of 16-bit floats, to compare results NaN payloads included.
fn bits_of<H: Bits16>(v: &[H]) -> Vec<u16> {
    v.iter().map(|h| h.bits()).collect()
}

/// A value of `special` with probability 1/300, else `k / 2` (`f16`) or `k` (`bf16`) for a
/// small integer `k` of either sign (zero included with a random sign): sums of up to 64
/// of them (a bin gets about 16) are exact in the type, so any combination order gives the
/// same result, and infinities and NaNs give the same result in any order too.
fn exact_terms<H: Bits16>(rng: &mut Rng, n: usize, step: f32, special: &[H]) -> Vec<H> {
    rng.vec(n, |r| {
        if r.below(300) == 0 {
            special[r.below(special.len())]
        } else {
            let k = r.int_in(-4..=4) as f32 * step;
            let v = if k == 0.0 && r.bool() { -0.0 } else { k };
            H::from_f32(v)
        }
    })
}

/// Values for per-bin minima and maxima: NaNs, `±0`, infinities and a few finite values,
/// each zero given the sign of its bin's parity (`+0` in even bins, `-0` in odd ones) so
/// that no bin meets both zeros, whose order `min`/`max` would show.
fn extreme_terms<H: Bits16>(rng: &mut Rng, keys: &[u32], nans: &[H]) -> Vec<H> {
    keys.iter()
        .map(|&k| {
            let v = match rng.below(10) {
                0 => nans[rng.below(nans.len())],
                1 => H::from_f32(f32::INFINITY),
                2 => H::from_f32(f32::NEG_INFINITY),
                3 | 4 => H::from_f32(0.0),
                _ => H::from_f32(rng.int_in(-50..=50) as f32 / 8.0),
            };
            signed_zero(v, k)
        })
        .collect()
}

/// `v`, or the zero of bin `k`'s sign when `v` is a zero (see [`extreme_terms`]).
fn signed_zero<H: Bits16>(v: H, k: u32) -> H {
    if v.to_f32() == 0.0 {
        H::from_f32(if k & 1 == 0 { 0.0 } else { -0.0 })
    } else {
        v
    }
}

/// Starting slots: each bin's from a few values (its zero signed as in [`extreme_terms`]).
fn slots<H: Bits16>(rng: &mut Rng, bins: usize, from: &[f32]) -> Vec<H> {
    (0..bins as u32)
        .map(|k| signed_zero(H::from_f32(from[rng.below(from.len())]), k))
        .collect()
}

/// `scatter_reduce` into `f16` and `bf16` slots: sums, `min`/`max` with NaNs, `±0` and
/// infinities, tuples; results bit for bit (NaNs canonical where an operation made them).
fn scatter_reduce_halfs(place: Place) {
    let add16 = |a: f16, b: f16| canonical(a + b);
    let addb = |a: bf16, b: bf16| canonical(a + b);
    each_size(place, &ALL_SIZES, |n, rng| {
        let bins = 1 + n / 16;
        let keys: Vec<u32> = rng.vec(n, |r| r.below(bins) as u32);
        let x = exact_terms(rng, n, 0.5, &[f16::INFINITY, f16::NEG_INFINITY, f16::NAN]);
        let y = exact_terms(
            rng,
            n,
            1.0,
            &[bf16::INFINITY, bf16::NEG_INFINITY, bf16::NAN],
        );
        let (dx, dy) = (
            slots::<f16>(rng, bins, &[0.0, 1.5, -3.0]),
            slots::<bf16>(rng, bins, &[0.0, 2.0, -8.0]),
        );
        let (sx, sy) = prog::scatter_sums(&keys, &x, &y, &dx, &dy);
        assert_eq!(
            bits_of(&sx),
            bits_of(&by_bins(&keys, &x, &dx, add16)),
            "f16 sums"
        );
        assert_eq!(
            bits_of(&sy),
            bits_of(&by_bins(&keys, &y, &dy, addb)),
            "bf16 sums"
        );
        let x = extreme_terms(rng, &keys, &[f16::NAN, f16::from_bits(0xfe01)]);
        let y = extreme_terms(rng, &keys, &[bf16::NAN, bf16::from_bits(0xff81)]);
        let from = [f32::INFINITY, f32::NEG_INFINITY, 0.0, 1.0, -2.5];
        let (dx, dy) = (
            slots::<f16>(rng, bins, &from),
            slots::<bf16>(rng, bins, &from),
        );
        // `f32`'s `min`/`max` ignore a NaN operand; no bin holds both zeros (see above).
        fn min<H: Bits16>(a: H, b: H) -> H {
            canonical(H::from_f32(a.to_f32().min(b.to_f32())))
        }
        fn max<H: Bits16>(a: H, b: H) -> H {
            canonical(H::from_f32(a.to_f32().max(b.to_f32())))
        }
        let got = prog::scatter_min_max(&keys, &x, &y, &dx, &dy);
        assert_eq!(
            bits_of(&got.0),
            bits_of(&by_bins(&keys, &x, &dx, min)),
            "f16 min"
        );
        assert_eq!(
            bits_of(&got.1),
            bits_of(&by_bins(&keys, &x, &dx, max)),
            "f16 max"
        );
        assert_eq!(
            bits_of(&got.2),
            bits_of(&by_bins(&keys, &y, &dy, min)),
            "bf16 min"
        );
        assert_eq!(
            bits_of(&got.3),
            bits_of(&by_bins(&keys, &y, &dy, max)),
            "bf16 max"
        );
    });
    each_size(place, &SMALL_SIZES, |n, rng| {
        let bins = 1 + n / 16;
        let keys: Vec<u32> = rng.vec(n, |r| r.below(bins) as u32);
        let x = exact_terms(rng, n, 0.5, &[f16::INFINITY]);
        let c: Vec<u32> = rng.vec(n, |r| r.u32());
        // Few distinct `bf16`s, so that ties on them show; no zeros nor NaNs, so that the
        // operator is commutative to the bit.
        let y: Vec<bf16> = rng.vec(n, |r| {
            let v = [-2.0, 0.5, 3.0, f32::INFINITY, f32::NEG_INFINITY];
            bf16::from_f32(v[r.below(v.len())])
        });
        let w: Vec<f16> = rng.vec(n, |r| {
            let k = r.int_in(1..=40) as f32 / 4.0;
            f16::from_f32(if r.bool() { k } else { -k })
        });
        let (sums, best) = prog::scatter_pairs(&keys, &x, &c, &y, &w, bins);
        let xc: Vec<(f16, u32)> = x.iter().copied().zip(c.iter().copied()).collect();
        let want = by_bins(&keys, &xc, &vec![(f16::ZERO, 0u32); bins], |a, b| {
            (add16(a.0, b.0), a.1.wrapping_add(b.1))
        });
        let pairs = |v: &[(f16, u32)]| v.iter().map(|p| (p.0.bits(), p.1)).collect::<Vec<_>>();
        assert_eq!(pairs(&sums), pairs(&want), "(f16, u32) sums and counts");
        let yw: Vec<(bf16, f16)> = y.iter().copied().zip(w.iter().copied()).collect();
        let start = vec![(bf16::NEG_INFINITY, f16::INFINITY); bins];
        let want = by_bins(&keys, &yw, &start, |a, b| {
            if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
                b
            } else {
                a
            }
        });
        let pairs = |v: &[(bf16, f16)]| {
            v.iter()
                .map(|p| (p.0.bits(), p.1.bits()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            pairs(&best),
            pairs(&want),
            "(bf16, f16) largest, ties to the smallest"
        );
    });
}

on_every_place!(
    scatter_reduce_halfs,
    arithmetic,
    math,
    casts,
    reductions_and_scans,
    sorts,
    tuples_filters_rows,
    constants,
);

/// The oracle of conversions finds the nearest value (checked on the cases the `half`
/// crate's `from_f32` gets right by construction, and on a tie it would miss).
#[test]
fn the_nearest_oracle_rounds_to_nearest_even() {
    for b in (0u16..0x7c00).step_by(7) {
        let v = f16::from_bits(b);
        assert_eq!(nearest::<f16>(v.to_f64(), None).to_bits(), b);
    }
    assert_eq!(nearest::<f16>(65520.0, None), f16::INFINITY);
    assert_eq!(nearest::<f16>(65519.0, None), f16::MAX);
    assert_eq!(nearest::<f16>(1.0 + 2f64.powi(-11), None), f16::ONE);
    assert_eq!(
        nearest::<f16>(1.0 + 2f64.powi(-11) + 2f64.powi(-40), None).to_f32(),
        1.0 + 2f32.powi(-10)
    );
    assert_eq!(
        nearest_int::<bf16>((1 << 31) + (1 << 23) + 1).to_f32(),
        2f32.powi(31) + 2f32.powi(24)
    );
    assert_eq!(
        nearest_int::<bf16>(-(1 << 31) - (1 << 23)).to_f32(),
        -(2f32.powi(31))
    );
}

/// On the GPU places every program runs as PTX (sorts by radix keys of the 16 bits in
/// `totalOrder`), and `f16`/`bf16` sequences are read and written as their 16 bits
/// (`ld.global.u16`), not widened in memory.
#[cfg(feature = "sim")]
#[test]
fn programs_compile_to_ptx_with_16_bit_accesses() {
    let compiled = [
        ("arith_f16", dpl::inspect!(prog::arith_f16)),
        ("arith_bf16", dpl::inspect!(prog::arith_bf16)),
        ("math_f16", dpl::inspect!(prog::math_f16)),
        ("math_bf16", dpl::inspect!(prog::math_bf16)),
        ("compare", dpl::inspect!(prog::compare)),
        ("f16_to_ints", dpl::inspect!(prog::f16_to_ints)),
        ("f16_to_wide", dpl::inspect!(prog::f16_to_wide)),
        ("bf16_to_others", dpl::inspect!(prog::bf16_to_others)),
        ("ints_to_f16", dpl::inspect!(prog::ints_to_f16)),
        ("ints_to_bf16", dpl::inspect!(prog::ints_to_bf16)),
        ("floats_to_halfs", dpl::inspect!(prog::floats_to_halfs)),
        ("reductions", dpl::inspect!(prog::reductions)),
        ("scans", dpl::inspect!(prog::scans)),
        ("mixed_tuples", dpl::inspect!(prog::mixed_tuples)),
        ("filter_halfs", dpl::inspect!(prog::filter_halfs)),
        ("row_sums", dpl::inspect!(prog::row_sums)),
        ("scale_rows", dpl::inspect!(prog::scale_rows)),
        ("constants", dpl::inspect!(prog::constants)),
        ("suffixes", dpl::inspect!(prog::suffixes)),
        ("sort_f16", dpl::inspect!(prog::sort_f16)),
        ("sort_by_bf16", dpl::inspect!(prog::sort_by_bf16)),
        ("sort_pairs", dpl::inspect!(prog::sort_pairs)),
        ("scatter_sums", dpl::inspect!(prog::scatter_sums)),
        ("scatter_min_max", dpl::inspect!(prog::scatter_min_max)),
        ("scatter_pairs", dpl::inspect!(prog::scatter_pairs)),
    ];
    for (name, i) in &compiled {
        assert_eq!(i.gpu_not_compiled, "", "{name} does not compile to PTX");
    }
    // A `scatter_reduce` into 16-bit floats swaps their containing 32-bit word (no 16-bit
    // atomics); one into tuples holding them takes the slot's lock.
    let ptx = |name: &str| compiled.iter().find(|(n, _)| *n == name).unwrap().1.ptx;
    for name in ["scatter_sums", "scatter_min_max"] {
        assert!(
            ptx(name).contains("atom.global.cas.b32"),
            "{name}: no word CAS"
        );
    }
    assert!(
        ptx("scatter_pairs").contains("atom.acquire.gpu.global.cas.b32"),
        "scatter_pairs: no lock"
    );
    for name in ["arith_f16", "arith_bf16", "scans"] {
        let ptx = compiled.iter().find(|(n, _)| *n == name).unwrap().1.ptx;
        assert!(ptx.contains("ld.global.u16"), "{name}: no 16-bit loads");
        assert!(ptx.contains("st.global.u16"), "{name}: no 16-bit stores");
    }
}
