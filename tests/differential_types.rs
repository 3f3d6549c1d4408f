//! Randomised differential tests over the element types: proptest draws the element type
//! among the nine integers (`i8 u8 i16 u16 i32 u32 i64 u64 usize`) or the floats, and
//! random bits for the inputs (lengths up to 3000, the edges of each type among them); the
//! same generic programs (`T: Int`, `T: Float`), instantiated at the drawn type, run on
//! every place this build has and must equal plain Rust's wrapping arithmetic, sort and
//! reductions on that type exactly (float sums and scans in dpl's order).

mod common;

use common::{assert_same, available_places};
use dpl::{bf16, f16, with_place};
use proptest::collection::vec;
use proptest::prelude::*;

/// Longest drawn input.
const MAX_LEN: usize = 3000;

/// The programs under test, written once for every type their bounds admit.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn mix<T: Int>(a: &[T], b: &[T], k: T) -> Vec<T> {
        map(|x, y| ((x * y + k) ^ (y >> 3u32)) - x / (y | 1), a, b)
    }

    #[parallel]
    pub fn summary<T: Int>(a: &[T]) -> (T, T, Vec<T>, Vec<T>) {
        (
            sum(a),
            reduce(|x, y| x.max(y), a, T::MIN),
            sort(a),
            scan(|x, y| x + y, a),
        )
    }

    #[parallel]
    pub fn float_mix<T: Float>(a: &[T], b: &[T], k: T) -> (Vec<T>, T, Vec<T>, Vec<T>) {
        (
            map(|x, y| x * y + k - x / (y + 2), a, b),
            sum(a),
            sort(a),
            scan(|x, y| x + y, a),
        )
    }
}

/// For each integer type, the check that runs the programs at that type against plain Rust
/// on inputs made of the low bits of `a` and `b`.
macro_rules! per_type {
    ($($t:ident),* $(,)?) => {
        /// The check of the `i`-th type of the list.
        fn check_type(i: usize, a: &[u64], b: &[u64], k: u64) {
            let checks: &[fn(&[u64], &[u64], u64)] = &[$(|a, b, k| {
                let a: Vec<$t> = a.iter().map(|&v| v as $t).collect();
                let b: Vec<$t> = b[..a.len()].iter().map(|&v| v as $t).collect();
                let k = k as $t;
                let mixed: Vec<$t> = a
                    .iter()
                    .zip(&b)
                    .map(|(&x, &y)| {
                        (x.wrapping_mul(y).wrapping_add(k) ^ (y >> 3))
                            .wrapping_sub(x.wrapping_div(y | 1))
                    })
                    .collect();
                let mut sorted = a.clone();
                sorted.sort();
                let mut acc: $t = 0;
                let scanned: Vec<$t> = a
                    .iter()
                    .map(|&v| {
                        acc = acc.wrapping_add(v);
                        acc
                    })
                    .collect();
                let total = a.iter().fold(0 as $t, |s, &v| s.wrapping_add(v));
                let top = a.iter().copied().fold($t::MIN, $t::max);
                for place in available_places() {
                    let what = format!("{} on {place:?}", stringify!($t));
                    assert_same(&with_place(place, || prog::mix(&a, &b, k)), &mixed, &what);
                    let (s, m, so, sc) = with_place(place, || prog::summary(&a));
                    assert_eq!((s, m), (total, top), "{what}: sum, max");
                    assert_same(&so, &sorted, &format!("{what}: sort"));
                    assert_same(&sc, &scanned, &format!("{what}: scan"));
                }
            }),*];
            checks[i % checks.len()](a, b, k)
        }

        /// Why each program does not compile to PTX, by type (all empty when they do).
        #[cfg(feature = "sim")]
        fn not_compiled() -> Vec<(&'static str, &'static str)> {
            vec![$(
                (stringify!($t), dpl::inspect!(prog::mix::<$t>).gpu_not_compiled),
                (stringify!($t), dpl::inspect!(prog::summary::<$t>).gpu_not_compiled),
            )*]
        }

        /// How many types the list has.
        const TYPES: usize = [$(stringify!($t)),*].len();
    };
}

per_type!(i8, u8, i16, u16, i32, u32, i64, u64, usize);

/// For each float type (with the conversion from `f64` that rounds to it), the check of
/// `float_mix` at that type against plain Rust (sums and scans in dpl's order,
/// `dpl_testkit::order`; `f16`/`bf16` through the `half` crate's operators, each computed
/// in `f32` and rounded once, as dpl defines them) on finite inputs made of `a` and `b`.
macro_rules! per_float {
    ($($t:ident: $from:expr),* $(,)?) => {
        /// The check of the `i`-th float type of the list.
        fn check_float(i: usize, a: &[u64], b: &[u64], k: u64) {
            let checks: &[fn(&[u64], &[u64], u64)] = &[$(|a, b, k| {
                let from: fn(f64) -> $t = $from;
                let a: Vec<$t> = a.iter().map(|&v| from(finite(v))).collect();
                let b: Vec<$t> = b[..a.len()].iter().map(|&v| from(finite(v))).collect();
                let (k, two) = (from(finite(k)), from(2.0));
                let mixed: Vec<$t> = a.iter().zip(&b).map(|(&x, &y)| x * y + k - x / (y + two)).collect();
                let mut sorted = a.clone();
                sorted.sort_by(<$t>::total_cmp);
                let total = dpl_testkit::order::ordered_from(&a, from(-0.0), |p, q| p + q);
                let scanned = dpl_testkit::order::scanned(&a, None, |p, q| p + q);
                for place in available_places() {
                    let what = format!("{} on {place:?}", stringify!($t));
                    let (m, s, so, sc) = with_place(place, || prog::float_mix(&a, &b, k));
                    assert_same(&m, &mixed, &what);
                    assert_same(&[s], &[total], &format!("{what}: sum"));
                    assert_same(&so, &sorted, &format!("{what}: sort"));
                    assert_same(&sc, &scanned, &format!("{what}: scan"));
                }
            }),*];
            checks[i % checks.len()](a, b, k)
        }

        /// How many float types the list has.
        const FLOATS: usize = [$(stringify!($t)),*].len();
    };
}

per_float!(
    f16: f16::from_f64,
    bf16: bf16::from_f64,
    f32: |v| v as f32,
    f64: |v| v,
);

/// A finite value from random bits: mostly in [-1000, 1000), sometimes a signed zero or a
/// value near the bottom of `f32`'s normal range.
fn finite(v: u64) -> f64 {
    match v % 16 {
        0 => 0.0,
        1 => -0.0,
        2 => f64::from(f32::MIN_POSITIVE) * (v >> 60) as f64,
        _ => (v >> 11) as f64 / (1u64 << 53) as f64 * 2000.0 - 1000.0,
    }
}

/// Random bits, with the edges of every width (0, 1, all ones, the top bit alone and the
/// largest positive value of each signed width) often.
fn bits() -> impl Strategy<Value = u64> {
    let edges: Vec<u64> = [8u32, 16, 32, 64]
        .iter()
        .flat_map(|&w| {
            let top = 1u64 << (w - 1);
            [top, top - 1, top | (top - 1)]
        })
        .chain([0, 1])
        .collect();
    prop_oneof![any::<u64>(), prop::sample::select(edges)]
}

/// The programs of every type run on the GPU places as PTX, not on the CPU instead.
#[cfg(feature = "sim")]
#[test]
fn every_type_compiles_to_ptx() {
    for (t, why) in not_compiled() {
        assert_eq!(why, "", "a program on {t} does not compile to PTX");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn integer_types_drawn_at_random(
        ty in 0..TYPES,
        (a, b) in (0..MAX_LEN).prop_flat_map(|n| (vec(bits(), n), vec(bits(), n))),
        k in bits(),
    ) {
        check_type(ty, &a, &b, k);
    }

    #[test]
    fn float_types_drawn_at_random(
        ty in 0..FLOATS,
        (a, b) in (0..MAX_LEN).prop_flat_map(|n| (vec(any::<u64>(), n), vec(any::<u64>(), n))),
        k in any::<u64>(),
    ) {
        check_float(ty, &a, &b, k);
    }
}
