//! Per-row scans: inclusive and exclusive, `+` and `max`, of a map.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn row_prefix_f64(x: &Nested<f64>) -> Nested<f64> {
        map(|r| scan(|a, b| a + b, r), x)
    }

    #[parallel]
    pub fn row_exclusive_u32(x: &Nested<u32>, init: u32) -> Nested<u32> {
        map(|r| exclusive_scan(|a, b| a + b, r, init), x)
    }

    #[parallel]
    pub fn row_running_max(x: &Nested<f32>) -> Nested<f32> {
        map(|r| scan(|a, b| a.max(b), r), x)
    }

    #[parallel]
    pub fn row_prefix_of_squares(x: &Nested<i64>) -> Nested<i64> {
        map(|r| scan(|a, b| a + b, map(|v| v * v, r)), x)
    }
}

/// Asserts that a ragged float result is, row by row, the inclusive `+` scan of `terms`.
#[track_caller]
fn assert_row_scans<T: Float>(got: &Nested<T>, terms: &[Vec<T>], what: &str) {
    assert_eq!(got.len(), terms.len(), "{what}: number of rows");
    for (i, r) in terms.iter().enumerate() {
        let (s, m) = f64_prefix_sums(r);
        assert_scanned(got.row(i), &s, &m, &format!("{what}: row {i}"));
    }
}

fn row_prefix_f64(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f64_in(-1e3, 1e3));
        assert_row_scans(&prog::row_prefix_f64(&x), &rows, "row_prefix_f64");
    });
}

fn row_exclusive_u32(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::u32);
        let init: u32 = 0xdead_beef;
        let want: Vec<Vec<u32>> = per_row(&rows, |r| running(r, init, false, u32::wrapping_add));
        assert_rows(
            &prog::row_exclusive_u32(&x, init),
            &want,
            "row_exclusive_u32",
        );
    });
}

fn row_running_max(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-1e6, 1e6));
        let want: Vec<Vec<f32>> = per_row(&rows, |r| {
            let mut m = f32::NEG_INFINITY;
            r.iter()
                .map(|&v| {
                    m = m.max(v);
                    m
                })
                .collect()
        });
        assert_rows(&prog::row_running_max(&x), &want, "row_running_max");
    });
}

fn row_prefix_of_squares(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want: Vec<Vec<i64>> = per_row(&rows, |r| {
            running(r, 0, true, |s, v: i64| s.wrapping_add(v.wrapping_mul(v)))
        });
        assert_rows(
            &prog::row_prefix_of_squares(&x),
            &want,
            "row_prefix_of_squares",
        );
    });
}

on_every_place!(
    row_prefix_f64,
    row_exclusive_u32,
    row_running_max,
    row_prefix_of_squares,
);
