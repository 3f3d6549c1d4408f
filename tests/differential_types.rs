//! Randomised differential tests over the integer element types: proptest draws the
//! element type among all nine (`i8 u8 i16 u16 i32 u32 i64 u64 usize`) and random bits for
//! the inputs (lengths up to 3000, the edges of each type among them); the same programs,
//! written once per type, run on every place this build has and must equal plain Rust's
//! wrapping arithmetic, sort and reductions on that type exactly.

mod common;

use common::{assert_same, available_places};
use dpl::with_place;
use proptest::collection::vec;
use proptest::prelude::*;

/// Longest drawn input.
const MAX_LEN: usize = 3000;

/// For each `module: type`, the programs on that element type and the check that runs
/// them against plain Rust on inputs made of the low bits of `a` and `b`.
macro_rules! per_type {
    ($($m:ident: $t:ident),* $(,)?) => {
        $(mod $m {
            use dpl::prelude::*;

            #[parallel]
            pub fn mix(a: &[$t], b: &[$t], k: $t) -> Vec<$t> {
                map(|x, y| ((x * y + k) ^ (y >> 3u32)) - x / (y | 1), a, b)
            }

            #[parallel]
            pub fn summary(a: &[$t]) -> ($t, $t, Vec<$t>, Vec<$t>) {
                (
                    sum(a),
                    reduce(|x, y| x.max(y), a, $t::MIN),
                    sort(a),
                    scan(|x, y| x + y, a),
                )
            }

            /// Runs both programs on every place and compares them with plain Rust.
            pub fn check(a: &[u64], b: &[u64], k: u64) {
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
                for place in super::available_places() {
                    let what = format!("{} on {place:?}", stringify!($t));
                    super::assert_same(&super::with_place(place, || mix(&a, &b, k)), &mixed, &what);
                    let (s, m, so, sc) = super::with_place(place, || summary(&a));
                    assert_eq!((s, m), (total, top), "{what}: sum, max");
                    super::assert_same(&so, &sorted, &format!("{what}: sort"));
                    super::assert_same(&sc, &scanned, &format!("{what}: scan"));
                }
            }
        })*

        /// The check of the `i`-th type of the list.
        fn check_type(i: usize, a: &[u64], b: &[u64], k: u64) {
            let checks: &[fn(&[u64], &[u64], u64)] = &[$($m::check),*];
            checks[i % checks.len()](a, b, k)
        }

        /// Why each program does not compile to PTX, by type (all empty when they do).
        #[cfg(feature = "sim")]
        fn not_compiled() -> Vec<(&'static str, &'static str)> {
            vec![$(
                (stringify!($t), dpl::inspect!($m::mix).gpu_not_compiled),
                (stringify!($t), dpl::inspect!($m::summary).gpu_not_compiled),
            )*]
        }

        /// How many types the list has.
        const TYPES: usize = [$(stringify!($m)),*].len();
    };
}

per_type!(
    i8s: i8,
    u8s: u8,
    i16s: i16,
    u16s: u16,
    i32s: i32,
    u32s: u32,
    i64s: i64,
    u64s: u64,
    usizes: usize,
);

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
}
