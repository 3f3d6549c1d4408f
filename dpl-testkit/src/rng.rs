//! The random generator of the tests, benches and examples.

use std::ops::{Bound, RangeBounds};

/// A small, fast, deterministic pseudo-random generator (SplitMix64, Steele, Lea and Flood,
/// 2014): the same seed gives the same sequence everywhere. For generating test data, not
/// for anything that needs unpredictability.
///
/// Besides raw bits it draws the values tests need: integers in a range, floats in an
/// interval, vectors of them with the edge values of each integer type mixed in, indices
/// and permutations. [`mix`] gives a value per index without a generator, for data built
/// in parallel.
///
/// ```
/// use dpl_testkit::SplitMix64;
///
/// let mut a = SplitMix64::new(1);
/// let mut b = SplitMix64::new(1);
/// assert_eq!(a.u64(), b.u64());
/// assert!((0.0..1.0).contains(&a.f64()));
/// assert!(a.below(10) < 10);
/// let p = a.permutation(5);
/// let mut sorted = p.clone();
/// sorted.sort();
/// assert_eq!(sorted, [0, 1, 2, 3, 4]);
/// ```
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

/// The increment of the state: 2^64 divided by the golden ratio.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The first value a [`SplitMix64`] seeded with `x` gives: a well-mixed 64-bit value for
/// each `x`, so that element `i` of some data can be computed on its own (in parallel, or
/// without keeping a generator around).
///
/// ```
/// use dpl_testkit::{SplitMix64, mix};
///
/// assert_eq!(mix(7), SplitMix64::new(7).u64());
/// ```
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SplitMix64 {
    /// A generator starting from `seed` (any value).
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// 64 random bits.
    pub fn u64(&mut self) -> u64 {
        let z = mix(self.state);
        self.state = self.state.wrapping_add(GOLDEN);
        z
    }

    /// 32 random bits (the high half of [`SplitMix64::u64`]).
    pub fn u32(&mut self) -> u32 {
        (self.u64() >> 32) as u32
    }

    /// Any `i32`.
    pub fn i32(&mut self) -> i32 {
        self.u32() as i32
    }

    /// Any `i64`.
    pub fn i64(&mut self) -> i64 {
        self.u64() as i64
    }

    /// A fair coin.
    pub fn bool(&mut self) -> bool {
        self.u64() >> 63 == 1
    }

    /// Uniform in `[0, 1)` (53 random bits).
    pub fn f64(&mut self) -> f64 {
        (self.u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n`, without bias (Lemire's multiply-and-reject).
    ///
    /// # Panics
    ///
    /// If `n == 0`.
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "SplitMix64::below(0): the range is empty");
        let n = n as u64;
        let threshold = n.wrapping_neg() % n; // (2^64 - n) mod n
        loop {
            let m = (self.u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as usize;
            }
        }
    }

    /// True with probability `percent / 100`.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// Uniform in `range` (`a..b`, `a..=b`, `a..`, ...).
    ///
    /// # Panics
    ///
    /// If `range` is empty.
    pub fn int_in(&mut self, range: impl RangeBounds<i64>) -> i64 {
        let lo = match range.start_bound() {
            Bound::Included(&x) => Some(x),
            Bound::Excluded(&x) => x.checked_add(1),
            Bound::Unbounded => Some(i64::MIN),
        };
        let hi = match range.end_bound() {
            Bound::Included(&x) => Some(x),
            Bound::Excluded(&x) => x.checked_sub(1),
            Bound::Unbounded => Some(i64::MAX),
        };
        let (Some(lo), Some(hi)) = (lo, hi) else {
            panic!("SplitMix64::int_in: empty range");
        };
        assert!(lo <= hi, "SplitMix64::int_in({lo}..={hi}): empty range");
        match (hi.abs_diff(lo) as usize).checked_add(1) {
            Some(n) => lo.wrapping_add(self.below(n) as i64),
            None => self.i64(), // every i64
        }
    }

    /// Uniform in `[lo, hi)`.
    pub fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f64()
    }

    /// Uniform in `[lo, hi)` (rounded to `f32`).
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        self.f64_in(lo as f64, hi as f64) as f32
    }

    /// `n` values drawn by `generate`.
    pub fn vec<T>(&mut self, n: usize, mut generate: impl FnMut(&mut Self) -> T) -> Vec<T> {
        (0..n).map(|_| generate(self)).collect()
    }

    /// `n` values of `f32` uniform in `[lo, hi)`.
    pub fn f32s(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        self.vec(n, |r| r.f32_in(lo, hi))
    }

    /// `n` values of `f64` uniform in `[lo, hi)`.
    pub fn f64s(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        self.vec(n, |r| r.f64_in(lo, hi))
    }

    /// `n` fair coins.
    pub fn bools(&mut self, n: usize) -> Vec<bool> {
        self.vec(n, Self::bool)
    }

    /// One of `special` with probability 1/8, else `any()`: integers that exercise
    /// wrapping (the type's MIN, MAX, 0, -1, ...) more often than uniform bits would.
    pub fn edgy<T: Copy>(&mut self, special: &[T], any: impl FnOnce(&mut Self) -> T) -> T {
        if self.below(8) == 0 {
            special[self.below(special.len())]
        } else {
            any(self)
        }
    }

    /// `n` `i32`s, uniform bits with edge values mixed in.
    pub fn i32s(&mut self, n: usize) -> Vec<i32> {
        self.vec(n, |r| {
            r.edgy(&[0, 1, -1, 2, i32::MIN, i32::MAX, i32::MIN + 1], Self::i32)
        })
    }

    /// `n` `u32`s, uniform bits with edge values mixed in.
    pub fn u32s(&mut self, n: usize) -> Vec<u32> {
        self.vec(n, |r| {
            r.edgy(&[0, 1, 2, u32::MAX, u32::MAX - 1, 1 << 31], Self::u32)
        })
    }

    /// `n` `i64`s, uniform bits with edge values mixed in.
    pub fn i64s(&mut self, n: usize) -> Vec<i64> {
        self.vec(n, |r| {
            r.edgy(&[0, 1, -1, 2, i64::MIN, i64::MAX, i64::MIN + 1], Self::i64)
        })
    }

    /// `n` `u64`s, uniform bits with edge values mixed in.
    pub fn u64s(&mut self, n: usize) -> Vec<u64> {
        self.vec(n, |r| {
            r.edgy(&[0, 1, 2, u64::MAX, u64::MAX - 1, 1 << 63], Self::u64)
        })
    }

    /// `n` indices uniform in `0..len` (`len > 0` unless `n == 0`).
    pub fn indices(&mut self, n: usize, len: usize) -> Vec<usize> {
        self.vec(n, |r| r.below(len))
    }

    /// A uniformly random permutation of `0..n` (Fisher-Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            p.swap(i, self.below(i + 1));
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // The first outputs of the reference SplitMix64 for seed 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(mix(0), 0xe220_a839_7b1d_cdaf);
        // `below` is unbiased enough to be roughly uniform over a small range.
        let mut counts = [0usize; 7];
        for _ in 0..70_000 {
            counts[r.below(7)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn ranges_hold_their_bounds() {
        let mut r = SplitMix64::new(3);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let x = r.int_in(-3..=3);
            assert!((-3..=3).contains(&x));
            seen[(x + 3) as usize] = true;
            let f = r.f64_in(-2.0, 0.5);
            assert!((-2.0..0.5).contains(&f));
        }
        assert!(seen.iter().all(|&s| s), "every value of -3..=3 drawn");
        assert_eq!(r.int_in(i64::MIN..=i64::MIN), i64::MIN);
        assert!(r.int_in(i64::MIN..i64::MAX) < i64::MAX);
        assert!((0..5).all(|_| r.int_in(-1..1) < 1));
        r.int_in(..); // every i64
        assert!(r.indices(100, 4).iter().all(|&i| i < 4));
        assert!(!r.chance(0));
        assert!(r.chance(100));
    }
}
