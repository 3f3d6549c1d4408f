//! Per-row filters: ragged results, filters of maps and maps of filters, rows kept by a
//! predicate on the whole row.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn row_filter_of_map(x: &Nested<i64>) -> Nested<i64> {
        map(|r| filter(|v| v % 3 == 0, map(|v| v * 7 + 1, r)), x)
    }

    #[parallel]
    pub fn row_map_of_filter(x: &Nested<f32>) -> Nested<f32> {
        map(|r| map(|v| v * 2.0, filter(|v| v > 0.0, r)), x)
    }

    #[parallel]
    pub fn row_filter_and_sum(x: &Nested<i32>) -> (Nested<i32>, Vec<i32>) {
        let kept = map(|r| filter(|v| v % 2 != 0, r), x);
        (kept, map(|r| sum(filter(|v| v % 2 != 0, r)), x))
    }

    /// Unzip of a per-row (sequence, scalar) pair into a ragged and a flat result.
    #[parallel]
    pub fn row_positives_and_sums(x: &Nested<i32>) -> (Nested<i32>, Vec<i32>) {
        unzip(map(|r| (filter(|v| v > 0, r), sum(r)), x))
    }

    /// `filter` over the rows themselves: whole rows kept or dropped.
    #[parallel]
    pub fn rows_longer_than(x: &Nested<i32>, k: usize) -> Nested<i32> {
        filter(|r| len(r) > k, x)
    }

    /// The rows kept by a `filter` over rows, then a per-row reduction of the survivors.
    #[parallel]
    pub fn sums_of_rows_with_positive_head(x: &Nested<i64>) -> Vec<i64> {
        map(|r| sum(r), filter(|r| len(r) > 0 && r[0] > 0, x))
    }

    #[parallel]
    pub fn row_neighbour_diffs(x: &Nested<i32>) -> Nested<i32> {
        map(
            |r| map(|i| r[i + 1] - r[i], filter(|i| i + 1 < len(r), indices(r))),
            x,
        )
    }
}

fn row_filter_of_map(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want: Vec<Vec<i64>> = per_row(&rows, |r| {
            r.iter()
                .map(|v| v.wrapping_mul(7).wrapping_add(1))
                .filter(|v| v % 3 == 0)
                .collect()
        });
        assert_rows(&prog::row_filter_of_map(&x), &want, "row_filter_of_map");
    });
}

fn row_map_of_filter(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.f32_in(-1.0, 1.0));
        let want: Vec<Vec<f32>> = per_row(&rows, |r| {
            r.iter().filter(|&&v| v > 0.0).map(|v| v * 2.0).collect()
        });
        assert_rows(&prog::row_map_of_filter(&x), &want, "row_map_of_filter");
    });
}

fn row_filter_and_sum(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let kept: Vec<Vec<i32>> = per_row(&rows, |r| {
            r.iter().copied().filter(|v| v % 2 != 0).collect()
        });
        let (gk, gs) = prog::row_filter_and_sum(&x);
        assert_rows(&gk, &kept, "kept");
        assert_same(&gs, &per_row(&kept, wrapping_sum_i32), "sum of kept");
    });
}

fn row_positives_and_sums(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let kept: Vec<Vec<i32>> =
            per_row(&rows, |r| r.iter().copied().filter(|&v| v > 0).collect());
        let (gk, gs) = prog::row_positives_and_sums(&x);
        assert_rows(&gk, &kept, "positives");
        assert_same(&gs, &per_row(&rows, wrapping_sum_i32), "row sums");
    });
}

fn rows_longer_than(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        for k in [0, 1, 3] {
            let want: Vec<Vec<i32>> = rows.iter().filter(|r| r.len() > k).cloned().collect();
            assert_rows(
                &prog::rows_longer_than(&x, k),
                &want,
                &format!("rows longer than {k}"),
            );
        }
    });
}

fn sums_of_rows_with_positive_head(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| r.i32() as i64);
        let want: Vec<i64> = rows
            .iter()
            .filter(|r| r.first().is_some_and(|&v| v > 0))
            .map(|r| r.iter().fold(0i64, |a, &b| a.wrapping_add(b)))
            .collect();
        assert_same(
            &prog::sums_of_rows_with_positive_head(&x),
            &want,
            "sums of rows with a positive head",
        );
    });
}

fn row_neighbour_diffs(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let want: Vec<Vec<i32>> = per_row(&rows, |r| {
            r.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect()
        });
        assert_rows(&prog::row_neighbour_diffs(&x), &want, "row_neighbour_diffs");
    });
}

on_every_place!(
    row_filter_of_map,
    row_map_of_filter,
    row_filter_and_sum,
    row_positives_and_sums,
    rows_longer_than,
    sums_of_rows_with_positive_head,
    row_neighbour_diffs,
);
