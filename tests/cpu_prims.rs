//! The CPU code generator's fast forms of `scatter_reduce` and `count`, end to end:
//!
//! * a `scatter_reduce` whose operator applies `+`, `*`, `min`, `max`, `&`, `|` or `^` to
//!   each scalar leaf gets that operator's identity (`rt::scatter_reduce_identity`), other
//!   operators none (`rt::scatter_reduce`);
//! * a `reduce` with `+` of `bool`s cast to an integer (`count`, `sum` of casts) becomes
//!   `rt::count`, which counts in 32-bit lanes.
//!
//! Each program runs on `Place::Seq` and `Place::Cpu` at sizes around the run time's
//! thresholds and is compared with plain Rust; errors are compared between the places.

mod common;

use common::Rng;
use dpl::{Error, Place, with_place};

#[path = "programs/indexed.rs"]
mod indexed;

mod prog {
    pub use super::indexed::*;
    use dpl::prelude::*;

    pub const TRY_HISTOGRAM_LINE: u32 = line!() + 3;
    #[parallel]
    pub fn try_histogram(keys: &[i64], bins: usize) -> Result<Vec<u64>, Error> {
        scatter_reduce(
            |a, b| b + a,
            map(|_k| 1u64, keys),
            keys,
            replicate(7u64, bins),
        )
    }

    #[parallel]
    pub fn bucket_min_max(
        vals: &[f32],
        keys: &[u32],
        lo: &[f32],
        hi: &[f32],
    ) -> (Vec<f32>, Vec<f32>) {
        (
            scatter_reduce(|a, b| a.min(b), vals, keys, lo),
            scatter_reduce(|a, b| a.max(b), vals, keys, hi),
        )
    }

    #[parallel]
    pub fn bucket_sums(vals: &[f64], keys: &[usize], dst: &[f64]) -> Vec<f64> {
        scatter_reduce(|a, b| a + b, vals, keys, dst)
    }

    #[parallel]
    pub fn bucket_bits(
        vals: &[i64],
        keys: &[u32],
        dst: &[(i64, i64, i64)],
    ) -> Vec<(i64, i64, i64)> {
        scatter_reduce(
            |a, b| (a.0 & b.0, a.1 | b.1, b.2 ^ a.2),
            map(|v| (v, v >> 3, v * 5), vals),
            keys,
            dst,
        )
    }

    #[parallel]
    pub fn bucket_count_and_extremes(
        vals: &[i32],
        keys: &[u32],
        bins: usize,
    ) -> Vec<(u32, i32, i32, u64)> {
        scatter_reduce(
            |a, b| (a.0 + b.0, a.1.min(b.1), a.2.max(b.2), a.3 * b.3),
            map(|v| (1u32, v, v, (v as u64) | 1), vals),
            keys,
            replicate((0u32, 1000i32, -1000i32, 1u64), bins),
        )
    }

    /// An associative operator that is not leafwise (a branch): no identity.
    #[parallel]
    pub fn bucket_larger(vals: &[i64], keys: &[u32], bins: usize) -> Vec<i64> {
        scatter_reduce(
            |a, b| if a > b { a } else { b },
            vals,
            keys,
            replicate(i64::MIN, bins),
        )
    }

    #[parallel]
    pub fn count_positive(x: &[f32]) -> usize {
        count(|v| v > 0.0, x)
    }

    #[parallel]
    pub fn count_flags(b: &[bool]) -> usize {
        count(b)
    }

    #[parallel]
    pub fn sum_of_flags_u32(x: &[i32], t: i32) -> u32 {
        sum(map(|v| (v < t) as u32, x))
    }

    #[parallel]
    pub fn flags_from_five(x: &[u64]) -> u64 {
        reduce(|a, b| a + b, map(|v| (v % 3 == 0) as u64, x), 5u64)
    }
}

/// Sizes around the parallel grain (2^17), around where a 256-bin histogram's source is 8
/// slots per bin, and past 2^20.
const SIZES: [usize; 7] = [0, 1, 2047, (1 << 17) - 1, 1 << 17, 3 << 17, (1 << 20) + 7];

fn places() -> [Place; 2] {
    [Place::Seq, Place::Cpu]
}

/// `dst[k[i]] = op(dst[k[i]], v[i])` in index order.
fn seq_scatter_reduce<T: Copy>(
    dst: &[T],
    pairs: impl Iterator<Item = (usize, T)>,
    op: impl Fn(T, T) -> T,
) -> Vec<T> {
    let mut out = dst.to_vec();
    for (k, v) in pairs {
        out[k] = op(out[k], v);
    }
    out
}

#[test]
fn known_operators_get_their_identity_and_others_none() {
    let i = dpl::inspect!(prog::histogram);
    assert!(
        i.cpu_rust.contains("scatter_reduce_identity"),
        "{}",
        i.cpu_rust
    );
    for (name, i) in [
        ("try_histogram", dpl::inspect!(prog::try_histogram)),
        ("bucket_min_max", dpl::inspect!(prog::bucket_min_max)),
        ("bucket_sums", dpl::inspect!(prog::bucket_sums)),
        ("bucket_bits", dpl::inspect!(prog::bucket_bits)),
        (
            "bucket_count_and_extremes",
            dpl::inspect!(prog::bucket_count_and_extremes),
        ),
    ] {
        assert!(
            i.cpu_rust.contains("scatter_reduce_identity"),
            "{name}: {}",
            i.cpu_rust
        );
    }
    let i = dpl::inspect!(prog::bucket_larger);
    assert!(
        !i.cpu_rust.contains("scatter_reduce_identity"),
        "{}",
        i.cpu_rust
    );
    assert!(i.cpu_rust.contains("scatter_reduce"), "{}", i.cpu_rust);
}

#[test]
fn counts_become_rt_count() {
    for (name, i) in [
        ("count_positive", dpl::inspect!(prog::count_positive)),
        ("count_flags", dpl::inspect!(prog::count_flags)),
        ("sum_of_flags_u32", dpl::inspect!(prog::sum_of_flags_u32)),
        ("flags_from_five", dpl::inspect!(prog::flags_from_five)),
    ] {
        let flat = i.cpu_rust.split_whitespace().collect::<String>();
        assert!(flat.contains("::rt::count("), "{name}: {}", i.cpu_rust);
        assert!(!flat.contains("::rt::reduce("), "{name}: {}", i.cpu_rust);
    }
}

#[test]
fn histograms_match_sequential_rust() {
    for place in places() {
        for n in SIZES {
            let mut rng = Rng::new(n as u64);
            for bins in [1, 256, 1 << 16] {
                let keys: Vec<u32> = (0..n).map(|_| rng.below(bins) as u32).collect();
                let want = seq_scatter_reduce(
                    &vec![0u32; bins],
                    keys.iter().map(|&k| (k as usize, 1)),
                    |a, b| a + b,
                );
                let got = with_place(place, || prog::histogram(&keys, bins));
                assert_eq!(got, want, "{place:?}, n = {n}, bins = {bins}");
            }
        }
    }
}

#[test]
fn float_min_max_with_infinities_and_nans() {
    for place in places() {
        for n in SIZES {
            let mut rng = Rng::new(n as u64 + 1);
            let bins = 256;
            let special = [
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                0.0,
                -0.0,
                f32::MAX,
                f32::MIN,
            ];
            let vals: Vec<f32> = (0..n)
                .map(|_| rng.edgy(&special, |r| r.f32_in(-1e3, 1e3)))
                .collect();
            let keys: Vec<u32> = (0..n).map(|_| rng.below(bins) as u32).collect();
            // Destinations with NaNs and infinities too (`min` ignores a NaN operand).
            let lo: Vec<f32> = (0..bins)
                .map(|j| if j % 7 == 0 { f32::NAN } else { j as f32 })
                .collect();
            let hi: Vec<f32> = lo.iter().map(|v| -v).collect();
            let pairs = || keys.iter().zip(&vals).map(|(&k, &v)| (k as usize, v));
            let want_lo = seq_scatter_reduce(&lo, pairs(), f32::min);
            let want_hi = seq_scatter_reduce(&hi, pairs(), f32::max);
            let (got_lo, got_hi) =
                with_place(place, || prog::bucket_min_max(&vals, &keys, &lo, &hi));
            let bits = |v: &[f32]| {
                v.iter()
                    .map(|x| {
                        if x.is_nan() {
                            u32::MAX
                        } else {
                            x.abs().to_bits()
                        }
                    })
                    .collect::<Vec<_>>()
            };
            // Compared by magnitude: which of -0.0 and 0.0 `min` returns is not specified.
            assert_eq!(bits(&got_lo), bits(&want_lo), "min, {place:?}, n = {n}");
            assert_eq!(bits(&got_hi), bits(&want_hi), "max, {place:?}, n = {n}");
        }
    }
}

#[test]
fn float_sums_by_key() {
    for place in places() {
        for n in SIZES {
            let mut rng = Rng::new(n as u64 + 2);
            for bins in [3, 256] {
                // Integral values: every order of addition gives the same sums.
                let vals: Vec<f64> = (0..n).map(|_| rng.int_in(-1000..=1000) as f64).collect();
                let keys: Vec<usize> = (0..n).map(|_| rng.below(bins)).collect();
                let dst = vec![-0.0f64; bins];
                let want = seq_scatter_reduce(
                    &dst,
                    keys.iter().copied().zip(vals.iter().copied()),
                    |a, b| a + b,
                );
                let got = with_place(place, || prog::bucket_sums(&vals, &keys, &dst));
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{place:?}, n = {n}, bins = {bins}");
                // Only negative zeros: the sums stay -0.0 (the identity is -0.0, not 0.0).
                let zeros = vec![-0.0f64; n];
                let got = with_place(place, || prog::bucket_sums(&zeros, &keys, &dst));
                assert!(
                    got.iter().all(|v| v.to_bits() == (-0.0f64).to_bits()),
                    "{place:?}, n = {n}"
                );
            }
        }
    }
}

#[test]
fn tuples_of_leafwise_operators() {
    for place in places() {
        for n in SIZES {
            let mut rng = Rng::new(n as u64 + 3);
            let bins = 256;
            let vals: Vec<i64> = rng.i64s(n);
            let keys: Vec<u32> = (0..n).map(|_| rng.below(bins) as u32).collect();
            let dst: Vec<(i64, i64, i64)> = (0..bins)
                .map(|_| (rng.i64(), rng.i64(), rng.i64()))
                .collect();
            let want = seq_scatter_reduce(
                &dst,
                keys.iter()
                    .zip(&vals)
                    .map(|(&k, &v)| (k as usize, (v, v >> 3, v.wrapping_mul(5)))),
                |a, b| (a.0 & b.0, a.1 | b.1, b.2 ^ a.2),
            );
            let got = with_place(place, || prog::bucket_bits(&vals, &keys, &dst));
            assert_eq!(got, want, "bits, {place:?}, n = {n}");

            let small: Vec<i32> = (0..n).map(|_| rng.int_in(-999..=999) as i32).collect();
            let want = seq_scatter_reduce(
                &vec![(0u32, 1000i32, -1000i32, 1u64); bins],
                keys.iter()
                    .zip(&small)
                    .map(|(&k, &v)| (k as usize, (1, v, v, (v as u64) | 1))),
                |a, b| {
                    (
                        a.0.wrapping_add(b.0),
                        a.1.min(b.1),
                        a.2.max(b.2),
                        a.3.wrapping_mul(b.3),
                    )
                },
            );
            let got = with_place(place, || {
                prog::bucket_count_and_extremes(&small, &keys, bins)
            });
            assert_eq!(got, want, "counts and extremes, {place:?}, n = {n}");

            let want = seq_scatter_reduce(
                &vec![i64::MIN; bins],
                keys.iter().zip(&vals).map(|(&k, &v)| (k as usize, v)),
                i64::max,
            );
            let got = with_place(place, || prog::bucket_larger(&vals, &keys, bins));
            assert_eq!(got, want, "no identity, {place:?}, n = {n}");
        }
    }
}

#[test]
fn counts_match_sequential_rust() {
    for place in places() {
        for n in SIZES {
            let mut rng = Rng::new(n as u64 + 4);
            let x = rng.f32s(n, -1.0, 1.0);
            let want = x.iter().filter(|&&v| v > 0.0).count();
            assert_eq!(
                with_place(place, || prog::count_positive(&x)),
                want,
                "{place:?}, n = {n}"
            );
            let b = rng.bools(n);
            let want = b.iter().filter(|&&v| v).count();
            assert_eq!(
                with_place(place, || prog::count_flags(&b)),
                want,
                "{place:?}, n = {n}"
            );
            let xi = rng.i32s(n);
            let want = xi.iter().filter(|&&v| v < 12345).count() as u32;
            assert_eq!(
                with_place(place, || prog::sum_of_flags_u32(&xi, 12345)),
                want,
                "{place:?}, n = {n}"
            );
            let xu = rng.u64s(n);
            let want = 5 + xu.iter().filter(|&&v| v % 3 == 0).count() as u64;
            assert_eq!(
                with_place(place, || prog::flags_from_five(&xu)),
                want,
                "{place:?}, n = {n}"
            );
        }
    }
}

/// An index out of range gives the same error on both places, for the first offending
/// element, whichever strategy the destination's size selects.
#[test]
fn histogram_errors_agree_between_places() {
    for n in [100, (1 << 17) + 3, (1 << 20) + 7] {
        for bins in [1, 256, 1 << 16, (1 << 16) + 1] {
            let mut keys: Vec<i64> = (0..n).map(|i| (i % bins) as i64).collect();
            keys[n - 5] = bins as i64;
            keys[n - 2] = -1;
            let seq = with_place(Place::Seq, || prog::try_histogram(&keys, bins)).unwrap_err();
            let cpu = with_place(Place::Cpu, || prog::try_histogram(&keys, bins)).unwrap_err();
            assert_eq!(seq, cpu, "n = {n}, bins = {bins}");
            let Error::IndexOutOfRange {
                prim,
                index,
                len,
                at,
            } = seq
            else {
                panic!("unexpected error {seq:?}")
            };
            assert_eq!((prim, index, len), ("scatter_reduce", bins as i128, bins));
            assert_eq!(at.line, prog::TRY_HISTOGRAM_LINE, "{at:?}");
            keys[n - 5] = 0;
            keys[n - 2] = 0;
            let mut want = vec![7u64; bins];
            for &k in &keys {
                want[k as usize] += 1;
            }
            for place in places() {
                assert_eq!(
                    with_place(place, || prog::try_histogram(&keys, bins)).unwrap(),
                    want
                );
            }
        }
    }
}
