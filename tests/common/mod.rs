//! Helpers shared by the end-to-end test suites: the deterministic generator of inputs
//! (dpl-testkit's), the sizes every program runs at, comparisons (exact for maps,
//! reassociation-tolerant for floating-point reductions and scans), panic-message capture,
//! and the macro that instantiates one `#[test]` per place.
//!
//! Oracles are written in the test files themselves, in plain Rust, never by calling dpl.

#![allow(dead_code)]

use dpl::Place;
use std::fmt::Debug;

/// A size above the CPU backend's grain (2^15) many times over, odd so that chunked loops
/// have a ragged end.
pub const BIG: usize = (1 << 20) + 7;

/// What [`BIG`] becomes on the simulated GPU, whose every thread is simulated: still more
/// elements than one grid of 1024 blocks x 256 threads holds (so grid-stride loops take a
/// second, ragged turn) and hundreds of scan/filter tiles, at a quarter of the cost.
pub const SIM_BIG: usize = (1 << 18) + 7;

/// The sizes a program runs at: empty, one element, an odd size below the parallel grain,
/// and one size large enough for the parallel paths.
pub const ALL_SIZES: [usize; 4] = [0, 1, 1001, BIG];

/// [`ALL_SIZES`] without 0, for programs whose contract needs a non-empty input.
pub const NONEMPTY_SIZES: [usize; 3] = [1, 1001, BIG];

/// Instantiates a check `fn name(place: dpl::Place)` once per place: for every name given,
/// a module `name` with one `#[test]` per place (`name::seq`, `name::cpu`, ...).
///
/// Places whose backend is behind a feature get their test only with that feature; the
/// GPU test also needs a device, so it is ignored unless asked for (`--ignored`).
#[allow(unused_macros)]
macro_rules! on_every_place {
    ($($check:ident),* $(,)?) => {$(
        mod $check {
            #[test]
            fn seq() {
                super::$check(dpl::Place::Seq)
            }
            #[test]
            fn cpu() {
                super::$check(dpl::Place::Cpu)
            }
            #[cfg(feature = "sim")]
            #[test]
            fn sim() {
                super::$check(dpl::Place::Sim)
            }
            #[cfg(feature = "cuda")]
            #[test]
            #[ignore = "needs an NVIDIA GPU: run with --ignored on a machine with one"]
            fn gpu() {
                super::$check(dpl::Place::Gpu(0))
            }
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use on_every_place;

/// Every place whose backend this build has (the GPU only with `cuda` and `DPL_TEST_GPU`
/// set, since the build machine may have no device).
pub fn available_places() -> Vec<Place> {
    let mut places = vec![Place::Seq, Place::Cpu];
    if cfg!(feature = "sim") {
        places.push(Place::Sim);
    }
    if cfg!(feature = "cuda") && std::env::var_os("DPL_TEST_GPU").is_some() {
        places.push(Place::Gpu(0));
    }
    places
}

/// Runs `body(n, rng)` on `place` for every size of `sizes`, with a generator seeded from
/// `n`. The place and size are printed first, so a failure shows which case it was.
pub fn each_size(place: Place, sizes: &[usize], mut body: impl FnMut(usize, &mut Rng)) {
    for &n in sizes {
        let n = if n == BIG && place == Place::Sim {
            SIM_BIG
        } else {
            n
        };
        eprintln!("place {place:?}, n = {n}");
        let mut rng = Rng::new(0x00d1_5ea5_e000 ^ n as u64);
        dpl::with_place(place, || body(n, &mut rng));
    }
}

/// A rayon pool with an odd number of threads, so that the CPU place's chunking differs
/// from the one the default pool of the test machine gives.
pub fn odd_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(7)
            .build()
            .unwrap()
    })
}

/// The deterministic generator of the inputs (the same on every run and machine).
pub use dpl_testkit::SplitMix64 as Rng;

/// Converts a slice of indices to another integer type (the values must fit).
pub fn cast_indices<I: TryFrom<usize>>(idx: &[usize]) -> Vec<I>
where
    I::Error: Debug,
{
    idx.iter()
        .map(|&i| I::try_from(i).expect("index fits the type"))
        .collect()
}

/// How many units in the last place a scalar math function (`sin`, `exp`, ...) may differ
/// from Rust's own on `place`: none on the CPU places, which call the same functions; the GPU
/// places evaluate them with their own code.
pub fn math_ulps(place: Place) -> u64 {
    match place {
        Place::Seq | Place::Cpu | Place::Mpi => 0,
        Place::Sim | Place::Gpu(_) => 4,
    }
}

/// Asserts that `got[i]` is within `ulps` units in the last place of `want[i]` for every
/// `i` (NaN matches NaN; with `ulps == 0` this is [`assert_same`]).
#[track_caller]
pub fn assert_ulps<T: Ulps>(got: &[T], want: &[T], ulps: u64, what: &str) {
    if ulps == 0 {
        return assert_same(got, want, what);
    }
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.exact(w) || g.ulps_from(*w) <= ulps,
            "{what}: at [{i}]: got {g:?}, want {w:?} (more than {ulps} ulps apart)"
        );
    }
}

/// Distance in units in the last place between floats.
pub trait Ulps: Exact + Copy {
    /// How many representable values lie between `self` and `other` (`u64::MAX` if either is
    /// NaN and the other not).
    fn ulps_from(self, other: Self) -> u64;
}

impl Ulps for f32 {
    fn ulps_from(self, other: f32) -> u64 {
        if self.is_nan() || other.is_nan() {
            return u64::MAX;
        }
        let key = |v: f32| {
            let b = v.to_bits() as i32;
            (if b < 0 { i32::MIN - b } else { b }) as i64
        };
        key(self).abs_diff(key(other))
    }
}

impl Ulps for f64 {
    fn ulps_from(self, other: f64) -> u64 {
        if self.is_nan() || other.is_nan() {
            return u64::MAX;
        }
        let key = |v: f64| {
            let b = v.to_bits() as i64;
            (if b < 0 { i64::MIN - b } else { b }) as i128
        };
        key(self).abs_diff(key(other)) as u64
    }
}

/// Bit-exact equality, except that every NaN equals every NaN (the payload of a NaN is not
/// part of any backend's contract).
pub trait Exact: Debug {
    /// True when `self` and `other` are the same value.
    fn exact(&self, other: &Self) -> bool;
}

macro_rules! exact_by_eq {
    ($($t:ty),*) => {$(
        impl Exact for $t {
            fn exact(&self, other: &Self) -> bool {
                self == other
            }
        }
    )*};
}
exact_by_eq!(bool, i8, u8, i16, u16, i32, u32, i64, u64, usize);

impl Exact for f32 {
    fn exact(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
}

impl Exact for f64 {
    fn exact(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
}

impl Exact for dpl::f16 {
    fn exact(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
}

impl Exact for dpl::bf16 {
    fn exact(&self, other: &Self) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
}

impl<A: Exact, B: Exact> Exact for (A, B) {
    fn exact(&self, other: &Self) -> bool {
        self.0.exact(&other.0) && self.1.exact(&other.1)
    }
}

impl<T: Exact> Exact for Vec<T> {
    fn exact(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a.exact(b))
    }
}

/// Asserts that two scalars are [`Exact`]ly equal.
#[track_caller]
pub fn assert_exact<T: Exact>(got: T, want: T, what: &str) {
    assert!(got.exact(&want), "{what}: got {got:?}, want {want:?}");
}

/// Asserts that two sequences are [`Exact`]ly equal; on failure reports the length or the
/// first differing position with its neighbours, never the whole (possibly huge) sequence.
#[track_caller]
pub fn assert_same<T: Exact>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| !got[i].exact(&want[i])) {
        let lo = i.saturating_sub(2);
        let hi = (i + 3).min(got.len());
        panic!(
            "{what}: first difference at [{i}] of {}: got {:?}, want {:?} (got[{lo}..{hi}] = {:?}, want[{lo}..{hi}] = {:?})",
            got.len(),
            got[i],
            want[i],
            &got[lo..hi],
            &want[lo..hi]
        );
    }
}

/// Floating-point scalars, for reassociation-tolerant comparisons.
pub trait Float: Copy + Debug {
    /// Machine epsilon of the type.
    const EPS: f64;
    /// The value as `f64`.
    fn to_f64(self) -> f64;
}

impl Float for f32 {
    const EPS: f64 = f32::EPSILON as f64;
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Float for f64 {
    const EPS: f64 = f64::EPSILON;
    fn to_f64(self) -> f64 {
        self
    }
}

/// The error a sum of `n` terms of type `T` may have, in any association order, relative to
/// the sum of the terms' magnitudes. The worst case is `(n - 1) * eps`; rounding errors of
/// a real summation grow roughly like `sqrt(n)` ulps (a sequential `f32` sum of 2^21
/// positive terms was measured at about `6 sqrt(n)`), and this bound leaves a margin above
/// that: `16 (1 + sqrt(n))` ulps. It still catches a lost or doubled block of the parallel
/// paths' grain (2^15 elements) in inputs of up to 2^21 positive terms.
pub fn reassociation_tolerance<T: Float>(n: usize) -> f64 {
    T::EPS * 16.0 * (1.0 + (n as f64).sqrt())
}

/// Asserts that `got`, a reduction of `n` terms computed in `T` in some order, is within
/// [`reassociation_tolerance`] of `want` (computed exactly enough, e.g. in `f64`), where
/// `magnitude` is the sum of the absolute values of the terms.
#[track_caller]
pub fn assert_reduced<T: Float>(got: T, want: f64, magnitude: f64, n: usize, what: &str) {
    let err = (got.to_f64() - want).abs();
    let allowed = reassociation_tolerance::<T>(n) * magnitude + f64::MIN_POSITIVE;
    assert!(
        err <= allowed,
        "{what}: got {got:?}, want {want} (error {err:e} > allowed {allowed:e}, n = {n})"
    );
}

/// Asserts that `got` is an inclusive scan computed in `T`: `got[k]` is within
/// [`reassociation_tolerance`] of `want[k]`, given `magnitude[k]`, the running sum of the
/// absolute values of the terms `0..=k`. (For an exclusive scan pass the shifted arrays.)
#[track_caller]
pub fn assert_scanned<T: Float>(got: &[T], want: &[f64], magnitude: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, ((&g, &w), &m)) in got.iter().zip(want).zip(magnitude).enumerate() {
        let err = (g.to_f64() - w).abs();
        let allowed = reassociation_tolerance::<T>(k + 1) * m + f64::MIN_POSITIVE;
        assert!(
            err <= allowed,
            "{what}: at [{k}] of {}: got {g:?}, want {w} (error {err:e} > allowed {allowed:e})",
            got.len()
        );
    }
}

/// The oracle of a float sum: `(sum, sum of magnitudes)` of the terms, in `f64`.
pub fn f64_sum<T: Float>(terms: impl IntoIterator<Item = T>) -> (f64, f64) {
    terms.into_iter().fold((0.0, 0.0), |(s, m), t| {
        (s + t.to_f64(), m + t.to_f64().abs())
    })
}

/// The oracle of a float inclusive `+` scan: `(prefix sums, prefix magnitudes)` in `f64`.
pub fn f64_prefix_sums<T: Float>(terms: &[T]) -> (Vec<f64>, Vec<f64>) {
    let (mut s, mut m) = (0.0, 0.0);
    terms
        .iter()
        .map(|t| {
            s += t.to_f64();
            m += t.to_f64().abs();
            (s, m)
        })
        .unzip()
}

/// Runs `f`, which must panic, and returns its panic message (a `String` or `&str`
/// payload). Fails the test if `f` returns normally or panics with another payload.
#[track_caller]
pub fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic, but the call returned normally"),
        Err(payload) => match payload.downcast::<String>() {
            Ok(s) => *s,
            Err(payload) => match payload.downcast::<&'static str>() {
                Ok(s) => s.to_string(),
                Err(_) => panic!("the panic payload is neither a String nor a &str"),
            },
        },
    }
}
