//! `Matrix` inputs: per-row primitives on a uniform 2-D sequence, mixed with `Nested`, ELL
//! SpMV.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn mat_row_sums(m: &Matrix<f64>) -> Vec<f64> {
        map(|r| sum(r), m)
    }

    #[parallel]
    pub fn mat_row_scan(m: &Matrix<i32>) -> Nested<i32> {
        map(|r| scan(|a, b| a + b, r), m)
    }

    #[parallel]
    pub fn mat_row_filter(m: &Matrix<f32>) -> Nested<f32> {
        map(|r| filter(|v| v < 0.5, r), m)
    }

    #[parallel]
    pub fn mat_corners(m: &Matrix<u32>) -> (Vec<u32>, Vec<usize>) {
        (
            map(|r| if len(r) > 0 { r[0] + r[len(r) - 1] } else { 0 }, m),
            map(|r| len(r), m),
        )
    }

    #[parallel]
    pub fn mat_minus_nested(m: &Matrix<i64>, n: &Nested<i64>) -> Result<Vec<i64>, Error> {
        map(|a, b| sum(a) - sum(b), m, n)
    }

    #[parallel]
    pub fn ell_spmv(vals: &Matrix<f32>, cols: &Matrix<u32>, x: &[f32]) -> Vec<f32> {
        map(|a, c| sum(map(|v, j| v * x[j], a, c)), vals, cols)
    }
}

fn mat_row_sums(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, |r| r.f64_in(-1.0, 1.0));
        let m = matrix(layout, &data, cols, f64::NAN);
        assert_row_sums(&prog::mat_row_sums(&m), &data, "mat_row_sums");
    });
}

fn mat_row_scan(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, Rng::i32);
        let m = matrix(layout, &data, cols, i32::MIN);
        let want: Vec<Vec<i32>> = per_row(&data, |r| running(r, 0, true, i32::wrapping_add));
        assert_rows(&prog::mat_row_scan(&m), &want, "mat_row_scan");
    });
}

fn mat_row_filter(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, |r| r.f32_in(0.0, 1.0));
        // The padding would pass the filter: reading it would show.
        let m = matrix(layout, &data, cols, -1.0);
        let want: Vec<Vec<f32>> =
            per_row(&data, |r| r.iter().copied().filter(|&v| v < 0.5).collect());
        assert_rows(&prog::mat_row_filter(&m), &want, "mat_row_filter");
    });
}

fn mat_corners(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, Rng::u32);
        let m = matrix(layout, &data, cols, 0);
        let (gc, gl) = prog::mat_corners(&m);
        let want = per_row(&data, |r| match (r.first(), r.last()) {
            (Some(a), Some(b)) => a.wrapping_add(*b),
            _ => 0,
        });
        assert_same(&gc, &want, "first + last");
        assert_same(&gl, &vec![cols; rows], "len");
    });
}

fn mat_minus_nested(place: Place) {
    each_matrix(place, |layout, rows, cols, rng| {
        let data = rows_of(&vec![cols; rows], rng, Rng::i64);
        let m = matrix(layout, &data, cols, 0);
        // A ragged input with as many rows as the matrix.
        let lens: Vec<usize> = (0..rows).map(|_| rng.below(6)).collect();
        let (n, nr) = nested_of(&lens, rng, Rng::i64);
        let want: Vec<i64> = data
            .iter()
            .zip(&nr)
            .map(|(a, b)| wrapping_sum_i64(a).wrapping_sub(wrapping_sum_i64(b)))
            .collect();
        assert_same(
            &prog::mat_minus_nested(&m, &n).expect("same rows"),
            &want,
            "mat_minus_nested",
        );
        let one_more = Nested::from(nr.iter().cloned().chain([vec![1]]).collect::<Vec<_>>());
        assert!(
            matches!(
                prog::mat_minus_nested(&m, &one_more),
                Err(Error::LengthMismatch { prim: "map", .. })
            ),
            "one row more"
        );
    });
}

fn ell_spmv(place: Place) {
    each_matrix(place, |layout, rows, width, rng| {
        let ncols = rows + 1;
        let x = dense(ncols, rng);
        let vals = rows_of(&vec![width; rows], rng, |r| r.f32_in(-2.0, 2.0));
        let cols = rows_of(&vec![width; rows], rng, |r| r.below(ncols) as u32);
        let terms = spmv_oracle(&vals, &cols, &x);
        let got = prog::ell_spmv(
            &matrix(layout, &vals, width, f32::NAN),
            &matrix(layout, &cols, width, u32::MAX),
            &x,
        );
        assert_row_sums(&got, &terms, "ell_spmv");
    });
}

on_every_place!(
    mat_row_sums,
    mat_row_scan,
    mat_row_filter,
    mat_corners,
    mat_minus_nested,
    ell_spmv,
);
