//! Randomised differential tests of nested programs: proptest draws ragged inputs (random
//! row counts and lengths, empty rows included, sometimes one row tiled past the CPU
//! backend's parallel grain, random values including extreme integers), every program runs
//! on every place this build has and under every schedule (`common_nested::scheduled!`),
//! and each result must equal an independent plain-Rust oracle (exactly, or up to
//! reassociation for floating-point reductions), hence all places and schedules agree.

mod common;
mod common_nested;

use common::{Exact, Rng, assert_same, available_places, odd_pool};
use common_nested::{ALL_LAYOUTS, Layout, assert_row_sums, assert_rows, each_schedule, matrix};
use dpl::{Error, Nested, Place, with_place};
use proptest::collection::vec;
use proptest::prelude::*;

/// The programs under test, compiled once per schedule.
mod sched {
    use crate::common_nested::scheduled;

    scheduled! {
        pub fn spmv(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
            map(|ai, ci| sum(map(|a, xj| a * xj, ai, gather(x, ci))), vals, cols)
        }

        pub fn row_sums(x: &Nested<i64>) -> Vec<i64> {
            map(|r| sum(r), x)
        }

        pub fn row_extremes(x: &Nested<i32>) -> (Vec<i32>, Vec<i32>) {
            (
                map(|r| if len(r) > 0 { min(r) } else { i32::MAX }, x),
                map(|r| if len(r) > 0 { max(r) } else { i32::MIN }, x),
            )
        }

        pub fn odd_halves(x: &Nested<i32>) -> (Nested<i32>, Vec<usize>) {
            let kept = map(|r| filter(|v| v % 2 != 0, map(|v| v / 2, r)), x);
            (kept, map(|r| count(|v| v % 2 != 0, map(|v| v / 2, r)), x))
        }

        pub fn prefix(x: &Nested<i64>) -> Nested<i64> {
            map(|r| scan(|a, b| a + b, r), x)
        }

        pub fn exclusive(x: &Nested<u32>, init: u32) -> Nested<u32> {
            map(|r| exclusive_scan(|a, b| a + b, r, init), x)
        }

        pub fn predicates(x: &Nested<f64>, t: f64) -> (Vec<bool>, Vec<bool>, Vec<usize>) {
            (
                map(|r| any(|v| v > t, r), x),
                map(|r| all(|v| v > -t, r), x),
                map(|r| count(|v| v < t, r), x),
            )
        }

        pub fn lookups(idx: &Nested<u32>, x: &[i64]) -> Result<Nested<i64>, Error> {
            map(|r| map(|v| v * 3, gather(x, r)), idx)
        }

        pub fn mat_vec(m: &Matrix<f64>, x: &[f64]) -> Vec<f64> {
            map(|r| sum(map(|a, b| a * b, r, x)), m)
        }

        pub fn row_minimum(x: &Nested<i64>) -> Result<Vec<i64>, Error> {
            map(|r| min(r), x)
        }

        pub fn argmin(x: &Nested<i32>) -> (Vec<i32>, Vec<usize>) {
            unzip(map(
                |r| reduce(
                    |p, q| if q.0 < p.0 || q.0 == p.0 && q.1 < p.1 { q } else { p },
                    zip(r, indices(r)),
                    (i32::MAX, usize::MAX),
                ),
                x,
            ))
        }
    }
}

/// Most rows drawn; with short rows this is past the number of threads.
const MAX_ROWS: usize = 300;

/// Longest drawn row.
const MAX_ROW_LEN: usize = 2_000;

/// A tiled row has at least this many elements: above the CPU backend's grain (2^15).
const TILED_LEN: usize = 40_000;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 40,
        ..ProptestConfig::default()
    }
}

/// Ragged rows of `elem`: many short rows (a third of them empty), or a few long ones;
/// in one case out of five, one row is repeated until it has [`TILED_LEN`] elements (a
/// skewed input: one long row among the others).
fn ragged<S>(elem: S) -> impl Strategy<Value = Vec<Vec<S::Value>>>
where
    S: Strategy + Clone,
    S::Value: Clone,
{
    let short = vec(
        prop_oneof![1 => Just(0usize), 2 => 0usize..9].prop_flat_map({
            let elem = elem.clone();
            move |n| vec(elem.clone(), n)
        }),
        0..MAX_ROWS,
    );
    let long = vec(vec(elem, 0..MAX_ROW_LEN), 0..5);
    (
        prop_oneof![short, long],
        prop::bool::weighted(0.2),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(mut rows, tile, at)| {
            if tile && !rows.is_empty() {
                let i = at.index(rows.len());
                if !rows[i].is_empty() {
                    let row = std::mem::take(&mut rows[i]);
                    let reps = TILED_LEN.div_ceil(row.len());
                    rows[i] = row.iter().cycle().take(row.len() * reps).cloned().collect();
                }
            }
            rows
        })
}

/// Integers with the type's extremes mixed in.
fn i64s() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![4 => any::<i64>(), 1 => Just(i64::MIN), 1 => Just(i64::MAX), 1 => -3i64..3]
}

fn i32s() -> impl Strategy<Value = i32> + Clone {
    prop_oneof![4 => any::<i32>(), 1 => Just(i32::MIN), 1 => Just(i32::MAX), 1 => -3i32..3]
}

/// Runs `call` on every place, and on the CPU place once more inside [`odd_pool`], and
/// hands each result to `check` with a description of where it ran.
fn on_all_places<R: Send>(call: impl Fn() -> R + Sync, check: impl Fn(&str, R)) {
    for place in available_places() {
        check(&format!("{place:?}"), with_place(place, &call));
    }
    check(
        "Cpu in a pool of 7 threads",
        odd_pool().install(|| with_place(Place::Cpu, &call)),
    );
}

/// The rows as slices.
fn per_row<T, R>(rows: &[Vec<T>], f: impl FnMut(&[T]) -> R) -> Vec<R> {
    rows.iter().map(Vec::as_slice).map(f).collect()
}

/// Asserts an exact per-row result.
#[track_caller]
fn same<T: Exact>(got: &[T], want: &[T], what: &str) {
    assert_same(got, want, what)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn spmv(lens in ragged(Just(())), ncols in 1usize..500, seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let x = rng.f32s(ncols, -1.0, 1.0);
        let vals: Vec<Vec<f32>> = lens.iter().map(|r| rng.f32s(r.len(), -1e3, 1e3)).collect();
        let cols: Vec<Vec<u32>> =
            lens.iter().map(|r| rng.vec(r.len(), |g| g.below(ncols) as u32)).collect();
        let terms: Vec<Vec<f32>> = vals
            .iter()
            .zip(&cols)
            .map(|(a, c)| a.iter().zip(c).map(|(v, &j)| v * x[j as usize]).collect())
            .collect();
        let (vals, cols) = (Nested::from(vals), Nested::from(cols));
        each_schedule!(|s, f| on_all_places(
            || f::spmv(&vals, &cols, &x),
            |p, got| assert_row_sums(&got, &terms, &format!("{s} on {p}")),
        ));
    }

    #[test]
    fn row_sums(rows in ragged(i64s())) {
        let want = per_row(&rows, |r| r.iter().fold(0i64, |a, &b| a.wrapping_add(b)));
        let x = Nested::from(rows);
        each_schedule!(|s, f| on_all_places(
            || f::row_sums(&x),
            |p, got| same(&got, &want, &format!("{s} on {p}")),
        ));
    }

    #[test]
    fn row_extremes(rows in ragged(i32s())) {
        let lo = per_row(&rows, |r| r.iter().copied().min().unwrap_or(i32::MAX));
        let hi = per_row(&rows, |r| r.iter().copied().max().unwrap_or(i32::MIN));
        let x = Nested::from(rows);
        each_schedule!(|s, f| on_all_places(|| f::row_extremes(&x), |p, (glo, ghi)| {
            same(&glo, &lo, &format!("{s} on {p}: min"));
            same(&ghi, &hi, &format!("{s} on {p}: max"));
        }));
    }

    #[test]
    fn odd_halves(rows in ragged(i32s())) {
        let kept: Vec<Vec<i32>> =
            per_row(&rows, |r| r.iter().map(|v| v / 2).filter(|v| v % 2 != 0).collect());
        let counts: Vec<usize> = kept.iter().map(Vec::len).collect();
        let x = Nested::from(rows);
        each_schedule!(|s, f| on_all_places(|| f::odd_halves(&x), |p, (gk, gc)| {
            assert_rows(&gk, &kept, &format!("{s} on {p}: kept"));
            same(&gc, &counts, &format!("{s} on {p}: counts"));
        }));
    }

    #[test]
    fn prefix(rows in ragged(i64s())) {
        let want: Vec<Vec<i64>> = per_row(&rows, |r| {
            r.iter().scan(0i64, |a, &v| { *a = a.wrapping_add(v); Some(*a) }).collect()
        });
        let x = Nested::from(rows);
        each_schedule!(|s, f| on_all_places(
            || f::prefix(&x),
            |p, got| assert_rows(&got, &want, &format!("{s} on {p}")),
        ));
    }

    #[test]
    fn exclusive(rows in ragged(any::<u32>()), init in any::<u32>()) {
        let want: Vec<Vec<u32>> = per_row(&rows, |r| {
            r.iter().scan(init, |a, &v| { let before = *a; *a = a.wrapping_add(v); Some(before) }).collect()
        });
        let x = Nested::from(rows);
        each_schedule!(|s, f| on_all_places(
            || f::exclusive(&x, init),
            |p, got| assert_rows(&got, &want, &format!("{s} on {p}")),
        ));
    }

    #[test]
    fn predicates(rows in ragged(-1e3f64..1e3), t in 0f64..1e3) {
        let any = per_row(&rows, |r| r.iter().any(|&v| v > t));
        let all = per_row(&rows, |r| r.iter().all(|&v| v > -t));
        let below = per_row(&rows, |r| r.iter().filter(|&&v| v < t).count());
        let x = Nested::from(rows);
        each_schedule!(|s, f| on_all_places(|| f::predicates(&x, t), |p, (ga, gl, gb)| {
            same(&ga, &any, &format!("{s} on {p}: any"));
            same(&gl, &all, &format!("{s} on {p}: all"));
            same(&gb, &below, &format!("{s} on {p}: count"));
        }));
    }

    #[test]
    fn lookups(rows in ragged(any::<u32>()), n in 1usize..3000, bad in prop::bool::weighted(0.3), seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let x = rng.i64s(n);
        // Indices in range, or (when `bad`) one out of range in some non-empty row.
        let mut idx: Vec<Vec<u32>> = per_row(&rows, |r| r.iter().map(|&v| v % n as u32).collect());
        let broken = if bad {
            let rows_with = (0..idx.len()).filter(|&i| !idx[i].is_empty()).collect::<Vec<_>>();
            (!rows_with.is_empty()).then(|| {
                let i = rows_with[rng.below(rows_with.len())];
                let k = rng.below(idx[i].len());
                idx[i][k] = n as u32 + rng.below(10) as u32;
                idx[i][k]
            })
        } else {
            None
        };
        let want: Vec<Vec<i64>> =
            per_row(&idx, |r| r.iter().map(|&j| x.get(j as usize).map_or(0, |v| v.wrapping_mul(3))).collect());
        let idx = Nested::from(idx);
        each_schedule!(|s, f| on_all_places(|| f::lookups(&idx, &x), |p, got| match (got, broken) {
            (Ok(got), None) => assert_rows(&got, &want, &format!("{s} on {p}")),
            (Err(Error::IndexOutOfRange { prim: "gather", index, len, .. }), Some(b)) => {
                assert_eq!((index, len), (b as i128, n), "{s} on {p}");
            }
            (got, b) => panic!("{s} on {p}: bad index {b:?}: got {got:?}"),
        }));
    }

    #[test]
    fn mat_vec(
        (rows, cols) in (0usize..200, 0usize..200),
        layout in 0..ALL_LAYOUTS.len(),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng::new(seed);
        let data: Vec<Vec<f64>> = (0..rows).map(|_| rng.f64s(cols, -1.0, 1.0)).collect();
        let x = rng.f64s(cols, -1.0, 1.0);
        let layout: Layout = ALL_LAYOUTS[layout];
        let m = matrix(layout, &data, cols, f64::NAN);
        let terms: Vec<Vec<f64>> = per_row(&data, |r| r.iter().zip(&x).map(|(a, b)| a * b).collect());
        each_schedule!(|s, f| on_all_places(
            || f::mat_vec(&m, &x),
            |p, got| assert_row_sums(&got, &terms, &format!("{s} on {p}, {layout:?}")),
        ));
    }

    #[test]
    fn row_minimum(rows in ragged(i64s())) {
        let want: Option<Vec<i64>> = rows.iter().map(|r| r.iter().copied().min()).collect();
        let x = Nested::from(rows);
        each_schedule!(|s, f| on_all_places(|| f::row_minimum(&x), |p, got| match (got, &want) {
            (Ok(got), Some(want)) => same(&got, want, &format!("{s} on {p}")),
            (Err(Error::Empty { prim: "min", .. }), None) => {}
            (got, want) => panic!("{s} on {p}: got {got:?}, want {want:?}"),
        }));
    }

    #[test]
    fn argmin(rows in ragged(-20i32..20)) {
        let want: Vec<(i32, usize)> = per_row(&rows, |r| {
            r.iter().enumerate().fold((i32::MAX, usize::MAX), |b, (i, &v)| if v < b.0 { (v, i) } else { b })
        });
        let (wv, wi): (Vec<i32>, Vec<usize>) = want.into_iter().unzip();
        let x = Nested::from(rows);
        each_schedule!(|s, f| on_all_places(|| f::argmin(&x), |p, (gv, gi)| {
            same(&gv, &wv, &format!("{s} on {p}: min"));
            same(&gi, &wi, &format!("{s} on {p}: argmin"));
        }));
    }
}
